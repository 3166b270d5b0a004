"""BCS: Woodbury kernel vs dense algebra, slow reference VB, sparse recovery, monotone bound,
missing-label conventions and the seeded projection (the shared method contract is checked in
test_common.py)."""

import os
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.special import digamma, gammaln

from mlx.methods import bcs as bcs_module
from mlx.methods.bcs import BCS, draw_projection, infer_labels, label_posterior
from mlx.metrics import instance_auc, precision_at_k


def _problem(seed=0, n=40, d=6, L=8, density=0.6, mask=None, positive=0.3):
    rng = np.random.default_rng(seed)
    X = sp.random(n, d, density=density, random_state=seed, format="csr",
                  data_rvs=lambda m: rng.normal(size=m))
    Y = sp.csr_matrix((rng.random((n, L)) < positive).astype(float))
    observed = None
    if mask is not None:
        observed = sp.csr_matrix((rng.random((n, L)) < mask).astype(float))
    return X, Y, observed


def _sparse_labels(rng, n, L, s):
    Y = np.zeros((n, L))
    for i in range(n):
        Y[i, rng.choice(L, s, replace=False)] = 1.0
    return Y


def _top_sets_match(scores, Y, s):
    top = np.argsort(-scores, axis=1, kind="stable")[:, :s]
    return all(set(top[i]) == set(np.flatnonzero(Y[i])) for i in range(Y.shape[0]))


# ---------------------------------------------------------------------------
# The per-instance kernel against dense linear algebra
# ---------------------------------------------------------------------------

@pytest.mark.parametrize("loop_min", [None, 1])
@pytest.mark.parametrize("k,L", [(3, 9), (7, 5), (30, 40)])
def test_label_posterior_matches_dense_inverses(monkeypatch, k, L, loop_min):
    """Both routes of the inverses: numpy's stacked LU and, from ``SPD_LOOP_MIN`` on, one
    Cholesky factorisation a matrix."""
    if loop_min is not None:
        monkeypatch.setattr(bcs_module, "SPD_LOOP_MIN", loop_min)
    rng = np.random.default_rng(0)
    n = 6
    Phi = rng.normal(size=(k, L))
    resid = rng.normal(size=(n, k))
    inv_alpha = rng.uniform(0.1, 3.0, size=(n, L))
    inv_alpha[rng.random((n, L)) < 0.3] = 0.0                     # observed entries
    inv_alpha[0] = 0.0                                            # a row with nothing latent
    noise_mean, noise_cov = 0.7, 0.2
    mean, var, logdet, trace = label_posterior(Phi, resid, inv_alpha, noise_mean=noise_mean,
                                               noise_cov=noise_cov)
    for i in range(n):
        U = np.flatnonzero(inv_alpha[i] > 0)
        P = Phi[:, U]
        A = np.diag(1.0 / inv_alpha[i, U])
        cov = np.linalg.inv(A + P.T @ P / noise_cov)
        m = np.linalg.solve(A + P.T @ P / noise_mean, P.T @ resid[i] / noise_mean)
        expected_mean = np.zeros(L)
        expected_mean[U] = m
        expected_var = np.zeros(L)
        expected_var[U] = np.diag(cov)
        np.testing.assert_allclose(mean[i], expected_mean, rtol=1e-9, atol=1e-12)
        np.testing.assert_allclose(var[i], expected_var, rtol=1e-9, atol=1e-12)
        assert logdet[i] == pytest.approx(np.linalg.slogdet(cov)[1] if U.size else 0.0,
                                          rel=1e-9, abs=1e-10)
        assert trace[i] == pytest.approx(np.trace(P @ cov @ P.T), rel=1e-9, abs=1e-12)


