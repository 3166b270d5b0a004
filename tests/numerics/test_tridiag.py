"""The tridiagonal form of a Gram matrix against dense linear algebra."""

import numpy as np
import pytest
import scipy.sparse as sp

from mlx.numerics.tridiag import gram_tridiag, tridiagonalize


def _gram_problem(n, d, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d)) * (rng.random((n, d)) < 0.6)
    return X, X.T @ X


@pytest.mark.parametrize("shape", [(50, 20), (30, 40), (5, 1), (7, 2)],
                         ids=["full-rank", "rank-deficient", "one", "two"])
def test_the_factors_rebuild_the_gram_matrix_and_its_spectrum(shape):
    X, G = _gram_problem(*shape)
    tri = gram_tridiag(sp.csr_matrix(X))
    d = G.shape[0]
    Q = tri.unrotate(np.eye(d))
    np.testing.assert_allclose(Q.T @ Q, np.eye(d), atol=1e-13)
    np.testing.assert_allclose(Q @ tri.tmul(Q.T), G, atol=1e-12 * np.abs(G).max())
    s = np.linalg.eigvalsh(G)
    s = np.where(s > 1e-12 * s[-1], s, 0.0)
    np.testing.assert_allclose(tri.evals, s, atol=1e-12 * s[-1])
    B = np.random.default_rng(1).standard_normal((d, 3))
    np.testing.assert_allclose(tri.rotate(B), Q.T @ B, atol=1e-13 * np.abs(B).max() * d)
    np.testing.assert_allclose(tri.rotate(B[:, 0]), Q.T @ B[:, 0], atol=1e-12)


@pytest.mark.parametrize("shape", [(50, 20), (30, 40), (5, 1)])
def test_shifted_solves_per_column_scale(shape):
    X, G = _gram_problem(*shape, seed=2)
    tri = tridiagonalize(G)
    d = G.shape[0]
    rng = np.random.default_rng(3)
    B = rng.standard_normal((d, 4))
    scale = np.array([0.5, 2.0, 0.0, 1e3])
    s, V = np.linalg.eigh(G)
    s = np.maximum(s, 0.0)

    def exact(a, shift, b):                  # in the eigenbasis
        return V @ ((V.T @ b) / (a * s + shift)[:, None])

    def close(got, want, a, shift):          # backward stable: error ~ condition x eps
        cond = (a * s[-1] + shift) / shift
        assert np.abs(got - want).max() <= 50 * cond * 2.2e-16 * np.abs(want).max()

    for shift in (1e-3, 0.3, 50.0):
        got = tri.unrotate(tri.solve(tri.rotate(B), shift, scale))
        for j in range(4):
            close(got[:, j:j + 1], exact(scale[j], shift, B[:, j:j + 1]), scale[j], shift)
        same = tri.unrotate(tri.solve(tri.rotate(B), shift, 2.0))
        close(same, exact(2.0, shift, B), 2.0, shift)


def test_the_input_is_kept_unless_overwrite():
    _, G = _gram_problem(20, 6)
    keep = G.copy()
    tridiagonalize(G)
    np.testing.assert_array_equal(G, keep)
    with pytest.raises(ValueError, match="square"):
        tridiagonalize(G[:, :3])


def test_a_system_that_is_not_positive_definite_is_solved_by_pivoting():
    """Rounding can make a shifted system fail the positive-definite factorisation; the
    solve then falls back to LU with partial pivoting and still gives the solution."""
    G = np.diag([4.0, -3.0, 2.0, 1.0]) + 0.5 * (np.eye(4, k=1) + np.eye(4, k=-1))
    tri = tridiagonalize(G)
    B = np.arange(8.0).reshape(4, 2)
    got = tri.unrotate(tri.solve(tri.rotate(B), 0.1))
    np.testing.assert_allclose(got, np.linalg.solve(G + 0.1 * np.eye(4), B), rtol=1e-12)
