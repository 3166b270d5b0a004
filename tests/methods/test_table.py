"""The parameter tables (:mod:`mlx.methods.table`) against the method classes.

Config parsing and ``mlx validate`` read the tables instead of importing the methods; every
table must say what its class says: the same parameters and defaults as ``__init__``, the
same tasks and flags, the same constraints, decision threshold and checks of settings (the
same messages), over many settings and contexts. And reading a config must load neither
numpy, scipy nor scikit-learn.
"""

from __future__ import annotations

import inspect
import itertools
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from mlx.methods import METHODS
from mlx.methods.constraints import BOOL, FitContext, StrOptions, TaskOptions
from mlx.methods.table import TABLES, Settings, method_table
from mlx.metrics.names import TASK_NAMES

REPO = Path(__file__).resolve().parents[2]
NAMES = METHODS.names()


def test_every_method_has_a_table():
    assert sorted(TABLES) == NAMES
    for name in NAMES:
        assert method_table(name) is TABLES[name]


@pytest.mark.parametrize("name", NAMES)
def test_table_matches_the_class(name):
    cls, table = METHODS.get(name), TABLES[name]
    assert (table.name, table.class_name) == (cls.name, cls.__name__)
    assert table.tasks == tuple(cls.tasks)
    assert table.uses_rank == cls.uses_rank
    assert table.supports_missing_labels == cls.supports_missing_labels
    signature = {p.name: p.default for p in inspect.signature(cls.__init__).parameters.values()
                 if p.name != "self"}
    assert table.defaults() == signature
    assert [type(v) for v in table.defaults().values()] == \
        [type(signature[k]) for k in table.defaults()]
    assert table.param_names() == cls._param_names()
    assert cls._parameter_constraints is table.constraints


def test_option_lists_match_their_sources():
    from mlx.methods import landmark, xmc
    from mlx.methods._scale import SCALE_OPTIONS
    from mlx.numerics.similarity import SIMILARITIES

    def options(name, param):
        (constraint,) = [c for c in TABLES[name].constraints[param] if isinstance(c, StrOptions)]
        return set(constraint.options)

    assert options("landmark", "similarity") == set(SIMILARITIES.names())
    assert options("landmark", "model") == set(landmark._MODELS)
    assert options("landmark", "loss") == set(landmark._SVR_SOLVER)
    assert options("lsvv", "scale_features") == options("wsabie", "scale_features") \
        == set(SCALE_OPTIONS)
    assert options("constant", "task") == set(TASK_NAMES) == set(TABLES["br"].tasks)
    assert xmc.PLT._package == "napkinxc" and xmc.Omikuji._package == "omikuji"


def _values(constraints: list, default) -> list:
    """The default, every option of a string or bool constraint, and values at and around
    the bounds of an interval (valid and invalid ones)."""
    out = [default]
    for c in constraints:
        if isinstance(c, StrOptions) and not isinstance(c, TaskOptions):
            out += sorted(c.options)
        elif c is BOOL:
            out += [True, False]
        elif c is None:
            out.append(None)
        elif hasattr(c, "left"):
            for bound in (c.left, c.right):
                if bound is not None:
                    out += [bound, bound + 1, bound - 1]
    out += ["not-an-option", -1, 0]
    unique = []
    for v in out:
        if not any(v is u or (type(v) is type(u) and v == u) for u in unique):
            unique.append(v)
    return unique


def _settings(name: str) -> list[dict]:
    """One parameter changed from its defaults at a time, and every pair of string options,
    so that checks across parameters (a solver and a loss) are covered."""
    table = TABLES[name]
    params = {p: _values(c or [], d) for p, (d, c) in table.params.items() if p != "task"}
    out = [{}]
    out += [{p: v} for p, vs in params.items() for v in vs[1:]]
    options = {p: [v for v in vs if isinstance(v, (str, bool)) and v != "not-an-option"]
               for p, vs in params.items()}
    options = {p: vs for p, vs in options.items() if len(vs) > 1}
    for (p, vs), (q, ws) in itertools.combinations(options.items(), 2):
        out += [{p: v, q: w} for v in vs for w in ws]
    numbers = {"sparsity": [1, 3, 60], "n_landmarks": [2, 50], "theta": [3, 0.5, 40],
               "rank": [3, 40], "tau_I": [0.0, 1.0], "n_neighbors": [5, 40]}
    numbers = {p: vs for p, vs in numbers.items() if p in params}
    for (p, vs), (q, ws) in itertools.combinations(numbers.items(), 2):
        out += [{p: v, q: w} for v in vs for w in ws]
    if "model" in params:
        out += [{"model": m, "sparsity": s, "n_landmarks": n} for m in ("regland_sp", "kr")
                for s in (3, 60) for n in (2, 50)]
    return out


