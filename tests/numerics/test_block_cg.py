"""Block CG (independent per-column systems) against dense solves, and its contract."""

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.sparse.linalg import LinearOperator

from mlx.numerics.cg import block_cg, cg


def _spd(rng, n=25, cond=50.0):
    Q, _ = np.linalg.qr(rng.normal(size=(n, n)))
    return (Q * np.geomspace(1.0, cond, n)) @ Q.T


@pytest.mark.parametrize("form", ["dense", "sparse", "linear_operator", "callable"])
def test_shared_matrix_matches_dense_solve(form):
    rng = np.random.default_rng(0)
    A = _spd(rng)
    B = rng.normal(size=(25, 4))
    op = {"dense": A, "sparse": sp.csr_matrix(A),
          "linear_operator": LinearOperator(A.shape, matvec=lambda v: A @ v,
                                            matmat=lambda V: A @ V),
          "callable": lambda P, cols: A @ P}[form]
    B0 = B.copy()
    res = block_cg(op, B, tol=1e-12, max_iter=500)
    assert res.converged.all() and res.info == "converged"
    np.testing.assert_allclose(res.x, np.linalg.solve(A, B), rtol=1e-8, atol=1e-10)
    np.testing.assert_array_equal(B, B0)
    assert np.all(res.residual_norm <= 1e-12 * np.linalg.norm(B, axis=0))
    np.testing.assert_allclose(res.residual_norm, np.linalg.norm(B - A @ res.x, axis=0),
                               atol=1e-10)


def test_columns_converge_at_different_iterations_and_zero_columns_at_once():
    """On diag(1..n), CG on a right-hand side spread over j distinct eigenvalues stops after
    exactly j iterations; each column must stop on its own and keep its solution."""
    n = 12
    A = np.diag(np.arange(1.0, n + 1) * 3.0)
    B = np.zeros((n, 5))
    B[0, 0] = 1.0                                                 # 1 eigenvalue -> 1 iteration
    B[[1, 5, 9], 1] = [1.0, -2.0, 0.5]                            # 3 -> 3 iterations
    B[:, 3] = np.linspace(1.0, 2.0, n)                            # 12 -> 12 iterations
    B[[2, 7], 4] = [4.0, 1.0]                                     # 2 -> 2 iterations
    seen = []                                                     # column 2 stays zero

    def op(P, cols):
        seen.append(cols.copy())
        return A @ P

    res = block_cg(op, B, tol=1e-10, max_iter=50)
    np.testing.assert_array_equal(res.n_iter, [1, 3, 0, 12, 2])
    assert res.converged.all() and res.info == "converged"
    np.testing.assert_allclose(res.x, np.linalg.solve(A, B), rtol=1e-10, atol=1e-14)
    np.testing.assert_array_equal(res.x[:, 2], 0.0)
    np.testing.assert_array_equal(seen[0], [0, 1, 3, 4])          # zero column never applied
    np.testing.assert_array_equal(seen[1], [1, 3, 4])
    np.testing.assert_array_equal(seen[2], [1, 3])
    np.testing.assert_array_equal(seen[-1], [3])
    assert len(seen) == 12


def test_per_column_operators_and_preconditioner_receive_their_columns():
    rng = np.random.default_rng(1)
    A = _spd(rng, n=15)
    shifts = np.array([0.0, 0.5, 5.0, 50.0])
    B = rng.normal(size=(15, 4))
    diag = np.diag(A)[:, None] + shifts                           # Jacobi, per column

    def op(P, cols):                                              # A_j = A + shift_j I
        return A @ P + shifts[cols] * P

    def precond(R, cols):
        return R / diag[:, cols]

    res = block_cg(op, B, precond=precond, tol=1e-12, max_iter=200)
    assert res.converged.all()
    for j, s in enumerate(shifts):
        np.testing.assert_allclose(res.x[:, j], np.linalg.solve(A + s * np.eye(15), B[:, j]),
                                   rtol=1e-9, atol=1e-12)
    assert res.n_iter[3] < res.n_iter[0]                          # well conditioned: faster


def test_exact_preconditioner_converges_in_one_iteration():
    rng = np.random.default_rng(2)
    A = _spd(rng, n=10)
    Ainv = np.linalg.inv(A)
    B = rng.normal(size=(10, 3))
    res = block_cg(A, B, precond=lambda R, cols: Ainv @ R, tol=1e-10)
    np.testing.assert_array_equal(res.n_iter, [1, 1, 1])
    np.testing.assert_allclose(res.x, np.linalg.solve(A, B), rtol=1e-10)


