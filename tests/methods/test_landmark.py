"""Landmarking (Kar and Jain 2012): RegLand against kernel ridge regression, Forward Greedy
Selection against planted supports and least squares, ORLand's predictions (its objective and
solver: tests/numerics/test_exc.py), KR against a brute-force loop, and the documented
bad-input messages."""

import math

import numpy as np
import pytest
import scipy.sparse as sp

from mlx.methods import METHODS
from mlx.methods.base import FitContext, InvalidParameterError
from mlx.methods.landmark import Landmark
from mlx.numerics.fgs import forward_greedy_selection
from mlx.numerics.similarity import similarity


def _regression(seed=0, n=60, p=4, targets=1):
    rng = np.random.default_rng(seed)
    X = rng.uniform(0, 1, size=(n, p))
    T = np.column_stack([np.sin(3 * X[:, 0]) + X[:, 1] ** 2 + 0.05 * rng.normal(size=n)
                         for _ in range(targets)])
    T[:, 1:] *= -2.0                                     # other columns differ
    return X, T


def _ordinal(seed=0, n=80, p=3, levels=(2, 3, 5, 8)):
    rng = np.random.default_rng(seed)
    X = rng.uniform(0, 1, size=(n, p))
    latent = X @ np.array([2.0, -1.0, 0.5][:p]) + 0.1 * rng.normal(size=n)
    edges = np.quantile(latent, np.linspace(0, 1, len(levels) + 1)[1:-1])
    y = np.asarray(levels, dtype=float)[np.searchsorted(edges, latent)]
    return X, y[:, None]


def test_registered():
    assert METHODS.get("landmark") is Landmark
    assert Landmark.tasks == ("regression", "ordinal")


# ============================================================================ RegLand vs KRR
def test_regland_with_every_point_a_landmark_is_ridge_in_psi_and_approaches_krr():
    """Gaussian (PSD) similarity, all n training rows as landmarks, squared loss with
    epsilon = 0 and no intercept: RegLand minimises 1/2 ||w||^2 + C ||Psi w - y||^2 with
    Psi = K / sqrt(n), i.e. kernel ridge regression with the kernel Psi Psi' = K^2 / n and
    ridge 1/(2C) -- exactly (1e-8). Its spectral filter s / (s^2 + n/(2C)) tends to KRR's
    1 / (s + mu) with the matching mu = n / (2C) as C grows: the gap falls like 1/C
    (~4e-4 at C = 1e4, ~4e-6 at C = 1e6 here; asserted 1e-3 and 1e-5)."""
    rng = np.random.default_rng(0)
    n = 30
    X = (np.arange(n) + 0.2 * rng.uniform(-1, 1, n))[:, None]      # K well conditioned
    y = np.sin(X[:, 0] / 3)
    Xt = rng.uniform(0, n - 1, size=(20, 1))
    sigma = 0.6
    K = similarity("gaussian", X, X, params={"bandwidth": sigma})
    Kt = similarity("gaussian", Xt, X, params={"bandwidth": sigma})
    gaps = []
    for C, krr_tol in ((1e2, None), (1e4, 1e-3), (1e6, 1e-5)):
        model = Landmark(model="regland", similarity="gaussian", bandwidth=sigma, n_landmarks=n,
                         C=C, epsilon=0.0, fit_intercept=False, tol=1e-12, random_state=0)
        pred = model.fit(X, y[:, None]).decision_function(Xt)[:, 0]
        assert np.array_equal(model.landmark_indices_, np.arange(n))
        lam = 1.0 / (2.0 * C)
        ridge_psi = (Kt @ K / n) @ np.linalg.solve(K @ K / n + lam * np.eye(n), y)
        np.testing.assert_allclose(pred, ridge_psi, rtol=0, atol=1e-8)
        krr = Kt @ np.linalg.solve(K + n * lam * np.eye(n), y)
        gaps.append(np.abs(pred - krr).max())
        if krr_tol is not None:
            assert gaps[-1] < krr_tol
    assert gaps[0] > gaps[1] > gaps[2]


def test_regland_l1_loss_is_reproducible_and_fits():
    X, T = _regression(1, n=80)
    a = Landmark(model="regland", loss="epsilon_insensitive", epsilon=0.01, n_landmarks=20,
                 random_state=3).fit(X, T)
    b = Landmark(model="regland", loss="epsilon_insensitive", epsilon=0.01, n_landmarks=20,
                 random_state=3).fit(X, T)
    np.testing.assert_array_equal(a.coef_, b.coef_)      # liblinear's rand() is seeded
    mse = np.mean((a.decision_function(X) - T) ** 2)
    assert mse < 0.2 * T.var()


