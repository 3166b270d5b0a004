"""Tasks and protocols through the runner: random splits, labelled rows, k-fold selection,
absolute ranks, the constant baseline, and config errors that `validate` and `run` share."""

import json
import os
import textwrap

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp
from click.testing import CliRunner

from mlx.cli import cli
from mlx.config import load_config
from mlx.runner.experiment import run_experiment
from mlx.runner.results import TIMING_COLUMNS
from mlx.runner.sweep import expand

TIMING = list(TIMING_COLUMNS)
DATA = bool(os.environ.get("MLX_DATA_PATH"))

MULTICLASS = """
name: mc
seed: 4
dataset:
  synthetic: {task: multiclass, n_samples: 150, n_test: 60, n_features: 6, n_classes: 3,
              class_sep: 1.5, seed: 2}
split: {test_fraction: 0.3, repetitions: 3, pool: true}
preprocess: [bias]
methods:
  - name: constant
  - name: br
    params: {loss: squared}
    select: {l2_reg: [0.1, 10.0]}
  - name: leml
    params: {loss: squared, max_iter: 3}
sweep: {rank: [2, 3]}
"""


def write(tmp_path, text, name="cfg"):
    p = tmp_path / f"{name}.yaml"
    p.write_text(textwrap.dedent(text))
    return p


def run(tmp_path, text, name="o", jobs=1):
    cfg = load_config(write(tmp_path, text, name))
    s = run_experiment(cfg, jobs=jobs, output=str(tmp_path / name), quiet=True, progress=False)
    return s, pd.read_csv(s.output / "results.csv", dtype={"selected": str, "candidate": str,
                                                          "message": str})


def test_multiclass_random_splits_are_shared_by_every_method(tmp_path):
    from mlx.data.synthetic import make_multiclass

    s, frame = run(tmp_path, MULTICLASS)
    assert set(frame["status"]) == {"ok"}, frame["message"].dropna().unique()
    test = frame[frame["split"] == "test"]
    assert set(test["metric"]) == {"error"} and set(test["task"]) == {"multiclass"}
    fps = test.groupby("repetition")["split_fingerprint"].nunique()
    assert (fps == 1).all() and test["split_fingerprint"].nunique() == 3
    # LEML has a rank axis of absolute ranks; BR and the constant collapse it
    leml = test[test["method"] == "leml"]
    assert sorted(leml["rank"].unique()) == [2, 3] and leml["rank_ratio"].isna().all()
    assert len(test[test["method"] == "br"]) == 3
    # the constant predicts the training majority class of each split
    split = make_multiclass(n_samples=150, n_test=60, n_features=6, n_classes=3,
                            class_sep=1.5, seed=2)
    y = np.concatenate([split.train.Y.indices, split.test.Y.indices])
    from mlx.data.splits import random_split
    from mlx.seeding import split_rng

    for rep in range(3):
        tr, te = random_split(y.size, 0.3, split_rng(4, "synthetic-multiclass", rep), classes=y)
        majority = np.bincount(y[tr], minlength=3).argmax()
        err = test[(test["method"] == "constant") & (test["repetition"] == rep)]["value"].item()
        assert err == pytest.approx(np.mean(y[te] != majority))
    # a real method beats the trivial baseline
    mean = test.groupby("method")["value"].mean()
    assert mean["br"] < mean["constant"] - 0.2
    assert mean["leml"] < mean["constant"] - 0.2
    table = (s.output / "table.md").read_text()
    assert "| k |" in table.replace("| k/L |", "")


def test_jobs_do_not_change_random_split_results(tmp_path):
    _, a = run(tmp_path, MULTICLASS, name="a", jobs=1)
    _, b = run(tmp_path, MULTICLASS, name="b", jobs=2)
    pd.testing.assert_frame_equal(a.drop(columns=TIMING), b.drop(columns=TIMING))


@pytest.fixture
def br_fits(monkeypatch):
    """The arguments of every ``BR.fit`` call of an in-process run: dicts of X, Y, observed."""
    from mlx.methods.br import BR

    calls = []
    original = BR.fit

    def recording(self, X, Y, *, observed=None):
        calls.append({"X": sp.csr_matrix(X), "Y": sp.csr_matrix(Y), "observed": observed})
        return original(self, X, Y, observed=observed)

    monkeypatch.setattr(BR, "fit", recording)
    return calls


