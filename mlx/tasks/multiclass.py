"""Multi-class: exactly one class per row."""

from __future__ import annotations

from mlx.errors import DataFormatError
from mlx.lazy import lazy_module
from mlx.tasks.base import LabelTask, first_row, register_task

np = lazy_module("numpy")
sp = lazy_module("scipy.sparse")

__all__ = ["MultiClass"]


@register_task
class MultiClass(LabelTask):
    """A one-hot label matrix; predictions are the arg-max of the scores (the ``error``
    metric takes it), and splits may be stratified by class."""

    name = "multiclass"
    description = "exactly one class per row (one-hot label matrix)"
    stratified = True
    multi_output = False
    default_metric_names = ("error",)

    def _check_targets(self, Y, where):
        per_row = np.diff(Y.indptr)
        if (per_row != 1).any():
            row = first_row(per_row != 1)
            raise DataFormatError(where, None, f"row {row + 1}: has {per_row[row]} labels; a "
                                  f"multi-class task needs exactly one class per row")

    def classes(self, Y) -> np.ndarray:
        """Each row's class index (-1 for a row without one)."""
        Y = sp.csr_matrix(Y)
        out = np.full(Y.shape[0], -1, dtype=np.int64)
        rows = np.repeat(np.arange(Y.shape[0]), np.diff(Y.indptr))
        out[rows] = Y.indices
        return out

    def predict(self, scores, *, threshold=None, levels=None):
        """The class index of the highest score in each row."""
        return np.argmax(scores, axis=1)

    def class_indices(self, owner: str, positives: sp.csr_matrix, observed) -> np.ndarray:
        """Each row's class index from a checked 0/1 matrix, for a method that fits class
        indices; ValueError (starting with ``owner``) for a mask or a row without exactly one
        class."""
        if observed is not None:
            raise ValueError(f"{owner}: a {self.name} task has no missing-label mask; pass "
                             f"observed=None")
        per_row = np.diff(positives.indptr)
        if (per_row != 1).any():
            row = first_row(per_row != 1)
            raise ValueError(f"{owner}: a multiclass task needs exactly one class per row; "
                             f"row {row} has {per_row[row]}")
        return positives.indices.astype(np.int64)
