"""Metric names: the registry of metric families, name parsing and the defaults per task.

A metric name such as ``"p@3"`` or ``"hamming"`` is an instance of a registered
:class:`MetricFamily` (``"p@<k>"``, ``"hamming"``); :func:`parse_metric` turns a name into a
:class:`MetricSpec`. Each family records the tasks (:data:`TASK_NAMES`) it is valid for, and
:func:`default_metrics` gives the metrics reported when a config lists none.
"""

from __future__ import annotations

import inspect
import re
from collections.abc import Callable
from dataclasses import dataclass, field

from mlx.errors import ConfigError, UnknownNameError
from mlx.metrics.functions import (
    _absolute,
    _auc,
    _error,
    _f1,
    _hamming,
    _ndcg,
    _precision,
    _squared,
)
from mlx.registry import Registry

__all__ = [
    "TASK_NAMES",
    "COMPUTE_ARGUMENTS",
    "METRICS",
    "MetricFamily",
    "MetricSpec",
    "parse_metric",
    "metric_names",
    "default_metrics",
]

#: The names of the learning tasks a metric can be valid for (``Dataset.task``, the dataset
#: registry's ``task``).
TASK_NAMES = ("multilabel", "multiclass", "regression", "ordinal")

_MULTILABEL = frozenset({"multilabel"})
_CLASSES = frozenset({"multiclass"})   # arg-max of one-hot scores: not for ordinal levels
_VALUES = frozenset({"regression", "ordinal"})


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
        The per-instance values, shape ``(n,)``, of a batch of ``n`` validated rows, called
        with every argument by name (:data:`COMPUTE_ARGUMENTS`)::

            compute(*, labels, targets, scores, top_k, k, threshold, auc_degenerate)

        ``labels``: the canonical label CSR, shape ``(n, n_labels)`` (None when no metric
        of the batch reads labels); ``targets``: the dense real targets of the same shape
        (None when none reads values); ``scores``: dense, ``(n, n_labels)``; ``top_k``: the
        indices of each row's ``min(k, n_labels)`` best-scored labels (None unless
        ``uses_top_k``); ``k``: the metric's k (None without); ``threshold``: the decision
        threshold (``score > threshold`` predicts a label); ``auc_degenerate``: ``"skip"``
        or ``"zero"``. A metric names the arguments it reads and takes the rest as ``**_``;
        every parameter must be keyword-only (checked when the family is made). None for
        ``kind="counts"``.
    uses_top_k : bool
        Whether the family takes ``k`` and consumes the shared top-k array.
    targets : str
        ``"labels"`` (support of ``y_true``) or ``"values"`` (real targets).
    higher_is_better : bool
        False for losses and errors (``hamming``, ``error``, ``mse``, ``rmse``,
        ``mae``), for choosing parameters on a validation split.
    tasks : frozenset of str
        The tasks (a non-empty subset of :data:`TASK_NAMES`) the metric is valid for;
        keyword-only.
    uses_threshold : bool
        Whether the metric judges thresholded predictions (``score > threshold``); such a
        metric is not computed for a method without a decision threshold.
    """

    form: str
    description: str
    kind: str
    aggregate: str
    compute: Callable | None
    uses_top_k: bool = False
    targets: str = "labels"
    higher_is_better: bool = True
    tasks: frozenset = field(kw_only=True)
    uses_threshold: bool = field(default=False, kw_only=True)

    def __post_init__(self):
        if self.compute is not None:
            _check_compute(self.form, self.compute)
        tasks = frozenset(self.tasks)
        if not tasks or not tasks <= set(TASK_NAMES):
            raise ValueError(f"metric {self.form!r}: tasks must be a non-empty subset of "
                             f"{TASK_NAMES}; got {sorted(tasks)}")
        object.__setattr__(self, "tasks", tasks)


#: The names :meth:`MetricFamily.compute` is called with, every one by name.
COMPUTE_ARGUMENTS = ("labels", "targets", "scores", "top_k", "k", "threshold",
                     "auc_degenerate")


def _check_compute(form: str, compute: Callable) -> None:
    """Refuse a ``compute`` that could be called positionally or does not accept every name
    of :data:`COMPUTE_ARGUMENTS`: the contract is by name, so no argument can slip into
    another's place."""
    params = inspect.signature(compute).parameters.values()
    named = {p.name for p in params if p.kind is p.KEYWORD_ONLY}
    rest = any(p.kind is p.VAR_KEYWORD for p in params)
    positional = [p.name for p in params if p.kind not in (p.KEYWORD_ONLY, p.VAR_KEYWORD)]
    unknown = sorted(named - set(COMPUTE_ARGUMENTS))
    if positional or unknown or not (rest or named >= set(COMPUTE_ARGUMENTS)):
        raise TypeError(f"metric {form!r}: compute must take keyword-only arguments among "
                        f"{', '.join(COMPUTE_ARGUMENTS)} (and **_ for those it does not read); "
                        f"got ({', '.join(p.name for p in params)})")


