"""``auto``: the rest of what the older tests left open (found by mutation testing): the
grid, the recorded choices and their notes, the hold-out split's sizes, what the final fit
hands back, the observed-entry mask of the fallback, the spread and the decision shift's
edge cases. Properties, not chosen numbers: the search may change, these must hold."""

import numpy as np
import pytest
import scipy.sparse as sp

from mlx.methods import _auto
from mlx.methods._auto import AutoChoice
from mlx.methods.br import BR


def _data(seed=0, n=60, d=6, L=4):
    rng = np.random.default_rng(seed)
    X = sp.csr_matrix(rng.random((n, d)))
    Y = sp.csr_matrix((X @ rng.standard_normal((d, L)) > 0.3).astype(float))
    return X, Y


# ----------------------------------------------------------------------------- small pieces
def test_log_grid_is_a_decade_apart_around_its_centre():
    assert _auto.log_grid(1.0) == [10.0 ** j for j in range(-4, 5)]
    assert _auto.log_grid(2.0, 1) == [2.0 * 10.0 ** j for j in (-1, 0, 1)]
    assert _auto.log_grid(3, 0) == [3.0] and type(_auto.log_grid(3, 0)[0]) is float


def test_is_auto_only_for_the_exact_string():
    assert _auto.is_auto("auto")
    assert not any(_auto.is_auto(v) for v in ("AUTO", "Auto", " auto", None, 1.0, ["auto"]))


def test_the_edge_of_a_grid():
    grid = (0.1, 1.0, 10.0)
    assert AutoChoice("C", 0.1, "holdout", grid, ()).edge is True
    assert AutoChoice("C", 10.0, "holdout", grid, ()).edge is True
    assert AutoChoice("C", 1.0, "holdout", grid, ()).edge is False
    assert AutoChoice("C", 1.0, "holdout", (), ()).edge is False      # no grid: no edge
    assert AutoChoice("C", 1.0, "holdout", (1.0,), ()).edge is True


def test_notes_of_each_kind_of_choice():
    grid = (0.5, 5.0, 50.0)
    assert AutoChoice("l2_reg", 0.5, "gcv", grid, ()).note() == (
        "l2_reg=auto chose 0.5, the smallest value at the end of its auto path (gcv, 0.5..50); "
        "set l2_reg or select it over a wider list")
    assert AutoChoice("l2_reg", 5.0, "gcv", grid, ()).note() == ""
    # the fallback's two choices: only the constant itself is worth a note
    assert AutoChoice(_auto.SHIFT, 0.0, "holdout", (), ()).note() == ""
    assert AutoChoice(_auto.SHIFT, 1.0, "holdout", (0.0, 1.0), ()).note() == ""
    assert AutoChoice(_auto.PRIOR, 0.0, "holdout", _auto.PRIOR_WEIGHTS, ()).note() == ""
    assert AutoChoice(_auto.PRIOR, 4.0, "holdout", _auto.PRIOR_WEIGHTS, ()).note() == ""
    assert AutoChoice(_auto.PRIOR, "constant", "holdout", _auto.PRIOR_WEIGHTS,
                      ()).note().startswith("auto fell back to the constant predictor")
    assert AutoChoice("C", 5.0, "unvalidated (why)", grid, ()).note() == \
        "C=auto: 5, unvalidated (why)"


def test_record_adds_to_the_earlier_choices():
    class M:
        pass

    m = M()
    a, b, c = (AutoChoice(p, 1.0, "holdout", (), ()) for p in ("C", "prior_weight", "C"))
    _auto.record(m, a)                                   # no auto_ yet
    assert m.auto_ == {"C": a}
    _auto.record(m, b)
    assert m.auto_ == {"C": a, "prior_weight": b}
    _auto.record(m, c)                                   # the same parameter: replaced
    assert m.auto_ == {"C": c, "prior_weight": b} and list(m.auto_) == ["C", "prior_weight"]
    m.auto_ = None
    _auto.record(m, a)
    assert m.auto_ == {"C": a}


@pytest.mark.parametrize("n", [2, 3, 4, 7, 10, 47, 100])
def test_the_holdout_split_parts_the_rows(n):
    class M:
        random_state = None

    fit, val = _auto.holdout_split(M(), n)
    assert len(val) == int(round(0.2 * n)) and len(fit) == n - len(val)
    assert sorted(np.r_[fit, val].tolist()) == list(range(n))
    assert list(fit) == sorted(fit) and list(val) == sorted(val)