def row_sets(calls) -> list:
    """Every recorded fit's rows, as a set of row bytes."""
    return [{c["X"][r].toarray().tobytes() for r in range(c["X"].shape[0])} for c in calls]


def test_cv_selection_never_fits_on_test_rows_and_uses_k_folds(tmp_path, br_fits):
    from mlx.runner.protocol import cell_data

    text = MULTICLASS.replace("sweep: {rank: [2, 3]}", "selection: {cv: 4}") \
        .replace("  - name: leml\n    params: {loss: squared, max_iter: 3}\n", "") \
        .replace("  - name: constant\n", "").replace("preprocess: [bias]", "preprocess: []")
    s, frame = run(tmp_path, text)
    assert set(frame["status"]) == {"ok"}
    val = frame[frame["split"] == "validation"]
    assert len(val) == 3 * 2                       # 3 repetitions x 2 candidates
    assert (val["n_eval"] == 147).all()            # every training row held out once
    # the cell cache keeps each candidate's per-fold scores; their mean is the value shown
    for path in (tmp_path / "o" / "cells").glob("*.json"):
        rec = json.loads(path.read_text())
        for trial in rec["trials"] or ():
            assert len(trial["folds"]) == 4
            assert trial["value"] == pytest.approx(np.mean(trial["folds"]))
    fit_log = row_sets(br_fits)
    assert len(fit_log) == 3 * (2 * 4 + 1)         # per repetition: 2 candidates x 4 folds + final
    cells = expand(load_config(tmp_path / "o.yaml"))
    for rep in range(3):
        data = cell_data(cells[rep])
        test_rows = {data.test.X[i].toarray().tobytes() for i in range(data.test.n_samples)}
        train_rows = {data.train.X[i].toarray().tobytes() for i in range(data.train.n_samples)}
        fits = fit_log[rep * 9:(rep + 1) * 9]
        assert all(not (rows & test_rows) for rows in fits)
        assert fits[-1] == train_rows                      # the final fit: the whole train part
        folds = fits[:4]
        assert all(len(f) < len(train_rows) for f in folds)
        held_out = [train_rows - f for f in folds]         # every row held out exactly once
        assert set().union(*held_out) == train_rows
        assert sum(len(h) for h in held_out) == len(train_rows)


def test_labelled_rows_are_the_only_labelled_data_and_are_nested(tmp_path, br_fits):
    text = MULTICLASS.replace("sweep: {rank: [2, 3]}", "sweep: {labelled_ratio: [0.2, 0.5]}") \
        .replace("    select: {l2_reg: [0.1, 10.0]}\n", "") \
        .replace("  - name: leml\n    params: {loss: squared, max_iter: 3}\n", "") \
        .replace("  - name: constant\n", "").replace("preprocess: [bias]", "preprocess: []")
    _, frame = run(tmp_path, text)
    assert set(frame["status"]) == {"ok"}
    n_train = 147                                     # 70% of 210 rows
    fit_log = row_sets(br_fits)
    sizes = sorted(len(rows) for rows in fit_log)
    assert sizes == [round(0.2 * n_train)] * 3 + [round(0.5 * n_train)] * 3
    # nested: for each repetition the 20% rows are inside the 50% rows
    by_rep = {}
    cells = frame.drop_duplicates("cell_id").reset_index(drop=True)
    for (_, cell), rows in zip(cells.iterrows(), fit_log):
        by_rep.setdefault(cell["repetition"], {})[cell["labelled_ratio"]] = rows
    for rep, d in by_rep.items():
        assert d[0.2] <= d[0.5]
    assert cells["mask_fingerprint"].nunique() == 6


