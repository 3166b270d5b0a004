"""Table specs: properties the older tests left open (found by mutation testing)."""

import pandas as pd
import pytest

from mlx.errors import ConfigError
from mlx.tables.spec import (
    UNITS,
    MetricStyle,
    check_spec,
    figure_x_problem,
    fmt_axis,
    load_spec,
    metric_style,
    parse_layout,
    parse_spec,
    split_label,
)

BASE = {"paper": "leml", "series": ["LEML-SQ"], "metrics": ["p@1"]}


def spec(**changes):
    """``BASE`` with ``changes`` (None removes a key), parsed as the spec file ``s.yaml``."""
    raw = {k: v for k, v in {**BASE, **changes}.items() if v is not None}
    return parse_spec(raw, source="s.yaml")


def error(**changes) -> str:
    with pytest.raises(ConfigError) as exc:
        spec(**changes)
    return str(exc.value)


# ----------------------------------------------------------------------------- one-line errors
SOME = "(methods in the paper: BCS, BR, CPLST, LEML, WSABIE)"


@pytest.mark.parametrize("changes, message", [
    (dict(paper=None), "missing required key 'paper'"),
    (dict(series=None), "missing required key 'series'"),
    (dict(metrics=None), "missing required key 'metrics'"),
    (dict(series=[]), "series: must be a non-empty list, e.g. [LEML-SQ, BR-LR]"),
    (dict(series="LEML-SQ"), "series: must be a non-empty list, e.g. [LEML-SQ, BR-LR]"),
    (dict(series=["LEML-SQ", {"name": "LEML-SQ"}]), "series: names a series twice"),
    (dict(series=[{"name": ""}]), "series[0].name: must be a non-empty string. Got '' instead."),
    (dict(series=["LEML-SQ", {"name": 3}]),
     "series[1].name: must be a non-empty string. Got 3 instead."),
    (dict(series=["LEML-SQ", "LEML"]),     # LEML has three losses: the bare name is ambiguous
     "series[1]: cannot tell the paper's method from 'LEML'; add 'paper: {method: ..., loss: "
     f"...}}' {SOME}, or 'paper: none' for a baseline the paper does not report"),
    (dict(series=[{"name": "x", "paper": {"loss": "SQ"}}]),
     "series[0].paper: missing required key 'method'"),
    (dict(series=[{"name": "x", "paper": {"method": "LEMl"}}]),
     "series[0].paper.method: unknown published method 'LEMl'. Did you mean 'LEML'? Available "
     "published methods: BCS, BR, CPLST, LEML, WSABIE"),
    (dict(series=[{"name": "x", "paper": {"method": "LEML"}, "ours": {}}]),
     "series[0].ours: give exactly one of 'label' or 'method'"),
    (dict(series=[{"name": "x", "paper": {"method": "LEML"},
                   "ours": {"label": "x", "method": "leml"}}]),
     "series[0].ours: give exactly one of 'label' or 'method'"),
    (dict(series=[{"name": "x", "paper": {"method": "LEML"},
                   "ours": {"method": "leml", "params": [1]}}]),
     "series[0].ours.params: must be a mapping"),
    (dict(series=[{"name": "x", "paer": {}}]),
     "unknown key 'series[0].paer'. Did you mean 'series[0].paper'? Valid keys under "
     "'series[0]': name, ours, paper"),
    (dict(series=[{"name": "x", "paper": {"method": "LEML", "los": "SQ"}}]),
     "unknown key 'series[0].paper.los'. Did you mean 'series[0].paper.loss'? Valid keys under "
     "'series[0].paper': loss, method"),
    (dict(series=[{"name": "x", "paper": {"method": "LEML"}, "ours": {"lable": "a"}}]),
     "unknown key 'series[0].ours.lable'. Did you mean 'series[0].ours.label'? Valid keys under "
     "'series[0].ours': label, method, params"),
    (dict(series=["LEML-SQ", {"name": "c", "paper": "none", "ours": {"lable": "a"}}]),
     "unknown key 'series[1].ours.lable'. Did you mean 'series[1].ours.label'? Valid keys under "
     "'series[1].ours': label, method, params"),
    (dict(tables=[[6]]), "tables[0]: must be a string. Got [6] instead."),
    (dict(configs=["a.yaml", {"b": 1}]), "configs[1]: must be a string. Got {'b': 1} instead."),
    (dict(results=[None]), "results[0]: must be a string. Got None instead."),
    (dict(axes={"k": [1], "rank": [1]}),
     "unknown key 'axes.rank'. Valid keys under 'axes': dataset, k, k_over_L, labelled, "
     "observed, variant"),
    (dict(tables=[]), "tables: must be a non-empty list"),
    (dict(metrics={}),
     "metrics: must be a non-empty mapping of metric -> options (or a list of metric names)"),
    (dict(metrics="p@1"),
     "metrics: must be a non-empty mapping of metric -> options (or a list of metric names)"),
    (dict(metrics={"p@1": {"tolerance": -0.5}}),
     "metrics.p@1.tolerance: must be a number >= 0 or null. Got -0.5 instead."),
    (dict(metrics={"p@1": {"tolerance": True}}),
     "metrics.p@1.tolerance: must be a number >= 0 or null. Got True instead."),
    (dict(metrics={"p@1": {"tolerance": "1"}}),
     "metrics.p@1.tolerance: must be a number >= 0 or null. Got '1' instead."),
    (dict(metrics={"p@1": {"unit": "pct"}}),
     "metrics.p@1.unit: must be one of '%', 'fraction', 'x100', 's', 'ratio', 'as printed'. "
     "Got 'pct' instead."),
    (dict(metrics={"p@1": {"format": ".2q"}}),
     "metrics.p@1.format: must be a Python format spec such as '.2f'. Got '.2q' instead."),
    (dict(metrics={"p@1": {"format": 2}}),
     "metrics.p@1.format: must be a Python format spec such as '.2f'. Got 2 instead."),
    (dict(metrics={"p@1": {"higher_is_better": "yes"}}),
     "metrics.p@1.higher_is_better: must be true or false. Got 'yes' instead."),
    (dict(metrics={"p@1": {"higher_is_better": 1}}),
     "metrics.p@1.higher_is_better: must be true or false. Got 1 instead."),
    (dict(tables=["6", "16"]),
     "tables[1]: paper 'leml' has no published table '16'. Tables: 3, 4, 5, 6, 7, 8, 9, 10, "
     "11, 12, 13, 14, 15"),
    (dict(axes={"k": []}), "axes.k: must be a non-empty list"),
    (dict(axes={"k_over_L": [0.2, 0]}),
     "axes.k_over_L[1]: must be a fraction in (0, 1] (0.2 for 20%). Got 0 instead."),
    (dict(axes={"k_over_L": [1.01]}),
     "axes.k_over_L[0]: must be a fraction in (0, 1] (0.2 for 20%). Got 1.01 instead."),
    (dict(axes={"observed": [True]}),
     "axes.observed[0]: must be a fraction in (0, 1] (0.2 for 20%). Got True instead."),
    (dict(axes={"observed": ["0.2"]}),
     "axes.observed[0]: must be a fraction in (0, 1] (0.2 for 20%). Got '0.2' instead."),
    (dict(axes={"k": [2, 0]}), "axes.k[1]: must be an int >= 1. Got 0 instead."),
    (dict(axes={"k": 1.5}), "axes.k[0]: must be an int >= 1. Got 1.5 instead."),
    (dict(axes={"k": [True]}), "axes.k[0]: must be an int >= 1. Got True instead."),
    (dict(axes={"observed": [0.2, 1.0]}),
     "axes.observed: lists 2 values but 'observed' is not in layout.blocks, layout.rows or "
     "layout.columns"),
    (dict(series=["LEML-SQ", "LEML-LR"],
          layout={"blocks": [], "rows": ["dataset"], "columns": ["metric"]}),
     "layout: axis 'series' has several values but is not in blocks, rows or columns"),
    (dict(metrics=["p@1", "p@3"], layout={"blocks": []}),
     "layout: axis 'metric' has several values but is not in blocks, rows or columns"),
    (dict(layout={"rows": [], "columns": []}),
     "layout: needs at least one axis in rows or columns"),
    (dict(layout={"rows": "dataset", "columns": ["dataset"]}), "layout: uses an axis twice"),
    (dict(dataset_aliases=["bibtex"]),
     "dataset_aliases: must be a mapping of our dataset name -> the paper's dataset name"),
    (dict(variants=["linear"]), "variants: must be a mapping of variant -> {params: {...}}"),
    (dict(variants={"linear": {"param": {}}}),
     "unknown key 'variants.linear.param'. Did you mean 'variants.linear.params'? Valid keys "
     "under 'variants.linear': label, params"),
    (dict(figures=[{"x": "rank", "metric": "p@1"}, {"x": "param: "}]),
     "figures[1].x: must be one of 'rank_ratio', 'observed_ratio', 'labelled_ratio', 'rank' or "
     "'param:NAME' (a parameter, e.g. 'param:theta'). Got 'param: ' instead."),
    (dict(layout={"row": ["dataset"]}),
     "unknown key 'layout.row'. Did you mean 'layout.rows'? Valid keys under 'layout': blocks, "
     "columns, rows"),
    (dict(metrics={"p@1": {"tol": 1}}),
     "unknown key 'metrics.p@1.tol'. Valid keys under 'metrics.p@1': format, higher_is_better, "
     "title, tolerance, unit"),
    (dict(figures=[{"x": "rank", "metric": "p@1", "dataset": ["bibtex"]}]),
     "unknown key 'figures[0].dataset'. Did you mean 'figures[0].datasets'? Valid keys under "
     "'figures[0]': at, by, datasets, metric, x"),
    (dict(figures=[{"x": "rank_ratio", "metric": "p@3"}]),
     "figures[0].metric: metric 'p@3' is not in 'metrics'"),
    (dict(figures=[{"x": "rank_ratio", "metric": "p@1", "at": [0.2]}]),
     "figures[0].at: must be a mapping such as {observed: 0.2} or {similarity: sigmoid}. Got "
     "[0.2] instead."),
    (dict(figures=[{"x": "rank_ratio", "metric": "p@1", "at": {"k": True}}]),
     "figures[0].at.k: must be a number. Got True instead."),
    (dict(figures=[{"x": "rank_ratio", "metric": "p@1", "at": {"observed": "all"}}]),
     "figures[0].at.observed: must be a number. Got 'all' instead."),
    (dict(figures=[{"x": "rank_ratio", "metric": "p@1", "by": {}}]),
     "figures[0].by: must be a non-empty list"),
    (dict(needs={"method": ["x"]}),
     "unknown key 'needs.method'. Did you mean 'needs.methods'? Valid keys under 'needs': "
     "datasets, methods, note"),
])
def test_every_spec_problem_is_a_one_line_error_at_its_key(changes, message):
    assert error(**changes) == f"s.yaml: {message}"


