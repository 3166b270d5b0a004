"""Ridge and symmetric positive semi-definite (PSD) solves.

Everything here solves ``(A + l2_reg I) Z = B`` for a symmetric PSD ``A`` given as a dense
matrix, by one rule:

* ``l2_reg > 0``: Cholesky factorisation of ``A + l2_reg I``;
* ``l2_reg = 0``, or the Cholesky factorisation fails (the shifted matrix is numerically
  not positive definite): an eigendecomposition ``A = V diag(w) V'`` (negative rounding
  noise in ``w`` set to 0) and the minimum-norm solution ``Z = V diag(w + l2_reg)^+ V' B``,
  whose pseudo-inverse drops eigenvalues ``w + l2_reg <= rcond * max(w + l2_reg)``. ``rcond``
  defaults to ``n * eps`` (``n`` the order of ``A``), the relative cut-off of
  ``scipy.linalg.pinv`` and of ``numpy.linalg.lstsq(rcond=None)``.

The pieces:

* :func:`psd_solve` -- one solve; ``A`` may also be a stack ``(..., k, k)`` of small
  matrices (one batched LAPACK call per step instead of a Python loop);
* :class:`PSDFactor` -- the factorisation itself, for many right-hand sides, with
  ``log det`` and ``tr`` of the (pseudo-)inverse;
* :class:`GramRidge` and :func:`ridge` -- ridge regression ``W = (X'X + l2_reg I)^+ X'T`` on
  a design ``X`` through the smaller Gram matrix: the primal ``X'X`` when
  ``n_features <= n_samples``, otherwise the dual ``W = X'(XX' + l2_reg I)^+ T``
  (the same ``W``: the minimum-norm least-squares solution when ``l2_reg = 0``).
"""

from __future__ import annotations

import numpy as np
import scipy.linalg as sla
import scipy.sparse as sp

from mlx.numerics.spmm import gram

__all__ = ["GramRidge", "PSDFactor", "default_rcond", "psd_solve", "ridge"]


def default_rcond(n: int) -> float:
    """Relative eigenvalue cut-off used when none is given: ``n * eps``."""
    return max(n, 1) * np.finfo(np.float64).eps


def _dense(M) -> np.ndarray:
    return M.toarray() if sp.issparse(M) else np.asarray(M, dtype=np.float64)


def _pinv_eigenvalues(w: np.ndarray, l2_reg: float, rcond: float):
    """``(w', inv)``: ``w' = max(w, 0) + l2_reg`` and ``1 / w'`` where ``w'`` is kept, else 0.

    ``w`` may hold several spectra along its last axis; the cut-off is per spectrum.
    """
    w = np.maximum(w, 0.0) + l2_reg
    top = w.max(axis=-1, keepdims=True, initial=0.0)
    keep = w > rcond * top
    inv = np.zeros_like(w)
    inv[keep] = 1.0 / w[keep]
    return w, inv


