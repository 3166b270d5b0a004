"""Every consumer of the sweep axes reads mlx.axes: none can forget an axis.

Each test runs over ``AXES`` (or its setting axes), so an axis added to the module is checked
in the sweep expansion, results.csv, the run's own table, paper tables, compare, the paired
tests and the figures without a new test.
"""

import dataclasses
import json

import pandas as pd
import pytest

from mlx.axes import AXES, REPETITION, SETTING_AXES, SPEC_AXES, SWEEP_AXES, axis
from mlx.config import EvaluationSpec, SelectionSpec
from mlx.errors import ConfigError
from mlx.runner.results import COLUMNS, wide_table
from mlx.runner.sweep import Cell, FrozenMap
from mlx.tables import plot
from mlx.tables.build import build_table
from mlx.tables.compare import compare_spec
from mlx.tables.paired import CSV_COLUMNS, paired_comparison
from mlx.tables.spec import AXES as SPEC_LAYOUT_AXES
from mlx.tables.spec import FIGURE_X, NUMERIC_AXES, parse_spec

# Two values of each setting axis, and the value every other row has.
TWO = {"dataset": ("bibtex", "delicious"), "label": ("LEML-SQ", "LEML-LR"),
       "params": ('{"loss":"squared"}', '{"loss":"squared","l2_reg":0.1}'),
       "rank_ratio": (0.2, 0.4), "rank": (20.0, 40.0), "observed_ratio": (0.2, 1.0),
       "labelled_ratio": (0.5, 1.0)}
BASE = {"dataset": "bibtex", "label": "LEML-SQ", "method": "leml",
        "params": '{"loss":"squared"}', "rank_ratio": 0.2, "rank": 20.0,
        "observed_ratio": 1.0, "labelled_ratio": 1.0}


def rows_differing_in(column: str, *, label="LEML-SQ", offset=0.0) -> list[dict]:
    rows = []
    for i, value in enumerate(TWO[column]):
        for rep in range(3):
            r = {**BASE, "label": label, column: value, "run_id": "r", "experiment": "t",
                 "cell_id": f"{label}-{column}-{i}-{rep}", "repetition": rep, "split": "test",
                 "metric": "p@1", "value": 0.3 + 0.2 * i + rep / 100 + offset, "status": "ok",
                 "split_fingerprint": f"s{rep}", "mask_fingerprint": "all", "fit_seconds": 1.0}
            if column == "rank":
                r["rank_ratio"] = None           # an absolute rank
            rows.append(r)
    return rows


def test_the_module_is_consistent():
    assert len({a.name for a in AXES}) == len(AXES) == len({a.column for a in AXES})
    assert [a for a in AXES if a.role == REPETITION] == [axis("repetition")]
    assert set(TWO) == {a.column for a in SETTING_AXES}   # this test knows every setting axis


def test_every_axis_is_a_cell_field_and_a_results_column():
    fields = {f.name for f in dataclasses.fields(Cell)}
    for a in AXES:
        assert a.name in fields, a.name
        assert a.column in COLUMNS, a.column


def test_every_sweep_axis_is_in_descriptions_specs_figures_and_paired_csv():
    cell = Cell(experiment="e", seed=0, dataset=None, preprocess=(), method="leml", label="L",
                params=FrozenMap(), grid_point=FrozenMap(), select=FrozenMap(), threshold=None,
                rank_ratio=0.3, observed_ratio=0.2, repetition=4,
                evaluation=EvaluationSpec(metrics=()), selection=SelectionSpec(metric="p@1"),
                rank=7, labelled_ratio=0.5)
    assert cell.describe() == "L[k/L=0.3,obs=0.2,labelled=0.5,k=7,rep=4]"
    for a in SWEEP_AXES:
        assert f"{a.short}=" in cell.describe()
        assert a.column in FIGURE_X and a.column in CSV_COLUMNS
        assert a.column in {col for col, *_ in plot.SETTINGS}
    from mlx.tables import own

    for a in SPEC_AXES:
        assert a.spec in NUMERIC_AXES and a.spec in SPEC_LAYOUT_AXES and a.spec in own.OWN_AXES
        assert a.column in {col for col, _ in own.SETTING_COLUMNS}


@pytest.mark.parametrize("column", list(TWO))
def test_the_runs_own_table_never_pools_a_setting_axis(column):
    frame = pd.DataFrame(rows_differing_in(column))
    table = wide_table(frame)
    distinct = len(set(TWO[column]))
    assert len(table) == distinct, table
    if distinct == 2:
        means = sorted(float(v.split(" ± ")[0]) for v in table["p@1"])
        assert means == pytest.approx([0.31, 0.51])


