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

Every method is a scikit-learn estimator: ``clone``, ``GridSearchCV``, ``cross_val_score`` and
``check_estimator`` work on it. It implements the estimator protocol itself (``get_params``,
``set_params``, ``__sklearn_tags__``) rather than inheriting
:class:`sklearn.base.BaseEstimator`, so that fitting a method never imports scikit-learn
(0.7 s of a bibtex run's 1.7 s: it loads scipy.stats and pandas); scikit-learn is imported when
its tags are asked for. A method implements ``_fit`` and
``_decision_function`` on label (or target) matrices, as the runner calls them; the public
``fit``, ``decision_function``, ``predict`` and ``score`` of :class:`BaseMethod` add
scikit-learn's target conventions around them: a 1-D ``y`` of class labels is a multi-class
task (one-hot columns in ``classes_`` order; a binary ``decision_function`` is 1-D), a 1-D
``y`` of values a regression or ordinal task with one target.

Threads: the public ``fit``, ``decision_function``, ``predict`` and ``score`` run as a runner
cell does (:func:`mlx.numerics.spmm.fit_threads`): BLAS on one thread, mlx's own kernels on
every core the process may use (or the budget of an enclosing
:func:`mlx.numerics.spmm.threads` block). A threaded BLAS sums in an order that depends on its
thread count, so this is what makes a fit in a user's code give the runner's numbers to the
last bit; the kernels' results do not depend on their thread count.

Missing labels: ``observed`` is a sparse ``(n_samples, n_labels)`` matrix whose
stored entries mark the observed (instance, label) pairs (the set Omega of the
LEML paper). ``Y`` then holds positives only at observed positions; every
unstored entry of ``Y`` inside Omega is an observed 0, every entry outside Omega
is unknown. ``observed=None`` means every entry is observed.
"""

from __future__ import annotations

import inspect
from typing import Any, ClassVar

import numpy as np
import scipy.sparse as sp

from mlx import errors
from mlx.methods import METHODS  # noqa: F401  (defined in the package, filled lazily)
from mlx.methods.constraints import (  # noqa: F401  (re-exported: methods import them here)
    BOOL,
    FitContext,
    Interval,
    InvalidParameterError,
    StrOptions,
    TaskOptions,
    _describe,
    _TypeConstraint,
    check_params,
    skip_reason,
    task_name,
)
from mlx.tasks import Task, get_task

__all__ = [
    "METHODS",
    "BaseMethod",
    "FitContext",
    "Interval",
    "StrOptions",
    "TaskOptions",
    "InvalidParameterError",
    "check_is_fitted",
]


# Why scikit-learn's common checks fail for every method of a task (see expected_failed_checks).
_XFAIL_MULTIOUTPUT = (
    "a 0/1 label matrix is predicted at the method's own threshold (0.5 for models fitted to "
    "0/1 targets; none for a ranking-only method) while decision_function keeps the raw "
    "scores the runner ranks, so decision > 0 need not match predict")
_XFAIL_Y_2D = ("a 2-D y is a 0/1 label matrix (one column per label): a column of class indices "
               "0..2 is refused, not read as classes")
_XFAIL_SCORE = ("score is the task's default metric with greater is better (-MSE for "
                "regression, -MAE for ordinal), not R^2, so the check's R^2 > 0.5 bar does not "
                "apply")
_XFAIL_DECISION = ("every method scores through decision_function, the runner's one scoring "
                   "entry point (values for regression and ordinal tasks)")
_XFAIL_ORDINAL_COLUMN = ("an (n, 1) column is the runner's own form of ordinal targets and is "
                         "taken as given, without scikit-learn's column-vector warning")


def _fit_threads(func):
    """Run a public entry point under :func:`mlx.numerics.spmm.fit_threads`."""
    import functools

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        from mlx.numerics.spmm import fit_threads

        with fit_threads():
            return func(*args, **kwargs)

    return wrapper


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
    reproducible : bool
        Whether two fits with the same parameters (and ``random_state``) on the same data give
        the same scores. False only for a method whose package cannot be seeded; its
        docstring says what varies.
    """

    name: ClassVar[str] = ""
    tasks: ClassVar[tuple] = ("multilabel",)
    supports_missing_labels: ClassVar[bool] = False
    uses_rank: ClassVar[bool] = False
    reproducible: ClassVar[bool] = True
    _parameter_constraints: ClassVar[dict[str, list]] = {}

    # -- parameters ---------------------------------------------------------
    @classmethod
    def _param_names(cls) -> list[str]:
        sig = inspect.signature(cls.__init__)
        return sorted(p.name for p in sig.parameters.values()
                      if p.name != "self" and p.kind is not p.VAR_KEYWORD)

    def get_params(self, deep: bool = True) -> dict[str, Any]:
        """The ``__init__`` arguments, as stored (``deep`` is scikit-learn's; no parameter
        of a method is an estimator)."""
        return {name: getattr(self, name) for name in self._param_names()}

    def set_params(self, **params):
        valid = self._param_names()
        for key, value in params.items():
            if key not in valid:
                raise InvalidParameterError(
                    key,
                    f"{type(self).__name__} has no parameter {key!r}; valid: {', '.join(valid)}")
            setattr(self, key, value)
        return self

    def _validate_params(self) -> None:
        """Check every parameter against ``_parameter_constraints``."""
        check_params(type(self).__name__, self._parameter_constraints,
                     {name: getattr(self, name) for name in self._parameter_constraints})

    # -- protocol -----------------------------------------------------------
    def skip(self, context: FitContext) -> str | None:
        """Return a reason to decline the setting described by ``context``, or None to run it.

        The base class declines a task not in ``tasks`` and missing labels without
        ``supports_missing_labels``; a method adds its own reasons by extending this.
        """
        return skip_reason(self.name, self.tasks, self.supports_missing_labels, context)

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

    def _fit(self, X, Y, *, observed=None):
        raise NotImplementedError

    def _decision_function(self, X) -> np.ndarray:
        raise NotImplementedError

    # -- scikit-learn estimator ---------------------------------------------
    def _task_name(self) -> str:
        """The task this instance is set up for: its ``task`` parameter (a name or a task
        object), else the first of ``tasks``."""
        return task_name(getattr(self, "task", None), self.tasks)

    def _task(self) -> Task:
        """The task object of :meth:`_task_name`."""
        return get_task(self._task_name())

    def _sklearn_tasks(self) -> tuple:
        """The tasks ``fit`` accepts on this instance: that of its ``task`` parameter (a
        1-D ``y`` of classes goes with ``task='multiclass'``), else every one of ``tasks``."""
        if "task" in self._param_names():
            return (self._task_name(),)
        return self.tasks

    def __sklearn_tags__(self):
        from sklearn.utils import ClassifierTags, RegressorTags, Tags, TargetTags

        tags = Tags(estimator_type=None, target_tags=TargetTags(required=False))
        tasks = [get_task(t) for t in self._sklearn_tasks()]
        tags.input_tags.sparse = True
        tags.target_tags.required = True
        if not tasks[0].real_valued:
            labels = [t for t in tasks if not t.real_valued]
            multi_label = any(t.multi_output for t in labels)
            tags.estimator_type = "classifier"
            tags.classifier_tags = ClassifierTags(multi_class=any(not t.multi_output
                                                                  for t in labels),
                                                  multi_label=multi_label,
                                                  poor_score=self._poor_score)
            tags.target_tags.multi_output = multi_label
        else:
            tags.estimator_type = "regressor"
            tags.regressor_tags = RegressorTags(poor_score=self._poor_score)
            tags.target_tags.multi_output = tasks[0].multi_output
        tags.target_tags.single_output = True
        return tags

    _poor_score: ClassVar[bool] = False   # a baseline by design (scikit-learn's poor_score)
    _expected_failed_checks: ClassVar[dict] = {}   # a method's own, check name -> reason

    def expected_failed_checks(self) -> dict[str, str]:
        """scikit-learn's ``check_estimator`` checks this instance fails by design, each with
        its reason (pass to ``check_estimator(..., expected_failed_checks=...)``).

        Shared by every method on a task, plus the method's own ``_expected_failed_checks``.
        """
        tasks = [get_task(t) for t in self._sklearn_tasks()]
        out = {}
        if not tasks[0].real_valued:
            labels = [t for t in tasks if not t.real_valued]
            if any(t.multi_output for t in labels) and self.threshold != 0.0:
                out["check_classifier_multioutput"] = _XFAIL_MULTIOUTPUT
            if any(not t.multi_output for t in labels):
                out["check_supervised_y_2d"] = _XFAIL_Y_2D
        else:
            if not self._poor_score:     # a baseline skips the score bar anyway
                out["check_regressors_train"] = _XFAIL_SCORE
            out["check_regressors_no_decision_function"] = _XFAIL_DECISION
            if tasks[0].has_levels:
                out["check_supervised_y_2d"] = _XFAIL_ORDINAL_COLUMN
        out.update(self._expected_failed_checks)
        return out

    # Complexity 16 (over 15): one branch per target shape and task.
    def _encode_targets(self, y):  # noqa: C901
        """``(Y as the method fits it, task)``: a 1-D ``y`` becomes one-hot columns in
        ``classes_`` order (multi-class), one 0/1 column (``"binary"``: two classes for a
        multi-label method) or one column of values; a 2-D ``Y`` is kept."""
        tasks = self._sklearn_tasks()
        name = type(self).__name__
        if y is None:
            raise ValueError(f"{name} requires y to be passed, but the target y is None")
        if not sp.issparse(y):
            y = np.asarray(y)
        for attr in ("classes_", "_levels_"):
            if hasattr(self, attr):
                delattr(self, attr)
        self._y_1d_ = not sp.issparse(y) and y.ndim == 1
        if not self._y_1d_:
            task = self._task()
            if not task.real_valued and y.ndim == 2:
                self.classes_ = np.arange(y.shape[1])    # label (column) indices, as sklearn's
            if task.has_levels and y.ndim == 2 and y.shape[1] == 1:
                column = y.toarray() if sp.issparse(y) else np.asarray(y)
                self._levels_ = task.levels(column[np.isfinite(column)])
            return y, task.name
        if y.shape[0] == 0:
            raise ValueError(f"{name}: empty input (y has no rows)")
        task = get_task(tasks[0])
        if task.real_valued:
            try:
                y = np.asarray(y, dtype=np.float64)
            except (TypeError, ValueError):
                raise ValueError(f"{name}: y must hold numbers for a {task.name} task; got "
                                 f"{y.dtype} values") from None
            if not np.isfinite(y).all():
                raise ValueError(f"{name}: y contains NaN or infinity")
            if task.has_levels:
                self._levels_ = task.levels(y)
            return y.reshape(-1, 1), task.name
        from sklearn.utils.multiclass import type_of_target

        kind = type_of_target(y, input_name="y")   # raises for NaN or infinity
        if kind not in ("binary", "multiclass"):
            raise ValueError(f"{name}: Unknown label type: {kind} y; a 1-D y holds one class "
                             f"label per row (real-valued targets need a regression method)")
        if "multiclass" not in tasks:
            hint = " or set task='multiclass'" if "multiclass" in self.tasks else ""
            if kind != "binary":
                raise ValueError(f"Only binary classification is supported with a 1-D y by "
                                 f"{name}{'' if not hint else f'(task={task.name!r})'}. The type "
                                 f"of the target is {kind}; give multi-label data as an "
                                 f"(n_samples, n_labels) 0/1 matrix{hint}")
            self.classes_ = np.unique(y)
            column = (y == self.classes_[-1]).astype(np.float64)[:, None]
            return sp.csr_matrix(column), "binary"
        self.classes_, codes = np.unique(y, return_inverse=True)
        codes = codes.ravel()
        one_hot = sp.csr_matrix((np.ones(y.shape[0]), (np.arange(y.shape[0]), codes)),
                                shape=(y.shape[0], self.classes_.size))
        return one_hot, "multiclass"

    def _fitted_task(self) -> str:
        check_is_fitted(self, "_fit_task_")
        return self._fit_task_

    @_fit_threads
    def fit(self, X, y, *, observed=None, unlabelled=None):
        """Fit the method.

        Parameters
        ----------
        X : sparse matrix or ndarray of shape (n_samples, n_features)
        y : sparse matrix or ndarray of shape (n_samples, n_labels), or array of shape
            (n_samples,)
            0/1 labels (multi-label), one-hot classes, or real targets; a 1-D array holds one
            class label (multi-class; two classes for a multi-label-only method) or one value
            (regression, ordinal) per row.
        observed : sparse matrix of shape (n_samples, n_labels) or None
            Missing labels: stored entries mark the observed (instance, label) pairs (see the
            module docstring). None: every entry is observed.
        unlabelled : sparse matrix or ndarray of shape (n_unlabelled, n_features) or None
            Rows without labels, for methods that use them (``uses_unlabelled``).

        Returns
        -------
        self
        """
        shape = X.shape if sp.issparse(X) else np.asarray(X).shape
        if len(shape) == 2 and shape[0] > 0 and shape[1] == 0:
            raise ValueError(f"{type(self).__name__}: X has 0 feature(s) (shape={shape}) while "
                             f"a minimum of 1 is required.")
        Y, task = self._encode_targets(y)
        if unlabelled is not None:
            if not getattr(self, "uses_unlabelled", False):
                raise TypeError(f"{type(self).__name__}.fit does not use unlabelled rows; "
                                f"pass unlabelled=None")
            self._fit(X, Y, observed=observed, unlabelled=unlabelled)
        else:
            self._fit(X, Y, observed=observed)
        self._fit_task_ = task
        if not hasattr(self, "n_features_in_"):
            self.n_features_in_ = int(shape[1])
        return self

    @_fit_threads
    def decision_function(self, X) -> np.ndarray:
        """Scores of shape (n_rows, n_labels), for any row slice of ``X``.

        Fitted on a 1-D ``y``: one column per class of ``classes_``; for two classes a 1-D
        array whose sign gives the class (the second class's score minus the first's, or,
        for a multi-label method, the label's score minus ``threshold``); for values a 1-D
        array.
        """
        scores = self._scores(X)
        if not getattr(self, "_y_1d_", False):
            return scores
        task = self._fitted_task()
        if task == "binary":
            return scores[:, 0] - (self.threshold if self.threshold is not None else 0.0)
        if not get_task(task).real_valued:                 # a 1-D y of classes
            return scores[:, 1] - scores[:, 0] if self.classes_.size == 2 else scores
        return scores[:, 0]

    def _scores(self, X) -> np.ndarray:
        """``_decision_function`` with the label frequencies an ``auto`` fit chose to add
        (``scale * scores + offset``, see :func:`mlx.methods._auto.choose_prior_weight`)."""
        scores = self._decision_function(X)
        if "prior_weight" not in (getattr(self, "auto_", None) or {}):
            return scores
        scale, offset = self.prior_offset_
        return scale * np.asarray(scores, dtype=np.float64) + offset

    @_fit_threads
    def predict(self, X):
        """Predictions: labels above the method's ``threshold`` (multi-label: a 0/1 array of
        shape (n_rows, n_labels)), the arg-max class (multi-class: entries of ``classes_``,
        class indices for a one-hot ``Y``), values (regression) or the nearest level seen
        in training (ordinal).

        Raises ValueError for a multi-label method without a threshold (its scores only
        rank labels).
        """
        scores = self._scores(X)
        name = self._fitted_task()
        if name == "binary":
            above = (scores[:, 0] > self._threshold_for_predict()).astype(np.int64)
            return self.classes_[np.minimum(above, self.classes_.size - 1)]
        task = get_task(name)
        threshold = self._threshold_for_predict() if task.needs_threshold else self.threshold
        pred = task.predict(scores, threshold=threshold, levels=self._training_levels(task))
        if not task.real_valued and not task.multi_output:      # one class per row
            return self.classes_[pred]
        return pred[:, 0] if getattr(self, "_y_1d_", False) else pred

    def _threshold_for_predict(self) -> float:
        if self.threshold is None:
            raise ValueError(f"{type(self).__name__} has no decision threshold (its scores "
                             f"only rank labels); use decision_function")
        return self.threshold

    def _training_levels(self, task: Task) -> np.ndarray | None:
        """The training levels predictions of ``task`` are rounded to (None: no rounding)."""
        if not task.has_levels:
            return None
        levels = getattr(self, "_levels_", None)
        if levels is None:
            raise ValueError(f"{type(self).__name__}: {task.name} predictions need the training "
                             f"levels; fit on a 1-D y of levels")
        return levels

    @_fit_threads
    def score(self, X, y, sample_weight=None) -> float:
        """The task's first default metric on ``(X, y)``, greater is better: P@1
        (multi-label), accuracy = 1 - error (multi-class, and two classes of a multi-label
        method), -MSE (regression), -MAE (ordinal).
        """
        from mlx.metrics import evaluate, parse_metric

        if sample_weight is not None:
            raise ValueError(f"{type(self).__name__}.score does not take sample weights")
        name = self._fitted_task()
        if name == "binary":
            return float(np.mean(self.predict(X) == np.asarray(y)))
        task = get_task(name)
        metric = task.default_metrics()[0]
        Y = y
        if getattr(self, "_y_1d_", False):
            y = np.asarray(y)
            if not task.real_valued:                       # a 1-D y of classes
                pos = np.searchsorted(self.classes_, y)
                inside = np.minimum(pos, self.classes_.size - 1)
                known = self.classes_[inside] == y     # an unseen class counts as an error
                Y = sp.csr_matrix((known.astype(np.float64), (np.arange(y.shape[0]), inside)),
                                  shape=(y.shape[0], self.classes_.size))
                Y.eliminate_zeros()
            else:
                Y = np.asarray(y, dtype=np.float64).reshape(-1, 1)
        score_fn = self._scores
        levels = self._training_levels(task)
        if levels is not None:
            score_fn = task.predictor(score_fn, levels[:, None])
        value = evaluate(score_fn, X, Y, [metric], threshold=self.threshold or 0.0)[metric][0]
        if metric == "error":
            return 1.0 - value
        return value if parse_metric(metric).higher_is_better else -value

    def __repr__(self) -> str:
        args = ", ".join(f"{k}={v!r}" for k, v in self.get_params().items())
        return f"{type(self).__name__}({args})"



_RANKING_ONLY_CHECKS = (
    "check_fit_score_takes_y",
    "check_estimators_dtypes",
    "check_dtype_object",
    "check_pipeline_consistency",
    "check_estimator_sparse_array",
    "check_estimator_sparse_matrix",
    "check_estimators_pickle",
    "check_f_contiguous_array_estimator",
    "check_classifier_data_not_an_array",
    "check_classifiers_one_label",
    "check_classifiers_classes",
    "check_classifiers_train",
    "check_classifiers_multilabel_representation_invariance",
    "check_classifiers_multilabel_output_format_predict",
    "check_supervised_y_2d",
    "check_methods_sample_order_invariance",
    "check_methods_subset_invariance",
    "check_dict_unchanged",
    "check_fit_idempotent",
)
"""scikit-learn checks that call ``predict``: they fail for a method that only ranks labels."""


def ranking_only_failed_checks(reason: str) -> dict:
    """``_expected_failed_checks`` of a method without a decision threshold, each with
    ``reason``."""
    return dict.fromkeys(_RANKING_ONLY_CHECKS, reason)


def check_is_fitted(method: BaseMethod, attribute: str) -> None:
    """Raise :class:`~mlx.errors.NotFittedError` unless ``attribute`` is set."""
    if getattr(method, attribute, None) is None:
        raise errors.NotFittedError(
            f"This {type(method).__name__} instance is not fitted yet. Call 'fit' first.")

