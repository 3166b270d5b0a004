"""Ridge / PSD solves against numpy.linalg: definite, singular, stacked, tall and wide."""

import numpy as np
import pytest
import scipy.sparse as sp

from mlx.numerics import ridge as ridge_module
from mlx.numerics.ridge import GramRidge, PSDFactor, default_rcond, psd_solve, ridge


def _psd(rng, n, rank=None, scale=1.0):
    """A random symmetric PSD matrix of the given rank (full by default)."""
    G = rng.normal(size=(n, n if rank is None else rank)) * scale
    return G @ G.T


@pytest.fixture
def no_cholesky(monkeypatch):
    """Make every Cholesky factorisation fail, forcing the eigendecomposition route."""
    def not_positive_definite(*args, **kwargs):
        raise np.linalg.LinAlgError("not positive definite")

    monkeypatch.setattr(ridge_module.sla, "cho_factor", not_positive_definite)


# ---------------------------------------------------------------------------
# psd_solve / PSDFactor on one matrix
# ---------------------------------------------------------------------------

@pytest.mark.parametrize("rhs_shape", [(7,), (7, 3)])
@pytest.mark.parametrize("l2_reg", [1e-3, 0.5, 10.0])
def test_definite_shift_matches_numpy_solve(rhs_shape, l2_reg):
    rng = np.random.default_rng(0)
    A = _psd(rng, 7)
    B = rng.normal(size=rhs_shape)
    A0 = A.copy()
    Z = psd_solve(A, B, l2_reg)
    np.testing.assert_allclose(Z, np.linalg.solve(A + l2_reg * np.eye(7), B), rtol=1e-10)
    assert Z.shape == B.shape
    np.testing.assert_array_equal(A, A0)                          # input untouched
    assert PSDFactor(A, l2_reg).method == "cholesky"


def test_unregularised_definite_matrix_uses_the_eigendecomposition():
    rng = np.random.default_rng(1)
    A = _psd(rng, 6)
    B = rng.normal(size=(6, 2))
    factor = PSDFactor(A)
    assert factor.method == "eigh"                                # l2_reg = 0: documented route
    np.testing.assert_allclose(factor.solve(B), np.linalg.solve(A, B), rtol=1e-9)


@pytest.mark.parametrize("rank", [0, 1, 3])
def test_singular_unregularised_gives_the_pseudo_inverse_solution(rank):
    rng = np.random.default_rng(2)
    A = _psd(rng, 6, rank=rank)
    B = rng.normal(size=(6, 4))                                   # not in the range of A
    Z = psd_solve(A, B)
    np.testing.assert_allclose(Z, np.linalg.pinv(A, hermitian=True) @ B, rtol=1e-8,
                               atol=1e-10)
    # minimum norm: no component in the null space of A
    w, V = np.linalg.eigh(A)
    null = V[:, w <= 1e-10 * max(w.max(), 1.0)]
    np.testing.assert_allclose(null.T @ Z, 0.0, atol=1e-10)


def test_singular_with_shift_is_the_ordinary_inverse():
    rng = np.random.default_rng(3)
    A = _psd(rng, 5, rank=2)
    B = rng.normal(size=5)
    np.testing.assert_allclose(psd_solve(A, B, 0.25), np.linalg.solve(A + 0.25 * np.eye(5), B),
                               rtol=1e-10)


def test_failed_cholesky_falls_back_to_the_eigendecomposition(no_cholesky):
    rng = np.random.default_rng(4)
    A = _psd(rng, 6, rank=4)
    B = rng.normal(size=(6, 2))
    factor = PSDFactor(A, 0.3)
    assert factor.method == "eigh"
    np.testing.assert_allclose(factor.solve(B), np.linalg.solve(A + 0.3 * np.eye(6), B),
                               rtol=1e-9)


@pytest.mark.parametrize("route", ["cholesky", "eigh"])
def test_logdet_and_trace_of_the_inverse(route, request):
    if route == "eigh":
        request.getfixturevalue("no_cholesky")
    rng = np.random.default_rng(5)
    A = _psd(rng, 8, rank=5)
    factor = PSDFactor(A, 0.7)
    assert factor.method == route
    shifted = A + 0.7 * np.eye(8)
    assert factor.logdet() == pytest.approx(np.linalg.slogdet(shifted)[1], rel=1e-10)
    assert factor.trace_inv() == pytest.approx(np.trace(np.linalg.inv(shifted)), rel=1e-10)


def test_singular_logdet_is_minus_infinity_and_trace_is_of_the_pseudo_inverse():
    rng = np.random.default_rng(6)
    A = _psd(rng, 5, rank=2)
    factor = PSDFactor(A)
    assert factor.logdet() == -np.inf
    assert factor.trace_inv() == pytest.approx(np.trace(np.linalg.pinv(A, hermitian=True)),
                                               rel=1e-8)


