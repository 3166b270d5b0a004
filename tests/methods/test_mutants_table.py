"""The parameter tables (:mod:`mlx.methods.table`): properties the older tests left open (found
by mutation testing). ``test_table.py`` holds each table to its class, but the class calls the
same check functions, so a wrong text or bound there would pass it: here every check is held to
its exact text and parameter at its bounds, sizes of 0 (unknown) are left unchecked, a missing
optional package is a config error, and a method registered without a table is read from its
class."""

from __future__ import annotations

import sys
from numbers import Integral

import pytest

from mlx.methods.constraints import FitContext, Interval, InvalidParameterError
from mlx.methods.table import (
    TABLES,
    MethodTable,
    br_loss,
    lsvv_neighbors_error,
    lsvv_theta_error,
    method_table,
)
from tests.test_cli import CONFIG, invoke, write


def _error(call):
    """``(param, message)`` of the InvalidParameterError ``call`` raises; None if it returns."""
    try:
        call()
    except InvalidParameterError as exc:
        return exc.param, str(exc)
    return None


def _context_error(name: str, params: dict, **context):
    """What the table's ``check_context`` of ``name`` with ``params`` says of ``context``."""
    settings = TABLES[name](**params)
    return _error(lambda: settings.check_context(FitContext(**context)))


# ----------------------------------------------------------------------------- MethodTable
def test_a_constraint_of_none_leaves_the_parameter_unchecked():
    count = Interval(Integral, 1, None, closed="left")
    table = MethodTable("toy", "Toy", ("multilabel",), params={"a": (1, [count]),
                                                                 "b": ("x", None)})
    assert table.constraints == {"a": [count]}
    assert table.param_names() == ["a", "b"] and table.defaults() == {"a": 1, "b": "x"}
    table(b=object())._validate_params()
    assert _error(table(a=0)._validate_params) == (
        "a", "The 'a' parameter of Toy must be an int in the range [1, inf). Got 0 instead.")
    assert "toy" not in TABLES                 # only the tables of mlx's methods are registered


# ----------------------------------------------------------------------------- BR
def test_br_loss_auto_is_squared_for_values_and_logistic_for_labels():
    br = TABLES["br"]
    assert [br_loss(br(task=t)) for t in ("multilabel", "multiclass", "regression", "ordinal")] \
        == ["logistic", "logistic", "squared", "squared"]
    assert br_loss(br(loss="squared_hinge", task="regression")) == "squared_hinge"


def test_br_declines_real_values_unless_its_loss_is_squared():
    br = TABLES["br"]
    for task in ("regression", "ordinal"):
        for loss in ("squared", "auto"):
            assert br(loss=loss, task=task).skip(FitContext(task=task)) is None
        assert br(loss="logistic", task=task).skip(FitContext(task=task)) == (
            f"br with loss='logistic' does not handle {task} tasks (loss='squared' does)")
    assert br(loss="logistic").skip(FitContext(task="multilabel")) is None


# ----------------------------------------------------------------------------- LEML
_EIG = "w_solver='eig' needs loss='squared' and fully observed labels; got loss={!r} with {} " \
       "labels. Use 'auto', 'cg' or 'tron'."


@pytest.mark.parametrize("w_solver, loss, observed, message", [
    ("eig", "squared", 1.0, None),
    ("eig", "squared", 0.999, _EIG.format("squared", "missing")),
    ("eig", "logistic", 1.0, _EIG.format("logistic", "full")),
    ("eig", "squared_hinge", 0.5, _EIG.format("squared_hinge", "missing")),
    ("cg", "squared", 0.5, None),
    ("cg", "logistic", 1.0, "w_solver='cg' needs loss='squared' (got 'logistic'); use 'tron' "
                            "or 'auto'."),
    ("tron", "squared", 0.5, None),
    ("tron", "logistic", 1.0, None),
    ("auto", "squared_hinge", 0.5, None),
])
def test_leml_w_solver_must_serve_the_loss_and_the_labels(w_solver, loss, observed, message):
    error = _context_error("leml", {"w_solver": w_solver, "loss": loss},
                           observed_ratio=observed)
    assert error == (None if message is None else ("w_solver", message))


# ----------------------------------------------------------------------------- Landmark
def _n_landmarks(n_landmarks, n_samples):
    return ("n_landmarks", f"The 'n_landmarks' parameter of Landmark must be in the range "
                           f"[1, {n_samples}] here: the landmarks are drawn without replacement "
                           f"from the {n_samples} training rows. Got {n_landmarks} instead.")


