"""Data identity: cells keyed by the content of their data, seeds independent of where the
files lie or how they are called, and common random numbers across a method's settings."""

import gzip
import hashlib
import json
import textwrap

import numpy as np
import pandas as pd
from click.testing import CliRunner

import mlx
from mlx.cli import cli
from mlx.runner.results import TIMING_COLUMNS


def invoke(*args):
    return CliRunner().invoke(cli, list(args), obj={})


def write_libsvm(path, X, Y):
    lines = []
    for x, y in zip(X, Y):
        labels = ",".join(str(j) for j in np.flatnonzero(y))
        feats = " ".join(f"{j + 1}:{v:.6g}" for j, v in enumerate(x) if v)
        lines.append(f"{labels} {feats}")
    path.write_text("\n".join(lines) + "\n")


def multilabel_data(seed=0, n=120, d=10, L=6):
    rng = np.random.default_rng(seed)
    X = rng.random((n, d)) + 0.01
    Y = (X[:, :L] + 0.3 * rng.random((n, L))) > 0.9
    Y[np.arange(n), rng.integers(L, size=n)] = True           # every row has a label
    return X, Y


def write_config(path, text):
    path.write_text(textwrap.dedent(text))
    return path


def results(out):
    return pd.read_csv(out / "results.csv")


def test_an_edited_data_file_recomputes_its_cells(tmp_path):
    X, Y = multilabel_data()
    write_libsvm(tmp_path / "train.svm", X[:90], Y[:90])
    write_libsvm(tmp_path / "test.svm", X[90:], Y[90:])
    cfg = write_config(tmp_path / "c.yaml", """
        name: stale
        dataset: {format: libsvm-multilabel, train: train.svm, test: test.svm, n_labels: 6}
        methods:
          - name: br
            params: {loss: squared, l2_reg: 1.0}
        metrics: [p@1]
        """)
    out = tmp_path / "out"
    r = invoke("run", "-q", "-j", "1", "-o", str(out), str(cfg))
    assert r.exit_code == 0, r.output
    before = results(out)["value"].item()

    # The labels of the training file change (one column is flipped on every row).
    Y2 = Y.copy()
    Y2[:90, 0] = ~Y2[:90, 0]
    write_libsvm(tmp_path / "train.svm", X[:90], Y2[:90])
    r = invoke("run", "-j", "1", "-o", str(out), str(cfg))
    assert r.exit_code == 0, r.output
    assert "already finished" not in r.output
    after = results(out)
    assert len(list((out / "cells").glob("*.json"))) == 2         # the old cell and the new

    fresh = tmp_path / "fresh"
    r = invoke("run", "-q", "-j", "1", "-o", str(fresh), str(cfg))
    assert r.exit_code == 0, r.output
    assert after["value"].item() == results(fresh)["value"].item() != before

    # results.csv names the content it was computed on.
    shas = {role: hashlib.sha256((tmp_path / f"{role}.svm").read_bytes()).hexdigest()
            for role in ("train", "test")}
    assert after["data_sha256"].item() == f"train={shas['train']};test={shas['test']}"

    # Unchanged data: the cell is reused.
    r = invoke("run", "-j", "1", "-o", str(out), str(cfg))
    assert "1 of 1 cells already finished" in r.output


def test_a_cell_of_another_mlx_version_is_recomputed(tmp_path):
    cfg = write_config(tmp_path / "c.yaml", """
        name: versions
        dataset:
          synthetic: {n_samples: 80, n_test: 40, n_features: 8, n_labels: 5, rank: 2}
        methods:
          - name: br
            label: A
            params: {loss: squared, l2_reg: 1.0}
          - name: br
            label: B
            params: {loss: squared, l2_reg: 10.0}
        metrics: [p@1]
        """)
    out = tmp_path / "out"
    r = invoke("run", "-q", "-j", "1", "-o", str(out), str(cfg))
    assert r.exit_code == 0, r.output
    old = results(out).set_index("label")
    cell_a = out / "cells" / f"{old.loc['A', 'cell_id']}.json"
    rec = json.loads(cell_a.read_text())
    assert rec["mlx_version"] == mlx.__version__
    rec["mlx_version"] = "0.0.1"
    rec["results"]["test"]["p@1"][0] = -1.0                  # what a stale cell would report
    cell_a.write_text(json.dumps(rec))

    r = invoke("run", "-j", "1", "-o", str(out), str(cfg))
    assert r.exit_code == 0, r.output
    assert (f"1 finished cell(s) in {out}/cells were computed by mlx 0.0.1, not "
            f"{mlx.__version__}: recomputing 1") in r.output
    assert "1 of 2 cells already finished" in r.output
    new = results(out).set_index("label")
    assert new.loc["A", "value"] == old.loc["A", "value"]
    assert json.loads(cell_a.read_text())["mlx_version"] == mlx.__version__


