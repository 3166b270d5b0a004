"""The runner's promises, checked through what a user sees: results.csv and the cell cache.

Each test pins one promise of the README that a one-line change in ``mlx/runner/`` could
break without any method or metric test noticing:

* ``select`` picks the candidate with the best validation score, fitted without the
  validation rows, and the final model uses it;
* every method sees the same observed entries;
* ``methods[].threshold`` and ``evaluation.auc_degenerate`` reach the metrics;
* a finished ``diverged`` cell is kept on resume;
* ``--jobs`` does not change any number, also for seeded methods on data where BLAS threads.
"""

import json
import textwrap

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp

from mlx.config import load_config
from mlx.methods import METHODS
from mlx.methods.base import BaseMethod, Interval
from mlx.runner.experiment import run_experiment
from mlx.runner.results import TIMING_COLUMNS

TIMING = list(TIMING_COLUMNS)


def run(tmp_path, text, name="o", jobs=1, **kw):
    cfg_path = tmp_path / f"{name}.yaml"
    cfg_path.write_text(textwrap.dedent(text))
    summary = run_experiment(load_config(cfg_path), jobs=jobs, output=str(tmp_path / name),
                             quiet=True, progress=False, **kw)
    return summary, pd.read_csv(summary.output / "results.csv",
                                dtype={"selected": str, "candidate": str, "message": str})


SYNTH = "synthetic: {n_samples: 160, n_features: 12, n_labels: 6, rank: 2, seed: 5, n_test: 80}"


# ----------------------------------------------------------------------------- selection
SELECT_TEMPLATE = """
name: sel
seed: 1
dataset:
  {synth}
preprocess: [l2_normalize, bias]
methods:
  - name: br
    label: SQ
    params: {params}
    select: {select}
sweep:
  observed_ratio: [1.0, 0.5]
  repetitions: 2
metrics: [p@1, auc]
selection: {{metric: auc}}
"""
SELECT_CONFIG = SELECT_TEMPLATE.format(synth=SYNTH, params="{loss: squared}",
                                       select="{l2_reg: [100000.0, 0.01, 1.0]}")


def test_every_select_candidate_has_a_validation_row_and_the_best_is_chosen(tmp_path):
    _, frame = run(tmp_path, SELECT_CONFIG)
    cells = frame.drop_duplicates("cell_id")
    assert len(cells) == 4 and (cells["status"] == "ok").all()
    val = frame[frame["split"] == "validation"]
    assert set(val["metric"]) == {"auc"}
    assert val["validation_fingerprint"].nunique() == 2          # one split per repetition
    for cell_id, rows in val.groupby("cell_id"):
        cands = [json.loads(c)["l2_reg"] for c in rows["candidate"]]
        assert cands == [100000.0, 0.01, 1.0]                      # config order, one row each
        assert rows["n_eval"].gt(0).all()
        scores = rows["value"].to_numpy(float)
        assert scores[0] < scores.max(), "the first candidate must lose for this test to bite"
        best = cands[int(np.argmax(scores))]          # the first of ties, in config order
        chosen = {json.loads(s)["l2_reg"] for s in frame.loc[frame["cell_id"] == cell_id,
                                                             "selected"]}
        assert chosen == {best}
    # validation rows never leak into the test table
    assert "validation" not in (tmp_path / "o" / "table.md").read_text()
    # a single hold-out split records no per-fold scores in the cell cache
    for path in (tmp_path / "o" / "cells").glob("*.json"):
        assert all("folds" not in t for t in json.loads(path.read_text())["trials"])