class PSDFactor:
    """A factorisation of ``A + shift I`` for a symmetric PSD matrix ``A`` of shape (n, n).

    Cholesky when ``shift > 0`` and the shifted matrix is numerically positive definite,
    otherwise an eigendecomposition of ``A`` (see the module docstring), so that
    :meth:`solve` returns ``(A + shift I)^+ B``, the minimum-norm solution when the shifted
    matrix is singular.

    Parameters
    ----------
    A : ndarray of shape (n, n)
        Symmetric PSD; only its lower triangle is read. Not modified unless
        ``overwrite_a`` (which only the eigendecomposition uses as work space).
    shift : float >= 0
    rcond : float, optional
        Relative cut-off of the eigendecomposition route; :func:`default_rcond` by default.
    overwrite_a : bool
        Allow the eigendecomposition to destroy ``A`` (saves one n x n copy).

    Attributes
    ----------
    method : {"cholesky", "eigh"}
        The route taken.
    """

    def __init__(self, A, shift: float = 0.0, *, rcond: float | None = None,
                 overwrite_a: bool = False):
        A = np.asarray(A, dtype=np.float64)
        if A.ndim != 2 or A.shape[0] != A.shape[1]:
            raise ValueError(f"PSDFactor: A must be square, got shape {A.shape}")
        if not shift >= 0:
            raise ValueError(f"PSDFactor: shift must be >= 0, got {shift}")
        self.n = A.shape[0]
        self.shift = float(shift)
        self.rcond = default_rcond(self.n) if rcond is None else float(rcond)
        self._chol = None
        if self.shift > 0:
            shifted = np.array(A, order="F")                      # LAPACK factors it in place
            shifted[np.diag_indices_from(shifted)] += self.shift
            try:
                self._chol = sla.cho_factor(shifted, lower=True, overwrite_a=True,
                                            check_finite=False)
            except np.linalg.LinAlgError:
                del shifted
        if self._chol is None:
            w, self.evecs = sla.eigh(A, overwrite_a=overwrite_a, check_finite=False)
            self.evals, self._inv = _pinv_eigenvalues(w, self.shift, self.rcond)
        self.method = "eigh" if self._chol is None else "cholesky"

    def solve(self, B) -> np.ndarray:
        """``(A + shift I)^+ B`` for ``B`` of shape (n,) or (n, m)."""
        B = np.asarray(B, dtype=np.float64)
        if self._chol is not None:
            return sla.cho_solve(self._chol, B, check_finite=False)
        V = self.evecs
        if B.ndim == 1:
            return V @ (self._inv * (V.T @ B))
        return V @ (self._inv[:, None] * (V.T @ B))               # V diag(1/s)^+ V' B

    def logdet(self) -> float:
        """``log det(A + shift I)``; ``-inf`` when it is singular."""
        if self._chol is not None:
            return float(2.0 * np.log(np.diag(self._chol[0])).sum())
        with np.errstate(divide="ignore"):
            return float(np.log(self.evals).sum())

    def trace_inv(self) -> float:
        """``tr((A + shift I)^+)``, the trace of the (pseudo-)inverse."""
        if self._chol is not None:
            lower = self._chol[0]
            inv_lower = sla.solve_triangular(lower, np.eye(self.n), lower=True,
                                             check_finite=False)
            return float(np.sum(inv_lower * inv_lower))           # tr(A^-1) = ||L^-1||_F^2
        return float(self._inv.sum())


def psd_solve(A, B, l2_reg: float = 0.0, *, rcond: float | None = None,
              overwrite_a: bool = False) -> np.ndarray:
    """Solve ``(A + l2_reg I) Z = B`` for symmetric PSD ``A``; the minimum-norm ``Z`` if singular.

    Parameters
    ----------
    A : ndarray of shape (n, n) or (..., k, k)
        Symmetric PSD, or a stack of them. Not modified (see ``overwrite_a``).
    B : ndarray of shape (n,) or (n, m); for a stack (..., k) or (..., k, m)
    l2_reg : float >= 0
    rcond : float, optional
        Relative eigenvalue cut-off of the pseudo-inverse route, :func:`default_rcond` of
        the matrix order by default.
    overwrite_a : bool
        2-D ``A`` only: allow the eigendecomposition route to use ``A`` as work space.

    Returns
    -------
    ndarray of ``B``'s shape

    Notes
    -----
    For a 2-D ``A`` this is ``PSDFactor(A, l2_reg).solve(B)`` (LAPACK ``potrf``/``potrs``,
    else ``syevr``). A stack is solved by batched numpy calls: if every shifted matrix
    passes a Cholesky factorisation, one batched LU solve; otherwise (or when
    ``l2_reg = 0``) batched eigendecompositions for the whole stack, with the cut-off
    applied to each matrix separately.
    """
    A = np.asarray(A, dtype=np.float64)
    B = np.asarray(B, dtype=np.float64)
    if A.ndim == 2:
        return PSDFactor(A, l2_reg, rcond=rcond, overwrite_a=overwrite_a).solve(B)
    if A.ndim < 2 or A.shape[-1] != A.shape[-2]:
        raise ValueError(f"psd_solve: A must be square or a stack of square matrices, "
                         f"got shape {A.shape}")
    vector = B.ndim == A.ndim - 1
    Bm = B[..., None] if vector else B
    k = A.shape[-1]
    Z = None
    if l2_reg > 0:
        shifted = A + l2_reg * np.eye(k)
        try:
            np.linalg.cholesky(shifted)                           # definiteness test
            Z = np.linalg.solve(shifted, Bm)
        except np.linalg.LinAlgError:
            pass
    if Z is None:
        w, U = np.linalg.eigh(A)
        _, inv = _pinv_eigenvalues(w, l2_reg, default_rcond(k) if rcond is None else rcond)
        Z = U @ (inv[..., :, None] * (np.swapaxes(U, -1, -2) @ Bm))
    return Z[..., 0] if vector else Z


