"""The GCV ridge path against the slow, obvious computation with the hat matrix."""

import numpy as np
import pytest
import scipy.sparse as sp

from mlx.numerics.regpath import RidgePath, choose_gcv, path_grid
from mlx.numerics.ridge import ridge
from mlx.numerics.tridiag import gram_tridiag


def _slow_gcv(X, T, lam):
    """RSS / (1 - tr(H)/n)^2 with the explicit n x n hat matrix H."""
    X = X.toarray() if sp.issparse(X) else X
    n, d = X.shape
    H = X @ np.linalg.solve(X.T @ X + lam * np.eye(d), X.T)
    R = T - H @ T
    return float(np.sum(R * R)) / (1.0 - np.trace(H) / n) ** 2


def _problem(seed, n, d, m):
    """A sparse X (70% of entries stored) and 0/1 targets T (30% ones)."""
    rng = np.random.default_rng(seed)
    X = sp.csr_matrix(rng.standard_normal((n, d)) * (rng.random((n, d)) < 0.7))
    return X, (rng.random((n, m)) < 0.3).astype(float)


METHODS = ["tridiag", "eigh"]


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("shape", [(40, 7), (9, 30)], ids=["primal", "dual"])
def test_gcv_and_weights_match_the_hat_matrix_on_the_whole_path(shape, method):
    n, d = shape
    X, T = _problem(0, n, d, 4)
    path = RidgePath(X, T, method=method)
    assert path.primal == (d <= n)
    grid = path_grid(path.s.max())
    assert len(grid) == 34 and np.isclose(grid[0], 1e-10 * path.s.max())
    choice = path.choose()
    for lam, got in zip(grid[::5], choice.scores[::5]):
        if np.isfinite(got):
            assert got == pytest.approx(_slow_gcv(X, T, lam), rel=1e-6)
    assert choice.value == grid[int(np.argmin(choice.scores))]
    for lam in (1e-3, 0.7, 40.0):
        np.testing.assert_allclose(path.coef(lam), ridge(X, T, lam), rtol=1e-8, atol=1e-10)


def test_sparse_targets_and_precomputed_projections_agree():
    rng = np.random.default_rng(1)
    X = sp.csr_matrix(rng.random((30, 5)))
    T = sp.csr_matrix((rng.random((30, 3)) < 0.4).astype(float))
    a = RidgePath(X, T, method="eigh")
    b = RidgePath(X, None, eig=(a.s, a.vecs, True), t_sq=float(T.multiply(T).sum()),
                  XtT=(X.T @ T).toarray())
    np.testing.assert_allclose(a.choose().scores, b.choose().scores, rtol=1e-12)
    c = RidgePath(X, None, tri=gram_tridiag(X), t_sq=float(T.multiply(T).sum()),
                  XtT=(X.T @ T).toarray())
    np.testing.assert_allclose(c.choose().scores, a.choose().scores, rtol=1e-9)