@pytest.mark.parametrize("params, n_samples, expected", [
    ({"n_landmarks": 2}, 1, _n_landmarks(2, 1)),
    ({"n_landmarks": 5}, 5, None),
    ({"n_landmarks": 6, "model": "orland", "task": "ordinal"}, 5, _n_landmarks(6, 5)),
    ({"n_landmarks": 6, "model": "kr"}, 5, None),                 # KR has no landmarks
    ({"n_landmarks": 6}, 0, None),                                # 0: size unknown
    ({"model": "regland_sp", "n_landmarks": 4}, 30, None),        # sparsity None: half
    ({"model": "regland_sp", "n_landmarks": 4, "sparsity": 4}, 30, None),
    ({"model": "regland_sp", "n_landmarks": 4, "sparsity": 5}, 30,
     ("sparsity", "The 'sparsity' parameter of Landmark must be at most n_landmarks (4) with "
                  "model='regland_sp' (it counts landmarks kept). Got 5 instead.")),
    ({"model": "regland", "n_landmarks": 4, "sparsity": 5}, 30, None),   # unused there
])
def test_landmark_counts_against_the_rows_and_each_other(params, n_samples, expected):
    task = params.get("task", "regression")
    assert _context_error("landmark", params, task=task, n_samples=n_samples) == expected
    settings = TABLES["landmark"](**params)
    assert _error(settings._validate_params) == (expected if expected and
                                                 expected[0] == "sparsity" else None)


def test_landmark_settings_are_not_checked_for_a_task_it_declines():
    for params in ({"n_landmarks": 6}, {"model": "regland_sp", "n_landmarks": 4, "sparsity": 5}):
        assert _context_error("landmark", params, task="multilabel", n_samples=5) is None


def test_orland_declines_regression_and_only_orland_does():
    landmark = TABLES["landmark"]
    assert landmark(model="orland").skip(FitContext(task="regression")) == (
        "landmark with model='orland' needs ordinal targets (levels); use model='regland' or "
        "'regland_sp' for regression")
    assert landmark(model="orland", task="ordinal").skip(FitContext(task="ordinal")) is None
    for model in ("regland", "regland_sp", "kr"):
        assert landmark(model=model).skip(FitContext(task="regression")) is None


# ----------------------------------------------------------------------------- LSVV
def _theta(theta, K, D, what, space):
    r = min(K, D)
    return ("theta", f"LSVV: theta={theta} exceeds min(K, D) = min({K}, {D}) = {r} (K outputs; "
                     f"D = {what} in the {space} space); use theta <= {r}")


@pytest.mark.parametrize("params, sizes, expected", [
    ({"theta": 7}, (30, 20, 6), _theta(7, 6, 20, "n_features", "linear")),
    ({"theta": 6}, (30, 20, 6), None),
    ({"theta": 5}, (30, 4, 6), _theta(5, 6, 4, "n_features", "linear")),
    ({"theta": 6, "n_components": 5}, (30, 20, 6), None),         # linear: D = n_features
    ({"theta": 6, "space": "rff", "n_components": 5}, (30, 20, 6),
     _theta(6, 6, 5, "n_components", "rff")),
    ({"theta": 5, "space": "rff", "n_components": 5}, (30, 3, 6), None),   # rff: D = n_components
    ({"theta": 0.5}, (30, 20, 6), None),                          # a fraction of min(K, D)
    ({}, (30, 20, 6), None),                                      # theta None: half of it
    ({"theta": 7}, (30, 20, 0), None),                            # K unknown
    ({"theta": 7}, (30, 0, 6), None),                             # D unknown
])
def test_lsvv_theta_is_at_most_min_k_d(params, sizes, expected):
    n, d, L = sizes
    assert _context_error("lsvv", params, n_samples=n, n_features=d, n_labels=L) == expected


def _neighbors(k, rows, limit):
    return ("n_neighbors", f"LSVV: n_neighbors={k} needs more than {k} training rows (labelled "
                           f"and unlabelled) for the k-NN graph; there are {rows}; use "
                           f"n_neighbors <= {limit} or tau_I=0")


