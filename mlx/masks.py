"""Observed-label masks for learning with missing labels (LEML, section 5.2).

A mask Ω ⊆ [n] x [L] marks the entries of a training label matrix whose values
(1 or 0) are known; the rest are unknown. The observed ratio is ``|Ω| / (n L)``
over *all* entries, and Ω is chosen uniformly at random with exactly
``round(ratio * n * L)`` entries.

Masks are **nested across ratios**: for one seed, the 20% mask is a subset of
the 40% mask. :class:`MaskSampler` fixes one pseudo-random permutation ``π``
of the ``n L`` linear entry indices (``i * L + j``) per (shape, seed) and the
mask for ``m`` entries is ``{π(0), ..., π(m - 1)}``. ``π`` is a keyed Feistel
network on the next even power of two ``>= n L``, restricted to ``[0, n L)``
by cycle walking, so ``π(p)`` is computed for the first ``m`` positions only:
time and memory are O(m), not O(n L), and the mask does not depend on which
other ratios were requested before or in which order (a runner may build
masks in separate processes). The permutation is pure integer arithmetic,
independent of numpy's random streams once the keys are drawn.
"""

from __future__ import annotations

import hashlib
import numbers

import numpy as np
import scipy.sparse as sp

__all__ = [
    "MaskSampler",
    "observed_mask",
    "observed_or_none",
    "apply_mask",
]

_ROUNDS = 6
_CHUNK = 1 << 21
_M64 = (1 << 64) - 1


def _check_shape(shape, fname: str) -> tuple[int, int]:
    try:
        n, L = (int(s) for s in shape)
    except (TypeError, ValueError):
        raise ValueError(f"{fname}: shape must be a pair (n_samples, n_labels); got {shape!r}") \
            from None
    if n < 0 or L < 0:
        raise ValueError(f"{fname}: shape must be non-negative; got {shape!r}")
    return n, L


def _check_ratio(ratio, fname: str) -> float:
    if isinstance(ratio, bool) or not isinstance(ratio, numbers.Real) or not 0 <= ratio <= 1:
        raise ValueError(f"{fname}: ratio must be a number in [0, 1]; got {ratio!r}")
    return float(ratio)


def _derived_key(seed: int, round_no: int) -> int:
    """64-bit Feistel round key for an integer seed (sha256, independent of numpy)."""
    digest = hashlib.sha256(f"{seed}|mask-key|{round_no}".encode()).digest()
    return int.from_bytes(digest[:8], "big")


def _mix(x: np.ndarray, key: np.uint64) -> np.ndarray:
    """splitmix64 finaliser of x + key (uint64, wrapping)."""
    z = x + key
    z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return z ^ (z >> np.uint64(31))


