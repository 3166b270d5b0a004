"""Per-instance metric functions and the input checks and helpers they share.

Every public function takes the true labels ``y_true`` (a scipy.sparse CSR matrix of shape
``(n_samples, n_labels)`` whose stored non-zero entries mark the labels of each row, or the
real-valued targets for the regression errors) and dense decision values ``scores`` of the
same shape, validates both, and returns one value per instance, shape ``(n_samples,)``. The
private ``_precision``, ``_ndcg``, ... compute the same on already validated inputs; the
metric registry (:mod:`mlx.metrics.names`) and :class:`~mlx.metrics.evaluator.Evaluator`
call those. The definitions are in the :mod:`mlx.metrics` package docstring.
"""

from __future__ import annotations

from mlx.errors import ConfigError
from mlx.lazy import lazy_module

np = lazy_module("numpy")
sp = lazy_module("scipy.sparse")

__all__ = [
    "AUC_DEGENERATE",
    "top_k_indices",
    "precision_at_k",
    "ndcg_at_k",
    "hamming_loss",
    "instance_auc",
    "f1",
    "zero_one_error",
    "mean_squared_error",
    "mean_absolute_error",
]

#: Valid values of the ``auc_degenerate`` option.
AUC_DEGENERATE = ("skip", "zero")


# --------------------------------------------------------------------------- input checks


def _check_scores(scores, fname: str) -> np.ndarray:
    scores = np.asarray(scores)
    if scores.ndim != 2:
        raise ValueError(f"{fname}: scores must be a 2-D array of shape (n_samples, n_labels); "
                         f"got shape {scores.shape}")
    if scores.dtype.kind != "f":
        scores = scores.astype(np.float64)
    if np.isnan(scores).any():
        raise ValueError(f"{fname}: scores contain NaN")
    return scores


def _check_labels(y_true, shape: tuple[int, int], fname: str) -> sp.csr_matrix:
    """CSR with sorted indices, no duplicates and no stored zeros (never mutates y_true)."""
    Y = y_true if sp.issparse(y_true) else np.asarray(y_true)
    if Y.ndim != 2 or Y.shape != shape:
        raise ValueError(f"{fname}: y_true has shape {Y.shape} but scores have shape {shape}")
    Y = sp.csr_matrix(Y)
    if not Y.has_canonical_format or (Y.data == 0).any():
        Y = Y.copy()
        Y.sum_duplicates()
        Y.eliminate_zeros()
        Y.sort_indices()
    return Y


def _check_k(k, fname: str) -> int:
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or k < 1:
        raise ValueError(f"{fname}: k must be an integer >= 1; got {k!r}")
    return int(k)


def _check_degenerate(auc_degenerate) -> str:
    if auc_degenerate not in AUC_DEGENERATE:
        raise ConfigError(None, None, f"auc_degenerate must be one of "
                          f"{', '.join(map(repr, AUC_DEGENERATE))}; got {auc_degenerate!r}")
    return auc_degenerate


def _row_ids(Y: sp.csr_matrix) -> np.ndarray:
    """Row index of every stored entry of a CSR matrix."""
    return np.repeat(np.arange(Y.shape[0]), np.diff(Y.indptr))


# --------------------------------------------------------------------------- shared helpers


def _top_k(scores: np.ndarray, k: int) -> np.ndarray:
    """Tie-stable top-k label indices, shape (n, min(k, L)); see top_k_indices."""
    n, L = scores.shape
    if n == 0 or L == 0:
        return np.empty((n, min(k, L)), dtype=np.intp)
    neg = -scores
    if k >= L:
        return np.argsort(neg, axis=1, kind="stable")
    # The k smallest of -scores, in arbitrary order; kth is the k-th largest score (negated).
    part = np.argpartition(neg, k - 1, axis=1)[:, :k]
    kth = np.take_along_axis(neg, part, axis=1).max(axis=1)
    # argpartition picks arbitrary members of a tie that straddles the k-th place; redo
    # those rows: everything strictly better, then the lowest-index tied labels.
    tied = np.flatnonzero((neg <= kth[:, None]).sum(axis=1) > k)
    if tied.size:
        sub = neg[tied]
        cut = kth[tied][:, None]
        better = sub < cut
        equal = sub == cut
        need = k - better.sum(axis=1)
        take = better | (equal & (np.cumsum(equal, axis=1) <= need[:, None]))
        part[tied] = np.nonzero(take)[1].reshape(-1, k)
    # Order within the row by (-score, label): sort labels, then stable sort on -score.
    part.sort(axis=1)
    order = np.argsort(np.take_along_axis(neg, part, axis=1), axis=1, kind="stable")
    return np.take_along_axis(part, order, axis=1)