def test_the_final_model_uses_the_selected_value(tmp_path):
    _, frame = run(tmp_path, SELECT_CONFIG, name="sel")
    test = frame[frame["split"] == "test"]
    assert len(test) == 8
    for (obs, rep), rows in test.groupby(["observed_ratio", "repetition"]):
        l2 = json.loads(rows["selected"].iloc[0])["l2_reg"]
        fixed = SELECT_TEMPLATE.format(synth=SYNTH, params=f"{{loss: squared, l2_reg: {l2!r}}}",
                                       select="{}")
        _, ref = run(tmp_path, fixed, name=f"fixed-{obs}-{rep}")
        ref = ref[(ref["split"] == "test") & (ref["observed_ratio"] == obs)
                  & (ref["repetition"] == rep)]
        assert json.loads(ref["params"].iloc[0])["l2_reg"] == l2
        assert rows.set_index("metric")["value"].to_dict() == \
            ref.set_index("metric")["value"].to_dict()


@pytest.fixture
def memorizer():
    """A method that remembers its training rows exactly and knows nothing else.

    On a row it was fitted on it scores that row's labels; on any other row it scores 0
    everywhere, so the top-1 label is label 0 (ties go to the lower index). With label 0 never
    positive, p@1 is 1 on rows seen in fit and 0 on unseen rows: a validation score above 0
    means the selection fit saw validation rows.
    """

    class Memorizer(BaseMethod):
        _parameter_constraints = {"scale": [Interval(float, 0, None, closed="neither")]}

        def __init__(self, *, scale=1.0):
            self.scale = scale

        def fit(self, X, Y, *, observed=None):
            self._validate_params()
            X, Y = sp.csr_matrix(X), sp.csr_matrix(Y)
            self.memory_ = {X[i].toarray().tobytes(): Y[i].toarray().ravel()
                            for i in range(X.shape[0])}
            self.n_labels_ = Y.shape[1]
            return self

        def decision_function(self, X):
            X = sp.csr_matrix(X)
            out = np.zeros((X.shape[0], self.n_labels_))
            for i in range(X.shape[0]):
                row = self.memory_.get(X[i].toarray().tobytes())
                if row is not None:
                    out[i] = self.scale * row
            return out

    METHODS.register("memorizer")(Memorizer)
    try:
        yield Memorizer
    finally:
        METHODS._items.pop("memorizer")


def write_libsvm(path, X, Y):
    lines = []
    for x, y in zip(X, Y):
        labels = ",".join(str(j) for j in np.flatnonzero(y))
        feats = " ".join(f"{j + 1}:{v:.6f}" for j, v in enumerate(x) if v != 0)
        lines.append(f"{labels} {feats}".strip() if labels else f" {feats}")
    path.write_text("\n".join(lines) + "\n")


def test_selection_fit_never_sees_the_validation_rows(tmp_path, memorizer):
    rng = np.random.default_rng(0)
    n, d, L = 120, 8, 5
    X = rng.random((n, d)) + 0.01                 # distinct rows, no zeros
    Y = rng.random((n, L)) < 0.4
    Y[:, 0] = False                               # label 0 is never positive
    Y[np.arange(n), 1 + rng.integers(L - 1, size=n)] = True   # every row has a label
    write_libsvm(tmp_path / "train.txt", X[:90], Y[:90])
    write_libsvm(tmp_path / "test.txt", X[90:], Y[90:])
    _, frame = run(tmp_path, f"""
        name: leak
        dataset: {{format: libsvm-multilabel, train: {tmp_path}/train.txt,
                   test: {tmp_path}/test.txt, n_labels: {L}, name: leak}}
        methods:
          - name: memorizer
            select: {{scale: [1.0, 2.0]}}
        metrics: [p@1]
        evaluation: {{splits: [test, train]}}
        """)
    assert set(frame["status"]) == {"ok"}
    by_split = frame.groupby("split")["value"]
    assert by_split.min()["train"] == by_split.max()["train"] == 1.0  # it does memorise
    assert by_split.max()["test"] == 0.0
    val = frame[frame["split"] == "validation"]
    assert len(val) == 2 and (val["value"] == 0.0).all(), "selection saw validation rows"
    assert (val["n_eval"] == 18).all()                               # 20% of 90 rows