def test_too_few_rows_for_either_part_is_an_error_and_three_are_enough():
    X, Y = _data(n=3)
    for n in (1, 2):                                      # round(0.2 * 2) = 0 held-out rows
        with pytest.raises(ValueError) as exc:
            BR(loss="logistic").fit(X[:n], Y[:n])
        assert str(exc.value) == (f"BR: C='auto' needs at least 2 training rows for its "
                                  f"hold-out split (n_samples = {n}); set C")
    assert BR(loss="logistic").fit(X, Y).auto_["C"].procedure == "holdout"


def test_spread_is_the_standard_deviation_or_one():
    assert _auto._spread(np.array([[1.0, 3.0]])) == 1.0
    assert _auto._spread(np.array([0.0, 4.0])) == 2.0
    assert _auto._spread(np.full((3, 2), 7.0)) == 1.0            # constant scores
    with np.errstate(invalid="ignore"):
        assert _auto._spread(np.array([0.0, np.nan])) == 1.0
        assert _auto._spread(np.array([0.0, np.inf])) == 1.0
    assert _auto._spread([[0, 2], [0, 2]]) == 1.0                # integers too


def test_right_more_often_without_predictions_and_at_the_bound():
    Y = sp.csr_matrix(np.array([[1.0, 0.0, 1.0]]))
    assert _auto._right_more_often(np.array([[0.1, 0.2, 0.3]]), Y, 0.5)       # none predicted
    assert _auto._right_more_often(np.array([[0.1, 0.2, 0.3]]), Y, 0.3)       # strictly above
    # TP - FP >= 1.645 sqrt(TP + FP): 3 right of 3 passes (3 >= 2.85), 2 of 2 does not
    S = np.array([[1.0, 1.0, 1.0, 0.0]])
    assert _auto._right_more_often(S, sp.csr_matrix(np.array([[1.0, 1, 1, 0]])), 0.5)
    assert not _auto._right_more_often(S[:, 1:], sp.csr_matrix(np.array([[1.0, 1, 0]])), 0.5)


def test_decision_shift_edge_cases():
    Y = sp.csr_matrix(np.array([[0.0, 0.0, 1.0, 0.0]]))
    # nothing above the threshold: no shift
    assert _auto._decision_shift(np.array([[0.1, 0.2, 0.3, 0.0]]), Y, 0.5) == 0.0
    # everything predicted is wrong: nothing is predicted, the threshold above the largest
    # score by the scores' range and spread
    S = np.array([[0.9, 0.8, 0.1, 0.7]])
    assert _auto._decision_shift(S, Y, 0.5) == pytest.approx(0.9 - 0.5 + 0.8 + S.std(), abs=0)
    # a dense 0/1 truth gives what the sparse one gives
    assert _auto._decision_shift(S, Y.toarray(), 0.5) == _auto._decision_shift(S, Y, 0.5)


def test_decision_shift_keeps_the_significant_top_of_the_scores():
    # 12 confident right predictions, then 12 less confident wrong ones: the cut keeps the
    # right ones (12 >= 1.645 sqrt(12)) and the shift is the score of the first wrong one.
    # (two equal rows: the cut is chosen on the even row and tested on the odd one)
    right = np.linspace(2.0, 1.5, 12)
    wrong = np.linspace(1.4, 0.6, 12)
    S = np.tile(np.r_[right, wrong, [0.1, 0.2]], (2, 1))
    Y = sp.csr_matrix(np.tile(np.r_[np.ones(12), np.zeros(12), [1.0, 0.0]], (2, 1)))
    assert not _auto._right_more_often(S, Y, 0.5)
    assert _auto._decision_shift(S, Y, 0.5) == pytest.approx(1.4 - 0.5, abs=1e-15)
    # scores given in any order: the same cut
    perm = np.random.default_rng(0).permutation(S.shape[1])
    assert _auto._decision_shift(S[:, perm], sp.csr_matrix(Y.toarray()[:, perm]), 0.5) == \
        pytest.approx(1.4 - 0.5, abs=1e-15)