def top_k_indices(scores, k: int) -> np.ndarray:
    """Label indices of the k largest scores of each row, best first.

    Ties are broken towards the lower label index, i.e. the order is a stable
    sort on ``(-score, label)``. The work is one ``np.argpartition`` plus a sort
    of the k selected entries; rows with a tie across the k-th place are
    resolved exactly.

    Parameters
    ----------
    scores : ndarray of shape (n_samples, n_labels)
    k : int
        At least 1; may exceed ``n_labels``.

    Returns
    -------
    ndarray of int, shape (n_samples, min(k, n_labels))
    """
    scores = _check_scores(scores, "top_k_indices")
    return _top_k(scores, _check_k(k, "top_k_indices"))


def _lookup(Y: sp.csr_matrix, topk: np.ndarray) -> np.ndarray:
    """hits[i, r] = whether label topk[i, r] is a label of row i; Y canonical."""
    n, L = Y.shape
    keys = _row_ids(Y).astype(np.int64) * L + Y.indices  # sorted: canonical CSR
    query = np.arange(n, dtype=np.int64)[:, None] * L + topk
    if keys.size == 0:
        return np.zeros(query.shape, dtype=bool)
    pos = np.minimum(np.searchsorted(keys, query), keys.size - 1)
    return keys[pos] == query


def _resolve_topk(scores: np.ndarray, k: int, topk, fname: str) -> np.ndarray:
    width = min(k, scores.shape[1])
    if topk is None:
        return _top_k(scores, k)
    topk = np.asarray(topk)
    if topk.ndim != 2 or topk.shape[0] != scores.shape[0] or topk.shape[1] < width:
        raise ValueError(f"{fname}: topk must have shape ({scores.shape[0]}, >= {width}); "
                         f"got {topk.shape}")
    return topk[:, :width]


def _pred_counts(Y: sp.csr_matrix, scores: np.ndarray, threshold: float):
    """(|pred|, |labels|, |pred ∩ labels|) per row, with pred = scores > threshold."""
    n = scores.shape[0]
    rows = _row_ids(Y)
    n_pred = (scores > threshold).sum(axis=1)
    n_true = np.diff(Y.indptr)
    hit = scores[rows, Y.indices] > threshold
    n_both = np.bincount(rows[hit], minlength=n)
    return n_pred, n_true, n_both


# --------------------------------------------------------------------------- per-instance metrics


def _precision(Y, scores, k, topk):
    return _precision_from_hits(_lookup(Y, topk), k)


def _precision_from_hits(hits: np.ndarray, k: int) -> np.ndarray:
    """P@k from ``hits[i, r]`` (the rank-r label of row i is a label), r < min(k, L)."""
    return hits.sum(axis=1) / k


def precision_at_k(y_true, scores, *, k: int, topk=None) -> np.ndarray:
    """Precision at k (the LEML paper's top-K accuracy), per instance.

    ``|top_k(scores_i) ∩ labels_i| / k``, where ``top_k`` are the k labels with
    the largest scores, ties broken towards the lower label index. A row with
    no labels scores 0 and is included in means. If ``k > n_labels`` every
    label is predicted and the denominator is still ``k``.

    Parameters
    ----------
    y_true : sparse matrix of shape (n_samples, n_labels)
        Stored non-zero entries are the labels.
    scores : ndarray of shape (n_samples, n_labels)
    k : int
        At least 1.
    topk : ndarray of int, shape (n_samples, K), optional
        Precomputed :func:`top_k_indices` for some ``K >= min(k, n_labels)``,
        shared between metrics; only its first ``min(k, n_labels)`` columns are
        used.

    Returns
    -------
    ndarray of shape (n_samples,)
    """
    fname = "precision_at_k"
    scores = _check_scores(scores, fname)
    k = _check_k(k, fname)
    Y = _check_labels(y_true, scores.shape, fname)
    return _precision(Y, scores, k, _resolve_topk(scores, k, topk, fname))


def _ndcg(Y, scores, k, topk):
    return _ndcg_from_hits(_lookup(Y, topk), np.diff(Y.indptr), k)


def _ndcg_from_hits(gains: np.ndarray, n_true: np.ndarray, k: int) -> np.ndarray:
    """nDCG@k from the top-ranked hits (as :func:`_precision_from_hits`) and the number of
    labels of each row."""
    discount = 1.0 / np.log2(np.arange(2, k + 2))
    dcg = (gains * discount[: gains.shape[1]]).sum(axis=1)
    ideal = np.concatenate([[np.nan], np.cumsum(discount)])[np.minimum(n_true, k)]
    with np.errstate(invalid="ignore"):
        return dcg / ideal