@pytest.mark.skipif(not DATA, reason="needs MLX_DATA_PATH")
def test_regression_constant_and_minmax_targets(tmp_path):
    _, frame = run(tmp_path, """
        name: reg
        dataset: cpusmall
        split: {test_fraction: 0.3, repetitions: 2}
        target: minmax
        methods:
          - name: constant
          - name: br
            params: {loss: logistic}
        metrics: [mse, mae]
        """)
    cells = frame.drop_duplicates("cell_id").set_index(["method", "repetition"])
    assert (cells.loc["br", "status"] == "skipped").all()
    assert cells.loc["br", "message"].iloc[0] == \
        "br with loss='logistic' does not handle regression tasks (loss='squared' does)"
    const = frame[(frame["method"] == "constant") & (frame["split"] == "test")]
    assert set(const["status"]) == {"ok"}
    mse = const[const["metric"] == "mse"]["value"]
    assert (mse > 0.005).all() and (mse < 0.2).all()        # scaled targets: [0, 1]


def test_ordinal_predictions_are_levels():
    from mlx.tasks import get_task

    task = get_task("ordinal")
    Y_train = sp.csr_matrix(np.array([[3.0], [5.0], [6.0], [8.0]]))
    predict = task.predictor(lambda X: np.asarray(X, dtype=float), Y_train)
    scores = np.array([[-10.0], [3.9], [4.0], [4.1], [5.6], [7.0], [7.1], [99.0]])
    assert predict(scores).ravel().tolist() == [3, 3, 3, 5, 6, 6, 8, 8]


@pytest.mark.parametrize("task, Y, message", [
    ("multilabel", [[1.0, 0.0], [0.5, 1.0]], "row 2: target value 0.5 is not a 0/1 label"),
    ("multiclass", [[1.0, 1.0], [0.0, 1.0]], "row 1: has 2 labels; a multi-class task needs "
                                             "exactly one class per row"),
    ("ordinal", [[1.0], [2.5]], "row 2: ordinal level 2.5 is not an integer"),
    ("ordinal", [[4.0], [4.0]], "every row has level 4; an ordinal task needs at least two"),
    ("regression", [[1.0], [np.nan]], "row 2: target is NaN or infinite"),
])
def test_targets_that_do_not_fit_the_task(task, Y, message):
    from mlx.errors import DataFormatError
    from mlx.tasks import get_task

    with pytest.raises(DataFormatError, match="^f.txt: " + message.replace("(", r"\(")):
        get_task(task).check_targets(sp.csr_matrix(np.array(Y)), where="f.txt")


# ----------------------------------------------------------------------------- config errors
def _libsvm_multiclass(path, classes):
    rng = np.random.default_rng(0)
    path.write_text("".join(f"{c} 1:{rng.random():.4f} 2:{rng.random():.4f}\n"
                            for c in classes))