def test_log_prior_counts_a_stored_zero_of_the_mask_as_observed():
    Y = sp.csr_matrix(np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 0.0], [0.0, 0.0]]))
    mask = sp.csr_matrix((np.array([1.0, 0.0, 1.0, 0.0, 1.0, 2.0]),
                          (np.array([0, 1, 1, 2, 3, 3]), np.array([0, 0, 1, 0, 0, 1]))),
                         shape=(4, 2))
    assert mask.nnz == 6                                   # two stored zeros: observed
    got = _auto.log_prior(Y, mask)
    n = 4
    p = np.array([2 / 4, 1 / 2])                           # label 0: 4 seen, label 1: 2 seen
    np.testing.assert_allclose(got, np.log((n * p + 1) / (n + 2)), rtol=1e-12)
    stored = _auto._stored(mask)
    assert stored.nnz == 6 and set(stored.data) == {1.0} and mask.data[5] == 2.0   # a copy


# ----------------------------------------------------------------------------- the walk
def test_the_grid_is_walked_in_ascending_order_whatever_order_it_is_given(monkeypatch):
    seen = []

    def score(method, X, Y, task):
        seen.append(method.C)
        return -abs(np.log10(method.C) - 1)               # best at 10

    monkeypatch.setattr(_auto, "validation_score", score)
    X, Y = _data()
    m = BR()
    _auto.fit_holdout(m, "C", [100.0, 0.1, 10.0, 1.0, 1000.0], X, Y)
    choice = m.auto_["C"]
    assert choice.grid == (0.1, 1.0, 10.0, 100.0, 1000.0)
    assert seen == [10.0, 1.0, 100.0] and choice.value == 10.0
    assert all(type(v) is float for v in choice.grid)


def test_a_better_lower_neighbour_stops_the_walk_going_up(monkeypatch):
    seen = []

    def score(method, X, Y, task):                        # better at both ends than the middle
        seen.append(method.C)
        return {0.1: 2.0, 1.0: 1.0, 10.0: 0.0, 100.0: 0.5, 1000.0: 3.0}[method.C]

    monkeypatch.setattr(_auto, "validation_score", score)
    X, Y = _data()
    m = BR()
    _auto.fit_holdout(m, "C", [0.1, 1.0, 10.0, 100.0, 1000.0], X, Y)
    assert seen == [10.0, 1.0, 0.1] and m.auto_["C"].value == 0.1
    assert np.isnan(m.auto_["C"].scores[3]) and np.isnan(m.auto_["C"].scores[4])


def test_the_final_fit_is_on_every_row_and_hands_back_its_fitted_attributes(monkeypatch):
    monkeypatch.setattr(_auto, "validation_score", lambda m, X, Y, task: -abs(m.C - 10.0))
    X, Y = _data(seed=2)
    m = BR(random_state=1)
    out = _auto.fit_holdout(m, "C", [1.0, 10.0, 100.0], X, Y)
    assert out is m
    ref = BR(C=10.0).fit(X, Y)
    np.testing.assert_array_equal(m.W_, ref.W_)
    np.testing.assert_array_equal(m.n_iter_, ref.n_iter_)
    assert m.converged_ == ref.converged_ and m.n_features_in_ == ref.n_features_in_
    assert m.C == "auto"                                   # the parameter stays as given


def test_a_candidate_sees_the_keyword_arguments_of_fit_holdout(monkeypatch):
    seen = []

    class Probe(BR):
        def _fit(self, X, Y, *, observed=None, marker=None):
            seen.append(marker)
            return super()._fit(X, Y, observed=observed)

    monkeypatch.setattr(_auto, "validation_score", lambda m, X, Y, task: 0.0)
    X, Y = _data(seed=3)
    _auto.fit_holdout(Probe(), "C", [0.1, 1.0, 10.0], X, Y, marker="kw")
    assert seen == ["kw"] * 4                              # three candidates, the final fit


def test_candidates_fit_on_the_fit_rows_and_are_scored_for_the_task(monkeypatch):
    calls = []

    def score(method, X, Y, task):
        calls.append((X.shape[0], Y.shape[0], task))
        return 0.0

    monkeypatch.setattr(_auto, "validation_score", score)
    X, Y = _data(seed=4, n=50)
    _auto.fit_holdout(BR(), "C", [0.1, 1.0, 10.0], X, Y, task="multiclass")
    assert calls == [(10, 10, "multiclass")] * 3


