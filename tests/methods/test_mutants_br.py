"""BR: properties the older tests left open (found by mutation testing): which route ``auto``
takes, truthful convergence of the ridge solver, the attributes of a regression fit."""

import numpy as np
import pytest
import scipy.sparse as sp

from mlx.methods import br as br_module
from mlx.methods._auto import log_grid
from mlx.methods.br import BR
from mlx.numerics.regpath import RidgePath
from tests.conftest import random_multilabel


def _problem(seed=0, n=60, d=9, L=5, ratio=None):
    return random_multilabel(seed, n, d, L, density=0.5, mask=ratio, positives_observed=True)


def test_a_ridge_solve_that_stops_short_of_its_tolerance_is_not_converged(monkeypatch):
    # Labels with more observed rows than features go to block CG; a tolerance of 0 cannot be
    # met, so CG stops at its limit and the fit must say so.
    X, Y, observed = _problem(seed=3, n=200, d=12, L=4, ratio=0.5)
    model = BR(loss="squared", l2_reg=0.3).fit(X, Y, observed=observed)
    assert model.converged_ and np.all(model.n_iter_ > 0)
    monkeypatch.setattr(br_module, "_RIDGE_RTOL", 0.0)
    model = BR(loss="squared", l2_reg=0.3).fit(X, Y, observed=observed)
    assert not model.converged_ and np.all(model.n_iter_ > 0)


def test_auto_l2_reg_with_full_labels_takes_the_lowest_gcv_on_the_ridge_path():
    X, Y, _ = _problem(seed=1)
    T = Y.toarray()
    T[:, 2] = 0                                                    # an untrained label
    Y = sp.csr_matrix(T)
    model = BR(loss="squared", bias=1.0).fit(X, Y)
    choice = model.auto_["l2_reg"]
    Xb = sp.hstack([X, np.ones((X.shape[0], 1))], format="csr")
    expected = RidgePath(Xb, Y.tocsc()).choose()
    assert (choice.procedure, choice.value) == ("gcv", expected.value)
    W = RidgePath(Xb, Y.tocsc()).coef(expected.value)
    W[:, 2] = 0.0
    np.testing.assert_allclose(model.W_, W, rtol=1e-10, atol=1e-12)
    assert model.converged_ and not model.n_iter_.any() and model.n_iter_.shape == (5,)
    assert model.n_iter_.dtype == np.int64
    np.testing.assert_array_equal(model.untrained_labels_, [2])


@pytest.mark.parametrize("loss, param", [("squared", "l2_reg"), ("logistic", "C"),
                                         ("squared_hinge", "C")])
def test_auto_with_missing_labels_or_a_cost_chooses_on_a_holdout_split(loss, param):
    X, Y, observed = _problem(seed=2, ratio=0.7 if loss == "squared" else None)
    model = BR(loss=loss).fit(X, Y, observed=observed)
    choice = model.auto_[param]
    assert choice.procedure == "holdout" and choice.grid == tuple(log_grid(1.0))
    assert list(model.auto_)[0] == param         # chosen first, before any later choice


@pytest.mark.parametrize("bias, procedure", [(-1.0, "gcv"), (0.5, "holdout"), (0.0, "holdout")])
def test_auto_l2_reg_avoids_a_gram_matrix_over_the_dense_limit(monkeypatch, bias, procedure):
    # n > d = the limit: without a bias column the smaller Gram matrix (d x d) fits; the bias
    # column makes it one larger than the limit, and the hold-out route is taken instead.
    X, Y, _ = _problem(seed=4, n=40, d=8)
    monkeypatch.setattr(br_module, "_DENSE_MAX", 8)
    model = BR(loss="squared", bias=bias).fit(X, Y)
    assert model.auto_["l2_reg"].procedure == procedure