class GramRidge:
    """Ridge solves on a fixed design ``X`` (n_samples, n_features), for any penalties.

    ``solve(T, l2_reg)`` returns ``W = (X'X + l2_reg I)^+ X'T`` of shape (n_features, m),
    computed in the primal (``X'X``) when ``n_features <= n_samples`` and in the dual,
    ``W = X'(XX' + l2_reg I)^+ T``, otherwise. The Gram matrix is formed once; with
    ``cache=True`` the factorisation of each penalty is kept (:meth:`factor`), so repeated
    solves at the same penalty cost two triangular solves.

    Parameters
    ----------
    X : sparse matrix or ndarray of shape (n_samples, n_features)
    rcond : float, optional
        See :class:`PSDFactor`.
    cache : bool, default=True
        False for a single solve: the Gram matrix is then used as work space and dropped
        after the first factorisation (one n x n matrix less at the peak).

    Attributes
    ----------
    primal : bool
        Whether the Gram matrix is ``X'X`` (else ``XX'``).
    gram : ndarray or None
        The Gram matrix (None once a ``cache=False`` instance has used it).
    """

    def __init__(self, X, *, rcond: float | None = None, cache: bool = True):
        n, d = X.shape
        self.X = X
        self.primal = d <= n
        self.n_extra = 0 if self.primal else d - n
        self.rcond = rcond
        self.cache = cache
        self.gram = gram(X, rows=not self.primal)
        self._factors: dict[float, PSDFactor] = {}

    def factor(self, l2_reg: float) -> PSDFactor:
        """The factorisation of ``gram + l2_reg I`` (cached per ``l2_reg`` when ``cache``)."""
        l2_reg = float(l2_reg)
        found = self._factors.get(l2_reg)
        if found is not None:
            return found
        if self.gram is None:
            raise RuntimeError("GramRidge(cache=False) supports a single factorisation")
        factor = PSDFactor(self.gram, l2_reg, rcond=self.rcond, overwrite_a=not self.cache)
        if self.cache:
            self._factors[l2_reg] = factor
        else:
            self.gram = None
        return factor

    def solve(self, T, l2_reg: float) -> np.ndarray:
        """``(X'X + l2_reg I)^+ X'T`` for ``T`` (sparse or dense) of shape (n_samples, m)."""
        X = self.X
        if self.primal:
            return self.factor(l2_reg).solve(_dense(X.T @ T))
        T = _dense(T)
        return np.asarray(X.T @ self.factor(l2_reg).solve(T))

    def logdet_trace(self, l2_reg: float) -> tuple[float, float]:
        """``log det(X'X + l2_reg I)`` and ``tr((X'X + l2_reg I)^+)`` over all n_features.

        In the dual the ``n_features - n_samples`` zero eigenvalues of ``X'X`` that ``XX'``
        lacks add ``log l2_reg`` and ``1 / l2_reg`` each (``l2_reg > 0`` there).
        """
        factor = self.factor(l2_reg)
        logdet, trace = factor.logdet(), factor.trace_inv()
        if self.n_extra:
            logdet += self.n_extra * np.log(l2_reg)
            trace += self.n_extra / l2_reg
        return float(logdet), float(trace)


def ridge(X, T, l2_reg: float, *, rcond: float | None = None) -> np.ndarray:
    """Ridge weights ``W = (X'X + l2_reg I)^+ X'T`` of shape (n_features, m), by one solve.

    The primal or the dual, whichever Gram matrix is smaller (see :class:`GramRidge`);
    ``T`` (n_samples, m) may be sparse.
    """
    return GramRidge(X, rcond=rcond, cache=False).solve(T, l2_reg)
