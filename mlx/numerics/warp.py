"""WARP (weighted approximate-rank pairwise) stochastic gradient epochs for WSABIE.

The model scores label ``j`` for an instance ``x`` as ``f_j(x) = u_j' V x`` with label
embeddings ``U`` (n_labels x rank) and feature embeddings ``V`` (rank x n_features). The
kernel stores ``V`` transposed, as ``VT`` of shape (n_features, rank), so the embedding of
each feature is one contiguous row.

One epoch visits every (instance, positive label) pair once, in the order of a random
permutation. For the pair ``(i, y)`` with candidate negatives ``N_i``:

1. ``phi = V x_i`` and ``f_y = u_y' phi``;
2. draw negatives ``n`` uniformly (with replacement) from ``N_i`` until one violates the
   margin, ``margin - f_y + f_n > 0``, or ``|N_i|`` draws were made without a violation
   (then nothing changes);
3. after ``t`` draws, estimate the rank of ``y`` as ``r = floor(|N_i| / t)`` and weight the
   hinge by ``L(r) = sum_{q=1}^{r} 1/q``;
4. take a gradient step on ``L(r) * (margin - u_y' V x_i + u_n' V x_i)``, all gradients
   from the current values::

       u_y      += lr L(r) phi
       u_n      -= lr L(r) phi
       V[:, f]  -= lr L(r) x_if (u_n - u_y)        for every feature f of x_i

5. project ``u_y``, ``u_n`` and every touched feature embedding ``V[:, f]`` onto the ball
   of radius ``max_norm`` (``x <- x * min(1, max_norm / ||x||)``).

``N_i`` is either the complement of row ``i``'s positives (full labels) or an explicit list
of row ``i``'s observed negatives (missing labels).

Randomness: the permutation and a 64-bit seed are drawn from the caller's
``numpy.random.Generator`` by :func:`draw_epoch`; negatives come from a SplitMix64 stream
started at that seed inside the compiled loop (:func:`splitmix64`, :func:`bounded`), so an
epoch is a deterministic function of its inputs and the pure-Python reference in the tests
can replay it exactly.

Floating point: the dot products and squared norms are compiled with reassociation
(:data:`_REDUCE`) so they vectorise; every other operation follows IEEE order. Epochs are
bitwise reproducible on one machine (the kernel is single-threaded); on CPUs with another
SIMD width those sums may round differently in the last bits. The compiled code is cached
on disk by numba (``cache=True``).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numba import njit

__all__ = [
    "WarpEpochResult",
    "draw_epoch",
    "harmonic_weights",
    "warp_epoch",
    "splitmix64",
    "bounded",
    "project_rows",
]

_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_MIX1 = np.uint64(0xBF58476D1CE4E5B9)
_MIX2 = np.uint64(0x94D049BB133111EB)
_S30 = np.uint64(30)
_S27 = np.uint64(27)
_S31 = np.uint64(31)
_S32 = np.uint64(32)

_REDUCE = {"reassoc", "nsz"}
"""LLVM fast-math flags of the two reductions (dot products and squared norms): they let
the compiler sum in SIMD lanes. Everything else follows IEEE order. An epoch is therefore
bitwise reproducible on one machine; CPUs with other vector widths may differ in the last
bits of these sums."""


@dataclass(frozen=True)
class WarpEpochResult:
    """Summary of one WARP epoch.

    Attributes
    ----------
    objective : float
        Mean over the epoch's pairs of the weighted hinge ``L(r) * (margin - f_y + f_n)``
        at the violating negative found (0 for pairs without one), measured before each
        step: a running estimate of the WARP objective.
    n_pairs : int
        Pairs visited.
    n_updates : int
        Pairs that found a violating negative and took a step.
    n_draws : int
        Negatives drawn in total.
    """

    objective: float
    n_pairs: int
    n_updates: int
    n_draws: int


# ----------------------------------------------------------------------------- random numbers
@njit(cache=True)
def splitmix64(state: np.uint64):
    """One SplitMix64 step: returns ``(new_state, output)``, both uint64.

    ``new_state = state + 0x9E3779B97F4A7C15`` (mod 2^64); the output is the
    standard SplitMix64 finaliser of ``new_state``.
    """
    state = state + _GOLDEN
    z = state
    z = (z ^ (z >> _S30)) * _MIX1
    z = (z ^ (z >> _S27)) * _MIX2
    return state, z ^ (z >> _S31)


@njit(cache=True)
def bounded(z: np.uint64, n: np.int64) -> np.int64:
    """Map a 64-bit draw to ``{0, ..., n-1}``: ``floor((z >> 32) * n / 2^32)``, ``n < 2^32``."""
    return np.int64(((z >> _S32) * np.uint64(n)) >> _S32)


# ----------------------------------------------------------------------------- helpers
def harmonic_weights(n: int) -> np.ndarray:
    """``L(r) = sum_{q=1}^{r} 1/q`` for ``r = 0 .. n`` (``L(0) = 0``), shape (n + 1,)."""
    out = np.zeros(n + 1)
    if n > 0:
        out[1:] = np.cumsum(1.0 / np.arange(1, n + 1))
    return out


def draw_epoch(rng: np.random.Generator, n_pairs: int) -> tuple[np.ndarray, int]:
    """Everything random in one epoch: a visiting order and the negative-sampling seed.

    Returns
    -------
    order : ndarray of int64, shape (n_pairs,)
        ``rng.permutation(n_pairs)``.
    seed : int
        ``rng.integers(0, 2**63)``, the start of the SplitMix64 stream.
    """
    order = rng.permutation(n_pairs).astype(np.int64)
    seed = int(rng.integers(0, 2**63, dtype=np.int64))
    return order, seed


@njit(cache=True, fastmath=_REDUCE)
def _dot(a, b):
    """``a' b`` for 1-D arrays of equal length (a vectorised, reassociated sum)."""
    s = 0.0
    for c in range(a.shape[0]):
        s += a[c] * b[c]
    return s


