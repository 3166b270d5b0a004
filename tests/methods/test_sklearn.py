"""The methods as scikit-learn estimators: check_estimator per method on its task, model
selection (clone, GridSearchCV, cross_val_score) on a multi-label set, and the two doors (the
runner's matrices and scikit-learn's 1-D targets) giving the same model."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.base import clone
from sklearn.metrics import f1_score, make_scorer
from sklearn.model_selection import GridSearchCV, KFold, cross_val_score
from sklearn.utils.estimator_checks import check_estimator

from mlx import methods
from mlx.methods import (
    BCS,
    BR,
    CPLST,
    LEML,
    LSVV,
    METHODS,
    PLT,
    WSABIE,
    Constant,
    Landmark,
    MoM,
    Omikuji,
)

# Each method on each task it handles, with small iteration counts (fast, same code paths).
CHECKED = [
    ("leml", LEML(rank=2, max_iter=3)),
    ("br", BR()),
    ("br-multiclass", BR(task="multiclass")),
    ("br-regression", BR(task="regression", loss="squared")),
    ("br-ordinal", BR(task="ordinal", loss="squared")),
    # explicit penalties: on the checks' 42 rows (labels 67-81% frequent) auto's fallback ends
    # at the constant, whose decision > 0 and predictions then agree (both empty), which hides
    # the model's own behaviour from the checks; auto is tested in test_auto*.py
    ("cplst", CPLST(rank=2, l2_reg=1.0)),
    ("bcs", BCS(rank=2, max_iter=3, predict_iter=3, random_state=0, weight_precision=1.0)),
    ("wsabie", WSABIE(rank=2)),
    ("mom", MoM(rank=2, binarize=True)),
    ("lsvv", LSVV(epochs=3, min_steps=0, tau_A=1e-6)),     # explicit, as cplst and bcs
    ("lsvv-multiclass", LSVV(task="multiclass", epochs=3, min_steps=0)),
    ("lsvv-regression", LSVV(task="regression", epochs=3, min_steps=0)),
    ("landmark-regression", Landmark(task="regression", n_landmarks=5)),
    ("landmark-ordinal", Landmark(task="ordinal", n_landmarks=5)),
    ("constant", Constant()),
    ("constant-multiclass", Constant(task="multiclass")),
    ("constant-regression", Constant(task="regression")),
    ("constant-ordinal", Constant(task="ordinal")),
    ("plt", PLT(random_state=0)),
    ("omikuji", Omikuji()),
]


def test_every_method_is_exported_and_checked():
    exported = {getattr(methods, n) for n in methods.__all__ if n != "METHODS"}
    assert exported == {METHODS.get(n) for n in METHODS.names()}
    assert {type(est) for _, est in CHECKED} == exported


@pytest.mark.parametrize("label, estimator", CHECKED, ids=[c[0] for c in CHECKED])
def test_check_estimator(label, estimator):
    declared = estimator.expected_failed_checks()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        results = check_estimator(estimator, expected_failed_checks=declared, on_fail=None)
    failed = [(r["check_name"], str(r["exception"])[:200]) for r in results
              if r["status"] == "failed"]
    assert not failed
    xfailed = {r["check_name"] for r in results if r["status"] == "xfail"}
    # Every declared failure does fail: no stale excuses.
    assert set(declared) == xfailed
    assert all(reason and len(reason) > 30 for reason in declared.values())
    passed = sum(r["status"] == "passed" for r in results)
    assert passed >= 30


def _multilabel(n=160, d=20, L=8, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d))
    W = rng.standard_normal((d, L))
    Y = (X @ W > 1.0).astype(np.int64)
    return sp.csr_matrix(X), Y


def test_grid_search_and_cross_val_score_on_multilabel_data():
    X, Y = _multilabel(L=20)
    scorer = make_scorer(f1_score, average="samples", zero_division=0)
    search = GridSearchCV(LEML(rank=10, loss="logistic", max_iter=5, random_state=0),
                          {"l2_reg": [1e-3, 1e3]}, scoring=scorer, cv=3)
    search.fit(X, Y)
    assert search.best_params_ == {"l2_reg": 1e-3}       # heavy shrinkage predicts nothing
    assert search.cv_results_["mean_test_score"][0] > search.cv_results_["mean_test_score"][1]
    assert isinstance(search.best_estimator_, LEML)
    assert search.best_estimator_.predict(X).shape == Y.shape
    # score() is the multi-label default metric, P@1, as the runner computes it
    scores = cross_val_score(LEML(rank=4, max_iter=5, random_state=0), X, Y,
                             cv=KFold(3, shuffle=True, random_state=0))
    assert scores.shape == (3,) and np.all((scores > 0.5) & (scores <= 1))
    from mlx.metrics import evaluate
    model = LEML(rank=4, max_iter=5, random_state=0).fit(X[:100], Y[:100])
    p1 = evaluate(model, X[100:], sp.csr_matrix(Y[100:]), ["p@1"])["p@1"][0]
    assert model.score(X[100:], Y[100:]) == pytest.approx(p1)


def test_clone_keeps_parameters_and_drops_fit():
    model = LEML(rank=3, l2_reg=0.5).fit(*_multilabel())
    copy = clone(model)
    assert copy.get_params() == model.get_params() and not hasattr(copy, "W_")


def test_one_implementation_two_doors():
    """1-D classes through scikit-learn's door fit the same model as one-hot columns through
    the runner's, and predict their arg-max."""
    rng = np.random.default_rng(1)
    X = rng.standard_normal((90, 6))
    y = np.array(["a", "b", "c"])[np.argmax(X[:, :3], axis=1)]
    one_hot = sp.csr_matrix((y[:, None] == np.array(["a", "b", "c"])).astype(float))
    a = LEML(rank=3, max_iter=4, random_state=0).fit(X, y)
    b = LEML(rank=3, max_iter=4, random_state=0).fit(X, one_hot)
    np.testing.assert_array_equal(a.decision_function(X), b.decision_function(X))
    assert list(a.classes_) == ["a", "b", "c"]
    np.testing.assert_array_equal(a.predict(X), a.classes_[np.argmax(b.decision_function(X), 1)])
    assert a.score(X, y) == pytest.approx(np.mean(a.predict(X) == y))