BAD = [
    # (config body, expected message tail, needs data)
    ("dataset: cpusmall\nsplit: {test_fraction: 0.3}\nmethods: [constant]\nmetrics: [p@1]",
     "metrics[0]: metric 'p@1' is not defined for a regression task; valid: mae, mse, rmse",
     False),
    ("dataset: glass\nmethods: [constant]",
     "dataset: 'glass' has no official train/test split; add a random split protocol, e.g. "
     "split: {test_fraction: 0.3, repetitions: 5}", False),
    ("dataset: glass\nsplit: {test_fraction: 0.3}\nmethods: [cplst]",
     "methods[0].name: method 'cplst' does not handle multiclass tasks (it handles: "
     "multilabel); the dataset 'glass' is a multiclass task", False),
    ("dataset: glass\nsplit: {test_fraction: 0.3}\nmethods: [constant]\n"
     "sweep: {labelled_ratio: [0]}",
     "sweep.labelled_ratio[0]: must be a float in the range (0, 1]. Got 0 instead.", False),
    ("dataset: glass\nsplit: {test_fraction: 0.3}\nmethods: [constant]\n"
     "sweep: {labelled_ratio: [1.5]}",
     "sweep.labelled_ratio[0]: must be a float in the range (0, 1]. Got 1.5 instead.", False),
    ("dataset: glass\nsplit: {test_fraction: 0.3}\nmethods: [constant]\n"
     "sweep: {observed_ratio: [0.5]}",
     "sweep.observed_ratio: masks label entries of multi-label data; the dataset 'glass' is a "
     "multiclass task (use sweep.labelled_ratio for labelled rows)", False),
    ("dataset: {synthetic: {n_samples: 50}}\nmethods:\n  - name: leml\n"
     "    params: {w_solver: eig}\nsweep: {observed_ratio: [1.0, 0.5]}",
     "methods[0].params.w_solver: w_solver='eig' needs loss='squared' and fully observed "
     "labels; got loss='squared' with missing labels. Use 'auto', 'cg' or 'tron'.", False),
    ("dataset: {synthetic: {n_samples: 50}}\nmethods: [br]\nsweep: {rank: [2], rank_ratio: [0.5]}",
     "sweep.rank: is an alternative to sweep.rank_ratio (absolute ranks vs k/L); give one",
     False),
    ("dataset: {synthetic: {n_samples: 50}}\nmethods: [br]\nselection: {cv: 1}",
     "selection.cv: must be an int >= 2. Got 1 instead.", False),
    ("dataset: {synthetic: {n_samples: 50}}\nmethods: [br]\ntarget: minmax",
     "target: scales regression targets; the dataset 'synthetic' is a multilabel task", False),
    ("dataset: {format: libsvm-multiclass, train: {dir}/lone.txt, name: lone}\n"
     "split: {test_fraction: 0.3}\nmethods: [constant]",
     "split: lone: a stratified split needs at least 2 rows of every class; class 2 has 1",
     True),
    ("dataset: {format: libsvm-multiclass, train: {dir}/small2.txt, name: small2}\n"
     "split: {test_fraction: 0.3}\nmethods:\n  - name: br\n    select: {l2_reg: [1.0, 2.0]}\n",
     "selection.validation_fraction: small2, repetition 0: a stratified split needs at least 2 "
     "rows of every class; class 1 has 1", True),
    ("dataset: {format: libsvm-multiclass, train: {dir}/small.txt, name: small}\n"
     "split: {test_fraction: 0.3}\nmethods:\n  - name: br\n    select: {l2_reg: [1.0, 2.0]}\n"
     "selection: {cv: 5}",
     "selection.cv: small, repetition 0: stratified 5-fold cross-validation needs at least 5 "
     "rows of every class; class 1 has 3; use at most 3 folds or set selection.stratify: "
     "false", True),
    ("dataset: {format: csv, train: {dir}/gaps.csv, name: gaps, target: y, missing: nan}\n"
     "split: {test_fraction: 0.3}\npreprocess: [minmax]\nmethods: [constant]",
     "preprocess: 'gaps' has 1 missing feature values; make impute_mean (fills each with the "
     "training mean of its feature) the first preprocessing step", True),
    ("dataset: {format: csv, train: {dir}/gaps.csv, name: gaps, target: y, missing: nan}\n"
     "split: {test_fraction: 0.3}\npreprocess: [impute_mean]\nmethods:\n  - name: constant\n"
     "    preprocess: [bias]",
     "methods[0].preprocess: 'gaps' has 1 missing feature values; make impute_mean (fills each "
     "with the training mean of its feature) the first preprocessing step", True),
    # a candidate chain of select (steps by name) without impute_mean
    ("dataset: {format: csv, train: {dir}/gaps.csv, name: gaps, target: y, missing: nan}\n"
     "split: {test_fraction: 0.3}\npreprocess: [impute_mean, minmax]\nmethods:\n"
     "  - name: landmark\n    select: {preprocess: [[impute_mean, minmax], [minmax]]}",
     "preprocess: 'gaps' has 1 missing feature values; make impute_mean (fills each with the "
     "training mean of its feature) the first preprocessing step", True),
]