METRICS: Registry[MetricFamily] = Registry("metric")


def _register(family: MetricFamily) -> None:
    METRICS.register(family.form)(family)


_register(MetricFamily(
    "p@<k>", "precision at k (top-K accuracy): |top-k ∩ labels| / k", "instance", "mean",
    lambda *, labels, scores, top_k, k, **_: _precision(labels, scores, k, top_k),
    uses_top_k=True, tasks=_MULTILABEL))
_register(MetricFamily(
    "ndcg@<k>", "normalised DCG at k; rows without labels excluded", "instance", "mean",
    lambda *, labels, scores, top_k, k, **_: _ndcg(labels, scores, k, top_k),
    uses_top_k=True, tasks=_MULTILABEL))
_register(MetricFamily(
    "hamming", "Hamming loss |pred Δ labels| / L with pred = score > threshold",
    "instance", "mean",
    lambda *, labels, scores, threshold, **_: _hamming(labels, scores, threshold),
    higher_is_better=False, tasks=_MULTILABEL, uses_threshold=True))
_register(MetricFamily(
    "auc", "per-instance ROC AUC over (positive, negative) label pairs, ties ½",
    "instance", "mean",
    lambda *, labels, scores, auc_degenerate, **_: _auc(labels, scores, auc_degenerate),
    tasks=_MULTILABEL))
_register(MetricFamily(
    "f1", "example-based F1 with pred = score > threshold", "instance", "mean",
    lambda *, labels, scores, threshold, **_: _f1(labels, scores, threshold),
    tasks=_MULTILABEL, uses_threshold=True))
_register(MetricFamily(
    "micro_f1", "F1 of the per-label TP/FP/FN counts summed over labels", "counts", "micro",
    None, tasks=_MULTILABEL, uses_threshold=True))
_register(MetricFamily(
    "macro_f1", "mean over labels of the per-label F1", "counts", "macro", None,
    tasks=_MULTILABEL, uses_threshold=True))
_register(MetricFamily(
    "error", "multi-class error rate: argmax score is not the true class", "instance", "mean",
    lambda *, labels, scores, **_: _error(labels, scores), higher_is_better=False,
    tasks=_CLASSES))
_register(MetricFamily(
    "mse", "mean squared error over instances and outputs", "instance", "mean",
    lambda *, targets, scores, **_: _squared(targets, scores), targets="values",
    higher_is_better=False, tasks=_VALUES))
_register(MetricFamily(
    "rmse", "square root of the mean squared error", "instance", "sqrt_mean",
    lambda *, targets, scores, **_: _squared(targets, scores), targets="values",
    higher_is_better=False, tasks=_VALUES))
_register(MetricFamily(
    "mae", "mean absolute error over instances and outputs", "instance", "mean",
    lambda *, targets, scores, **_: _absolute(targets, scores), targets="values",
    higher_is_better=False, tasks=_VALUES))


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


def default_metrics(task: str) -> list[str]:
    """The metrics reported for ``task`` when a config lists none (a new list each call).

    ``"multilabel"``: ``["p@1", "p@3", "p@5", "hamming", "auc"]``; ``"multiclass"``:
    ``["error"]``; ``"regression"``: ``["mse"]``; ``"ordinal"``: ``["mae"]``.

    Raises
    ------
    mlx.errors.UnknownNameError
        For a task not in :data:`TASK_NAMES`.
    """
    if not isinstance(task, str) or task not in TASK_NAMES:
        raise UnknownNameError("task", str(task), TASK_NAMES)
    from mlx.tasks import get_task

    return get_task(task).default_metrics()     # each task's own (mlx.tasks)


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