def ndcg_at_k(y_true, scores, *, k: int, topk=None) -> np.ndarray:
    """Normalised discounted cumulative gain at k, per instance.

    ``DCG@k = sum_{r=1}^{min(k, L)} [label at rank r is relevant] / log2(r + 1)``
    over the top-k labels (ties towards the lower label index, as in
    :func:`precision_at_k`), divided by the ideal ``IDCG@k = sum_{r=1}^{min(k,
    |labels|)} 1 / log2(r + 1)``. Rows with no labels have no ideal ranking and
    are NaN, so means exclude them.

    Parameters
    ----------
    y_true : sparse matrix of shape (n_samples, n_labels)
    scores : ndarray of shape (n_samples, n_labels)
    k : int
        At least 1; may exceed ``n_labels``.
    topk : ndarray of int, shape (n_samples, K), optional
        As in :func:`precision_at_k`.

    Returns
    -------
    ndarray of shape (n_samples,), values in [0, 1] or NaN
    """
    fname = "ndcg_at_k"
    scores = _check_scores(scores, fname)
    k = _check_k(k, fname)
    Y = _check_labels(y_true, scores.shape, fname)
    return _ndcg(Y, scores, k, _resolve_topk(scores, k, topk, fname))


def _hamming(Y, scores, threshold):
    n_pred, n_true, n_both = _pred_counts(Y, scores, threshold)
    return (n_pred + n_true - 2 * n_both) / scores.shape[1]


def hamming_loss(y_true, scores, *, threshold: float) -> np.ndarray:
    """Hamming loss per instance: ``|pred Δ labels| / n_labels``.

    ``pred = {j : scores_j > threshold}``. The LEML paper rounds each decision
    value to 0 or 1 (``I[round(f_j(x)) != y_j]``), i.e. ``threshold = 0.5`` for
    models trained on {0, 1} targets; models trained on ±1 targets use 0. The
    mean over instances equals the paper's ``1/(nL) sum_i sum_j``.

    Parameters
    ----------
    y_true : sparse matrix of shape (n_samples, n_labels)
    scores : ndarray of shape (n_samples, n_labels)
    threshold : float

    Returns
    -------
    ndarray of shape (n_samples,), values in [0, 1]
    """
    fname = "hamming_loss"
    scores = _check_scores(scores, fname)
    Y = _check_labels(y_true, scores.shape, fname)
    if scores.shape[1] == 0:
        raise ValueError(f"{fname}: needs at least one label column")
    return _hamming(Y, scores, threshold)


def _auc(Y, scores, degenerate):
    n, L = scores.shape
    rows = _row_ids(Y)
    # Mann-Whitney: U = (sum of the positives' average ranks) - P (P + 1) / 2, ties get ½.
    from scipy.stats import rankdata  # scipy.stats is slow to import; only AUC needs it

    ranks = rankdata(scores, method="average", axis=1)
    rank_sum = np.bincount(rows, weights=ranks[rows, Y.indices], minlength=n)
    return auc_from_rank_sums(Y, L, rank_sum, degenerate)


def auc_from_rank_sums(Y, n_labels: int, rank_sum: np.ndarray, degenerate: str) -> np.ndarray:
    """Per-row AUC from each row's sum of its positives' average ranks (Mann-Whitney U over
    the positive-negative pairs); rows without a pair are NaN (``skip``) or 0."""
    n_pos = np.diff(Y.indptr).astype(np.float64)
    pairs = n_pos * (n_labels - n_pos)
    u = rank_sum - n_pos * (n_pos + 1) / 2
    out = np.full(Y.shape[0], np.nan if degenerate == "skip" else 0.0)
    ok = pairs > 0
    out[ok] = u[ok] / pairs[ok]
    return out


def instance_auc(y_true, scores, *, degenerate: str = "skip") -> np.ndarray:
    """Area under the ROC curve of each instance's label ranking.

    ``AUC_i = (1 / (P N)) sum_{p in labels, q not in labels} ([s_p > s_q] + ½ [s_p = s_q])``,
    the Mann-Whitney statistic over the row's P positive and N negative labels
    (the LEML paper's "average AUC", following Bucak et al. 2009, is its mean).
    Computed from within-row average ranks, never by enumerating pairs.

    Parameters
    ----------
    y_true : sparse matrix of shape (n_samples, n_labels)
    scores : ndarray of shape (n_samples, n_labels)
    degenerate : {"skip", "zero"}
        Value for rows with no positive or no negative label: ``"skip"`` gives
        NaN (excluded from means), ``"zero"`` gives 0.

    Returns
    -------
    ndarray of shape (n_samples,), values in [0, 1] or NaN
    """
    fname = "instance_auc"
    scores = _check_scores(scores, fname)
    Y = _check_labels(y_true, scores.shape, fname)
    return _auc(Y, scores, _check_degenerate(degenerate))