@pytest.mark.parametrize("body, message, local", BAD, ids=range(len(BAD)))
def test_validate_and_run_fail_alike_before_any_cell(tmp_path, body, message, local):
    if "cpusmall" in body or "glass" in body:
        if not DATA:
            pytest.skip("needs MLX_DATA_PATH")
    _libsvm_multiclass(tmp_path / "lone.txt", [0] * 10 + [1] * 10 + [2])
    _libsvm_multiclass(tmp_path / "small.txt", [0] * 20 + [1] * 4)
    _libsvm_multiclass(tmp_path / "small2.txt", [0] * 20 + [1] * 2)
    (tmp_path / "gaps.csv").write_text("a,b,y\n" + "".join(
        f"{i % 7},{'?' if i == 3 else i % 5},{i % 3}\n" for i in range(40)))
    cfg = write(tmp_path, "name: bad\n" + body.replace("{dir}", str(tmp_path)))
    runner = CliRunner()
    v = runner.invoke(cli, ["validate", str(cfg)])
    r = runner.invoke(cli, ["run", "-q", "-o", str(tmp_path / "out"), str(cfg)])
    assert v.exit_code == r.exit_code == 2, (v.output, r.output)
    assert v.output == r.output == f"Error: {cfg}: {message}\n"
    assert not (tmp_path / "out").exists()


@pytest.mark.skipif(not DATA, reason="needs MLX_DATA_PATH")
@pytest.mark.parametrize("dataset, density", [("scene", 0.179), ("yeast", 0.303),
                                              ("corel5k", 0.0094)])
def test_constant_hamming_loss_is_the_test_label_density(tmp_path, dataset, density):
    from mlx.data.catalog import load_split, resolve_dataset

    _, frame = run(tmp_path, f"""
        name: c
        dataset: {dataset}
        methods: [constant]
        metrics: [hamming, p@1]
        """)
    split = load_split(resolve_dataset(dataset))
    Y = split.test.Y
    hamming = frame.set_index("metric")["value"]["hamming"]
    assert hamming == pytest.approx(Y.nnz / np.prod(Y.shape))
    # the published all-zero figures are the density of the pooled data
    pooled = (split.train.Y.nnz + Y.nnz) / ((split.train.n_samples + Y.shape[0]) * Y.shape[1])
    assert pooled == pytest.approx(density, abs=5e-4)
    # p@1 of the most frequent training label
    assert frame.set_index("metric")["value"]["p@1"] > 0


def test_a_semi_supervised_method_gets_the_unlabelled_rows_as_features_only(tmp_path):
    from mlx.methods import METHODS
    from mlx.methods.base import Interval
    from mlx.methods.constant import Constant

    seen = []

    class SemiSupervised(Constant):
        uses_unlabelled = True
        _parameter_constraints = {**Constant._parameter_constraints,
                                  "alpha": [Interval(float, 0, None)]}

        def __init__(self, *, task="multilabel", alpha=1.0):
            super().__init__(task=task)
            self.alpha = alpha

        def fit(self, X, Y, *, observed=None, unlabelled=None):
            seen.append((X.shape[0], Y.shape[0], None if unlabelled is None
                         else unlabelled.shape))
            return super().fit(X, Y, observed=observed)

    METHODS.register("semi")(SemiSupervised)
    try:
        text = MULTICLASS.replace("sweep: {rank: [2, 3]}",
                                  "sweep: {labelled_ratio: [1.0, 0.2]}") \
            .replace("  - name: br\n    params: {loss: squared}\n"
                     "    select: {l2_reg: [0.1, 10.0]}\n", "") \
            .replace("  - name: leml\n    params: {loss: squared, max_iter: 3}\n", "") \
            .replace("  - name: constant\n", "  - name: semi\n    select: {alpha: [1.0, 2.0]}\n")
        _, frame = run(tmp_path, text)
    finally:
        METHODS._items.pop("semi")
    assert set(frame["status"]) == {"ok"}
    n_train, n_lab = 147, round(0.2 * 147)
    n_val = round(0.2 * n_lab)
    # per repetition: two selection fits on the fit rows, then the final fit; every one gets
    # the unlabelled rows (with the config's bias column: 6 features + 1) and no labels for them
    one_rep = [(n_lab - n_val, n_lab - n_val, (n_train - n_lab, 7))] * 2 + \
        [(n_lab, n_lab, (n_train - n_lab, 7))]
    all_labelled = [(n_train - round(0.2 * n_train),) * 2 + (None,)] * 2 + \
        [(n_train, n_train, None)]                      # no unlabelled rows: None
    assert seen == all_labelled * 3 + one_rep * 3


