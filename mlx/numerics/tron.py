"""Trust-region Newton method (TRON) for smooth convex minimisation.

The method of Lin, Weng & Keerthi (2008) as implemented in LIBLINEAR: at each
outer step the Newton system ``H s = -g`` is solved approximately by conjugate
gradient truncated at the trust-region boundary (Steihaug), the step is accepted
when the actual reduction is a fair fraction of the predicted one, and the
radius is updated from the ratio of the two. Only Hessian-vector products are
needed, so the Hessian can stay matrix-free.

References
----------
C.-J. Lin, R. C. Weng, S. S. Keerthi. Trust region Newton method for large-scale
logistic regression. JMLR 9 (2008), Algorithms 2 and 3.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

__all__ = ["TronResult", "tron"]

# acceptance and radius-update constants of Lin, Weng & Keerthi (2008)
_ETA0, _ETA1, _ETA2 = 1e-4, 0.25, 0.75
_SIGMA1, _SIGMA2, _SIGMA3 = 0.25, 0.5, 4.0


@dataclass(frozen=True)
class TronResult:
    """Outcome of :func:`tron`.

    Attributes
    ----------
    x : ndarray
        The last accepted iterate (same shape as ``x0``).
    n_iter : int
        Number of accepted Newton steps.
    converged : bool
        Whether ``||g(x)|| <= tol * g_ref`` was reached (see :func:`tron`).
    info : str
        Why the iteration stopped: ``"converged"``, ``"max_iter reached"``,
        ``"no further progress"`` (actual and predicted reductions both negligible)
        or ``"non-finite value"``.
    fun : float
        Objective value at ``x``.
    grad_norm : float
        ``||g(x)||``.
    n_cg_iter : int
        Total number of inner conjugate-gradient iterations (Hessian-vector products).
    """

    x: np.ndarray
    n_iter: int
    converged: bool
    info: str
    fun: float = float("nan")
    grad_norm: float = float("nan")
    n_cg_iter: int = 0


def _steihaug_cg(hessp, x, g, delta, cg_tol, cg_max_iter):
    """Approximately solve ``H s = -g`` subject to ``||s|| <= delta``.

    Returns ``(s, r, n_iter)`` with ``r = -g - H s`` the final residual.
    """
    s = np.zeros_like(g)
    r = -g                                                       # r = -g - H s, s = 0
    d = r.copy()
    rr = float(np.vdot(r, r))
    n_iter = 0
    while np.sqrt(rr) > cg_tol and n_iter < cg_max_iter:
        Hd = np.asarray(hessp(x, d)).reshape(g.shape)
        n_iter += 1
        dHd = float(np.vdot(d, Hd))
        if not dHd > 0.0:
            # zero curvature along d (possible only without regularisation):
            # follow d to the boundary
            tau = _to_boundary(s, d, delta)
            s = s + tau * d
            r = r - tau * Hd
            break
        alpha = rr / dHd
        s_next = s + alpha * d
        if np.linalg.norm(s_next) > delta:
            # step leaves the region: stop on the boundary along d
            tau = _to_boundary(s, d, delta)
            s = s + tau * d
            r = r - tau * Hd
            break
        s = s_next
        r = r - alpha * Hd
        rr_new = float(np.vdot(r, r))
        d = r + (rr_new / rr) * d
        rr = rr_new
    return s, r, n_iter


def _to_boundary(s, d, delta):
    """The ``tau >= 0`` with ``||s + tau d|| = delta`` (``||s|| <= delta``)."""
    std = float(np.vdot(s, d))
    sts = float(np.vdot(s, s))
    dtd = float(np.vdot(d, d))
    if dtd == 0.0:
        return 0.0
    dsq = delta * delta
    rad = np.sqrt(max(std * std + dtd * (dsq - sts), 0.0))
    # the two algebraically equal forms; pick the one without cancellation
    if std >= 0:
        return (dsq - sts) / (std + rad) if std + rad > 0 else 0.0
    return (rad - std) / dtd


# Complexity 20 (over 15): LIBLINEAR's TRON loop, kept in one piece to read against tron.cpp.
def tron(fun_grad: Callable[[np.ndarray], tuple[float, np.ndarray]],  # noqa: C901
         hessp: Callable[[np.ndarray, np.ndarray], np.ndarray],
         x0: np.ndarray, *, tol: float = 1e-3, max_iter: int = 100,
         cg_max_iter: int | None = None, cg_tol: float = 0.1,
         grad_ref: float | None = None) -> TronResult:
    """Minimise a smooth convex function by trust-region Newton.

    Parameters
    ----------
    fun_grad : callable
        ``fun_grad(x) -> (f, g)``: objective value and gradient (an array of ``x``'s shape).
    hessp : callable
        ``hessp(x, v) -> H(x) v``: Hessian at ``x`` times ``v``. It is only ever called at
        points previously passed to ``fun_grad`` (so curvature can be cached there).
    x0 : ndarray
        Starting point, any shape; not modified.
    tol : float
        Stop when ``||g(x)|| <= tol * g_ref`` (Euclidean norms over all entries), where
        ``g_ref = ||g(0)||`` as in LIBLINEAR, so that a warm start close to the optimum
        needs few steps; ``||g(x0)||`` when ``g(0) = 0``.
    max_iter : int
        Maximum number of accepted Newton steps.
    cg_max_iter : int, optional
        Maximum inner CG iterations per Newton step (``x0.size`` by default).
    cg_tol : float
        Inner CG stops when ``||r|| <= cg_tol * ||g(x)||`` (LIBLINEAR's 0.1).
    grad_ref : float, optional
        Use this ``g_ref`` instead of evaluating ``||g(0)||``.

    Returns
    -------
    TronResult

    Notes
    -----
    A step is taken only if the actual reduction exceeds ``1e-4`` times the predicted
    reduction of the quadratic model, which is positive for a convex model, so the
    objective never increases from ``x0``.
    """
    if tol < 0:
        raise ValueError(f"tron: tol must be >= 0, got {tol}")
    if max_iter < 0:
        raise ValueError(f"tron: max_iter must be >= 0, got {max_iter}")
    x = np.array(x0, dtype=np.float64, copy=True)
    if cg_max_iter is None:
        cg_max_iter = max(x.size, 1)
    if grad_ref is None and np.any(x):
        grad_ref = float(np.linalg.norm(fun_grad(np.zeros_like(x))[1]))
    f, g = fun_grad(x)
    f = float(f)
    g = np.asarray(g, dtype=np.float64).reshape(x.shape)
    gnorm = float(np.linalg.norm(g))
    if not (np.isfinite(f) and np.isfinite(gnorm)):
        return TronResult(x, 0, False, "non-finite value", f, gnorm, 0)
    gnorm0 = grad_ref if grad_ref is not None and grad_ref > 0 else gnorm
    if gnorm <= tol * gnorm0 or gnorm == 0.0:
        return TronResult(x, 0, True, "converged", f, gnorm, 0)
    delta = gnorm
    n_iter = 0
    n_cg = 0
    first = True
    info = "max_iter reached"
    while n_iter < max_iter:
        s, r, cg_it = _steihaug_cg(hessp, x, g, delta, cg_tol * gnorm, cg_max_iter)
        n_cg += cg_it
        x_new = x + s
        gs = float(np.vdot(g, s))
        prered = -0.5 * (gs - float(np.vdot(s, r)))              # m(0) - m(s)
        f_new, g_new = fun_grad(x_new)
        f_new = float(f_new)
        actred = f - f_new
        snorm = float(np.linalg.norm(s))
        if first:
            delta = min(delta, snorm)
            first = False
        # radius update (LIBLINEAR tron.cpp)
        if f_new - f - gs <= 0 or not np.isfinite(f_new):
            alpha = _SIGMA3
        else:
            alpha = max(_SIGMA1, -0.5 * (gs / (f_new - f - gs)))
        if not np.isfinite(f_new) or actred < _ETA0 * prered:
            delta = min(max(alpha, _SIGMA1) * snorm, _SIGMA2 * delta)
        elif actred < _ETA1 * prered:
            delta = max(_SIGMA1 * delta, min(alpha * snorm, _SIGMA2 * delta))
        elif actred < _ETA2 * prered:
            delta = max(_SIGMA1 * delta, min(alpha * snorm, _SIGMA3 * delta))
        else:
            delta = max(delta, min(alpha * snorm, _SIGMA3 * delta))
        if np.isfinite(f_new) and actred > _ETA0 * prered:
            n_iter += 1
            x = x_new
            f = f_new
            g = np.asarray(g_new, dtype=np.float64).reshape(x.shape)
            gnorm = float(np.linalg.norm(g))
            if not np.isfinite(gnorm):
                info = "non-finite value"
                break
            if gnorm <= tol * gnorm0:
                info = "converged"
                break
        if not np.isfinite(prered):
            info = "non-finite value"
            break
        if prered <= 0 and actred <= 0:
            info = "no further progress"
            break
        if abs(actred) <= 1e-12 * abs(f) and abs(prered) <= 1e-12 * abs(f):
            info = "no further progress"
            break
        if delta <= 0.0:
            info = "no further progress"
            break
    return TronResult(x, n_iter, info == "converged", info, f, gnorm, n_cg)