@pytest.mark.parametrize("params, n_samples, labelled, expected", [
    ({"tau_I": 1.0, "n_neighbors": 10}, 10, 1.0, _neighbors(10, "10", 9)),
    ({"tau_I": 1.0, "n_neighbors": 10}, 11, 1.0, None),
    ({"tau_I": 1.0, "n_neighbors": 10}, 0, 1.0, None),            # 0: size unknown
    ({"tau_I": 0.0, "n_neighbors": 10}, 5, 1.0, None),            # no graph without tau_I
    # 10 labelled rows of 40%: at most floor(10.5 / 0.4) = 26 training rows
    ({"tau_I": 1.0, "n_neighbors": 26}, 10, 0.4, _neighbors(26, "at most 26", 25)),
    ({"tau_I": 1.0, "n_neighbors": 25}, 10, 0.4, None),
])
def test_lsvv_neighbors_are_fewer_than_the_training_rows(params, n_samples, labelled, expected):
    assert _context_error("lsvv", params, n_samples=n_samples, n_features=20, n_labels=6,
                          labelled_ratio=labelled) == expected


def test_lsvv_error_functions_follow_their_docstrings():
    lsvv = TABLES["lsvv"]
    assert lsvv_neighbors_error(lsvv(tau_I=0.0, n_neighbors=10), 5, True) is None
    assert lsvv_theta_error(lsvv(theta=None), 6, 20) is None
    err = lsvv_neighbors_error(lsvv(tau_I=0.5, n_neighbors=5), 5, False)
    assert (err.param, str(err)) == _neighbors(5, "at most 5", 4)


# ----------------------------------------------------------------------------- MoM
def _rank(rank, n, d):
    return ("rank", f"rank={rank} is larger than the data allow: MoM whitens with {rank} "
                    f"eigenvectors of the {d} x {d} word co-occurrence matrix, whose rank is at "
                    f"most min(n_samples, n_features) = min({n}, {d}); valid: 1 <= rank <= "
                    f"{min(n, d)}")


@pytest.mark.parametrize("rank, n, d, expected", [
    (6, 30, 5, _rank(6, 30, 5)),
    (5, 30, 5, None),
    (5, 4, 30, _rank(5, 4, 30)),
    (4, 4, 30, None),
    (2, 1, 30, _rank(2, 1, 30)),
    (2, 30, 1, _rank(2, 30, 1)),
    (6, 0, 5, None),                                              # sizes unknown
    (6, 30, 0, None),
])
def test_mom_rank_is_at_most_min_n_d(rank, n, d, expected):
    assert _context_error("mom", {"rank": rank}, n_samples=n, n_features=d, n_labels=4) \
        == expected


# ----------------------------------------------------------------------------- PLT, Omikuji
@pytest.mark.parametrize("name, package", [("plt", "napkinxc"), ("omikuji", "omikuji")])
def test_a_missing_optional_package_is_a_config_error(monkeypatch, tmp_path, name, package):
    monkeypatch.setitem(sys.modules, package, None)               # import fails
    message = (f"{name} needs the optional package {package}, which is not installed; install "
               f"it with pip install 'mlx-multilabel[xmc]'")
    assert _context_error(name, {}) == ("name", message)
    p = write(tmp_path, CONFIG.replace("name: br\n    params: {loss: squared_hinge}",
                                       f"name: {name}"))
    r = invoke("validate", str(p))
    assert (r.exit_code, r.output) == (2, f"Error: {p}: methods[0].name: {message}\n")


# ----------------------------------------------------------------------------- method_table
@pytest.fixture
def echo():
    """A method of a user's own, registered without a table."""
    from mlx.methods import METHODS
    from mlx.methods.constant import Constant

    class Echo(Constant):
        name = "echo"
        uses_rank = True
        supports_missing_labels = False

    METHODS.register("echo")(Echo)
    try:
        yield Echo
    finally:
        METHODS._items.pop("echo")


def test_a_method_without_a_table_is_read_from_its_class(echo):
    table = method_table("echo")
    assert (table.name, table.class_name, table.tasks, table.uses_rank,
            table.supports_missing_labels) == ("echo", "Echo", echo.tasks, True, False)
    assert table.param_names() == ["task"]
    settings = table(task="regression")
    assert type(settings) is echo and settings.task == "regression"


def test_an_unknown_method_is_named_with_its_file_and_key():
    from mlx.errors import UnknownNameError

    with pytest.raises(UnknownNameError) as info:
        method_table("lemml", source="c.yaml", key_path="methods[0].name")
    assert str(info.value) == (
        "c.yaml: methods[0].name: unknown method 'lemml'. Did you mean 'leml'? Available "
        "methods: bcs, br, constant, cplst, landmark, leml, lsvv, mom, omikuji, plt, wsabie")
