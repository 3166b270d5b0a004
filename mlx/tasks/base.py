"""The task protocol: :class:`Task`, its two families of targets, and the task registry.

A task is one object (a singleton registered in :data:`TASKS` under its ``name``) that owns
what follows from the kind of targets a dataset has: which targets are valid, the default
metrics, how scores become predictions (and the rounding to levels), stratification, and the
targets a method's ``fit`` receives. The runner and the methods ask the task object; none of
them switches on a task's name. A new task is one module of :mod:`mlx.tasks` whose class
derives from :class:`LabelTask` or :class:`ValueTask` and is decorated with
:func:`register_task` (the package imports every module in it).
"""

from __future__ import annotations

from typing import ClassVar

from mlx.errors import DataFormatError
from mlx.lazy import lazy_module
from mlx.registry import Registry

np = lazy_module("numpy")
sp = lazy_module("scipy.sparse")

__all__ = ["TASKS", "LabelTask", "Task", "ValueTask", "as_task", "get_task", "register_task",
           "task_names"]

TASKS: Registry = Registry("task")


def register_task(cls):
    """Class decorator: register the one instance of the task class ``cls`` under its name."""
    TASKS.register(cls.name)(cls())
    return cls


def get_task(name: str, *, source=None, key_path=None) -> Task:
    """The registered task ``name`` (an UnknownNameError lists the valid ones)."""
    return TASKS.get(name, source=source, key_path=key_path)


def task_names() -> list[str]:
    return TASKS.names()


def as_task(task) -> Task:
    """``task`` itself when it is a :class:`Task`, else the registered task of that name."""
    return task if isinstance(task, Task) else get_task(task)


def first_row(mask_rows: np.ndarray) -> int:
    """The index of the first True entry."""
    return int(np.flatnonzero(mask_rows)[0])


class Task:
    """One task type; subclasses set the class attributes and override the hooks.

    Class attributes
    ----------------
    name : str
        Registry key, the dataset's ``task``.
    description : str
    targets : str
        ``"labels"`` (a label set or class per row, a 0/1 matrix) or ``"values"`` (real
        numbers, one column per target).
    stratified : bool
        Whether splits may be stratified by class or level (:meth:`classes`).
    entry_masks : bool
        Whether the entry-wise observed-label mask (``sweep.observed_ratio``) applies.
    scaled_targets : bool
        Whether ``target: minmax`` may scale the targets.
    multi_output : bool
        Whether a row has several target columns (label sets, several real targets) rather
        than one class or one level.
    has_levels : bool
        Whether predictions are rounded to the training levels (:meth:`levels`).
    default_metric_names : tuple of str
        The metrics reported when a config lists none.
    """

    name: ClassVar[str] = ""
    description: ClassVar[str] = ""
    targets: ClassVar[str] = "labels"
    stratified: ClassVar[bool] = False
    entry_masks: ClassVar[bool] = False
    scaled_targets: ClassVar[bool] = False
    multi_output: ClassVar[bool] = True
    has_levels: ClassVar[bool] = False
    default_metric_names: ClassVar[tuple] = ()

    # One instance per class: copies (scikit-learn's clone deep-copies parameters) and
    # pickles (saved models, worker processes) give back the registered object.
    def __copy__(self):
        return self

    def __deepcopy__(self, memo):
        return self

    def __reduce__(self):
        return get_task, (self.name,)

    def __str__(self) -> str:
        return self.name

    def __repr__(self) -> str:
        return f"get_task({self.name!r})"

    @property
    def phrase(self) -> str:
        """``"a multilabel task"``, ``"an ordinal task"``: for messages."""
        return f"{'an' if self.name[0] in 'aeiou' else 'a'} {self.name} task"

    @property
    def real_valued(self) -> bool:
        """Whether the targets are real values (a method fits them by regression)."""
        return self.targets == "values"

    # -- targets of a dataset -------------------------------------------------
    def check_targets(self, Y, *, where: str) -> None:
        """Raise :class:`~mlx.errors.DataFormatError` naming ``where`` (a file or a dataset)
        and the first offending row when ``Y`` does not hold valid targets for this task."""
        Y = sp.csr_matrix(Y)
        if Y.data.size and not np.isfinite(Y.data).all():
            row = int(np.searchsorted(Y.indptr, np.flatnonzero(~np.isfinite(Y.data))[0],
                                      side="right") - 1)
            raise DataFormatError(where, None, f"row {row + 1}: target is NaN or infinite; "
                                  f"remove or impute it")
        self._check_targets(Y, where)

    def _check_targets(self, Y: sp.csr_matrix, where: str) -> None:
        """The task's own checks of finite targets (none by default)."""

    def classes(self, Y) -> np.ndarray | None:
        """Per-row class or level for stratification; None for a task without them."""
        return None

    # -- metrics --------------------------------------------------------------
    def metric_valid(self, metric: str) -> bool:
        from mlx.metrics import parse_metric

        return self.name in parse_metric(metric).family.tasks

    def check_metric(self, metric: str, *, source=None, key_path=None) -> None:
        """A config error naming the metric and the task when they do not go together."""
        from mlx.errors import ConfigError

        if not self.metric_valid(metric):
            valid = ", ".join(self.valid_metrics())
            raise ConfigError(source, key_path,
                              f"metric {metric!r} is not defined for {self.phrase}; "
                              f"valid: {valid}")

    def valid_metrics(self) -> list[str]:
        from mlx.metrics import METRICS

        return [form for form in METRICS.names() if self.name in METRICS.get(form).tasks]

    def default_metrics(self) -> list[str]:
        """The metrics reported when a config lists none (a new list each call)."""
        return list(self.default_metric_names)

    # -- predictions ----------------------------------------------------------
    def levels(self, Y_train) -> np.ndarray | None:
        """The values predictions are rounded to, from the training targets (None: none)."""
        return None

    def predictor(self, score_fn, Y_train):
        """``X -> predictions`` for the metrics: the scores, unless the task rounds them
        (:meth:`levels`)."""
        return score_fn

    def predict(self, scores: np.ndarray, *, threshold: float | None = None,
                levels: np.ndarray | None = None) -> np.ndarray:
        """A user's predictions from scores of shape (n_rows, n_outputs) (see the subclasses);
        ``threshold`` and ``levels`` are the fitted model's, for the tasks that use them."""
        return scores

    needs_threshold: ClassVar[bool] = False
    """Whether :meth:`predict` needs the method's decision threshold."""

    # -- a method's training targets -------------------------------------------
    def refuse_mask(self, owner: str, observed, shape) -> None:
        """Raise ValueError unless ``observed`` is None or stores every entry of ``shape``: a
        task without entry masks has no missing labels."""
        if observed is None:
            return
        if observed.shape != tuple(shape):
            raise ValueError(f"{owner}: observed has shape {observed.shape} but Y has shape "
                             f"{tuple(shape)}")
        stored = sp.csr_matrix(observed)
        stored.sum_duplicates()
        if stored.nnz != shape[0] * shape[1]:
            raise ValueError(f"{owner}: a {self.name} task has no missing-label mask; pass "
                             f"observed=None")

    def validation_score(self, score_fn, X, Y) -> float:
        """Score of a fitted model's ``score_fn`` on held-out rows ``(X, Y)``, higher is
        better: what an ``auto`` hyper-parameter is chosen by (mlx.methods._auto)."""
        raise NotImplementedError


