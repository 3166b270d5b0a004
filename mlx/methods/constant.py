"""The trivial baseline: one constant prediction learned from the training targets."""

from __future__ import annotations

import numpy as np

from mlx.methods._validation import check_fit_data, check_n_features
from mlx.methods.base import METHODS, BaseMethod, check_is_fitted
from mlx.methods.table import TABLES
from mlx.metrics.names import TASK_NAMES

__all__ = ["Constant"]

_TASKS = TASK_NAMES    # every task: label frequencies, or the task's constant value


@METHODS.register("constant")
class Constant(BaseMethod):
    """Predict the same thing for every row, whatever its features.

    * multi-label: each label scores its training frequency (positives over observed
      entries under a mask), so the ranking is by frequency; nothing is predicted positive
      (the threshold is 1, and a frequency never exceeds it), so Hamming loss equals the
      test label density;
    * multi-class: each class scores its training frequency; the arg-max is the majority
      class (the lower index among ties);
    * regression: each target scores its training mean;
    * ordinal: the median training level (the lower median for an even count), a level;
    * any task with real-valued targets: its constant
      (:meth:`mlx.tasks.ValueTask.constant`), as the two above.

    Any method that does worse than this on a metric has learned nothing useful for it.

    Parameters
    ----------
    task : {"multilabel", "multiclass", "regression", "ordinal"} or task, default="multilabel"
        Set by the runner from the dataset. The runner passes the task object
        (:mod:`mlx.tasks`); a name works too.
    """

    tasks = _TASKS
    _poor_score = True     # a baseline: it ignores X
    supports_missing_labels = True
    _parameter_constraints = TABLES["constant"].constraints

    def __init__(self, *, task: str = "multilabel"):
        self.task = task

    @property
    def threshold(self) -> float:
        return 1.0

    def _fit(self, X, Y, *, observed=None):
        """Learn the constant from ``Y`` (``X`` only fixes the number of features)."""
        self._validate_params()
        task = self._task()
        if task.real_valued:
            X, T = task.fit_targets("Constant", X, Y, observed)
            value = task.constant(T)
            self.n_features_in_ = X.shape[1]
        else:
            data = check_fit_data("Constant", X, Y, observed)
            positives = np.asarray(data.positives.sum(axis=0)).ravel()
            if data.observed is None:
                seen = np.full(positives.shape, float(data.n_samples))
            else:
                seen = np.asarray(data.observed.sum(axis=0)).ravel()
            value = np.divide(positives, seen, out=np.zeros_like(positives), where=seen > 0)
            self.n_features_in_ = data.n_features
        self.scores_ = np.asarray(value, dtype=np.float64)
        return self

    def _decision_function(self, X) -> np.ndarray:
        check_is_fitted(self, "scores_")
        X = check_n_features("Constant", X, self.n_features_in_)
        return np.tile(self.scores_, (X.shape[0], 1))
