"""Sparse x dense products on several threads, bit-identical for any thread count.

LEML's iterative W-steps spend nearly all their time in ``X S`` and ``X' G`` with ``X``
sparse (CSR) and ``S``, ``G`` dense with ``k`` columns. :class:`SparseProducts` computes
both on :func:`get_threads` threads:

* ``X S``: the rows of ``X`` are split into fixed ranges of about equal stored entries, and
  each output row is summed by one thread in the order of its stored entries -- the order of
  scipy's own loop, so the result equals ``X @ S`` bit for bit whatever the thread count;
* ``X' G``: a CSR copy of ``X'`` (``X`` converted to CSC once, kept for the object's life,
  ``nnz(X)`` more entries) turns the scatter into shared output rows that ``X.T @ G`` does into
  the same per-row gather; within an output row the terms keep scipy's order (rows of ``X``
  ascending), so this too equals ``X.T @ G`` bit for bit.

With one thread (the default), a small product, a non-CSR or non-float64 operand, the
products are scipy's own. The thread count is process-wide and set by the runner for each
cell (:func:`threads`): cells that share the machine with others run on one thread each.
"""

from __future__ import annotations

import contextlib
import os

import numpy as np

__all__ = ["BLAS_THREADS", "MIN_THREADED_WORK", "SparseProducts", "available_cores",
           "fit_threads", "get_threads", "gram", "gram_dense", "row_ranges", "threads"]

BLAS_THREADS = 1
"""BLAS (and OpenMP) threads inside a fit, whoever runs it (:func:`fit_threads`): a threaded
BLAS sums in an order that depends on its thread count (OpenBLAS's products and tridiagonal
reduction differ in the last bits between one and two threads), so one thread is what makes
a fit's numbers the same in every cell, with any ``--jobs``, on a cluster and in a user's own
code."""

MIN_THREADED_WORK = 1 << 22
"""Below this many multiply-adds (``nnz * k``, a few milliseconds of work) a product runs on
one thread: waking the other threads costs microseconds on an idle machine but can cost tens
of milliseconds on a busy one."""

_THREADS = 1
_BUDGETED = 0                        # how many threads() blocks are open: a budget is set


def get_threads() -> int:
    """Threads the sparse products (and LEML's blocked score products) may use."""
    return _THREADS


@contextlib.contextmanager
def threads(n: int):
    """Run the block with ``n`` threads for the kernels of this module (restored after)."""
    global _THREADS, _BUDGETED
    if int(n) < 1:
        raise ValueError(f"threads must be >= 1, got {n}")
    saved, _THREADS = _THREADS, int(n)
    _BUDGETED += 1
    try:
        yield
    finally:
        _THREADS = saved
        _BUDGETED -= 1


@contextlib.contextmanager
def fit_threads(n: int | None = None):
    """The threads of one fit (or scoring): BLAS on :data:`BLAS_THREADS` thread and this
    module's kernels on ``n`` threads -- by default the budget of an enclosing
    :func:`threads` block (a runner cell's), else every core the process may use (a fit
    alone on the machine). The kernels' results do not depend on ``n`` and BLAS's do not
    change, so the fit's numbers are the same whoever calls it: the runner for a cell, or a
    user's code through the estimators' ``fit`` and ``decision_function``."""
    from threadpoolctl import threadpool_limits

    if n is None:
        n = _THREADS if _BUDGETED else available_cores()
    with threadpool_limits(limits=BLAS_THREADS), threads(n):
        yield


