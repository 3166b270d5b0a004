"""Method protocol, parameter constraints and the method registry.

Every method is one class in one module of :mod:`mlx.methods`, registered with
``@METHODS.register("name")``. Conventions (after scikit-learn):

* ``__init__`` takes keyword-only hyper-parameters and stores them unchanged;
* ``fit(X, Y, *, observed=None)`` validates the parameters, builds its random
  generator from ``random_state`` and sets fitted attributes ending in ``_``;
* ``decision_function(X)`` scores any row slice, returning a dense
  ``(n_rows, n_labels)`` float64 array, so the runner can evaluate in batches;
* an optional fitted ``message_`` (str) is a note about the fit that the runner puts in the
  cell's message (e.g. classes with no labelled example).

Missing labels: ``observed`` is a sparse ``(n_samples, n_labels)`` matrix whose
stored entries mark the observed (instance, label) pairs (the set Omega of the
LEML paper). ``Y`` then holds positives only at observed positions; every
unstored entry of ``Y`` inside Omega is an observed 0, every entry outside Omega
is unknown. ``observed=None`` means every entry is observed.
"""

from __future__ import annotations

import inspect
import numbers
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np
import scipy.sparse as sp

from mlx.errors import NotFittedError
from mlx.registry import Registry

__all__ = [
    "METHODS",
    "BaseMethod",
    "FitContext",
    "Interval",
    "StrOptions",
    "InvalidParameterError",
    "check_is_fitted",
]


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
        if isinstance(value, float) and not np.isfinite(value):
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
    task : str
        ``"multilabel"``, ``"multiclass"``, ``"regression"`` or ``"ordinal"``.
    n_samples, n_features, n_labels : int
        Sizes of the training data the method will be fitted on (``n_labels`` is the number
        of target columns for regression).
    observed_ratio : float
        Fraction of label entries observed (1.0: full labels).
    labelled_ratio : float
        Fraction of training rows with labels (1.0: all); the others come as unlabelled rows.
    """

    task: str = "multilabel"
    n_samples: int = 0
    n_features: int = 0
    n_labels: int = 0
    observed_ratio: float = 1.0
    labelled_ratio: float = 1.0


class BaseMethod:
    """Base class of all methods: parameters, validation, skipping, thresholds.

    Class attributes
    ----------------
    name : str
        Registry key.
    tasks : tuple of str
        The tasks the method handles (see :mod:`mlx.tasks`); a cell of another task is
        skipped with the reason.
    supports_missing_labels : bool
        Whether ``fit`` accepts a partially observed label matrix.
    uses_rank : bool
        Whether the method consumes ``rank`` (k) from the sweep's ``rank_ratio`` or ``rank``.
    """

    name: ClassVar[str] = ""
    tasks: ClassVar[tuple] = ("multilabel",)
    supports_missing_labels: ClassVar[bool] = False
    uses_rank: ClassVar[bool] = False
    _parameter_constraints: ClassVar[dict[str, list]] = {}

    # -- parameters ---------------------------------------------------------
    @classmethod
    def _param_names(cls) -> list[str]:
        sig = inspect.signature(cls.__init__)
        return sorted(p.name for p in sig.parameters.values()
                      if p.name != "self" and p.kind is not p.VAR_KEYWORD)

    def get_params(self) -> dict[str, Any]:
        """The ``__init__`` arguments, as stored."""
        return {name: getattr(self, name) for name in self._param_names()}

    def set_params(self, **params):
        valid = self._param_names()
        for key, value in params.items():
            if key not in valid:
                raise InvalidParameterError(
                    key, f"{type(self).__name__} has no parameter {key!r}; valid: {', '.join(valid)}")
            setattr(self, key, value)
        return self

    def _validate_params(self) -> None:
        """Check every parameter against ``_parameter_constraints``."""
        for pname, constraints in self._parameter_constraints.items():
            value = getattr(self, pname)
            if any(_satisfied(c, value) for c in constraints):
                continue
            descr = [_describe(c) for c in constraints]
            expected = descr[0] if len(descr) == 1 else ", ".join(descr[:-1]) + " or " + descr[-1]
            raise InvalidParameterError(
                pname,
                f"The {pname!r} parameter of {type(self).__name__} must be {expected}. "
                f"Got {value!r} instead.")

    # -- protocol -----------------------------------------------------------
    def skip(self, context: FitContext) -> str | None:
        """Return a reason to decline the setting described by ``context``, or None to run it.

        The base class declines a task not in ``tasks`` and missing labels without
        ``supports_missing_labels``; a method adds its own reasons by extending this.
        """
        if context.task not in self.tasks:
            return (f"{self.name} does not handle {context.task} tasks "
                    f"(it handles: {', '.join(self.tasks)})")
        if context.observed_ratio < 1.0 and not self.supports_missing_labels:
            return f"{self.name} does not support missing labels"
        return None

    def check_context(self, context: FitContext) -> None:
        """Raise :class:`InvalidParameterError` when the parameters conflict with ``context``.

        For settings that can never run in that context (e.g. LEML's exact
        eigendecomposition W-step with missing labels): the runner calls it before any cell
        runs, so the conflict is a config error at ``mlx validate`` time, not an error in
        every cell. The default accepts every context.
        """

    @property
    def threshold(self) -> float | None:
        """Score above which a label is predicted (used by Hamming loss and F1).

        None for a method whose scores only rank labels: thresholded metrics are then left
        blank unless the config sets ``methods[].threshold``.

        0.5 for models fitted to {0, 1} targets, 0 for models fitted to +-1 targets.
        """
        return 0.0

    def fit(self, X: sp.csr_matrix, Y: sp.csr_matrix, *, observed: sp.csr_matrix | None = None):
        raise NotImplementedError

    def decision_function(self, X: sp.csr_matrix) -> np.ndarray:
        raise NotImplementedError

    def __repr__(self) -> str:
        args = ", ".join(f"{k}={v!r}" for k, v in self.get_params().items())
        return f"{type(self).__name__}({args})"


def check_is_fitted(method: BaseMethod, attribute: str) -> None:
    """Raise :class:`~mlx.errors.NotFittedError` unless ``attribute`` is set."""
    if getattr(method, attribute, None) is None:
        raise NotFittedError(
            f"This {type(method).__name__} instance is not fitted yet. Call 'fit' first.")


METHODS: Registry[type[BaseMethod]] = Registry("method")