# ============================================================================ FGS
def test_fgs_recovers_a_planted_support():
    rng = np.random.default_rng(0)
    n, d = 200, 40
    A = rng.normal(size=(n, d))
    A /= np.linalg.norm(A, axis=0)                       # equal column norms
    support = np.array([3, 17, 29, 36, 8])
    w = np.zeros(d)
    w[support] = [2.0, -1.5, 1.0, 0.8, -2.5]
    y = A @ w
    res = forward_greedy_selection(A, y, 5)
    assert sorted(res.support) == sorted(support)
    assert res.support[0] == 8                           # the largest |gradient| first
    np.testing.assert_allclose(res.coef, w, atol=1e-10)
    assert not res.stopped_early
    # With noise and a larger budget the planted coordinates still come first.
    noisy = forward_greedy_selection(A, y + 0.01 * rng.normal(size=n), 8)
    assert set(noisy.support[:5]) == set(support)


def test_fgs_refits_least_squares_on_its_support_each_step():
    rng = np.random.default_rng(1)
    A = rng.normal(size=(50, 12))
    y = rng.normal(size=50)
    res = forward_greedy_selection(A, y, 6)
    assert res.support.size == 6 and np.count_nonzero(res.coef) == 6
    ls = np.linalg.lstsq(A[:, res.support], y, rcond=None)[0]
    np.testing.assert_allclose(res.coef[res.support], ls, rtol=1e-10, atol=1e-12)
    assert np.all(np.diff(res.objective) <= 1e-15)       # non-increasing, one value per step
    assert res.objective.size == 7
    # Greedy rule, step by step: each new coordinate had the largest |A'(y - A w)|.
    w = np.zeros(12)
    for t, j in enumerate(res.support):
        grad = np.abs(A.T @ (y - A @ w))
        grad[res.support[:t]] = -1
        assert j == int(np.argmax(grad))
        sel = res.support[:t + 1]
        w = np.zeros(12)
        w[sel] = np.linalg.lstsq(A[:, sel], y, rcond=None)[0]


def test_fgs_stops_early_when_nothing_is_left_to_gain():
    rng = np.random.default_rng(2)
    A = rng.normal(size=(30, 6))
    A[:, 4] = A[:, 1]                                    # a duplicate column
    y = A[:, [1, 2]] @ np.array([1.0, -1.0])
    res = forward_greedy_selection(A, y, 6)
    assert res.stopped_early and sorted(res.support) in ([1, 2], [2, 4])
    np.testing.assert_allclose(A @ res.coef, y, atol=1e-10)
    zero = forward_greedy_selection(A, np.zeros(30), 3)
    assert zero.support.size == 0 and zero.stopped_early and not zero.coef.any()
    assert forward_greedy_selection(A, y, 100).support.size <= 6   # k > d is d


def test_regland_sp_selects_the_planted_landmarks():
    """y = sum_j c_j K(x, x_{s_j}) / sqrt(n) with every row a landmark and a narrow Gaussian:
    RegLand-Sp with sparsity 3 finds the rows s_j and reproduces y."""
    rng = np.random.default_rng(4)
    n = 40
    X = rng.uniform(0, 10, size=(n, 2))
    planted = np.array([5, 21, 33])
    K = similarity("gaussian", X, X[planted], params={"bandwidth": 0.4})
    y = K @ np.array([3.0, -2.0, 1.5]) / math.sqrt(n)
    model = Landmark(model="regland_sp", similarity="gaussian", bandwidth=0.4, n_landmarks=n,
                     sparsity=3, fit_intercept=False, random_state=0).fit(X, y[:, None])
    chosen = model.landmark_indices_[model.support_[0]]
    assert sorted(chosen) == sorted(planted)
    np.testing.assert_allclose(model.decision_function(X)[:, 0], y, atol=1e-10)
    assert model.n_iter_[0] == 3


def test_default_sparsity_is_half_the_landmarks():
    X, T = _regression(5, n=50)
    model = Landmark(model="regland_sp", n_landmarks=9, random_state=0).fit(X, T)
    assert model.support_[0].size == 5                   # ceil(9 / 2)


