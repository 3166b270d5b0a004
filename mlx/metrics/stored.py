"""What every metric needs, summarised once per evaluated split, so adding a metric never refits.

A cell's scores are reduced, batch by batch, to a *summary* of small arrays:

* ``row:<metric>``: the per-row values of every per-instance metric of the task that takes no
  ``k`` (``auc``, ``hamming``, ``f1`` for multi-label data; ``error``; ``mse``, ``rmse``,
  ``mae``), thresholded ones only when the method or config gives a threshold;
* ``tp``, ``fp``, ``fn``: the per-label counts of ``micro_f1`` and ``macro_f1`` (with a
  threshold);
* ``hits`` (``n_rows x min(top_k, n_labels)``, bool): whether the label ranked ``r`` in a row
  is one of its labels, and ``n_true``, its number of labels: ``p@k`` and ``ndcg@k`` for every
  ``k <= top_k`` (every ``k`` when ``n_labels <= top_k``).

:func:`metrics_from_summary` computes any metric from a summary with the same functions and the
same averaging as :class:`~mlx.metrics.evaluator.Evaluator`; the runner computes its own results
that way too, so a metric added later (``mlx evaluate``, or a config whose only change is its
metrics) gives exactly the number a fresh run would. The size is about
``n_rows * (min(top_k, n_labels) / 8 + 8 * n_row_metrics + 4)`` bytes before compression, plus
``24 * n_labels`` for the counts, whatever the width of the score matrix.
"""

from __future__ import annotations

import io

import numpy as np
import scipy.sparse as sp

from mlx.errors import MlxError
from mlx.metrics.evaluator import Evaluator, default_batch_size
from mlx.metrics.functions import _lookup, _ndcg_from_hits, _precision_from_hits, _top_k
from mlx.metrics.names import METRICS, parse_metric

__all__ = ["DEFAULT_TOP_K", "summarize", "metrics_from_summary", "missing_metrics",
           "save_summaries", "load_summaries"]

#: Depth of the stored label ranking (``evaluation.store_top_k``).
DEFAULT_TOP_K = 20


def _row_metric_names(task: str, thresholded: bool) -> tuple[list[str], bool, bool]:
    """``(per-row metric names, counts, ranking)`` to summarise for ``task``."""
    names, counts, ranking = [], False, False
    for form in METRICS.names():
        fam = METRICS.get(form)
        if task not in fam.tasks or (fam.uses_threshold and not thresholded):
            continue
        if fam.uses_top_k:
            ranking = True
        elif fam.kind == "counts":
            counts = True
        else:
            names.append(form)
    return names, counts, ranking


def summarize(score_fn, X, Y, *, task: str, threshold: float | None, auc_degenerate: str,
              batch_size: int | None = None, top_k: int = DEFAULT_TOP_K) -> dict:
    """Score ``X`` in row batches and keep what every metric of ``task`` needs (module doc).

    ``threshold`` None: a method whose scores only rank labels; thresholded metrics are not
    summarised. Returns a dict of arrays and ints (see :func:`save_summaries`).
    """
    names, counts, ranking = _row_metric_names(task, threshold is not None)
    metrics = names + (["micro_f1"] if counts else [])
    ev = Evaluator(metrics, threshold=0.0 if threshold is None else threshold,
                   auc_degenerate=auc_degenerate)
    X = sp.csr_matrix(X) if sp.issparse(X) else np.asarray(X)
    Y = sp.csr_matrix(Y) if sp.issparse(Y) else np.asarray(Y)
    n, L = Y.shape
    if X.shape[0] != n:
        raise ValueError(f"summarize: X has {X.shape[0]} rows but Y has {n}")
    width = min(int(top_k), L)
    hits, n_true = [], []
    batch_size = batch_size or default_batch_size(L)
    for start in range(0, n, batch_size):
        stop = min(start + batch_size, n)
        scores = np.asarray(score_fn(X[start:stop]), dtype=np.float64)
        if scores.shape != (stop - start, L):
            raise ValueError(f"summarize: the score function returned shape {scores.shape} "
                             f"for rows {start}:{stop}; expected {(stop - start, L)}")
        if metrics:
            ev.update(Y[start:stop], scores)
        if ranking:
            Yb = sp.csr_matrix(Y[start:stop])
            Yb.sum_duplicates()
            Yb.sort_indices()
            hits.append(_lookup(Yb, _top_k(scores, width)) if width else
                        np.zeros((stop - start, 0), dtype=bool))
            n_true.append(np.diff(Yb.indptr))
    out = {"n_rows": n, "n_labels": L, "threshold": threshold is not None,
           "auc_degenerate": auc_degenerate}
    for name in names:
        out[f"row:{name}"] = ev.values(name) if n else np.empty(0)
    if counts:
        zeros = np.zeros(L, dtype=np.int64)
        out["tp"], out["fp"], out["fn"] = ev._counts if ev._counts is not None else (
            zeros, zeros, zeros)
    if ranking:
        out["top_k"] = width
        out["hits"] = (np.concatenate(hits) if hits else np.zeros((0, width))).astype(bool)
        out["n_true"] = (np.concatenate(n_true) if n_true else np.zeros(0)).astype(np.int64)
    return out