# ----------------------------------------------------------------------------- masks
def test_every_method_sees_the_same_observed_entries(tmp_path):
    _, frame = run(tmp_path, f"""
        name: masks
        seed: 2
        dataset:
          {SYNTH}
        methods:
          - name: br
            label: A
            params: {{loss: squared, l2_reg: 1.0}}
          - name: br
            label: B-same-model
            params: {{loss: squared, l2_reg: 1.0}}
          - name: leml
            label: LEML
            params: {{loss: squared, max_iter: 2}}
        sweep:
          rank_ratio: [0.5]
          observed_ratio: [1.0, 0.5, 0.2]
          repetitions: 2
        metrics: [p@1, auc, hamming]
        """)
    assert set(frame["status"]) == {"ok"}
    cells = frame.drop_duplicates("cell_id")
    fps = cells.groupby(["observed_ratio", "repetition"])["mask_fingerprint"].nunique()
    assert (fps == 1).all(), "methods saw different observed entries"
    per_setting = cells.groupby(["label"]).apply(
        lambda g: g["mask_fingerprint"].nunique(), include_groups=False)
    assert (per_setting == 5).all()          # 'all' once, then one mask per (ratio, repetition)
    assert set(cells.loc[cells["observed_ratio"] == 1.0, "mask_fingerprint"]) == {"all"}
    assert set(cells["split_fingerprint"]) == {"official"}
    # the mask is the documented draw: MaskSampler seeded by (seed, dataset, repetition)
    from mlx.data.synthetic import make_low_rank_multilabel
    from mlx.masks import MaskSampler
    from mlx.runner.protocol import fingerprint
    from mlx.seeding import mask_seed

    shape = make_low_rank_multilabel(n_samples=160, n_features=12, n_labels=6, rank=2,
                                     seed=5, n_test=80).train.Y.shape
    for _, c in cells[cells["observed_ratio"] < 1].iterrows():
        m = MaskSampler(shape, mask_seed(2, "synthetic", c["repetition"])).mask(
            c["observed_ratio"])
        assert c["mask_fingerprint"] == fingerprint(np.asarray(m.shape), m.indptr, m.indices)
    # two entries with the same model and different labels give the same numbers
    key = ["observed_ratio", "repetition", "split", "metric"]
    a = frame[frame["label"] == "A"].set_index(key)["value"]
    b = frame[frame["label"] == "B-same-model"].set_index(key)["value"]
    pd.testing.assert_series_equal(a, b, check_names=False)


# ----------------------------------------------------------------------------- evaluation keys
def test_method_threshold_reaches_hamming_and_f1(tmp_path):
    from mlx.data.synthetic import make_low_rank_multilabel

    split = make_low_rank_multilabel(n_samples=160, n_features=12, n_labels=6, rank=2, seed=5,
                                     n_test=80)
    density = split.test.Y.nnz / np.prod(split.test.Y.shape)
    _, frame = run(tmp_path, f"""
        name: thr
        dataset:
          {SYNTH}
        methods:
          - name: br
            label: default
            params: {{loss: squared}}
          - name: br
            label: never
            params: {{loss: squared}}
            threshold: 1.0e+9
          - name: br
            label: always
            params: {{loss: squared}}
            threshold: -1.0e+9
        metrics: [hamming, micro_f1, p@1]
        """)
    v = frame.set_index(["label", "metric"])["value"]
    assert v["never", "hamming"] == pytest.approx(density)
    assert v["always", "hamming"] == pytest.approx(1 - density)
    assert v["never", "micro_f1"] == 0.0
    assert v["always", "micro_f1"] == pytest.approx(2 * density / (1 + density))
    assert 0 < v["default", "hamming"] < density
    assert v["never", "p@1"] == v["always", "p@1"] == v["default", "p@1"]  # ranking untouched


