"""Landmarking: properties the older tests left open (found by mutation testing): the default
tolerances, the seed of liblinear's dual solver, the sigmoid's saturation note, the Gaussian
bandwidth rule, models without an intercept, latent scores, and ``C="auto"``."""

import numpy as np
import pytest

from mlx.methods._auto import holdout_split
from mlx.methods.landmark import Landmark
from mlx.numerics.similarity import mean_distance


def _regression(seed=0, n=60, p=4):
    rng = np.random.default_rng(seed)
    X = rng.uniform(0, 1, size=(n, p))
    return X, (np.sin(3 * X[:, 0]) + X[:, 1] ** 2 + 0.05 * rng.normal(size=n))[:, None]


def _ordinal(seed=0, n=60, p=3):
    rng = np.random.default_rng(seed)
    X = rng.uniform(0, 1, size=(n, p))
    latent = X @ np.array([2.0, -1.0, 0.5][:p]) + 0.1 * rng.normal(size=n)
    edges = np.quantile(latent, [0.25, 0.5, 0.75])
    return X, np.array([2.0, 3.0, 5.0, 8.0])[np.searchsorted(edges, latent)][:, None]


# ----------------------------------------------------------------------------- tolerances
@pytest.mark.parametrize("model, loss, default", [
    ("regland", "squared_epsilon_insensitive", 1e-4),
    ("regland", "epsilon_insensitive", 0.1),
    ("orland", None, 1e-4),
])
def test_tol_none_is_the_documented_default_of_each_solver(model, loss, default):
    X, T = _ordinal() if model == "orland" else _regression()
    common = dict(model=model, C=100.0, n_landmarks=20, random_state=0)
    if loss:
        common["loss"] = loss
    else:
        common["task"] = "ordinal"
    none = Landmark(**common).fit(X, T)
    same = Landmark(**common, tol=default).fit(X, T)
    np.testing.assert_array_equal(none.coef_, same.coef_)
    np.testing.assert_array_equal(none.n_iter_, same.n_iter_)
    looser = Landmark(**common, tol=default * 10).fit(X, T)
    assert not np.array_equal(none.n_iter_, looser.n_iter_)


def test_the_dual_solver_seed_is_zero_without_a_random_state():
    """Every training row a landmark: the draw does not depend on the seed, so liblinear's
    coordinate order (seeded with ``random_state``, 0 when None) is the only difference."""
    X, T = _regression(1, n=40)
    common = dict(model="regland", loss="epsilon_insensitive", C=1e3, n_landmarks=40)
    none = Landmark(**common).fit(X, T)
    zero = Landmark(**common, random_state=0).fit(X, T)
    three = Landmark(**common, random_state=3).fit(X, T)
    np.testing.assert_array_equal(none.coef_, zero.coef_)
    assert not np.array_equal(zero.coef_, three.coef_)


# ----------------------------------------------------------------------------- similarities
def test_the_sigmoid_note_names_the_largest_value_only_beyond_one():
    X, T = _regression(2, n=30)
    X[4, 2] = -1.0                                               # |x| = 1 is within [-1, 1]
    inside = Landmark(similarity="sigmoid", C=10.0, n_landmarks=10, random_state=0).fit(X, T)
    assert inside.message_ == ""
    X[7, 1] = -1.5
    outside = Landmark(similarity="sigmoid", C=10.0, n_landmarks=10, random_state=0).fit(X, T)
    assert outside.message_ == ("Landmark: the sigmoid similarity assumes features in [-1, 1] "
                                "(largest |x| here 1.5; its values saturate); add preprocess: "
                                "[minmax]")
    manhattan = Landmark(C=10.0, n_landmarks=10, random_state=0).fit(X, T)
    assert manhattan.message_ == ""


def test_gaussian_bandwidth_is_the_mean_distance_from_the_drawn_rows_or_one():
    X, T = _regression(3, n=30)
    m = Landmark(similarity="gaussian", C=10.0, n_landmarks=8, random_state=0).fit(X, T)
    expected = mean_distance(X, m.landmark_indices_)
    assert m.similarity_params_ == {"bandwidth": pytest.approx(expected, rel=1e-12)}
    assert expected > 0
    fixed = Landmark(similarity="gaussian", bandwidth=2, C=10.0, n_landmarks=8,
                     random_state=0).fit(X, T)
    assert fixed.similarity_params_ == {"bandwidth": 2.0}
    same = np.ones((12, 3))                                      # every distance 0
    one = Landmark(model="kr", similarity="gaussian", n_landmarks=4, random_state=0).fit(
        same, np.arange(12.0)[:, None])
    assert one.similarity_params_ == {"bandwidth": 1.0}
    assert Landmark(n_landmarks=8, random_state=0, C=10.0).fit(X, T).similarity_params_ == {}


# ----------------------------------------------------------------------------- intercept, scores
@pytest.mark.parametrize("model", ["regland", "orland"])
def test_without_an_intercept_scores_are_psi_times_the_weights(model):
    X, T = _ordinal(4) if model == "orland" else _regression(4)
    task = "ordinal" if model == "orland" else "regression"
    m = Landmark(model=model, task=task, C=100.0, n_landmarks=15, fit_intercept=False,
                 random_state=0).fit(X, T)
    np.testing.assert_array_equal(m.intercept_, [0.0])
    np.testing.assert_allclose(m.latent_scores(X), m._features(X) @ m.coef_, rtol=1e-12)
    with_b = Landmark(model=model, task=task, C=100.0, n_landmarks=15, random_state=0).fit(X, T)
    assert with_b.intercept_[0] != 0.0


