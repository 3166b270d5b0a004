"""Progress: numbered cell lines with elapsed time and ETA off a terminal, a heartbeat naming
the running cells during a long cell, the running cells of a pool known from dispatch order."""

import re
import textwrap
import time

from mlx.config import load_config
from mlx.runner.experiment import resume_hint, run_experiment
from mlx.runner.progress import Progress, fmt_duration, heartbeat_seconds

CONFIG = """
name: pg
dataset:
  synthetic: {n_samples: 80, n_features: 10, n_labels: 5, rank: 2, seed: 4}
methods:
  - name: br
    label: SQ
    params: {loss: squared}
    grid: {l2_reg: [0.1, 1.0, 10.0]}
metrics: [p@1]
"""
LINE = re.compile(r"^\[(\d+)/3\] SQ\[l2_reg=[\d.]+,rep=0\] done \d+\.\d\ds "
                  r"\(elapsed \d+:\d\d(, ETA \d+:\d\d)?\)$")
BEAT = re.compile(r"^\[(\d)/3\] running: SQ\[l2_reg=[\d.]+,rep=0\] for \d+:\d\d "
                  r"\(elapsed \d+:\d\d(, ETA \d+:\d\d)?\)$")


def _config(tmp_path):
    p = tmp_path / "cfg.yaml"
    p.write_text(textwrap.dedent(CONFIG))
    return load_config(p)


def test_cell_lines_count_and_a_heartbeat_names_a_long_cell(tmp_path, capsys, monkeypatch):
    from mlx.methods.br import BR

    original = BR.fit

    def slow_for_large_penalty(self, X, Y, *, observed=None):
        if self.l2_reg == 10.0:
            time.sleep(0.6)
        return original(self, X, Y, observed=observed)

    monkeypatch.setattr(BR, "fit", slow_for_large_penalty)
    run_experiment(_config(tmp_path), jobs=1, output=str(tmp_path / "o"), progress=False,
                   heartbeat=0.1)
    lines = capsys.readouterr().out.splitlines()
    done = [ln for ln in lines if LINE.match(ln)]
    beats = [ln for ln in lines if BEAT.match(ln)]
    assert [int(LINE.match(ln).group(1)) for ln in done] == [1, 2, 3]
    assert "ETA" in done[0] and "ETA" not in done[-1]      # nothing left to estimate at the end
    assert sum("l2_reg=10.0" in b for b in beats) >= 2, lines   # every 0.1 s of a 0.6 s cell
    assert set(lines) == set(done) | set(beats), lines     # nothing else, nothing unnumbered


def test_quiet_run_prints_no_lines(tmp_path, capsys):
    run_experiment(_config(tmp_path), jobs=1, output=str(tmp_path / "o"), quiet=True,
                   progress=False, heartbeat=0.01)
    assert capsys.readouterr().out == ""


class _Cell:
    def __init__(self, name):
        self.name = name

    def cell_id(self):
        return self.name

    def describe(self):
        return self.name


def test_running_cells_are_the_oldest_dispatched_per_job():
    now = [0.0]
    p = Progress(4, quiet=True, jobs=2, clock=lambda: now[0])
    a, b, c, d = (_Cell(n) for n in "abcd")
    for cell in (a, b, c, d):
        p.dispatched(cell)                       # a pool is fed 2 * jobs cells
    now[0] = 5.0
    assert [(x.name, s) for x, s in p.running()] == [("a", 5.0), ("b", 5.0)]
    p.finished(a, "a done")
    now[0] = 7.0
    assert [(x.name, s) for x, s in p.running()] == [("b", 7.0), ("c", 2.0)]
    assert p.heartbeat_line() == "[1/4] running: b for 0:07, c for 0:02 (elapsed 0:07, " \
                                 "ETA 0:21)"
    p.close()


def test_durations_interval_and_resume_hint(monkeypatch):
    assert [fmt_duration(s) for s in (0.4, 7, 754, 3723)] == ["0:00", "0:07", "12:34",
                                                              "1:02:03"]
    for seconds in ("2.5", "0.5"):                  # any positive interval, below 1 s too
        monkeypatch.setenv("MLX_HEARTBEAT", seconds)
        assert heartbeat_seconds() == float(seconds)
    for bad in ("0", "-1", "soon"):
        monkeypatch.setenv("MLX_HEARTBEAT", bad)
        assert heartbeat_seconds() == 30.0
    assert resume_hint(False) == "run the same command again to resume"
    assert resume_hint(True) == ("to resume, run the same command without --force (with it, "
                                 "every cell is recomputed)")