def test_spd_inverse_falls_back_to_lu_where_the_cholesky_factorisation_fails(monkeypatch):
    """A matrix that is not positive definite gets numpy's inverse and log |det|; the others
    in the stack keep their Cholesky inverses (lower triangles)."""
    monkeypatch.setattr(bcs_module, "SPD_LOOP_MIN", 1)
    rng = np.random.default_rng(2)
    A = rng.normal(size=(3, 4, 4))
    B = A @ A.transpose(0, 2, 1) + 0.5 * np.eye(4)
    B[1] = np.diag([2.0, -1.0, 3.0, 0.5])                         # indefinite
    inv, logdet = bcs_module._spd_inverse(B.copy())
    for i in range(3):
        np.testing.assert_allclose(np.tril(inv[i]), np.tril(np.linalg.inv(B[i])),
                                   rtol=1e-10, atol=1e-12)
        assert logdet[i] == pytest.approx(np.linalg.slogdet(B[i])[1], rel=1e-12)


def test_label_posterior_is_the_same_in_small_chunks(monkeypatch):
    rng = np.random.default_rng(1)
    k, L, n = 5, 11, 23
    Phi = rng.normal(size=(k, L))
    resid = rng.normal(size=(n, k))
    inv_alpha = rng.uniform(0.1, 3.0, size=(n, L))
    whole = label_posterior(Phi, resid, inv_alpha, noise_mean=0.5, noise_cov=0.1)
    monkeypatch.setattr(bcs_module, "_WORK_ENTRIES", 2 * L)       # 2-row chunks, 1-row pair blocks
    pieces = label_posterior(Phi, resid, inv_alpha, noise_mean=0.5, noise_cov=0.1)
    for a, b in zip(whole, pieces):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-14)


# ---------------------------------------------------------------------------
# Slow reference: the paper's single-factor updates and the bound term by term
# ---------------------------------------------------------------------------

def _reference_fit(X, Y, observed, Phi, *, sigma, chi, lam, a, b, n_iter):
    """Dense mean-field VB with one q-factor at a time, each block repeated to convergence.

    Returns the posterior mean of W and the bound after every iteration, every term of
    E_q[log p] + H[q] written out (the Gamma terms with digamma, not the closed form).
    """
    X = X.toarray()
    n, d = X.shape
    L, k = Phi.shape[1], Phi.shape[0]
    obs = np.ones((n, L), bool) if observed is None else observed.toarray() != 0
    y_obs = (Y.toarray() != 0) & obs
    s2, c2 = sigma ** 2, chi ** 2
    s_z = 1.0 / (1.0 / s2 + 1.0 / c2)
    S_W = np.linalg.inv(X.T @ X / s2 + lam * np.eye(d))
    mu_y = y_obs.astype(float)
    cov_y = np.zeros((n, L, L))
    e_alpha = np.full((n, L), a / b)
    M_z = np.zeros((n, k))
    m_W = np.zeros((d, k))

    def converge(step, state, tol=1e-14):
        for _ in range(20000):
            new = step(state)
            if max(np.max(np.abs(x - y)) for x, y in zip(new, state)) < tol:
                return new
            state = new
        raise AssertionError("reference block did not converge")

    bounds = []
    for _ in range(n_iter):
        # q(W) and q(Z) in turn, given E[Y]
        def wz(state):
            _, Mz = state
            mW = S_W @ X.T @ Mz / s2
            return mW, s_z * (X @ mW / s2 + mu_y @ Phi.T / c2)
        m_W, M_z = converge(wz, (m_W, M_z))
        # q(z_i) and q(y_i^U) in turn, given W and alpha
        for i in range(n):
            U = np.flatnonzero(~obs[i])
            if U.size == 0:
                continue
            Ob = np.flatnonzero(obs[i])
            P = Phi[:, U]
            C = np.linalg.inv(np.diag(e_alpha[i, U]) + P.T @ P / c2)

            def zy(state, i=i, U=U, Ob=Ob, P=P, C=C):
                z, y = state
                z = s_z * (m_W.T @ X[i] / s2 + Phi @ y / c2)
                y = y.copy()
                y[U] = C @ P.T @ (z - Phi[:, Ob] @ y[Ob]) / c2
                return z, y
            M_z[i], mu_y[i] = converge(zy, (M_z[i], mu_y[i]))
            cov_y[i] = 0.0
            cov_y[i][np.ix_(U, U)] = C
        # q(alpha)
        e_y2 = mu_y ** 2 + np.einsum("ill->il", cov_y)
        a_hat = a + 0.5
        b_hat = b + 0.5 * e_y2
        e_alpha = a_hat / b_hat
        e_log_alpha = digamma(a_hat) - np.log(b_hat)

        log2pi = np.log(2 * np.pi)
        bound = 0.0
        for c in range(k):                                        # W prior + entropy
            bound += (-0.5 * d * log2pi + 0.5 * d * np.log(lam)
                      - 0.5 * lam * (m_W[:, c] @ m_W[:, c] + np.trace(S_W)))
            bound += 0.5 * d * (1 + log2pi) + 0.5 * np.linalg.slogdet(S_W)[1]
        for i in range(n):
            x = X[i]
            bound += (-0.5 * k * np.log(2 * np.pi * s2)
                      - 0.5 / s2 * (np.sum((M_z[i] - m_W.T @ x) ** 2) + k * s_z
                                    + k * x @ S_W @ x))
            bound += (-0.5 * k * np.log(2 * np.pi * c2)
                      - 0.5 / c2 * (np.sum((Phi @ mu_y[i] - M_z[i]) ** 2)
                                    + np.trace(Phi @ cov_y[i] @ Phi.T) + k * s_z))
            bound += 0.5 * k * (1 + np.log(2 * np.pi * s_z))
            U = np.flatnonzero(~obs[i])
            if U.size:
                bound += 0.5 * U.size * (1 + log2pi)
                bound += 0.5 * np.linalg.slogdet(cov_y[i][np.ix_(U, U)])[1]
        bound += np.sum(-0.5 * log2pi + 0.5 * e_log_alpha - 0.5 * e_alpha * e_y2)
        bound += np.sum(a * np.log(b) - gammaln(a) + (a - 1) * e_log_alpha - b * e_alpha)
        bound += np.sum(a_hat - np.log(b_hat) + gammaln(a_hat) + (1 - a_hat) * digamma(a_hat))
        bounds.append(bound)
    return m_W, np.array(bounds)


