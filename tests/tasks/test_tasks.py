"""Tasks as objects: the registry of task modules, the one rounding to levels, the targets a
method fits, and the methods and saved models that ask the task instead of its name."""

from __future__ import annotations

import copy
import pickle
import pkgutil
import textwrap

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp
from click.testing import CliRunner
from sklearn.base import clone

import mlx
import mlx.tasks
from mlx.cli import cli
from mlx.methods import BR, LSVV, Constant, Landmark
from mlx.methods.base import FitContext, InvalidParameterError
from mlx.tasks import get_task, task_names
from mlx.tasks.ordinal import nearest_level

# (method, parameters) for every task each task-aware method handles: fast settings
VALUE_METHODS = {
    "BR": lambda task: BR(loss="squared", l2_reg=1.0, task=task),
    "Constant": lambda task: Constant(task=task),
    "LSVV": lambda task: LSVV(epochs=2, min_steps=0, tau_A=1e-3, random_state=0, task=task),
    "Landmark": lambda task: Landmark(n_landmarks=5, C=1.0, random_state=0, task=task,
                                      **({"model": "orland"} if str(task) == "ordinal" else {})),
}
VALUE_CASES = [(owner, task) for owner in VALUE_METHODS for task in ("regression", "ordinal")
               if task in {"BR": BR, "Constant": Constant, "LSVV": LSVV,
                           "Landmark": Landmark}[owner].tasks]


def _values(task, n=20, seed=0):
    rng = np.random.default_rng(seed)
    X = sp.csr_matrix(rng.standard_normal((n, 4)))
    if task == "ordinal":
        return X, (np.arange(n) % 3 + 1.0)[:, None]
    return X, rng.standard_normal((n, 2))


def _labels(task, n=20, seed=0):
    rng = np.random.default_rng(seed)
    X = sp.csr_matrix(rng.standard_normal((n, 4)))
    if task == "multiclass":
        c = np.arange(n) % 3
        return X, sp.csr_matrix((np.ones(n), (np.arange(n), c)), shape=(n, 3))
    return X, sp.csr_matrix((rng.random((n, 5)) < 0.4).astype(float))


# ----------------------------------------------------------------------------- the registry
def test_each_module_of_the_package_registers_the_task_of_its_name():
    from mlx.metrics import TASK_NAMES

    modules = {m.name for m in pkgutil.iter_modules(mlx.tasks.__path__)} - {"base"}
    assert modules == set(task_names()) == set(TASK_NAMES)
    for name in task_names():
        task = get_task(name)
        assert task.name == name and type(task).__module__ == f"mlx.tasks.{name}"
        assert task.default_metrics() and all(task.metric_valid(m)
                                              for m in task.default_metrics())


def test_a_task_stays_the_registered_object_through_copies_pickles_and_clone():
    task = get_task("ordinal")
    assert copy.copy(task) is task and copy.deepcopy(task) is task
    assert pickle.loads(pickle.dumps(task)) is task
    assert clone(BR(task=task)).task is task
    assert str(task) == "ordinal" and repr(task) == "get_task('ordinal')"


def test_fit_context_holds_the_task_object():
    assert FitContext(task="ordinal").task is get_task("ordinal")
    assert FitContext().task is get_task("multilabel")
    assert FitContext(task=get_task("regression")).task is get_task("regression")


# ----------------------------------------------------------------------------- rounding
def _nearest_slow(s, levels):
    out = []
    for v in s:
        dist = [abs(v - lv) for lv in levels]
        out.append(levels[dist.index(min(dist))])          # first minimum: the lower level
    return np.array(out)


