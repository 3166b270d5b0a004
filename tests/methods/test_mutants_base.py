"""The method base class: properties the older tests left open (found by mutation testing).

Two small methods written here: ``Ridge`` (ridge regression of the targets on the features,
solved densely; every task through its ``task`` parameter) and ``Ranker`` (multi-label only,
scores that only rank: no threshold). Each public entry point of :class:`BaseMethod` is
compared with what the same arithmetic gives by hand."""

import numbers

import numpy as np
import pytest
import scipy.sparse as sp

from mlx.errors import NotFittedError
from mlx.methods._validation import check_fit_data
from mlx.methods.base import (
    BaseMethod,
    FitContext,
    Interval,
    InvalidParameterError,
    TaskOptions,
    check_is_fitted,
    ranking_only_failed_checks,
)


class Ridge(BaseMethod):
    name = "ridge-test"
    tasks = ("multilabel", "multiclass", "regression", "ordinal")
    _parameter_constraints = {"l2": [Interval(numbers.Real, 0, None, closed="left")],
                              "task": [TaskOptions(tasks)]}

    def __init__(self, *, l2=1.0, task="multilabel", **extra):
        self.l2 = l2
        self.task = task

    @property
    def threshold(self):
        return 0.5

    def _fit(self, X, Y, *, observed=None):
        self._validate_params()
        X = X.toarray() if sp.issparse(X) else np.asarray(X, dtype=float)
        Y = Y.toarray() if sp.issparse(Y) else np.asarray(Y, dtype=float)
        self.W_ = np.linalg.solve(X.T @ X + self.l2 * np.eye(X.shape[1]), X.T @ Y)
        self.seen_ = (observed, None)

    def _decision_function(self, X):
        X = X.toarray() if sp.issparse(X) else np.asarray(X, dtype=float)
        return X @ self.W_


class Ranker(Ridge):
    name = "ranker-test"
    tasks = ("multilabel",)
    uses_unlabelled = True
    _parameter_constraints = {"l2": [Interval(numbers.Real, 0, None, closed="left")]}

    def __init__(self, *, l2=1.0):
        self.l2 = l2

    @property
    def threshold(self):
        return None

    def _fit(self, X, Y, *, observed=None, unlabelled=None):
        super()._fit(X, Y, observed=observed)
        self.seen_ = (observed, unlabelled)


X = np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0], [2.0, 0.5], [0.5, 2.0], [1.5, 1.5]])


def _ridge_scores(Y, l2=1.0, Xq=X):
    Y = np.asarray(Y, dtype=float).reshape(len(X), -1)
    return Xq @ np.linalg.solve(X.T @ X + l2 * np.eye(2), X.T @ Y)


# ----------------------------------------------------------------------------- parameters
def test_parameters_are_the_init_arguments_in_name_order():
    m = Ridge(l2=3.0, task="regression")
    assert m.get_params() == {"l2": 3.0, "task": "regression"}
    assert list(m.get_params()) == ["l2", "task"]        # sorted; **extra is not one
    assert m.set_params(l2=0.5) is m and m.l2 == 0.5
    with pytest.raises(InvalidParameterError) as exc:
        m.set_params(l2=1.0, alpha=2)
    assert exc.value.param == "alpha"
    assert str(exc.value) == "Ridge has no parameter 'alpha'; valid: l2, task"
    assert repr(Ridge(l2=2)) == "Ridge(l2=2, task='multilabel')"


def test_parameters_are_checked_in_fit_naming_the_class():
    with pytest.raises(InvalidParameterError) as exc:
        Ridge(l2=-1.0).fit(X, np.eye(6, 2))
    assert str(exc.value) == ("The 'l2' parameter of Ridge must be a float in the range "
                              "[0, inf). Got -1.0 instead.")


def test_the_base_class_declines_by_task_and_missing_labels():
    assert Ranker().skip(FitContext(observed_ratio=0.5)) == ("ranker-test does not support "
                                                             "missing labels")
    assert Ranker().skip(FitContext(task="regression")) == (
        "ranker-test does not handle regression tasks (it handles: multilabel)")
    assert Ranker().skip(FitContext()) is None

    class Masked(Ranker):
        supports_missing_labels = True

    assert Masked().skip(FitContext(observed_ratio=0.5)) is None
    assert Ranker().check_context(FitContext(observed_ratio=0.1)) is None
    base = BaseMethod()
    assert base.threshold == 0.0
    with pytest.raises(NotImplementedError):
        base._fit(X, X)
    with pytest.raises(NotImplementedError):
        base._decision_function(X)