def test_ordinal_predicts_training_levels_and_regression_scores_neg_mse():
    rng = np.random.default_rng(2)
    X = rng.standard_normal((80, 4))
    t = X @ np.array([1.0, -2.0, 0.5, 0.0])
    levels = np.digitize(t, [-1.0, 0.0, 1.0]) + 1             # 1..4
    model = BR(task="ordinal", loss="squared", bias=1.0).fit(X, levels)
    pred = model.predict(X)
    scores = model.decision_function(X)
    nearest = np.array([1, 2, 3, 4])[np.argmin(np.abs(scores[:, None] - [1, 2, 3, 4]), axis=1)]
    np.testing.assert_array_equal(pred, nearest)
    assert np.mean(pred == levels) > 0.6
    assert model.score(X, levels) == pytest.approx(-np.mean(np.abs(pred - levels)))
    reg = BR(task="regression", loss="squared").fit(X, t)
    assert reg.score(X, t) == pytest.approx(-np.mean((reg.predict(X) - t) ** 2))


def test_fit_keyword_arguments_are_the_runners():
    X, Y = _multilabel()
    observed = sp.csr_matrix(np.ones(Y.shape))
    a = LEML(rank=3, max_iter=3, random_state=0).fit(X, Y, observed=observed)
    b = LEML(rank=3, max_iter=3, random_state=0).fit(X, Y)
    np.testing.assert_allclose(a.decision_function(X), b.decision_function(X))
    with pytest.raises(TypeError, match="LEML.fit does not use unlabelled rows"):
        LEML(rank=3).fit(X, Y, unlabelled=X)
    LSVV(epochs=1, tau_I=0.1, random_state=0).fit(X, Y, unlabelled=X[:10])


def test_a_ranking_only_method_refuses_predict():
    X, Y = _multilabel()
    model = WSABIE(rank=2, random_state=0).fit(X, Y)
    with pytest.raises(ValueError, match="WSABIE has no decision threshold"):
        model.predict(X)
    assert model.decision_function(X).shape == Y.shape
