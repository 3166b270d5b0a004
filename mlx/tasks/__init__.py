"""Tasks: what the targets of a dataset are, and what follows from that.

A dataset's ``task`` decides

* which targets are valid (:meth:`Task.check_targets`): 0/1 label sets (multi-label), one
  label per row (multi-class), real values in one or more columns (regression), or integer
  levels in one column (ordinal regression);
* which metrics are meaningful (:meth:`Task.check_metric`) and which are the default;
* how scores become predictions (:meth:`Task.predictor`): multi-class predictions are the
  arg-max of the scores (the ``error`` metric takes it), ordinal predictions are the scores
  rounded to the nearest level seen in training, regression predictions are the scores;
* which label-availability protocols apply: the entry-wise observed-label mask
  (``sweep.observed_ratio``) is for multi-label data only; labelled rows
  (``sweep.labelled_ratio``) apply to every task;
* whether splits can be stratified (multi-class classes, ordinal levels).

Methods declare the tasks they handle in their ``tasks`` class attribute; a cell whose task a
method does not handle is ``skipped`` with the reason.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from mlx.errors import ConfigError, DataFormatError
from mlx.registry import Registry

__all__ = ["Task", "TASKS", "get_task", "task_names"]

_MAX_SHOWN = 60


def _row_of(mask_rows: np.ndarray) -> int:
    return int(np.flatnonzero(mask_rows)[0])


@dataclass(frozen=True)
class Task:
    """One task type. Instances are registered in :data:`TASKS` under ``name``."""

    name: str
    description: str
    targets: str                  # "labels" (a label set per row) or "values" (real numbers)
    stratified: bool              # whether splits may be stratified by class / level
    entry_masks: bool             # whether the observed-label (entry-wise) mask applies

    @property
    def phrase(self) -> str:
        """``"a multilabel task"``, ``"an ordinal task"``: for messages."""
        return f"{'an' if self.name[0] in 'aeiou' else 'a'} {self.name} task"

    # -- targets --------------------------------------------------------------
    def check_targets(self, Y, *, where: str) -> None:
        """Raise :class:`~mlx.errors.DataFormatError` naming ``where`` (a file or a dataset)
        and the first offending row when ``Y`` does not hold valid targets for this task."""
        Y = sp.csr_matrix(Y)
        n, T = Y.shape
        if Y.data.size and not np.isfinite(Y.data).all():
            row = int(np.searchsorted(Y.indptr, np.flatnonzero(~np.isfinite(Y.data))[0],
                                      side="right") - 1)
            raise DataFormatError(where, None, f"row {row + 1}: target is NaN or infinite; "
                                  f"remove or impute it")
        if self.name == "multilabel":
            bad = Y.data != 1.0
            if bad.any():
                row = int(np.searchsorted(Y.indptr, np.flatnonzero(bad)[0], side="right") - 1)
                value = Y.data[np.flatnonzero(bad)[0]]
                raise DataFormatError(
                    where, None, f"row {row + 1}: target value {value:g} is not a 0/1 label; a "
                    f"multi-label task needs label sets (is this a regression target? set the "
                    f"dataset's task to regression or ordinal)")
        elif self.name == "multiclass":
            per_row = np.diff(Y.indptr)
            if (per_row != 1).any():
                row = _row_of(per_row != 1)
                raise DataFormatError(where, None, f"row {row + 1}: has {per_row[row]} labels; a "
                                      f"multi-class task needs exactly one class per row")
        elif self.name == "ordinal":
            if T != 1:
                raise DataFormatError(where, None, f"an ordinal task needs one target column; "
                                      f"got {T}")
            y = Y.toarray().ravel()
            frac = y != np.round(y)
            if frac.any():
                row = _row_of(frac)
                raise DataFormatError(where, None, f"row {row + 1}: ordinal level {y[row]:g} is not "
                                      f"an integer; ordinal targets are integer levels (set "
                                      f"the dataset's 'bins' to cut a real target into "
                                      f"levels, or use task regression)")
            if n and np.unique(y).size < 2:
                raise DataFormatError(where, None, f"every row has level {y[0]:g}; an ordinal task "
                                      f"needs at least two levels")

    def classes(self, Y) -> np.ndarray | None:
        """Per-row class (multi-class) or level (ordinal) for stratification, else None."""
        if not self.stratified:
            return None
        Y = sp.csr_matrix(Y)
        if self.name == "multiclass":
            out = np.full(Y.shape[0], -1, dtype=np.int64)
            rows = np.repeat(np.arange(Y.shape[0]), np.diff(Y.indptr))
            out[rows] = Y.indices
            return out
        return Y.toarray().ravel()

    # -- metrics --------------------------------------------------------------
    def metric_valid(self, metric: str) -> bool:
        from mlx.metrics import parse_metric

        return self.name in parse_metric(metric).family.tasks

    def check_metric(self, metric: str, *, source=None, key_path=None) -> None:
        """A config error naming the metric and the task when they do not go together."""
        if not self.metric_valid(metric):
            valid = ", ".join(self.valid_metrics())
            raise ConfigError(source, key_path,
                              f"metric {metric!r} is not defined for {self.phrase}; "
                              f"valid: {valid}")

    def valid_metrics(self) -> list[str]:
        from mlx.metrics import METRICS

        return [form for form in METRICS.names() if self.name in METRICS.get(form).tasks]

    def default_metrics(self) -> list[str]:
        from mlx.metrics import default_metrics

        return list(default_metrics(self.name))

    # -- predictions ----------------------------------------------------------
    def predictor(self, score_fn, Y_train):
        """``X -> predictions`` for the metrics: scores, or levels for an ordinal task.

        Ordinal: each score is rounded to the nearest level observed in ``Y_train`` (ties
        to the lower level), so predictions are always valid levels.
        """
        if self.name != "ordinal":
            return score_fn
        levels = np.unique(sp.csr_matrix(Y_train).toarray().ravel())

        def predict(X):
            s = np.asarray(score_fn(X), dtype=np.float64)
            pos = np.clip(np.searchsorted(levels, s, side="left"), 1, levels.size - 1)
            lo, hi = levels[pos - 1], levels[pos]
            return np.where(s - lo <= hi - s, lo, hi)

        return predict


TASKS: Registry[Task] = Registry("task")
for _task in (
    Task("multilabel", "a set of labels per row (0/1 label matrix)", "labels",
         stratified=False, entry_masks=True),
    Task("multiclass", "exactly one class per row (one-hot label matrix)", "labels",
         stratified=True, entry_masks=False),
    Task("regression", "one or more real-valued targets per row", "values",
         stratified=False, entry_masks=False),
    Task("ordinal", "one integer level per row; predictions are levels", "values",
         stratified=True, entry_masks=False),
):
    TASKS.register(_task.name)(_task)


def get_task(name: str, *, source=None, key_path=None) -> Task:
    """The registered task ``name`` (an UnknownNameError lists the valid ones)."""
    return TASKS.get(name, source=source, key_path=key_path)


def task_names() -> list[str]:
    return TASKS.names()
