"""``auto`` hyper-parameters: GCV paths, the hold-out walk, what is recorded, and the scaling
of scale-sensitive methods."""

import json
import textwrap

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp

from mlx.config import load_config
from mlx.methods import _auto
from mlx.methods.bcs import BCS
from mlx.methods.br import BR
from mlx.methods.cplst import CPLST
from mlx.methods.landmark import Landmark
from mlx.methods.leml import LEML
from mlx.methods.lsvv import LSVV
from mlx.methods.wsabie import WSABIE
from mlx.numerics.regpath import RidgePath, path_grid
from mlx.runner.experiment import run_experiment


def _data(seed=0, n=120, d=8, L=5):
    rng = np.random.default_rng(seed)
    X = sp.csr_matrix(rng.random((n, d)))
    W = rng.standard_normal((d, L))
    Y = sp.csr_matrix((X @ W + 0.5 * rng.standard_normal((n, L)) > 0.5).astype(float))
    return X, Y


def _slow_gcv_choice(X, T, grid):
    """argmin over grid of RSS / (1 - tr(H)/n)^2, with the explicit hat matrix."""
    X = X.toarray() if sp.issparse(X) else np.asarray(X)
    T = T.toarray() if sp.issparse(T) else np.asarray(T)
    n, d = X.shape
    best = None
    for lam in grid:
        H = X @ np.linalg.solve(X.T @ X + lam * np.eye(d), X.T)
        R = T - H @ T
        v = np.sum(R * R) / (1 - np.trace(H) / n) ** 2
        if best is None or v < best[0]:
            best = (v, lam)
    return best[1]


# ----------------------------------------------------------------------------- GCV methods
def test_cplst_and_br_squared_take_the_gcv_penalty_and_equal_a_fit_at_it():
    X, Y = _data()
    n = X.shape[0]
    Yc = Y.toarray() - Y.toarray().mean(axis=0)
    grid = path_grid(np.linalg.eigvalsh((X.T @ X).toarray()).max())
    cp = CPLST(rank=3).fit(X, Y)
    assert cp.auto_["l2_reg"].procedure == "gcv"
    lam = cp.auto_["l2_reg"].value
    assert lam == pytest.approx(_slow_gcv_choice(X, Yc, grid), rel=1e-9)
    fixed = CPLST(rank=3, l2_reg=lam).fit(X, Y)
    np.testing.assert_allclose(cp.decision_function(X), fixed.decision_function(X), atol=1e-8)

    br = BR(loss="squared").fit(X, Y)
    lam = br.auto_["l2_reg"].value
    assert lam == pytest.approx(_slow_gcv_choice(X, Y, grid), rel=1e-9)
    np.testing.assert_allclose(br.W_, BR(loss="squared", l2_reg=lam).fit(X, Y).W_, atol=1e-8)
    assert n > 0


def test_leml_walks_a_holdout_and_bcs_divides_the_gcv_penalty_by_tau2():
    X, Y = _data(1)
    leml = LEML(rank=3, random_state=0).fit(X, Y)
    choice = leml.auto_["l2_reg"]
    assert choice.procedure == "holdout" and choice.value in choice.grid
    same = LEML(rank=3, l2_reg=choice.value, random_state=0).fit(X, Y)
    np.testing.assert_allclose(leml.W_, same.W_, atol=1e-10)

    bcs = BCS(rank=3, random_state=0).fit(X, Y)
    tau2 = 0.3 ** 2 + 0.3 ** 2
    path = RidgePath(X, Y @ bcs.Phi_.T)
    assert bcs.auto_["weight_precision"].value == pytest.approx(path.choose().value / tau2)


# ----------------------------------------------------------------------------- hold-out walk
@pytest.mark.parametrize("peak, tried", [(2, [0, -1, 1, 2, 3]), (-1, [0, -1, -2]),
                                         (0, [0, -1, 1])])