def available_cores() -> int:
    """CPU cores this process may run on (its affinity mask where the platform has one)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # pragma: no cover - not Linux
        return max(1, os.cpu_count() or 1)


def row_ranges(indptr, n_parts: int) -> np.ndarray:
    """Bounds ``b`` (length ``n_parts + 1``) of row ranges ``[b[t], b[t+1])`` holding about
    equal numbers of stored entries of the CSR pattern ``indptr``."""
    m = indptr.size - 1
    targets = (int(indptr[-1]) * np.arange(1, n_parts, dtype=np.int64)) // n_parts
    inner = np.searchsorted(indptr, targets, side="left")
    return np.concatenate(([0], np.clip(inner, 0, m), [m])).astype(np.int64)


def _threaded_product(A, B, n_threads: int) -> np.ndarray:
    """``A @ B`` for CSR ``A`` (float64) and C-contiguous float64 ``B``, on ``n_threads``."""
    import numba

    from mlx.numerics._spmm_kernels import csr_dense_rows

    numba.set_num_threads(min(n_threads, numba.config.NUMBA_NUM_THREADS))
    out = np.zeros((A.shape[0], B.shape[1]))
    csr_dense_rows(A.indptr, A.indices, A.data, B, row_ranges(A.indptr, n_threads), out)
    return out


def gram_dense(X, *, rows: bool = False) -> np.ndarray:
    """``X'X`` (``rows=True``: ``XX'``) as a dense float64 array for a CSR ``X``, its output
    rows split over :func:`get_threads` threads (ranges of about equal stored entries), each
    range one scipy sparse product (which releases the GIL): every row is summed as in
    ``(X.T.tocsr() @ X).toarray()`` (``(X @ X.T.tocsr()).toarray()``), so the result equals
    it bit for bit."""
    import scipy.sparse as sp

    A, B = (X, X.T.tocsr()) if rows else (X.T.tocsr(), X)
    n = get_threads()
    if n <= 1 or X.nnz * 32 < MIN_THREADED_WORK:
        return (A @ B).toarray()
    from concurrent.futures import ThreadPoolExecutor

    bounds = row_ranges(A.indptr, n)
    out = np.empty((A.shape[0], B.shape[1]))

    def part(t: int) -> None:
        a, b = int(bounds[t]), int(bounds[t + 1])
        if b > a:
            out[a:b] = sp.csr_matrix(A[a:b] @ B).toarray()

    with ThreadPoolExecutor(n) as pool:
        list(pool.map(part, range(n)))
    return out


def gram(X, *, rows: bool = False) -> np.ndarray:
    """The dense Gram matrix ``X'X`` (``rows=True``: ``XX'``) of a sparse or dense ``X``, as
    float64: sparse ``X`` through :func:`gram_dense` (the cell's threads), dense ``X`` by one
    BLAS product."""
    import scipy.sparse as sp

    if sp.issparse(X):
        return gram_dense(sp.csr_matrix(X, dtype=np.float64), rows=rows)
    X = np.asarray(X, dtype=np.float64)
    return X @ X.T if rows else X.T @ X


class SparseProducts:
    """``X S`` and ``X' G`` for a fixed ``X`` of shape ``(n_samples, n_features)``.

    Parameters
    ----------
    X : sparse matrix or ndarray
        Any matrix scipy multiplies; only CSR float64 ``X`` runs on several threads.
    """

    def __init__(self, X):
        self.X = X
        self.shape = X.shape
        self._threadable = getattr(X, "format", None) == "csr" and X.dtype == np.float64
        self._Xt = None

    def _use_threads(self, B) -> int:
        n = get_threads()
        if (n <= 1 or not self._threadable or not isinstance(B, np.ndarray) or B.ndim != 2
                or B.dtype != np.float64 or self.X.nnz * B.shape[1] < MIN_THREADED_WORK):
            return 1
        return n

    def dot(self, S) -> np.ndarray:
        """``X S`` for ``S`` of shape ``(n_features, k)``; equals ``np.asarray(X @ S)``."""
        n = self._use_threads(S)
        if n == 1:
            return np.asarray(self.X @ S)
        return _threaded_product(self.X, np.ascontiguousarray(S), n)

    def tdot(self, G) -> np.ndarray:
        """``X' G`` for ``G`` of shape ``(n_samples, k)``; equals ``np.asarray(X.T @ G)``."""
        n = self._use_threads(G)
        if n == 1:
            return np.asarray(self.X.T @ G)
        if self._Xt is None:
            csc = self.X.tocsc()                       # X' in CSR: csr_tocsc keeps row order
            self._Xt = type(self.X)((csc.data, csc.indices, csc.indptr),
                                    shape=self.shape[::-1])
        return _threaded_product(self._Xt, np.ascontiguousarray(G), n)
