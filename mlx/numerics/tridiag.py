"""Householder tridiagonalisation of a Gram matrix, and the shifted solves it makes cheap.

A symmetric ``G`` (``X'X`` or ``XX'``) is reduced to ``G = Q T Q'`` with ``T`` tridiagonal
and ``Q`` orthogonal, kept as LAPACK's Householder reflectors (``dsytrd``,
``4/3 d^3`` flops). That is the first of the three stages of a full eigendecomposition
(``dsyevd``: then the eigenvectors of ``T``, then their back-transformation by ``Q``, together
two to three times the cost of the reduction). Every solve the ridge paths and LEML's exact
W-step need is a shifted system in ``G``:

    (a G + b I) W = B   <=>   (a T + b I) (Q'W) = Q'B

and a tridiagonal system costs ``O(d)`` per right-hand side, so with ``Q'B`` computed once
(``O(d^2 m)``, blocked reflectors) any number of shifts, scales and columns cost
``O(d m)`` each. The eigenvalues of ``T`` (those of ``G``) come in ``O(d^2)`` without
eigenvectors (``dsterf``). The tridiagonal systems are positive definite when ``a, b > 0``
(``G`` is positive semi-definite) and are solved by ``dptsv``, or by ``dgtsv`` (LU with
partial pivoting) where rounding makes the factorisation fail.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np
import scipy.sparse as sp
from scipy.linalg import lapack

__all__ = ["GramTridiag", "gram_tridiag", "tridiagonalize"]


@dataclass(frozen=True)
class GramTridiag:
    """``G = Q T Q'`` with ``T`` tridiagonal (diagonal ``diag``, off-diagonal ``off``) and
    ``Q`` the product of the Householder reflectors stored below the first sub-diagonal of
    ``reflectors`` with factors ``tau`` (LAPACK ``dsytrd``, ``uplo='L'``).

    Attributes
    ----------
    reflectors : ndarray of shape (d, d)
    tau : ndarray of shape (max(d - 1, 0),)
    diag : ndarray of shape (d,)
    off : ndarray of shape (max(d - 1, 0),)
    """

    reflectors: np.ndarray
    tau: np.ndarray
    diag: np.ndarray
    off: np.ndarray

    @property
    def size(self) -> int:
        return int(self.diag.size)

    @property
    def nbytes(self) -> int:
        return int(self.reflectors.nbytes + self.tau.nbytes + self.diag.nbytes
                   + self.off.nbytes)

    @cached_property
    def evals(self) -> np.ndarray:
        """Eigenvalues of ``G`` in ascending order (``dsterf``, ``O(d^2)``); rounding noise
        below ``1e-12 * max`` is set to 0, as :func:`mlx.numerics.gram.gram_eigen` does."""
        if self.size == 0:
            return np.zeros(0)
        if self.size == 1:
            w = self.diag.copy()
        else:
            w, info = lapack.dsterf(self.diag, self.off)
            if info != 0:
                raise np.linalg.LinAlgError(f"dsterf did not converge (info={info})")
            w = np.sort(w)
        top = float(w[-1])
        return np.where(w > 1e-12 * max(top, 0.0), w, 0.0)

    # -- Q and Q' ---------------------------------------------------------------
    def _apply(self, B, trans: str) -> np.ndarray:
        B = np.array(B, dtype=np.float64, order="F", ndmin=2, copy=True)
        d = self.size
        if d <= 1 or B.shape[1] == 0:
            return B
        C = np.asfortranarray(B[1:])
        work, info = lapack.dormqr("L", trans, self.reflectors[1:, :d - 1], self.tau, C,
                                   lwork=-1)[1:]
        lwork = max(int(work[0]), C.shape[1], 1)
        C, _, info = lapack.dormqr("L", trans, self.reflectors[1:, :d - 1], self.tau, C,
                                   lwork=lwork, overwrite_c=1)
        if info != 0:
            raise ValueError(f"dormqr: illegal argument {-info}")
        B[1:] = C
        return B

    def rotate(self, B) -> np.ndarray:
        """``Q'B`` for ``B`` of shape (d, m) (or (d,)), ``O(d^2 m)``."""
        B = np.asarray(B, dtype=np.float64)
        out = self._apply(B.reshape(B.shape[0], -1), "T")
        return out.reshape(B.shape)

    def unrotate(self, B) -> np.ndarray:
        """``Q B`` for ``B`` of shape (d, m) (or (d,)), ``O(d^2 m)``."""
        B = np.asarray(B, dtype=np.float64)
        out = self._apply(B.reshape(B.shape[0], -1), "N")
        return out.reshape(B.shape)

    # -- T ----------------------------------------------------------------------
    def tmul(self, Z) -> np.ndarray:
        """``T Z`` for ``Z`` of shape (d, m), ``O(d m)``."""
        Z = np.asarray(Z, dtype=np.float64)
        out = self.diag[:, None] * Z if Z.ndim == 2 else self.diag * Z
        if self.size > 1:
            off = self.off[:, None] if Z.ndim == 2 else self.off
            out[:-1] += off * Z[1:]
            out[1:] += off * Z[:-1]
        return out

    def solve(self, R, shift: float, scale=1.0) -> np.ndarray:
        """Solve ``(scale T + shift I) Z = R`` for ``R`` of shape (d, m).

        ``scale`` is a number, or one per column of ``R`` (shape (m,)); ``scale >= 0`` and
        ``shift > 0``, so that every system is positive definite up to rounding."""
        R = np.asarray(R, dtype=np.float64)
        if R.ndim != 2:
            raise ValueError(f"GramTridiag.solve: R must be 2-D; got shape {R.shape}")
        scale = np.asarray(scale, dtype=np.float64)
        if scale.ndim == 0:
            return self._solve_one(R, float(scale), float(shift))
        out = np.empty_like(R)
        for j in range(R.shape[1]):
            out[:, j] = self._solve_one(R[:, j:j + 1], float(scale[j]), float(shift))[:, 0]
        return out

    def _solve_one(self, R, a: float, b: float) -> np.ndarray:
        if self.size == 0 or R.shape[1] == 0:
            return np.array(R, dtype=np.float64, copy=True)
        if self.size == 1:
            return R / (a * self.diag[0] + b)
        dg = a * self.diag + b
        e = a * self.off
        _, _, x, info = lapack.dptsv(dg, e, R)
        if info == 0:
            return x
        # not positive definite in floating point: LU with partial pivoting
        _, _, _, x, info = lapack.dgtsv(e, a * self.diag + b, e, R)
        if info != 0:
            raise np.linalg.LinAlgError(
                f"the shifted tridiagonal system is singular (shift {b:g}, scale {a:g})")
        return x