def test_the_walk_goes_towards_the_better_neighbour_and_stops(monkeypatch, peak, tried):
    seen = []

    def score(method, X, Y, task):          # unimodal in log10(C), best at 10**peak
        e = round(np.log10(method.C))
        seen.append(e)
        return -abs(e - peak)

    monkeypatch.setattr(_auto, "validation_score", score)
    X, Y = _data(2)
    m = BR().fit(X, Y)
    assert m.auto_["C"].value == 10.0 ** peak
    assert m.auto_["C"].procedure == "holdout" and not m.auto_["C"].edge
    assert seen == tried                    # each value scored once, the final fit not scored
    np.testing.assert_array_equal(m.W_, BR(C=10.0 ** peak).fit(X, Y).W_)


def test_an_end_of_the_grid_is_flagged_in_the_note(monkeypatch):
    monkeypatch.setattr(_auto, "validation_score", lambda m, X, Y, task: m.C)
    X, Y = _data(3)
    choice = BR().fit(X, Y).auto_["C"]
    assert choice.value == 1e4 and choice.edge
    assert choice.note() == ("C=auto chose 10000, the largest value at the end of its auto "
                             "path (holdout, 0.0001..10000); set C or select it over a wider "
                             "list")


def test_the_split_is_seeded_and_a_deterministic_method_stays_deterministic():
    X, Y = _data(4)
    a, b = BR().fit(X, Y), BR().fit(X, Y)
    np.testing.assert_array_equal(a.W_, b.W_)
    assert a.auto_["C"].value == b.auto_["C"].value
    np.testing.assert_array_equal(a.auto_["C"].scores, b.auto_["C"].scores)


def test_too_few_rows_for_a_holdout_use_the_grid_middle_and_say_so():
    rng = np.random.default_rng(5)
    X, y = rng.random((5, 3)), rng.random((5, 1))      # 4 fit rows < 5 landmarks
    m = Landmark(n_landmarks=5, random_state=0).fit(X, y)
    choice = m.auto_["C"]
    assert choice.value == 1e3 and choice.procedure.startswith("unvalidated")
    assert choice.note().startswith("C=auto: 1000, unvalidated (the middle of 0.1..1e+07)")


# ----------------------------------------------------------------------------- tasks, scaling
def test_br_on_regression_picks_the_squared_loss():
    X, _ = _data(6)
    t = np.asarray(X @ np.arange(1.0, 9.0))[:, None]
    m = BR(task="regression")
    assert m.skip(_context("regression")) is None and m.threshold == 0.5
    m.fit(X, t)
    assert m.auto_["l2_reg"].procedure == "gcv"
    assert "does not handle regression" in BR(loss="logistic").skip(_context("regression"))


def _context(task):
    from mlx.methods.base import FitContext
    return FitContext(task=task, n_samples=10, n_features=3, n_labels=1)


@pytest.mark.parametrize("cls, params", [(WSABIE, {"learning_rate": 1e-3, "rank": 3}),
                                         (LSVV, {"tau_A": 1e-6, "epochs": 2})])
def test_unscaled_features_are_scaled_by_their_largest_value_and_the_note_says_so(cls, params):
    X, Y = _data(7)
    big = sp.csr_matrix(X.multiply(np.array([1.0, 300, 2, 5, 1, 1, 40, 1])))
    top = np.asarray(big.max(axis=0).todense()).ravel()
    scaled = sp.csr_matrix(big.multiply(1.0 / top))
    auto = cls(**params, random_state=0).fit(big, Y)
    plain = cls(**params, scale_features="none", random_state=0).fit(scaled, Y)
    np.testing.assert_allclose(auto.decision_function(big), plain.decision_function(scaled),
                               rtol=1e-9, atol=1e-12)
    assert auto.message_.startswith(f"{cls.__name__}: features scaled by their largest "
                                    f"absolute training value (largest {top.max():.4g};")
    # features already in [-1, 1] are left exactly as they are
    same = cls(**params, random_state=0).fit(X, Y)
    np.testing.assert_array_equal(
        same.decision_function(X),
        cls(**params, scale_features="none", random_state=0).fit(X, Y).decision_function(X))
    assert "features scaled" not in same.message_