@pytest.mark.parametrize("mask", [None, 0.5])
@pytest.mark.parametrize("shape", [(14, 4), (5, 9)])               # n > d and n < d
def test_fit_matches_slow_reference_updates_and_bound(mask, shape):
    n, d = shape
    X, Y, observed = _problem(3, n=n, d=d, L=6, density=0.7, mask=mask)
    params = dict(sigma=0.6, chi=0.5, weight_precision=0.8, gamma_shape=0.5, gamma_rate=0.2)
    model = BCS(rank=3, max_iter=4, tol=0, random_state=0, **params).fit(X, Y,
                                                                        observed=observed)
    W_ref, bounds = _reference_fit(X, Y, observed, model.Phi_, sigma=0.6, chi=0.5, lam=0.8,
                                   a=0.5, b=0.2, n_iter=model.n_iter_)
    np.testing.assert_allclose(model.W_, W_ref, rtol=1e-8, atol=1e-10)
    np.testing.assert_allclose(model.elbo_, bounds, rtol=1e-9)


# ---------------------------------------------------------------------------
# Recovery of sparse labels
# ---------------------------------------------------------------------------

def test_inference_recovers_sparse_labels_from_noise_free_compression():
    rng = np.random.default_rng(0)
    n, L, k, s = 100, 60, 25, 3
    Y = _sparse_labels(rng, n, L, s)
    Phi = draw_projection(rng, k, L)
    kw = dict(noise_mean=1e-4, noise_cov=1e-4, gamma_shape=1e-6, gamma_rate=1e-6)
    sparse = infer_labels(Phi, Y @ Phi.T, n_iter=20, **kw)
    assert _top_sets_match(sparse, Y, s)
    np.testing.assert_allclose(sparse, Y, atol=0.05)
    ridge = infer_labels(Phi, Y @ Phi.T, n_iter=1, **kw)          # no sparsity prior yet
    assert not _top_sets_match(ridge, Y, s)