def test_a_figure_of_an_unknown_metric_names_the_figure_key():
    text = error(figures=[{"x": "rank_ratio", "metric": "top1"}])
    assert text.startswith("s.yaml: figures[0].metric: unknown metric 'top1'. Available metrics: ")
    assert "speedup" in text and "\n" not in text


# ----------------------------------------------------------------------------- what a spec holds
def test_a_spec_holds_every_key_as_given_with_names_and_values_as_text():
    s = parse_spec({
        "paper": "leml", "tables": [6, "9"], "configs": "a.yaml", "results": ["r1", "r2"],
        "series": ["LEML-SQ", {"name": "BR-LR", "ours": {"method": "br",
                                                     "params": {"loss": "logistic"}}},
                   {"name": "const", "paper": "none"}, {"name": "w", "paper": {"method": "WSABIE"}},
                   {"name": "zero", "paper": "none",
                    "ours": {"method": "constant", "params": {"strategy": "zero"}}},
                   {"name": "lr", "paper": {"method": "LEML", "loss": "LR"},
                    "ours": {"label": "LEML-LR"}}],
        "metrics": {"p@1": {}, "hamming": {"unit": "%"}},
        "axes": {"dataset": "bibtex", "k_over_L": [0.2, 1], "observed": 1, "k": [1, 3]},
        "layout": {"rows": ["dataset", "k_over_L", "k"]},
        "dataset_aliases": {"bib": "bibtex", 1: 2},
        "variants": {"v": {"params": {"loss": "squared"}}},
        "figures": [{"x": "param:theta", "metric": "p@1", "at": {"observed": 0.2}, "by": "dataset",
                     "datasets": ["bibtex"]}, {"x": "rank", "metric": "hamming"}],
        "needs": {"methods": "lsvv", "note": "n"}, "name": 5, "description": 7,
    }, source="s.yaml", require_configs=False)
    assert (s.name, s.title, s.source, s.paper, s.description) == ("5", "5", "s.yaml", "leml", "7")
    assert (s.tables, s.configs, s.results) == (("6", "9"), ("a.yaml",), ("r1", "r2"))
    assert [(x.name, x.paper, x.ours) for x in s.series] == [
        ("LEML-SQ", {"method": "LEML", "loss": "SQ"}, {"label": "LEML-SQ"}),
        ("BR-LR", {"method": "BR", "loss": "LR"}, {"method": "br", "params": {"loss": "logistic"}}),
        ("const", {}, {"label": "const"}),
        ("w", {"method": "WSABIE"}, {"label": "w"}),
        ("zero", {}, {"method": "constant", "params": {"strategy": "zero"}}),
        ("lr", {"method": "LEML", "loss": "LR"}, {"label": "LEML-LR"})]
    assert s.axes == {"dataset": ("bibtex",), "k_over_L": (0.2, 1.0), "observed": (1.0,),
                      "k": (1.0, 3.0)}
    assert all(type(v) is float for a in ("k_over_L", "observed", "k") for v in s.axes[a])
    assert (s.blocks, s.rows, s.columns) == (("metric",), ("dataset", "k_over_L", "k"),
                                             ("series",))
    assert s.dataset_aliases == {"bib": "bibtex", "1": "2"}
    assert s.variants == {"v": {"params": {"loss": "squared"}}}
    assert s.metrics == (
        MetricStyle("p@1", "top-1 accuracy", "%", ".2f", 1.0, True),
        MetricStyle("hamming", "Hamming loss", "%", ".2f", 0.1, False))
    assert s.metric("hamming") is s.metrics[1]
    assert s.figures == (
        {"x": "param:theta", "metric": "p@1", "datasets": ["bibtex"], "at": {"observed": 0.2},
         "by": ("dataset",)},
        {"x": "rank", "metric": "hamming", "datasets": None, "at": {}, "by": ()})
    assert s.needs == {"methods": "lsvv", "note": "n"}