def test_landmark_sigmoid_on_unscaled_features_names_the_fix():
    rng = np.random.default_rng(8)
    X, y = 50 * rng.random((40, 3)), rng.random((40, 1))
    m = Landmark(similarity="sigmoid", n_landmarks=5, C=10.0, random_state=0).fit(X, y)
    assert m.message_ == ("Landmark: the sigmoid similarity assumes features in [-1, 1] "
                          f"(largest |x| here {X.max():.4g}; its values saturate); add "
                          "preprocess: [minmax]")
    assert Landmark(n_landmarks=5, C=10.0, random_state=0).fit(X, y).message_ == ""


# ----------------------------------------------------------------------------- runner
CONFIG = """
name: t
dataset: {synthetic: {n_samples: 160, n_features: 12, n_labels: 6, rank: 2, seed: 5, n_test: 80}}
methods:
  - name: constant
  - {name: cplst, label: AUTO}
  - {name: cplst, label: FIXED, params: {l2_reg: 0.5}}
metrics: [p@1, auc]
"""


def test_the_auto_choice_is_recorded_like_a_selection(tmp_path):
    p = tmp_path / "c.yaml"
    p.write_text(textwrap.dedent(CONFIG))
    s = run_experiment(load_config(p), jobs=1, output=str(tmp_path / "o"), quiet=True,
                       progress=False)
    frame = pd.read_csv(s.output / "results.csv")
    auto = frame[frame["label"] == "AUTO"]
    chosen = json.loads(auto["selected"].iloc[0])
    assert set(chosen) == {"l2_reg", "prior_weight", "decision_shift"} and chosen["l2_reg"] > 0
    assert frame.loc[frame["label"] == "FIXED", "selected"].isna().all()
    row = next(line for line in s.table_md.splitlines() if line.startswith("| AUTO |"))
    assert f"l2_reg={chosen['l2_reg']:g}" in row


def test_an_auto_value_at_the_end_of_its_path_is_flagged_in_the_table(tmp_path, monkeypatch):
    from mlx.runner import results

    frame = pd.DataFrame({"cell_id": ["a"], "selected": ['{"C": 0.0001}'],
                          "message": [_auto.AutoChoice("C", 1e-4, "holdout", (1e-4, 1.0, 1e4),
                                                       (1.0, 0.0, 0.0)).note()]})
    text, edge = results._selection(frame, pd.DataFrame({"cell_id": [], "candidate": []}))
    assert edge and text == "C=0.0001 †"


# ----------------------------------------------------------------------------- the constant
def _noise(seed=3, n=200, d=6, L=6, freq=(0.6, 0.3, 0.15, 0.08, 0.04, 0.02)):
    """Features unrelated to labels of very different frequencies (0.6 .. 0.02)."""
    rng = np.random.default_rng(seed)
    X = sp.csr_matrix(rng.random((n, d)))
    freq = np.asarray(freq)[:L]
    Y = sp.csr_matrix((rng.random((n, L)) < freq).astype(float))
    return X, Y


def test_log_prior_is_the_constants_order_with_a_never_observed_label_lowest():
    Y = sp.csr_matrix(np.array([[1, 0, 1, 0], [1, 0, 0, 0], [0, 1, 1, 0], [1, 0, 0, 0.]]))
    observed = sp.csr_matrix(np.array([[1, 1, 1, 0], [1, 1, 1, 0], [0, 1, 1, 0],
                                       [1, 0, 1, 0.]]))
    for obs in (None, observed):
        got = _auto.log_prior(Y, obs)
        n = 4
        Yd, Od = Y.toarray(), np.ones((4, 4)) if obs is None else obs.toarray()
        for j in range(4):
            seen = Od[:, j].sum()
            p = (Yd[:, j] * Od[:, j]).sum() / seen if seen else 0.0
            assert got[j] == pytest.approx(np.log((n * p + 1) / (n + 2)), rel=1e-12)
    assert np.all(_auto.log_prior(Y) < 0)
    const = np.array([3, 1, 2, 0]) / 4
    assert (np.argsort(_auto.log_prior(Y), kind="stable")
            == np.argsort(const, kind="stable")).all()