class LabelTask(Task):
    """Targets are labels: a 0/1 matrix, one column per label or class."""

    targets: ClassVar[str] = "labels"

    def validation_score(self, score_fn, X, Y) -> float:
        """The mean of P@1 and AUC (the finite ones; NaN when neither is)."""
        from mlx.metrics import evaluate

        # batches of at most 2^21 scores (16 MB): the hold-out split is part of a fit, whose
        # memory stays far below a dense n x L matrix
        batch = max(1, (1 << 21) // max(1, Y.shape[1]))
        res = evaluate(score_fn, X, Y, ["p@1", "auc"], batch_size=batch,
                       auc_degenerate="skip")
        values = [v for v, _ in res.values() if v is not None and np.isfinite(v)]
        return float(np.mean(values)) if values else float("nan")


class ValueTask(Task):
    """Targets are real values, one column per target."""

    targets: ClassVar[str] = "values"

    def fit_targets(self, owner: str, X, Y, observed=None):
        """``(X, T)`` for a method's ``fit``: ``X`` as checked float64 CSR, the targets as a
        dense float64 array of shape (n_samples, n_targets).

        Raises ValueError (the message starts with ``owner``) for mismatched shapes, a mask
        that leaves entries unobserved (one that stores every entry is accepted as None),
        empty input or non-finite targets.
        """
        from mlx.methods._validation import as_float_csr

        X = as_float_csr(X, "X", owner)
        T = Y.toarray() if sp.issparse(Y) else np.asarray(Y)
        if T.ndim != 2 or T.shape[0] != X.shape[0]:
            raise ValueError(f"{owner}: X has shape {X.shape} but Y has shape {T.shape}; Y "
                             f"must be (n_samples, n_targets)")
        self.refuse_mask(owner, observed, T.shape)
        if 0 in X.shape or T.shape[1] == 0:
            raise ValueError(f"{owner}: empty input (X {X.shape}, Y {T.shape})")
        T = T.astype(np.float64)
        if not np.isfinite(T).all():
            raise ValueError(f"{owner}: Y contains NaN or infinity")
        return X, T

    def constant(self, T: np.ndarray) -> np.ndarray:
        """The constant prediction per target column of least squared error: the mean."""
        return T.mean(axis=0)

    def validation_score(self, score_fn, X, Y) -> float:
        """Minus the mean squared error."""
        T = Y.toarray() if sp.issparse(Y) else np.asarray(Y, dtype=np.float64)
        P = np.asarray(score_fn(X), dtype=np.float64).reshape(T.shape)
        return -float(np.mean((P - T) ** 2))