def test_the_choice_follows_the_noise_and_flags_the_ends():
    rng = np.random.default_rng(2)
    n, d = 200, 10
    X = rng.standard_normal((n, d))
    w = rng.standard_normal((d, 1))
    clean = RidgePath(X, X @ w + 1e-6 * rng.standard_normal((n, 1))).choose()
    noisy = RidgePath(X, X @ w + 30.0 * rng.standard_normal((n, 1))).choose()
    assert clean.value < noisy.value                 # more noise, more shrinkage
    assert clean.edge                                # almost noise-free: least squares end
    # an explicit grid: the choice is one of its values, its ends are flagged
    s = np.linalg.eigvalsh(X.T @ X)
    q = np.ones(d)
    inner = choose_gcv(s, q, 50.0, n, grid=[1e-3, 1.0, 1e3])
    assert inner.value in (1e-3, 1.0, 1e3) and inner.edge == (inner.value != 1.0)


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("shape", [(30, 6), (9, 25)], ids=["primal", "dual"])
def test_leave_one_out_predictions_are_refits_without_the_row(shape, method):
    from mlx.numerics.regpath import leave_one_out

    n, d = shape
    X, T = _problem(3, n, d, 3)
    path = RidgePath(X, T, method=method)
    rows = np.array([0, 4, n - 1])
    for lam in (1e-2, 3.0):
        h = path.leverage(lam, rows)
        got = leave_one_out(X[rows] @ path.coef(lam), sp.csr_matrix(T[rows]), h)
        for j, i in enumerate(rows):
            keep = np.arange(n) != i
            W = ridge(X[keep], T[keep], lam)
            np.testing.assert_allclose(got[j], (X[i] @ W).ravel(), rtol=1e-7, atol=1e-9)


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("density", [0.05, 0.5], ids=["sparse-product", "dense-product"])
def test_leverage_of_sparse_rows_is_the_hat_matrix_diagonal(density, method):
    from mlx.numerics.regpath import LEVERAGE_SPARSE_DENSITY

    rng = np.random.default_rng(4)
    n, d = 200, 40
    X = sp.random(n, d, density=density, format="csr", random_state=rng)
    X.data += 0.5
    assert (X.nnz <= LEVERAGE_SPARSE_DENSITY * n * d) == (density < LEVERAGE_SPARSE_DENSITY)
    path = RidgePath(X, sp.csr_matrix(rng.random((n, 2))), method=method)
    rows = np.array([3, 50, 199])
    lam = 0.7
    Xd = X.toarray()
    hat = Xd @ np.linalg.solve(Xd.T @ Xd + lam * np.eye(d), Xd.T)
    np.testing.assert_allclose(path.leverage(lam, rows), np.diag(hat)[rows], rtol=1e-10)


def test_tridiagonal_path_agrees_with_the_eigendecomposition_and_falls_back_near_exact_fits():
    rng = np.random.default_rng(5)
    n, d = 120, 15
    X = sp.csr_matrix(rng.standard_normal((n, d)) * (rng.random((n, d)) < 0.5))
    w = rng.standard_normal((d, 2))
    noisy = X @ w + rng.standard_normal((n, 2))
    tri, eig = RidgePath(X, noisy, method="tridiag"), RidgePath(X, noisy, method="eigh")
    a, b = tri.choose(), eig.choose()
    assert tri.tri is not None                           # no fallback: residual well above 0
    np.testing.assert_allclose(a.scores, b.scores, rtol=1e-9)
    assert np.argmin(a.scores) == np.argmin(b.scores)       # the grids agree to rounding
    assert a.value == pytest.approx(b.value, rel=1e-12)
    # targets in the column space of X up to 1e-5: the residual at the least-squares end is
    # far below TRIDIAG_MIN_RSS, so the path is recomputed from the eigendecomposition
    clean = X @ w + 1e-5 * rng.standard_normal((n, 2))
    path = RidgePath(X, clean, method="tridiag")
    assert path.tri is not None
    choice = path.choose()
    assert path.tri is None and path.vecs is not None
    np.testing.assert_array_equal(choice.scores, RidgePath(X, clean, method="eigh").choose().scores)
    np.testing.assert_allclose(path.coef(choice.value), ridge(X, clean, choice.value), rtol=1e-8)


def test_auto_takes_the_route_predicted_cheaper():
    from mlx.numerics.regpath import tridiag_pays

    # a large Gram matrix and few targets: the reduction saves two thirds of the work;
    # a small one with many targets (or many leverage rows): the solves cost more
    assert tridiag_pays(1837, 159, 976) and tridiag_pays(4200, 101, 840)
    assert not tridiag_pays(500, 374, 900) and not tridiag_pays(1837, 159, 20000)
    rng = np.random.default_rng(6)
    X = sp.csr_matrix(rng.standard_normal((60, 8)))
    T = rng.standard_normal((60, 3))
    assert not tridiag_pays(8, 3, 0)
    assert RidgePath(X, T).tri is None