@pytest.mark.parametrize("column", [c for c in TWO if c != "label"])
def test_paired_tests_never_merge_a_setting_axis(column):
    rows = rows_differing_in(column) + rows_differing_in(column, label="BR-SQ", offset=0.05)
    for r in rows:
        if r["label"] == "BR-SQ" and column not in ("rank_ratio", "rank"):
            r["rank_ratio"] = r["rank"] = None    # a rankless method pairs with every k
    cmp = paired_comparison(pd.DataFrame(rows), "LEML-SQ", "BR-SQ")
    if column == "params":   # two methods' parameters: every A setting against every B one
        assert sorted((r.params_a, r.params_b) for r in cmp.rows) == sorted(
            (x, y) for x in TWO["params"] for y in TWO["params"])
        cmp.rows = [r for r in cmp.rows if r.params_a == r.params_b]
    assert len(cmp.rows) == len(set(TWO[column]))
    assert all(r.pairs == 3 and r.mean_diff == pytest.approx(-0.05) for r in cmp.rows)


SPEC = {"paper": "leml", "tables": ["6"], "series": ["LEML-SQ"],
        "metrics": {"p@1": {"tolerance": 1.0}}}


@pytest.mark.parametrize("a", SPEC_AXES, ids=lambda a: a.spec)
def test_a_paper_table_refuses_to_pool_an_open_axis_and_keeps_a_laid_out_one(a):
    frame = pd.DataFrame(rows_differing_in(a.column))
    ours = frame.assign(_source=0, _params=frame["params"].map(json.loads))
    rank = "k" if a.spec == "k" else "k_over_L"
    fixed = {"dataset": ["bibtex"]}
    if a.spec not in (rank, "k_over_L"):
        fixed[rank] = [20] if rank == "k" else [0.2]
    spec = parse_spec({**SPEC, "axes": fixed,
                       "layout": {"blocks": ["metric"], "rows": ["dataset"],
                                  "columns": ["series"]}}, require_configs=False)
    with pytest.raises(ConfigError, match=rf"would pool results of 2 {a.title} values .*; add "
                                       rf"'{a.spec}' to layout"):
        build_table(spec, [], ours=ours)
    spec = parse_spec({**SPEC, "axes": fixed,
                       "layout": {"blocks": ["metric"], "rows": ["dataset", a.spec],
                                  "columns": ["series"]}}, require_configs=False)
    cells = build_table(spec, [], ours=ours).cells
    assert sorted(round(c.ours, 2) for c in cells if c.ours is not None) == [31.0, 51.0]


def test_the_pooling_error_lists_numeric_values_in_numeric_order():
    rows = rows_differing_in("rank")
    for r in rows:
        r["rank"] = {20.0: 16.0, 40.0: 8.0}[r["rank"]]
    frame = pd.DataFrame(rows)
    ours = frame.assign(_source=0, _params=frame["params"].map(json.loads))
    spec = parse_spec({**SPEC, "axes": {"dataset": ["bibtex"]},
                       "layout": {"blocks": ["metric"], "rows": ["dataset"],
                                  "columns": ["series"]}}, require_configs=False)
    with pytest.raises(ConfigError, match=r"would pool results of 2 k values \(8, 16\) at "):
        build_table(spec, [], ours=ours)


@pytest.mark.parametrize("a", [a for a in SPEC_AXES if a.spec != "k"], ids=lambda a: a.spec)
def test_compare_makes_an_axis_with_several_values_a_row_axis(a):
    frame = pd.DataFrame(rows_differing_in(a.column))
    spec, _ = compare_spec(frame.assign(**{c: frame[c].astype(str) for c in ("params",)}),
                           "leml", tables=["6"])
    assert a.spec in spec.rows
    assert spec.axes[a.spec] == tuple(float(v) for v in TWO[a.column])


def test_a_rank_that_follows_from_k_over_l_does_not_split_a_row():
    rows = rows_differing_in("rank_ratio")[:3]                  # k/L = 0.2, rank 20
    rows[2] = {**rows[2], "rank": None, "status": "skipped", "split": "", "metric": "",
               "value": None}
    table = wide_table(pd.DataFrame(rows))
    assert len(table) == 1 and table["p@1"].iloc[0].startswith("0.3050 ± ")
