"""Per-method time budgets: a cell over its budget is stopped and recorded, never dropped."""

import os
import re
import textwrap

import pandas as pd
import pytest
from click.testing import CliRunner

from mlx.cli import cli
from mlx.config import load_config
from mlx.errors import ConfigError
from mlx.runner.experiment import run_experiment
from mlx.runner.results import TIMING_COLUMNS

CONFIG = """
name: budget
seed: 3
dataset:
  synthetic: {n_samples: 200, n_features: 20, n_labels: 8, rank: 2, seed: 4}
methods:
  - name: constant
  - name: br
    label: SQ
    params: {loss: squared}
    select: {l2_reg: [0.01, 1.0, 100.0]}
    budget: 600
  - name: leml
    label: LEML
    params: {loss: squared}
    budget: BUDGET
sweep: {repetitions: 2}
metrics: [p@1, auc]
"""
# Timing columns and the budget itself: what may differ between runs of the same cells.
IGNORED = list(TIMING_COLUMNS) + ["budget_seconds"]


def write(tmp_path, budget="0.001", name="c.yaml"):
    p = tmp_path / name
    p.write_text(textwrap.dedent(CONFIG).replace("BUDGET", budget))
    return p


def invoke(*args):
    return CliRunner().invoke(cli, list(args), obj={})


def results(directory):
    return pd.read_csv(directory / "results.csv", dtype={"message": str})


def test_cell_over_a_tiny_budget_is_stopped_and_recorded_the_others_finish(tmp_path):
    out = tmp_path / "out"
    r = invoke("run", str(write(tmp_path)), "-o", str(out), "-j", "1", "-q")
    assert r.exit_code == 0, r.output          # over budget is an outcome, not a failure
    assert "6 cells (4 ok, 2 over_budget)" in r.output
    frame = results(out)
    cells = frame.drop_duplicates("cell_id").set_index("label")
    assert list(cells.loc["LEML", "status"]) == ["over_budget", "over_budget"]
    assert (cells.loc[["constant", "SQ"], "status"] == "ok").all()
    leml = frame[frame["label"] == "LEML"]
    assert len(leml) == 2 and leml["value"].isna().all()       # one row per cell, no metrics
    assert (leml["budget_seconds"] == 0.001).all()
    assert (leml["cell_seconds"] >= 0.001).all()
    for msg, secs in zip(leml["message"], leml["cell_seconds"]):
        assert re.fullmatch(r"stopped after \d+\.\d\d s, over the budget of 0\.001 s per cell "
                            r"\(methods\[2\]\.budget\)", msg), msg
        assert float(msg.split()[2]) == pytest.approx(secs, abs=0.006)
    assert frame.loc[frame["label"] == "SQ", "budget_seconds"].eq(600).all()
    assert frame.loc[frame["label"] == "constant", "budget_seconds"].isna().all()
    table = (out / "table.md").read_text()
    assert "| LEML | 0.2 | over_budget | over_budget |" in table
    assert "- LEML (k/L=0.2, observed=1.0, rep=1): over_budget: stopped after" in table


def test_a_worker_start_up_is_not_charged_to_the_first_cell_budget(tmp_path, monkeypatch):
    """Every budgeted worker here takes 3 s to start (a sitecustomize that sleeps): with
    2 s budgets the cells must still finish, their clocks starting once the worker is up."""
    slow = tmp_path / "slow"
    slow.mkdir()
    (slow / "sitecustomize.py").write_text("import time\ntime.sleep(3)\n")
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(
        [str(slow)] + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]))
    out = tmp_path / "out"
    config = write(tmp_path, budget="2").read_text().replace("budget: 600", "budget: 2")
    (tmp_path / "c.yaml").write_text(config)
    r = invoke("run", str(tmp_path / "c.yaml"), "-o", str(out), "-j", "1", "-q")
    assert r.exit_code == 0, r.output
    frame = results(out).drop_duplicates("cell_id")
    assert set(frame["status"]) == {"ok"}, frame[["label", "status", "message"]]
    assert (frame.loc[frame["label"] != "constant", "cell_seconds"] < 2).all()


