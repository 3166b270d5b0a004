"""The constant baseline, feature scaling and the settled-objective test: the properties their
docstrings state, on values where a changed comparison or constant shows (found by mutation
testing)."""

import numpy as np
import pytest
import scipy.sparse as sp

from mlx.methods._auto import AutoChoice, log_grid, validation_score
from mlx.methods._scale import apply_scale, fit_scale
from mlx.methods._status import SETTLED_RTOL, settled
from mlx.methods.constant import Constant


# ----------------------------------------------------------------------------- settled
def test_settled_compares_the_last_change_with_rtol_of_the_previous_value():
    assert SETTLED_RTOL == 1e-3
    assert settled([5.0, 1000.0, 1001.0])            # |1| <= 1e-3 * 1000: at the bound
    assert settled([1000.0, 999.0])                  # relative to the previous value (1000),
    assert not settled([999.0, 1000.0])              # not to the last: 1 > 0.999
    assert not settled([1000.0, 1001.0 + 1e-9])
    assert settled([-1000.0, -1001.0])               # the size of the previous value counts
    assert settled([3.0, 3.0]) and settled([0.0, 0.0])
    assert settled([10.0, 10.5], rtol=0.05) and not settled([10.0, 10.5], rtol=0.049)


def test_settled_needs_two_finite_passes():
    assert not settled([])
    assert not settled([2.0])
    assert not settled([np.inf, np.inf])
    assert not settled([1.0, np.nan]) and not settled([np.nan, 1.0])
    assert not settled([1.0, -np.inf])
    assert not settled([np.inf, 1.0])                # |1 - inf| <= 1e-3 * inf, yet unsettled


# ----------------------------------------------------------------------------- scaling
def test_features_within_one_are_left_alone():
    X = np.array([[1.0, -1.0], [0.5, 0.0]])        # largest absolute value exactly 1
    assert fit_scale(X, "auto", "WSABIE") == (None, "")
    assert fit_scale(sp.csr_matrix(X), "auto", "WSABIE") == (None, "")
    assert fit_scale(np.zeros((0, 3)), "auto", "WSABIE") == (None, "")
    assert apply_scale(X, None) is X


@pytest.mark.parametrize("sparse", [False, True])
def test_each_feature_is_divided_by_its_largest_absolute_value(sparse):
    X = np.array([[4.0, 0.0, -0.5, 0.0], [-8.0, 2.0, 0.25, 0.0]])
    factors, note = fit_scale(sp.csr_matrix(X) if sparse else X, "auto", "LSVV")
    np.testing.assert_array_equal(factors, [1 / 8, 1 / 2, 1 / 0.5, 1.0])   # all-zero: 1
    assert note == ("LSVV: features scaled by their largest absolute training value (largest "
                    "8; the method assumes features in [-1, 1]); set preprocess: [minmax] to "
                    "choose the scaling, or scale_features: none")
    scaled = apply_scale(sp.csr_matrix(X) if sparse else X, factors)
    assert sp.issparse(scaled) == sparse
    if sparse:
        assert scaled.format == "csr" and scaled.nnz == 5
        scaled = scaled.toarray()
    np.testing.assert_array_equal(scaled, [[0.5, 0.0, -1.0, 0.0], [-1.0, 1.0, 0.5, 0.0]])
    # New rows are scaled by the training factors, whatever their own range.
    np.testing.assert_array_equal(apply_scale(np.array([[16.0, 4.0, 1.0, 7.0]]), factors),
                                  [[2.0, 2.0, 2.0, 7.0]])


def test_scale_features_none_leaves_large_features_alone():
    assert fit_scale(np.array([[300.0, -2.0]]), "none", "WSABIE") == (None, "")


def test_one_feature_slightly_above_one_is_scaled():
    factors, note = fit_scale(np.array([[1.5], [-0.75]]), "auto", "WSABIE")
    np.testing.assert_array_equal(factors, [1 / 1.5])
    assert "(largest 1.5;" in note


def test_one_training_row_is_enough_to_scale():
    factors, note = fit_scale(np.array([[300.0, -2.0]]), "auto", "WSABIE")
    np.testing.assert_array_equal(factors, [1 / 300, 1 / 2])
    assert note.startswith("WSABIE: features scaled by their largest absolute training value "
                           "(largest 300;")


# ----------------------------------------------------------------------------- constant
X3 = sp.csr_matrix(np.eye(4, 3))


def test_multilabel_constant_scores_observed_frequencies_and_predicts_nothing():
    Y = sp.csr_matrix(np.array([[1, 0, 1, 0], [1, 1, 0, 0], [0, 0, 1, 0], [1, 0, 0, 0]]))
    m = Constant(task="multilabel").fit(X3, Y)
    assert m.threshold == 1.0
    np.testing.assert_array_equal(m.decision_function(X3[:2]),
                                  [[0.75, 0.25, 0.5, 0.0], [0.75, 0.25, 0.5, 0.0]])
    assert not m.predict(X3).any()
    # Under a mask: positives over observed entries (label 1 is observed once, a
    # positive); a label never observed scores 0.
    observed = sp.csr_matrix(np.array([[1, 0, 1, 0], [1, 1, 0, 0], [0, 0, 1, 0],
                                       [0, 0, 1, 0]]))
    m = Constant(task="multilabel").fit(X3, Y.multiply(observed).tocsr(), observed=observed)
    np.testing.assert_array_equal(m.decision_function(X3[:1]), [[1.0, 1.0, 2 / 3, 0.0]])