# Two data-dependent draws (the random split and LSVV's random features and batch orders).
SAME_CONFIG = """
    name: anywhere
    dataset: {{format: libsvm-multilabel, train: {train}, n_labels: 6}}
    split: {{test_fraction: 0.3, repetitions: 2}}
    methods:
      - name: br
        params: {{loss: squared, l2_reg: 1.0}}
      - name: lsvv
        params: {{space: rff, n_components: 20, epochs: 3}}
    metrics: [p@1, hamming]
    """


def test_one_config_gives_the_same_results_csv_anywhere(tmp_path, monkeypatch):
    X, Y = multilabel_data(seed=1)
    a, b = tmp_path / "colleague" / "data", tmp_path / "moved" / "elsewhere"
    a.mkdir(parents=True)
    b.mkdir(parents=True)
    write_libsvm(a / "x.svm", X, Y)
    with gzip.open(b / "x.svm.gz", "wb") as fh:               # the same bytes, gzipped
        fh.write((a / "x.svm").read_bytes())
    (b / "renamed").mkdir()
    (b / "renamed" / "y-train.svm").write_bytes((a / "x.svm").read_bytes())
    frames = []
    for where, train in ((a, a / "x.svm"), (b, b / "x.svm.gz"),
                         (b / "renamed", b / "renamed" / "y-train.svm")):
        cfg = write_config(where / "c.yaml", SAME_CONFIG.format(train=train))
        monkeypatch.chdir(where)
        r = invoke("run", "-q", "-j", "1", "-o", str(where / "out"), str(cfg))
        assert r.exit_code == 0, r.output
        frames.append(results(where / "out").drop(columns=list(TIMING_COLUMNS)))
    assert set(frames[0]["status"]) == {"ok"}
    assert frames[0]["seed"].nunique() == 4                    # per method and repetition
    pd.testing.assert_frame_equal(frames[0], frames[1])
    # Another file name: only the displayed name (the file's) differs.
    assert set(frames[2]["dataset"]) == {"y"}
    pd.testing.assert_frame_equal(frames[0].drop(columns="dataset"),
                                  frames[2].drop(columns="dataset"))


def test_settings_of_one_method_share_their_random_draws(tmp_path):
    """LSVV without and with a negligible manifold term: same random features, same
    mini-batch orders, so the same predictions (the manifold weight is all that differs)."""
    cfg = write_config(tmp_path / "c.yaml", """
        name: crn
        dataset:
          synthetic: {task: multiclass, n_samples: 150, n_test: 100, n_features: 6,
                      n_classes: 3, class_sep: 1.0}
        split: {test_fraction: 0.4, repetitions: 2, pool: true}
        methods:
          - name: lsvv
            label: SRM-VV
            params: {space: rff, n_components: 30, tau_I: 0.0}
          - name: lsvv
            label: SS-VV
            params: {space: rff, n_components: 30, tau_I: 1.0e-14}
        metrics: [error]
        """)
    out = tmp_path / "out"
    r = invoke("run", "-q", "-j", "1", "-o", str(out), str(cfg))
    assert r.exit_code == 0, r.output
    frame = results(out).pivot(index="repetition", columns="label", values=["seed", "value"])
    assert (frame["seed"]["SRM-VV"] == frame["seed"]["SS-VV"]).all()
    assert frame["seed"]["SRM-VV"].nunique() == 2              # repetitions draw anew
    np.testing.assert_array_equal(frame["value"]["SRM-VV"], frame["value"]["SS-VV"])
