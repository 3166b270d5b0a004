"""The robust tensor power method and its trust-region step on explicit tensors: planted
orthogonal decompositions, noisy tensors where the plain iteration cycles, determinism."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from scipy.optimize import linear_sum_assignment

from mlx.numerics.tensor_power import (
    NEWTON_AFTER,
    SELECTION_ITERATIONS,
    tensor_power_method,
    trust_region_ascent,
)


@pytest.mark.parametrize("adaptive", [True, False])
def test_power_method_recovers_a_planted_orthogonal_decomposition(adaptive):
    rng = np.random.default_rng(0)
    k = 8
    V = np.linalg.qr(rng.normal(size=(k, k)))[0]
    lam = np.linspace(1.0, 4.0, k)
    T = np.einsum("r,ir,jr,lr->ijl", lam, V, V, V)
    res = tensor_power_method(lambda U: np.einsum("ijl,jr,lr->ir", T, U, U), k, k,
                              n_restarts=5, max_iter=200, tol=1e-12, adaptive_shift=adaptive,
                              rng=np.random.default_rng(1))
    assert res.converged.all()
    found = np.abs(V.T @ res.eigenvectors)                           # (true, found)
    rows, cols = linear_sum_assignment(-found)
    np.testing.assert_allclose(res.eigenvalues[cols], lam[rows], atol=1e-6)
    for r, c in zip(rows, cols):
        assert np.linalg.norm(res.eigenvectors[:, c] - V[:, r]) <= 1e-6


def test_plain_power_method_reports_non_convergence():
    """One start, no shift, few iterations: the flag says so instead of pretending."""
    rng = np.random.default_rng(3)
    k = 6
    T = rng.normal(size=(k, k, k))
    T = sum(T.transpose(p) for p in itertools.permutations(range(3))) / 6   # symmetric, noise
    res = tensor_power_method(lambda U: np.einsum("ijl,jr,lr->ir", T, U, U), k, k,
                              n_restarts=1, max_iter=3, tol=1e-12, adaptive_shift=False,
                              rng=np.random.default_rng(0))
    assert not res.converged.all()
    assert np.all(res.n_iter <= 3) and np.all(res.eigenvalues >= 0)


def _noisy_tensor(k=12, sigma=0.3, seed=1):
    """An orthogonal decomposition (eigenvalues 1..2) plus symmetric Gaussian noise: far from
    orthogonally decomposable, the plain power iteration cycles on several eigenpairs."""
    rng = np.random.default_rng(seed)
    V = np.linalg.qr(rng.normal(size=(k, k)))[0]
    E = rng.normal(size=(k, k, k))
    E = sum(E.transpose(p) for p in itertools.permutations(range(3))) / 6
    return np.einsum("r,ir,jr,lr->ijl", np.linspace(1.0, 2.0, k), V, V, V) + sigma * E


def _dense_ops(T):
    return (lambda U: np.einsum("ijl,jr,lr->ir", T, U, U),
            lambda u: np.einsum("ijl,l->ij", T, u))


def _local_max_margin(T, lam, V):
    """max over j of the top eigenvalue of P (2 T_j(I, I, v_j) - lambda_j) P on v_j's complement
    (< 0: every v_j is a strict local maximum of T_j(u, u, u) on the sphere)."""
    worst = -np.inf
    for j in range(V.shape[1]):
        v = V[:, j]
        Tj = T - np.einsum("r,ir,jr,lr->ijl", lam[:j], V[:, :j], V[:, :j], V[:, :j])
        P = np.eye(v.size) - np.outer(v, v)
        B = P @ (2.0 * np.einsum("ijl,l->ij", Tj, v) - lam[j] * np.eye(v.size)) @ P
        worst = max(worst, np.linalg.eigvalsh(B - 10.0 * np.outer(v, v))[-1])
    return worst


@pytest.mark.parametrize("anderson", [0, 5])
def test_fast_path_recovers_a_planted_decomposition(anderson):
    """Implicit products and Hessian of ``sum_k lambda_k v_k^(x)3`` (as WhitenedMoments gives
    them), the accelerated iteration: every pair to 1e-6, all converged."""
    rng = np.random.default_rng(5)
    k = 20
    V = np.linalg.qr(rng.normal(size=(k, k)))[0]
    lam = rng.uniform(1.0, 5.0, size=k)
    res = tensor_power_method(lambda U: V @ (lam[:, None] * (V.T @ U) ** 2), k, k,
                              hessian=lambda u: (V * (lam * (V.T @ u))) @ V.T,
                              n_restarts=10, max_iter=300, tol=1e-10, anderson=anderson,
                              rng=np.random.default_rng(0))
    assert res.converged.all()
    found = np.abs(V.T @ res.eigenvectors)
    rows, cols = linear_sum_assignment(-found)
    np.testing.assert_allclose(res.eigenvalues[cols], lam[rows], atol=1e-6)
    cosines = np.abs(np.sum(V[:, rows] * res.eigenvectors[:, cols], axis=0))
    assert np.max(np.abs(cosines - 1.0)) <= 1e-6


def test_accelerated_method_converges_where_the_plain_one_cycles():
    T = _noisy_tensor()
    products, hessian = _dense_ops(T)

    def run(anderson, hessian=None):
        return tensor_power_method(products, 12, 12, n_restarts=5, max_iter=100, tol=1e-10,
                                   anderson=anderson, hessian=hessian,
                                   rng=np.random.default_rng(0))

    plain = run(anderson=0)
    assert plain.converged.sum() <= 6                                  # measured 5 of 12
    for fast in (run(anderson=5, hessian=hessian), run(anderson=5)):   # Hessian by polarisation
        assert fast.converged.all() and fast.n_iter.max() <= 60        # measured <= 39
        lam, V = fast.eigenvalues, fast.eigenvectors
        Tj = T.copy()
        for j in range(12):                                             # eigenpairs of T_j
            g = np.einsum("ijl,j,l->i", Tj, V[:, j], V[:, j])
            assert np.linalg.norm(g - lam[j] * V[:, j]) <= 1e-10 * lam[j]
            Tj -= lam[j] * np.einsum("i,j,l->ijl", V[:, j], V[:, j], V[:, j])
        assert _local_max_margin(T, lam, V) < 0                         # maxima, not saddles


def test_trust_region_newton_converges_in_a_few_steps_to_the_nearby_maximum():
    T = _noisy_tensor(sigma=0.1)
    products, hessian = _dense_ops(T)
    ref = tensor_power_method(products, 12, 1, n_restarts=5, max_iter=500, tol=1e-13,
                              anderson=0, rng=np.random.default_rng(0))
    v = ref.eigenvectors[:, 0]
    u = v + 0.05 * np.random.default_rng(1).normal(size=12)
    u /= np.linalg.norm(u)
    g = products(u[:, None])[:, 0]
    tr = trust_region_ascent(lambda U: products(U), hessian, u, g, u @ g, tol=1e-13, budget=50)
    assert tr.residual <= 1e-13 * tr.lam and tr.n_steps <= 12        # measured 10 and 2
    assert tr.n_hessians <= tr.n_steps / 2
    assert abs(tr.lam - ref.eigenvalues[0]) <= 1e-12 and np.linalg.norm(tr.u - v) <= 1e-10


def test_trust_region_takes_over_after_newton_after_iterations():
    """On a start that is still climbing after the selection and NEWTON_AFTER iterations,
    the deflation step finishes with Newton steps (counted in n_hessians)."""
    T = _noisy_tensor(sigma=0.3, seed=3)
    products, hessian = _dense_ops(T)
    res = tensor_power_method(products, 12, 12, n_restarts=5, max_iter=100, tol=1e-10,
                              hessian=hessian, rng=np.random.default_rng(0))
    assert res.converged.all() and res.n_hessians >= 1
    assert res.n_iter.max() > SELECTION_ITERATIONS + NEWTON_AFTER


def test_power_method_is_deterministic_under_the_seed():
    T = _noisy_tensor(sigma=0.3, seed=3)
    products, hessian = _dense_ops(T)
    runs = [tensor_power_method(products, 12, 12, n_restarts=5, max_iter=100, tol=1e-10,
                                hessian=hessian, rng=np.random.default_rng(7))
            for _ in range(2)]
    for field in ("eigenvalues", "eigenvectors", "n_iter", "converged"):
        np.testing.assert_array_equal(getattr(runs[0], field), getattr(runs[1], field))
    assert runs[0].n_products == runs[1].n_products


def test_rough_selection_products_only_rank_the_starts():
    """selection_products ranks the starts; every returned pair meets tol with the exact
    products (checked on each deflated tensor), and exact "rough" products change nothing
    (but rounding: the chosen start's product is recomputed alone, not in its block)."""
    T = _noisy_tensor(sigma=0.2, seed=2)
    products, hessian = _dense_ops(T)
    noise = np.random.default_rng(9)

    def rough(U):
        out = products(U)
        return out * (1.0 + 1e-6 * noise.standard_normal(out.shape))

    kw = {"n_restarts": 5, "max_iter": 100, "tol": 1e-10, "hessian": hessian}
    res = tensor_power_method(products, 12, 12, selection_products=rough,
                              rng=np.random.default_rng(0), **kw)
    assert res.converged.all()
    Tj = T.copy()
    for j in range(12):
        v, lam = res.eigenvectors[:, j], res.eigenvalues[j]
        assert np.linalg.norm(np.einsum("ijl,j,l->i", Tj, v, v) - lam * v) <= 1e-10 * lam
        Tj -= lam * np.einsum("i,j,l->ijl", v, v, v)
    same = [tensor_power_method(products, 12, 12, selection_products=sel,
                                rng=np.random.default_rng(0), **kw) for sel in (None, products)]
    np.testing.assert_allclose(same[0].eigenvectors, same[1].eigenvectors, atol=1e-12)
    np.testing.assert_array_equal(same[0].n_iter, same[1].n_iter)      # only rounding differs


def test_authors_setting_is_the_plain_iteration_whatever_anderson():
    """adaptive_shift=False, shift=0: the plain power iteration of the authors' sshopm call,
    with no extrapolation and no Newton step."""
    T = _noisy_tensor()
    products, hessian = _dense_ops(T)
    runs = [tensor_power_method(products, 12, 12, n_restarts=1, max_iter=1000, tol=1e-10,
                                shift=0.0, adaptive_shift=False, anderson=m, hessian=hessian,
                                rng=np.random.default_rng(0)) for m in (0, 5)]
    np.testing.assert_array_equal(runs[0].eigenvectors, runs[1].eigenvectors)
    assert runs[1].n_hessians == 0
    # by hand: u <- T(I, u, u) / ||T(I, u, u)|| from the same start, for the first pair
    u = np.random.default_rng(0).standard_normal((12, 1))
    u /= np.linalg.norm(u)
    for _ in range(runs[0].n_iter[0]):
        u = products(u)
        u /= np.linalg.norm(u)
    f = (u[:, 0] @ products(u)[:, 0])
    np.testing.assert_allclose(runs[0].eigenvectors[:, 0] * np.sign(f), u[:, 0], atol=1e-12)


def test_trust_region_chord_constants_decide_when_the_hessian_is_formed_again():
    """chord_residual = 1 with chord_ratio = -inf keeps the first Hessian for every step (a
    chord method: one Hessian, more steps); chord_residual = 0 forms one per accepted step.
    All three reach the same local maximum."""
    T = _noisy_tensor(sigma=0.1)
    products, hessian = _dense_ops(T)
    ref = tensor_power_method(products, 12, 1, n_restarts=5, max_iter=500, tol=1e-13,
                              anderson=0, rng=np.random.default_rng(0))
    u = ref.eigenvectors[:, 0] + 0.05 * np.random.default_rng(1).normal(size=12)
    u /= np.linalg.norm(u)
    g = products(u[:, None])[:, 0]

    def run(**constants):
        return trust_region_ascent(products, hessian, u, g, u @ g, tol=1e-12, budget=200,
                                   **constants)

    default = run()
    chord = run(chord_residual=1.0, chord_ratio=-np.inf)
    newton = run(chord_residual=0.0)
    assert chord.n_hessians == 1 and chord.n_steps > default.n_steps
    assert newton.n_hessians > default.n_hessians
    for res in (default, chord, newton):
        assert res.residual <= 1e-12 * res.lam
        assert abs(res.lam - ref.eigenvalues[0]) <= 1e-11