def test_multiclass_constant_predicts_the_majority_and_the_lower_class_among_ties():
    m = Constant(task="multiclass").fit(X3, np.array([2, 1, 2, 0]))
    np.testing.assert_array_equal(m.decision_function(X3[:1]), [[0.25, 0.25, 0.5]])
    np.testing.assert_array_equal(m.predict(X3), [2, 2, 2, 2])
    m = Constant(task="multiclass").fit(X3, np.array([2, 1, 2, 1]))
    np.testing.assert_array_equal(m.predict(X3[:1]), [1])


def test_regression_constant_is_the_training_mean_of_each_target():
    Y = np.array([[1.0, -2.0], [2.0, 0.0], [6.0, 5.0], [3.0, 1.0]])
    m = Constant(task="regression").fit(X3, Y)
    np.testing.assert_array_equal(m.decision_function(X3[:3]), [[3.0, 1.0]] * 3)


def test_ordinal_constant_is_the_lower_median_level():
    m = Constant(task="ordinal").fit(X3, np.array([4.0, 1.0, 3.0, 2.0]))
    np.testing.assert_array_equal(m.decision_function(X3[:1]), [2.0])   # not 2.5, not 3
    np.testing.assert_array_equal(m.predict(X3[:2]), [2.0, 2.0])
    # One level per target column.
    T = np.array([[4.0, 1.0], [1.0, 1.0], [3.0, 5.0], [2.0, 5.0]])
    np.testing.assert_array_equal(Constant(task="ordinal").fit(X3, T).decision_function(X3[:1]),
                                  [[2.0, 1.0]])
    m = Constant(task="ordinal").fit(X3[:3], np.array([5.0, 1.0, 3.0]))
    np.testing.assert_array_equal(m.predict(X3[:1]), [3.0])


def test_constant_checks_the_number_of_features_of_new_rows():
    m = Constant(task="regression").fit(X3, np.array([1.0, 2.0, 3.0, 4.0]))
    with pytest.raises(ValueError, match="^Constant: X has 5 features, but Constant is "
                                         "expecting 3 features"):
        m.decision_function(sp.csr_matrix(np.ones((2, 5))))


def test_value_constant_from_one_row_and_its_input_errors():
    m = Constant(task="regression").fit(X3[:1], np.array([[2.5, -1.0]]))
    np.testing.assert_array_equal(m.decision_function(X3), [[2.5, -1.0]] * 4)
    with pytest.raises(ValueError) as exc:
        Constant(task="regression").fit(X3, np.ones((3, 1)))
    assert str(exc.value) == ("Constant: X has shape (4, 3) but Y has shape (3, 1); Y must be "
                              "(n_samples, n_targets)")
    with pytest.raises(ValueError) as exc:
        Constant(task="regression").fit(np.zeros((0, 3)), np.zeros((0, 1)))
    assert str(exc.value) == "Constant: empty input (X (0, 3), Y (0, 1))"
    with pytest.raises(ValueError) as exc:
        Constant(task="ordinal").fit(X3, np.array([[1.0], [np.nan], [2.0], [3.0]]))
    assert str(exc.value) == "Constant: Y contains NaN or infinity"
    bad = X3.toarray()
    bad[1, 2] = np.inf
    with pytest.raises(ValueError) as exc:
        Constant(task="regression").fit(bad, np.ones((4, 1)))
    assert str(exc.value).startswith("Constant: X contains NaN or infinity")


# ----------------------------------------------------------------------------- auto notes
def test_an_auto_note_names_the_end_of_the_grid_it_hit():
    grid = tuple(log_grid(1.0, 2))
    assert grid == (0.01, 0.1, 1.0, 10.0, 100.0)
    scores = (0.1, 0.2, 0.3, 0.2, 0.1)
    assert AutoChoice("C", 1.0, "holdout", grid, scores).note() == ""
    assert AutoChoice("C", 0.1, "holdout", grid, scores).note() == ""
    assert AutoChoice("C", 0.01, "holdout", grid, scores).note() == (
        "C=auto chose 0.01, the smallest value at the end of its auto path (holdout, "
        "0.01..100); set C or select it over a wider list")
    assert AutoChoice("C", 100.0, "gcv", grid, scores).note() == (
        "C=auto chose 100, the largest value at the end of its auto path (gcv, 0.01..100); "
        "set C or select it over a wider list")


class _Scores:
    """A fitted model's scores, fixed (validation_score only asks for them)."""

    def __init__(self, scores):
        self.scores = np.asarray(scores, dtype=float)

    def _decision_function(self, X):
        return np.tile(self.scores, (X.shape[0], 1))


@pytest.mark.parametrize("task", ["regression", "ordinal"])
def test_holdout_score_of_values_is_minus_their_mean_squared_error(task):
    X = sp.csr_matrix(np.ones((2, 3)))
    assert validation_score(_Scores([3.0, 0.0]), X, np.array([[1, 0], [5, 2]]), task) == -3.0
    assert validation_score(_Scores([3.0, 0.0]), X, sp.csr_matrix([[1.0, 0], [5, 2]]),
                            task) == -3.0


def test_holdout_score_of_labels_is_the_mean_of_p_at_1_and_auc():
    # Every row ranks label 0 over 1 over 2; one positive per row: P@1 = 1/3, AUC = 1/2
    # (per row: 1, 1/2, 0; per label: ties, 1/2).
    Y = sp.csr_matrix(np.eye(3))
    score = validation_score(_Scores([0.9, 0.5, 0.1]), sp.csr_matrix(np.ones((3, 2))), Y,
                             "multilabel")
    assert score == pytest.approx((1 / 3 + 1 / 2) / 2)


def test_holdout_score_of_one_target_pairs_each_row_with_its_own_value():
    class OneColumn:                            # scores one target as a flat array
        def _decision_function(self, X):
            return np.array([2.0, 4.0])

    X = sp.csr_matrix(np.ones((2, 3)))
    assert validation_score(OneColumn(), X, np.array([[1.0], [5.0]]), "regression") == -1.0
