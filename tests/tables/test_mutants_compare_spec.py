"""``mlx compare``: the spec it builds, its options and its errors (found by mutation testing)."""

import pandas as pd
import pytest

from mlx.errors import MlxError, UnknownNameError
from mlx.runner.results import COLUMNS
from mlx.tables.compare import compare_spec
from mlx.tables.spec import MetricStyle, Series
from tests.tables.test_mutants_compare import row

P1 = MetricStyle("p@1", "top-1 accuracy", "%", ".2f", 1.0, True)
LEML_TABLES = ("11", "12", "13", "14", "15", "10", "6", "7", "8", "9", "3", "4", "5")


def frame(*rows):
    return pd.DataFrame(list(rows), columns=COLUMNS)


def test_the_spec_has_a_row_axis_for_each_setting_with_several_values_and_fixes_the_others():
    f = frame(row("LEML-SQ", "leml", "squared", 0.2, "p@1", 0.6),
              row("LEML-SQ", "leml", "squared", 0.4, "p@1", 0.6, observed=0.2),
              row("LEML-SQ", "leml", "squared", 0.4, "micro_f1", 0.6))
    spec, notes = compare_spec(f, "leml", source="res")
    assert (spec.name, spec.title, spec.source, spec.paper) == (
        "compare-leml", "Comparison with LEML (res)", "res", "leml")
    # the fuller tables first (by their number of published values, ties in table order)
    assert spec.tables == LEML_TABLES
    assert spec.series == (Series("LEML-SQ", {"method": "LEML", "loss": "SQ"},
                                  {"label": "LEML-SQ"}),)
    assert spec.axes == {"dataset": ("bibtex",), "k_over_L": (0.2, 0.4), "observed": (0.2, 1.0)}
    assert (spec.blocks, spec.rows, spec.columns) == (
        ("metric",), ("dataset", "k_over_L", "observed"), ("series",))
    assert spec.metrics == (P1,)
    assert (spec.configs, spec.results, spec.dataset_aliases, spec.variants) == ((), (), {}, {})
    assert notes == ["not published in leml: micro_f1"]
    # One value of each: fixed, not a row.
    spec, notes = compare_spec(f.iloc[:1], "leml")
    assert spec.rows == ("dataset",) and notes == []
    assert spec.title == "Comparison with LEML (results)" and spec.source == "results"
    assert spec.axes == {"dataset": ("bibtex",), "k_over_L": (0.2,), "observed": (1.0,)}


def test_ratios_equal_up_to_float_noise_are_one_setting():
    f = frame(row("LEML-SQ", "leml", "squared", 0.2, "p@1", 0.6),
              row("LEML-SQ", "leml", "squared", 0.2 + 1e-12, "p@1", 0.6, rep=1))
    spec, _ = compare_spec(f, "leml")
    assert spec.axes["k_over_L"] == (0.2,) and spec.rows == ("dataset",)


def test_a_paper_that_prints_absolute_ranks_gets_k_instead_of_k_over_l():
    f = frame(row("LEML-SQ", "leml", "squared", None, "fit_seconds", None, dataset="eurlex",
                  rank=250), row("LEML-SQ", "leml", "squared", None, "fit_seconds", None,
                                 dataset="eurlex", rank=500))
    f["rank_ratio"] = 0.5                                 # what k/L our ranks were, too
    spec, _ = compare_spec(f, "leml", tables=["4"], metrics=["fit_seconds"])
    assert spec.rows == ("dataset", "k") and spec.tables == ("4",)
    assert spec.axes == {"dataset": ("eurlex",), "k": (250.0, 500.0), "observed": (1.0,)}
    # With bibtex (k/L) and eurlex (k) in the scope, the paper gives k/L: it stands for both.
    f = pd.concat([f, frame(row("LEML-SQ", "leml", "squared", 0.2, "p@1", 0.6))])
    spec, _ = compare_spec(f, "leml")
    assert spec.axes == {"dataset": ("eurlex", "bibtex"), "k_over_L": (0.2, 0.5),
                         "observed": (1.0,)}
    # Where the paper gives k/L, the absolute rank of our rows is not an axis.
    f = frame(row("LEML-SQ", "leml", "squared", 0.2, "p@1", 0.6, rank=32),
              row("LEML-SQ", "leml", "squared", 0.2, "p@1", 0.6, rank=64, rep=1))
    spec, _ = compare_spec(f, "leml")
    assert spec.axes == {"dataset": ("bibtex",), "k_over_L": (0.2,), "observed": (1.0,)}