def tridiagonalize(G, *, overwrite: bool = False) -> GramTridiag:
    """:class:`GramTridiag` of a dense symmetric ``G`` (its lower triangle is read)."""
    G = np.asarray(G, dtype=np.float64)
    d = G.shape[0]
    if G.ndim != 2 or G.shape[1] != d:
        raise ValueError(f"tridiagonalize: G must be square; got shape {G.shape}")
    if overwrite and G.flags.c_contiguous:
        G = G.T                                  # the same symmetric matrix, in Fortran order
    else:
        G = np.array(G, order="F", copy=not overwrite or None)
    if d <= 1:
        return GramTridiag(G, np.zeros(0), np.diag(G).copy(), np.zeros(0))
    lwork = int(lapack.dsytrd_lwork(d, lower=1)[0])
    c, diag, off, tau, info = lapack.dsytrd(G, lower=1, lwork=max(lwork, 1), overwrite_a=1)
    if info != 0:
        raise ValueError(f"dsytrd: illegal argument {-info}")
    return GramTridiag(c, tau, diag, off)


def gram_tridiag(X) -> GramTridiag:
    """:class:`GramTridiag` of ``X'X`` for ``X`` (sparse or dense) of shape (n, d)."""
    from mlx.numerics.spmm import gram_dense

    X = sp.csr_matrix(X, dtype=np.float64)
    gram = gram_dense(X)                            # CSR x CSR (faster than CSC x CSR), threaded
    return tridiagonalize(gram, overwrite=True)
