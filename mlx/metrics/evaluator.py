"""Batched evaluation: :class:`Evaluator` accumulates metrics over row batches and
:func:`evaluate` scores a feature matrix in row batches, so an ``n_test x n_labels`` score
matrix is never held in memory at once.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence

from mlx.errors import ConfigError
from mlx.lazy import lazy_module
from mlx.metrics.functions import (
    _check_degenerate,
    _check_labels,
    _check_scores,
    _dense_targets,
    _row_ids,
    _top_k,
    auc_from_rank_sums,
)
from mlx.metrics.names import MetricSpec, parse_metric

np = lazy_module("numpy")
sp = lazy_module("scipy.sparse")

__all__ = ["Evaluator", "default_batch_size", "evaluate"]

#: Bytes of dense scores one batch of :func:`evaluate` may hold.
_BATCH_BYTES = 64_000_000


def _f1_from_counts(tp, fp, fn):
    denom = 2 * tp + fp + fn
    out = np.zeros(np.shape(denom))
    nz = denom > 0
    out[nz] = 2 * tp[nz] / denom[nz]
    return out


#: Score comparisons per chunk of :func:`_auc_by_counting` (bounds its working memory).
_COUNT_CHUNK = 1 << 22


def _auc_by_counting_is_cheaper(Y: sp.csr_matrix, n_labels: int) -> bool:
    """Counting costs ``O(nnz(Y) L)``, ranking ``O(n L log L)``: count when rows have fewer
    positives than ``log2 L`` on average (always the case for XMC data)."""
    return Y.nnz <= Y.shape[0] * math.log2(max(n_labels, 2))


def _auc_by_counting(Y: sp.csr_matrix, scores: np.ndarray, degenerate: str) -> np.ndarray:
    """Per-row AUC exactly as :func:`mlx.metrics.functions.instance_auc` (Mann-Whitney with
    average ranks for ties), without ranking the whole row: a positive's average rank is
    ``#{scores below} + (#{scores equal} + 1) / 2``. Works in chunks of at most
    :data:`_COUNT_CHUNK` comparisons, so memory stays bounded at any ``n_labels``."""
    n, L = scores.shape
    rows = _row_ids(Y)
    pos = scores[rows, Y.indices]
    ranks = np.empty(pos.size)
    step = max(1, _COUNT_CHUNK // max(L, 1))
    for a in range(0, pos.size, step):
        b = min(a + step, pos.size)
        block = scores[rows[a:b]]
        s = pos[a:b, None]
        below = np.count_nonzero(block < s, axis=1)
        equal = np.count_nonzero(block == s, axis=1)
        ranks[a:b] = below + (equal + 1) / 2
    return auc_from_rank_sums(Y, L, np.bincount(rows, weights=ranks, minlength=n), degenerate)


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
                if fam.form == "auc" and _auc_by_counting_is_cheaper(Y, L):
                    values = _auc_by_counting(Y, scores, self.auc_degenerate)
                else:
                    values = fam.compute(labels=Y, targets=T, scores=scores, top_k=sub,
                                         k=spec.k, threshold=self.threshold,
                                         auc_degenerate=self.auc_degenerate)
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