# ----------------------------------------------------------------------------- the fallback
def test_the_fallback_is_chosen_on_the_observed_entries():
    # Held-out entries outside the mask are unknown: they must not count as negatives of
    # the constant's frequencies or of the model. The same labels on the observed entries
    # with the unobserved ones set positive must choose alike.
    X, Y = _data(seed=5, n=120, L=5)
    rng = np.random.default_rng(5)
    observed = sp.csr_matrix((rng.random(Y.shape) < 0.5).astype(float))
    inside = Y.multiply(observed).tocsr()
    outside = sp.csr_matrix(inside.toarray() + (observed.toarray() == 0))
    a = BR(loss="logistic", C=1.0, random_state=0)
    b = BR(loss="logistic", C=1.0, random_state=0)
    split = _auto.holdout_split(a, X.shape[0])
    cand = BR(loss="logistic", C=1.0).fit(X[split[0]], inside[split[0]],
                                          observed=observed[split[0]])
    c = BR(loss="logistic", C=1.0, random_state=0)
    for m, T, mask in ((a, inside, observed), (b, outside, observed), (c, outside, None)):
        m.fit(X, inside, observed=observed)
        m.auto_ = {}
        _auto.choose_prior_weight(m, cand, X, T, mask, "multilabel", split)
    assert a.auto_ == b.auto_
    np.testing.assert_array_equal(a.prior_offset_[1], b.prior_offset_[1])
    # ... which matters here: read without the mask, the same labels choose otherwise
    assert c.auto_ != a.auto_ or not np.array_equal(c.prior_offset_[1], a.prior_offset_[1])


def test_fit_prior_weight_does_nothing_for_other_tasks_or_too_few_rows():
    X, Y = _data(seed=6)
    for n, task in ((X.shape[0], "multiclass"), (2, "multilabel"), (1, "multilabel")):
        m = BR(loss="squared", l2_reg=1.0).fit(X[:n], Y[:n])
        _auto.fit_prior_weight(m, "l2_reg", 1.0, X[:n], Y[:n], task=task)
        assert m.auto_ == {}
    m = BR(loss="squared", l2_reg=1.0).fit(X[:3], Y[:3])
    _auto.fit_prior_weight(m, "l2_reg", 1.0, X[:3], Y[:3])
    assert _auto.PRIOR in m.auto_


def test_fit_prior_weight_scores_a_fit_on_the_fit_rows_at_the_value(monkeypatch):
    seen = {}

    def spy(method, cand, X, Y, observed, task, split):
        seen.update(l2_reg=cand.l2_reg, rows=cand.n_features_in_, W=cand.W_, split=split,
                    observed=observed, task=task)

    monkeypatch.setattr(_auto, "choose_prior_weight", spy)
    X, Y = _data(seed=7, n=50)
    rng = np.random.default_rng(7)
    observed = sp.csr_matrix((rng.random(Y.shape) < 0.7).astype(float))
    m = BR(loss="squared", l2_reg=0.5, random_state=2)
    _auto.fit_prior_weight(m, "l2_reg", 0.25, X, Y, observed=observed)
    fit, val = _auto.holdout_split(m, 50)
    np.testing.assert_array_equal(seen["split"][0], fit)
    np.testing.assert_array_equal(seen["split"][1], val)
    assert seen["l2_reg"] == 0.25 and seen["observed"] is observed
    assert seen["task"] == "multilabel"
    ref = BR(loss="squared", l2_reg=0.25).fit(X[fit], Y[fit], observed=observed[fit])
    np.testing.assert_array_equal(seen["W"], ref.W_)


def test_the_fallback_runs_only_after_a_validated_holdout_choice(monkeypatch):
    seen = []
    monkeypatch.setattr(_auto, "choose_prior_weight", lambda *a: seen.append(a[1].C))
    monkeypatch.setattr(_auto, "validation_score", lambda m, X, Y, task: -abs(m.C - 1.0))
    X, Y = _data(seed=8)
    _auto.fit_holdout(BR(), "C", [0.1, 1.0, 10.0], X, Y)
    assert seen == [1.0]                                   # the candidate at the chosen value


# ----------------------------------------------------------------------------- more edges
def test_an_unscorable_middle_ranks_below_its_neighbours(monkeypatch):
    def score(method, X, Y, task):                        # nan: no score, as a divergence
        return float("nan") if method.C == 1.0 else -abs(np.log10(method.C) + 1)

    monkeypatch.setattr(_auto, "validation_score", score)
    X, Y = _data(seed=9)
    m = BR()
    _auto.fit_holdout(m, "C", [0.01, 0.1, 1.0, 10.0, 100.0], X, Y)
    choice = m.auto_["C"]
    assert choice.value == 0.1 and np.isnan(choice.scores[2])


