"""Partial singular value thresholding: Gram route against the SVD route and the closed form."""

from __future__ import annotations

import numpy as np
import pytest

from mlx.numerics.svt import partial_svt, partial_svt_svd, shrink_values, shrunk_sum


def _orthonormal(rng, n, k):
    q, _ = np.linalg.qr(rng.standard_normal((n, k)))
    return q


def _with_singular_values(rng, d, K, s):
    """A (d, K) matrix with singular values ``s`` (decreasing) and known factors."""
    r = len(s)
    U, V = _orthonormal(rng, d, r), _orthonormal(rng, K, r)
    return (U * s) @ V.T, U, V


def _tail_objective(W, Q, tau, theta):
    s = np.linalg.svd(W, compute_uv=False)
    return 0.5 * np.sum((W - Q) ** 2) + tau * s[theta:].sum()


@pytest.mark.parametrize("shape", [(30, 7), (7, 30), (12, 12), (1, 5), (5, 1)])
@pytest.mark.parametrize("shrink", ["tail", "head"])
def test_gram_route_equals_svd_route(shape, shrink):
    rng = np.random.default_rng(0)
    Q = rng.standard_normal(shape)
    s = np.linalg.svd(Q, compute_uv=False)
    r = min(shape)
    for theta in sorted({0, 1, r // 2, r - 1, r}):
        theta = max(theta, 0)
        for tau in (0.0, 0.5 * s[-1], s[r // 2], 2 * s[0]):      # none, small, mid, all zero
            W = partial_svt(Q, tau, theta, shrink=shrink)
            ref = partial_svt_svd(Q, tau, theta, shrink=shrink)
            full = partial_svt_svd(Q, tau, theta, shrink=shrink, full_matrices=True)
            np.testing.assert_allclose(W, ref, rtol=0, atol=1e-12 * s[0])
            np.testing.assert_allclose(full, ref, rtol=0, atol=1e-12 * s[0])


def test_tail_step_is_the_closed_form_and_the_exact_minimiser():
    rng = np.random.default_rng(1)
    s = np.array([5.0, 3.0, 2.0, 0.5])
    Q, U, V = _with_singular_values(rng, 9, 6, s)
    tau, theta = 1.0, 2
    W = partial_svt(Q, tau, theta)
    expected = (U * np.array([5.0, 3.0, 1.0, 0.0])) @ V.T        # keep 2, shrink 2 -> 1, 0.5 -> 0
    np.testing.assert_allclose(W, expected, atol=1e-12)
    best = _tail_objective(W, Q, tau, theta)
    # No perturbation (random, or along the kept / shrunk singular directions) does better.
    for _ in range(300):
        E = rng.standard_normal(Q.shape) * rng.choice([1e-3, 1e-1, 1.0])
        assert _tail_objective(W + E, Q, tau, theta) >= best - 1e-12
    for j in range(4):
        for step in (-0.3, -0.01, 0.01, 0.3):
            E = step * np.outer(U[:, j], V[:, j])
            assert _tail_objective(W + E, Q, tau, theta) >= best - 1e-12
    # Another stationary-looking candidate: shrinking every value (the trace norm step).
    other = (U * np.maximum(s - tau, 0)) @ V.T
    assert _tail_objective(other, Q, tau, theta) > best + 0.5


def test_theta_zero_is_singular_value_thresholding_and_theta_r_the_identity():
    rng = np.random.default_rng(2)
    s = np.array([4.0, 2.5, 1.0])
    Q, U, V = _with_singular_values(rng, 8, 3, s)
    np.testing.assert_allclose(partial_svt(Q, 1.5, 0), (U * [2.5, 1.0, 0.0]) @ V.T, atol=1e-12)
    assert partial_svt(Q, 1.5, 3) is Q                             # tail, theta = min(d, K)
    assert partial_svt(Q, 1.5, 0, shrink="head") is Q              # head, theta = 0
    assert partial_svt(Q, 0.0, 1) is Q                             # tau = 0


def test_head_step_shrinks_the_largest_theta():
    rng = np.random.default_rng(3)
    Q, U, V = _with_singular_values(rng, 7, 5, np.array([4.0, 2.0, 1.5, 0.5]))
    W = partial_svt(Q, 1.0, 2, shrink="head")
    np.testing.assert_allclose(W, (U * [3.0, 1.0, 1.5, 0.5]) @ V.T, atol=1e-12)


def test_tiny_singular_values_are_shrunk_accurately():
    # Graded spectrum 1 .. 1e-14: sqrt of the Gram eigenvalues would be off by ~1e-8 for the
    # small ones; the column-norm singular values stay within ~1e-12 (see mlx.numerics.svt).
    rng = np.random.default_rng(4)
    s = np.logspace(0, -14, 12)
    Q, _, _ = _with_singular_values(rng, 40, 12, s)
    tau = 1e-12
    for shape_Q in (Q, Q.T):                                       # K x K and D x D Gram sides
        W = partial_svt(shape_Q, tau, 3)
        got = np.linalg.svd(W, compute_uv=False)
        expected = np.sort(shrink_values(s, tau, 3))[::-1]
        np.testing.assert_allclose(got, expected, rtol=0, atol=4e-12)


def test_rank_deficient_input_and_no_mutation():
    rng = np.random.default_rng(5)
    Q, _, _ = _with_singular_values(rng, 20, 6, np.array([3.0, 1.0]))   # rank 2 of 6
    before = Q.copy()
    for theta in (0, 1, 2, 4):
        W = partial_svt(Q, 0.2, theta)
        np.testing.assert_allclose(W, partial_svt_svd(Q, 0.2, theta), atol=1e-13)
    np.testing.assert_array_equal(Q, before)


def test_shrunk_sum_and_validation():
    s = np.array([3.0, 2.0, 1.0])
    assert shrunk_sum(s, 1) == 3.0 and shrunk_sum(s, 1, "head") == 3.0
    assert shrunk_sum(s, 0) == 6.0 and shrunk_sum(s, 3, "head") == 6.0
    with pytest.raises(ValueError, match="theta must be an int >= 0"):
        partial_svt(np.eye(3), 0.1, -1)
    with pytest.raises(ValueError, match="tau must be a finite number >= 0"):
        partial_svt(np.eye(3), -0.1, 1)
    with pytest.raises(ValueError, match="shrink must be 'tail' or 'head'"):
        partial_svt(np.eye(3), 0.1, 1, shrink="all")