def test_rcond_sets_which_small_eigenvalues_count():
    Q, _ = np.linalg.qr(np.random.default_rng(7).normal(size=(4, 4)))
    A = (Q * [1.0, 1.0, 1e-4, 1e-14]) @ Q.T
    b = Q @ np.ones(4)

    def coefficients(rcond):                                      # 1/w for kept w, else 0
        return Q.T @ psd_solve(A, b, rcond=rcond)

    np.testing.assert_allclose(coefficients(1e-9), [1.0, 1.0, 1e4, 0.0], rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(coefficients(1e-3), [1.0, 1.0, 0.0, 0.0], atol=1e-6)
    assert default_rcond(4) == 4 * np.finfo(float).eps


def test_overwrite_a_only_touches_a_when_allowed():
    rng = np.random.default_rng(8)
    A = _psd(rng, 5, rank=3)
    B = rng.normal(size=(5, 2))
    expected = np.linalg.pinv(A, hermitian=True) @ B
    work = A.copy()
    np.testing.assert_allclose(psd_solve(work, B, overwrite_a=True), expected, rtol=1e-8,
                               atol=1e-10)
    kept = A.copy()
    psd_solve(kept, B, 0.5)
    psd_solve(kept, B)
    np.testing.assert_array_equal(kept, A)


def test_bad_shapes_and_shift_are_refused():
    with pytest.raises(ValueError, match="square"):
        psd_solve(np.ones((2, 3)), np.ones(2))
    with pytest.raises(ValueError, match="square"):
        psd_solve(np.ones(3), np.ones(3))
    with pytest.raises(ValueError, match="shift must be >= 0"):
        PSDFactor(np.eye(2), -1.0)


# ---------------------------------------------------------------------------
# Stacks of small matrices
# ---------------------------------------------------------------------------

@pytest.mark.parametrize("l2_reg", [0.0, 0.2])
@pytest.mark.parametrize("vector", [True, False])
def test_stack_equals_one_solve_per_matrix(l2_reg, vector):
    rng = np.random.default_rng(9)
    stack = np.stack([_psd(rng, 4), _psd(rng, 4, rank=2), np.zeros((4, 4)), 3 * np.eye(4)])
    rhs = rng.normal(size=(4, 4) if vector else (4, 4, 2))
    Z = psd_solve(stack, rhs, l2_reg)
    assert Z.shape == rhs.shape
    for A, b, z in zip(stack, rhs, Z):
        expected = np.linalg.pinv(A + l2_reg * np.eye(4), hermitian=True) @ b
        np.testing.assert_allclose(z, expected, rtol=1e-8, atol=1e-10)


def test_stack_cut_off_is_per_matrix():
    """A badly scaled matrix in the stack must not change the cut-off of the others."""
    small = np.diag([1e-8, 1e-8, 0.0])
    big = np.diag([1e8, 1.0, 1.0])
    Z = psd_solve(np.stack([small, big]), np.ones((2, 3)))
    np.testing.assert_allclose(Z[0], [1e8, 1e8, 0.0], rtol=1e-12)
    np.testing.assert_allclose(Z[1], [1e-8, 1.0, 1.0], rtol=1e-12)


# ---------------------------------------------------------------------------
# Ridge regression: primal (tall X) and dual (wide X)
# ---------------------------------------------------------------------------

def _design(rng, n, d, sparse):
    X = rng.normal(size=(n, d)) * (rng.random((n, d)) < 0.6)
    return sp.csr_matrix(X) if sparse else X


@pytest.mark.parametrize("sparse", [True, False])
@pytest.mark.parametrize("n,d", [(30, 6), (6, 30)])                # primal X'X and dual XX'
@pytest.mark.parametrize("l2_reg", [0.0, 0.3])
def test_ridge_matches_the_dense_normal_equations(n, d, l2_reg, sparse):
    rng = np.random.default_rng(10)
    X = _design(rng, n, d, sparse)
    T = rng.normal(size=(n, 3))
    Xd = X.toarray() if sparse else X
    if l2_reg > 0:
        expected = np.linalg.solve(Xd.T @ Xd + l2_reg * np.eye(d), Xd.T @ T)
    else:
        expected = np.linalg.lstsq(Xd, T, rcond=None)[0]         # minimum-norm least squares
    W = ridge(X, sp.csr_matrix(T) if sparse else T, l2_reg)
    assert W.shape == (d, 3)
    np.testing.assert_allclose(W, expected, rtol=1e-8, atol=1e-10)
    solver = GramRidge(X)
    assert solver.primal == (d <= n) and solver.gram.shape == (min(n, d),) * 2
    np.testing.assert_allclose(solver.solve(T, l2_reg), expected, rtol=1e-8, atol=1e-10)


@pytest.mark.parametrize("n,d", [(30, 6), (6, 30)])
@pytest.mark.parametrize("route", ["cholesky", "eigh"])
def test_gram_ridge_logdet_trace_over_all_features(n, d, route, request):
    if route == "eigh":
        request.getfixturevalue("no_cholesky")
    rng = np.random.default_rng(2)
    X = sp.csr_matrix(rng.normal(size=(n, d)) * (rng.random((n, d)) < 0.5))
    T = rng.normal(size=(n, 3))
    G = (X.T @ X).toarray()
    expected = np.linalg.solve(G + 0.3 * np.eye(d), X.T @ T)
    _, logdet = np.linalg.slogdet(G + 0.3 * np.eye(d))
    trace = np.trace(np.linalg.inv(G + 0.3 * np.eye(d)))
    solver = GramRidge(X)
    np.testing.assert_allclose(solver.solve(T, 0.3), expected, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(solver.logdet_trace(0.3), (logdet, trace), rtol=1e-10)
    assert solver.factor(0.3).method == route


def test_gram_ridge_caches_one_factor_per_penalty():
    rng = np.random.default_rng(11)
    solver = GramRidge(_design(rng, 20, 5, True))
    first = solver.factor(0.5)
    assert solver.factor(0.5) is first and solver.factor(1.0) is not first
    single = GramRidge(_design(rng, 20, 5, True), cache=False)
    single.solve(rng.normal(size=(20, 2)), 0.5)
    assert single.gram is None                                    # used as work space
    with pytest.raises(RuntimeError, match="single factorisation"):
        single.solve(rng.normal(size=(20, 2)), 0.7)