def missing_metrics(summary: dict, metrics) -> list[str]:
    """The metrics of ``metrics`` that ``summary`` cannot give (empty: all can)."""
    out = []
    for name in metrics:
        spec = parse_metric(name)
        fam = spec.family
        if fam.uses_threshold and not summary.get("threshold"):
            continue                      # blank by design (no threshold), not missing
        if fam.uses_top_k:
            ok = "hits" in summary and min(spec.k, summary["n_labels"]) <= summary["top_k"]
        elif fam.kind == "counts":
            ok = "tp" in summary
        else:
            ok = f"row:{fam.form}" in summary
        if not ok:
            out.append(spec.name)
    return out


def metrics_from_summary(summary: dict, metrics) -> dict[str, tuple[float | None, int]]:
    """``{metric: (value, n_eval)}`` as :class:`Evaluator` gives them on the full scores;
    thresholded metrics of a summary without a threshold are ``(None, 0)``.

    Raises MlxError naming the metrics the summary cannot give (e.g. ``p@50`` from a ranking
    stored to depth 20).
    """
    missing = missing_metrics(summary, metrics)
    if missing:
        depth = summary.get("top_k")
        raise MlxError(f"the stored scores cannot give {', '.join(missing)}"
                       + (f" (ranking stored to depth {depth}: evaluation.store_top_k)"
                          if depth is not None else ""))
    blank = [m for m in metrics if parse_metric(m).family.uses_threshold
             and not summary.get("threshold")]
    ev = Evaluator([m for m in metrics if m not in blank],
                   auc_degenerate=summary.get("auc_degenerate", "skip"))
    ev.n_rows, ev.n_labels = int(summary["n_rows"]), int(summary["n_labels"])
    for spec in ev.specs:
        fam = spec.family
        if fam.kind == "counts":
            ev._counts = (summary["tp"], summary["fp"], summary["fn"])
        elif fam.uses_top_k:
            gains = summary["hits"][:, :min(spec.k, ev.n_labels)]
            values = (_precision_from_hits(gains, spec.k) if fam.form == "p@<k>"
                      else _ndcg_from_hits(gains, summary["n_true"], spec.k))
            ev._values[spec.name] = [np.asarray(values, dtype=np.float64)]
        else:
            ev._values[spec.name] = [np.asarray(summary[f"row:{fam.form}"], dtype=np.float64)]
    out = dict(ev.result())
    out.update({parse_metric(m).name: (None, 0) for m in blank})
    return out


# ----------------------------------------------------------------------------- files
_SCALARS = ("n_rows", "n_labels", "threshold", "auc_degenerate", "top_k")


def save_summaries(summaries: dict[str, dict]) -> bytes:
    """``{split: summary}`` as the bytes of a compressed ``.npz`` file."""
    arrays = {}
    for split, summary in summaries.items():
        for key, value in summary.items():
            arrays[f"{split}/{key}"] = np.asarray(value)
    buf = io.BytesIO()
    np.savez_compressed(buf, **arrays)
    return buf.getvalue()


def load_summaries(path) -> dict[str, dict]:
    """The ``{split: summary}`` saved by :func:`save_summaries` to ``path``."""
    out: dict[str, dict] = {}
    with np.load(path, allow_pickle=False) as data:
        for name in data.files:
            split, key = name.split("/", 1)
            value = data[name]
            if key in _SCALARS:
                value = value.item()
            out.setdefault(split, {})[key] = value
    return out