def test_a_spec_without_optional_keys_takes_every_published_table_in_numeric_order():
    s = spec()
    assert (s.name, s.title, s.description) == ("table", "table", "")
    assert s.tables == ("3", "4", "5", "6", "7", "8", "9", "10", "11", "12", "13", "14", "15")
    assert (s.configs, s.results, s.axes, s.dataset_aliases, s.variants, s.figures, s.needs) == (
        (), (), {}, {}, {}, (), {})
    assert (s.blocks, s.rows, s.columns) == (("metric",), ("dataset", "k_over_L"), ("series",))
    s = spec(title="T", name="n", axes=None, layout=None, dataset_aliases=None, variants=None,
             figures=None, needs=None)
    assert (s.name, s.title) == ("n", "T")


def test_a_config_that_exists_is_accepted_and_one_that_does_not_is_not(tmp_path):
    config = tmp_path / "c.yaml"
    config.write_text("name: c\n")
    raw = {**BASE, "configs": [str(config), str(tmp_path / "d.yaml")]}
    with pytest.raises(ConfigError) as exc:
        parse_spec(raw, source="s.yaml")
    assert str(exc.value) == f"s.yaml: configs[1]: config file '{tmp_path / 'd.yaml'}' not found"
    assert parse_spec(raw, source="s.yaml", require_configs=False).configs[1].endswith("d.yaml")
    assert parse_spec({**BASE, "configs": [str(config)]}, source="s.yaml").configs == (
        str(config),)


