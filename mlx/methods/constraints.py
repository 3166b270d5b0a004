"""Parameter constraints and fit contexts: what checks a method's settings before any fit.

Readable without importing a method, numpy or scikit-learn, so that ``mlx validate`` and
config parsing check parameters from :mod:`mlx.methods.table` alone. The constraint objects
follow scikit-learn's ``_parameter_constraints`` (``Interval``, ``StrOptions``, ``None``,
``numbers.Integral``, ``numbers.Real``); :mod:`mlx.methods.base` re-exports every name.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from mlx.tasks import Task

__all__ = ["BOOL", "FitContext", "Interval", "InvalidParameterError", "StrOptions",
           "TaskOptions", "check_params", "describe", "skip_reason", "task_name"]


class InvalidParameterError(ValueError):
    """A hyper-parameter violates its constraint; ``param`` names it."""

    def __init__(self, param: str, message: str):
        self.param = param
        super().__init__(message)


class Interval:
    """Numbers of ``type_`` (``numbers.Integral`` or ``numbers.Real``) in a range.

    ``closed`` is one of ``"both"``, ``"left"``, ``"right"``, ``"neither"``;
    ``None`` for a bound means unbounded.
    """

    def __init__(self, type_, left, right, *, closed: str = "both"):
        self.type = type_
        self.left = left
        self.right = right
        self.closed = closed

    def is_satisfied_by(self, value) -> bool:
        if isinstance(value, bool) or not isinstance(value, self.type):
            return False
        if isinstance(value, float) and not math.isfinite(value):
            return False
        lo_ok = self.left is None or (
            value >= self.left if self.closed in ("both", "left") else value > self.left)
        hi_ok = self.right is None or (
            value <= self.right if self.closed in ("both", "right") else value < self.right)
        return lo_ok and hi_ok

    def __str__(self) -> str:
        kind = "an int" if self.type is numbers.Integral else "a float"
        lb = "[" if self.closed in ("both", "left") and self.left is not None else "("
        rb = "]" if self.closed in ("both", "right") and self.right is not None else ")"
        lo = "-inf" if self.left is None else self.left
        hi = "inf" if self.right is None else self.right
        return f"{kind} in the range {lb}{lo}, {hi}{rb}"


class StrOptions:
    """One of a fixed set of strings."""

    def __init__(self, options):
        self.options = frozenset(options)

    def is_satisfied_by(self, value) -> bool:
        return isinstance(value, str) and value in self.options

    def __str__(self) -> str:
        return "a str among {" + ", ".join(repr(o) for o in sorted(self.options)) + "}"


class TaskOptions(StrOptions):
    """One of the named tasks: its name, or the task object (:mod:`mlx.tasks`) the runner
    passes."""

    def is_satisfied_by(self, value) -> bool:
        from mlx.tasks import Task

        if isinstance(value, Task):
            return value.name in self.options
        return super().is_satisfied_by(value)


class _TypeConstraint:
    def __init__(self, type_, label):
        self.type = type_
        self.label = label

    def is_satisfied_by(self, value) -> bool:
        if self.type is bool:
            return isinstance(value, bool)
        return isinstance(value, self.type) and not isinstance(value, bool)

    def __str__(self) -> str:
        return self.label


BOOL = _TypeConstraint(bool, "a bool")


def _describe(constraint) -> str:
    if constraint is None:
        return "None"
    if constraint is numbers.Integral:
        return "an int"
    if constraint is numbers.Real:
        return "a float"
    return str(constraint)


def _satisfied(constraint, value) -> bool:
    if constraint is None:
        return value is None
    if constraint is numbers.Integral:
        return isinstance(value, numbers.Integral) and not isinstance(value, bool)
    if constraint is numbers.Real:
        return isinstance(value, numbers.Real) and not isinstance(value, bool)
    return constraint.is_satisfied_by(value)


@dataclass(frozen=True)
class FitContext:
    """What a cell will ask of a method, for :meth:`BaseMethod.skip` to accept or decline.

    Attributes
    ----------
    task : Task
        The task object (:mod:`mlx.tasks`); a task name given here is replaced by its object.
    n_samples, n_features, n_labels : int
        Sizes of the training data the method will be fitted on (``n_labels`` is the number
        of target columns for regression).
    observed_ratio : float
        Fraction of label entries observed (1.0: full labels).
    labelled_ratio : float
        Fraction of training rows with labels (1.0: all); the others come as unlabelled rows.
    """

    task: Task | str = "multilabel"
    n_samples: int = 0
    n_features: int = 0
    n_labels: int = 0
    observed_ratio: float = 1.0
    labelled_ratio: float = 1.0

    def __post_init__(self):
        from mlx.tasks import as_task

        object.__setattr__(self, "task", as_task(self.task))


def check_params(owner: str, constraints: Mapping[str, list], values: Mapping) -> None:
    """Raise :class:`InvalidParameterError` for the first parameter of ``constraints`` whose
    value in ``values`` satisfies none of its constraints; ``owner`` (the class name, e.g.
    ``LEML``) is named in the message."""
    for pname, options in constraints.items():
        value = values[pname]
        if any(_satisfied(c, value) for c in options):
            continue
        descr = [_describe(c) for c in options]
        expected = descr[0] if len(descr) == 1 else ", ".join(descr[:-1]) + " or " + descr[-1]
        raise InvalidParameterError(
            pname,
            f"The {pname!r} parameter of {owner} must be {expected}. Got {value!r} instead.")


def skip_reason(name: str, tasks: tuple, supports_missing_labels: bool,
                context: FitContext) -> str | None:
    """Why method ``name`` declines ``context``: a task not in ``tasks``, or missing labels
    without ``supports_missing_labels``; None to run it."""
    if context.task.name not in tasks:
        return f"{name} does not handle {context.task} tasks (it handles: {', '.join(tasks)})"
    if context.observed_ratio < 1.0 and not supports_missing_labels:
        return f"{name} does not support missing labels"
    return None


def task_name(task, tasks: tuple) -> str:
    """The task a method is set up for: its ``task`` parameter (a name or a task object)
    when that is one of ``tasks``, else the first of ``tasks``."""
    task = getattr(task, "name", task)
    return task if isinstance(task, str) and task in tasks else tasks[0]


describe = _describe
