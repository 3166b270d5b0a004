"""Eigendecomposition of a feature Gram matrix ``X'X``, a content-keyed cache of it, and
the Sylvester-type solve it makes exact.

Squared-loss LEML with full labels needs, at every W-step, the solution of
``(X'X) W M + l2_reg W = B`` (``M = H'H``, k x k). With ``X'X = V diag(s) V'`` computed once
(:func:`gram_eigen`, ``O(n_features^3)``) each solve costs ``O(d^2 k + d k^2 + k^3)``
(:func:`solve_sylvester_eig`). Fits at several ranks or penalties on the same ``X`` can
share the decomposition through a :class:`GramEigenCache`.
"""

from __future__ import annotations

import contextlib
import hashlib
import threading
import weakref
from collections import OrderedDict
from dataclasses import dataclass

import numpy as np
import scipy.linalg
import scipy.sparse as sp

__all__ = ["GramEigen", "GramEigenCache", "clear_all_caches", "cold_caches", "content_key",
           "gram_eigen", "solve_sylvester_eig", "solve_sylvester_rotated"]


@dataclass(frozen=True)
class GramEigen:
    """Eigendecomposition ``X'X = V diag(evals) V'`` of a feature Gram matrix.

    Attributes
    ----------
    evals : ndarray of shape (n_features,)
        Eigenvalues in ascending order; rounding noise below ``1e-12 * max`` is set to 0.
    evecs : ndarray of shape (n_features, n_features)
        Orthonormal eigenvectors ``V`` (columns).
    """

    evals: np.ndarray
    evecs: np.ndarray

    @property
    def nbytes(self) -> int:
        return int(self.evals.nbytes + self.evecs.nbytes)


def gram_eigen(X) -> GramEigen:
    """Eigendecomposition of ``X'X`` for ``X`` (sparse or dense) of shape (n, d); no caching."""
    from mlx.numerics.spmm import gram_dense

    X = sp.csr_matrix(X, dtype=np.float64)
    gram = gram_dense(X)                            # CSR x CSR (faster than CSC x CSR), threaded
    evals, evecs = scipy.linalg.eigh(gram, overwrite_a=True, check_finite=False, driver="evd")
    top = float(evals[-1]) if evals.size else 0.0
    evals = np.where(evals > 1e-12 * max(top, 0.0), evals, 0.0)
    return GramEigen(evals, evecs)


def content_key(X: sp.csr_matrix) -> tuple:
    """A key equal for CSR matrices with equal shape, dtypes and stored arrays.

    Shape, ``nnz``, index dtypes and a 128-bit BLAKE2b digest of ``indptr``, ``indices`` and
    ``data``. Two matrices with the same values but a different storage (unsorted indices,
    explicit zeros) get different keys: a miss, never a wrong hit.
    """
    h = hashlib.blake2b(digest_size=16)
    for part in (X.indptr, X.indices, X.data):
        h.update(np.ascontiguousarray(part).view(np.uint8))
    return (X.shape, X.nnz, X.indptr.dtype.str, X.indices.dtype.str, h.hexdigest())


_CACHES: weakref.WeakSet = weakref.WeakSet()


def clear_all_caches() -> None:
    """Empty every :class:`GramEigenCache` of this process.

    The runner calls it before it times a cell's final fit, so that ``fit_seconds`` is a
    cold fit whatever ran before in the same worker (another rank or regularisation on the
    same data would otherwise hand the fit its ``X'X`` eigendecomposition for free)."""
    for cache in list(_CACHES):
        cache.clear()


@contextlib.contextmanager
def cold_caches():
    """Run the block with every :class:`GramEigenCache` of this process empty, then put back
    what they held.

    The runner times each cell's final fit inside it: the fit computes its decompositions
    cold (as after :func:`clear_all_caches`), while those of the cells' validation fits
    (the same training rows for every cell of a method on a split) stay for the next cell's
    validation fits. After the block a cache holds what the block computed and, as the most
    recently used, what it held before, within its ``maxsize``."""
    saved = [(cache, cache._take()) for cache in list(_CACHES)]
    try:
        yield
    finally:
        for cache, entries in saved:
            cache._put_back(entries)