def test_the_metric_unit_comes_from_the_published_tables_the_spec_reads():
    # LSVV publishes Hamming loss in % and RMSE x100: the default tolerances follow the unit.
    s = parse_spec({"paper": "lsvv", "series": ["LSVV"], "metrics": ["hamming", "rmse", "error"]},
                   source="s.yaml")
    assert [(m.unit, m.tolerance, m.fmt) for m in s.metrics] == [
        ("%", 0.1, ".2f"), ("x100", 0.5, ".2f"), ("%", 1.0, ".2f")]
    s = parse_spec({"paper": "similarity", "series": ["KR"], "metrics": ["mse"]}, source="s.yaml")
    assert [(m.unit, m.tolerance, m.fmt) for m in s.metrics] == [("as printed", None, ".2g")]
    # An option wins over the published unit.
    s = parse_spec({"paper": "lsvv", "series": ["LSVV"],
                    "metrics": {"rmse": {"unit": "fraction"}}}, source="s.yaml")
    assert [(m.unit, m.tolerance, m.fmt) for m in s.metrics] == [("fraction", 0.005, ".4f")]


@pytest.mark.parametrize("name, style", [
    ("p@3", ("p@3", "top-3 accuracy", "%", ".2f", 1.0, True)),
    ("ndcg@5", ("ndcg@5", "nDCG@5", "%", ".2f", 1.0, True)),
    ("hamming", ("hamming", "Hamming loss", "fraction", ".4f", 0.001, False)),
    ("auc", ("auc", "average AUC", "fraction", ".4f", 0.01, True)),
    ("error", ("error", "test error", "%", ".2f", 1.0, False)),
    ("rmse", ("rmse", "RMSE", "fraction", ".4f", 0.005, False)),
    ("mse", ("mse", "MSE", "fraction", ".4f", None, False)),
    ("mae", ("mae", "MAE", "fraction", ".4f", None, False)),
    ("micro_f1", ("micro_f1", "micro_f1", "fraction", ".4f", None, True)),
    ("fit_seconds", ("fit_seconds", "training time", "s", ".0f", None, False)),
    ("speedup", ("speedup", "speed-up", "ratio", ".2f", None, True)),
])
def test_each_metric_has_its_default_title_unit_format_tolerance_and_direction(name, style):
    assert metric_style(name) == MetricStyle(*style)


