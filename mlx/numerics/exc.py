"""ORLand's learner: the EXC ordinal-regression objective with fixed thresholds, and its
solver.

EXC (Chu and Keerthi 2007, explicit constraints on the thresholds) with the thresholds fixed
half-way between consecutive level indices, ``b_j = j + 1/2``, and the squared hinge: the
primal :func:`exc_objective`, minimised by :func:`exc_descent`; :func:`exc_levels` maps
latent scores to level indices. Used by :class:`mlx.methods.landmark.Landmark`
(``model="orland"``).

References
----------
P. Kar and P. Jain, "Supervised learning with similarity functions", NIPS 2012, Definition 12.
W. Chu and S. S. Keerthi, "Support vector ordinal regression", Neural Computation 19(3), 2007.
B. O'Donoghue and E. Candes, "Adaptive restart for accelerated gradient schemes", Foundations
of Computational Mathematics 15, 2015.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import scipy.linalg as sla

__all__ = ["EXCResult", "JITTER", "exc_descent", "exc_levels", "exc_objective"]

JITTER = 1e-12
"""When the majorising matrix ``P`` of :func:`exc_descent` is numerically singular (a huge
``C``, collinear unpenalised columns), ``JITTER * max(trace(P), 1)`` is added to its diagonal:
a slightly larger ``P`` still majorises the Hessian, so the steps stay safe."""


def exc_levels(scores: np.ndarray, n_levels: int) -> np.ndarray:
    """Level indices ``0 .. n_levels - 1`` of latent scores under the fixed thresholds
    ``b_j = j + 1/2`` (``j = 0 .. n_levels - 2``): index ``k`` is the number of thresholds
    strictly below the score, so ``b_{k-1} < f <= b_k``. Non-decreasing in the score."""
    thresholds = np.arange(n_levels - 1) + 0.5
    return np.searchsorted(thresholds, scores, side="left")


def exc_objective(w: np.ndarray, Z: np.ndarray, k: np.ndarray, n_levels: int, C: float,
                  margin: float, n_penalised: int | None = None):
    r"""The ORLand primal: EXC with fixed equi-spaced thresholds and the squared hinge.

    With latent scores ``f = Z w``, level indices ``k_i`` in ``0 .. r-1`` (``r = n_levels``)
    and thresholds ``b_j = j + 1/2``, the objective is

    ``J(w) = 1/2 sum_{j < n_penalised} w_j^2
             + C sum_i ( [margin - (f_i - b_{k_i - 1})]_+^2 + [margin - (b_{k_i} - f_i)]_+^2 )``

    where the first hinge is absent for the lowest level (``b_{-1} = -inf``) and the second
    for the highest (``b_{r-1} = +inf``). Each point should sit inside its level's interval
    ``(b_{k-1}, b_k]``, at least ``margin`` from both ends (Definition 12 of the paper with
    the margin loss squared).

    Parameters
    ----------
    w : ndarray of shape (m,)
    Z : ndarray of shape (n, m)
        Features; the columns from ``n_penalised`` on (an intercept column) are not
        penalised. ``n_penalised=None``: all are.
    k : ndarray of int, shape (n,)
    n_levels : int >= 2
    C : float > 0
    margin : float in (0, 1/2]

    Returns
    -------
    value : float
    grad : ndarray of shape (m,)
    """
    m = w.size if n_penalised is None else n_penalised
    f = Z @ w
    lower = np.where(k > 0, np.maximum(margin - f + (k - 0.5), 0.0), 0.0)
    upper = np.where(k < n_levels - 1, np.maximum(margin + f - (k + 0.5), 0.0), 0.0)
    value = 0.5 * float(w[:m] @ w[:m]) + C * float(lower @ lower + upper @ upper)
    g = 2.0 * C * (upper - lower)                           # dJ/df_i
    grad = Z.T @ g
    grad[:m] += w[:m]
    return value, grad


@dataclass(frozen=True)
class EXCResult:
    """Outcome of :func:`exc_descent`.

    Attributes
    ----------
    w : ndarray of shape (m,)
    n_iter : int
        Gradient steps taken.
    converged : bool
        Whether ``sqrt(g' P^-1 g) <= tol * sqrt(g0' P^-1 g0)`` was reached, ``g0`` the gradient
        at the start.
    objective : float
        ``J(w)`` at the returned ``w``.
    """

    w: np.ndarray
    n_iter: int
    converged: bool
    objective: float


def exc_descent(Z: np.ndarray, k: np.ndarray, n_levels: int, *, C: float, margin: float,
                n_penalised: int, max_iter: int, tol: float) -> EXCResult:
    r"""Minimise :func:`exc_objective` by preconditioned gradient descent with momentum.

    The squared hinge has second derivative 0 or 2, and with ``margin <= 1/2`` at most one of
    a point's two hinges is active, so the Hessian of ``J`` never exceeds
    ``P = diag(1 (penalised), 0 (intercept)) + 2 C Z'Z``. Each step is therefore the fixed,
    safe step ``w <- v - P^{-1} grad J(v)`` (the minimiser of the quadratic upper bound of
    ``J`` at ``v``: majorise-minimise, no step size to tune), with Nesterov momentum
    ``v = w + (t_prev - 1) / t (w - w_prev)``, restarted (``t = 1``) whenever the step goes
    uphill along the momentum (O'Donoghue and Candes 2015). Starts from ``w = 0``. ``P`` is
    factorised once by Cholesky (it is positive definite when ``Z``'s unpenalised columns
    are linearly independent).
    """
    m = Z.shape[1]
    P = 2.0 * C * (Z.T @ Z)
    P[np.arange(n_penalised), np.arange(n_penalised)] += 1.0
    try:
        factor = sla.cho_factor(P)
    except np.linalg.LinAlgError:                          # numerically singular (huge C,
        jitter = JITTER * max(float(np.trace(P)), 1.0)    # collinear unpenalised columns):
        factor = sla.cho_factor(P + jitter * np.eye(m))   # a slightly larger, still safe P
    w = np.zeros(m)
    v = w
    t = 1.0
    value, g = exc_objective(v, Z, k, n_levels, C, margin, n_penalised)
    step = sla.cho_solve(factor, g)
    ref = math.sqrt(max(float(g @ step), 0.0))
    converged = ref == 0.0
    n_iter = 0
    while not converged and n_iter < max_iter:
        w_new = v - step
        n_iter += 1
        if float(g @ (w_new - w)) > 0.0:                    # momentum points uphill: restart
            t = 1.0
            v = w_new
        else:
            t_new = 0.5 * (1.0 + math.sqrt(1.0 + 4.0 * t * t))
            v = w_new + ((t - 1.0) / t_new) * (w_new - w)
            t = t_new
        w = w_new
        value, g = exc_objective(v, Z, k, n_levels, C, margin, n_penalised)
        step = sla.cho_solve(factor, g)
        if math.sqrt(max(float(g @ step), 0.0)) <= tol * ref:
            w = v
            converged = True
    value, _ = exc_objective(w, Z, k, n_levels, C, margin, n_penalised)
    return EXCResult(w=w, n_iter=n_iter, converged=converged, objective=value)