# ----------------------------------------------------------------------------- fit
def test_fit_refuses_no_features_no_targets_and_unused_unlabelled_rows():
    with pytest.raises(ValueError) as exc:
        Ridge().fit(np.ones((3, 0)), np.eye(3))
    assert str(exc.value) == ("Ridge: X has 0 feature(s) (shape=(3, 0)) while a minimum of 1 "
                              "is required.")
    with pytest.raises(ValueError) as exc:
        Ridge().fit(sp.csr_matrix((2, 0)), np.eye(2))
    assert str(exc.value).startswith("Ridge: X has 0 feature(s) (shape=(2, 0))")
    with pytest.raises(ValueError) as exc:
        Ridge().fit(X, None)
    assert str(exc.value) == "Ridge requires y to be passed, but the target y is None"
    with pytest.raises(TypeError) as exc:
        Ridge().fit(X, np.eye(6, 2), unlabelled=X)
    assert str(exc.value) == "Ridge.fit does not use unlabelled rows; pass unlabelled=None"
    with pytest.raises(ValueError) as exc:
        Ridge(task="regression").fit(X[:0], np.array([]))
    assert str(exc.value) == "Ridge: empty input (y has no rows)"


def test_fit_passes_observed_and_unlabelled_rows_and_records_the_features():
    obs, extra = sp.csr_matrix(np.ones((6, 2))), X[:2].copy()
    m = Ranker().fit(sp.csr_matrix(X), sp.csr_matrix(np.eye(6, 2)), observed=obs,
                     unlabelled=extra)
    assert m.seen_[0] is obs and m.seen_[1] is extra
    assert m.n_features_in_ == 2 and isinstance(m.n_features_in_, int)
    m = Ranker().fit(X, np.eye(6, 2), observed=obs)
    assert m.seen_ == (obs, None)
    m.n_features_in_ = 7                   # a method that sets it itself keeps its value
    m.fit(X, np.eye(6, 2))
    assert m.n_features_in_ == 7


def test_a_label_matrix_is_fitted_as_given():
    Y = np.array([[1, 0, 1], [0, 1, 0], [1, 1, 0], [1, 0, 0], [0, 1, 1], [1, 1, 1]])
    m = Ridge().fit(X, Y)
    assert m.classes_.tolist() == [0, 1, 2] and m._fit_task_ == "multilabel"
    want = _ridge_scores(Y)
    assert np.allclose(m.decision_function(X), want)
    assert m.predict(X).tolist() == (want > 0.5).astype(int).tolist()
    from mlx.metrics import evaluate
    assert m.score(X, Y) == pytest.approx(
        evaluate(lambda Z: Z @ m.W_, X, Y, ["p@1"], threshold=0.5)["p@1"][0])
    with pytest.raises(ValueError) as exc:
        Ranker().fit(X, Y).predict(X)
    assert str(exc.value) == ("Ranker has no decision threshold (its scores only rank labels); "
                              "use decision_function")
    with pytest.raises(ValueError) as exc:
        m.score(X, Y, sample_weight=np.ones(6))
    assert str(exc.value) == "Ridge.score does not take sample weights"


def test_two_classes_for_a_multi_label_method_are_one_binary_column():
    y = np.array(["b", "a", "b", "b", "a", "a"])
    m = Ranker().fit(X, y)
    assert m.classes_.tolist() == ["a", "b"] and m._fit_task_ == "binary"
    col = (y == "b").astype(float)
    want = _ridge_scores(col)[:, 0]
    assert np.allclose(m.decision_function(X), want)              # no threshold: minus 0
    m = Ridge(task="multilabel").fit(X, y)
    assert np.allclose(m.decision_function(X), want - 0.5)
    pred = np.where(want > 0.5, "b", "a")
    assert m.predict(X).tolist() == pred.tolist()
    assert m.score(X, y) == pytest.approx(np.mean(pred == y))
    with pytest.raises(ValueError, match="no decision threshold"):
        Ranker().fit(X, y).predict(X)


