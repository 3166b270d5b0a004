"""Adding a metric never refits: stored score summaries, `mlx evaluate`, `--save-models`."""

from __future__ import annotations

import textwrap

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp
from click.testing import CliRunner

import mlx
from mlx.cli import cli
from mlx.metrics import evaluate
from mlx.metrics.stored import metrics_from_summary, summarize

CONFIG = """
name: stored
dataset:
  synthetic: {n_samples: 200, n_features: 12, n_labels: 30, rank: 3, seed: 0}
methods:
  - name: br
    params: {loss: squared_hinge}
  - name: wsabie
    label: WS
sweep: {repetitions: 2}
evaluation: {splits: [test, train]}
metrics: [p@1, auc]
"""
MORE = ["p@1", "auc", "ndcg@3", "p@5", "hamming", "f1", "micro_f1", "macro_f1"]


def invoke(*args):
    return CliRunner().invoke(cli, list(args), obj={})


def write(tmp_path, name, text):
    p = tmp_path / name
    p.write_text(textwrap.dedent(text))
    return p


def values(out):
    frame = pd.read_csv(out / "results.csv")
    frame = frame[frame["metric"].notna()]
    return frame.set_index(["cell_id", "split", "metric"])[["value", "n_eval"]].sort_index()


@pytest.fixture
def fresh(tmp_path):
    """A run of the config with every metric from the start: the reference numbers."""
    p = write(tmp_path, "all.yaml", CONFIG.replace("[p@1, auc]", f"[{', '.join(MORE)}]"))
    r = invoke("run", "-q", "-j", "1", "-o", str(tmp_path / "fresh"), str(p))
    assert r.exit_code == 0, r.output
    return values(tmp_path / "fresh")


def test_summary_gives_the_evaluator_numbers_exactly():
    rng = np.random.default_rng(0)
    S = np.round(rng.standard_normal((150, 40)), 1)          # many ties
    Y = sp.csr_matrix((rng.random((150, 40)) < 0.1).astype(float))
    rows = np.arange(150)[:, None]
    score = lambda X: S[np.asarray(X).ravel()]  # noqa: E731
    names = MORE + ["ndcg@10", "p@40"]
    for degenerate in ("skip", "zero"):
        ref = evaluate(score, rows, Y, names, threshold=0.2, auc_degenerate=degenerate,
                       batch_size=50)
        summary = summarize(score, rows, Y, task="multilabel", threshold=0.2,
                            auc_degenerate=degenerate, batch_size=64, top_k=40)
        assert metrics_from_summary(summary, names) == ref
    shallow = summarize(score, rows, Y, task="multilabel", threshold=None,
                        auc_degenerate="skip", top_k=5)
    assert metrics_from_summary(shallow, ["p@5", "hamming"])["hamming"] == (None, 0)
    with pytest.raises(mlx.errors.MlxError, match=r"cannot give p@6 \(ranking stored to depth 5"):
        metrics_from_summary(shallow, ["p@6"])


def test_a_config_changing_only_metrics_and_labels_reuses_every_cell(tmp_path, fresh):
    out = tmp_path / "out"
    p = write(tmp_path, "c.yaml", CONFIG)
    assert invoke("run", "-q", "-j", "1", "-o", str(out), str(p)).exit_code == 0
    before = {f.name: f.stat().st_mtime_ns for f in (out / "cells").glob("*.npz")}
    assert len(before) == 4
    changed = write(tmp_path, "c2.yaml", CONFIG.replace("[p@1, auc]", f"[{', '.join(MORE)}]")
                    .replace("label: WS", "label: WSABIE-renamed"))
    r = invoke("run", "-j", "1", "-o", str(out), str(changed))
    assert r.exit_code == 0, r.output
    assert "4 of 4 cells already finished" in r.output
    assert " done " not in r.output                              # nothing was fitted
    assert {f.name: f.stat().st_mtime_ns for f in (out / "cells").glob("*.npz")} == before
    got = values(out)
    pd.testing.assert_frame_equal(got, fresh.loc[got.index])
    assert len(got) == len(fresh)
    assert set(pd.read_csv(out / "results.csv")["label"]) == {"br", "WSABIE-renamed"}