def test_a_regression_fit_has_no_untrained_targets_and_no_iterations():
    rng = np.random.default_rng(5)
    X = rng.random((30, 4))
    T = X @ rng.standard_normal((4, 3)) + 0.05 * rng.standard_normal((30, 3))
    model = BR(loss="squared", l2_reg=0.1, bias=2.0, task="regression").fit(sp.csr_matrix(X), T)
    assert model.bias_ == 2.0 and model.n_features_in_ == 4 and model.W_.shape == (5, 3)
    assert model.untrained_labels_.size == 0 and model.untrained_labels_.dtype == np.int64
    np.testing.assert_array_equal(model.n_iter_, np.zeros(3, dtype=np.int64))
    assert model.converged_ is True
    auto = BR(loss="auto", task="regression").fit(sp.csr_matrix(X), T)
    assert auto.auto_["l2_reg"].procedure == "gcv"
    np.testing.assert_allclose(auto.W_, RidgePath(sp.csr_matrix(X), T).coef(
        auto.auto_["l2_reg"].value), rtol=1e-10, atol=1e-12)


def test_a_regression_task_is_declined_for_other_losses_only():
    from mlx.methods.base import FitContext

    for task in ("regression", "ordinal"):
        assert BR(loss="auto").skip(FitContext(task=task)) is None
        assert BR(loss="squared_hinge").skip(FitContext(task=task)) == (
            f"br with loss='squared_hinge' does not handle {task} tasks (loss='squared' does)")
    assert BR(loss="logistic").skip(FitContext(task="multilabel")) is None
    assert BR(loss="auto", task="ordinal")._loss() == "squared"
    assert BR(loss="auto", task="multiclass")._loss() == "logistic"


def test_full_labels_with_a_given_penalty_are_solved_in_closed_form():
    X, Y, _ = _problem(seed=6)
    model = BR(loss="squared", l2_reg=0.3).fit(X, Y)
    assert model.converged_ and model.n_iter_.dtype == np.int64 and not model.n_iter_.any()
    model = BR(loss="squared", l2_reg=0.3).fit(X, sp.csr_matrix(Y.shape))    # nothing to train
    assert model.converged_ is True and not model.W_.any()
    assert model.n_iter_.dtype == np.int64 and model.n_iter_.shape == (Y.shape[1],)


def test_a_label_observed_on_as_many_rows_as_features_takes_the_dual_route():
    X, Y, observed = _problem(seed=3, n=200, d=12, L=3, ratio=0.5)
    omega, T = observed.toarray(), Y.toarray()
    omega[:, 0] = 0
    omega[:12, 0] = 1                                    # |Omega_0| = n_features: dual Cholesky
    T[0, 0] = 1
    model = BR(loss="squared", l2_reg=0.3).fit(X, sp.csr_matrix(T * omega),
                                               observed=sp.csr_matrix(omega))
    assert model.n_iter_[0] == 0 and np.all(model.n_iter_[1:] > 0)


def test_a_zero_bias_still_adds_its_column_and_the_gcv_choice_keeps_its_path():
    rng = np.random.default_rng(7)
    X = sp.csr_matrix(rng.random((30, 4)))
    T = rng.standard_normal((30, 2))
    model = BR(loss="squared", l2_reg=0.1, bias=0.0, task="regression").fit(X, T)
    assert model.W_.shape == (5, 2) and model.n_iter_.dtype == np.int64
    model = BR(loss="squared", task="regression").fit(X, T)
    expected = RidgePath(X, T).choose()
    choice = model.auto_["l2_reg"]
    assert choice.grid == tuple(expected.grid) and choice.scores == tuple(expected.scores)
    bad = T.copy()
    bad[3, 1] = np.nan
    with pytest.raises(ValueError, match="^BR: Y contains NaN or infinity"):
        BR(loss="squared", task="regression").fit(X, bad)
    from mlx.methods.base import InvalidParameterError

    with pytest.raises(InvalidParameterError) as exc:
        BR(loss="logistic", task="regression").fit(X, T)
    assert exc.value.param == "loss"


def test_a_label_with_one_positive_is_trained_and_a_zero_bias_adds_its_row():
    X, Y, _ = _problem(seed=8)
    T = Y.toarray()
    T[:, 1] = 0
    T[5, 1] = 1                                                    # exactly one positive
    model = BR(loss="squared", l2_reg=0.3, bias=0.0).fit(X, sp.csr_matrix(T))
    assert 1 not in model.untrained_labels_ and model.W_[:, 1].any()
    assert model.W_.shape == (X.shape[1] + 1, T.shape[1]) and model.auto_ == {}