def test_more_classes_need_the_multiclass_task():
    y = np.array([0, 1, 2, 0, 1, 2])
    with pytest.raises(ValueError) as exc:
        Ridge().fit(X, y)
    assert str(exc.value) == (
        "Only binary classification is supported with a 1-D y by Ridge(task='multilabel'). "
        "The type of the target is multiclass; give multi-label data as an (n_samples, "
        "n_labels) 0/1 matrix or set task='multiclass'")
    with pytest.raises(ValueError) as exc:
        Ranker().fit(X, y)
    assert str(exc.value) == (
        "Only binary classification is supported with a 1-D y by Ranker. The type of the "
        "target is multiclass; give multi-label data as an (n_samples, n_labels) 0/1 matrix")
    with pytest.raises(ValueError) as exc:
        Ridge(task="multiclass").fit(X, np.array([0.5, 1.5, 2.5, 0.1, 0.2, 0.3]))
    assert str(exc.value) == ("Ridge: Unknown label type: continuous y; a 1-D y holds one class "
                              "label per row (real-valued targets need a regression method)")


def test_classes_are_one_hot_columns_in_class_order():
    y = np.array([20, 10, 30, 20, 30, 10])
    m = Ridge(task="multiclass").fit(X, y)
    assert m.classes_.tolist() == [10, 20, 30] and m._fit_task_ == "multiclass"
    onehot = (y[:, None] == np.array([10, 20, 30])).astype(float)
    want = _ridge_scores(onehot)
    assert np.allclose(m.decision_function(X), want)
    pred = np.array([10, 20, 30])[want.argmax(axis=1)]
    assert m.predict(X).tolist() == pred.tolist()
    assert m.score(X, y) == pytest.approx(np.mean(pred == y))
    y_test = np.array([20, 10, 30, 99, 5, 10])          # unseen classes count as errors
    assert m.score(X, y_test) == pytest.approx(np.mean(pred == y_test))
    two = np.array([1, 0, 1, 1, 0, 0])
    m = Ridge(task="multiclass").fit(X, two)
    s = _ridge_scores((two[:, None] == np.array([0, 1])).astype(float))
    assert np.allclose(m.decision_function(X), s[:, 1] - s[:, 0])


def test_values_are_one_target_column():
    y = np.array([0.5, 1.0, 2.0, 1.5, 3.0, 2.5])
    m = Ridge(task="regression").fit(X, y)
    want = _ridge_scores(y)[:, 0]
    assert m._fit_task_ == "regression" and not hasattr(m, "classes_")
    assert np.allclose(m.decision_function(X), want) and m.decision_function(X).ndim == 1
    assert np.allclose(m.predict(X), want) and m.predict(X).ndim == 1
    assert m.score(X, y) == pytest.approx(-np.mean((want - y) ** 2))
    with pytest.raises(ValueError) as exc:
        Ridge(task="regression").fit(X, np.array(["a", "b", "c", "d", "e", "f"]))
    assert str(exc.value) == "Ridge: y must hold numbers for a regression task; got <U1 values"
    with pytest.raises(ValueError) as exc:
        Ridge(task="regression").fit(X, np.array([1.0, np.inf, 0, 0, 0, 0]))
    assert str(exc.value) == "Ridge: y contains NaN or infinity"


def test_ordinal_predictions_are_the_nearest_training_level():
    y = np.array([1.0, 3.0, 3.0, 5.0, 1.0, 5.0])
    m = Ridge(task="ordinal").fit(X, y)
    assert m._levels_.tolist() == [1.0, 3.0, 5.0]
    raw = _ridge_scores(y)[:, 0]
    levels = np.array([1.0, 3.0, 5.0])
    nearest = levels[np.abs(raw[:, None] - levels[None, :]).argmin(axis=1)]
    assert np.allclose(m.decision_function(X), raw)
    assert m.predict(X).tolist() == nearest.tolist()
    assert m.score(X, y) == pytest.approx(-np.mean(np.abs(nearest - y)))
    col = Ridge(task="ordinal").fit(X, y[:, None])           # the runner's (n, 1) column
    assert col._levels_.tolist() == [1.0, 3.0, 5.0]
    assert col.predict(X).tolist() == nearest[:, None].tolist()
    nan_col = np.array([[1.0], [np.nan], [3.0], [3.0], [1.0], [1.0]])
    assert Ridge(task="ordinal").fit(X, np.nan_to_num(nan_col))._levels_.tolist() == [0, 1, 3]
    m.fit(X, y[:, None])
    del m._levels_
    with pytest.raises(ValueError) as exc:
        m.predict(X)
    assert str(exc.value) == ("Ridge: ordinal predictions need the training levels; fit on a "
                              "1-D y of levels")