def test_the_unit_of_a_published_metric_is_the_papers_and_else_the_default():
    pub = pd.DataFrame({"metric": ["rmse", "p@1"], "unit": ["x100", "fraction"]})
    assert metric_style("rmse", pub=pub).unit == "x100"
    assert metric_style("p@1", pub=pub).unit == "fraction"
    assert metric_style("p@3", pub=pub).unit == "%"                # not published: default
    assert metric_style("micro_f1", pub=pub).unit == "fraction"
    s = spec(metrics=["micro_f1", "p@1"])               # one the paper never reports
    assert [m.unit for m in s.metrics] == ["fraction", "%"]


def test_metric_options_replace_the_defaults():
    m = metric_style("p@1", {"unit": "fraction", "format": ".3f", "tolerance": 0,
                             "higher_is_better": False, "title": 7})
    assert m == MetricStyle("p@1", "7", "fraction", ".3f", 0.0, False)
    assert type(m.tolerance) is float
    assert metric_style("hamming", {"unit": "%"}).tolerance == 0.1
    assert metric_style("rmse", {"unit": "x100"}).tolerance == 0.5
    assert metric_style("auc", {"tolerance": None}).tolerance is None
    assert metric_style("p@1", {"tolerance": 2}).tolerance == 2.0


def test_a_metric_problem_names_the_key_path_given():
    with pytest.raises(ConfigError) as exc:
        metric_style("p@1", {"unit": "pc"}, source="f.yaml", key_path="figures[0].metric")
    assert str(exc.value).startswith("f.yaml: figures[0].metric.unit: must be one of '%'")
    with pytest.raises(ConfigError) as exc:
        metric_style("p@0", source="f.yaml")
    assert str(exc.value) == ("f.yaml: metrics.p@0: invalid metric 'p@0': k in 'p@<k>' must be an "
                              "integer >= 1, as in 'p@3'; got '0'")