def test_nearest_level_against_a_slow_reference():
    rng = np.random.default_rng(3)
    levels = np.array([-2.0, 0.0, 1.0, 4.0, 10.0])
    ties = (levels[:-1] + levels[1:]) / 2                   # exact midpoints
    s = np.concatenate([rng.uniform(-8, 16, 300), ties, levels, [-1e9, 1e9]])
    np.testing.assert_array_equal(nearest_level(s, levels), _nearest_slow(s, list(levels)))
    task = get_task("ordinal")
    Y_train = sp.csr_matrix(levels[[3, 0, 4, 1, 2, 0]][:, None])
    np.testing.assert_array_equal(task.levels(Y_train), levels)
    np.testing.assert_array_equal(task.predictor(lambda X: X, Y_train)(s), nearest_level(s, levels))
    np.testing.assert_array_equal(task.predict(s[:, None], levels=levels).ravel(),
                                  nearest_level(s, levels))


def test_kr_on_levels_rounds_as_the_task_does():
    X, T = _values("ordinal", n=30)
    kr = Landmark(model="kr", n_landmarks=5, task="ordinal").fit(X, T)
    raw = Landmark(model="kr", n_landmarks=5, task="regression").fit(X, T)
    np.testing.assert_array_equal(kr.decision_function(X),
                                  nearest_level(raw.decision_function(X).ravel(),
                                                np.array([1.0, 2.0, 3.0]))[:, None])


