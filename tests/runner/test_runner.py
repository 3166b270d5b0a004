"""Runner: expansion, determinism across --jobs, resume, statuses, selection."""

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pandas as pd
import pytest

from mlx.config import load_config
from mlx.runner.experiment import run_experiment
from mlx.runner.results import TIMING_COLUMNS
from mlx.runner.sweep import expand

CONFIG = """
name: rt
seed: 3
dataset:
  synthetic: {n_samples: 200, n_features: 20, n_labels: 8, rank: 2, seed: 4}
preprocess: [l2_normalize, bias]
methods:
  - name: br
    label: SQ
    params: {loss: squared}
    select: {l2_reg: [0.01, 1.0, 100.0]}
  - name: br
    label: LR
    params: {loss: logistic}
    grid: {C: [0.1, 1.0]}
sweep:
  observed_ratio: [1.0, 0.5]
  repetitions: 2
metrics: [p@1, p@3, hamming, auc]
"""
TIMING = list(TIMING_COLUMNS)


def make_config(tmp_path, text=CONFIG):
    p = tmp_path / "cfg.yaml"
    p.write_text(textwrap.dedent(text))
    return load_config(p)


def test_expand_counts_and_collapses_rank_axis(tmp_path):
    cfg = make_config(tmp_path, CONFIG + "\n" + "")
    cells = expand(cfg)
    # SQ: 2 obs x 2 reps; LR: 2 C x 2 obs x 2 reps; BR takes no rank, so rank_ratio collapses
    assert len(cells) == 4 + 8
    assert all(c.rank_ratio is None for c in cells)
    assert len({c.cell_id() for c in cells}) == len(cells)


def test_jobs_1_and_2_give_identical_results(tmp_path):
    cfg = make_config(tmp_path)
    a = run_experiment(cfg, jobs=1, output=str(tmp_path / "a"), quiet=True, progress=False)
    b = run_experiment(cfg, jobs=2, output=str(tmp_path / "b"), quiet=True, progress=False)
    fa = pd.read_csv(a.output / "results.csv").drop(columns=TIMING)
    fb = pd.read_csv(b.output / "results.csv").drop(columns=TIMING)
    assert (fa["status"] == "ok").all()
    pd.testing.assert_frame_equal(fa, fb)
    assert set(fa["metric"]) == {"p@1", "p@3", "hamming", "auc"}
    # every cell appears once per (split, metric); validation rows once per candidate
    test = fa[fa["split"] == "test"]
    assert test.groupby(["cell_id", "metric"]).size().eq(1).all()
    assert test["cell_id"].nunique() == len(expand(cfg))


def test_rerun_reuses_cells_and_force_recomputes(tmp_path):
    cfg = make_config(tmp_path)
    out = str(tmp_path / "o")
    first = run_experiment(cfg, jobs=1, output=out, quiet=True, progress=False)
    second = run_experiment(cfg, jobs=1, output=out, quiet=True, progress=False)
    assert first.n_reused == 0 and second.n_reused == first.n_cells
    third = run_experiment(cfg, jobs=1, output=out, force=True, quiet=True, progress=False)
    assert third.n_reused == 0
    a = pd.read_csv(Path(out) / "results.csv").drop(columns=TIMING)
    assert (a["split"] == "test").sum() == first.n_cells * 4


def test_missing_label_cells_skip_for_methods_without_support(tmp_path, monkeypatch):
    from mlx.methods.br import BR

    monkeypatch.setattr(BR, "supports_missing_labels", False)
    cfg = make_config(tmp_path)
    s = run_experiment(cfg, jobs=1, output=str(tmp_path / "o"), quiet=True, progress=False)
    frame = pd.read_csv(s.output / "results.csv")
    skipped = frame[frame["status"] == "skipped"]
    assert set(skipped["observed_ratio"]) == {0.5}
    assert (skipped["message"] == "br does not support missing labels").all()
    assert "skipped" in s.table_md


