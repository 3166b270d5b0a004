"""Parameter constraints and fit contexts: properties the older tests left open (found by
mutation testing)."""

import math
import numbers

import numpy as np
import pytest

from mlx.methods import constraints as C
from mlx.tasks import as_task


@pytest.mark.parametrize("closed, at_left, at_right, text", [
    ("both", True, True, "a float in the range [0, 1]"),
    ("left", True, False, "a float in the range [0, 1)"),
    ("right", False, True, "a float in the range (0, 1]"),
    ("neither", False, False, "a float in the range (0, 1)"),
])
def test_an_interval_includes_its_bounds_as_closed_says(closed, at_left, at_right, text):
    iv = C.Interval(numbers.Real, 0, 1, closed=closed)
    assert iv.is_satisfied_by(0) is at_left and iv.is_satisfied_by(0.0) is at_left
    assert iv.is_satisfied_by(1) is at_right and iv.is_satisfied_by(1.0) is at_right
    assert iv.is_satisfied_by(0.5) and iv.is_satisfied_by(np.float64(1e-12))
    assert not iv.is_satisfied_by(-1e-12) and not iv.is_satisfied_by(1 + 1e-12)
    assert str(iv) == text


def test_an_interval_refuses_bools_other_types_and_non_finite_floats():
    ints = C.Interval(numbers.Integral, 1, None, closed="left")
    assert str(ints) == "an int in the range [1, inf)"
    assert ints.is_satisfied_by(1) and ints.is_satisfied_by(np.int64(10 ** 12))
    assert not ints.is_satisfied_by(True) and not ints.is_satisfied_by(2.0)
    assert not ints.is_satisfied_by("3") and not ints.is_satisfied_by(0)
    reals = C.Interval(numbers.Real, None, None, closed="both")
    assert str(reals) == "a float in the range (-inf, inf)"
    assert reals.is_satisfied_by(-1e300) and reals.is_satisfied_by(3)
    for bad in (math.nan, math.inf, -math.inf, False, None, "1"):
        assert not reals.is_satisfied_by(bad), bad
    assert str(C.Interval(numbers.Real, None, 0, closed="right")) == \
        "a float in the range (-inf, 0]"
    assert str(C.Interval(numbers.Real, -2, None, closed="neither")) == \
        "a float in the range (-2, inf)"
    upper = C.Interval(numbers.Real, None, 0, closed="both")
    assert upper.is_satisfied_by(0) and upper.is_satisfied_by(-5) and not upper.is_satisfied_by(1)


def test_an_interval_is_closed_on_both_sides_by_default():
    iv = C.Interval(numbers.Integral, 1, 3)
    assert iv.is_satisfied_by(1) and iv.is_satisfied_by(3) and not iv.is_satisfied_by(4)
    assert str(iv) == "an int in the range [1, 3]"


def test_a_type_constraint_refuses_bools_unless_it_is_bool():
    ints = C._TypeConstraint(int, "an int")
    assert ints.is_satisfied_by(3) and not ints.is_satisfied_by(True)
    assert not ints.is_satisfied_by("3") and str(ints) == "an int"
    assert C._TypeConstraint(bool, "a bool").is_satisfied_by(False)


def test_string_and_task_options():
    opts = C.StrOptions(["squared", "logistic", "hinge"])
    assert str(opts) == "a str among {'hinge', 'logistic', 'squared'}"
    assert opts.is_satisfied_by("hinge") and not opts.is_satisfied_by("Hinge")
    assert not opts.is_satisfied_by(["hinge"]) and not opts.is_satisfied_by(None)
    tasks = C.TaskOptions(["multilabel", "regression"])
    assert tasks.is_satisfied_by("regression") and tasks.is_satisfied_by(as_task("multilabel"))
    assert not tasks.is_satisfied_by(as_task("multiclass"))
    assert not tasks.is_satisfied_by("multiclass") and not tasks.is_satisfied_by(3)
    assert str(tasks) == "a str among {'multilabel', 'regression'}"