def test_selection_fits_see_the_observed_label_mask(tmp_path, br_fits):
    _, frame = run(tmp_path, """
        name: masked
        dataset: {synthetic: {n_samples: 100, n_features: 8, n_labels: 5, rank: 2, seed: 3}}
        methods:
          - name: br
            params: {loss: squared}
            select: {l2_reg: [0.1, 1.0]}
        sweep: {observed_ratio: [0.5]}
        metrics: [auc]
        selection: {metric: auc}
        """)
    assert set(frame["status"]) == {"ok"}
    masks = [None if c["observed"] is None else (c["observed"].shape, c["observed"].nnz)
             for c in br_fits]
    for c in br_fits:              # the labels a method gets hold no unobserved positive
        inside = c["Y"].multiply(sp.csr_matrix(c["observed"]) != 0)
        assert inside.nnz == c["Y"].nnz
    assert len(masks) == 3                              # two candidates, then the final fit
    assert masks[0] == masks[1] == ((80, 5), masks[0][1]) and masks[0][1] < 80 * 5
    assert masks[2] == ((100, 5), 250)


def test_a_method_that_declines_the_setting_is_skipped_during_selection_too(tmp_path):
    _, frame = run(tmp_path, """
        name: skip
        dataset: {synthetic: {n_samples: 100, n_features: 8, n_labels: 5, rank: 2, seed: 3}}
        methods:
          - name: cplst
            select: {l2_reg: [0.1, 1.0]}
        sweep: {observed_ratio: [1.0, 0.5], rank_ratio: [0.6]}
        metrics: [auc]
        """)
    cells = frame.drop_duplicates("cell_id").set_index("observed_ratio")
    assert cells.loc[1.0, "status"] == "ok"
    assert cells.loc[0.5, "status"] == "skipped"
    assert cells.loc[0.5, "message"] == "cplst does not support missing labels"


def test_ordinal_selection_scores_predicted_levels(tmp_path):
    rng = np.random.default_rng(4)
    X = rng.random((90, 4))
    levels = np.clip(np.round(X @ np.array([3.0, 2.0, -1.0, 1.0]) + 1), 1, 5).astype(int)
    (tmp_path / "ord.txt").write_text("".join(
        f"{y} " + " ".join(f"{j + 1}:{v:.5f}" for j, v in enumerate(x)) + "\n"
        for x, y in zip(X, levels)))
    _, frame = run(tmp_path, f"""
        name: ord
        dataset: {{format: libsvm-multiclass, task: ordinal, train: {tmp_path}/ord.txt,
                   name: ord}}
        split: {{test_fraction: 0.3, stratify: false}}
        methods:
          - name: br
            params: {{loss: squared}}
            select: {{l2_reg: [0.01, 100.0]}}
        metrics: [mae]
        selection: {{stratify: false}}
        """)
    assert set(frame["status"]) == {"ok"}, frame["message"].dropna().unique()
    val = frame[frame["split"] == "validation"]
    # predictions are levels: each row's absolute error is an integer
    for _, row in val.iterrows():
        assert abs(row["value"] * row["n_eval"] - round(row["value"] * row["n_eval"])) < 1e-6


def test_two_fold_selection_keeps_both_fold_scores(tmp_path):
    _, frame = run(tmp_path, """
        name: cv2
        dataset: {synthetic: {n_samples: 60, n_features: 6, n_labels: 4, rank: 2, seed: 3}}
        methods:
          - name: br
            params: {loss: squared}
            select: {l2_reg: [0.1, 10.0]}
        selection: {cv: 2, metric: auc}
        metrics: [auc]
        """)
    rec = json.loads(next((tmp_path / "o" / "cells").glob("*.json")).read_text())
    assert [len(t["folds"]) for t in rec["trials"]] == [2, 2]
    val = frame[frame["split"] == "validation"]
    assert (val["n_eval"] == 60).all()