def test_auc_degenerate_convention_reaches_the_metric(tmp_path):
    rng = np.random.default_rng(1)
    n, d, L = 100, 6, 4
    X = rng.random((n, d)) + 0.01
    Y = rng.random((n, L)) < 0.4
    Y[70:80] = False                                  # test rows without any label
    Y[80:85] = True                                   # test rows with every label
    write_libsvm(tmp_path / "train.txt", X[:60], Y[:60])
    write_libsvm(tmp_path / "test.txt", X[60:], Y[60:])
    body = f"""
        dataset: {{format: libsvm-multilabel, train: {tmp_path}/train.txt,
                   test: {tmp_path}/test.txt, n_labels: {L}, name: deg}}
        methods:
          - name: br
            params: {{loss: squared}}
        metrics: [auc]
        """
    body = textwrap.dedent(body)
    _, skip = run(tmp_path, "name: s\nevaluation: {auc_degenerate: skip}\n" + body, name="s")
    _, zero = run(tmp_path, "name: z\nevaluation: {auc_degenerate: zero}\n" + body, name="z")
    Yt = Y[60:]
    n_ok = int(((Yt.sum(1) > 0) & (Yt.sum(1) < L)).sum())
    assert skip["n_eval"].iloc[0] == n_ok <= 25
    assert zero["n_eval"].iloc[0] == 40
    assert zero["value"].iloc[0] * 40 == pytest.approx(skip["value"].iloc[0] * n_ok)


# ----------------------------------------------------------------------------- resume
def test_a_diverged_cell_is_kept_on_resume(tmp_path, monkeypatch):
    from mlx.errors import DivergenceError
    from mlx.methods.br import BR

    text = f"""
        name: div
        dataset:
          {SYNTH}
        methods:
          - name: br
            params: {{loss: logistic}}
        sweep: {{repetitions: 2}}
        metrics: [p@1]
        """
    original = BR.fit

    def boom(self, X, Y, *, observed=None):
        raise DivergenceError("BR diverged; try a larger C")

    monkeypatch.setattr(BR, "fit", boom)
    first, frame = run(tmp_path, text, name="div")
    assert set(frame["status"]) == {"diverged"}
    cached = sorted(p.name for p in (tmp_path / "div" / "cells").glob("*.json"))
    assert len(cached) == 2
    monkeypatch.setattr(BR, "fit", original)   # the method would now succeed ...
    second, frame = run(tmp_path, text, name="div")
    assert second.n_reused == 2                # ... but a finished diverged cell is kept
    assert set(frame["status"]) == {"diverged"}
    assert (frame["message"] == "BR diverged; try a larger C").all()
    third, frame = run(tmp_path, text, name="div", force=True)
    assert third.n_reused == 0 and set(frame["status"]) == {"ok"}


# ----------------------------------------------------------------------------- determinism
SEEDED = """
name: det
seed: 7
dataset:
  synthetic: {n_samples: 1500, n_features: 300, n_labels: 60, rank: 5, seed: 3, n_test: 300,
              density: 0.3}
preprocess: [l2_normalize, bias]
methods:
  - name: leml
    label: LEML-SQ
    params: {loss: squared, max_iter: 4, w_solver: cg}
  - name: leml
    label: LEML-LR
    params: {loss: logistic, max_iter: 3}
  - name: leml
    label: LEML-SH
    params: {loss: squared_hinge, max_iter: 3}
  - name: wsabie
    label: WSABIE
    params: {epochs: 2}
  - name: bcs
    label: BCS
    params: {max_iter: 3}
sweep:
  rank_ratio: [0.4]
  observed_ratio: [1.0, 0.5]
metrics: [p@1, p@3, auc, hamming]
"""


def test_jobs_1_and_2_identical_for_seeded_methods_on_blas_sized_data(tmp_path):
    _, a = run(tmp_path, SEEDED, name="j1", jobs=1)
    _, b = run(tmp_path, SEEDED, name="j2", jobs=2)
    assert set(a["status"]) == {"ok"}, a.loc[a["status"] != "ok", "message"].tolist()
    pd.testing.assert_frame_equal(a.drop(columns=TIMING), b.drop(columns=TIMING))