def test_a_metric_heading_and_differences_as_printed():
    assert metric_style("p@1").heading() == "top-1 accuracy (%)"
    assert metric_style("rmse", {"unit": "x100"}).heading() == "RMSE (×100)"
    assert metric_style("hamming").heading() == "Hamming loss"
    m = metric_style("p@1")
    assert [m.fmt_diff(d) for d in (-0.001, 0.0, -0.01, 0.5, -2.5)] == [
        "+0.00", "+0.00", "-0.01", "+0.50", "-2.50"]
    assert m.fmt_value(58.333) == "58.33"
    assert [metric_style(n, {"unit": u}).factor for n, u in (("p@1", "%"), ("p@1", "x100"),
                                                             ("p@1", "fraction"))] == [100, 100, 1]
    assert set(UNITS) == {"%", "fraction", "x100", "s", "ratio", "as printed"}


PAIRS = {("LEML", "SQ"), ("LEML", "LR"), ("WSABIE", "WAR"), ("LRC-VV", ""), ("SS-VV", "SQ"),
         ("SS-VV", "LR")}


@pytest.mark.parametrize("label, paper", [
    ("LEML-SQ", {"method": "LEML", "loss": "SQ"}),
    ("leml-lr", {"method": "LEML", "loss": "LR"}),        # the paper's spelling
    ("WSABIE", {"method": "WSABIE"}),                      # one loss: the name is enough
    ("wsabie-war", {"method": "WSABIE", "loss": "WAR"}),
    ("lrc-vv", {"method": "LRC-VV"}),                      # a hyphen inside the method's name
    ("SS-VV-LR", {"method": "SS-VV", "loss": "LR"}),       # the loss follows the last hyphen
    ("SS-VV", None),
    ("LEML", None),                                        # two losses: ambiguous
    ("LEML-SH", None), ("BR-SQ", None), ("SQ", None), ("-SQ", None), ("LEMLSQ", None),
])
def test_a_label_names_a_published_method_and_loss(label, paper):
    assert split_label(label, PAIRS) == paper


def test_axis_values_at_the_bounds_are_accepted_as_floats():
    s = spec(axes={"k_over_L": [1, 0.001], "observed": 1.0, "labelled": [0.5], "k": [1, 2]},
             layout={"rows": ["dataset", "k_over_L", "k"]})
    assert s.axes == {"k_over_L": (1.0, 0.001), "observed": (1.0,), "labelled": (0.5,),
                      "k": (1.0, 2.0)}
    assert spec(axes={"dataset": [1, "b"]}, layout={"rows": ["dataset"]}).axes == {
        "dataset": ("1", "b")}


