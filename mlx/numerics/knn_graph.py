"""Exact k-nearest-neighbour graphs with binary weights and their Laplacians, never dense n x n.

:func:`knn_indices` finds, for every row, its ``k`` nearest other rows in Euclidean
distance: a k-d tree (:class:`scipy.spatial.cKDTree`) for dense data with few columns, else
a blockwise exact search whose distance block ``||a||^2 + ||b||^2 - 2 a'b`` comes from one
matrix product per block of rows (BLAS for dense data, a sparse product for sparse data), so
memory stays at ``block x n``. Ties are broken by the smaller row index.
:func:`knn_graph` turns the neighbour lists into a symmetric 0/1 similarity ``S`` and
:func:`graph_laplacian` gives ``L = D - S`` with ``D = diag(S 1)`` (LSVV paper, section 5.1.1
and section 6.1.3: a 10-NN graph with binary weights).
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from scipy.spatial import cKDTree

__all__ = ["graph_laplacian", "knn_graph", "knn_indices"]

_BLOCK_ENTRIES = 1 << 22
"""Entries of one (block, n) distance block in the blockwise search (32 MB)."""

_KDTREE_MAX_FEATURES = 16
"""Dense data with at most this many columns is searched with a k-d tree."""

_MODES = ("union", "mutual")


def _k_smallest(dist: np.ndarray, k: int) -> np.ndarray:
    """Column indices of the ``k`` smallest entries of every row, ties to the smaller index,
    sorted by (distance, index)."""
    b = dist.shape[0]
    kth = np.partition(dist, k - 1, axis=1)[:, k - 1:k]           # the k-th smallest value
    take = dist <= kth
    extra = np.flatnonzero(take.sum(axis=1) > k)                  # rows with ties at the k-th
    if extra.size:
        sub, t = dist[extra], kth[extra]
        below = sub < t
        need = k - below.sum(axis=1, keepdims=True)
        tied = sub == t
        take[extra] = below | (tied & (np.cumsum(tied, axis=1) <= need))  # lowest index first
    cand = np.nonzero(take)[1].reshape(b, k)                       # k per row, index order
    vals = np.take_along_axis(dist, cand, axis=1)
    order = np.lexsort((cand, vals), axis=1)                      # by distance, then index
    return np.take_along_axis(cand, order, axis=1)


def knn_indices(X, n_neighbors: int, *, block_entries: int = _BLOCK_ENTRIES,
                algorithm: str = "auto") -> np.ndarray:
    """The ``n_neighbors`` nearest other rows of every row of ``X`` (exact, Euclidean).

    Parameters
    ----------
    X : ndarray or sparse matrix of shape (n_samples, n_features)
    n_neighbors : int, 1 <= n_neighbors < n_samples
    block_entries : int, default=4M
        Largest number of entries of one distance block in the blockwise search.
    algorithm : {"auto", "brute", "kd_tree"}, default="auto"
        ``"auto"``: a k-d tree for dense ``X`` with at most 16 columns, else blockwise.

    Returns
    -------
    ndarray of int64, shape (n_samples, n_neighbors)
        Row ``i`` lists its neighbours by increasing distance (ties: smaller index first);
        ``i`` itself is never listed, duplicates of row ``i`` may be.
    """
    n = X.shape[0]
    k = int(n_neighbors)
    if not 1 <= k < n:
        raise ValueError(f"knn_indices: n_neighbors must be in [1, n_samples - 1] = "
                         f"[1, {n - 1}]; got {n_neighbors}")
    if algorithm not in ("auto", "brute", "kd_tree"):
        raise ValueError(f"knn_indices: unknown algorithm {algorithm!r}")
    dense = not sp.issparse(X)
    if algorithm == "kd_tree" or (algorithm == "auto" and dense
                                   and X.shape[1] <= _KDTREE_MAX_FEATURES):
        A = X.toarray() if not dense else np.asarray(X, dtype=np.float64)
        _, idx = cKDTree(A).query(A, k=k + 1)
        idx = np.asarray(idx, dtype=np.int64).reshape(n, k + 1)
        # Drop the row itself (normally first; with duplicates it may be elsewhere or absent,
        # and then the farthest of the k + 1 goes).
        keep = idx != np.arange(n)[:, None]
        keep[keep.all(axis=1), -1] = False
        return idx[keep].reshape(n, k)

    if dense:
        A = np.ascontiguousarray(X, dtype=np.float64)
        sq = np.einsum("ij,ij->i", A, A)
        At = A.T
    else:
        A = sp.csr_matrix(X, dtype=np.float64)
        sq = np.asarray(A.multiply(A).sum(axis=1)).ravel()
        At = A.T.tocsc()
    block = max(1, min(n, block_entries // max(n, 1)))
    out = np.empty((n, k), dtype=np.int64)
    for start in range(0, n, block):
        stop = min(n, start + block)
        prod = A[start:stop] @ At                                   # (block, n) inner products
        prod = prod.toarray() if sp.issparse(prod) else np.asarray(prod)
        dist = sq[start:stop, None] + sq[None, :] - 2.0 * prod      # squared distances
        dist[np.arange(stop - start), np.arange(start, stop)] = np.inf  # not its own neighbour
        out[start:stop] = _k_smallest(dist, k)
    return out


def knn_graph(X, n_neighbors: int, *, mode: str = "union", **search) -> sp.csr_matrix:
    """Symmetric binary k-NN similarity matrix ``S`` of the rows of ``X``.

    Parameters
    ----------
    X : ndarray or sparse matrix of shape (n_samples, n_features)
    n_neighbors : int, 1 <= n_neighbors < n_samples
    mode : {"union", "mutual"}, default="union"
        ``"union"``: ``S_ij = 1`` when j is among the neighbours of i *or* i among those of
        j; ``"mutual"``: when both hold (the LSVV authors' code, ``W & W'``).
    **search
        Passed to :func:`knn_indices`.

    Returns
    -------
    csr_matrix of shape (n_samples, n_samples)
        Values 1.0, symmetric, empty diagonal, sorted indices.
    """
    if mode not in _MODES:
        raise ValueError(f"knn_graph: mode must be 'union' or 'mutual'; got {mode!r}")
    n = X.shape[0]
    idx = knn_indices(X, n_neighbors, **search)
    rows = np.repeat(np.arange(n), idx.shape[1])
    A = sp.csr_matrix((np.ones(rows.size), (rows, idx.ravel())), shape=(n, n))
    A.data[:] = 1.0                                                 # (no duplicates anyway)
    S = A.maximum(A.T) if mode == "union" else A.minimum(A.T)
    S = sp.csr_matrix(S)
    S.eliminate_zeros()
    S.sort_indices()
    return S


def graph_laplacian(S) -> sp.csr_matrix:
    """``L = D - S`` with ``D = diag(S 1)``, for a symmetric similarity matrix ``S``.

    Returns a CSR matrix: symmetric positive semi-definite with zero row sums when ``S`` is
    symmetric with non-negative entries.
    """
    S = sp.csr_matrix(S, dtype=np.float64)
    deg = np.asarray(S.sum(axis=1)).ravel()
    L = sp.diags(deg, format="csr") - S
    L = sp.csr_matrix(L)
    L.sort_indices()
    return L
