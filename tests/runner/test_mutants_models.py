"""Saved models (``--save-models``, :func:`mlx.load_model`): properties the older tests left open
(found by mutation testing): where a cell's model lives, what the error of a missing one
suggests, and predicting with a method that has no decision threshold."""

from pathlib import Path

import numpy as np
import pytest

from mlx.errors import MlxError
from mlx.runner.models import FittedCell, load_model, model_path


def test_a_cells_model_is_models_slash_cell_id_dot_joblib():
    assert model_path("out", "abc123") == Path("out") / "models" / "abc123.joblib"


@pytest.mark.parametrize("saved, hint", [
    ([], "run with --save-models to keep fitted models"),
    (["b", "a"], "saved cells: a, b"),
    ([f"c{i:02d}" for i in range(10)], "saved cells: " + ", ".join(f"c{i:02d}" for i in range(10))),
    ([f"c{i:02d}" for i in range(11)],
     "saved cells: " + ", ".join(f"c{i:02d}" for i in range(10)) + " ..."),
    (None, "run with --save-models to keep fitted models"),        # no models folder at all
])
def test_a_missing_model_names_the_saved_cells_or_the_option(tmp_path, saved, hint):
    if saved is not None:
        (tmp_path / "models").mkdir()
        for name in saved:
            (tmp_path / "models" / f"{name}.joblib").write_bytes(b"")
        (tmp_path / "models" / "notes.txt").write_text("not a model")
    with pytest.raises(MlxError) as info:
        load_model(tmp_path, "nope")
    assert str(info.value) == (f"{tmp_path / 'models' / 'nope.joblib'}: no saved model for "
                               f"cell 'nope'; {hint}")


class _Identity:
    def transform(self, X):
        return X


class _Ranker:
    threshold = None

    def decision_function(self, X):
        return np.asarray(X, dtype=float)


def test_predicting_labels_without_a_threshold_says_to_use_the_scores():
    cell = FittedCell(cell_id="c1", description="wsabie on toy", task="multilabel",
                      preprocessor=_Identity(), estimator=_Ranker())
    X = np.array([[0.2, 0.9], [0.7, 0.1]])
    assert np.array_equal(cell.decision_function(X), X)
    with pytest.raises(MlxError) as info:
        cell.predict(X)
    assert str(info.value) == ("wsabie on toy: the method has no decision threshold (its scores "
                               "only rank labels); use decision_function")
    regression = FittedCell(cell_id="c2", description="r", task="regression",
                            preprocessor=_Identity(), estimator=_Ranker())
    assert np.array_equal(regression.predict(X), X)                 # values need no threshold