class MaskSampler:
    """Nested uniform observed-entry masks for one (shape, seed).

    Parameters
    ----------
    shape : (int, int)
        ``(n_samples, n_labels)`` of the training label matrix.
    seed : int or numpy.random.Generator
        An int (e.g. ``seed_for(base_seed, "mask", dataset, repetition)``)
        gives keys derived by sha256, independent of numpy; a Generator gives
        keys drawn from it (it is advanced by ``6`` raw draws).

    Notes
    -----
    ``mask(r1) ⊆ mask(r2)`` whenever ``r1 <= r2``; ``mask(r)`` has exactly
    ``round(r * n * L)`` entries (Python ``round``, ties to even).
    """

    def __init__(self, shape, seed):
        self.shape = _check_shape(shape, "MaskSampler")
        n, L = self.shape
        self.n_entries = n * L
        if isinstance(seed, np.random.Generator):
            keys = [int(v) for v in seed.bit_generator.random_raw(_ROUNDS)]
        elif isinstance(seed, numbers.Integral) and not isinstance(seed, bool):
            keys = [_derived_key(int(seed), r) for r in range(_ROUNDS)]
        else:
            raise TypeError(f"MaskSampler: seed must be an int or numpy.random.Generator; "
                            f"got {type(seed).__name__}")
        self._keys = [np.uint64(k & _M64) for k in keys]
        # Balanced Feistel on 2*half bits, the smallest even width with 2**(2*half) >= n L.
        bits = max(2, (self.n_entries - 1).bit_length())
        self._half = (bits + 1) // 2
        self._low = np.uint64((1 << self._half) - 1)

    def _encrypt(self, x: np.ndarray) -> np.ndarray:
        half = np.uint64(self._half)
        left, right = x >> half, x & self._low
        for key in self._keys:
            left, right = right, left ^ (_mix(right, key) & self._low)
        return (left << half) | right

    def _permute(self, pos: np.ndarray) -> np.ndarray:
        # Cycle walking: re-encrypt until the value falls in [0, n L); a permutation of
        # the larger domain restricted this way is a permutation of [0, n L).
        out = self._encrypt(pos)
        limit = np.uint64(self.n_entries)
        bad = np.flatnonzero(out >= limit)
        while bad.size:
            out[bad] = self._encrypt(out[bad])
            bad = bad[out[bad] >= limit]
        return out

    def n_observed(self, ratio: float) -> int:
        """``round(ratio * n_samples * n_labels)``."""
        ratio = _check_ratio(ratio, "MaskSampler.n_observed")
        return min(self.n_entries, int(round(ratio * self.n_entries)))

    def indices(self, m: int) -> np.ndarray:
        """The first ``m`` entries of the permutation, as linear indices ``i * L + j``.

        Returns
        -------
        ndarray of int64, shape (m,), distinct values in ``[0, n L)``, in draw order
        """
        if isinstance(m, bool) or not isinstance(m, numbers.Integral) or not \
                0 <= m <= self.n_entries:
            raise ValueError(f"MaskSampler.indices: m must be an integer in "
                             f"[0, {self.n_entries}]; got {m!r}")
        out = np.empty(int(m), dtype=np.int64)
        for start in range(0, int(m), _CHUNK):
            stop = min(start + _CHUNK, int(m))
            pos = np.arange(start, stop, dtype=np.uint64)
            out[start:stop] = self._permute(pos).astype(np.int64)
        return out

    def mask(self, ratio: float) -> sp.csr_matrix:
        """The observed-entry mask for ``ratio``.

        Returns
        -------
        scipy.sparse.csr_matrix of shape (n_samples, n_labels)
            float64 with stored entries equal to 1, sorted indices.
        """
        n, L = self.shape
        idx = np.sort(self.indices(self.n_observed(ratio)))
        rows, cols = np.divmod(idx, max(L, 1))
        indptr = np.zeros(n + 1, dtype=np.int64)
        np.cumsum(np.bincount(rows, minlength=n), out=indptr[1:])
        return sp.csr_matrix((np.ones(idx.size), cols, indptr), shape=(n, L))


def observed_mask(shape, ratio: float, rng) -> sp.csr_matrix:
    """Uniformly random observed entries, ``|Ω| = round(ratio * n * L)``.

    ``MaskSampler(shape, rng).mask(ratio)``: masks built from generators with
    the same seed are nested across ratios.

    Parameters
    ----------
    shape : (int, int)
    ratio : float in [0, 1]
        Observed fraction of all entries.
    rng : numpy.random.Generator or int

    Returns
    -------
    scipy.sparse.csr_matrix of shape ``shape``, float64 ones on Ω
    """
    return MaskSampler(shape, rng).mask(_check_ratio(ratio, "observed_mask"))


def observed_or_none(shape, ratio: float, rng) -> sp.csr_matrix | None:
    """``None`` (everything observed) when ``ratio == 1``, else :func:`observed_mask`."""
    if _check_ratio(ratio, "observed_or_none") == 1.0:
        return None
    return observed_mask(shape, ratio, rng)


def apply_mask(Y, mask) -> sp.csr_matrix:
    """``Y`` restricted to the observed entries: positives outside Ω are dropped.

    Parameters
    ----------
    Y : sparse matrix of shape (n_samples, n_labels)
    mask : sparse matrix of the same shape, or None
        Non-zero entries are observed; None means all entries are observed.

    Returns
    -------
    scipy.sparse.csr_matrix
        A new matrix with ``Y``'s dtype, sorted indices and no stored zeros.
    """
    Y = sp.csr_matrix(Y)
    if mask is None:
        out = Y.copy()
    else:
        if mask.shape != Y.shape:
            raise ValueError(f"apply_mask: mask has shape {mask.shape} but Y has shape {Y.shape}")
        out = sp.csr_matrix(Y.multiply(sp.csr_matrix(mask) != 0), dtype=Y.dtype)
    out.sum_duplicates()
    out.eliminate_zeros()
    out.sort_indices()
    return out