def test_right_more_often_counts_true_and_false_positives():
    S = np.array([[0.9, 0.8, 0.1], [0.7, 0.2, 0.6], [0.9, 0.9, 0.9]])
    Y = sp.csr_matrix(np.array([[1, 0, 0], [1, 0, 1], [1, 1, 0.]]))
    rng = np.random.default_rng(0)
    for t in (0.0, 0.5, 0.85, 0.95):
        pred = S > t
        tp, fp = int((pred & (Y.toarray() > 0)).sum()), int((pred & (Y.toarray() == 0)).sum())
        want = tp + fp == 0 or tp - fp >= 1.645 * np.sqrt(tp + fp)
        assert _auto._right_more_often(S, Y, t) == want
    big = rng.random((400, 5))
    Yb = sp.csr_matrix((big > 0.3).astype(float))       # 70% of the predictions right
    assert _auto._right_more_often(big, Yb, 0.0)
    assert not _auto._right_more_often(big, sp.csr_matrix((big > 0.7).astype(float)), 0.0)


def _hamming(scores, Y, threshold):
    return float(((scores > threshold) != (Y.toarray() > 0)).mean())


@pytest.mark.parametrize("make", [lambda: LEML(rank=3, random_state=0),
                                  lambda: BR(random_state=0)])
def test_on_noise_the_model_falls_back_to_the_constant(make):
    """Labels rarer than 1/2 and 30 features unrelated to them: any label predicted is more
    likely wrong than right and the frequencies rank best, so the constant does best; the
    fitted model alone loses to it on new rows, the fallback does not."""
    freq = (0.45, 0.4, 0.35, 0.3, 0.25, 0.2)
    X, Y = _noise(n=150, d=30, freq=freq)
    X2, Y2 = _noise(seed=11, n=2000, d=30, freq=freq)
    m = make().fit(X, Y)
    t = m.threshold
    const = _hamming(np.zeros(Y2.shape), Y2, 0.5)
    assert _hamming(m._decision_function(X2), Y2, t) > const + 0.005   # the model alone
    assert _hamming(m.decision_function(X2), Y2, t) <= const
    assert m.auto_[_auto.PRIOR].value == "constant"
    assert "fell back to the constant predictor" in m.auto_[_auto.PRIOR].note()
    np.testing.assert_array_equal(m.decision_function(X2),
                                  np.tile(_auto.log_prior(Y), (X2.shape[0], 1)))


def test_a_learnable_model_keeps_its_own_scores():
    X, Y = _data(seed=4, n=300)
    for m in (LEML(rank=3, random_state=0).fit(X, Y), BR(random_state=0).fit(X, Y),
              BR(loss="squared").fit(X, Y), CPLST(rank=3).fit(X, Y)):
        assert m.auto_[_auto.PRIOR].value == 0.0
        assert m.auto_[_auto.PRIOR].note() == ""
        np.testing.assert_array_equal(m.decision_function(X), m._decision_function(X))


def test_an_explicit_value_adds_no_frequencies():
    X, Y = _noise()
    for m in (LEML(rank=3, l2_reg=1.0, random_state=0), CPLST(rank=3, l2_reg=1.0),
              BR(C=1.0), BCS(rank=3, weight_precision=1.0, random_state=0)):
        m.fit(X, Y)
        assert _auto.PRIOR not in m.auto_
        np.testing.assert_array_equal(m.decision_function(X), m._decision_function(X))


class _Fixed:
    """A fitted stand-in whose scores are given."""

    threshold = 0.5

    def __init__(self, scores):
        self.scores = scores

    def _decision_function(self, X):
        return self.scores[np.asarray(X).ravel().astype(int)]