@pytest.mark.parametrize("then", ["600", None])
def test_over_budget_cells_are_reused_until_the_budget_is_raised_or_dropped(tmp_path, then):
    out = str(tmp_path / "out")
    cfg = load_config(write(tmp_path))
    first = run_experiment(cfg, jobs=2, output=out, quiet=True, progress=False)
    assert first.counts == {"ok": 4, "over_budget": 2}
    again = run_experiment(cfg, jobs=2, output=out, quiet=True, progress=False)
    assert again.n_reused == 6 and again.counts == first.counts
    lower = run_experiment(load_config(write(tmp_path, "0.0005")), jobs=1, output=out,
                           quiet=True, progress=False)
    assert lower.n_reused == 6                  # a smaller budget would stop it again
    p = write(tmp_path, then or "")
    if then is None:
        p.write_text(p.read_text().replace("    budget: \n", ""))
    later = run_experiment(load_config(p), jobs=1, output=out, quiet=True, progress=False)
    assert later.n_reused == 4 and later.counts == {"ok": 6}


def test_budgets_leave_results_unchanged_with_1_or_2_jobs(tmp_path):
    plain = textwrap.dedent(CONFIG).replace("    budget: 600\n", "").replace(
        "    budget: BUDGET\n", "")
    (tmp_path / "plain.yaml").write_text(plain)
    base = run_experiment(load_config(tmp_path / "plain.yaml"), jobs=1,
                          output=str(tmp_path / "plain"), quiet=True, progress=False)
    frames = [results(base.output).drop(columns=IGNORED)]
    for jobs in (1, 2):
        run = run_experiment(load_config(write(tmp_path, "600")), jobs=jobs,
                             output=str(tmp_path / f"j{jobs}"), quiet=True, progress=False)
        assert run.counts == {"ok": 6}
        frames.append(results(run.output).drop(columns=IGNORED))
    for frame in frames[1:]:
        pd.testing.assert_frame_equal(frames[0], frame)


@pytest.mark.parametrize("value, shown", [("0", "0"), ("-5", "-5"), ("ten", "'ten'"),
                                          (".inf", "inf"), ("[1]", "[1]")])
def test_a_bad_budget_is_a_config_error_with_its_key_path(tmp_path, value, shown):
    p = write(tmp_path, value)
    for command in ("validate", "run"):
        r = invoke(command, str(p), "-o", str(tmp_path / "o")) if command == "run" else \
            invoke(command, str(p))
        assert r.exit_code == 2, r.output
        assert r.output.strip() == (f"Error: {p}: methods[2].budget: must be a float in the "
                                    f"range (0, inf). Got {shown} instead.")
    assert not (tmp_path / "o").exists()


def test_budgets_need_the_local_backend(tmp_path):
    cfg = load_config(write(tmp_path, "10"))
    with pytest.raises(ConfigError) as err:
        run_experiment(cfg, backend="dask", output=str(tmp_path / "o"), quiet=True,
                       progress=False)
    assert str(err.value) == (f"{cfg.source}: methods[1].budget: time budgets are enforced by "
                              "the local backend only; drop the budgets or run with --backend "
                              "local")
    assert not (tmp_path / "o").exists()


def test_a_worker_that_dies_gives_its_cell_an_error_record(tmp_path):
    from multiprocessing import get_context

    from mlx.runner.cells import _stop_processes, _Worker
    from mlx.runner.sweep import expand

    cell = expand(load_config(write(tmp_path, "10")))[-1]
    worker = _Worker(get_context("spawn"), 1)
    try:
        worker.cell, worker.started = cell, 0.0
        worker.proc.kill()
        worker.proc.join(10)
        record = worker.take()
    finally:
        worker.conn.close()
        _stop_processes([worker.proc])
    assert record["status"] == "error" and record["cell_id"] == cell.cell_id()
    assert record["message"] == ("the worker process running the cell ended (exit code -9; "
                                 "out of memory?)")
    assert worker.cell is None
