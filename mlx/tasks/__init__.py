"""Tasks: what the targets of a dataset are, and what follows from that.

A dataset's ``task`` is one object (:class:`~mlx.tasks.base.Task`, one module per task in this
package, each registered in :data:`TASKS`) that decides

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

Methods declare the tasks they handle (by name) in their ``tasks`` class attribute; a cell whose
task a method does not handle is ``skipped`` with the reason. A method with a ``task`` parameter
receives the task object from the runner (a name works too) and asks it for its training
targets (:meth:`ValueTask.fit_targets`, :meth:`MultiClass.class_indices`), its rounding and
its validation score instead of switching on the name.

A new task is a new module here: a class deriving from :class:`LabelTask` or
:class:`ValueTask`, decorated with :func:`register_task`; every module of the package is
imported below.
"""

from __future__ import annotations

import importlib
import pkgutil

from mlx.tasks.base import (
    TASKS,
    LabelTask,
    Task,
    ValueTask,
    as_task,
    get_task,
    register_task,
    task_names,
)

__all__ = ["Task", "LabelTask", "ValueTask", "TASKS", "as_task", "get_task", "register_task",
           "task_names"]

for _module in pkgutil.iter_modules(__path__):
    if _module.name != "base" and not _module.name.startswith("_"):
        importlib.import_module(f"{__name__}.{_module.name}")