def test_ordinal_constant_is_the_lower_median_level():
    task = get_task("ordinal")
    for T in ([[1.0], [5.0], [2.0], [4.0]], [[3.0], [1.0], [2.0]], [[2.0], [2.0], [7.0], [7.0]]):
        column = sorted(v[0] for v in T)
        assert task.constant(np.array(T)).tolist() == [column[(len(column) - 1) // 2]]
    assert get_task("regression").constant(np.array([[1.0, 2.0], [4.0, 8.0]])).tolist() == \
        [2.5, 5.0]


# ----------------------------------------------------------------------------- method targets
@pytest.mark.parametrize("owner, task", VALUE_CASES)
def test_value_targets_are_checked_once_for_every_method(owner, task):
    make = VALUE_METHODS[owner]
    X, T = _values(task)
    with pytest.raises(ValueError) as info:
        make(task).fit(X, T[:-1])
    assert str(info.value) == (f"{owner}: X has shape (20, 4) but Y has shape "
                               f"({19}, {T.shape[1]}); Y must be (n_samples, n_targets)")
    partial = sp.csr_matrix(np.ones_like(T))
    partial[0, 0] = 0
    partial.eliminate_zeros()
    with pytest.raises(ValueError) as info:
        make(task).fit(X, T, observed=partial)
    assert str(info.value) == (f"{owner}: a {task} task has no missing-label mask; pass "
                               f"observed=None")
    with pytest.raises(ValueError) as info:
        make(task).fit(X, T[:, :0])
    assert str(info.value) == f"{owner}: empty input (X (20, 4), Y (20, 0))"
    bad = T.copy()
    bad[2, 0] = np.nan
    with pytest.raises(ValueError) as info:
        make(task).fit(X, bad)
    assert str(info.value) == f"{owner}: Y contains NaN or infinity"
    # a mask storing every entry leaves nothing missing: the same fit as none
    full = make(task).fit(X, T, observed=sp.csr_matrix(np.ones_like(T)))
    np.testing.assert_array_equal(full.decision_function(X), make(task).fit(X, T)
                                  .decision_function(X))


def test_multiclass_targets_of_a_method_fitting_class_indices():
    task = get_task("multiclass")
    pos = sp.csr_matrix(np.array([[0, 1, 0], [1, 0, 0], [0, 0, 1.0]]))
    assert task.class_indices("M", pos, None).tolist() == [1, 0, 2]
    with pytest.raises(ValueError) as info:
        task.class_indices("M", sp.csr_matrix(np.array([[0, 1, 0], [1, 0, 1.0]])), None)
    assert str(info.value) == "M: a multiclass task needs exactly one class per row; row 1 has 2"
    with pytest.raises(ValueError) as info:
        task.class_indices("M", pos, pos)
    assert str(info.value) == "M: a multiclass task has no missing-label mask; pass observed=None"


@pytest.mark.parametrize("owner, task", VALUE_CASES + [
    ("BR", "multilabel"), ("BR", "multiclass"), ("Constant", "multilabel"),
    ("Constant", "multiclass"), ("LSVV", "multilabel"), ("LSVV", "multiclass")])
def test_the_task_object_and_its_name_give_the_same_fit(owner, task):
    make = VALUE_METHODS[owner]
    X, Y = (_values if get_task(task).real_valued else _labels)(task)
    by_name = make(task).fit(X, Y)
    by_object = make(get_task(task)).fit(X, Y)
    assert by_object.get_params()["task"] is get_task(task)
    np.testing.assert_array_equal(by_name.decision_function(X), by_object.decision_function(X))
    assert by_name.threshold == by_object.threshold


def test_a_task_object_the_method_does_not_handle_is_refused_with_the_standard_message():
    X, T = _values("regression")
    with pytest.raises(InvalidParameterError) as info:
        Landmark(task=get_task("multiclass")).fit(X, T)
    assert str(info.value) == ("The 'task' parameter of Landmark must be a str among "
                               "{'ordinal', 'regression'}. Got get_task('multiclass') instead.")
    reason = Landmark(model="orland").skip(FitContext(task=get_task("regression")))
    assert reason.startswith("landmark with model='orland' needs ordinal targets (levels)")


def test_holdout_scores_of_the_two_families():
    from mlx.methods._auto import validation_score
    from mlx.metrics import evaluate

    X, T = _values("regression")
    m = BR(loss="squared", l2_reg=1.0, task="regression").fit(X, T)
    mse = np.mean((m.decision_function(X) - T) ** 2)
    assert validation_score(m, X, T, get_task("regression")) == pytest.approx(-mse, rel=1e-12)
    X, Y = _labels("multilabel")
    m = BR(loss="squared", l2_reg=1.0).fit(X, Y)
    res = evaluate(m.decision_function, X, Y, ["p@1", "auc"], auc_degenerate="skip")
    assert validation_score(m, X, Y, "multilabel") == \
        pytest.approx((res["p@1"][0] + res["auc"][0]) / 2, rel=1e-12)


# ----------------------------------------------------------------------------- the runner
def test_saved_models_hold_the_task_object_and_predict_by_the_task(tmp_path):
    rng = np.random.default_rng(4)
    X = rng.random((60, 3))
    levels = np.clip(np.round(X @ np.array([3.0, 2.0, -1.0]) + 1), 1, 4).astype(int)
    (tmp_path / "ord.txt").write_text("".join(
        f"{y} " + " ".join(f"{j + 1}:{v:.5f}" for j, v in enumerate(x)) + "\n"
        for x, y in zip(X, levels)))
    config = tmp_path / "c.yaml"
    config.write_text(textwrap.dedent(f"""
        name: ord
        dataset: {{format: libsvm-multiclass, task: ordinal, train: {tmp_path}/ord.txt,
                   name: ord}}
        split: {{test_fraction: 0.3, stratify: false}}
        preprocess: []
        methods:
          - name: br
            params: {{loss: squared, l2_reg: 1.0}}
          - name: landmark
            params: {{model: regland, n_landmarks: 5, C: 1.0}}
        metrics: [mae]
        """))
    out = tmp_path / "o"
    r = CliRunner().invoke(cli, ["run", "-q", "-j", "1", "-o", str(out), "--save-models",
                                 str(config)], obj={})
    assert r.exit_code == 0, r.output
    frame = pd.read_csv(out / "results.csv")
    assert set(frame["status"]) == {"ok"}
    for cell_id in frame["cell_id"].unique():
        model = mlx.load_model(out, cell_id)
        assert model.estimator.task is get_task("ordinal")
        np.testing.assert_array_equal(model.levels, np.unique(levels))
        pred = model.predict(X)
        assert set(np.unique(pred)) <= set(levels)
        np.testing.assert_array_equal(pred, nearest_level(model.decision_function(X),
                                                          np.unique(levels).astype(float)))