def test_fit_and_predict_recover_sparse_labels_end_to_end():
    rng = np.random.default_rng(1)
    n, L, k, s = 200, 40, 18, 3
    Y = sp.csr_matrix(_sparse_labels(rng, n, L, s))
    X = Y.copy()                                                  # z = Phi y is linear in x
    model = BCS(rank=k, sigma=1e-3, chi=1e-2, weight_precision=1e-3, predict_iter=20,
                random_state=0).fit(X, Y)
    scores = model.decision_function(X)
    assert _top_sets_match(scores, Y.toarray(), s)
    assert model.converged_ and model.n_iter_ == 2                # full labels: one step


# ---------------------------------------------------------------------------
# The bound
# ---------------------------------------------------------------------------

@pytest.mark.parametrize("mask", [0.1, 0.5, 0.9])
@pytest.mark.parametrize("params", [
    dict(sigma=0.1, chi=0.3),
    dict(sigma=1.0, chi=0.2, weight_precision=10.0),
    dict(sigma=0.3, chi=1.0, gamma_shape=1.0, gamma_rate=0.1),
])
def test_bound_never_decreases_with_missing_labels(mask, params):
    X, Y, observed = _problem(4, n=50, d=8, L=12, mask=mask)
    model = BCS(rank=5, max_iter=12, tol=0, random_state=1, **params).fit(X, Y,
                                                                        observed=observed)
    elbo = np.array(model.elbo_)
    assert model.n_iter_ == 12 == elbo.size
    assert np.all(np.isfinite(elbo))
    assert np.all(np.diff(elbo) >= -1e-8 * np.abs(elbo[1:]))
    assert elbo[-1] > elbo[0]


def test_tol_stops_early_and_reports_convergence():
    X, Y, observed = _problem(5, n=50, d=8, L=12, mask=0.4)
    model = BCS(rank=5, max_iter=500, tol=1e-7, random_state=0).fit(X, Y, observed=observed)
    assert model.converged_ and 2 < model.n_iter_ < 500
    e = model.elbo_
    assert abs(e[-1] - e[-2]) <= 1e-7 * abs(e[-1])
    short = BCS(rank=5, max_iter=2, tol=1e-12, random_state=0).fit(X, Y, observed=observed)
    assert not short.converged_ and short.n_iter_ == 2


# ---------------------------------------------------------------------------
# Missing labels conventions
# ---------------------------------------------------------------------------

def test_labels_outside_omega_do_not_change_the_model():
    X, Y, observed = _problem(6, n=40, d=6, L=9, mask=0.4)
    rng = np.random.default_rng(0)
    noise = sp.csr_matrix((rng.random(Y.shape) < 0.5).astype(float))
    Y_other = (Y.multiply(observed) + noise - noise.multiply(observed)).tocsr()
    assert (Y_other != Y).nnz > 0
    assert (Y_other.multiply(observed) != Y.multiply(observed)).nnz == 0
    fits = [BCS(rank=4, max_iter=5, tol=0, random_state=0).fit(X, T, observed=observed)
            for T in (Y, Y_other)]
    np.testing.assert_array_equal(fits[0].W_, fits[1].W_)
    np.testing.assert_array_equal(fits[0].elbo_, fits[1].elbo_)