def test_the_smallest_weight_that_does_not_lose_is_chosen():
    """Against a slow search that scores every weight with the metrics functions (P@k no
    lower than the constant's, AUC higher by a one-sided 5% test on the rows); the decision
    shift against one over every cut of the scores."""
    from mlx.metrics import evaluate
    from mlx.metrics.functions import instance_auc

    rng = np.random.default_rng(5)
    n, L = 400, 5
    freq = np.array([0.5, 0.3, 0.2, 0.1, 0.05])
    Y = sp.csr_matrix((rng.random((n, L)) < freq).astype(float))
    X = np.arange(n, dtype=float)[:, None]                 # row ids: _Fixed looks them up
    fit, val = _auto.holdout_split(_Fixed(None), n)
    for noise in (0.05, 0.6, 3.0):                         # a good, a middling, a bad model
        S = Y.toarray() * 0.8 + noise * rng.standard_normal((n, L))
        m = _Fixed(S)
        m.auto_ = {}
        _auto.choose_prior_weight(m, _Fixed(S), X, Y, None, "multilabel", (fit, val))
        prior = _auto.log_prior(Y[fit])
        F = S[val]
        sd = F.std()
        metrics = ["p@1", "p@3", "p@5", "auc"]

        def res(scores):
            return {k: v for k, (v, _) in evaluate(lambda B: scores, F, Y[val], metrics,
                                                  batch_size=len(val)).items()}
        const = res(np.tile(prior, (len(val), 1)))
        const_auc = instance_auc(Y[val], np.tile(prior, (len(val), 1)))
        want = float("inf")
        for w in _auto.PRIOR_WEIGHTS[:-1]:
            r = res(F + w * sd * prior)
            d = instance_auc(Y[val], F + w * sd * prior) - const_auc      # AUC: a paired
            d = d[~np.isnan(d)]                                           # one-sided test
            if all(r[k] >= const[k] - 1e-12 for k in metrics if k != "auc") \
                    and d.sum() >= 1.645 * np.sqrt(np.sum(d * d)) - 1e-12:
                want = w
                break
        if want != float("inf"):         # the shift, against a slow search over every cut
            S2 = F + want * sd * prior
            truth = Y[val].toarray() > 0
            shift = m.auto_[_auto.SHIFT].value * sd
            if _auto._right_more_often(S2, Y[val], 0.5):
                assert shift == 0.0
            else:       # the cut of fewest errors on the even rows, tested on the odd rows
                even = S2[0::2]
                cuts = np.unique(even[even > 0.5])            # predict above each cut
                errors = [int(((even > c) != truth[0::2]).sum()) for c in cuts]
                # fewest errors; among equals the fewest labels (the highest cut)
                fewest = min(errors)
                best = max(c for c, e in zip(cuts, errors) if e == fewest)
                kept = S2[1::2] > best
                n_pred = int(kept.sum())
                if n_pred and 2 * int((kept & truth[1::2]).sum()) - n_pred >= 1.645 * np.sqrt(
                        n_pred):
                    assert shift == pytest.approx(best - 0.5, abs=1e-12)
                else:
                    assert shift == pytest.approx(_nothing(S2, 0.5), abs=1e-12)
        assert m.auto_[_auto.PRIOR].value == ("constant" if want == float("inf") else want), noise