def test_a_refit_forgets_the_classes_and_levels_of_the_previous_fit():
    m = Ridge(task="ordinal").fit(X, np.array([1.0, 3.0, 3.0, 5.0, 1.0, 5.0]))
    m.set_params(task="multilabel").fit(X, np.array(["b", "a", "b", "b", "a", "a"]))
    assert not hasattr(m, "_levels_") and m.classes_.tolist() == ["a", "b"]
    m.set_params(task="regression").fit(X, np.ones((6, 2)))
    assert not hasattr(m, "classes_") and not hasattr(m, "_levels_")
    assert m.decision_function(X).shape == (6, 2)


def test_scores_add_the_label_frequencies_an_auto_fit_chose():
    m = Ridge().fit(X, np.eye(6, 2))
    raw = m.decision_function(X)
    m.auto_ = {"prior_weight": 0.3}
    m.prior_offset_ = (0.5, np.array([0.1, 0.2]))
    assert np.allclose(m.decision_function(X), 0.5 * raw + np.array([0.1, 0.2]))
    assert m.predict(X).tolist() == ((0.5 * raw + np.array([0.1, 0.2])) > 0.5).astype(
        int).tolist()
    m.auto_ = {"l2": 1.0}
    assert np.allclose(m.decision_function(X), raw)


def test_not_fitted_and_ranking_only_checks():
    with pytest.raises(NotFittedError) as exc:
        Ridge().score(X, np.eye(6, 2))
    assert str(exc.value) == "This Ridge instance is not fitted yet. Call 'fit' first."
    m = Ridge()
    m.W_ = None
    with pytest.raises(NotFittedError):
        check_is_fitted(m, "W_")
    m.W_ = 0
    check_is_fitted(m, "W_")
    checks = ranking_only_failed_checks("only ranks")
    assert len(checks) == 19 and set(checks.values()) == {"only ranks"}
    assert "check_classifiers_train" in checks and "check_fit_idempotent" in checks


# ----------------------------------------------------------------------------- tags
@pytest.mark.parametrize("task, estimator_type, multi_output, expected", [
    ("multilabel", "classifier", True, {"check_classifier_multioutput"}),
    ("multiclass", "classifier", False, {"check_supervised_y_2d"}),
    ("regression", "regressor", True, {"check_regressors_train",
                                       "check_regressors_no_decision_function"}),
    ("ordinal", "regressor", False, {"check_regressors_train", "check_supervised_y_2d",
                                     "check_regressors_no_decision_function"}),
])
def test_tags_and_expected_failed_checks_follow_the_task(task, estimator_type, multi_output,
                                                         expected):
    m = Ridge(task=task)
    tags = m.__sklearn_tags__()
    assert tags.estimator_type == estimator_type
    assert tags.input_tags.sparse and tags.target_tags.required
    assert tags.target_tags.single_output and tags.target_tags.multi_output is multi_output
    if estimator_type == "classifier":
        assert tags.classifier_tags.multi_label is multi_output
        assert tags.classifier_tags.multi_class is (not multi_output)
        assert tags.classifier_tags.poor_score is False
    else:
        assert tags.regressor_tags.poor_score is False
    assert set(m.expected_failed_checks()) == expected


def test_a_method_without_a_task_parameter_takes_every_task_it_handles():
    class Both(Ranker):
        tasks = ("multilabel", "multiclass")
        _poor_score = True
        _expected_failed_checks = {"check_own": "its reason"}

    tags = Both().__sklearn_tags__()
    assert tags.classifier_tags.multi_label and tags.classifier_tags.multi_class
    assert tags.classifier_tags.poor_score is True and tags.target_tags.multi_output
    failed = Both().expected_failed_checks()
    assert list(failed) == ["check_classifier_multioutput", "check_supervised_y_2d",
                            "check_own"]
    assert failed["check_own"] == "its reason"
    assert failed["check_supervised_y_2d"].startswith("a 2-D y is a 0/1 label matrix")
    assert failed["check_classifier_multioutput"].startswith("a 0/1 label matrix is predicted")

    class Zero(Ranker):
        @property
        def threshold(self):
            return 0.0

    assert Zero().expected_failed_checks() == {}        # decision > 0 is the prediction

    class Poor(Ridge):
        _poor_score = True

    assert Poor(task="regression").expected_failed_checks() == {
        "check_regressors_no_decision_function": Ridge(task="regression")
        .expected_failed_checks()["check_regressors_no_decision_function"]}
    assert Poor(task="regression").__sklearn_tags__().regressor_tags.poor_score is True
    assert "-MSE for regression" in Ridge(task="regression").expected_failed_checks()[
        "check_regressors_train"]