def test_orland_predicts_the_level_of_its_latent_score_and_kr_has_none():
    X, T = _ordinal(5)
    m = Landmark(model="orland", task="ordinal", C=100.0, n_landmarks=15,
                 random_state=0).fit(X, T)
    latent = m.latent_scores(X)[:, 0]
    index = np.clip(np.ceil(latent - 0.5), 0, 3).astype(int)    # thresholds 0.5, 1.5, 2.5
    np.testing.assert_array_equal(m.decision_function(X)[:, 0], np.array([2.0, 3, 5, 8])[index])
    kr = Landmark(model="kr", task="ordinal", n_landmarks=15, random_state=0).fit(X, T)
    with pytest.raises(ValueError) as info:
        kr.latent_scores(X)
    assert str(info.value) == "Landmark: model='kr' has no latent scores"


# ----------------------------------------------------------------------------- C="auto"
def test_auto_c_scores_candidates_by_squared_error_and_refits_on_every_row():
    X, T = _regression(6, n=50)
    common = dict(model="regland", n_landmarks=12, random_state=0)
    m = Landmark(C="auto", **common).fit(X, T)
    choice = m.auto_["C"]
    assert choice.grid == tuple(10.0 ** np.arange(-1, 8))
    fit, val = holdout_split(m, 50)
    scored = [(c, s) for c, s in zip(choice.grid, choice.scores) if not np.isnan(s)]
    minus_mse = [-np.mean((Landmark(C=c, **common).fit(X[fit], T[fit]).decision_function(X[val])
                           - T[val]) ** 2) for c, _ in scored]
    assert len(scored) >= 2
    np.testing.assert_allclose([s for _, s in scored], minus_mse, rtol=1e-12)
    np.testing.assert_array_equal(m.coef_, Landmark(C=choice.value, **common).fit(X, T).coef_)
    sparse = Landmark(model="regland_sp", n_landmarks=12, random_state=0).fit(X, T)  # no C
    assert sparse.auto_ == {}


# ----------------------------------------------------------------------------- status, errors
def test_orland_that_stops_at_max_iter_is_not_converged():
    X, T = _ordinal(7)
    T2 = np.column_stack([T[:, 0], T[::-1, 0]])
    capped = Landmark(model="orland", task="ordinal", C=100.0, n_landmarks=15, max_iter=2,
                      random_state=0).fit(X, T2)
    np.testing.assert_array_equal(capped.n_iter_, [2, 2])
    assert capped.converged_ is False
    free = Landmark(model="orland", task="ordinal", C=100.0, n_landmarks=15,
                    random_state=0).fit(X, T2)
    assert free.converged_ is True and np.all(free.n_iter_ < 500)
    # one target converged, the other capped: not converged
    k = int(free.n_iter_.min())
    assert k < free.n_iter_.max()
    mixed = Landmark(model="orland", task="ordinal", C=100.0, n_landmarks=15, max_iter=k,
                     random_state=0).fit(X, T2)
    assert mixed.converged_ is False


def test_latent_scores_check_the_number_of_features():
    X, T = _regression(8)
    m = Landmark(C=10.0, n_landmarks=10, random_state=0).fit(X, T)
    with pytest.raises(ValueError) as info:
        m.latent_scores(X[:, :3])
    assert str(info.value) == ("Landmark: X has 3 features, but Landmark is expecting 4 "
                               "features as input (it was fitted with 4)")


@pytest.mark.parametrize("fit_intercept", [True, False])
def test_orland_is_exc_descent_on_the_centred_landmark_features(fit_intercept):
    """ORLand's weights are the EXC solver's on ``Psi`` centred (with a column of ones for the
    unpenalised intercept) or, without an intercept, on ``Psi`` as it is."""
    from mlx.numerics.exc import exc_descent

    X, T = _ordinal(9)
    m = Landmark(model="orland", task="ordinal", C=50.0, margin=0.3, n_landmarks=12,
                 fit_intercept=fit_intercept, random_state=0).fit(X, T)
    Psi = m._features(X)
    mean = Psi.mean(axis=0) if fit_intercept else np.zeros(12)
    Z = Psi - mean
    if fit_intercept:
        Z = np.hstack([Z, np.ones((60, 1))])
    k = np.searchsorted([2.0, 3.0, 5.0, 8.0], T[:, 0])
    res = exc_descent(Z, k, 4, C=50.0, margin=0.3, n_penalised=12, max_iter=500, tol=1e-4)
    np.testing.assert_allclose(m.coef_[:, 0], res.w[:12], rtol=1e-10, atol=1e-12)
    b = res.w[12] if fit_intercept else 0.0
    np.testing.assert_allclose(m.intercept_, [b - mean @ res.w[:12]], rtol=1e-10, atol=1e-12)
    assert m.n_iter_[0] == res.n_iter


def test_attributes_a_model_does_not_have_are_none():
    X, T = _regression(10, n=30)
    kr = Landmark(model="kr", n_landmarks=8, random_state=0).fit(X, T)
    assert kr.landmarks_ is None and kr.coef_ is None and kr.intercept_ is None
    assert kr.support_ is None and kr.n_iter_.dtype.kind == "i"
    np.testing.assert_array_equal(kr.X_train_, X)
    regland = Landmark(C=10.0, n_landmarks=8, random_state=0).fit(X, T)
    assert regland.support_ is None and regland.levels_ is None
    assert regland.n_iter_.dtype.kind == "i"
    assert regland.X_train_ is None and regland.Y_train_ is None