def test_evaluate_adds_rows_equal_to_a_fresh_run(tmp_path, fresh):
    out = tmp_path / "out"
    p = write(tmp_path, "c.yaml", CONFIG)
    assert invoke("run", "-q", "-j", "1", "-o", str(out), str(p)).exit_code == 0
    r = invoke("evaluate", str(out), "--metrics", "ndcg@3,hamming,f1,micro_f1,macro_f1,p@5")
    assert r.exit_code == 0, r.output
    assert "ndcg@3, hamming, f1, micro_f1, macro_f1, p@5: 48 rows from the stored scores of " \
           "4 cells" in r.output
    got = values(out)
    pd.testing.assert_frame_equal(got, fresh.loc[got.index])
    assert len(got) == len(fresh)
    # WSABIE has no threshold: its thresholded metrics stay blank, as in a run
    frame = pd.read_csv(out / "results.csv")
    ws = frame[(frame["method"] == "wsabie") & (frame["metric"] == "hamming")]
    assert ws["value"].isna().all() and (ws["n_eval"] == 0).all()
    # rows of a cell stay together, new metrics after its own
    first = frame[frame["cell_id"] == frame["cell_id"].iloc[0]]
    assert list(first.index) == list(range(first.index[0], first.index[0] + len(first)))
    # evaluating again replaces, never duplicates
    assert invoke("evaluate", str(out), "--metrics", "ndcg@3").exit_code == 0
    assert len(pd.read_csv(out / "results.csv")) == len(frame)


@pytest.mark.parametrize("args, message", [
    (["--metrics", "ndcg@3,nope"], "Error: --metrics: unknown metric 'nope'"),
    (["--metrics", "mse"], "Error: --metrics: metric 'mse' is not defined for a multilabel "
                           "task"),
    (["--metrics", "p@21"], "finished cell(s) have no stored scores for p@21"),
])
def test_evaluate_errors_write_nothing(tmp_path, args, message):
    out = tmp_path / "out"
    p = write(tmp_path, "c.yaml", CONFIG)
    assert invoke("run", "-q", "-j", "1", "-o", str(out), str(p)).exit_code == 0
    before = (out / "results.csv").read_bytes()
    r = invoke("evaluate", str(out), *args)
    assert r.exit_code in (1, 2)
    assert message in r.output, r.output
    assert (out / "results.csv").read_bytes() == before


def test_a_metric_deeper_than_the_stored_ranking_refits_on_run(tmp_path):
    out = tmp_path / "out"
    p = write(tmp_path, "c.yaml", CONFIG.replace("metrics: [p@1, auc]",
                                                 "metrics: [p@1]\nevaluation: {store_top_k: 2}")
              .replace("evaluation: {splits: [test, train]}\n", ""))
    assert invoke("run", "-q", "-j", "1", "-o", str(out), str(p)).exit_code == 0
    deeper = write(tmp_path, "d.yaml", p.read_text().replace("[p@1]", "[p@1, p@3]"))
    r = invoke("run", "-j", "1", "-o", str(out), str(deeper))
    assert r.exit_code == 0, r.output
    assert "already finished" not in r.output and r.output.count(" done ") == 4


def test_saved_model_predicts_on_new_data(tmp_path):
    out = tmp_path / "out"
    p = write(tmp_path, "c.yaml", CONFIG)
    r = invoke("run", "-q", "-j", "1", "-o", str(out), "--save-models", str(p))
    assert r.exit_code == 0, r.output
    frame = pd.read_csv(out / "results.csv")
    row = frame[(frame["method"] == "br") & (frame["split"] == "test")
                & (frame["metric"] == "p@1")].iloc[0]
    model = mlx.load_model(out, row["cell_id"])
    from mlx.config import load_config
    from mlx.runner.protocol import cell_data
    from mlx.runner.sweep import expand

    cell = next(c for c in expand(load_config(p)) if c.cell_id() == row["cell_id"])
    test = cell_data(cell).test
    p1 = evaluate(model.decision_function, test.X, test.Y, ["p@1"])["p@1"][0]
    assert p1 == pytest.approx(row["value"], abs=1e-9)
    assert model.predict(test.X[:3]).shape == (3, 30)
    with pytest.raises(mlx.errors.MlxError, match="no saved model for cell 'nope'"):
        mlx.load_model(out, "nope")
    # a later run without --save-models keeps them; one with it reuses every cell
    r = invoke("run", "-j", "1", "-o", str(out), "--save-models", str(p))
    assert "4 of 4 cells already finished" in r.output


def test_methods_differing_only_in_label_share_one_fit(tmp_path):
    p = write(tmp_path, "dup.yaml", """
        name: dup
        dataset:
          synthetic: {n_samples: 120, n_features: 12, n_labels: 6, rank: 2, seed: 0}
        methods:
          - {name: br, label: A}
          - {name: br, label: B}
        metrics: [p@1]
        """)
    r = invoke("run", "-j", "1", "-o", str(tmp_path / "out"), str(p))
    assert r.exit_code == 0, r.output
    assert r.output.count(" done ") == 1
    frame = pd.read_csv(tmp_path / "out" / "results.csv")
    assert sorted(frame["label"]) == ["A", "B"] and frame["cell_id"].nunique() == 1
    assert frame["value"].nunique() == 1