def test_a_model_worse_than_the_frequencies_becomes_the_constant():
    rng = np.random.default_rng(6)
    n, L = 300, 4
    Y = sp.csr_matrix((rng.random((n, L)) < np.array([0.6, 0.3, 0.1, 0.05])).astype(float))
    X = np.arange(n, dtype=float)[:, None]
    S = 1.0 - Y.toarray() + 0.1 * rng.standard_normal((n, L))   # ranks the positives last
    m = _Fixed(S)
    m.auto_ = {}
    split = _auto.holdout_split(m, n)
    _auto.choose_prior_weight(m, _Fixed(S), X, Y, None, "multilabel", split)
    choice = m.auto_[_auto.PRIOR]
    assert choice.value == "constant"
    assert choice.note() == ("auto fell back to the constant predictor (the label frequencies): "
                             "on the held-out training rows the fitted model did worse than "
                             "them on some default metric at every weight of the label "
                             "frequencies tried")
    np.testing.assert_array_equal(m.prior_offset_[1], _auto.log_prior(Y))
    assert m.prior_offset_[0] == 0.0
    # a fitted method applies it: its scores are then the frequencies alone
    X2, Y2 = _noise()
    leml = LEML(rank=3, random_state=0).fit(X2, Y2)
    leml.auto_ = {**leml.auto_, _auto.PRIOR: choice}
    leml.prior_offset_ = (0.0, _auto.log_prior(Y2))
    np.testing.assert_array_equal(leml.decision_function(X2),
                                  np.tile(_auto.log_prior(Y2), (X2.shape[0], 1)))
    assert not leml.predict(X2).any()                      # nothing predicted, as the constant
    # and not for another task
    m2 = _Fixed(S)
    m2.auto_ = {}
    _auto.choose_prior_weight(m2, _Fixed(S), X, Y, None, "regression", split)
    assert m2.auto_ == {}


def _nothing(S, threshold):
    """The shift that predicts nothing: above the largest score by the range and the sd."""
    return S.max() - threshold + (S.max() - S.min()) + S.std()


def test_the_decision_shift_cuts_at_the_fewest_errors_of_the_even_rows_tested_on_the_odd():
    rng = np.random.default_rng(9)
    n, L = 300, 4
    S = rng.random((n, L))
    truth = rng.random((n, L)) < S ** 3                 # confident scores are right more often
    Y = sp.csr_matrix(truth.astype(float))
    shift = _auto._decision_shift(S, Y, 0.2)
    assert shift > 0
    assert _auto._right_more_often(S[1::2] - shift, Y[1::2], 0.2)
    # a slow search on the even rows: the cut of fewest errors (the highest among equals)
    cuts = np.unique(S[0::2][S[0::2] > 0.2])
    errors = [int(((S[0::2] > c) != truth[0::2]).sum()) for c in cuts]
    slow = max(c for c, e in zip(cuts, errors) if e == min(errors)) - 0.2
    assert shift == pytest.approx(slow, abs=0)
    # the same cut, failing the test on the odd rows: nothing is predicted
    odd_wrong = truth.copy()
    odd_wrong[1::2] = ~truth[1::2] & (S[1::2] > 0.2)
    assert _auto._decision_shift(S, sp.csr_matrix(odd_wrong.astype(float)), 0.2) \
        == _nothing(S, 0.2)
    assert _auto._decision_shift(S, sp.csr_matrix((S > 0.2).astype(float)), 0.2) == 0.0
    assert _auto._decision_shift(S, sp.csr_matrix((n, L)), 0.2) == _nothing(S, 0.2)
    # a cut that no score of the odd rows reaches is not tested: nothing is predicted
    S3 = np.tile([[0.9, 0.5], [0.3, 0.3]], (20, 1))      # even rows, odd rows
    Y3 = sp.csr_matrix(np.tile([[1.0, 0.0], [0.0, 0.0]], (20, 1)))
    assert _auto._decision_shift(S3, Y3, 0.0) == _nothing(S3, 0.0)
    # labels right about half the time: the best cut is not significant, nothing is predicted
    half = sp.csr_matrix((rng.random((n, L)) < 0.5).astype(float))
    assert _auto._decision_shift(S, half, 0.2) == _nothing(S, 0.2)
    # a common shift moves no row's ranking
    np.testing.assert_array_equal(np.argsort(S - shift, axis=1), np.argsort(S, axis=1))


def test_a_multiclass_fit_adds_no_frequencies():
    X, Y = _data(seed=4, n=200)
    Y = sp.csr_matrix(np.eye(5)[np.asarray(Y.sum(axis=1)).ravel().astype(int) % 5])
    for m in (BR(task="multiclass", random_state=0), LSVV(task="multiclass", random_state=0)):
        m.fit(X, Y)
        assert _auto.PRIOR not in m.auto_ and _auto.SHIFT not in m.auto_
        np.testing.assert_array_equal(m.decision_function(X), m._decision_function(X))