def test_killed_run_resumes_with_every_cell_once(tmp_path):
    text = CONFIG.replace("repetitions: 2", "repetitions: 6")
    cfg_path = tmp_path / "cfg.yaml"
    cfg_path.write_text(textwrap.dedent(text))
    out = tmp_path / "o"
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    cmd = [sys.executable, "-m", "mlx", "run", "-q", "-j", "1", "-o", str(out), str(cfg_path)]
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    cells_dir = out / "cells"
    deadline = time.time() + 60
    while time.time() < deadline:
        if cells_dir.exists() and len(list(cells_dir.glob("*.json"))) >= 3:
            break
        time.sleep(0.02)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    n_before = len(list(cells_dir.glob("*.json")))
    n_cells = len(expand(load_config(cfg_path)))
    assert 3 <= n_before < n_cells, "the run should have been killed mid-sweep"
    assert not (out / "results.csv").exists()
    done = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert f"{n_before} of {n_cells} cells already finished" not in done.stderr  # -q is quiet
    frame = pd.read_csv(out / "results.csv")
    assert frame["cell_id"].nunique() == n_cells
    test = frame[frame["split"] == "test"]
    assert test.groupby(["cell_id", "metric"]).size().eq(1).all()
    assert not list(cells_dir.glob(".*.tmp"))


def test_error_in_a_cell_is_recorded_and_sweep_continues(tmp_path, monkeypatch):
    from mlx.methods.br import BR

    calls = {"n": 0}
    original = BR.fit

    def flaky(self, X, Y, *, observed=None):
        calls["n"] += 1
        if self.loss == "logistic" and self.C == 0.1:
            raise RuntimeError("boom\nsecond line")
        return original(self, X, Y, observed=observed)

    monkeypatch.setattr(BR, "fit", flaky)
    cfg = make_config(tmp_path)
    s = run_experiment(cfg, jobs=1, output=str(tmp_path / "o"), quiet=True, progress=False)
    frame = pd.read_csv(s.output / "results.csv")
    err = frame[frame["status"] == "error"]
    assert len(err) and (err["message"] == "RuntimeError: boom").all()
    assert (frame[frame["status"] != "error"]["status"] == "ok").all()
    assert len(s.errors) == err["cell_id"].nunique()
    # failed cells are not cached: a rerun retries them
    monkeypatch.setattr(BR, "fit", original)
    s2 = run_experiment(cfg, jobs=1, output=str(tmp_path / "o"), quiet=True, progress=False)
    assert not s2.errors


def test_diverged_status(tmp_path, monkeypatch):
    from mlx.errors import DivergenceError
    from mlx.methods.br import BR

    def boom(self, X, Y, *, observed=None):
        raise DivergenceError("BR diverged; try a larger l2_reg")

    monkeypatch.setattr(BR, "fit", boom)
    cfg = make_config(tmp_path, CONFIG.replace("select: {l2_reg: [0.01, 1.0, 100.0]}", ""))
    s = run_experiment(cfg, jobs=1, output=str(tmp_path / "o"), quiet=True, progress=False)
    frame = pd.read_csv(s.output / "results.csv")
    assert (frame["status"] == "diverged").all()
    assert not s.errors


def test_outputs_written(tmp_path):
    cfg = make_config(tmp_path)
    s = run_experiment(cfg, jobs=1, output=str(tmp_path / "o"), quiet=True, progress=False)
    for name in ("results.csv", "config.resolved.yaml", "manifest.json", "table.md", "table.csv"):
        assert (s.output / name).exists(), name
    manifest = json.loads((s.output / "manifest.json").read_text())
    assert manifest["jobs"] == 1 and manifest["versions"]["numpy"]
    from mlx.numerics.spmm import available_cores

    assert manifest["kernel_threads_per_cell"] == available_cores()   # -j 1: the machine
    md = (s.output / "table.md").read_text()
    assert "| method |" in md and "SQ" in md and "LR" in md


