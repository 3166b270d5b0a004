"""The proximal Adadelta loop (LSVV's Algorithm 1) against slow references: a literal
transcription of the step rule, and the minimum of a lasso-type objective found by ISTA."""

from __future__ import annotations

import math

import numpy as np
import pytest

from mlx.numerics.adadelta import proximal_adadelta


def _problem(seed=0, n=60, d=8):
    """``g(x) = mean((A x - b)^2) + a ||x||^2``, ``h(x) = ||x||_1``, weight ``lam``."""
    rng = np.random.default_rng(seed)
    A = rng.normal(size=(n, d)) / np.sqrt(d)
    x_true = np.zeros(d)
    x_true[:3] = [1.5, -2.0, 0.7]
    b = A @ x_true + 0.1 * rng.normal(size=n)
    a, lam = 0.01, 0.05

    def gradient(x, rows):
        Ar = A[rows]
        return 2.0 / len(rows) * Ar.T @ (Ar @ x - b[rows]) + 2.0 * a * x

    def objective(x):
        return float(np.mean((A @ x - b) ** 2) + a * x @ x + lam * np.abs(x).sum())

    return A, b, a, lam, gradient, objective


def _soft(x, t):
    return np.sign(x) * np.maximum(np.abs(x) - t, 0.0)


def _ista_minimum(A, b, a, lam, n_iter=20000):
    """Slow reference: proximal gradient with the fixed step 1/L, many iterations."""
    n, d = A.shape
    L = np.linalg.eigvalsh(2.0 / n * A.T @ A + 2.0 * a * np.eye(d)).max()
    x = np.zeros(d)
    for _ in range(n_iter):
        x = _soft(x - (2.0 / n * A.T @ (A @ x - b) + 2.0 * a * x) / L, lam / L)
    return x


def _literal(gradient, objective, x0, n_rows, rng, batch_size, n_epochs, prox, lam, rho, eps,
             prox_every, safeguard=False):
    """Algorithm 1 written out step by step, with the safeguard as documented."""
    x, G, M, history = x0.copy(), 0.0, 0.0, []
    m = min(batch_size, n_rows)
    batches = math.ceil(n_rows / m)
    damp, best = 1.0, None
    for _ in range(n_epochs):
        perm = rng.permutation(n_rows)
        tau = 0.0
        for j in range(batches):
            g = gradient(x, perm[j * m:(j + 1) * m])
            G = rho * G + (1 - rho) * float(g @ g)
            eta = damp * math.sqrt((M + eps) / (G + eps))
            x = x - eta * g
            M = rho * M + (1 - rho) * eta ** 2 * float(g @ g)
            tau += eta * lam
            if prox is not None and ((j + 1) % prox_every == 0 or j == batches - 1):
                x, tau = prox(x, tau), 0.0
        history.append(objective(x))
        if safeguard:
            if best is None or history[-1] < objective(best):
                best = x.copy()
            elif history[-1] > 2.0 * objective(best):       # overshoot: back, half the steps
                x, damp = best.copy(), damp / 2.0
    return (best if safeguard else x), history