def test_a_paper_with_variants_has_them_as_columns():
    f = frame(row("LSVV", "lsvv", None, None, "error", 0.1, dataset="wine"))
    spec, _ = compare_spec(f, "lsvv", tables=["5"])
    assert spec.columns == ("variant", "series") and spec.tables == ("5",)
    assert spec.series[0].paper == {"method": "LSVV"}


def test_metrics_asked_for_are_used_in_their_order_and_pseudo_metrics_are_known():
    f = frame(row("LEML-SQ", "leml", "squared", 0.2, "p@1", 0.6))
    spec, notes = compare_spec(f, "leml", metrics=["fit_seconds", "P@1"])
    assert [m.name for m in spec.metrics] == ["fit_seconds", "p@1"] and notes == []
    spec, notes = compare_spec(f, "leml", metrics=["p@1", "micro_f1", "f1"])
    assert [m.name for m in spec.metrics] == ["p@1"]
    assert notes == ["not published in leml: micro_f1, f1"]


def test_results_older_than_an_axis_are_compared_at_its_default():
    f = frame(row("LEML-SQ", "leml", "squared", 0.2, "p@1", 0.6)).drop(
        columns=["labelled_ratio", "rank"])
    spec, _ = compare_spec(f, "leml")       # all rows labelled; no absolute rank
    assert spec.axes == {"dataset": ("bibtex",), "k_over_L": (0.2,), "observed": (1.0,),
                         "labelled": (1.0,)}


def test_an_unknown_metric_asked_for_lists_the_metrics_of_the_results():
    f = frame(row("LEML-SQ", "leml", "squared", 0.2, "p@1", 0.6),
              row("LEML-SQ", "leml", "squared", 0.2, "micro_f1", 0.6))
    with pytest.raises(UnknownNameError) as exc:
        compare_spec(f, "leml", metrics=["p@1", "p@x"])
    assert str(exc.value) == ("unknown metric 'p@x'. Did you mean 'p@1'? Available metrics: "
                              "micro_f1, p@1")


@pytest.mark.parametrize("kwargs, rows, message", [
    (dict(tables=["6", "16"]), [row("LEML-SQ", "leml", "squared", 0.2, "p@1", 0.6)],
     "paper 'leml' has no published table '16'. Tables: 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, "
     "14, 15"),
    (dict(metrics=["micro_f1", "f1"]), [row("LEML-SQ", "leml", "squared", 0.2, "p@1", 0.6)],
     "res: none of the metrics (micro_f1, f1) is published in 'leml' (auc, fit_seconds, "
     "hamming, p@1, p@3, p@5)"),
    ({}, [row("x", "foo", "squared", 0.2, "p@1", 0.6), row("", "foo", "squared", 0.2, "p@1", 0.6),
          row("y", "bar", None, 0.2, "p@1", 0.6)],
     "res: no result label matches a method of 'leml' (labels: x, y; methods in the paper: BCS, "
     "BR, CPLST, LEML, WSABIE)"),
])
def test_what_cannot_be_compared_is_a_one_line_error(kwargs, rows, message):
    with pytest.raises(MlxError) as exc:
        compare_spec(frame(*rows), "leml", source="res", **kwargs)
    assert str(exc.value) == message


def test_results_with_an_unmatched_label_are_compared_with_a_note():
    f = frame(row("LEML-SQ", "leml", "squared", 0.2, "p@1", 0.6),
              row("mystery", "foo", None, 0.2, "p@1", 0.6),
              row("other", "bar", None, 0.2, "p@1", 0.6))
    spec, notes = compare_spec(f, "leml")
    assert notes == ["no published counterpart in leml for: mystery, other"]


def test_the_display_unit_of_a_metric_is_the_papers():
    # LSVV prints RMSE x100 and Hamming loss in %.
    f = frame(row("LSVV", "lsvv", None, None, "rmse", 0.1, dataset="scene"),
              row("LSVV", "lsvv", None, None, "hamming", 0.1, dataset="scene"))
    spec, _ = compare_spec(f, "lsvv")
    assert [(m.name, m.unit, m.tolerance) for m in spec.metrics] == [
        ("rmse", "x100", 0.5), ("hamming", "%", 0.1)]
