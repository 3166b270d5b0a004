"""CG and TRON against dense reference solutions, plus their contracts."""

import numpy as np
import pytest
from scipy.optimize import minimize
from scipy.sparse.linalg import LinearOperator

from mlx.numerics.cg import cg
from mlx.numerics.tron import tron


def _spd(rng, n=30, cond=10.0):
    Q, _ = np.linalg.qr(rng.normal(size=(n, n)))
    return (Q * np.geomspace(1.0, cond, n)) @ Q.T


def _cases():
    rng = np.random.default_rng(0)
    B = rng.normal(size=(40, 12))
    return {
        "spd": _spd(rng),
        "ill_conditioned_spd": _spd(rng, cond=1e6),
        "low_rank_normal_equation": B.T @ B + 1e-2 * np.eye(12),
        "diagonal": np.diag(np.arange(1.0, 21.0)),
    }


CASES = _cases()


# ---------------------------------------------------------------------------
# CG
# ---------------------------------------------------------------------------

@pytest.mark.parametrize("case", sorted(CASES))
@pytest.mark.parametrize("form", ["dense", "linear_operator", "callable"])
def test_cg_matches_dense_solve(case, form):
    A = CASES[case]
    n = A.shape[0]
    b = np.random.default_rng(1).normal(size=n)
    op = {"dense": A,
          "linear_operator": LinearOperator((n, n), matvec=lambda v: A @ v),
          "callable": lambda v: A @ v}[form]
    b0, A0 = b.copy(), A.copy()
    res = cg(op, b, tol=1e-10, max_iter=10 * n)
    assert res.converged and res.info == "converged"
    np.testing.assert_allclose(res.x, np.linalg.solve(A, b), rtol=1e-6, atol=1e-8)
    assert np.linalg.norm(b - A @ res.x) <= 1e-9 * np.linalg.norm(b) * 10
    np.testing.assert_array_equal(b, b0)                # inputs untouched
    np.testing.assert_array_equal(A, A0)


def test_cg_matrix_shaped_unknown_matches_vectorised_solve():
    rng = np.random.default_rng(2)
    A = _spd(rng, n=8)
    M = _spd(rng, n=3)
    B = rng.normal(size=(8, 3))
    # A X M + 0.5 X = B  <=>  (M kron A + 0.5 I) vec_F(X) = vec_F(B)
    res = cg(lambda S: A @ S @ M + 0.5 * S, B, tol=1e-12, max_iter=200)
    K = np.kron(M, A) + 0.5 * np.eye(24)
    ref = np.linalg.solve(K, B.ravel(order="F")).reshape((8, 3), order="F")
    assert res.x.shape == (8, 3)
    np.testing.assert_allclose(res.x, ref, rtol=1e-8, atol=1e-10)


def test_cg_max_iter_one_reports_one_iteration_and_callback_count():
    A = CASES["spd"]
    b = np.ones(A.shape[0])
    calls = []
    res = cg(A, b, tol=1e-12, max_iter=1, callback=lambda x: calls.append(x.copy()))
    assert res.n_iter == 1 and not res.converged and res.info == "max_iter reached"
    assert len(calls) == 1
    calls.clear()
    res = cg(A, b, tol=1e-12, max_iter=500, callback=lambda x: calls.append(1))
    assert len(calls) == res.n_iter


def test_cg_warm_start_at_solution_needs_no_iteration():
    A = CASES["spd"]
    x = np.random.default_rng(3).normal(size=A.shape[0])
    x0 = x.copy()
    res = cg(A, A @ x, x0=x, tol=1e-8)
    assert res.n_iter == 0 and res.converged
    np.testing.assert_array_equal(x, x0)


def test_cg_never_increases_the_quadratic_from_a_warm_start():
    A = CASES["ill_conditioned_spd"]
    rng = np.random.default_rng(4)
    b = rng.normal(size=A.shape[0])

    def q(x):
        return 0.5 * x @ A @ x - b @ x

    x0 = rng.normal(size=A.shape[0])
    values = [q(x0)]
    cg(A, b, x0=x0, tol=1e-14, max_iter=60, callback=lambda x: values.append(q(x)))
    assert np.all(np.diff(values) <= 1e-9 * np.abs(values[:-1]))


def test_cg_zero_rhs_returns_zero():
    res = cg(np.eye(3), np.zeros(3))
    assert res.n_iter == 0 and res.converged
    np.testing.assert_array_equal(res.x, 0.0)


def test_cg_reports_indefinite_operator():
    res = cg(np.diag([1.0, -1.0]), np.array([1.0, 1.0]), tol=1e-12)
    assert not res.converged and res.info == "operator not positive definite"


def test_cg_rejects_bad_arguments():
    with pytest.raises(ValueError, match="cg: A must be square"):
        cg(np.ones((2, 3)), np.ones(2))
    with pytest.raises(ValueError, match="cg: x0 has shape"):
        cg(np.eye(2), np.ones(2), x0=np.ones(3))
    with pytest.raises(ValueError, match="cg: tol and atol must be >= 0"):
        cg(np.eye(2), np.ones(2), tol=-1)


# ---------------------------------------------------------------------------
# TRON
# ---------------------------------------------------------------------------