def test_private_fitted_attributes_of_the_final_fit_stay_behind(monkeypatch):
    class Probe(BR):
        def _fit(self, X, Y, *, observed=None):
            self._scratch_ = "private"
            return super()._fit(X, Y, observed=observed)

    monkeypatch.setattr(_auto, "validation_score", lambda m, X, Y, task: 0.0)
    X, Y = _data(seed=10)
    m = Probe()
    _auto.fit_holdout(m, "C", [0.1, 1.0, 10.0], X, Y)
    assert "_scratch_" not in vars(m) and hasattr(m, "W_")


def test_auto_with_missing_labels_falls_back_to_the_observed_frequencies():
    # Features unrelated to the labels: auto ends at the constant, whose frequencies are
    # counted among each label's observed entries, not among all rows.
    rng = np.random.default_rng(12)
    n, L = 150, 6
    X = sp.csr_matrix(rng.random((n, 30)))
    Y = sp.csr_matrix((rng.random((n, L)) < np.array([0.45, 0.4, 0.35, 0.3, 0.25, 0.2]))
                      .astype(float))
    observed = sp.csr_matrix((rng.random((n, L)) < np.array([0.9, 0.3, 0.9, 0.3, 0.9, 0.3]))
                             .astype(float))
    Y = Y.multiply(observed).tocsr()
    m = BR(random_state=0).fit(X, Y, observed=observed)
    assert m.auto_[_auto.PRIOR].value == "constant"
    expected = _auto.log_prior(Y, observed)
    assert not np.allclose(expected, _auto.log_prior(Y))
    np.testing.assert_array_equal(m.decision_function(X[:5]), np.tile(expected, (5, 1)))


def test_log_prior_of_a_label_observed_once():
    Y = sp.csr_matrix(np.array([[1.0, 0.0], [0.0, 0.0], [0.0, 1.0]]))
    observed = sp.csr_matrix(np.array([[1.0, 1.0], [0.0, 1.0], [0.0, 1.0]]))
    np.testing.assert_allclose(_auto.log_prior(Y, observed),
                               np.log((3 * np.array([1.0, 1 / 3]) + 1) / 5), rtol=1e-12)


def test_one_right_prediction_is_not_yet_significant():
    Y = sp.csr_matrix(np.array([[1.0, 0.0]]))
    assert not _auto._right_more_often(np.array([[1.0, 0.0]]), Y, 0.5)      # 1 < 1.645


def test_decision_shift_reads_a_dense_truth_as_the_sparse_one():
    right = np.linspace(2.0, 1.5, 12)
    wrong = np.linspace(1.4, 0.6, 12)
    S = np.tile(np.r_[right, wrong], (2, 1))
    T = np.tile(np.r_[np.ones(12), np.zeros(12)], (2, 1))
    assert _auto._decision_shift(S, T, 0.5) == _auto._decision_shift(S, sp.csr_matrix(T), 0.5)
    assert _auto._decision_shift(S, T, 0.5) == pytest.approx(1.4 - 0.5, abs=1e-15)


@pytest.mark.parametrize("cells, L, rows", [(10, 5, 2), (4, 5, 1), (6, 1, 6)])
def test_the_fallback_reads_at_most_prior_cells_held_out_scores(monkeypatch, cells, L, rows):
    seen = []

    class Fixed:
        threshold = 0.5

        def _decision_function(self, X):
            seen.append(X.shape[0])
            return np.zeros((X.shape[0], L))

    monkeypatch.setattr(_auto, "PRIOR_CELLS", cells)
    n = 40
    Y = sp.csr_matrix((np.random.default_rng(0).random((n, L)) < 0.4).astype(float))
    X = np.arange(n, dtype=float)[:, None]
    m = Fixed()
    m.auto_ = {}
    _auto.choose_prior_weight(m, Fixed(), X, Y, None, "multilabel",
                              _auto.holdout_split(m, n))
    assert seen[0] == rows


def test_fit_prior_weight_fits_nothing_for_another_task(monkeypatch):
    fits = []

    class Probe(BR):
        def _fit(self, X, Y, *, observed=None, **kw):
            fits.append(kw)
            return super()._fit(X, Y, observed=observed)

    X, Y = _data(seed=11)
    m = Probe(loss="squared", l2_reg=1.0).fit(X, Y)
    fits.clear()
    _auto.fit_prior_weight(m, "l2_reg", 1.0, X, Y, task="multiclass")
    assert fits == []
    _auto.fit_prior_weight(m, "l2_reg", 1.0, X, Y, marker="kw")
    assert fits == [{"marker": "kw"}]                     # the keywords reach the fit