# ============================================================================ ORLand
def test_orland_predicts_training_levels_monotone_in_its_latent_score():
    X, y = _ordinal(0)
    model = Landmark(model="orland", task="ordinal", n_landmarks=30, random_state=1).fit(X, y)
    rng = np.random.default_rng(9)
    X_new = rng.uniform(-0.5, 1.5, size=(300, X.shape[1]))
    latent = model.latent_scores(X_new)[:, 0]
    pred = model.decision_function(X_new)[:, 0]
    assert set(np.unique(pred)) <= {2.0, 3.0, 5.0, 8.0}
    order = np.argsort(latent, kind="stable")
    assert np.all(np.diff(pred[order]) >= 0)             # the threshold order is respected
    levels = np.array([2.0, 3.0, 5.0, 8.0])
    np.testing.assert_array_equal(pred, levels[np.clip(np.ceil(latent - 0.5), 0, 3)
                                               .astype(int)])
    train_pred = model.decision_function(X)[:, 0]
    mae = np.abs(train_pred - y[:, 0]).mean()
    assert mae < 0.5 * np.abs(y[:, 0] - np.median(y)).mean()
    assert model.converged_


def test_orland_fits_each_target_column_on_its_own():
    X, y = _ordinal(1)
    y2 = np.column_stack([y[:, 0], 10 - y[:, 0]])
    both = Landmark(model="orland", task="ordinal", n_landmarks=20, random_state=0).fit(X, y2)
    second = Landmark(model="orland", task="ordinal", n_landmarks=20,
                      random_state=0).fit(X, y2[:, 1:])
    np.testing.assert_array_equal(both.decision_function(X)[:, 1],
                                  second.decision_function(X)[:, 0])
    assert [lv.tolist() for lv in both.levels_] == [[2, 3, 5, 8], [2, 5, 7, 8]]


# ============================================================================ KR
def _kr_loop(X_train, T, X, K):
    out = np.empty((X.shape[0], T.shape[1]))
    for q, x in enumerate(X):
        weights = [K(x, xt) for xt in X_train]
        den = sum(weights)
        for j in range(T.shape[1]):
            out[q, j] = sum(wt * t for wt, t in zip(weights, T[:, j])) / den
    return out


@pytest.mark.parametrize("name", ["sigmoid", "manhattan", "euclidean", "sqeuclidean", "gaussian"])
def test_kr_equals_a_brute_force_loop(name):
    X, T = _regression(2, n=12, p=3, targets=2)
    X_new = np.random.default_rng(3).uniform(0, 1, size=(5, 3))
    model = Landmark(model="kr", similarity=name, n_landmarks=4, random_state=0).fit(X, T)
    p = X.shape[1]
    if name == "gaussian":                                # the bandwidth rule: mean distance
        rows = model.landmark_indices_
        sigma = np.mean([np.linalg.norm(X[r] - X[i]) for r in rows for i in range(12) if i != r])
        assert model.similarity_params_ == {"bandwidth": pytest.approx(sigma, rel=1e-12)}
    kernels = {
        "sigmoid": lambda x, y: math.tanh(float(x @ y) / p - 1.0),
        "manhattan": lambda x, y: -float(np.abs(x - y).sum()),
        "euclidean": lambda x, y: -math.sqrt(float(((x - y) ** 2).sum())),
        "sqeuclidean": lambda x, y: -float(((x - y) ** 2).sum()),
        "gaussian": lambda x, y: math.exp(-float(((x - y) ** 2).sum())
                                          / (2 * model.similarity_params_["bandwidth"] ** 2)),
    }
    expected = _kr_loop(X, T, X_new, kernels[name])
    np.testing.assert_allclose(model.decision_function(X_new), expected, rtol=1e-10)
    np.testing.assert_allclose(model.decision_function(sp.csr_matrix(X_new)), expected,
                               rtol=1e-10)


def test_kr_on_an_ordinal_task_rounds_to_the_nearest_training_level():
    X, y = _ordinal(3, n=30)
    X_new = np.random.default_rng(4).uniform(0, 1, size=(40, 3))
    raw = Landmark(model="kr", similarity="manhattan").fit(X, y).decision_function(X_new)[:, 0]
    pred = Landmark(model="kr", similarity="manhattan",
                    task="ordinal").fit(X, y).decision_function(X_new)[:, 0]
    levels = np.array([2.0, 3.0, 5.0, 8.0])
    dist = np.abs(raw[:, None] - levels[None, :])
    nearest = levels[np.argmin(dist, axis=1)]            # argmin: the lower level on ties
    np.testing.assert_array_equal(pred, nearest)


