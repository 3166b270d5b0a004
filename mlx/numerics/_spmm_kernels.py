"""Compiled kernel of :mod:`mlx.numerics.spmm` (numba; loaded on first threaded use).

``out[i] += a_ij B[j]`` for the stored entries of each row ``i`` in stored order, starting
from zero: the loop of scipy's ``csr_matvecs``, so every output element is the same sum in
the same order. Rows are split into fixed ranges, one per ``prange`` iteration; a range's
rows are written by one thread only. Compiled without fast-math (no reassociation, no
fused multiply-add), so the result does not depend on the ranges or the thread count.
"""

from __future__ import annotations

from numba import njit, prange

__all__ = ["csr_dense_rows"]


@njit(parallel=True, cache=True)
def csr_dense_rows(indptr, indices, data, B, bounds, out):  # pragma: no cover - compiled
    """``out[bounds[t]:bounds[t+1]] += (A B)[...]`` for each range ``t``, ranges in parallel."""
    k = B.shape[1]
    for t in prange(bounds.size - 1):
        for i in range(bounds[t], bounds[t + 1]):
            for jj in range(indptr[i], indptr[i + 1]):
                a = data[jj]
                j = indices[jj]
                for c in range(k):
                    out[i, c] += a * B[j, c]