def test_bool_and_the_plain_types():
    assert C.BOOL.is_satisfied_by(True) and C.BOOL.is_satisfied_by(False)
    assert not C.BOOL.is_satisfied_by(1) and not C.BOOL.is_satisfied_by(None)
    assert str(C.BOOL) == "a bool"
    assert [C.describe(c) for c in (None, numbers.Integral, numbers.Real, C.BOOL)] == [
        "None", "an int", "a float", "a bool"]


CONSTRAINTS = {"k": [C.Interval(numbers.Integral, 1, None, closed="left"), None],
               "lam": [numbers.Real],
               "n": [numbers.Integral],
               "loss": [C.StrOptions(["sq"]), C.BOOL, None]}
GOOD = {"k": None, "lam": 2, "n": np.int32(3), "loss": "sq"}


@pytest.mark.parametrize("change, param, message", [
    ({"k": 0}, "k", "The 'k' parameter of LEML must be an int in the range [1, inf) or None. "
                    "Got 0 instead."),
    ({"lam": True}, "lam", "The 'lam' parameter of LEML must be a float. Got True instead."),
    ({"lam": "1"}, "lam", "The 'lam' parameter of LEML must be a float. Got '1' instead."),
    ({"n": 3.0}, "n", "The 'n' parameter of LEML must be an int. Got 3.0 instead."),
    ({"n": False}, "n", "The 'n' parameter of LEML must be an int. Got False instead."),
    ({"loss": 1}, "loss", "The 'loss' parameter of LEML must be a str among {'sq'}, a bool or "
                          "None. Got 1 instead."),
    ({"k": 0, "loss": 1}, "k", None),            # the first bad parameter is named
])
def test_check_params_names_the_first_bad_parameter_and_what_is_valid(change, param, message):
    with pytest.raises(C.InvalidParameterError) as exc:
        C.check_params("LEML", CONSTRAINTS, {**GOOD, **change})
    assert exc.value.param == param
    if message is not None:
        assert str(exc.value) == message
    assert isinstance(exc.value, ValueError)


def test_check_params_accepts_any_satisfied_option():
    C.check_params("LEML", CONSTRAINTS, GOOD)
    C.check_params("LEML", CONSTRAINTS, {"k": 5, "lam": 0.5, "n": -1, "loss": None})
    C.check_params("LEML", CONSTRAINTS, {"k": 1, "lam": np.float32(1), "n": 0, "loss": True})


def test_a_fit_context_holds_a_task_object():
    ctx = C.FitContext()
    assert (ctx.task, ctx.n_samples, ctx.n_features, ctx.n_labels, ctx.observed_ratio,
            ctx.labelled_ratio) == (as_task("multilabel"), 0, 0, 0, 1.0, 1.0)
    assert C.FitContext(task="regression").task.name == "regression"
    task = as_task("multiclass")
    assert C.FitContext(task=task).task is task


def test_skip_reasons():
    ml = C.FitContext(observed_ratio=0.999)
    assert C.skip_reason("BR", ("multilabel",), True, ml) is None
    assert C.skip_reason("BR", ("multilabel",), False, ml) == "BR does not support missing labels"
    assert C.skip_reason("BR", ("multilabel",), False, C.FitContext()) is None
    assert C.skip_reason("BR", ("multilabel", "multiclass"), False,
                       C.FitContext(task="regression", observed_ratio=0.5)) == (
        "BR does not handle regression tasks (it handles: multilabel, multiclass)")


def test_task_name_takes_a_known_task_else_the_first():
    tasks = ("multilabel", "regression")
    assert C.task_name("regression", tasks) == "regression"
    assert C.task_name(as_task("regression"), tasks) == "regression"
    assert C.task_name("multiclass", tasks) == "multilabel"
    assert C.task_name(None, tasks) == "multilabel" and C.task_name(3, tasks) == "multilabel"