# ============================================================================ landmarks
def test_landmarks_are_training_rows_drawn_by_the_seed_and_psi_is_scaled():
    X, T = _regression(6, n=40)
    a = Landmark(n_landmarks=7, random_state=11).fit(X, T)
    b = Landmark(n_landmarks=7, random_state=11).fit(X, T)
    c = Landmark(n_landmarks=7, random_state=12).fit(X, T)
    idx = a.landmark_indices_
    assert idx.size == 7 and np.unique(idx).size == 7 and np.all(np.diff(idx) > 0)
    np.testing.assert_array_equal(a.landmarks_, X[idx])
    np.testing.assert_array_equal(idx, b.landmark_indices_)
    assert not np.array_equal(idx, c.landmark_indices_)
    psi = a._features(X)
    expected = -np.abs(X[:, None, :] - X[idx][None, :, :]).sum(axis=2) / math.sqrt(7)
    np.testing.assert_allclose(psi, expected, rtol=1e-13)
    np.testing.assert_allclose(a.decision_function(X), psi @ a.coef_ + a.intercept_)


def test_sigmoid_uses_the_papers_fixed_parameters():
    X, T = _regression(7, n=20, p=5)
    model = Landmark(similarity="sigmoid", n_landmarks=5, random_state=0).fit(X, T)
    assert model.similarity_params_ == {"scale": 1 / 5, "offset": -1.0}


@pytest.mark.parametrize("model", ["regland", "regland_sp"])
def test_several_target_columns_are_fitted_one_by_one(model):
    X, T = _regression(8, n=50, targets=2)
    both = Landmark(model=model, n_landmarks=10, random_state=0).fit(X, T)
    for j in range(2):
        one = Landmark(model=model, n_landmarks=10, random_state=0).fit(X, T[:, j:j + 1])
        np.testing.assert_allclose(both.decision_function(X)[:, j],
                                   one.decision_function(X)[:, 0], rtol=1e-10, atol=1e-12)


def test_intercept_centres_and_no_intercept_does_not():
    X, T = _regression(9, n=50)
    T = T + 100.0
    with_b = Landmark(model="regland_sp", n_landmarks=10, sparsity=10, random_state=0).fit(X, T)
    assert abs(with_b.decision_function(X).mean() - T.mean()) < 1e-8   # OLS with intercept
    psi = with_b._features(X)
    design = np.hstack([psi, np.ones((50, 1))])
    ls = design @ np.linalg.lstsq(design, T, rcond=None)[0]
    np.testing.assert_allclose(with_b.decision_function(X), ls, rtol=1e-9)


# ============================================================================ bad input
def test_n_landmarks_above_the_training_rows():
    X, T = _regression(10, n=12)
    message = ("The 'n_landmarks' parameter of Landmark must be in the range [1, 12] here: the "
               "landmarks are drawn without replacement from the 12 training rows. Got 13 "
               "instead.")
    for model in ("regland", "regland_sp", "orland"):
        method = Landmark(model=model, n_landmarks=13, sparsity=3,
                          task="ordinal" if model == "orland" else "regression")
        with pytest.raises(InvalidParameterError) as info:
            method.check_context(FitContext(task=method.task, n_samples=12, n_features=4,
                                            n_labels=1))
        assert info.value.param == "n_landmarks" and str(info.value) == message
        method.check_context(FitContext(task=method.task, n_samples=0))   # 0: size unknown
        method.check_context(FitContext(task="multilabel", n_samples=12))  # skip() declines
        with pytest.raises(InvalidParameterError) as info:
            method.fit(X, np.round(T * 3) if model == "orland" else T)
        assert info.value.param == "n_landmarks" and str(info.value) == message
    kr = Landmark(model="kr", n_landmarks=13)                  # KR has no landmarks
    kr.check_context(FitContext(task="regression", n_samples=12))
    kr.fit(X, T)


def test_sparsity_above_n_landmarks():
    message = ("The 'sparsity' parameter of Landmark must be at most n_landmarks (10) with "
               "model='regland_sp' (it counts landmarks kept). Got 11 instead.")
    method = Landmark(model="regland_sp", n_landmarks=10, sparsity=11)
    for call in (method._validate_params,
                 lambda: method.check_context(FitContext(task="regression", n_samples=50)),
                 lambda: method.fit(*_regression(11, n=50))):
        with pytest.raises(InvalidParameterError) as info:
            call()
        assert info.value.param == "sparsity" and str(info.value) == message
    Landmark(model="regland", n_landmarks=10, sparsity=11)._validate_params()  # unused there
    Landmark(model="regland_sp", n_landmarks=10, sparsity=10)._validate_params()


def test_ordinal_target_with_one_level():
    X, _ = _regression(12, n=20)
    y = np.column_stack([np.arange(20) % 3, np.full(20, 4.0)])
    with pytest.raises(ValueError) as info:
        Landmark(model="orland", task="ordinal", n_landmarks=5).fit(X, y)
    assert str(info.value) == ("Landmark: ordinal target column 1 has a single level (4); "
                               "ordinal regression needs at least two")


