"""Similarity functions ``K(x, y)`` between data points, evaluated blockwise.

The landmarking method of Kar and Jain (2012) reaches the data only through a similarity
function, which need not be positive semi-definite (PSD). The registry :data:`SIMILARITIES`
holds the ones their experiments use:

===============  ==============================  =====  ===========================
name             ``K(x, y)``                     PSD    parameters
===============  ==============================  =====  ===========================
``sigmoid``      ``tanh(a <x, y> + r)``          no     ``scale`` a, ``offset`` r
``manhattan``    ``-||x - y||_1``                no     --
``euclidean``    ``-||x - y||_2``                no     --
``sqeuclidean``  ``-||x - y||_2^2``              no     --
``gaussian``     ``exp(-||x - y||^2 / (2 s^2))`` yes    ``bandwidth`` s > 0
===============  ==============================  =====  ===========================

The paper fixes ``r = -1`` and ``a = 1 / d_orig`` (``d_orig`` the number of features) for the
sigmoid (section 4); its Appendix G calls ``-||x - y||_2^2`` the "Euclidean" kernel, so both
the distance and its square are here. The Gaussian is the PSD control.

Every function works on row blocks, so no ``n x n`` matrix is ever formed:

* :func:`similarity` -- ``K(X, B)`` for all rows of ``X`` against a small set ``B`` (the
  landmarks): ``(n, m)``, computed ``block_elems`` entries at a time;
* :func:`nadaraya_watson` -- the kernel-regression predictor
  ``sum_i y_i K(x, x_i) / sum_i K(x, x_i)`` over a whole training set, accumulated over
  blocks of (query, training) pairs;
* :func:`mean_distance` -- the mean Euclidean distance from a few rows to all rows, the
  paper's bandwidth rule for the Gaussian (Appendix G).

Distances come from :func:`scipy.spatial.distance.cdist` (exact per pair, so a row's values
do not depend on the block it is computed in); the sigmoid's inner products from one matrix
product per block. A block with a NaN or infinite value (an overflow: features too large
for float64) raises :class:`NonFiniteSimilarityError` naming the similarity and the row.

References
----------
P. Kar and P. Jain, "Supervised learning with similarity functions", NIPS 2012, section 4
(sigmoid and Manhattan, kernel regression) and Appendix G (Gaussian, Euclidean, bandwidth).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp
from scipy.spatial.distance import cdist

from mlx.registry import Registry

__all__ = ["SIMILARITIES", "NonFiniteSimilarityError", "Similarity", "get_similarity",
           "mean_distance", "nadaraya_watson", "similarity"]

BLOCK_ELEMS = 1 << 20
"""Default number of similarity values per block (8 MB of float64)."""


class NonFiniteSimilarityError(ValueError):
    """A similarity value is NaN or infinite; ``name`` and ``row`` say which and where."""

    def __init__(self, name: str, row: int, col: int):
        self.name = name
        self.row = row
        self.col = col
        super().__init__(
            f"similarity {name!r} is NaN or infinite on row {row} (against reference row "
            f"{col}): the feature values overflow float64 in it; rescale the features (e.g. "
            f"preprocess: [minmax])")


@dataclass(frozen=True)
class Similarity:
    """One registered similarity function.

    Attributes
    ----------
    name : str
    formula : str
        ``K(x, y)`` in plain text.
    psd : bool
        Whether ``K`` is a positive semi-definite kernel.
    params : tuple of str
        Keyword parameters :attr:`block` requires.
    block : callable
        ``block(A, B, **params) -> ndarray (a, b)``: the values ``K(A_i, B_j)`` for a row
        block ``A`` (dense ndarray or CSR, shape (a, p)) and dense ``B`` of shape (b, p).
    """

    name: str
    formula: str
    psd: bool
    params: tuple
    block: Callable[..., np.ndarray]


SIMILARITIES: Registry[Similarity] = Registry("similarity")


def _register(name: str, formula: str, psd: bool, params: tuple = ()):
    def deco(fn):
        SIMILARITIES.register(name)(Similarity(name, formula, psd, tuple(params), fn))
        return fn
    return deco


def _dense(A) -> np.ndarray:
    return A.toarray() if sp.issparse(A) else np.asarray(A, dtype=np.float64)


@_register("sigmoid", "tanh(scale <x, y> + offset)", psd=False, params=("scale", "offset"))
def _sigmoid(A, B, *, scale: float, offset: float) -> np.ndarray:
    with np.errstate(over="ignore", invalid="ignore"):
        G = np.asarray(A @ B.T, dtype=np.float64)        # <x, y>; a sparse A stays sparse
        G *= scale
        G += offset
    bad = ~np.isfinite(G)                                # tanh would hide an overflow as +-1
    np.tanh(G, out=G)
    if bad.any():
        G[bad] = np.nan
    return G


@_register("manhattan", "-||x - y||_1", psd=False)
def _manhattan(A, B) -> np.ndarray:
    D = cdist(_dense(A), B, "cityblock")
    return np.negative(D, out=D)


@_register("euclidean", "-||x - y||_2", psd=False)
def _euclidean(A, B) -> np.ndarray:
    D = cdist(_dense(A), B, "euclidean")
    return np.negative(D, out=D)


@_register("sqeuclidean", "-||x - y||_2^2", psd=False)
def _sqeuclidean(A, B) -> np.ndarray:
    D = cdist(_dense(A), B, "sqeuclidean")
    return np.negative(D, out=D)


@_register("gaussian", "exp(-||x - y||_2^2 / (2 bandwidth^2))", psd=True, params=("bandwidth",))
def _gaussian(A, B, *, bandwidth: float) -> np.ndarray:
    D = cdist(_dense(A), B, "sqeuclidean")
    D *= -1.0 / (2.0 * bandwidth * bandwidth)
    return np.exp(D, out=D)


def get_similarity(name: str) -> Similarity:
    """The registered similarity ``name`` (an UnknownNameError lists the valid ones)."""
    return SIMILARITIES.get(name)


def _rows_per_block(n_cols: int, block_elems: int) -> int:
    return max(1, block_elems // max(n_cols, 1))


def _check_finite(S: np.ndarray, name: str, row0: int) -> None:
    if not np.isfinite(S).all():
        i, j = np.argwhere(~np.isfinite(S))[0]
        raise NonFiniteSimilarityError(name, row0 + int(i), int(j))


def similarity(name: str, X, B, *, params: dict | None = None,
               block_elems: int = BLOCK_ELEMS) -> np.ndarray:
    """``K(x_i, b_j)`` for every row ``x_i`` of ``X`` and every row ``b_j`` of ``B``.

    Parameters
    ----------
    name : str
        A registered similarity (:data:`SIMILARITIES`).
    X : ndarray or sparse matrix of shape (n, p)
        Any row slice gives the same rows of the result (up to the rounding of one matrix
        product for the sigmoid).
    B : ndarray of shape (m, p)
        The reference points (landmarks); ``m`` is meant to be small.
    params : dict
        The similarity's parameters (``Similarity.params``).
    block_elems : int
        Values per block; blocks hold ``max(1, block_elems // max(m, p))`` rows of ``X``.

    Returns
    -------
    ndarray of shape (n, m), float64

    Raises
    ------
    NonFiniteSimilarityError
        A value is NaN or infinite; the error names the first such row of ``X``.
    """
    sim = get_similarity(name)
    params = params or {}
    if sp.issparse(X):
        X = sp.csr_matrix(X)
    else:
        X = np.asarray(X, dtype=np.float64)
    B = np.asarray(B, dtype=np.float64)
    n = X.shape[0]
    out = np.empty((n, B.shape[0]))
    step = _rows_per_block(max(B.shape[0], X.shape[1]), block_elems)
    for start in range(0, n, step):
        stop = min(n, start + step)
        S = sim.block(X[start:stop], B, **params)
        _check_finite(S, name, start)
        out[start:stop] = S
    return out


def nadaraya_watson(name: str, X, X_train: np.ndarray, Y_train: np.ndarray, *,
                    params: dict | None = None, block_elems: int = BLOCK_ELEMS) -> np.ndarray:
    """Kernel regression ``f(x) = sum_i y_i K(x, x_i) / sum_i K(x, x_i)`` over a training set.

    The similarity values enter as they are, negative ones included (the predictor of Kar
    and Jain 2012, section 4). For a similarity that is never positive (Manhattan,
    Euclidean) the ratio is a weighted mean of the targets with weights ``|K(x, x_i)|``.
    Where the denominator vanishes, ``|sum_i K| <= 1e-12 sum_i |K|`` (all similarities 0,
    or positive and negative ones cancelling), the ratio is undefined and the row gets the
    mean training target instead.

    Parameters
    ----------
    name : str
        A registered similarity.
    X : ndarray or sparse matrix of shape (n_query, p)
    X_train : ndarray of shape (n_train, p)
    Y_train : ndarray of shape (n_train, n_targets)
    params : dict
        The similarity's parameters.
    block_elems : int
        Similarity values evaluated at once (a block of query rows against a block of
        training rows); memory stays ``O(block_elems)`` whatever ``n_query`` and ``n_train``.

    Returns
    -------
    ndarray of shape (n_query, n_targets)

    Raises
    ------
    NonFiniteSimilarityError
        A similarity value is NaN or infinite; names the query row.
    """
    sim = get_similarity(name)
    params = params or {}
    X_train = np.asarray(X_train, dtype=np.float64)
    Y_train = np.asarray(Y_train, dtype=np.float64)
    if Y_train.ndim != 2 or Y_train.shape[0] != X_train.shape[0]:
        raise ValueError(f"Y_train has shape {Y_train.shape}; expected ({X_train.shape[0]}, "
                         f"n_targets)")
    X = sp.csr_matrix(X) if sp.issparse(X) else np.asarray(X, dtype=np.float64)
    n_q, n_t = X.shape[0], X_train.shape[0]
    T = Y_train.shape[1]
    out = np.empty((n_q, T))
    if n_q == 0:
        return out
    fallback = Y_train.mean(axis=0)
    t_step = max(1, min(n_t, block_elems // 64))                   # training rows per block
    q_step = _rows_per_block(t_step, block_elems)                   # query rows per block
    for q0 in range(0, n_q, q_step):
        q1 = min(n_q, q0 + q_step)
        Xq = X[q0:q1]
        if sp.issparse(Xq):
            Xq = Xq.toarray()
        num = np.zeros((q1 - q0, T))
        den = np.zeros(q1 - q0)
        mag = np.zeros(q1 - q0)
        for t0 in range(0, n_t, t_step):
            t1 = min(n_t, t0 + t_step)
            S = sim.block(Xq, X_train[t0:t1], **params)
            _check_finite(S, name, q0)
            num += S @ Y_train[t0:t1]                               # sum_i y_i K(x, x_i)
            den += S.sum(axis=1)                                    # sum_i K(x, x_i)
            mag += np.abs(S).sum(axis=1)                            # sum_i |K(x, x_i)|
        ok = np.abs(den) > 1e-12 * mag
        block = np.empty_like(num)
        block[ok] = num[ok] / den[ok, None]
        block[~ok] = fallback
        out[q0:q1] = block
    return out


def mean_distance(X, rows: np.ndarray, *, block_elems: int = BLOCK_ELEMS) -> float:
    """Mean Euclidean distance ``||x_r - x_i||`` over the rows ``r`` in ``rows`` and all rows
    ``i != r`` of ``X``.

    With ``rows`` a uniform sample, an unbiased estimate of the average pairwise distance of
    the training points, the Gaussian bandwidth of Kar and Jain (2012, Appendix G), at
    ``O(len(rows) n)`` cost instead of ``O(n^2)``. Returns 0.0 when there is no pair.
    """
    X = sp.csr_matrix(X) if sp.issparse(X) else np.asarray(X, dtype=np.float64)
    rows = np.asarray(rows, dtype=np.int64)
    n = X.shape[0]
    R = X[rows]
    R = R.toarray() if sp.issparse(R) else R
    total, count = 0.0, rows.size * n - rows.size
    if count <= 0:
        return 0.0
    step = _rows_per_block(max(rows.size, X.shape[1]), block_elems)
    for start in range(0, n, step):
        stop = min(n, start + step)
        D = cdist(_dense(X[start:stop]), R, "euclidean")
        _check_finite(D, "euclidean", start)
        total += float(D.sum())                                     # self-pairs add 0
    return total / count
