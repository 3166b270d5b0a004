"""Evaluation metrics: per-instance functions, metric names and a batched evaluator.

Every metric function takes the true labels ``y_true`` (a scipy.sparse CSR
matrix of shape ``(n_samples, n_labels)`` whose stored non-zero entries mark the
labels of each row) and dense decision values ``scores`` of the same shape, and
returns one value per instance, shape ``(n_samples,)``. Means, batching and
significance tests are then trivial. :class:`Evaluator` accumulates batches and
:func:`evaluate` scores a feature matrix in row batches, so an
``n_test x n_labels`` score matrix is never held in memory at once.

Modules
-------
:mod:`mlx.metrics.functions`
    The per-instance metric functions (``precision_at_k``, ``ndcg_at_k``, ...).
:mod:`mlx.metrics.names`
    The metric registry (:class:`MetricFamily`, the tasks each metric is valid
    for), :func:`parse_metric`, :func:`metric_names`, :func:`default_metrics`.
:mod:`mlx.metrics.evaluator`
    :class:`Evaluator`, :func:`evaluate`, :func:`default_batch_size`.

This package re-exports the public names of all three.

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

Tasks
-----
Each metric family lists the tasks it is valid for (``MetricFamily.tasks``):
``p@<k>``, ``ndcg@<k>``, ``hamming``, ``auc``, ``f1``, ``micro_f1`` and
``macro_f1`` multi-label; ``error`` multi-class and ordinal; ``mse``, ``rmse``
and ``mae`` regression and ordinal. :func:`default_metrics` gives the metrics
reported when a config lists none.
"""

from mlx.metrics.evaluator import Evaluator, default_batch_size, evaluate
from mlx.metrics.functions import (
    AUC_DEGENERATE,
    f1,
    hamming_loss,
    instance_auc,
    mean_absolute_error,
    mean_squared_error,
    ndcg_at_k,
    precision_at_k,
    top_k_indices,
    zero_one_error,
)
from mlx.metrics.names import (
    METRICS,
    TASK_NAMES,
    MetricFamily,
    MetricSpec,
    default_metrics,
    metric_names,
    parse_metric,
)

__all__ = [
    "METRICS",
    "TASK_NAMES",
    "AUC_DEGENERATE",
    "MetricFamily",
    "MetricSpec",
    "Evaluator",
    "evaluate",
    "default_batch_size",
    "parse_metric",
    "metric_names",
    "default_metrics",
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
