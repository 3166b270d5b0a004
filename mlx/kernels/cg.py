"""Conjugate gradient for symmetric positive definite systems ``A x = b``.

Vectors may have any shape (e.g. a ``(n_features, rank)`` factor), so matrix-free
operators on matrix-valued unknowns need no reshaping; inner products are
taken over all entries. This is Algorithm 3 of Yu et al. (2014, Appendix A.1)
with a warm start ``x0``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp
from scipy.sparse.linalg import LinearOperator

__all__ = ["CGResult", "as_matvec", "cg"]


@dataclass(frozen=True)
class CGResult:
    """Outcome of :func:`cg`.

    Attributes
    ----------
    x : ndarray
        The last iterate, same shape as ``b``.
    n_iter : int
        Number of iterations (operator applications) performed.
    converged : bool
        Whether ``||b - A x|| <= max(tol ||b||, atol)`` was reached.
    info : str
        ``"converged"``, ``"max_iter reached"`` or ``"operator not positive definite"``.
    residual_norm : float
        ``||b - A x||`` of the returned ``x`` (the recursively updated residual).
    """

    x: np.ndarray
    n_iter: int
    converged: bool
    info: str
    residual_norm: float


def as_matvec(A) -> Callable[[np.ndarray], np.ndarray]:
    """Return ``v -> A v`` for an ndarray, sparse matrix, ``LinearOperator`` or callable."""
    if isinstance(A, LinearOperator):
        return A.matvec
    if isinstance(A, np.ndarray) or sp.issparse(A):
        if A.ndim != 2 or A.shape[0] != A.shape[1]:
            raise ValueError(f"cg: A must be square, got shape {A.shape}")
        return lambda v: A @ v
    if callable(A):
        return A
    raise TypeError(f"cg: A must be an array, sparse matrix, LinearOperator or callable, "
                    f"got {type(A).__name__}")


def cg(A, b, x0=None, *, tol: float = 1e-5, atol: float = 0.0, max_iter: int | None = None,
       callback: Callable[[np.ndarray], None] | None = None) -> CGResult:
    """Solve ``A x = b`` for symmetric positive definite ``A`` by conjugate gradient.

    Parameters
    ----------
    A : ndarray, sparse matrix, LinearOperator or callable
        The operator; a callable maps an array of ``b``'s shape to one of the same shape.
    b : ndarray
        Right-hand side, any shape (1-D for matrix or ``LinearOperator`` ``A``).
    x0 : ndarray, optional
        Starting point (warm start), same shape as ``b``; zeros by default. Not modified.
    tol, atol : float
        Stop when ``||r|| <= max(tol * ||b||, atol)`` with ``r = b - A x`` (Frobenius norm).
    max_iter : int, optional
        Maximum number of iterations; ``b.size`` by default.
    callback : callable, optional
        Called as ``callback(x)`` after every iteration.

    Returns
    -------
    CGResult

    Notes
    -----
    From ``x0`` the iterates minimise ``q(x) = x'Ax/2 - b'x`` over growing Krylov
    subspaces, so ``q`` never increases: a truncated solve from a warm start is
    never worse than the start.
    """
    if tol < 0 or atol < 0:
        raise ValueError(f"cg: tol and atol must be >= 0, got tol={tol}, atol={atol}")
    matvec = as_matvec(A)
    b = np.asarray(b, dtype=np.float64)
    if max_iter is None:
        max_iter = max(b.size, 1)
    elif max_iter < 0:
        raise ValueError(f"cg: max_iter must be >= 0, got {max_iter}")
    if x0 is None:
        x = np.zeros_like(b)
        r = b.copy()
    else:
        x = np.array(x0, dtype=np.float64, copy=True)
        if x.shape != b.shape:
            raise ValueError(f"cg: x0 has shape {x.shape}, b has shape {b.shape}")
        r = b - np.asarray(matvec(x)).reshape(b.shape)         # r = b - A x0
    threshold = max(tol * float(np.linalg.norm(b)), atol)
    rr = float(np.vdot(r, r))
    if np.sqrt(rr) <= threshold:
        return CGResult(x, 0, True, "converged", float(np.sqrt(rr)))
    d = r.copy()
    n_iter = 0
    info = "max_iter reached"
    while n_iter < max_iter:
        Ad = np.asarray(matvec(d)).reshape(b.shape)
        dAd = float(np.vdot(d, Ad))
        if not dAd > 0.0:                                        # also catches NaN
            info = "operator not positive definite"
            break
        alpha = rr / dAd
        x += alpha * d                                           # x <- x + alpha d
        r -= alpha * Ad                                          # r <- r - alpha A d
        n_iter += 1
        if callback is not None:
            callback(x)
        rr_new = float(np.vdot(r, r))
        if np.sqrt(rr_new) <= threshold:
            rr = rr_new
            info = "converged"
            break
        d *= rr_new / rr                                         # d <- r + beta d
        d += r
        rr = rr_new
    return CGResult(x, n_iter, info == "converged", info, float(np.sqrt(rr)))
