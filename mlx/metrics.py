"""Evaluation metrics: pure per-instance functions, name parsing and a batched evaluator.

Every metric function takes the true labels ``y_true`` (a scipy.sparse CSR
matrix of shape ``(n_samples, n_labels)`` whose stored non-zero entries mark the
labels of each row) and dense decision values ``scores`` of the same shape, and
returns one value per instance, shape ``(n_samples,)``. Means, batching and
significance tests are then trivial. :class:`Evaluator` accumulates batches and
:func:`evaluate` scores a feature matrix in row batches, so an
``n_test x n_labels`` score matrix is never held in memory at once.

Definitions
-----------
The LEML paper (Yu, Jain, Kar and Dhillon, 2014, section 5, "Evaluation
Criteria") reports three criteria; mlx computes them as follows.

``p@<k>`` (top-K accuracy, precision at k)
    For each instance, the k labels with the largest scores are predicted and
    ``|top_k ∩ labels| / k`` is its value; the mean over instances is the
    paper's "top-K accuracy". Ties in scores are broken towards the lower label
    index (a stable order on ``(-score, label)``), so results are
    deterministic. Rows without labels count 0 and are included. ``k`` may
    exceed ``n_labels``: all labels are then predicted and the denominator
    stays ``k``.
``hamming`` (Hamming loss)
    ``|pred Δ labels| / n_labels`` per instance, with ``pred = scores >
    threshold``. The paper rounds each decision value to 0 or 1, which is the
    threshold 0.5 for models trained on {0, 1} targets (a score of exactly 0.5
    rounds to 0); models trained on ±1 targets use 0. The threshold is part
    of the method's configuration, not of the metric.
``auc`` (average AUC)
    Per instance, the area under the ROC curve of the row's scores against its
    labels: the Mann-Whitney statistic over all (positive, negative) label
    pairs, a tie counting ½, averaged over instances. Rows without a positive
    or without a negative label are degenerate: with ``auc_degenerate="skip"``
    (default) they are NaN and excluded from the mean (``n_eval`` counts the
    rows used); with ``"zero"`` they count as 0.

Further metrics:

``ndcg@<k>``
    ``DCG@k / IDCG@k`` with ``DCG@k = sum_{r=1}^{min(k, L)} rel_r / log2(r + 1)``
    over the top-k labels (same tie rule as ``p@<k>``) and ``IDCG@k`` the DCG of
    ``min(k, |labels|)`` relevant labels in front. Rows without labels are NaN
    and excluded.
``f1`` (example-based F1)
    ``2 |pred ∩ labels| / (|pred| + |labels|)`` per instance with ``pred =
    scores > threshold``; a row with no predicted and no true label scores 1.
``micro_f1`` / ``macro_f1``
    From true positives, false positives and false negatives per label,
    accumulated over all instances (``pred = scores > threshold``). Micro-F1 is
    ``2 TP / (2 TP + FP + FN)`` over the summed counts; macro-F1 is the mean
    over all ``n_labels`` labels of ``2 tp_j / (2 tp_j + fp_j + fn_j)``. Where a
    denominator is 0 (no positive and no predicted instance) the F1 counts as
    0, as in LibMultiLabel and scikit-learn's default. ``n_eval`` is the number
    of instances.
``error`` (multi-class error rate)
    ``1 - [argmax_j scores_j is a label of the row]``; with one label per row
    this is the usual 0/1 error. Ties in the argmax go to the lower index.
``mse`` / ``mae`` / ``rmse`` (regression targets)
    ``y_true`` holds real-valued targets (implicit entries are 0). Per
    instance, the squared (``mse``) or absolute (``mae``) error averaged over
    the outputs; ``rmse`` is the square root of the mean of the per-instance
    squared errors (i.e. of the overall MSE), not a mean of per-row roots.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from mlx.errors import ConfigError, UnknownNameError
from mlx.registry import Registry

__all__ = [
    "METRICS",
    "AUC_DEGENERATE",
    "MetricFamily",
    "MetricSpec",
    "Evaluator",
    "evaluate",
    "default_batch_size",
    "parse_metric",
    "metric_names",
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

#: Bytes of dense scores one batch of :func:`evaluate` may hold.
_BATCH_BYTES = 64_000_000


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
    return _lookup(Y, topk).sum(axis=1) / k


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
    discount = 1.0 / np.log2(np.arange(2, k + 2))
    gains = _lookup(Y, topk)
    dcg = (gains * discount[: gains.shape[1]]).sum(axis=1)
    n_true = np.diff(Y.indptr)
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
    n_pos = np.diff(Y.indptr).astype(np.float64)
    n_neg = L - n_pos
    pairs = n_pos * n_neg
    u = rank_sum - n_pos * (n_pos + 1) / 2
    out = np.full(n, np.nan if degenerate == "skip" else 0.0)
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


# --------------------------------------------------------------------------- registry and names


@dataclass(frozen=True)
class MetricFamily:
    """One registered metric form, e.g. ``"p@<k>"`` or ``"hamming"``.

    Attributes
    ----------
    form : str
        The registry key and documented spelling.
    description : str
        One line for ``mlx list`` and the docs.
    kind : str
        ``"instance"``: ``compute`` returns per-instance values, averaged
        ignoring NaN; ``"counts"``: per-label counts accumulated over batches.
    aggregate : str
        ``"mean"``, ``"sqrt_mean"`` (RMSE), ``"micro"`` or ``"macro"``.
    compute : callable or None
        ``compute(Y, T, scores, topk, k, threshold, degenerate) -> (n,)`` on
        validated inputs (Y: canonical label CSR; T: dense targets or None).
    uses_top_k : bool
        Whether the family takes ``k`` and consumes the shared top-k array.
    targets : str
        ``"labels"`` (support of ``y_true``) or ``"values"`` (real targets).
    higher_is_better : bool
        False for losses and errors (``hamming``, ``error``, ``mse``, ``rmse``,
        ``mae``), for choosing parameters on a validation split.
    """

    form: str
    description: str
    kind: str
    aggregate: str
    compute: Callable | None
    uses_top_k: bool = False
    targets: str = "labels"
    higher_is_better: bool = True


METRICS: Registry[MetricFamily] = Registry("metric")


def _register(family: MetricFamily) -> None:
    METRICS.register(family.form)(family)


_register(MetricFamily(
    "p@<k>", "precision at k (top-K accuracy): |top-k ∩ labels| / k", "instance", "mean",
    lambda Y, T, s, topk, k, t, d: _precision(Y, s, k, topk), uses_top_k=True))
_register(MetricFamily(
    "ndcg@<k>", "normalised DCG at k; rows without labels excluded", "instance", "mean",
    lambda Y, T, s, topk, k, t, d: _ndcg(Y, s, k, topk), uses_top_k=True))
_register(MetricFamily(
    "hamming", "Hamming loss |pred Δ labels| / L with pred = score > threshold",
    "instance", "mean", lambda Y, T, s, topk, k, t, d: _hamming(Y, s, t),
    higher_is_better=False))
_register(MetricFamily(
    "auc", "per-instance ROC AUC over (positive, negative) label pairs, ties ½",
    "instance", "mean", lambda Y, T, s, topk, k, t, d: _auc(Y, s, d)))
_register(MetricFamily(
    "f1", "example-based F1 with pred = score > threshold", "instance", "mean",
    lambda Y, T, s, topk, k, t, d: _f1(Y, s, t)))
_register(MetricFamily(
    "micro_f1", "F1 of the per-label TP/FP/FN counts summed over labels", "counts", "micro",
    None))
_register(MetricFamily(
    "macro_f1", "mean over labels of the per-label F1", "counts", "macro", None))
_register(MetricFamily(
    "error", "multi-class error rate: argmax score is not the true class", "instance", "mean",
    lambda Y, T, s, topk, k, t, d: _error(Y, s), higher_is_better=False))
_register(MetricFamily(
    "mse", "mean squared error over instances and outputs", "instance", "mean",
    lambda Y, T, s, topk, k, t, d: _squared(T, s), targets="values", higher_is_better=False))
_register(MetricFamily(
    "rmse", "square root of the mean squared error", "instance", "sqrt_mean",
    lambda Y, T, s, topk, k, t, d: _squared(T, s), targets="values", higher_is_better=False))
_register(MetricFamily(
    "mae", "mean absolute error over instances and outputs", "instance", "mean",
    lambda Y, T, s, topk, k, t, d: _absolute(T, s), targets="values", higher_is_better=False))


@dataclass(frozen=True)
class MetricSpec:
    """A parsed metric name.

    Attributes
    ----------
    name : str
        Canonical spelling (lower case, ``k`` without leading zeros), used as
        the ``metric`` column of results, e.g. ``"p@3"``.
    family : MetricFamily
    k : int or None
        For ``p@<k>`` and ``ndcg@<k>``.
    """

    name: str
    family: MetricFamily
    k: int | None = None

    @property
    def higher_is_better(self) -> bool:
        """Whether larger values are better (False for losses and errors)."""
        return self.family.higher_is_better


def metric_names() -> list[str]:
    """The valid metric forms, e.g. ``['auc', ..., 'p@<k>', 'rmse']``."""
    return METRICS.names()


_AT_K = re.compile(r"^([a-z_]+)@(.*)$")


def parse_metric(name) -> MetricSpec:
    """Parse a metric name such as ``"p@3"``, ``"NDCG@5"`` or ``"hamming"``.

    Names are case-insensitive; surrounding whitespace is ignored.

    Raises
    ------
    mlx.errors.UnknownNameError
        For a name that is not a registered form; lists :func:`metric_names`.
    mlx.errors.ConfigError
        For ``p@<k>`` / ``ndcg@<k>`` with a ``k`` that is not an integer >= 1.
        Neither error carries a file or key path; the config layer adds them.
    """
    if not isinstance(name, str):
        raise ConfigError(None, None, f"a metric name must be a string such as 'p@3'; "
                          f"got {name!r}")
    key = name.strip().lower()
    match = _AT_K.match(key)
    if match:
        stem, k_text = match.groups()
        form = f"{stem}@<k>"
        if form in METRICS:
            if not re.fullmatch(r"[0-9]+", k_text) or int(k_text) < 1:
                raise ConfigError(None, None, f"invalid metric {name!r}: k in '{form}' must be "
                                  f"an integer >= 1, as in '{stem}@3'; got {k_text!r}")
            k = int(k_text)
            return MetricSpec(f"{stem}@{k}", METRICS.get(form), k)
    elif "<" not in key and key in METRICS:
        return MetricSpec(key, METRICS.get(key))
    raise UnknownNameError("metric", name, metric_names())


# --------------------------------------------------------------------------- evaluation


def _f1_from_counts(tp, fp, fn):
    denom = 2 * tp + fp + fn
    out = np.zeros(np.shape(denom))
    nz = denom > 0
    out[nz] = 2 * tp[nz] / denom[nz]
    return out


class Evaluator:
    """Accumulate metrics over row batches.

    Per-instance values are kept (``n_samples`` floats per metric) and averaged
    once in :meth:`result`; micro- and macro-F1 accumulate integer per-label
    counts. Splitting the rows into batches of any size therefore gives exactly
    the same result as one batch.

    Parameters
    ----------
    metrics : list of str
        Metric names, see :func:`parse_metric`. Duplicates (after
        canonicalisation) are evaluated once.
    threshold : float, default 0.0
        Decision threshold for ``hamming``, ``f1``, ``micro_f1`` and
        ``macro_f1``: a label is predicted when its score is ``> threshold``.
    auc_degenerate : {"skip", "zero"}, default "skip"
        See :func:`instance_auc`.

    Examples
    --------
    >>> ev = Evaluator(["p@1", "auc"])
    >>> ev.update(Y[:100], scores[:100]); ev.update(Y[100:], scores[100:])  # doctest: +SKIP
    >>> ev.result()  # doctest: +SKIP
    {'p@1': (0.61, 200), 'auc': (0.93, 198)}
    """

    def __init__(self, metrics: Sequence[str], *, threshold: float = 0.0,
                 auc_degenerate: str = "skip"):
        specs: dict[str, MetricSpec] = {}
        for name in metrics:
            spec = parse_metric(name)
            specs.setdefault(spec.name, spec)
        self.specs = list(specs.values())
        if isinstance(threshold, bool) or not isinstance(threshold, (int, float, np.number)) \
                or not math.isfinite(threshold):
            raise ConfigError(None, None, f"threshold must be a finite number; got {threshold!r}")
        self.threshold = float(threshold)
        self.auc_degenerate = _check_degenerate(auc_degenerate)
        self._k_max = max((s.k for s in self.specs if s.family.uses_top_k), default=0)
        self.reset()

    def reset(self) -> None:
        """Forget all accumulated batches."""
        self.n_rows = 0
        self.n_labels: int | None = None
        self._values: dict[str, list[np.ndarray]] = {
            s.name: [] for s in self.specs if s.family.kind == "instance"}
        self._counts = None  # (tp, fp, fn) per label, int64

    def update(self, y_true, scores) -> None:
        """Add one batch.

        Parameters
        ----------
        y_true : sparse matrix of shape (n_rows, n_labels)
            Labels (or real targets for ``mse``/``rmse``/``mae``).
        scores : ndarray of shape (n_rows, n_labels)
        """
        fname = "Evaluator.update"
        scores = _check_scores(scores, fname)
        n, L = scores.shape
        if self.n_labels is None:
            self.n_labels = L
        elif L != self.n_labels:
            raise ValueError(f"{fname}: batch has {L} label columns, earlier batches had "
                             f"{self.n_labels}")
        needs_labels = any(s.family.targets == "labels" for s in self.specs)
        needs_values = any(s.family.targets == "values" for s in self.specs)
        Y = _check_labels(y_true, scores.shape, fname) if needs_labels else None
        T = _dense_targets(y_true, scores.shape, fname) if needs_values else None
        topk = _top_k(scores, self._k_max) if self._k_max else None
        if L == 0 and any(s.family.form == "hamming" for s in self.specs):
            raise ValueError(f"{fname}: hamming needs at least one label column")
        for spec in self.specs:
            fam = spec.family
            if fam.kind == "instance":
                width = min(spec.k, L) if fam.uses_top_k else 0
                sub = topk[:, :width] if fam.uses_top_k else None
                values = fam.compute(Y, T, scores, sub, spec.k, self.threshold,
                                     self.auc_degenerate)
                self._values[spec.name].append(np.asarray(values, dtype=np.float64))
        if any(s.family.kind == "counts" for s in self.specs):
            self._add_counts(Y, scores)
        self.n_rows += n

    def _add_counts(self, Y: sp.csr_matrix, scores: np.ndarray) -> None:
        L = scores.shape[1]
        pred = scores > self.threshold
        hit = pred[_row_ids(Y), Y.indices]
        tp = np.bincount(Y.indices[hit], minlength=L)
        fp = pred.sum(axis=0) - tp
        fn = np.bincount(Y.indices, minlength=L) - tp
        if self._counts is None:
            self._counts = (tp.astype(np.int64), fp.astype(np.int64), fn.astype(np.int64))
        else:
            self._counts = tuple(a + b for a, b in zip(self._counts, (tp, fp, fn)))

    def values(self, name: str) -> np.ndarray:
        """Per-instance values of a per-instance metric over all batches (NaN = excluded)."""
        spec = parse_metric(name)
        if spec.name not in self._values:
            raise KeyError(f"{spec.name!r} is not a per-instance metric of this evaluator")
        parts = self._values[spec.name]
        return np.concatenate(parts) if parts else np.empty(0)

    def result(self) -> dict[str, tuple[float, int]]:
        """Metric name (canonical) -> (value, n_eval).

        ``n_eval`` is the number of instances the value averages over, after
        excluding NaN rows (``ndcg@<k>`` rows without labels, ``auc`` degenerate
        rows under ``"skip"``); for ``micro_f1`` / ``macro_f1`` it is the number
        of instances counted. The value is NaN when ``n_eval`` is 0.
        """
        out: dict[str, tuple[float, int]] = {}
        for spec in self.specs:
            fam = spec.family
            if fam.kind == "instance":
                v = self.values(spec.name)
                v = v[~np.isnan(v)]
                if v.size == 0:
                    out[spec.name] = (math.nan, 0)
                    continue
                mean = float(np.mean(v))
                out[spec.name] = (math.sqrt(mean) if fam.aggregate == "sqrt_mean" else mean,
                                  int(v.size))
            elif self._counts is None or self.n_rows == 0:
                out[spec.name] = (math.nan, 0)
            else:
                tp, fp, fn = self._counts
                if fam.aggregate == "micro":
                    value = float(_f1_from_counts(np.array([tp.sum()]), np.array([fp.sum()]),
                                                  np.array([fn.sum()]))[0])
                else:
                    per_label = _f1_from_counts(tp, fp, fn)
                    value = float(per_label.mean()) if per_label.size else math.nan
                out[spec.name] = (value, self.n_rows)
        return out


def default_batch_size(n_labels: int, max_bytes: float = _BATCH_BYTES) -> int:
    """Rows per batch so that a batch of float64 scores stays under ``max_bytes``.

    ``max(1, max_bytes // (8 * n_labels))``.
    """
    return max(1, int(max_bytes // (8 * max(int(n_labels), 1))))


def evaluate(method_or_score_fn, X, Y, metrics: Iterable[str], *, batch_size: int | None = None,
             threshold: float = 0.0, auc_degenerate: str = "skip") -> dict[str, tuple[float, int]]:
    """Score ``X`` in row batches and evaluate ``metrics`` against ``Y``.

    Parameters
    ----------
    method_or_score_fn : object with ``decision_function`` or callable
        ``score_fn(X_batch) -> ndarray of shape (n_batch, n_labels)``.
    X : sparse matrix or ndarray of shape (n_samples, n_features)
    Y : sparse matrix of shape (n_samples, n_labels)
    metrics : iterable of str
    batch_size : int, optional
        Rows per batch; default :func:`default_batch_size` (dense scores of a
        batch stay under about 64 MB).
    threshold, auc_degenerate
        As in :class:`Evaluator`.

    Returns
    -------
    dict
        Canonical metric name -> (value, n_eval), see :meth:`Evaluator.result`.
    """
    score_fn = getattr(method_or_score_fn, "decision_function", method_or_score_fn)
    if not callable(score_fn):
        raise TypeError("evaluate: expected a method with decision_function or a callable; "
                        f"got {type(method_or_score_fn).__name__}")
    evaluator = Evaluator(list(metrics), threshold=threshold, auc_degenerate=auc_degenerate)
    X = sp.csr_matrix(X) if sp.issparse(X) else np.asarray(X)
    Y = sp.csr_matrix(Y) if sp.issparse(Y) else np.asarray(Y)
    n, L = Y.shape
    if X.shape[0] != n:
        raise ValueError(f"evaluate: X has {X.shape[0]} rows but Y has {n}")
    if batch_size is None:
        batch_size = default_batch_size(L)
    if isinstance(batch_size, bool) or not isinstance(batch_size, (int, np.integer)) \
            or batch_size < 1:
        raise ValueError(f"evaluate: batch_size must be an integer >= 1; got {batch_size!r}")
    for start in range(0, n, batch_size):
        stop = min(start + batch_size, n)
        scores = np.asarray(score_fn(X[start:stop]))
        if scores.shape != (stop - start, L):
            raise ValueError(f"evaluate: the score function returned shape {scores.shape} for "
                             f"rows {start}:{stop}; expected {(stop - start, L)}")
        evaluator.update(Y[start:stop], scores)
    return evaluator.result()