class _Scores:
    """A fitted stand-in whose scores are given (rows looked up by X's single column)."""

    def __init__(self, scores, threshold=0.5):
        self.scores = scores
        self.threshold = threshold

    def _decision_function(self, X):
        return self.scores[np.asarray(X).ravel().astype(int)]


@pytest.mark.parametrize("threshold", [0.5, None])
@pytest.mark.parametrize("noise", [0.05, 0.6, 1.0, 3.0, -1.0])
def test_the_fallback_records_what_it_scored_and_offsets_by_it(noise, threshold):
    """Against a slow walk over the weights with the metrics functions: every weight's score
    (the mean of P@1 and AUC, nan past the chosen one), the records, and the offset
    ``(w log p - shift) sd`` on the final model's spread."""
    from mlx.metrics import default_metrics, evaluate, parse_metric

    rng = np.random.default_rng(13)
    n, L = 300, 5
    Y = sp.csr_matrix((rng.random((n, L)) < np.array([0.5, 0.3, 0.2, 0.1, 0.05])).astype(float))
    T = Y.toarray()
    if noise < 0:                                          # ranks the positives last
        S = 1.0 - T + 0.1 * rng.standard_normal((n, L))
    else:
        S = 0.8 * T + noise * rng.standard_normal((n, L))
    final = 2.0 * S + 1.0                                  # the final model: another scale
    X = np.arange(n, dtype=float)[:, None]
    m = _Scores(final, threshold)
    m.auto_ = {}
    fit, val = _auto.holdout_split(m, n)
    _auto.choose_prior_weight(m, _Scores(S, threshold), X, Y, None, "multilabel", (fit, val))

    metrics = [k for k in default_metrics("multilabel")
               if not parse_metric(k).family.uses_threshold]
    F, Yv, prior = S[val], Y[val], _auto.log_prior(Y[fit])
    sd = _auto._spread(F)

    def res(scores):
        out = evaluate(lambda B: scores, F, Yv, metrics, auc_degenerate="skip",
                       batch_size=len(val))
        return {k: v for k, (v, _) in out.items()}

    from mlx.metrics.functions import instance_auc

    const = res(np.tile(prior, (len(val), 1)))
    const_auc = instance_auc(Yv, np.tile(prior, (len(val), 1)))
    scores, chosen = [], None
    for w in _auto.PRIOR_WEIGHTS:
        r = const if w == float("inf") else res(F + w * sd * prior)
        scores.append(float(np.mean([r["p@1"], r["auc"]])))
        d = (const_auc if w == float("inf") else instance_auc(Yv, F + w * sd * prior)) \
            - const_auc                                     # AUC: a paired one-sided test
        d = d[~np.isnan(d)]
        if all(r[k] >= const[k] - 1e-12 for k in metrics if k != "auc") \
                and d.sum() >= 1.645 * np.sqrt(np.sum(d * d)) - 1e-12:
            chosen = w
            break
    scores += [float("nan")] * (len(_auto.PRIOR_WEIGHTS) - len(scores))
    prior_choice = m.auto_[_auto.PRIOR]
    assert prior_choice.procedure == "holdout" and prior_choice.grid == _auto.PRIOR_WEIGHTS
    np.testing.assert_allclose(prior_choice.scores, scores, rtol=1e-12)
    full = _auto.log_prior(Y)
    if chosen == float("inf"):
        assert prior_choice.value == "constant" and _auto.SHIFT not in m.auto_
        assert m.prior_offset_[0] == 0.0
        np.testing.assert_array_equal(m.prior_offset_[1], full)
        return
    assert prior_choice.value == chosen
    shift_choice = m.auto_[_auto.SHIFT]
    assert (shift_choice.procedure, shift_choice.grid, shift_choice.scores) == ("holdout", (), ())
    shift = shift_choice.value
    if threshold is None:
        assert shift == 0.0
    else:
        assert shift == _auto._decision_shift(F + chosen * sd * prior, Yv, threshold) / sd
    spread = final[val[:_auto.SPREAD_ROWS]].std() if chosen or shift else 0.0
    assert m.prior_offset_[0] == 1.0
    np.testing.assert_allclose(m.prior_offset_[1], (chosen * full - shift) * spread,
                               rtol=1e-12, atol=1e-15)