def test_all_observed_mask_equals_full_labels():
    X, Y, _ = _problem(7)
    full = BCS(rank=3, random_state=0).fit(X, Y)
    everything = sp.csr_matrix(np.ones(Y.shape))
    masked = BCS(rank=3, random_state=0).fit(X, Y, observed=everything)
    np.testing.assert_allclose(masked.W_, full.W_, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(masked.elbo_, full.elbo_, rtol=1e-12)


def test_missing_labels_are_inferred_not_read_as_zeros():
    # Labels are a sparse code of the features and 60% of the entries are unobserved.
    # Treated as latent they are filled in; read as observed zeros they shrink every score.
    rng = np.random.default_rng(8)
    n, L, s = 300, 30, 2
    Y = sp.csr_matrix(_sparse_labels(rng, n, L, s))
    X = Y.copy()
    observed = sp.csr_matrix((rng.random((n, L)) < 0.4).astype(float))
    Y_seen = Y.multiply(observed).tocsr()
    kw = dict(rank=15, sigma=0.05, chi=0.05, weight_precision=0.1, predict_iter=10,
              max_iter=20, random_state=0)
    latent = BCS(**kw).fit(X, Y_seen, observed=observed).decision_function(X)
    zeros = BCS(**kw).fit(X, Y_seen).decision_function(X)
    truth = Y.toarray() > 0
    assert latent[truth].mean() > 0.7 > 0.5 > zeros[truth].mean()
    assert ((latent > 0.5) != truth).mean() < 0.2 * ((zeros > 0.5) != truth).mean()


# ---------------------------------------------------------------------------
# BCS-specific behaviour (the shared contract checks are in test_common.py)
# ---------------------------------------------------------------------------

def test_threshold_is_one_half():
    assert BCS().threshold == 0.5                                 # posterior means of 0/1 labels


def test_projection_is_drawn_from_the_seed():
    X, Y, observed = _problem(9, mask=0.5)
    a = BCS(rank=4, random_state=3).fit(X, Y, observed=observed)
    expected_phi = draw_projection(np.random.default_rng(3), 4, Y.shape[1])
    np.testing.assert_array_equal(a.Phi_, expected_phi)
    c = BCS(rank=4, random_state=4).fit(X, Y, observed=observed)
    assert not np.allclose(c.Phi_, a.Phi_)


def test_scores_do_not_depend_on_internal_chunking(monkeypatch):
    X, Y, observed = _problem(10, n=60, mask=0.5)
    model = BCS(rank=4, predict_iter=4, random_state=0).fit(X, Y, observed=observed)
    full = model.decision_function(X)
    monkeypatch.setattr(bcs_module, "_WORK_ENTRIES", 40)          # chunked inside
    np.testing.assert_allclose(model.decision_function(X), full, rtol=1e-10, atol=1e-13)


def test_row_without_features_scores_zero():
    X, Y, observed = _problem(12, mask=0.5)
    X = X.tolil()
    X[0, :] = 0
    X = X.tocsr()
    Y = Y.tolil()
    Y[:, 2] = 0
    Y = Y.tocsr()
    for obs in (None, observed):
        model = BCS(rank=3, random_state=0).fit(X, Y, observed=obs)
        scores = model._decision_function(X)      # the model's own, before auto's prior
        np.testing.assert_array_equal(scores[0], 0.0)             # no features: prior mean


# ---------------------------------------------------------------------------
# Quality floor on bibtex (skipped without the data)
# ---------------------------------------------------------------------------

def _bibtex_on_data_path() -> bool:
    from mlx.data.catalog import find_file

    dirs = [Path(p) for p in os.environ.get("MLX_DATA_PATH", "").split(os.pathsep) if p]
    return bool(dirs) and all(find_file(f"bibtex/bibtex-{part}.arff.gz", dirs) is not None
                              for part in ("train", "test"))


@pytest.mark.slow
@pytest.mark.data
def test_bibtex_rank_ratio_20_beats_the_published_bcs_figures():
    if not _bibtex_on_data_path():
        pytest.skip("bibtex not on MLX_DATA_PATH")
    from mlx.data.catalog import load_split, resolve_dataset

    split = load_split(resolve_dataset("bibtex", source=None))
    train, test = split.train, split.test
    model = BCS(rank=32, random_state=0).fit(train.X, train.Y)    # defaults, chosen on validation
    scores = model.decision_function(test.X)
    # LEML paper, Tables 6, 7 and 10 (BCS, k/L = 20%): 41.43, 21.74, 0.7875
    assert precision_at_k(test.Y, scores, k=1).mean() > 0.50
    assert precision_at_k(test.Y, scores, k=3).mean() > 0.24
    assert np.nanmean(instance_auc(test.Y, scores)) > 0.80