@njit(cache=True)
def _project_row(A, r, max_norm):
    """``A[r] *= min(1, max_norm / ||A[r]||)``."""
    row = A[r]
    sq = _dot(row, row)
    if sq > max_norm * max_norm:
        scale = max_norm / np.sqrt(sq)
        for c in range(A.shape[1]):
            A[r, c] *= scale


@njit(cache=True, fastmath=_REDUCE)
def _axpy_sqnorm(row, alpha, v):
    """``row += alpha * v`` in place; returns the new ``||row||^2``."""
    sq = 0.0
    for c in range(row.shape[0]):
        a = row[c] + alpha * v[c]
        row[c] = a
        sq += a * a
    return sq


@njit(cache=True)
def _shrink(row, sq, max_norm):
    """Rescale ``row`` (with ``||row||^2 = sq``) onto the ball of radius ``max_norm``."""
    if sq > max_norm * max_norm:
        scale = max_norm / np.sqrt(sq)
        for c in range(row.shape[0]):
            row[c] *= scale


@njit(cache=True)
def _project_all(A, max_norm):
    for r in range(A.shape[0]):
        _project_row(A, r, max_norm)


def project_rows(A: np.ndarray, max_norm: float | None) -> None:
    """Project every row of ``A`` in place onto the ball of radius ``max_norm`` (None: no-op)."""
    if max_norm is not None and np.isfinite(max_norm):
        _project_all(A, float(max_norm))