def _f1(Y, scores, threshold):
    n_pred, n_true, n_both = _pred_counts(Y, scores, threshold)
    denom = n_pred + n_true
    out = np.ones(scores.shape[0])
    nz = denom > 0
    out[nz] = 2 * n_both[nz] / denom[nz]
    return out


def f1(y_true, scores, *, threshold: float) -> np.ndarray:
    """Example-based F1 per instance: ``2 |pred ∩ labels| / (|pred| + |labels|)``.

    ``pred = {j : scores_j > threshold}``. A row with no predicted and no true
    label agrees perfectly and scores 1. (Micro- and macro-F1 are not
    per-instance; :class:`Evaluator` computes them from per-label counts.)

    Parameters
    ----------
    y_true : sparse matrix of shape (n_samples, n_labels)
    scores : ndarray of shape (n_samples, n_labels)
    threshold : float

    Returns
    -------
    ndarray of shape (n_samples,), values in [0, 1]
    """
    fname = "f1"
    scores = _check_scores(scores, fname)
    Y = _check_labels(y_true, scores.shape, fname)
    return _f1(Y, scores, threshold)


def _error(Y, scores):
    n, L = scores.shape
    if L == 0:
        return np.ones(n)
    best = np.argmax(scores, axis=1)[:, None]
    return 1.0 - _lookup(Y, best)[:, 0]


def zero_one_error(y_true, scores) -> np.ndarray:
    """Multi-class error per instance: ``1 - [argmax_j scores_j is a label of the row]``.

    Ties in the argmax go to the lower label index. With exactly one label per
    row (multi-class data) the mean is the usual error rate; a row without
    labels always counts as an error.

    Parameters
    ----------
    y_true : sparse matrix of shape (n_samples, n_classes)
    scores : ndarray of shape (n_samples, n_classes)

    Returns
    -------
    ndarray of shape (n_samples,), values in {0, 1}
    """
    fname = "zero_one_error"
    scores = _check_scores(scores, fname)
    Y = _check_labels(y_true, scores.shape, fname)
    return _error(Y, scores)


def _dense_targets(y_true, shape, fname) -> np.ndarray:
    T = y_true.toarray() if sp.issparse(y_true) else np.asarray(y_true, dtype=np.float64)
    if T.shape != shape:
        raise ValueError(f"{fname}: y_true has shape {T.shape} but scores have shape {shape}")
    if shape[1] == 0:
        raise ValueError(f"{fname}: needs at least one output column")
    return T


def _squared(T, scores):
    return np.mean((scores - T) ** 2, axis=1)


def _absolute(T, scores):
    return np.mean(np.abs(scores - T), axis=1)


def mean_squared_error(y_true, scores) -> np.ndarray:
    """Squared error per instance, averaged over the outputs: ``mean_j (y_j - s_j)^2``.

    The ``mse`` metric is its mean over instances and ``rmse`` the square root
    of that mean.

    Parameters
    ----------
    y_true : sparse matrix or ndarray of shape (n_samples, n_outputs)
        Real-valued targets; implicit entries of a sparse matrix are 0.
    scores : ndarray of shape (n_samples, n_outputs)

    Returns
    -------
    ndarray of shape (n_samples,)
    """
    fname = "mean_squared_error"
    scores = _check_scores(scores, fname)
    return _squared(_dense_targets(y_true, scores.shape, fname), scores)


def mean_absolute_error(y_true, scores) -> np.ndarray:
    """Absolute error per instance, averaged over the outputs: ``mean_j |y_j - s_j|``.

    Parameters
    ----------
    y_true : sparse matrix or ndarray of shape (n_samples, n_outputs)
        Real-valued targets; implicit entries of a sparse matrix are 0.
    scores : ndarray of shape (n_samples, n_outputs)

    Returns
    -------
    ndarray of shape (n_samples,)
    """
    fname = "mean_absolute_error"
    scores = _check_scores(scores, fname)
    return _absolute(_dense_targets(y_true, scores.shape, fname), scores)