def test_a_layout_needs_rows_or_columns_not_both():
    assert spec(layout={"rows": []}).columns == ("series",)
    assert spec(layout={"rows": ["dataset", "series"], "columns": []}).columns == ()


def test_variants_may_be_fixed_or_laid_out():
    s = parse_spec({"paper": "lsvv", "series": ["LSVV"], "metrics": ["error"],
                    "axes": {"variant": ["linear", "rff"]},
                    "layout": {"columns": ["variant", "series"]}}, source="s.yaml")
    assert s.axes == {"variant": ("linear", "rff")} and s.columns == ("variant", "series")


def test_a_layout_takes_defaults_for_the_parts_it_leaves_out():
    defaults = (["metric"], ["dataset"], ["series"])
    axes = ("metric", "dataset", "series", "k")
    assert parse_layout({}, axes, defaults, "s") == (
        {"blocks": ("metric",), "rows": ("dataset",), "columns": ("series",)},
        ["metric", "dataset", "series"])
    assert parse_layout({"rows": "k", "blocks": None}, axes, defaults, "s") == (
        {"blocks": (), "rows": ("k",), "columns": ("series",)}, ["k", "series"])
    with pytest.raises(ConfigError) as exc:
        parse_layout({"rows": ["k", "kk"]}, axes, defaults, "s")
    assert str(exc.value) == ("s: layout.rows[1]: unknown axis 'kk'. Did you mean 'k'? Available "
                              "axes: dataset, k, metric, series")
    with pytest.raises(ConfigError) as exc:
        parse_layout({"rows": ["k"], "columns": ["k"]}, axes, defaults, "s")
    assert str(exc.value) == "s: layout: uses an axis twice"


@pytest.mark.parametrize("x", ["rank_ratio", "observed_ratio", "labelled_ratio", "rank",
                               "param:theta", "param:x "])
def test_a_figure_axis_is_a_sweep_column_or_a_named_parameter(x):
    assert figure_x_problem(x) is None


@pytest.mark.parametrize("x", ["param:", "param:  ", "theta", None, 3, "k_over_L"])
def test_anything_else_is_not_a_figure_axis(x):
    assert figure_x_problem(x) == (
        "must be one of 'rank_ratio', 'observed_ratio', 'labelled_ratio', 'rank' or 'param:NAME' "
        f"(a parameter, e.g. 'param:theta'). Got {x!r} instead.")


def test_axis_values_as_printed():
    assert [fmt_axis("k_over_L", 0.2), fmt_axis("observed", 1.0), fmt_axis("k", 5.0)] == [
        "20%", "100%", "5"]


# ----------------------------------------------------------------------------- spec files
def test_a_spec_file_is_named_by_its_stem_and_takes_overrides(tmp_path):
    path = tmp_path / "leml-table6.yaml"
    path.write_text("paper: leml\nseries: [LEML-SQ]\nmetrics: {p@1: {}}\n")
    s = load_spec(path)
    assert (s.name, s.title, s.source) == ("leml-table6", "leml-table6", str(path))
    s = load_spec(path, overrides=["title=Six", "metrics.p@1.tolerance=2"])
    assert (s.name, s.title, s.metric("p@1").tolerance) == ("leml-table6", "Six", 2.0)
    path.write_text("paper: leml\nseries: [LEML-SQ]\nmetrics: [p@1]\nconfigs: [nope.yaml]\n")
    assert load_spec(path, require_configs=False).configs == ("nope.yaml",)
    with pytest.raises(ConfigError):
        load_spec(path)
    path.write_text("paper: leml\nseries: [LEML-SQ]\nmetrics: [p@1]\n")
    with pytest.raises(ConfigError) as exc:
        load_spec(path, overrides=["metrics.p@1.tolerance=2"])
    assert str(exc.value) == (f"{path}: metrics: is of type list, not a mapping; override "
                              "'metrics.p@1.tolerance=2' cannot set 'p@1' in it")