# ----------------------------------------------------------------------------- the epoch
# Complexity 17 (over 15): numba kernel: one pass over the epoch's samples.
@njit(cache=True)
def _warp_epoch(U, VT, x_indptr, x_indices, x_data, pos_indptr, pos_indices, pair_row,  # noqa: C901
                neg_indptr, neg_indices, explicit_neg, order, seed, learning_rate, margin,
                max_norm, harmonic):
    n_labels, k = U.shape
    project = np.isfinite(max_norm)
    phi = np.empty(k)
    diff = np.empty(k)
    state = np.uint64(seed)
    loss_sum = 0.0
    n_updates = 0
    n_draws = 0
    for t in range(order.shape[0]):
        p = order[t]
        i = pair_row[p]
        y = pos_indices[p]
        p0 = pos_indptr[i]
        p1 = pos_indptr[i + 1]
        if explicit_neg:
            n_neg = neg_indptr[i + 1] - neg_indptr[i]
        else:
            n_neg = n_labels - (p1 - p0)
        if n_neg <= 0:
            continue
        x0 = x_indptr[i]
        x1 = x_indptr[i + 1]
        for c in range(k):                                   # phi = V x_i
            phi[c] = 0.0
        for jj in range(x0, x1):
            f = x_indices[jj]
            v = x_data[jj]
            for c in range(k):
                phi[c] += v * VT[f, c]
        f_pos = _dot(U[y], phi)                              # f_y = u_y' phi
        neg = -1
        f_neg = 0.0
        draws = 0
        while draws < n_neg:
            draws += 1
            state, z = splitmix64(state)
            r = bounded(z, n_neg)
            if explicit_neg:
                cand = neg_indices[neg_indptr[i] + r]
            else:                                            # r-th label not among positives
                cand = r
                for q in range(p0, p1):                      # positives sorted ascending;
                    cand += pos_indices[q] <= cand           # branch-free skip over them
            s = _dot(U[cand], phi)                           # f_n = u_n' phi
            if margin - f_pos + s > 0.0:
                neg = cand
                f_neg = s
                break
        n_draws += draws
        if neg < 0:
            continue
        weight = harmonic[n_neg // draws]                    # L(floor(|N_i| / draws))
        loss_sum += weight * (margin - f_pos + f_neg)
        n_updates += 1
        step = learning_rate * weight
        for c in range(k):
            diff[c] = U[neg, c] - U[y, c]                    # d hinge / d (V x) = u_n - u_y
        sq = _axpy_sqnorm(U[y], step, phi)                   # d hinge / d u_y = -phi
        if project:
            _shrink(U[y], sq, max_norm)
        sq = _axpy_sqnorm(U[neg], -step, phi)                # d hinge / d u_n = +phi
        if project:
            _shrink(U[neg], sq, max_norm)
        for jj in range(x0, x1):                             # d hinge / d V[:, f] = x_f (u_n - u_y)
            row = VT[x_indices[jj]]
            sq = _axpy_sqnorm(row, -step * x_data[jj], diff)
            if project:
                _shrink(row, sq, max_norm)
    return loss_sum, n_updates, n_draws


def _check(name: str, arr, dtype, ndim: int) -> np.ndarray:
    if not isinstance(arr, np.ndarray) or arr.dtype != dtype or arr.ndim != ndim:
        got = (f"{arr.dtype} array with {arr.ndim} dimension(s)" if isinstance(arr, np.ndarray)
               else type(arr).__name__)
        raise ValueError(f"warp_epoch: {name} must be a {ndim}-D {np.dtype(dtype)} array; "
                         f"got {got}")
    if not arr.flags.c_contiguous:
        raise ValueError(f"warp_epoch: {name} must be C-contiguous")
    return arr


def warp_epoch(U: np.ndarray, VT: np.ndarray, x_indptr: np.ndarray, x_indices: np.ndarray,
               x_data: np.ndarray, pos_indptr: np.ndarray, pos_indices: np.ndarray, *,
               rng: np.random.Generator, learning_rate: float, margin: float,
               max_norm: float | None, neg_indptr: np.ndarray | None = None,
               neg_indices: np.ndarray | None = None, order: np.ndarray | None = None,
               seed: int | None = None) -> WarpEpochResult:
    """Run one WARP epoch, updating ``U`` and ``VT`` in place.

    Parameters
    ----------
    U : ndarray of float64, shape (n_labels, rank), C-contiguous
        Label embeddings ``u_j`` (rows).
    VT : ndarray of float64, shape (n_features, rank), C-contiguous
        Feature embeddings (rows; the columns of ``V``).
    x_indptr, x_indices, x_data : ndarrays
        CSR arrays of ``X`` (n_samples, n_features): int64, int64, float64; indices sorted
        and unique within each row.
    pos_indptr, pos_indices : ndarrays of int64
        CSR pattern (n_samples, n_labels) of the positives used as targets, sorted and
        unique within each row. Pair ``p`` is the ``p``-th stored positive.
    rng : numpy.random.Generator
        Source of the epoch's randomness (see :func:`draw_epoch`); not touched when both
        ``order`` and ``seed`` are given.
    learning_rate : float > 0
    margin : float > 0
    max_norm : float > 0 or None
        Radius of the norm balls for rows of ``U`` and ``VT``; None: no projection.
    neg_indptr, neg_indices : ndarrays of int64 or None
        CSR pattern of each row's candidate negatives (the observed negatives). None: every
        label that is not a positive of the row.
    order, seed : optional
        Replace the draws of :func:`draw_epoch` (both or neither).

    Returns
    -------
    WarpEpochResult
    """
    U = _check("U", U, np.float64, 2)
    VT = _check("VT", VT, np.float64, 2)
    if U.shape[1] != VT.shape[1]:
        raise ValueError(f"warp_epoch: U has rank {U.shape[1]} but VT has rank {VT.shape[1]}")
    x_indptr = _check("x_indptr", x_indptr, np.int64, 1)
    x_indices = _check("x_indices", x_indices, np.int64, 1)
    x_data = _check("x_data", x_data, np.float64, 1)
    pos_indptr = _check("pos_indptr", pos_indptr, np.int64, 1)
    pos_indices = _check("pos_indices", pos_indices, np.int64, 1)
    n_rows = x_indptr.size - 1
    if pos_indptr.size != n_rows + 1:
        raise ValueError(f"warp_epoch: X has {n_rows} rows but the positives have "
                         f"{pos_indptr.size - 1}")
    if learning_rate <= 0 or margin <= 0 or (max_norm is not None and max_norm <= 0):
        raise ValueError("warp_epoch: learning_rate, margin and max_norm must be > 0; got "
                         f"{learning_rate}, {margin}, {max_norm}")
    n_labels = U.shape[0]
    if n_labels >= 2**32:
        raise ValueError("warp_epoch: at most 2^32 - 1 labels")
    explicit = neg_indptr is not None
    if explicit:
        neg_indptr = _check("neg_indptr", neg_indptr, np.int64, 1)
        neg_indices = _check("neg_indices", neg_indices, np.int64, 1)
        if neg_indptr.size != n_rows + 1:
            raise ValueError(f"warp_epoch: X has {n_rows} rows but the negatives have "
                             f"{neg_indptr.size - 1}")
    else:
        neg_indptr = np.zeros(1, dtype=np.int64)
        neg_indices = np.zeros(0, dtype=np.int64)
    n_pairs = pos_indices.size
    if (order is None) != (seed is None):
        raise ValueError("warp_epoch: give both order and seed, or neither")
    if order is None:
        order, seed = draw_epoch(rng, n_pairs)
    else:
        order = _check("order", order, np.int64, 1)
        if order.size != n_pairs:
            raise ValueError(f"warp_epoch: order has {order.size} entries for {n_pairs} pairs")
    pair_row = np.repeat(np.arange(n_rows, dtype=np.int64), np.diff(pos_indptr))
    harmonic = harmonic_weights(n_labels)
    loss_sum, n_updates, n_draws = _warp_epoch(
        U, VT, x_indptr, x_indices, x_data, pos_indptr, pos_indices, pair_row, neg_indptr,
        neg_indices, explicit, order, np.uint64(seed), float(learning_rate), float(margin),
        np.inf if max_norm is None else float(max_norm), harmonic)
    return WarpEpochResult(objective=loss_sum / max(n_pairs, 1), n_pairs=int(n_pairs),
                           n_updates=int(n_updates), n_draws=int(n_draws))
