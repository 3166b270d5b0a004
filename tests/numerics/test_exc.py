"""ORLand's EXC objective and its solver: the gradient against finite differences, a value by
hand, the minimum against L-BFGS, descent from the start, and the level rule."""

import numpy as np
import pytest
import scipy.optimize as so

from mlx.numerics.exc import exc_descent, exc_levels, exc_objective


def _ordinal_problem(seed=7, n=200, m=6, r=5):
    rng = np.random.default_rng(seed)
    Z = np.hstack([rng.normal(size=(n, m - 1)), np.ones((n, 1))])
    k = np.clip(np.round(Z[:, :3].sum(axis=1) + 2 + 0.3 * rng.normal(size=n)), 0, r - 1)
    return Z, k.astype(np.int64)


@pytest.mark.parametrize("margin", [0.1, 0.25, 0.5])
@pytest.mark.parametrize("n_penalised", [4, 5])
def test_exc_gradient_matches_finite_differences(margin, n_penalised):
    rng = np.random.default_rng(int(margin * 100) + n_penalised)
    n, m, r = 40, 5, 4
    Z = rng.normal(size=(n, m))
    k = rng.integers(0, r, size=n)
    C = 0.7
    for _ in range(3):
        w = rng.normal(size=m) * 2
        value, grad = exc_objective(w, Z, k, r, C, margin, n_penalised)
        h = 1e-6
        fd = np.array([(exc_objective(w + h * e, Z, k, r, C, margin, n_penalised)[0]
                        - exc_objective(w - h * e, Z, k, r, C, margin, n_penalised)[0]) / (2 * h)
                       for e in np.eye(m)])
        np.testing.assert_allclose(grad, fd, rtol=1e-6, atol=1e-6)
        assert value >= 0.5 * w[:n_penalised] @ w[:n_penalised]


def test_exc_objective_value_by_hand():
    Z = np.array([[1.0], [1.0], [1.0]])
    k = np.array([0, 1, 2])                              # thresholds 0.5, 1.5
    # f = 1 for all: level 0 upper violation 0.25 + 1 - 0.5 = 0.75; level 1 inside by
    # 0.5 >= 0.25 on both sides; level 2 lower violation 0.25 - (1 - 1.5) = 0.75.
    value, _ = exc_objective(np.array([1.0]), Z, k, 3, 2.0, 0.25)
    assert value == pytest.approx(0.5 + 2.0 * (0.75 ** 2 + 0.75 ** 2))


def test_exc_descent_reaches_the_minimum():
    m, r = 6, 5
    Z, k = _ordinal_problem(7, m=m, r=r)
    for C in (1.0, 1e4):
        res = exc_descent(Z, k, r, C=C, margin=0.25, n_penalised=m - 1, max_iter=500, tol=1e-8)
        ref = so.minimize(exc_objective, np.zeros(m), args=(Z, k, r, C, 0.25, m - 1),
                          jac=True, method="L-BFGS-B", options={"ftol": 1e-15, "gtol": 1e-10,
                                                                "maxiter": 10000})
        assert res.converged and res.n_iter < 100
        assert res.objective <= ref.fun * (1 + 1e-8) + 1e-10
        assert res.objective == pytest.approx(ref.fun, rel=1e-7)


def test_exc_levels_thresholds():
    s = np.array([-3.0, 0.5, 0.5000001, 1.5, 1.6, 2.5, 9.0])
    np.testing.assert_array_equal(exc_levels(s, 3), [0, 0, 1, 1, 2, 2, 2])


@pytest.mark.parametrize("C", [0.1, 1.0, 1e4])
def test_exc_descent_decreases_the_objective_from_the_start(C):
    """Each step minimises a quadratic upper bound of J: one step from w = 0 cannot rise, and
    more steps reach lower objectives than fewer (up to rounding at the minimum)."""
    Z, k = _ordinal_problem()
    start = exc_objective(np.zeros(6), Z, k, 5, C, 0.25, 5)[0]
    values = []
    for max_iter in (1, 2, 5, 20, 200):
        res = exc_descent(Z, k, 5, C=C, margin=0.25, n_penalised=5, max_iter=max_iter,
                          tol=1e-10)
        assert res.n_iter <= max_iter
        assert res.objective == pytest.approx(exc_objective(res.w, Z, k, 5, C, 0.25, 5)[0])
        values.append(res.objective)
    first = exc_descent(Z, k, 5, C=C, margin=0.25, n_penalised=5, max_iter=1, tol=1e-10)
    assert first.n_iter == 1 and not first.converged
    assert values[0] < start
    assert values[-1] <= min(values) * (1 + 1e-12)
    assert values[-1] < values[0]


def test_exc_descent_survives_a_singular_majoriser():
    """An unpenalised column of zeros makes P singular (Cholesky fails): the jittered factor
    still descends to the same minimum, with a zero weight on that column."""
    Z, k = _ordinal_problem()
    Z0 = np.hstack([Z, np.zeros((Z.shape[0], 1))])
    with pytest.raises(np.linalg.LinAlgError):
        np.linalg.cholesky(2.0 * Z0.T @ Z0 + np.diag([1.0] * 5 + [0.0, 0.0]))
    one = exc_descent(Z, k, 5, C=1.0, margin=0.25, n_penalised=5, max_iter=500, tol=1e-9)
    two = exc_descent(Z0, k, 5, C=1.0, margin=0.25, n_penalised=5, max_iter=500, tol=1e-9)
    assert two.converged and two.w[-1] == 0.0
    assert two.objective == pytest.approx(one.objective, rel=1e-9)
    np.testing.assert_allclose(two.w[:-1], one.w, atol=1e-6)