def test_an_empty_spec_file_says_what_a_spec_needs(tmp_path):
    path = tmp_path / "e.yaml"
    path.write_text("")
    with pytest.raises(ConfigError) as exc:
        load_spec(path)
    assert "a table spec needs at least 'paper', 'series' and 'metrics'" in str(exc.value)


# ----------------------------------------------------------------------------- check_spec
def test_check_lists_everything_missing_once_with_how_to_get_it(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("MLX_DATA_PATH", str(tmp_path / "none"))
    (tmp_path / "reg.yaml").write_text("name: reg\ndataset: bibtex\nmethods: [br]\n")
    (tmp_path / "own.yaml").write_text("name: own\ndataset: {format: libsvm-multilabel, "
                                       "train: tr.svm, test: te.svm}\nmethods: [br]\n")
    (tmp_path / "syn.yaml").write_text("name: syn\ndataset: {synthetic: {n_samples: 50, "
                                       "n_features: 5, n_labels: 4, rank: 2, seed: 0}}\n"
                                       "methods: [br]\n")
    (tmp_path / "new.yaml").write_text("name: new\ndataset: bibtex\nmethods: [{name: nomethod}]\n")
    s = parse_spec({**BASE, "configs": ["absent.yaml", "new.yaml", "reg.yaml", "own.yaml",
                                        "syn.yaml", "reg.yaml"],
                    "needs": {"methods": ["br", "notyet"],
                              "datasets": ["nosuch", "bibtex", "bibtex"],
                              "note": "  needs the\n   authors' code  "}},
                   source="s.yaml", require_configs=False)
    bib = "bibtex/bibtex-train.arff.gz, bibtex/bibtex-test.arff.gz"
    assert check_spec(s) == [
        "absent.yaml: config not written yet",
        "new.yaml: method 'nomethod' is not implemented yet (mlx/methods/nomethod.py)",
        f"reg.yaml: data for 'bibtex' not found: {bib} (run 'mlx datasets fetch bibtex' or put "
        "the files on MLX_DATA_PATH)",
        "own.yaml: data for 'tr' not found: tr.svm, te.svm (put those files under ./datasets or "
        "a directory on MLX_DATA_PATH; own.yaml says where they come from)",
        "method 'notyet' is not implemented yet (mlx/methods/notyet.py)",
        "dataset 'nosuch' is not in the dataset registry (mlx/data/registry.yaml); its files are "
        "not available here",
        f"dataset 'bibtex': files not found: {bib} (run 'mlx datasets fetch bibtex' or put the "
        "files on MLX_DATA_PATH)",
        "note: needs the authors' code"]


def test_check_of_a_ready_spec_is_empty_and_keeps_its_note_to_itself(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "syn.yaml").write_text("name: syn\ndataset: {synthetic: {n_samples: 50, "
                                       "n_features: 5, n_labels: 4, rank: 2, seed: 0}}\n"
                                       "methods: [br]\n")
    assert check_spec(spec(configs=["syn.yaml"], needs={"methods": "br", "note": "x"})) == []
    assert check_spec(spec(needs={"methods": "notyet"})) == [
        "method 'notyet' is not implemented yet (mlx/methods/notyet.py)"]


def test_check_raises_for_a_config_that_is_wrong_rather_than_waiting(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "bad.yaml").write_text("name: bad\ndataset: bibtexx\nmethods: [br]\n")
    with pytest.raises(ConfigError) as exc:
        check_spec(spec(configs=["bad.yaml"]))
    assert "unknown dataset 'bibtexx'" in str(exc.value)


def test_a_spec_reads_published_values_of_its_own_paper_only():
    s = parse_spec({"paper": "mom", "series": ["LEML-SQ", "MoM"], "metrics": ["fit_seconds"],
                    "layout": {"rows": ["dataset"]}}, source="s.yaml")
    assert s.tables == ("3",) and [x.paper for x in s.series] == [
        {"method": "LEML", "loss": "SQ"}, {"method": "MoM"}]
