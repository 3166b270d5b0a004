"""Conjugate gradient for symmetric positive definite systems.

Two entry points share one iteration (Algorithm 3 of Yu et al. 2014, Appendix A.1, with a
warm start and an optional preconditioner):

* :func:`cg` solves ONE system ``A x = b`` whose unknown may have any shape (e.g. a
  ``(n_features, rank)`` factor), so matrix-free operators on matrix-valued unknowns need no
  reshaping; inner products are taken over all entries.
* :func:`block_cg` solves the independent systems ``A_j x_j = b_j`` for every column ``j``
  of a matrix ``B`` at once: one operator application serves all columns still running,
  each column has its own step sizes and stops on its own (per-column convergence), and
  finished columns leave the block.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp
from scipy.sparse.linalg import LinearOperator

__all__ = ["BlockCGResult", "CGResult", "as_matvec", "block_cg", "cg"]

_CONVERGED, _MAX_ITER, _NOT_PD = "converged", "max_iter reached", "operator not positive definite"


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


@dataclass(frozen=True)
class BlockCGResult:
    """Outcome of :func:`block_cg`; every array has one entry per column of ``B``.

    Attributes
    ----------
    x : ndarray of shape (n, m)
        The last iterate of every column.
    n_iter : ndarray of int, shape (m,)
        Iterations each column took (0 for a column that started converged).
    converged : ndarray of bool, shape (m,)
        Whether column j reached ``||b_j - A_j x_j|| <= max(tol ||b_j||, atol)``.
    info : str
        ``"converged"`` (every column), ``"operator not positive definite"`` (some column met
        a direction of non-positive curvature and stopped there) or ``"max_iter reached"``.
    residual_norm : ndarray of shape (m,)
        ``||b_j - A_j x_j||`` of the returned columns (recursively updated residuals).
    """

    x: np.ndarray
    n_iter: np.ndarray
    converged: np.ndarray
    info: str
    residual_norm: np.ndarray


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


def _check(tol, atol, max_iter, default_max_iter):
    if tol < 0 or atol < 0:
        raise ValueError(f"cg: tol and atol must be >= 0, got tol={tol}, atol={atol}")
    if max_iter is None:
        return max(default_max_iter, 1)
    if max_iter < 0:
        raise ValueError(f"cg: max_iter must be >= 0, got {max_iter}")
    return max_iter


def _iterate(apply, precond, X, R, b_norm, *, tol, atol, max_iter, dot, norm, callback):
    """Preconditioned CG on the columns of ``X`` (n, m), in place; ``R = B - A X``.

    ``apply(P, cols)`` and ``precond(R, cols)`` act on the columns ``cols`` of the block;
    ``dot(U, V)`` returns one inner product per column and ``norm(R)`` one residual norm per
    column (used with a preconditioner; without one the norm is ``sqrt(dot(R, R))``).
    Returns ``(n_iter, converged, not_pd, residual_norm)``, arrays of length m.
    """
    def measure(R):
        """``(r'r, ||r||)`` per column without a preconditioner, ``(None, ||r||)`` with one."""
        if precond is None:
            rr = dot(R, R)
            return rr, np.sqrt(rr)
        return None, norm(R)

    m = X.shape[1]
    threshold = np.maximum(tol * b_norm, atol)
    n_iter = np.zeros(m, dtype=np.int64)
    converged = np.zeros(m, dtype=bool)
    not_pd = np.zeros(m, dtype=bool)
    rz, res = measure(R)
    res_norm = np.array(res, dtype=np.float64)
    converged[:] = res_norm <= threshold
    cols = np.flatnonzero(~converged)
    if cols.size == 0 or max_iter == 0:
        return n_iter, converged, not_pd, res_norm
    R = R[:, cols]                      # a copy; its memory layout fixes the rounding of dot()
    if precond is None:
        rz = rz[cols]
        Z = R
    else:
        Z = precond(R, cols)
        rz = dot(R, Z)
    P = Z.copy()
    it = 0
    while it < max_iter:
        AP = apply(P, cols)
        pAp = dot(P, AP)
        bad = ~(pAp > 0.0)                                        # also catches NaN
        if bad.any():
            not_pd[cols[bad]] = True
            keep = ~bad
            cols, R, P, AP = cols[keep], R[:, keep], P[:, keep], AP[:, keep]
            rz, pAp = rz[keep], pAp[keep]
            if cols.size == 0:
                break
        alpha = rz / pAp
        if cols.size == m:
            X += alpha * P                                        # x <- x + alpha p
        else:
            X[:, cols] += alpha * P
        R -= alpha * AP                                           # r <- r - alpha A p
        it += 1
        n_iter[cols] = it
        if callback is not None:
            callback(X)
        rz_new, res = measure(R)
        res_norm[cols] = res
        done = res <= threshold[cols]
        if done.any():
            converged[cols[done]] = True
            keep = ~done
            cols, R, P, rz = cols[keep], R[:, keep], P[:, keep], rz[keep]
            if precond is None:
                rz_new = rz_new[keep]
            if cols.size == 0:
                break
        if precond is None:
            Z = R
        else:
            Z = precond(R, cols)
            rz_new = dot(R, Z)
        P *= rz_new / rz                                          # p <- z + beta p
        P += Z
        rz = rz_new
    return n_iter, converged, not_pd, res_norm


def _info(converged, not_pd) -> str:
    if converged.all():
        return _CONVERGED
    return _NOT_PD if not_pd.any() else _MAX_ITER


def cg(A, b, x0=None, *, tol: float = 1e-5, atol: float = 0.0, max_iter: int | None = None,
       precond: Callable[[np.ndarray], np.ndarray] | None = None,
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
    precond : callable, optional
        ``z = precond(r)`` applies a symmetric positive definite approximation of ``A^-1``
        to an array of ``b``'s shape.
    callback : callable, optional
        Called as ``callback(x)`` after every iteration.

    Returns
    -------
    CGResult

    Notes
    -----
    From ``x0`` the iterates minimise ``q(x) = x'Ax/2 - b'x`` over growing Krylov
    subspaces, so ``q`` never increases: a truncated solve from a warm start is
    never worse than the start. To solve several independent systems at once with
    per-system convergence, use :func:`block_cg`.
    """
    matvec = as_matvec(A)
    b = np.asarray(b, dtype=np.float64)
    shape = b.shape
    max_iter = _check(tol, atol, max_iter, b.size)
    if x0 is None:
        X = np.zeros((b.size, 1))
        R = b.reshape(-1, 1).copy()                               # r = b, x = 0
    else:
        x0 = np.asarray(x0, dtype=np.float64)
        if x0.shape != shape:
            raise ValueError(f"cg: x0 has shape {x0.shape}, b has shape {shape}")
        X = x0.reshape(-1, 1).copy()
        R = b.reshape(-1, 1) - np.asarray(matvec(X.reshape(shape))).reshape(-1, 1)

    def apply(P, cols):
        return np.asarray(matvec(P.reshape(shape))).reshape(-1, 1)

    column_precond = None
    if precond is not None:
        def column_precond(Rc, cols):
            return np.asarray(precond(Rc.reshape(shape))).reshape(-1, 1)

    def dot(U, V):
        return np.array([np.vdot(U, V)])

    def norm(Rc):
        return np.array([np.linalg.norm(Rc)])

    n_iter, converged, not_pd, res_norm = _iterate(
        apply, column_precond, X, R, np.array([np.linalg.norm(b)]), tol=tol, atol=atol,
        max_iter=max_iter, dot=dot, norm=norm,
        callback=None if callback is None else (lambda Xc: callback(Xc.reshape(shape))))
    return CGResult(X.reshape(shape), int(n_iter[0]), bool(converged[0]),
                    _info(converged, not_pd), float(res_norm[0]))


def block_cg(A, B, X0=None, *, precond=None, tol: float = 1e-5, atol: float = 0.0,
             max_iter: int | None = None,
             callback: Callable[[np.ndarray], None] | None = None) -> BlockCGResult:
    """Solve ``A_j x_j = b_j`` for every column ``j`` of ``B`` by (preconditioned) CG.

    The columns are independent systems iterated together: each operator application acts
    on the block of columns still running, each column has its own step sizes, and a column
    leaves the block as soon as ``||b_j - A_j x_j|| <= max(tol ||b_j||, atol)``. A column
    whose right-hand side is zero (with zero start) is converged from the start, with
    ``x_j = 0`` and no iteration.

    Parameters
    ----------
    A : ndarray, sparse matrix, LinearOperator or callable
        A matrix (or ``LinearOperator``) of shape (n, n) shared by every column, or a
        callable ``A(P, cols)`` returning ``[A_j p_j for j in cols]`` as an array of ``P``'s
        shape (n, len(cols)): ``cols`` are the indices (into ``B``'s columns) of the
        columns of ``P``, so the operator may differ per column.
    B : ndarray of shape (n, m)
        Right-hand sides; a 1-D ``B`` is one column.
    X0 : ndarray of shape (n, m), optional
        Starting point; zeros by default. Not modified.
    precond : callable, optional
        ``precond(R, cols)`` applies, for each ``j`` in ``cols``, a symmetric positive definite
        approximation of ``A_j^-1`` to the column of ``R`` (shape (n, len(cols))) that
        belongs to ``j``.
    tol, atol : float
        Per-column stopping rule above (Euclidean norms of the columns).
    max_iter : int, optional
        Maximum iterations of every column; n by default.
    callback : callable, optional
        Called as ``callback(X)`` (all columns) after every iteration.

    Returns
    -------
    BlockCGResult

    Notes
    -----
    Column ``j`` follows the iterates of a single-system CG on ``A_j x_j = b_j`` whatever
    the other columns do (up to rounding: per-column inner products over a block may be
    summed in another order than over one vector).
    """
    B = np.asarray(B, dtype=np.float64)
    vector = B.ndim == 1
    B2 = B[:, None] if vector else B
    if B2.ndim != 2:
        raise ValueError(f"block_cg: B must be 1-D or 2-D, got shape {B.shape}")
    max_iter = _check(tol, atol, max_iter, B2.shape[0])
    if isinstance(A, LinearOperator):
        def apply(P, cols):
            return np.asarray(A.matmat(P))
    elif callable(A):
        apply = A
    else:
        matmul = as_matvec(A)                                     # checks the shape

        def apply(P, cols):
            return np.asarray(matmul(P))
    if X0 is None:
        X = np.zeros_like(B2)
        R = B2.copy()
    else:
        X0 = np.asarray(X0, dtype=np.float64)
        if X0.shape != B.shape:
            raise ValueError(f"block_cg: X0 has shape {X0.shape}, B has shape {B.shape}")
        X = X0.reshape(B2.shape).copy()
        R = B2 - np.asarray(apply(X, np.arange(B2.shape[1])))

    def dot(U, V):
        return np.einsum("ij,ij->j", U, V)

    def norm(Rc):
        return np.linalg.norm(Rc, axis=0)

    n_iter, converged, not_pd, res_norm = _iterate(
        apply, precond, X, R, norm(B2), tol=tol, atol=atol, max_iter=max_iter, dot=dot,
        norm=norm, callback=callback)
    return BlockCGResult(X[:, 0] if vector else X, n_iter, converged, _info(converged, not_pd),
                         res_norm)