def test_no_global_random_state_in_package():
    root = Path(__file__).resolve().parents[2] / "mlx"
    bad = ("np.random.seed", "np.random.rand(", "np.random.randn(", "random.random(",
           "np.random.RandomState(", "np.random.choice(", "np.random.permutation(")
    for path in root.rglob("*.py"):
        text = path.read_text()
        for b in bad:
            assert b not in text, f"{path}: uses global random state ({b})"


def test_only_runs_a_subset_and_results_keep_earlier_cells(tmp_path):
    cfg = make_config(tmp_path)
    out = str(tmp_path / "o")
    a = run_experiment(cfg, jobs=1, output=out, only="SQ", quiet=True, progress=False)
    assert set(pd.read_csv(a.output / "results.csv")["label"]) == {"SQ"}
    b = run_experiment(cfg, jobs=1, output=out, only="LR", quiet=True, progress=False)
    frame = pd.read_csv(b.output / "results.csv")
    assert set(frame["label"]) == {"SQ", "LR"}
    assert frame["cell_id"].nunique() == len(expand(cfg))


def test_only_unknown_name_is_a_config_error(tmp_path):
    from mlx.errors import ConfigError

    cfg = make_config(tmp_path)
    with pytest.raises(ConfigError,
                       match="--only 'XX' matches no method name or label; valid: LR, SQ, br"):
        run_experiment(cfg, jobs=1, output=str(tmp_path / "o"), only="XX", quiet=True,
                       progress=False)


def _two_leml_cells(tmp_path, params, select="{}"):
    """The two cells (ranks 2 and 3) of one LEML setting on small synthetic data."""
    return expand(make_config(tmp_path, f"""
        name: two
        seed: 0
        dataset:
          synthetic: {{n_samples: 120, n_features: 15, n_labels: 6, rank: 2, seed: 1}}
        methods:
          - {{name: leml, label: LEML, params: {params}, select: {select}}}
        sweep: {{rank: [2, 3]}}
        metrics: [p@1]
        """))


def test_the_timed_final_fit_is_cold_whatever_ran_before_in_the_process(tmp_path):
    """LEML caches the tridiagonal form of X'X per process: without clearing it, the second
    of two cells on the same data timed a warm fit (MoM Table 3 compared LEML warm with MoM
    cold). Every final fit computes its decomposition, and the results are unchanged."""
    from mlx.methods import leml
    from mlx.runner.cells import run_cell

    first, second = _two_leml_cells(tmp_path, "{loss: squared, max_iter: 3, l2_reg: 0.1}")
    leml.clear_gram_cache()
    run_cell(first)
    assert len(leml.TRIDIAG_CACHE) == 1           # the final fit's decomposition is kept ...
    misses = leml.TRIDIAG_CACHE.misses
    rec = run_cell(second)
    assert leml.TRIDIAG_CACHE.misses == misses + 1   # ... but the next timed fit recomputes it
    assert rec["status"] == "ok" and rec["results"]["test"]["p@1"][0] is not None


def test_validation_fits_share_the_decomposition_across_cells_and_the_final_fit_stays_cold(
        tmp_path):
    """The final fit runs with the caches emptied (cold_caches) and the validation fits'
    decomposition is put back after it: the next cell's validation fits reuse it, and only
    its final fit computes one."""
    from mlx.methods import leml
    from mlx.runner.cells import run_cell

    first, second = _two_leml_cells(tmp_path, "{loss: squared, max_iter: 3}",
                                    select="{l2_reg: [0.1, 1.0]}")
    leml.clear_gram_cache()
    misses = leml.TRIDIAG_CACHE.misses
    run_cell(first)
    assert leml.TRIDIAG_CACHE.misses == misses + 2      # validation rows, then all rows (cold)
    rec = run_cell(second)
    assert leml.TRIDIAG_CACHE.misses == misses + 3      # only the final fit computes
    assert rec["status"] == "ok"