def test_a_lower_is_better_selection_metric_picks_the_smallest(tmp_path):
    text = SELECT_TEMPLATE.format(synth=SYNTH, params="{loss: squared}",
                                  select="{l2_reg: [100000.0, 0.01, 1.0]}").replace(
        "selection: {metric: auc}", "selection: {metric: hamming}").replace(
        "metrics: [p@1, auc]", "metrics: [hamming, auc]")
    _, frame = run(tmp_path, text)
    assert set(frame["status"]) == {"ok"}
    val = frame[frame["split"] == "validation"]
    assert set(val["metric"]) == {"hamming"} and len(val) == 4 * 3
    for cell_id, rows in val.groupby("cell_id"):
        scores = rows["value"].to_numpy(float)
        cands = [json.loads(c)["l2_reg"] for c in rows["candidate"]]
        assert scores.min() < scores.max(), "the candidates should differ on this data"
        best = cands[int(np.argmin(scores))]
        chosen = json.loads(frame.loc[frame["cell_id"] == cell_id, "selected"].iloc[0])
        assert chosen["l2_reg"] == best


def test_selected_preprocessing_is_the_one_fitted(tmp_path):
    steps = "[[], [l2_normalize, bias]]"
    # hamming, not auc: scaling a row does not change its label ranking
    hamming = {"selection: {metric: auc}": "selection: {metric: hamming}",
               "metrics: [p@1, auc]": "metrics: [hamming, auc]"}
    text = SELECT_TEMPLATE.format(synth=SYNTH, params="{loss: squared, l2_reg: 1.0}",
                                  select=f"{{preprocess: {steps}}}").replace(
        "preprocess: [l2_normalize, bias]\n", "preprocess: []\n")
    for old, new in hamming.items():
        text = text.replace(old, new)
    _, frame = run(tmp_path, text)
    assert set(frame["status"]) == {"ok"}, frame["message"].dropna().unique()
    val = frame[frame["split"] == "validation"]
    assert len(val) == 4 * 2 and (frame["split"] == "test").sum() == 4 * 2
    for cell_id, rows in val.groupby("cell_id"):
        cands = [json.loads(c)["preprocess"] for c in rows["candidate"]]
        assert cands == [[], ["l2_normalize", "bias"]]
        assert rows["value"].nunique() == 2, "the two preprocessings should score differently"
    test = frame[frame["split"] == "test"]
    for (obs, rep), rows in test.groupby(["observed_ratio", "repetition"]):
        chosen = json.loads(rows["selected"].iloc[0])["preprocess"]
        fixed = SELECT_TEMPLATE.format(synth=SYNTH, params="{loss: squared, l2_reg: 1.0}",
                                       select="{}").replace(
            "preprocess: [l2_normalize, bias]\n",
            f"preprocess: [{', '.join(chosen)}]\n")
        for old, new in hamming.items():
            fixed = fixed.replace(old, new)
        _, ref = run(tmp_path, fixed, name=f"pp-{obs}-{rep}")
        ref = ref[(ref["split"] == "test") & (ref["observed_ratio"] == obs)
                  & (ref["repetition"] == rep)]
        assert rows.set_index("metric")["value"].to_dict() == \
            ref.set_index("metric")["value"].to_dict()
        assert rows["preprocess"].iloc[0] == ref["preprocess"].iloc[0]