@pytest.mark.parametrize("batch_size,prox_every", [(60, 1), (7, 1), (7, 4)])
def test_iterates_equal_a_literal_transcription(batch_size, prox_every):
    _, _, _, lam, gradient, objective = _problem()
    x0 = np.zeros(8)
    res = proximal_adadelta(gradient, objective, x0, 60, rng=np.random.default_rng(3),
                            batch_size=batch_size, epochs=6, prox=_soft, prox_weight=lam,
                            prox_every=prox_every, rho=0.5, eps=1e-2, safeguard=False)
    x, history = _literal(gradient, objective, x0, 60, np.random.default_rng(3), batch_size,
                          6, _soft, lam, 0.5, 1e-2, prox_every)
    np.testing.assert_allclose(res.x, x, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(res.objective, history, rtol=1e-12)
    batches = math.ceil(60 / batch_size)
    assert res.n_epochs == 6 and res.n_steps == 6 * batches
    assert res.n_prox == 6 * (batches // prox_every + (batches % prox_every > 0))
    assert res.converged is None and not res.diverged and res.n_damped == 0
    np.testing.assert_array_equal(x0, 0.0)                              # input untouched


def test_full_batch_reaches_the_proximal_objectives_minimum():
    A, b, a, lam, gradient, objective = _problem()
    x_ref = _ista_minimum(A, b, a, lam)
    res = proximal_adadelta(gradient, objective, np.zeros(8), 60,
                            rng=np.random.default_rng(1), batch_size=60, epochs=200,
                            prox=_soft, prox_weight=lam)
    assert objective(res.x) <= objective(x_ref) * (1 + 1e-12)
    np.testing.assert_allclose(res.x, x_ref, atol=1e-7)                 # measured 5e-9
    assert np.sum(res.x == 0.0) == np.sum(x_ref == 0.0)                 # the same support


def test_mini_batches_come_close_to_the_minimum():
    A, b, a, lam, gradient, objective = _problem()
    best = objective(_ista_minimum(A, b, a, lam))
    res = proximal_adadelta(gradient, objective, np.zeros(8), 60,
                            rng=np.random.default_rng(1), batch_size=10, epochs=200,
                            prox=_soft, prox_weight=lam)
    assert best <= objective(res.x) <= best * (1 + 1e-3)               # measured 1.2e-4


def test_min_steps_extends_the_epochs_and_tol_stops_early():
    _, _, _, lam, gradient, objective = _problem()
    res = proximal_adadelta(gradient, objective, np.zeros(8), 60,
                            rng=np.random.default_rng(0), batch_size=16, epochs=2,
                            min_steps=41)
    assert res.n_epochs == 11 and res.n_steps == 44 and res.n_prox == 0   # ceil(41 / 4)
    res = proximal_adadelta(gradient, objective, np.zeros(8), 60,
                            rng=np.random.default_rng(0), batch_size=60, epochs=500,
                            prox=_soft, prox_weight=lam, tol=1e-6)
    h = res.objective
    assert res.converged and res.n_epochs == len(h) < 500
    assert abs(h[-2] - h[-1]) <= 1e-6 * abs(h[-2])
    assert all(abs(h[i - 1] - h[i]) > 1e-6 * abs(h[i - 1]) for i in range(1, len(h) - 1))


def test_safeguard_returns_the_best_iterate_and_damps_after_an_overshoot():
    """A step-size rule far too large for the curvature: the plain loop ends above the best
    objective it passed; the safeguard returns that best iterate and halves the steps."""
    _, _, _, _, gradient, objective = _problem()

    def steep(x, rows):
        return 40.0 * gradient(x, rows)

    def steep_objective(x):
        return 40.0 * objective(x)

    plain, safe = (proximal_adadelta(steep, steep_objective, np.zeros(8), 60,
                                     rng=np.random.default_rng(0), batch_size=60, epochs=30,
                                     eps=1.0, safeguard=flag) for flag in (False, True))
    assert plain.n_damped == 0 and plain.objective[-1] > 2.0 * min(plain.objective)
    assert safe.n_damped >= 1
    h = safe.objective                     # damped exactly after the epochs above twice the best
    assert safe.n_damped == sum(h[i] > 2.0 * min(h[:i]) for i in range(1, len(h)))
    x, history = _literal(steep, steep_objective, np.zeros(8), 60, np.random.default_rng(0),
                          60, 30, None, 0.0, 0.5, 1.0, 1, safeguard=True)
    np.testing.assert_allclose(safe.x, x, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(h, history, rtol=1e-12)
    assert steep_objective(safe.x) == min(safe.objective)


@pytest.mark.filterwarnings("ignore:invalid value:RuntimeWarning")
def test_non_finite_iterates_are_reported_not_returned_as_a_fit():
    calls = []

    def exploding(x, rows):
        calls.append(1)
        return np.full_like(x, np.inf if len(calls) > 3 else 1.0)

    res = proximal_adadelta(exploding, lambda x: float(x @ x), np.zeros(3), 10,
                            rng=np.random.default_rng(0), batch_size=5, epochs=5,
                            safeguard=False)
    assert res.diverged and res.n_epochs == 2 and len(res.objective) == 1
    calls.clear()
    res = proximal_adadelta(exploding, lambda x: float(x @ x), np.zeros(3), 10,
                            rng=np.random.default_rng(0), batch_size=5, epochs=5,
                            safeguard=True)
    assert not res.diverged and np.isfinite(res.x).all()               # the best epoch's
    assert res.objective[0] < math.inf and math.inf in res.objective