# ------------------------------------------------------------------ auto with missing labels
def _masked_problem(seed=11, n=80, d=6, L=5, ratio=0.5):
    """Labels planted from X, half of them unobserved: treating the unobserved entries as
    negatives moves every label's targets."""
    rng = np.random.default_rng(seed)
    X = sp.csr_matrix(rng.random((n, d)))
    full = (X @ rng.standard_normal((d, L)) > 0.2).astype(float)
    observed = sp.csr_matrix((rng.random((n, L)) < ratio).astype(float))
    return X, sp.csr_matrix(full).multiply(observed).tocsr(), observed


@pytest.mark.parametrize("loss, param", [("squared", "l2_reg"), ("logistic", "C")])
def test_auto_with_missing_labels_scores_and_refits_on_the_observed_entries(loss, param):
    from mlx.methods._auto import holdout_split, validation_score

    X, Y, observed = _masked_problem()
    model = BR(loss=loss).fit(X, Y, observed=observed)
    choice = model.auto_[param]
    fit, val = holdout_split(model, X.shape[0])

    def score(value, mask):
        cand = BR(loss=loss, **{param: value}).fit(X[fit], Y[fit], observed=mask)
        return validation_score(cand, X[val], Y[val], "multilabel")

    scored = [(v, s) for v, s in zip(choice.grid, choice.scores) if not np.isnan(s)]
    assert len(scored) >= 3
    # Each candidate was fitted on the fit rows with their mask ...
    for value, s in scored:
        assert s == pytest.approx(score(value, observed[fit]), rel=1e-12, abs=1e-12)
    # ... which matters here: without it some score would differ.
    assert any(s != pytest.approx(score(v, None), rel=1e-9, abs=1e-12) for v, s in scored)
    # The final model is the fit on every row, with the mask, at the chosen value.
    ref = BR(loss=loss, **{param: choice.value}).fit(X, Y, observed=observed)
    np.testing.assert_allclose(model.W_, ref.W_, rtol=1e-9, atol=1e-12)
    unmasked = BR(loss=loss, **{param: choice.value}).fit(X, Y)
    assert not np.allclose(model.W_, unmasked.W_, rtol=1e-6, atol=1e-9)


def test_the_ridge_cg_stops_after_twice_as_many_iterations_as_features(monkeypatch):
    # A tolerance of 0 cannot be met: every label runs to the limit, max(100, 2 n_features).
    X, Y, observed = _problem(seed=3, n=400, d=60, L=3, ratio=0.5)
    monkeypatch.setattr(br_module, "_RIDGE_RTOL", 0.0)
    with np.errstate(invalid="ignore", divide="ignore"):
        model = BR(loss="squared", l2_reg=0.3).fit(X, Y, observed=observed)
    np.testing.assert_array_equal(model.n_iter_, [120, 120, 120])
    assert model.converged_ is False


@pytest.mark.parametrize("missing", [False, True])
def test_a_multiclass_fit_of_the_squared_loss_adds_no_frequencies(monkeypatch, missing):
    # GCV path (full labels), or a hold-out choice (the Gram matrix over the limit): either
    # way the label-frequency fallback is for multi-label tasks only.
    rng = np.random.default_rng(9)
    X = sp.csr_matrix(rng.random((60, 8)))
    Y = sp.csr_matrix(np.eye(3)[np.asarray(X @ rng.standard_normal((8, 3))).argmax(axis=1)])
    if missing:
        monkeypatch.setattr(br_module, "_DENSE_MAX", 8)
    model = BR(loss="squared", bias=1.0, task="multiclass").fit(X, Y)
    assert model.auto_["l2_reg"].procedure == ("holdout" if missing else "gcv")
    assert set(model.auto_) == {"l2_reg"}
    np.testing.assert_array_equal(model.decision_function(X), model._decision_function(X))


def test_scoring_rows_of_another_width_names_br():
    X, Y, _ = _problem(seed=10)
    model = BR(loss="squared", l2_reg=0.3).fit(X, Y)
    with pytest.raises(ValueError) as exc:
        model.decision_function(X[:, :4])
    assert str(exc.value) == ("BR: X has 4 features, but BR is expecting 9 features as input "
                              "(it was fitted with 9)")