CONTEXTS = [FitContext(task=t, n_samples=n, n_features=d, n_labels=L, observed_ratio=o,
                       labelled_ratio=lab)
            for t in TASK_NAMES for (n, d, L) in ((0, 0, 0), (30, 20, 6))
            for o in (1.0, 0.5) for lab in (1.0, 0.4)]


def _outcome(fn):
    try:
        return ("ok", fn())
    except Exception as exc:   # the exception's type, parameter and text must agree
        return (type(exc).__name__, getattr(exc, "param", None), str(exc))


@pytest.mark.parametrize("name", NAMES)
def test_table_checks_agree_with_the_class(name):
    """Constraints, threshold, skip (before the data: sizes unknown) and check_context give
    the same answers and messages from the table as from an instance, for every task."""
    cls, table = METHODS.get(name), TABLES[name]
    compared = 0
    for params in _settings(name):
        tasks = list(table.tasks) if "task" in table.params else [None]
        for task in tasks:
            full = dict(params) if task is None else {**params, "task": task}
            method, settings = cls(**full), table(**full)
            assert isinstance(settings, Settings)
            assert _outcome(method._validate_params) == _outcome(settings._validate_params), full
            if _outcome(method._validate_params)[0] != "ok":
                continue
            assert _outcome(lambda: method.threshold) == _outcome(lambda: settings.threshold)
            assert getattr(method, "needs_counts", False) == settings.needs_counts, full
            for ctx in CONTEXTS:
                before_data = FitContext(task=ctx.task, observed_ratio=ctx.observed_ratio,
                                         labelled_ratio=ctx.labelled_ratio)
                assert _outcome(lambda: method.skip(before_data)) == \
                    _outcome(lambda: settings.skip(before_data)), (full, ctx)
                assert _outcome(lambda: method.check_context(ctx)) == \
                    _outcome(lambda: settings.check_context(ctx)), (full, ctx)
                compared += 1
    assert compared > 100


def test_unknown_parameter_is_a_type_error_as_for_the_class():
    with pytest.raises(TypeError, match="'lrank'"):
        TABLES["leml"](lrank=3)


def test_method_table_of_an_unknown_name_suggests_one():
    from mlx.errors import UnknownNameError

    with pytest.raises(UnknownNameError, match="Did you mean 'leml'"):
        method_table("lemml")


HEAVY = ("numpy", "scipy", "sklearn", "numba", "pandas", "liblinear")


def test_validate_without_data_loads_no_numerical_library(tmp_path):
    """``mlx validate`` of a config naming every multi-label method of mlx, with its data not on
    the path, reads the parameter tables only: numpy, scipy and scikit-learn stay unloaded."""
    config = tmp_path / "all.yaml"
    # plt and omikuji are left out: their check imports their package, by design
    methods = [{"name": n} for n in NAMES if "multilabel" in TABLES[n].tasks
               and n not in ("plt", "omikuji")]
    config.write_text(json.dumps({
        "name": "all", "dataset": "bibtex",
        "methods": methods + [{"name": "br", "label": "BR-SQ", "params": {"loss": "squared"},
                               "select": {"l2_reg": [0.1, 1.0]}}],
        "sweep": {"rank_ratio": [0.2], "observed_ratio": [1.0, 0.5]},
        "metrics": ["p@1", "hamming", "auc"]}))
    code = textwrap.dedent(f"""
        import sys
        from click.testing import CliRunner
        from mlx.cli import cli
        r = CliRunner().invoke(cli, ["validate", {str(config)!r}], obj={{}})
        print(r.exit_code, r.output.splitlines()[0])
        print(",".join(m for m in {HEAVY!r} if m in sys.modules) or "-")
    """)
    env = {k: v for k, v in os.environ.items() if not k.startswith("MLX_")}
    env.update(MLX_HOME=str(tmp_path / "home"), MLX_DATA_PATH=str(tmp_path / "none"),
               PYTHONPATH=str(REPO))
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         env=env, cwd=tmp_path, check=True).stdout.splitlines()
    assert out[0].startswith(f"0 {config}: ok, "), out
    assert "data not found yet" in out[0]
    assert out[1] == "-", f"loaded: {out[1]}"