def test_selection_of_a_seeded_rank_method_is_reproducible(tmp_path):
    text = f"""
        name: seeded
        seed: 5
        dataset:
          {SYNTH}
        methods:
          - name: leml
            params: {{loss: squared, init: random, max_iter: 2, w_solver: cg}}
            select: {{l2_reg: [0.1, 1.0]}}
        sweep: {{rank_ratio: [0.5]}}
        metrics: [auc]
        selection: {{metric: auc}}
        """
    _, a = run(tmp_path, text, name="a")
    _, b = run(tmp_path, text, name="b")
    assert set(a["status"]) == {"ok"}
    assert (a["rank"] == 3).all()                     # k/L = 0.5 of 6 labels
    va = a[a["split"] == "validation"]["value"].to_numpy()
    vb = b[b["split"] == "validation"]["value"].to_numpy()
    assert len(va) == 2 and np.array_equal(va, vb)


def test_the_methods_threshold_also_applies_to_selection_scores(tmp_path):
    text = SELECT_TEMPLATE.format(synth=SYNTH, params="{loss: squared}",
                                  select="{l2_reg: [100000.0, 0.01, 1.0]}").replace(
        "selection: {metric: auc}", "selection: {metric: hamming}").replace(
        "metrics: [p@1, auc]", "metrics: [hamming]").replace(
        "    select: ", "    threshold: 1.0e+9\n    select: ")
    _, frame = run(tmp_path, text)
    assert set(frame["status"]) == {"ok"}
    val = frame[frame["split"] == "validation"]
    assert len(val) == 12
    for _, rows in val.groupby("cell_id"):                # nothing is ever predicted positive:
        assert rows["value"].nunique() == 1               # every candidate scores the density


def test_a_candidate_that_diverges_is_recorded_and_passed_over(tmp_path, monkeypatch):
    from mlx.errors import DivergenceError
    from mlx.methods.br import BR

    original = BR.fit

    def flaky(self, X, Y, *, observed=None):
        if self.l2_reg == 0.01:
            raise DivergenceError("diverged")
        return original(self, X, Y, observed=observed)

    monkeypatch.setattr(BR, "fit", flaky)
    _, frame = run(tmp_path, SELECT_CONFIG)
    assert set(frame["status"]) == {"ok"}
    val = frame[frame["split"] == "validation"]
    bad = val[val["candidate"] == '{"l2_reg": 0.01}']
    assert len(bad) == 4 and bad["value"].isna().all() and bad["n_eval"].isna().all()
    good = val[val["candidate"] != '{"l2_reg": 0.01}']
    assert good["value"].notna().all() and (good["n_eval"] > 0).all()
    chosen = {json.loads(s)["l2_reg"] for s in frame["selected"].dropna()}
    assert 0.01 not in chosen


def test_every_candidate_diverging_makes_the_cell_diverged_with_advice(tmp_path, monkeypatch):
    from mlx.errors import DivergenceError
    from mlx.methods.br import BR

    def boom(self, X, Y, *, observed=None):
        raise DivergenceError("diverged")

    monkeypatch.setattr(BR, "fit", boom)
    _, frame = run(tmp_path, SELECT_CONFIG)
    assert set(frame["status"]) == {"diverged"}
    assert set(frame["message"]) == {"every candidate of 'select' diverged on the validation "
                                     "split; widen the candidate lists (e.g. larger l2_reg)"}


def test_a_methods_fit_note_reaches_the_cell_message(tmp_path):
    """10% labelled rows of 8 classes: some class has no labelled example; LSVV runs, says
    so in the cell's message, and its error is finite."""
    text = """
    name: note
    seed: 0
    dataset:
      synthetic: {task: multiclass, n_samples: 60, n_test: 40, n_features: 6, n_classes: 8,
                  seed: 2}
    split: {test_fraction: 0.3, stratify: false, pool: true}
    sweep: {labelled_ratio: [0.1]}
    methods:
      - name: lsvv
        params: {epochs: 1, min_steps: 0}
    metrics: [error]
    """
    _, frame = run(tmp_path, text)
    test = frame[frame["split"] == "test"]
    assert set(test["status"]) == {"ok"}
    message = test["message"].iloc[0]
    assert "classes have no labelled (observed) positive example" in message, message
    assert np.isfinite(test["value"]).all()
