"""Fitted models kept by ``mlx run --save-models``, and :func:`load_model` to use one.

Each finished cell of such a run leaves ``<results>/models/<cell_id>.joblib``: a
:class:`FittedCell` holding the fitted preprocessing and the fitted estimator (the same
scikit-learn estimator class the runner fits). ``mlx.load_model(RESULTS, cell_id)`` returns it;
its ``decision_function`` and ``predict`` take raw features, as the dataset's files hold them.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from mlx.errors import MlxError

__all__ = ["FittedCell", "load_model", "model_path"]


@dataclass
class FittedCell:
    """A fitted cell: ``preprocessor`` (mlx.preprocess.Preprocessor) then ``estimator``."""

    cell_id: str
    description: str
    task: str
    preprocessor: Any
    estimator: Any
    levels: np.ndarray | None = None    # ordinal: the training levels predictions snap to

    def transform(self, X):
        """Apply the cell's preprocessing (fitted on its training rows) to raw features."""
        return self.preprocessor.transform(X)

    def decision_function(self, X) -> np.ndarray:
        """The runner's scores, shape (n_rows, n_labels), of raw features ``X``."""
        return self.estimator.decision_function(self.transform(X))

    def predict(self, X) -> np.ndarray:
        """Predictions as the runner's metrics see them: labels above the threshold
        (multi-label, 0/1), the arg-max class index (multi-class), values, or levels."""
        from mlx.tasks import get_task

        task = get_task(self.task)
        scores = self.decision_function(X)
        t = self.estimator.threshold
        if task.needs_threshold and t is None:
            raise MlxError(f"{self.description}: the method has no decision threshold (its "
                           f"scores only rank labels); use decision_function")
        return task.predict(scores, threshold=t, levels=self.levels)


def model_path(results: str | os.PathLike, cell_id: str) -> Path:
    return Path(results) / "models" / f"{cell_id}.joblib"


def load_model(results: str | os.PathLike, cell_id: str) -> FittedCell:
    """The fitted model of cell ``cell_id`` of the run in ``results`` (``--save-models``).

    Only load files you trust: joblib files are pickles.
    """
    import joblib

    path = model_path(results, cell_id)
    if not path.is_file():
        saved = sorted(p.stem for p in path.parent.glob("*.joblib")) if path.parent.is_dir() \
            else []
        hint = (f"saved cells: {', '.join(saved[:10])}{' ...' if len(saved) > 10 else ''}"
                if saved else "run with --save-models to keep fitted models")
        raise MlxError(f"{path}: no saved model for cell {cell_id!r}; {hint}")
    return joblib.load(path)