def _logistic_regression(rng, n=200, d=15, C=1.0):
    X = rng.normal(size=(n, d))
    y = np.sign(X @ rng.normal(size=d) + 0.5 * rng.normal(size=n))

    def f(w):
        return 0.5 * w @ w + C * np.logaddexp(0.0, -y * (X @ w)).sum()

    def fun_grad(w):
        m = y * (X @ w)
        sig = 0.5 * (1 + np.tanh(-0.5 * m))                       # sigma(-m)
        return f(w), w - C * X.T @ (y * sig)

    def hessp(w, v):
        m = y * (X @ w)
        sig = 0.5 * (1 + np.tanh(0.5 * m))
        return v + C * X.T @ (sig * (1 - sig) * (X @ v))

    return f, fun_grad, hessp, d


def test_tron_solves_logistic_regression_like_a_reference_optimizer():
    f, fun_grad, hessp, d = _logistic_regression(np.random.default_rng(0))
    x0 = np.zeros(d)
    res = tron(fun_grad, hessp, x0, tol=1e-6, max_iter=100)
    ref = minimize(lambda w: fun_grad(w), x0, jac=True, method="L-BFGS-B",
                   options={"gtol": 1e-12, "ftol": 1e-15, "maxiter": 10000})
    assert res.converged and res.info == "converged"
    assert res.grad_norm <= 1e-6 * np.linalg.norm(fun_grad(x0)[1])
    assert res.fun == pytest.approx(f(res.x))
    assert res.fun <= ref.fun + 1e-9
    np.testing.assert_allclose(res.x, ref.x, rtol=1e-4, atol=1e-5)
    # asking for more than double precision allows ends at "no further progress"
    tight = tron(fun_grad, hessp, x0, tol=1e-14, max_iter=100)
    assert tight.info in ("converged", "no further progress")
    assert tight.grad_norm <= res.grad_norm
    np.testing.assert_array_equal(x0, 0.0)                         # x0 untouched


@pytest.mark.parametrize("case", sorted(CASES))
def test_tron_on_quadratics_matches_dense_solve(case):
    A = CASES[case]
    b = np.random.default_rng(5).normal(size=A.shape[0])
    res = tron(lambda x: (0.5 * x @ A @ x - b @ x, A @ x - b), lambda x, v: A @ v,
               np.zeros_like(b), tol=1e-8, max_iter=200)
    ref = np.linalg.solve(A, b)
    assert np.linalg.norm(res.x - ref) <= 1e-5 * np.linalg.norm(ref)


def test_tron_never_increases_the_objective_and_asks_hessians_at_evaluated_points():
    f, fun_grad, hessp, d = _logistic_regression(np.random.default_rng(1), C=10.0)
    evaluated, accepted = [], []

    def fg(w):
        evaluated.append(w.copy())
        return fun_grad(w)

    def hp(w, v):
        assert any(np.array_equal(w, e) for e in evaluated)
        if not accepted or not np.array_equal(accepted[-1], w):
            accepted.append(w.copy())
        return hessp(w, v)

    x0 = np.random.default_rng(2).normal(size=d)
    res = tron(fg, hp, x0, tol=1e-8, max_iter=50)
    values = [f(w) for w in accepted] + [res.fun]
    assert np.all(np.diff(values) <= 1e-12 * np.abs(values[:-1]))
    assert res.fun <= f(x0)


def test_tron_matrix_shaped_variable_and_max_iter():
    rng = np.random.default_rng(3)
    A = _spd(rng, n=6)
    B = rng.normal(size=(6, 2))

    def fun_grad(X):
        return 0.5 * np.vdot(X, A @ X) - np.vdot(B, X), A @ X - B

    res = tron(fun_grad, lambda X, V: A @ V, np.zeros((6, 2)), tol=1e-12, max_iter=1)
    assert res.x.shape == (6, 2) and res.n_iter <= 1
    res = tron(fun_grad, lambda X, V: A @ V, np.zeros((6, 2)), tol=1e-8, max_iter=100)
    np.testing.assert_allclose(res.x, np.linalg.solve(A, B), rtol=1e-5, atol=1e-6)


def test_tron_starting_at_the_optimum_returns_immediately():
    A = CASES["diagonal"]
    b = np.ones(A.shape[0])
    x = np.linalg.solve(A, b)
    res = tron(lambda z: (0.5 * z @ A @ z - b @ z, A @ z - b), lambda z, v: A @ v, x)
    assert res.converged and res.n_iter == 0


def test_tron_cg_budget_is_respected():
    _, fun_grad, hessp, d = _logistic_regression(np.random.default_rng(4))
    res = tron(fun_grad, hessp, np.zeros(d), tol=1e-12, max_iter=3, cg_max_iter=2)
    assert res.n_iter <= 3
    assert res.n_cg_iter <= 2 * 4                                  # rejected steps included


def test_tron_tolerance_is_relative_to_the_gradient_at_zero():
    _, fun_grad, hessp, d = _logistic_regression(np.random.default_rng(6))
    g0 = np.linalg.norm(fun_grad(np.zeros(d))[1])
    warm = tron(fun_grad, hessp, np.zeros(d), tol=1e-8, max_iter=100).x * 0.999
    res = tron(fun_grad, hessp, warm, tol=1e-3, max_iter=100)
    assert res.converged and res.grad_norm <= 1e-3 * g0
    # a warm start already that close to the optimum needs no step at all
    assert res.n_iter == 0
    strict = tron(fun_grad, hessp, warm, tol=1e-3, max_iter=100,
                  grad_ref=np.linalg.norm(fun_grad(warm)[1]))
    assert strict.n_iter >= 1


def test_tron_rejects_bad_arguments():
    with pytest.raises(ValueError, match="tron: tol must be >= 0"):
        tron(lambda x: (0.0, x), lambda x, v: v, np.zeros(2), tol=-1.0)
