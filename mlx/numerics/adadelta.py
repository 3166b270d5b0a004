"""Proximal mini-batch gradient descent with an Adadelta-style scalar step size.

The epoch loop of LSVV's Algorithm 1 (:class:`mlx.methods.lsvv.LSVV`): at every mini-batch a
gradient step on the smooth part ``g`` with the step size

    G <- rho G + (1 - rho) ||grad||^2,   eta = damp sqrt((M + eps) / (G + eps)),
    M <- rho M + (1 - rho) ||eta grad||^2,

then, for a composite objective ``g + h``, the proximal step of ``tau h`` with ``tau`` the
summed ``eta_t`` weight of the steps since the last one. Mini-batches are drawn without
replacement, one permutation per epoch.

References
----------
M. D. Zeiler, "ADADELTA: an adaptive learning rate method", arXiv:1212.5701, 2012.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

__all__ = ["AdadeltaResult", "DAMP_FACTOR", "OVERSHOOT", "proximal_adadelta"]

OVERSHOOT = 2.0
"""With ``safeguard``, an epoch that ends with more than this many times the lowest
objective seen so far counts as an overshoot: the iterate goes back to the best one and every
later step is damped by :data:`DAMP_FACTOR`."""

DAMP_FACTOR = 0.5
"""The factor by which every later step is multiplied after an overshoot."""


@dataclass(frozen=True)
class AdadeltaResult:
    """Outcome of :func:`proximal_adadelta`.

    Attributes
    ----------
    x : ndarray
        The iterate returned: with ``safeguard`` the one with the lowest objective at the end
        of an epoch, otherwise the last one (same shape as ``x0``).
    n_epochs : int
        Epochs run (the last one's number; 0 when none ran).
    n_steps : int
        Mini-batch gradient steps taken.
    n_prox : int
        Proximal steps taken.
    objective : list of float
        The objective at the end of every epoch (``inf`` where the iterate was not finite).
    n_damped : int
        How many times the safeguard went back to the best iterate and halved the steps.
    converged : bool or None
        With ``tol``: whether the relative change of the objective over an epoch reached it.
        None without ``tol`` (a fixed number of epochs).
    diverged : bool
        The iterate became non-finite and there was no finite best iterate to return to;
        the loop stopped after that epoch and ``x`` is not finite.
    """

    x: np.ndarray
    n_epochs: int
    n_steps: int
    n_prox: int
    objective: list
    n_damped: int
    converged: bool | None
    diverged: bool = False


def proximal_adadelta(gradient: Callable[[np.ndarray, np.ndarray], np.ndarray],
                      objective: Callable[[np.ndarray], float], x0: np.ndarray, n_rows: int,
                      *, rng: np.random.Generator, batch_size: int, epochs: int,
                      min_steps: int = 0,
                      prox: Callable[[np.ndarray, float], np.ndarray] | None = None,
                      prox_weight: float = 0.0, prox_every: int = 1, rho: float = 0.5,
                      eps: float = 1e-2, safeguard: bool = True,
                      tol: float | None = None) -> AdadeltaResult:
    """Minimise ``g(x) + prox_weight h(x)`` by proximal mini-batch steps (module docstring).

    Parameters
    ----------
    gradient : callable
        ``gradient(x, rows) -> grad``: the mini-batch gradient of ``g`` on ``rows`` (an index
        array into ``0 .. n_rows - 1``), a new array of ``x``'s shape (it is scaled in place).
    objective : callable
        ``objective(x) -> float``: ``g(x) + prox_weight h(x)`` over every row, evaluated at the
        end of every epoch (for ``safeguard`` and ``tol``).
    x0 : ndarray
        Starting point; not modified.
    n_rows : int
        Rows the mini-batches are drawn from.
    rng : numpy.random.Generator
        Draws one permutation of the rows per epoch.
    batch_size : int
        Rows per mini-batch (at most ``n_rows``); the last batch of an epoch may be smaller.
    epochs : int
        Passes over the rows, extended so that at least ``min_steps`` steps run.
    prox : callable, optional
        ``prox(x, tau) -> x'``: the proximal map of ``tau h``. None: no proximal step.
    prox_weight : float
        The weight of ``h``: each step adds ``eta_t prox_weight`` to the pending threshold.
    prox_every : int
        The proximal step runs every ``prox_every`` mini-batches and after the last one of
        every epoch, with the threshold summed since the last one.
    rho, eps : float
        The forget factor and the conditioning constant of the step size.
    safeguard : bool
        Keep the iterate of lowest objective at the end of an epoch and return it; after an
        overshoot (:data:`OVERSHOOT`), go back to it and damp all later steps
        (:data:`DAMP_FACTOR`).
    tol : float, optional
        Stop when ``|F_{e-1} - F_e| <= tol |F_{e-1}|`` for the objectives ``F`` at the end of
        two consecutive epochs.

    Returns
    -------
    AdadeltaResult
    """
    x = np.array(x0, dtype=np.float64, copy=True)
    G = Macc = 0.0
    rho, eps, prox_weight = float(rho), float(eps), float(prox_weight)
    m = min(int(batch_size), n_rows)
    n_batches = -(-n_rows // m)
    history, converged, n_steps, n_prox = [], None if tol is None else False, 0, 0
    epoch = 0
    n_epochs = max(int(epochs), -(-int(min_steps) // n_batches))
    damp, n_damped, best_obj, best_x = 1.0, 0, math.inf, None
    diverged = False
    for epoch in range(1, n_epochs + 1):
        perm = rng.permutation(n_rows)
        pending = 0.0
        for b in range(n_batches):
            rows = perm[b * m:(b + 1) * m]
            grad = gradient(x, rows)
            gn2 = float(np.vdot(grad, grad))
            G = rho * G + (1.0 - rho) * gn2                      # G_{t+1}
            eta = damp * math.sqrt((Macc + eps) / (G + eps))     # eta_t
            grad *= -eta
            x += grad                                            # x - eta_t grad
            Macc = rho * Macc + (1.0 - rho) * eta * eta * gn2    # M_{t+1}
            n_steps += 1
            if prox is not None:
                pending += eta * prox_weight                     # tau = sum of eta_t weights
                if (b + 1) % prox_every == 0 or b == n_batches - 1:
                    x = prox(x, pending)
                    pending = 0.0
                    n_prox += 1
        finite = bool(np.isfinite(x).all())
        if not finite and not (safeguard and best_x is not None):
            diverged = True
            break
        obj = objective(x) if finite else math.inf
        history.append(obj)
        if safeguard:
            if obj < best_obj:
                best_obj, best_x = obj, x.copy()
            elif obj > OVERSHOOT * best_obj:
                # The step-size rule overshot: back to the best iterate, damped steps.
                damp *= DAMP_FACTOR
                n_damped += 1
                x = best_x.copy()
        if tol is not None and len(history) > 1:
            prev = history[-2]
            if abs(prev - history[-1]) <= tol * abs(prev):
                converged = True
                break
    if safeguard and best_x is not None:
        x = best_x                                               # the lowest objective seen
    return AdadeltaResult(x=x, n_epochs=epoch, n_steps=n_steps, n_prox=n_prox,
                          objective=history, n_damped=n_damped, converged=converged,
                          diverged=diverged)