def test_selection_folds_follow_the_config_seed_and_are_shared_by_methods(tmp_path):
    body = """
        dataset: {synthetic: {n_samples: 60, n_features: 6, n_labels: 4, rank: 2, seed: 3}}
        methods:
          - name: br
            params: {loss: squared}
            select: {l2_reg: [0.1, 10.0]}
          - name: br
            label: other
            params: {loss: squared, bias: 1.0}
            select: {l2_reg: [0.1, 10.0]}
        selection: {cv: 3, metric: auc}
        metrics: [auc]
        """
    fps = {}
    for seed in (1, 2):
        _, frame = run(tmp_path, f"name: s{seed}\nseed: {seed}\n" + textwrap.dedent(body),
                       name=f"s{seed}")
        fp = frame.drop_duplicates("cell_id")["validation_fingerprint"]
        assert fp.nunique() == 1                      # both methods saw the same folds
        fps[seed] = fp.iloc[0]
    assert fps[1] != fps[2]                           # the config's seed moves the folds


@pytest.mark.parametrize("cv", [None, 3])
def test_selection_rows_are_the_documented_draw(tmp_path, cv):
    """Validation rows (or folds) come from (seed, dataset, repetition), stratified by class."""
    from mlx.data.splits import holdout, kfold, random_split
    from mlx.data.synthetic import make_multiclass
    from mlx.runner.protocol import fingerprint
    from mlx.seeding import cv_rng, split_rng, validation_rng

    text = MULTICLASS.replace("sweep: {rank: [2, 3]}",
                              "selection: {cv: 3}" if cv else "") \
        .replace("  - name: leml\n    params: {loss: squared, max_iter: 3}\n", "") \
        .replace("  - name: constant\n", "")
    _, frame = run(tmp_path, text)
    split = make_multiclass(n_samples=150, n_test=60, n_features=6, n_classes=3,
                            class_sep=1.5, seed=2)
    y = np.concatenate([split.train.Y.indices, split.test.Y.indices])
    cells = frame.drop_duplicates("cell_id").set_index("repetition")
    for rep in range(3):
        tr, _ = random_split(y.size, 0.3, split_rng(4, "synthetic-multiclass", rep), classes=y)
        if cv:
            folds = kfold(tr.size, 3, cv_rng(4, "synthetic-multiclass", rep), classes=y[tr])
        else:
            folds = [holdout(tr.size, 0.2, validation_rng(4, "synthetic-multiclass", rep),
                             classes=y[tr])]
        assert cells.loc[rep, "validation_fingerprint"] == fingerprint(*[v for _, v in folds])


def test_a_ranking_method_with_only_thresholded_metrics_runs(tmp_path):
    _, frame = run(tmp_path, """
        name: w
        dataset: {synthetic: {n_samples: 80, n_features: 6, n_labels: 4, rank: 2, seed: 1}}
        methods:
          - name: wsabie
            params: {epochs: 1}
        metrics: [hamming, f1]
        """)
    assert set(frame["status"]) == {"ok"} and frame["value"].isna().all()


def test_labelled_rows_and_masks_combine_as_documented(tmp_path, br_fits):
    from mlx.data.splits import labelled_rows
    from mlx.data.synthetic import make_low_rank_multilabel
    from mlx.masks import MaskSampler
    from mlx.runner.protocol import fingerprint
    from mlx.seeding import labelled_seed, mask_seed

    _, frame = run(tmp_path, """
        name: both
        seed: 6
        dataset: {synthetic: {n_samples: 100, n_features: 8, n_labels: 5, rank: 2, seed: 3}}
        methods:
          - name: br
            params: {loss: squared, l2_reg: 1.0}
        sweep: {observed_ratio: [0.5], labelled_ratio: [0.4], repetitions: 2}
        metrics: [auc]
        """)
    assert set(frame["status"]) == {"ok"}
    seen = [None if c["observed"] is None else c["observed"].shape for c in br_fits]
    assert seen == [(40, 5)] * 2                  # the mask, cut to the labelled rows
    shape = make_low_rank_multilabel(n_samples=100, n_features=8, n_labels=5, rank=2,
                                     seed=3).train.Y.shape
    for _, c in frame.drop_duplicates("cell_id").iterrows():
        rows = labelled_rows(100, 0.4, labelled_seed(6, "synthetic", c["repetition"]))
        m = MaskSampler(shape, mask_seed(6, "synthetic", c["repetition"])).mask(0.5)[rows]
        expected = fingerprint(np.asarray(m.shape), m.indptr, m.indices) + "-" + \
            fingerprint(rows)
        assert c["mask_fingerprint"] == expected