class GramEigenCache:
    """A bounded, thread-safe LRU cache of :func:`gram_eigen` results keyed by content.

    ``cache.get(X)`` returns the decomposition of ``X'X``, computing it on a miss; the key is
    :func:`content_key` of ``X`` as a float64 CSR matrix, so an equal copy of ``X`` hits and
    any change to it misses. At most ``maxsize`` results are kept, the least recently used
    one being evicted first (each holds a dense ``n_features x n_features`` matrix). The
    cache belongs to whoever creates it; :meth:`clear` empties it.

    Parameters
    ----------
    maxsize : int >= 0, default=2
        Number of results kept; 0 disables caching (every call computes).
    compute : callable, default=:func:`gram_eigen`
        What is cached: ``compute(X)`` for a float64 CSR ``X`` (e.g.
        :func:`mlx.numerics.tridiag.gram_tridiag`); its result has an ``nbytes``.

    Attributes
    ----------
    hits, misses : int
        Counts of :meth:`get` calls answered from the cache and computed.
    """

    def __init__(self, maxsize: int = 2, compute=None):
        if maxsize < 0:
            raise ValueError(f"GramEigenCache: maxsize must be >= 0, got {maxsize}")
        self.maxsize = int(maxsize)
        self.compute = gram_eigen if compute is None else compute
        self.hits = 0
        self.misses = 0
        self._entries: OrderedDict[tuple, GramEigen] = OrderedDict()
        self._lock = threading.Lock()
        _CACHES.add(self)

    def get(self, X) -> GramEigen:
        """The eigendecomposition of ``X'X``, from the cache when ``X``'s content was seen."""
        X = sp.csr_matrix(X, dtype=np.float64)
        key = content_key(X)
        with self._lock:
            hit = self._entries.get(key)
            if hit is not None:
                self._entries.move_to_end(key)
                self.hits += 1
                return hit
            self.misses += 1
        eig = self.compute(X)                                     # outside the lock
        with self._lock:
            if self.maxsize:
                self._entries[key] = eig
                self._entries.move_to_end(key)
                while len(self._entries) > self.maxsize:
                    self._entries.popitem(last=False)
        return eig

    def __contains__(self, X) -> bool:
        key = content_key(sp.csr_matrix(X, dtype=np.float64))
        with self._lock:
            return key in self._entries

    def __len__(self) -> int:
        with self._lock:
            return len(self._entries)

    @property
    def nbytes(self) -> int:
        """Memory held by the cached decompositions."""
        with self._lock:
            return sum(e.nbytes for e in self._entries.values())

    def clear(self) -> None:
        """Forget every cached result (the hit and miss counts are kept)."""
        with self._lock:
            self._entries.clear()

    def _take(self) -> OrderedDict:
        """Empty the cache and return what it held (see :func:`cold_caches`)."""
        with self._lock:
            entries, self._entries = self._entries, OrderedDict()
        return entries

    def _put_back(self, entries: OrderedDict) -> None:
        """Add ``entries`` as the most recently used, evicting beyond ``maxsize``."""
        with self._lock:
            for key, eig in entries.items():
                self._entries[key] = eig
                self._entries.move_to_end(key)
            while len(self._entries) > self.maxsize:
                self._entries.popitem(last=False)


def solve_sylvester_rotated(evals, rhs_rot, M, l2_reg: float):
    """Solve ``diag(evals) Wr M + l2_reg Wr = rhs_rot`` for ``Wr`` (``M`` symmetric PSD).

    With ``M = Q diag(m) Q'``: ``Wr = [(rhs_rot Q) / (evals m' + l2_reg)] Q'``.
    Entries with a zero denominator (only possible with ``l2_reg = 0``) are set to 0,
    which gives the minimum-norm solution.
    """
    m, Qm = np.linalg.eigh(M)
    m = np.where(m > 1e-12 * max(float(m[-1]), 0.0), m, 0.0) if m.size else m
    den = np.outer(evals, m) + l2_reg                             # (d, k)
    R = rhs_rot @ Qm
    tiny = 1e-12 * max(float(den.max()) if den.size else 0.0, np.finfo(float).tiny)
    np.divide(R, den, out=R, where=den > tiny)
    R[den <= tiny] = 0.0
    return R @ Qm.T


def solve_sylvester_eig(eig: GramEigen, B, M, l2_reg: float):
    """Solve ``(X'X) W M + l2_reg W = B`` given ``eig``, the decomposition of ``X'X``.

    ``W = V [(V'B Q) / (s m' + l2_reg)] Q'`` with ``X'X = V diag(s) V'`` and
    ``M = Q diag(m) Q'`` (:func:`solve_sylvester_rotated` in the eigenbasis); the
    minimum-norm solution when the system is singular.
    """
    V = eig.evecs
    return V @ solve_sylvester_rotated(eig.evals, V.T @ B, M, l2_reg)
