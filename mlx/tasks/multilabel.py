"""Multi-label: a set of labels per row."""

from __future__ import annotations

from mlx.errors import DataFormatError
from mlx.lazy import lazy_module
from mlx.tasks.base import LabelTask, register_task

np = lazy_module("numpy")

__all__ = ["MultiLabel"]


@register_task
class MultiLabel(LabelTask):
    """A 0/1 label matrix; predictions are the labels scored above the method's threshold.

    The only task with entry-wise observed-label masks (missing labels)."""

    name = "multilabel"
    description = "a set of labels per row (0/1 label matrix)"
    entry_masks = True
    needs_threshold = True
    default_metric_names = ("p@1", "p@3", "p@5", "hamming", "auc")

    def _check_targets(self, Y, where):
        bad = Y.data != 1.0
        if bad.any():
            row = int(np.searchsorted(Y.indptr, np.flatnonzero(bad)[0], side="right") - 1)
            value = Y.data[np.flatnonzero(bad)[0]]
            raise DataFormatError(
                where, None, f"row {row + 1}: target value {value:g} is not a 0/1 label; a "
                f"multi-label task needs label sets (is this a regression target? set the "
                f"dataset's task to regression or ordinal)")

    def predict(self, scores, *, threshold=None, levels=None):
        """0/1 of shape (n_rows, n_labels): the labels scored above ``threshold``."""
        return (scores > threshold).astype(np.int64)
