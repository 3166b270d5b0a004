"""Ordinal regression: one integer level per row; predictions are levels."""

from __future__ import annotations

from mlx.errors import DataFormatError
from mlx.lazy import lazy_module
from mlx.tasks.base import ValueTask, first_row, register_task

np = lazy_module("numpy")
sp = lazy_module("scipy.sparse")

__all__ = ["Ordinal", "nearest_level"]


def nearest_level(scores: np.ndarray, levels: np.ndarray) -> np.ndarray:
    """Each score rounded to the nearest of the sorted ``levels`` (ties to the lower one), so
    that every prediction is a valid level."""
    s = np.asarray(scores, dtype=np.float64)
    pos = np.clip(np.searchsorted(levels, s, side="left"), 1, levels.size - 1)
    lo, hi = levels[pos - 1], levels[pos]
    return np.where(s - lo <= hi - s, lo, hi)


@register_task
class Ordinal(ValueTask):
    """One column of integer levels (at least two); predictions are the scores rounded to the
    nearest level seen in training (:func:`nearest_level`), and splits may be stratified by
    level."""

    name = "ordinal"
    description = "one integer level per row; predictions are levels"
    stratified = True
    multi_output = False
    has_levels = True
    default_metric_names = ("mae",)

    def _check_targets(self, Y, where):
        n, T = Y.shape
        if T != 1:
            raise DataFormatError(where, None, f"an ordinal task needs one target column; "
                                  f"got {T}")
        y = Y.toarray().ravel()
        frac = y != np.round(y)
        if frac.any():
            row = first_row(frac)
            raise DataFormatError(where, None, f"row {row + 1}: ordinal level {y[row]:g} is not "
                                  f"an integer; ordinal targets are integer levels (set "
                                  f"the dataset's 'bins' to cut a real target into "
                                  f"levels, or use task regression)")
        if n and np.unique(y).size < 2:
            raise DataFormatError(where, None, f"every row has level {y[0]:g}; an ordinal task "
                                  f"needs at least two levels")

    def classes(self, Y) -> np.ndarray:
        """Each row's level."""
        return sp.csr_matrix(Y).toarray().ravel()

    def levels(self, Y_train) -> np.ndarray:
        """The sorted distinct training levels."""
        return np.unique(sp.csr_matrix(Y_train).toarray().ravel())

    def predictor(self, score_fn, Y_train):
        """``X -> levels``: each score rounded to the nearest level observed in ``Y_train``
        (ties to the lower level)."""
        levels = self.levels(Y_train)

        def predict(X):
            return nearest_level(score_fn(X), levels)

        return predict

    def predict(self, scores, *, threshold=None, levels=None):
        """The scores rounded to the nearest of the training ``levels``."""
        return nearest_level(scores, levels)

    def column_levels(self, owner: str, T: np.ndarray) -> list:
        """The sorted levels of each target column of ``T``; ValueError (starting with
        ``owner``) for a column with a single level."""
        levels = [np.unique(T[:, j]) for j in range(T.shape[1])]
        for j, lv in enumerate(levels):
            if lv.size < 2:
                raise ValueError(f"{owner}: ordinal target column {j} has a single level "
                                 f"({lv[0]:g}); ordinal regression needs at least two")
        return levels

    def constant(self, T: np.ndarray) -> np.ndarray:
        """The constant level per column of least absolute error: the lower median."""
        return np.quantile(T, 0.5, axis=0, method="lower")
