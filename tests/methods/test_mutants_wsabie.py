"""WSABIE: properties the older tests left open (found by mutation testing): the initial
embeddings and their projection, feature scaling in fit and scoring alike, candidate
negatives under a mask, ``learning_rate='auto'``, the recorded timings and the error texts."""

import time

import numpy as np
import pytest
import scipy.sparse as sp

from mlx.errors import DivergenceError
from mlx.methods._auto import holdout_split, log_grid, validation_score
from mlx.methods.wsabie import WSABIE


def _problem(seed=0, n=40, d=6, L=5, scale=1.0):
    rng = np.random.default_rng(seed)
    X = sp.csr_matrix(rng.random((n, d)) * scale * (rng.random((n, d)) < 0.7))
    Y = sp.csr_matrix((X @ rng.standard_normal((d, L)) > 0.2 * scale).astype(float))
    return X, Y


def _projected(A, radius):
    norms = np.linalg.norm(A, axis=1, keepdims=True)
    return A * np.minimum(1.0, radius / norms)


def test_untouched_embeddings_are_the_projected_initial_draws():
    # Feature 2 never occurs and label 4 is never observed: neither is ever updated, so they
    # keep their N(0, 1/rank) draws, projected onto the ball of radius max_norm.
    X, Y = _problem(seed=1)
    X = X.tolil()
    X[:, 2] = 0
    X = sp.csr_matrix(X)
    X.eliminate_zeros()
    obs = np.ones(Y.shape)
    obs[:, 4] = 0
    rank, radius = 3, 0.4
    model = WSABIE(rank=rank, learning_rate=0.01, max_norm=radius, epochs=2,
                   random_state=5).fit(X, Y, observed=sp.csr_matrix(obs))
    rng = np.random.default_rng(5)
    U0 = rng.standard_normal((Y.shape[1], rank)) / np.sqrt(rank)
    VT0 = rng.standard_normal((X.shape[1], rank)) / np.sqrt(rank)
    assert np.linalg.norm(U0[4]) > radius and np.linalg.norm(VT0[2]) > radius
    np.testing.assert_array_equal(model.U_[4], _projected(U0, radius)[4])
    np.testing.assert_array_equal(model.V_[:, 2], _projected(VT0, radius)[2])
    assert not np.array_equal(model.U_[0], _projected(U0, radius)[0])     # trained ones move


def test_features_are_scaled_alike_in_fit_and_in_scoring():
    X, Y = _problem(seed=2, scale=4.0)
    top = abs(X).max(axis=0).toarray().ravel()
    kw = dict(rank=3, learning_rate=0.01, epochs=2, random_state=0)
    model = WSABIE(**kw).fit(X, Y)
    assert model.message_ == (
        f"WSABIE: features scaled by their largest absolute training value (largest "
        f"{top.max():.4g}; the method assumes features in [-1, 1]); set preprocess: [minmax] "
        f"to choose the scaling, or scale_features: none")
    Xs = sp.csr_matrix(X @ sp.diags(1.0 / top))
    ref = WSABIE(**kw, scale_features="none").fit(Xs, Y)
    np.testing.assert_allclose(model.U_, ref.U_, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(model.V_, ref.V_, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(model.decision_function(X), ref.decision_function(Xs),
                               rtol=1e-10, atol=1e-12)
    # scale_features="none" leaves features outside [-1, 1] as they are, and says nothing
    raw = WSABIE(**kw, scale_features="none").fit(X, Y)
    assert raw.feature_scale_ is None and raw.message_ == ""
    assert not np.allclose(raw.U_, model.U_)


def test_a_row_whose_observed_labels_are_all_positive_has_no_negative():
    # Every observed entry is a positive: there is no candidate negative anywhere, so no
    # step is taken (a positive is never its own negative).
    X, Y = _problem(seed=3)
    model = WSABIE(rank=2, learning_rate=0.01, epochs=2, random_state=0).fit(
        X, Y, observed=Y)
    assert model.objective_ == [0.0, 0.0]
    assert np.any(WSABIE(rank=2, learning_rate=0.01, epochs=2, random_state=0).fit(
        X, Y).objective_)


def test_epoch_seconds_are_the_epochs_wall_times():
    X, Y = _problem(seed=4)
    tic = time.perf_counter()
    model = WSABIE(rank=2, learning_rate=0.01, epochs=3, random_state=0).fit(X, Y)
    wall = time.perf_counter() - tic
    assert len(model.epoch_seconds_) == 3
    assert all(0.0 <= s for s in model.epoch_seconds_) and sum(model.epoch_seconds_) <= wall


def test_a_fit_with_a_given_learning_rate_records_no_auto_choice():
    X, Y = _problem(seed=5)
    assert WSABIE(rank=2, learning_rate=0.01, epochs=1, random_state=0).fit(X, Y).auto_ == {}


def test_auto_learning_rate_walks_a_grid_around_1e_3_on_the_observed_entries():
    X, Y = _problem(seed=6, n=60)
    rng = np.random.default_rng(6)
    observed = sp.csr_matrix((rng.random(Y.shape) < 0.6).astype(float))
    Y = Y.multiply(observed).tocsr()
    kw = dict(rank=2, epochs=2, random_state=3)
    model = WSABIE(**kw).fit(X, Y, observed=observed)
    choice = model.auto_["learning_rate"]
    assert choice.procedure == "holdout" and choice.grid == tuple(log_grid(1e-3))
    assert choice.grid[len(choice.grid) // 2] == 1e-3
    fit, val = holdout_split(model, X.shape[0])

    def score(value, mask):
        cand = WSABIE(**kw, learning_rate=value).fit(X[fit], Y[fit], observed=mask)
        return validation_score(cand, X[val], Y[val], "multilabel")

    scored = [(v, s) for v, s in zip(choice.grid, choice.scores) if not np.isnan(s)]
    assert len(scored) >= 3
    for value, s in scored:                          # each candidate fitted with its mask
        assert s == score(value, observed[fit])
    assert any(s != score(v, None) for v, s in scored)
    ref = WSABIE(**kw, learning_rate=choice.value).fit(X, Y, observed=observed)
    np.testing.assert_array_equal(model.U_, ref.U_)
    np.testing.assert_array_equal(model.V_, ref.V_)


def test_error_texts():
    X, Y = _problem(seed=7)
    model = WSABIE(rank=2, learning_rate=0.01, epochs=1, random_state=0).fit(X, Y)
    with pytest.raises(ValueError) as exc:
        model.decision_function(X[:, :4])
    assert str(exc.value) == ("WSABIE: X has 4 features, but WSABIE is expecting 6 features "
                              "as input (it was fitted with 6)")
    Xbig = sp.csr_matrix(np.full((20, 5), 100.0))
    Ybig = sp.csr_matrix(np.eye(20, 4) + np.eye(20, 4, k=-4))
    with pytest.raises(DivergenceError) as exc:
        WSABIE(rank=3, learning_rate=1e6, max_norm=None, epochs=50, scale_features="none",
               random_state=0).fit(Xbig, Ybig)
    assert str(exc.value).startswith("WSABIE diverged in epoch ")
    assert str(exc.value).endswith(" (non-finite embeddings); try a smaller learning_rate or "
                                   "max_norm (learning_rate=1000000.0, max_norm=None)")