def test_orland_needs_an_ordinal_task():
    X, T = _regression(13, n=20)
    method = Landmark(model="orland", n_landmarks=5)
    assert method.skip(FitContext(task="regression")) == (
        "landmark with model='orland' needs ordinal targets (levels); use model='regland' or "
        "'regland_sp' for regression")
    assert method.skip(FitContext(task="ordinal")) is None
    with pytest.raises(InvalidParameterError) as info:
        method.fit(X, T)
    assert info.value.param == "model" and str(info.value) == (
        "Landmark: model='orland' needs an ordinal task (levels); got task='regression'")


def test_non_finite_similarity_names_the_similarity_and_the_row():
    X, T = _regression(14, n=20)
    model = Landmark(similarity="manhattan", n_landmarks=5, random_state=0).fit(X, T)
    X_new = np.random.default_rng(0).uniform(size=(6, 4))
    X_new[4] = [1e308, -1e308, 1e308, -1e308]
    with pytest.raises(ValueError) as info:
        model.decision_function(X_new)
    assert str(info.value) == (
        "Landmark: similarity 'manhattan' is NaN or infinite on row 4 (against reference row "
        "0): the feature values overflow float64 in it; rescale the features (e.g. "
        "preprocess: [minmax])")
    kr = Landmark(model="kr", similarity="euclidean").fit(X, T)
    with pytest.raises(ValueError, match="^Landmark: similarity 'euclidean' is NaN or infinite "
                                         "on row 4 "):
        kr.decision_function(X_new)
    X_bad = X.copy()
    X_bad[7] = X_new[4]
    with pytest.raises(ValueError, match="^Landmark: similarity 'sigmoid' is NaN or infinite on "
                                         "row "):
        Landmark(similarity="sigmoid", n_landmarks=20, random_state=0).fit(X_bad, T)


def test_partial_mask_and_shapes_are_refused():
    X, T = _regression(15, n=20)
    mask = sp.csr_matrix(np.ones_like(T))
    mask[3, 0] = 0
    mask.eliminate_zeros()
    with pytest.raises(ValueError) as info:
        Landmark(n_landmarks=5).fit(X, T, observed=mask)
    assert str(info.value) == ("Landmark: a regression task has no missing-label mask; pass "
                               "observed=None")
    with pytest.raises(ValueError) as info:
        Landmark(n_landmarks=5).fit(X, T[:-1])
    assert str(info.value) == ("Landmark: X has shape (20, 4) but Y has shape (19, 1); Y must "
                               "be (n_samples, n_targets)")
    with pytest.raises(ValueError, match="^Landmark: Y contains NaN or infinity$"):
        Landmark(n_landmarks=5).fit(X, np.full_like(T, np.nan))


# ============================================================================ convergence status
def test_regland_reports_liblinear_iterations_and_its_iteration_cap():
    """liblinear's binding returns no iteration count: the fit reads them from liblinear's
    messages. At its defaults both losses converge in a few iterations; with a tolerance it
    cannot reach (1e-12 at C = 1e6) the dual solver (-s 13) stops at liblinear's cap, and the
    fit must say so (it once recorded converged=True, n_iter=0)."""
    X, T = _regression(targets=2)
    for loss in ("squared_epsilon_insensitive", "epsilon_insensitive"):
        model = Landmark(model="regland", loss=loss, n_landmarks=30, C=1.0,
                         random_state=0).fit(X, T)
        assert model.converged_ is True
        assert (model.n_iter_ >= 1).all() and (model.n_iter_ < 300).all(), loss
    capped = Landmark(model="regland", loss="epsilon_insensitive", n_landmarks=30, C=1e6,
                      tol=1e-12, random_state=0).fit(X, T)
    assert capped.converged_ is False
    assert capped.n_iter_.min() >= 100                  # liblinear 2.50's dual cap is 300
    # The former default C = 1e4 with epsilon = 0 already reaches the cap here.
    default = Landmark(model="regland", loss="epsilon_insensitive", n_landmarks=30, C=1e4,
                       random_state=0).fit(X, T)
    assert default.converged_ is False
    # Newton at a tolerance within reach takes more steps than at a loose one.
    loose = Landmark(model="regland", n_landmarks=30, tol=1e-1, random_state=0).fit(X, T)
    tight = Landmark(model="regland", n_landmarks=30, tol=1e-8, random_state=0).fit(X, T)
    assert (loose.n_iter_ < tight.n_iter_).all()


def test_kr_has_no_solver_to_converge():
    X, T = _regression(targets=2)
    model = Landmark(model="kr", n_landmarks=30, random_state=0).fit(X, T)
    assert model.converged_ is None and not model.n_iter_.any()