class Fixed(BaseMethod):
    """Scores given in advance (one row per sample), to place them exactly at a threshold."""

    name = "fixed-test"
    tasks = ("multilabel", "multiclass")

    def __init__(self, *, scores=None, cut=0.5, task="multilabel"):
        self.scores = scores
        self.cut = cut
        self.task = task

    @property
    def threshold(self):
        return self.cut

    def _fit(self, X, Y, *, observed=None):
        if self._task_name() == "multilabel":
            check_fit_data("Fixed", X, Y, observed)

    def _decision_function(self, X):
        return np.asarray(self.scores, dtype=float)[:len(X)]


X3 = np.ones((3, 2))


def test_two_classes_a_score_at_the_threshold_is_the_first_class():
    m = Fixed(scores=[[0.5], [0.7], [0.2]]).fit(X3, np.array(["a", "b", "a"]))
    assert m.predict(X3).tolist() == ["a", "b", "a"]
    assert m.decision_function(X3).tolist() == pytest.approx([0.0, 0.2, -0.3])
    assert m.score(X3, np.array(["a", "a", "a"])) == pytest.approx(2 / 3)
    assert m.score(X3, np.array(["b", "b", "b"])) == pytest.approx(1 / 3)


def test_one_class_for_a_multi_label_method_is_always_predicted():
    m = Fixed(scores=[[0.7], [0.9], [0.2]]).fit(X3, np.array(["a", "a", "a"]))
    assert m.classes_.tolist() == ["a"]
    assert m.predict(X3).tolist() == ["a", "a", "a"]


def test_classes_need_no_threshold_and_scores_need_no_fit_through_fit():
    scores = [[0.1, 0.7, 0.2], [0.5, 0.2, 0.3], [0.0, 0.1, 0.9]]
    m = Fixed(scores=scores, cut=None, task="multiclass").fit(X3, np.array([5, 6, 7]))
    assert m.predict(X3).tolist() == [6, 5, 7]
    raw = Fixed(scores=scores)
    raw._fit(X3, np.eye(3))                    # as the runner fits
    assert raw.decision_function(X3).tolist() == scores


@pytest.mark.filterwarnings("ignore:invalid value encountered in cast:RuntimeWarning")
def test_a_one_dimensional_y_with_nan_is_refused_naming_y():
    with pytest.raises(ValueError) as exc:
        Fixed(task="multiclass").fit(X3, np.array([0.0, np.nan, 1.0]))
    assert str(exc.value) == "Input y contains NaN."


def test_an_empty_x_is_left_to_the_methods_own_check():
    with pytest.raises(ValueError) as exc:
        Fixed().fit(np.ones((0, 0)), np.ones((0, 2)))
    assert str(exc.value) == "Fixed: empty input (X (0, 0), Y (0, 2))"


def test_features_as_lists_and_sparse_ordinal_columns():
    m = Ridge().fit(X.tolist(), np.eye(6, 2))
    assert m.n_features_in_ == 2
    y = np.array([1.0, 3.0, 3.0, 5.0, 1.0, 5.0])
    m = Ridge(task="ordinal").fit(X, sp.csr_matrix(y[:, None]))
    assert m._levels_.tolist() == [1.0, 3.0, 5.0]


def test_a_score_on_rows_without_the_last_class():
    y = np.array([20, 10, 30, 20, 30, 10])
    m = Ridge(task="multiclass").fit(X, y)
    pred = m.predict(X)
    y_test = np.array([10, 20, 10, 20, 10, 20])
    assert m.score(X, y_test) == pytest.approx(np.mean(pred == y_test))


def test_the_reasons_of_expected_failed_checks():
    reg = Ridge(task="regression").expected_failed_checks()
    assert reg["check_regressors_train"].startswith("score is the task's default metric")
    assert reg["check_regressors_no_decision_function"].startswith(
        "every method scores through decision_function")
    ordinal = Ridge(task="ordinal").expected_failed_checks()
    assert ordinal["check_supervised_y_2d"].startswith("an (n, 1) column is the runner's own")