def test_each_column_matches_a_single_system_solve():
    rng = np.random.default_rng(3)
    A = _spd(rng, cond=20.0)
    B = rng.normal(size=(25, 3))
    block = block_cg(A, B, tol=1e-9)
    for j in range(3):
        alone = block_cg(A, B[:, j], tol=1e-9)
        single = cg(A, B[:, j], tol=1e-9)
        assert alone.x.shape == (25,)
        # same iterates up to rounding (reductions over a block may round differently)
        assert abs(block.n_iter[j] - alone.n_iter[0]) <= 1
        assert abs(block.n_iter[j] - single.n_iter) <= 1
        np.testing.assert_allclose(block.x[:, j], alone.x, rtol=1e-8, atol=1e-10)
        np.testing.assert_allclose(block.x[:, j], single.x, rtol=1e-8, atol=1e-10)


def test_zero_right_hand_side_and_warm_start_at_the_solution():
    A = _spd(np.random.default_rng(4), n=6)
    res = block_cg(A, np.zeros((6, 2)))
    assert res.converged.all() and res.info == "converged"
    np.testing.assert_array_equal(res.n_iter, 0)
    np.testing.assert_array_equal(res.x, 0.0)
    X = np.random.default_rng(5).normal(size=(6, 2))
    X0 = X.copy()
    res = block_cg(A, A @ X, X0=X, tol=1e-8)
    np.testing.assert_array_equal(res.n_iter, 0)
    np.testing.assert_array_equal(X, X0)                          # X0 untouched
    with pytest.raises(ValueError, match="X0 has shape"):
        block_cg(A, A @ X, X0=X[:, :1])


def test_max_iter_and_indefinite_columns_are_reported_per_column():
    A = np.diag(np.arange(1.0, 9.0))
    B = np.ones((8, 2))
    B[1:, 0] = 0.0                                                # column 0: one iteration
    res = block_cg(A, B, tol=1e-12, max_iter=3)
    np.testing.assert_array_equal(res.converged, [True, False])
    np.testing.assert_array_equal(res.n_iter, [1, 3])
    assert res.info == "max_iter reached"

    signs = np.array([1.0, -1.0])

    def op(P, cols):                                              # A_1 = -I: not PD
        return P * signs[cols]

    res = block_cg(op, np.ones((3, 2)), tol=1e-12)
    np.testing.assert_array_equal(res.converged, [True, False])
    np.testing.assert_array_equal(res.n_iter, [1, 0])
    np.testing.assert_array_equal(res.x[:, 1], 0.0)
    assert res.info == "operator not positive definite"


def test_tolerances_and_callback():
    A = _spd(np.random.default_rng(6), n=8)
    B = np.random.default_rng(7).normal(size=(8, 2))
    calls = []
    res = block_cg(A, B, atol=1e3, callback=calls.append)          # atol above ||b||
    np.testing.assert_array_equal(res.n_iter, 0)
    assert calls == []
    res = block_cg(A, B, tol=1e-10, callback=lambda X: calls.append(X.copy()))
    assert len(calls) == res.n_iter.max()
    np.testing.assert_array_equal(calls[-1], res.x)
    for bad in ({"tol": -1.0}, {"atol": -1.0}, {"max_iter": -1}):
        with pytest.raises(ValueError):
            block_cg(A, B, **bad)
    with pytest.raises(ValueError, match="1-D or 2-D"):
        block_cg(A, np.ones((8, 2, 2)))


def test_single_system_cg_accepts_a_preconditioner():
    rng = np.random.default_rng(8)
    A = _spd(rng, n=20, cond=1e4)
    b = rng.normal(size=20)
    d = np.diag(A)
    plain = cg(A, b, tol=1e-10, max_iter=500)
    jacobi = cg(A, b, tol=1e-10, max_iter=500, precond=lambda r: r / d)
    exact = cg(A, b, tol=1e-10, precond=lambda r: np.linalg.solve(A, r))
    for res in (plain, jacobi, exact):
        assert res.converged
        np.testing.assert_allclose(res.x, np.linalg.solve(A, b), rtol=1e-6, atol=1e-8)
    assert exact.n_iter == 1
