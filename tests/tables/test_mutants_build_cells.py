"""Paper tables: reading results, cell texts and fixed datasets (found by mutation testing)."""

import json
from pathlib import Path

import pandas as pd
import pytest

from mlx.errors import ConfigError, MlxError
from mlx.runner.results import COLUMNS
from mlx.tables.build import (
    RenderedTable,
    Source,
    TableCell,
    build_table,
    config_output,
    ours_frame,
    params_dict,
    read_sources,
    spec_variants,
)
from mlx.tables.render import render_csv
from mlx.tables.spec import metric_style, parse_spec
from tests.tables.test_mutants_build import SPEC, _cells, _row

P1 = metric_style("p@1")


@pytest.mark.parametrize("ours, std, n_rep, pub, state, markdown, latex", [
    (60.0, 1.5, 3, 58.33, "within", "60.00 (1.50) / 58.33 (+1.67)",
     r"60.00 (1.50) / 58.33 {\scriptsize (+1.67)}"),
    (60.0, 1.5, 3, 58.33, "better", "60.00 (1.50) / 58.33 (+1.67) ▲",
     r"60.00 (1.50) / 58.33 {\scriptsize (+1.67)} $\blacktriangle$"),
    (56.0, None, 3, 58.33, "worse", "56.00 / 58.33 (-2.33) ▼",
     r"56.00 / 58.33 {\scriptsize (-2.33)} $\blacktriangledown$"),
    (60.0, 1.5, 1, 58.33, "compared", "60.00 / 58.33 (+1.67)",
     r"60.00 / 58.33 {\scriptsize (+1.67)}"),
    (60.0, None, 1, None, "n/p", "60.00 / n/p", "60.00 / n/p"),
    (None, None, 0, 58.33, "not run", "— / 58.33", "-- / 58.33"),
    (None, None, 0, None, "empty", "— / n/p", "-- / n/p"),
    (None, None, 0, 58.33, "failed/skipped", "failed/skipped / 58.33", "failed/skipped / 58.33"),
])
def test_a_cell_prints_ours_published_difference_and_mark(ours, std, n_rep, pub, state,
                                                          markdown, latex):
    cell = TableCell({}, P1, ours, std, n_rep, pub, None, "6", state)
    assert cell.text() == markdown
    assert cell.text(latex=True) == latex
    assert cell.diff == (None if ours is None or pub is None else ours - pub)


def _results(directory: Path, rows) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    pd.DataFrame(rows, columns=COLUMNS).to_csv(directory / "results.csv", index=False)
    return directory


def _r(cell, metric, value, **kw):
    return {"run_id": "r", "cell_id": cell, "dataset": "bibtex", "method": "leml",
            "label": "LEML-SQ", "params": json.dumps({"loss": "squared"}), "rank_ratio": 0.2,
            "observed_ratio": 1.0, "repetition": 0, "split": "test", "metric": metric,
            "value": value, "status": "ok", "message": "", "fit_seconds": 3.0, **kw}


def test_sources_are_read_from_a_directory_a_csv_path_or_a_config(tmp_path):
    res = _results(tmp_path / "res", [_r("a", "p@1", 0.5)])
    (res / "manifest.json").write_text('{"run_id": "r"}')
    other = _results(tmp_path / "other", [_r("b", "p@1", 0.6)])
    (other / "manifest.json").write_text("{not json")
    cfg = tmp_path / "c.yaml"
    cfg.write_text(f"name: c\noutput: {tmp_path / 'empty'}\n")
    spec = parse_spec({"paper": "leml", "series": ["LEML-SQ"], "metrics": ["p@1"],
                       "configs": [str(cfg)],
                       "results": [str(res), str(other / "results.csv")]}, source="s")
    cfg_src, dir_src, csv_src = read_sources(spec)
    assert (cfg_src.given, cfg_src.kind, cfg_src.results) == (str(cfg), "config",
                                                              tmp_path / "empty")
    assert cfg_src.frame is None and cfg_src.manifest is None
    assert (dir_src.kind, dir_src.results, dir_src.manifest) == ("results", res, {"run_id": "r"})
    assert list(dir_src.frame["cell_id"]) == ["a"]
    assert (csv_src.results, csv_src.manifest) == (other, None)     # unreadable manifest
    assert list(csv_src.frame["cell_id"]) == ["b"]
    assert config_output(str(cfg)) == ("c", str(tmp_path / "empty"))


def test_our_rows_are_typed_aliased_and_read_once_without_selection_candidates(tmp_path):
    first = pd.DataFrame([
        _r("a", "p@1", "0.5"),
        _r("a", "p@1", 0.9),                                  # the same cell again: dropped
        _r("a", "p@3", 0.4, split="validation"),              # a selection candidate
        _r("b", "p@1", 0.7, dataset="bib", params="[1]", label=None, message=None),
    ], columns=COLUMNS)
    old = first.drop(columns=["labelled_ratio", "rank"]).iloc[:1].assign(cell_id="c")
    sources = [Source("x", "results", Path("x"), first, None),
               Source("e", "results", Path("e"), None, None),
               Source("o", "results", Path("o"), old, None)]
    f = ours_frame(sources, {"bib": "bibtex"})
    assert list(f["cell_id"]) == ["a", "b", "c"]
    assert list(f["_source"]) == [0, 0, 2]
    assert list(f["value"]) == [0.5, 0.7, 0.5]
    assert list(f["dataset"]) == ["bibtex", "bibtex", "bibtex"]
    assert list(f["label"]) == ["LEML-SQ", "", "LEML-SQ"] and f["message"].tolist() == [""] * 3
    assert list(f["_params"]) == [{"loss": "squared"}, {}, {"loss": "squared"}]
    assert f["labelled_ratio"].isna().tolist() == [True, True, False]    # "o": the default
    assert f["labelled_ratio"].iloc[2] == 1.0
    assert f["rank"].isna().all() and f["rank_ratio"].tolist() == [0.2, 0.2, 0.2]


def test_no_rows_at_all_is_an_empty_frame_with_every_column():
    f = ours_frame([Source("e", "results", Path("e"), None, None),
                    Source("z", "results", Path("z"), pd.DataFrame(columns=COLUMNS), None)])
    assert len(f) == 0
    assert list(f.columns) == ["_source", "cell_id", "dataset", "method", "label", "params",
                               "rank_ratio", "observed_ratio", "labelled_ratio", "rank",
                               "repetition", "split", "metric", "value", "status", "message",
                               "fit_seconds", "_params"]


@pytest.mark.parametrize("text, out", [('{"a": 1}', {"a": 1}), ("[1, 2]", {}), ("x", {}),
                                       (None, {}), ("", {}), (float("nan"), {})])
def test_parameters_are_a_json_mapping_or_nothing(text, out):
    assert params_dict(text) == out


def _table(tmp_path, rows, **layout):
    """A table of our LEML-SQ rows alone (a series the paper does not report): its datasets
    are ours only."""
    res = _results(tmp_path / "res", rows)
    spec = parse_spec({"paper": "leml", "tables": ["6"], "results": [str(res)],
                       "series": [{"name": "ours", "paper": "none", "ours": {"label": "LEML-SQ"}}],
                       "metrics": ["p@1", "fit_seconds"],
                       "axes": {"k_over_L": [0.2], "observed": [1.0]},
                       "layout": {"rows": ["k_over_L"], **layout}}, source="s")
    return build_table(spec, read_sources(spec))


def test_a_table_of_one_dataset_may_leave_it_out_of_the_layout(tmp_path):
    table = _table(tmp_path, [_r("a", "p@1", 0.6), _r("a", "p@3", 0.5)])
    cells = {c.metric.name: c for c in table.cells}
    assert cells["p@1"].key["dataset"] == "bibtex"
    assert cells["p@1"].text() == "60.00 / n/p"
    assert cells["fit_seconds"].ours == 3.0 and cells["fit_seconds"].n_rep == 1   # once a cell
    assert [b.title for b in table.blocks] == ["top-1 accuracy (%)", "training time (s)"]


def test_a_table_of_several_datasets_must_lay_them_out_or_fix_one(tmp_path):
    with pytest.raises(ConfigError) as exc:
        _table(tmp_path, [_r("a", "p@1", 0.6), _r("b", "p@1", 0.6, dataset="delicious")])
    assert str(exc.value) == ("s: layout: the table has 2 datasets (bibtex, delicious) but "
                              "'dataset' is not in blocks, rows or columns; add it, or pick one "
                              "with axes.dataset")


def _blocks(rows, tables=("6",)):
    spec = parse_spec({"paper": "leml", "tables": list(tables), "series": ["LEML-SQ"],
                       "metrics": ["p@1"], "axes": {"dataset": ["bibtex"], "observed": [1.0]},
                       "layout": {"blocks": ["metric", "k_over_L"], "rows": ["dataset"]}},
                      source="s")
    table = build_table(spec, [Source("x", "results", Path("x"),
                                      pd.DataFrame(rows, columns=COLUMNS), None)])
    return [(b.title, b.tables, [(key, [c.text() for c in cells]) for key, cells in b.rows])
            for b in table.blocks]


def test_blocks_by_a_numeric_axis_are_titled_with_its_value_and_hold_every_setting():
    rows = [_r("a", "p@1", 0.6), _r("b", "p@1", 0.61, rank_ratio=0.2 + 1e-12, repetition=1),
            _r("c", "p@1", 0.7, rank_ratio=0.3),
            _r("d", "", None, rank_ratio=0.4, status="skipped", split=""),
            _r("e", "", None, rank_ratio=0.4, status="failed", split="", repetition=1),
            _r("f", "p@1", None, rank_ratio=0.6)]          # no value: not a result
    bib = ("bibtex",)
    assert _blocks(rows) == [
        ("top-1 accuracy (%), k/L = 20%", ["6"], [(bib, ["60.50 (0.71) / 58.33 (+2.17) ▲"])]),
        ("top-1 accuracy (%), k/L = 30%", [], [(bib, ["70.00 / n/p"])]),
        ("top-1 accuracy (%), k/L = 40%", ["6"], [(bib, ["failed/skipped / 60.99"])]),
        ("top-1 accuracy (%), k/L = 60%", ["6"], [(bib, ["— / 61.99"])]),
        ("top-1 accuracy (%), k/L = 80%", ["6"], [(bib, ["— / 63.38"])]),
        ("top-1 accuracy (%), k/L = 100%", ["6"], [(bib, ["— / 63.94"])])]


def test_a_value_two_tables_print_is_credited_to_the_first_table_of_the_spec():
    # LEML Tables 5 and 12 both print BCS's P@3 on autofood at k/L = 40%, 20% observed.
    rows = [{**_r("a", "p@3", 0.35, observed_ratio=0.2, rank_ratio=0.4), "dataset": "autofood",
             "label": "BCS", "method": "bcs"}]
    for tables in (["5", "12"], ["12", "5"]):
        spec = parse_spec({"paper": "leml", "tables": tables, "series": ["BCS"],
                           "metrics": ["p@3"], "axes": {"dataset": ["autofood"],
                                                        "observed": [0.2], "k_over_L": [0.4]},
                           "layout": {"rows": ["dataset"]}}, source="s")
        table = build_table(spec, [Source("x", "results", Path("x"),
                                          pd.DataFrame(rows, columns=COLUMNS), None)])
        (cell,) = table.cells
        assert (cell.table, cell.text()) == (tables[0], "35.00 / 35.09 (-0.09)")
        assert table.blocks[0].tables == [tables[0]]


def test_the_variants_of_a_spec_are_those_of_its_papers_tables():
    def variants(paper, tables, series, metric):
        return spec_variants(parse_spec({"paper": paper, "tables": tables, "series": [series],
                                         "metrics": [metric]}, source="s"))

    assert variants("leml", ["5", "7"], "LEML-SQ", "p@1") == ()    # LSVV's 5 and 7 have some
    assert variants("lsvv", ["5"], "LSVV", "error") == ("linear", "rff")
    assert variants("similarity", ["1"], "KR", "mse") == ("sigmoid", "manhattan")


def test_a_variant_selects_rows_by_every_parameter_and_its_label_together(tmp_path):
    # Only the row matching all of the variant's parameters and its label is the variant's:
    # the others would be pooled with it (an error) if one condition were dropped.
    rows = [_row("RegLand-Sp", {"model": "regland_sp", "kernel": "s"}, 0.0061, r)
            for r in (0, 1)]
    rows += [_row("RegLand-Sp", {"model": "other", "kernel": "s"}, 0.0069, r) for r in (0, 1)]
    rows += [_row("RegLand-Sp", {"model": "regland_sp", "kernel": "m"}, 0.0070, r)
             for r in (0, 1)]
    rows += [_row("Other", {"model": "regland_sp", "kernel": "s"}, 0.0071, r) for r in (0, 1)]
    body = SPEC.replace("series: [RegLand-Sp]",
                        "series: [{name: RegLand-Sp, ours: {method: landmark}}]")
    cells = _cells(tmp_path, rows, body + "variants: {sigmoid: {label: RegLand-Sp, params: "
                                          "{model: regland_sp, kernel: s}}, manhattan: "
                                          "{label: RegLand-Sp, params: {kernel: m}}}\n")
    assert cells[0].startswith("6.10e-03 (0.00e+00) / 6.20e-03")
    assert cells[1].startswith("7.00e-03 (0.00e+00) / 6.00e-03")


def test_blocks_by_dataset_are_titled_with_its_name(tmp_path):
    res = _results(tmp_path / "res", [_r("a", "p@1", 0.6),
                                      _r("b", "p@1", 0.5, dataset="delicious")])
    spec = parse_spec({"paper": "leml", "tables": ["6"], "results": [str(res)],
                       "series": ["LEML-SQ"], "metrics": ["p@1"],
                       "axes": {"k_over_L": [0.2], "observed": [1.0],
                                "dataset": ["bibtex", "delicious"]},
                       "layout": {"blocks": ["dataset"], "rows": ["metric"]}}, source="s")
    table = build_table(spec, read_sources(spec))
    assert [b.title for b in table.blocks] == ["bibtex", "delicious"]


def test_counts_leave_empty_cells_out():
    cells = [TableCell({}, P1, None, None, 0, None, None, "", "empty"),
             TableCell({}, P1, None, None, 0, 58.0, None, "6", "not run"),
             TableCell({}, P1, None, None, 0, 58.0, None, "6", "skipped")]
    table = RenderedTable(None, [], (), (), [], cells, [])
    assert table.counts() == {"within": 0, "better": 0, "worse": 0, "compared": 0, "np": 0,
                              "not_run": 1, "status": 1}


def test_a_series_matching_rows_of_different_parameters_is_an_error_naming_two(tmp_path):
    res = _results(tmp_path / "res", [
        _r("a", "p@1", 0.6), _r("b", "p@1", 0.5, params=json.dumps({"loss": "logistic"}))])
    spec = parse_spec({"paper": "leml", "tables": ["6"], "results": [str(res)],
                       "series": [{"name": "LEML-SQ", "ours": {"method": "leml"}}],
                       "metrics": ["p@1"], "axes": {"k_over_L": [0.2], "observed": [1.0],
                                                    "dataset": ["bibtex"]},
                       "layout": {"rows": ["dataset"]}}, source="s")
    with pytest.raises(MlxError) as exc:
        build_table(spec, read_sources(spec))
    assert str(exc.value) == (
        's: series \'LEML-SQ\' matches results with different parameters ({"loss": "logistic"}; '
        '{"loss": "squared"}) at k/L=20%, observed=100%, dataset=bibtex, method=LEML-SQ; add '
        "'ours: {params: ...}' to the series to choose one")


def test_a_speed_up_is_never_read_from_our_rows(tmp_path):
    # MoM Table 3 prints speed-ups over LEML; our results hold times, not speed-ups.
    rows = [{**_r("m", "p@1", 0.4, label="MoM", method="mom", params="{}"),
             "rank_ratio": None, "fit_seconds": 12.0}]
    res = _results(tmp_path / "res", rows)
    spec = parse_spec({"paper": "mom", "results": [str(res)], "series": ["MoM"],
                       "metrics": ["speedup", "fit_seconds"], "axes": {"dataset": ["bibtex"]},
                       "layout": {"rows": ["dataset"], "columns": ["metric"], "blocks": []}},
                      source="s")
    table = build_table(spec, read_sources(spec))
    assert [c.text() for c in table.cells] == ["— / 0.53", "12 / 300 (-288)"]


def test_an_axis_the_paper_never_prints_takes_its_values_from_our_rows(tmp_path):
    # No paper prints a labelled ratio: laid out without axes.labelled, it shows ours.
    res = _results(tmp_path / "res", [_r("a", "p@1", 0.6, labelled_ratio=0.5),
                                      _r("b", "p@1", 0.5, labelled_ratio=0.25)])
    spec = parse_spec({"paper": "leml", "tables": ["6"], "results": [str(res)],
                       "series": ["LEML-SQ"], "metrics": ["p@1"],
                       "axes": {"k_over_L": [0.2], "observed": [1.0], "dataset": ["bibtex"]},
                       "layout": {"rows": ["labelled"]}}, source="s")
    table = build_table(spec, read_sources(spec))
    assert [(key, [c.text() for c in cells]) for key, cells in table.blocks[0].rows] == [
        ((0.25,), ["50.00 / 58.33 (-8.33) ▼"]), ((0.5,), ["60.00 / 58.33 (+1.67) ▲"])]


def test_one_repetition_has_no_spread_and_a_cell_without_results_none(tmp_path):
    rows = [_r("a", "p@1", 0.6), _r("d", "", None, rank_ratio=0.4, status="failed", split="")]
    spec = parse_spec({"paper": "leml", "tables": ["6"], "series": ["LEML-SQ"],
                       "metrics": ["p@1"], "axes": {"dataset": ["bibtex"], "observed": [1.0],
                                                    "k_over_L": [0.2, 0.4, 0.6]},
                       "layout": {"rows": ["k_over_L"]}}, source="s")
    table = build_table(spec, [Source("x", "results", Path("x"),
                                      pd.DataFrame(rows, columns=COLUMNS), None)])
    assert [(c.state, c.n_rep, c.ours_std) for c in table.cells] == [
        ("better", 1, None), ("failed", 0, None), ("not run", 0, None)]


def test_a_table_applies_the_specs_dataset_aliases_and_ignores_rows_of_other_series(tmp_path):
    # Our "bib" is the paper's bibtex; BR's rows on delicious are no series of this table, so
    # bibtex stays its one dataset.
    res = _results(tmp_path / "res", [_r("a", "p@1", 0.6, dataset="bib"),
                                      _r("b", "p@1", 0.5, dataset="delicious", label="BR")])
    spec = parse_spec({"paper": "leml", "tables": ["6"], "results": [str(res)],
                       "series": [{"name": "ours", "paper": "none", "ours": {"label": "LEML-SQ"}}],
                       "metrics": ["p@1"], "dataset_aliases": {"bib": "bibtex"},
                       "axes": {"k_over_L": [0.2], "observed": [1.0]},
                       "layout": {"rows": ["k_over_L"]}}, source="s")
    (cell,) = build_table(spec, read_sources(spec)).cells
    assert (cell.key["dataset"], cell.text()) == ("bibtex", "60.00 / n/p")


def test_a_single_metric_and_series_may_stay_out_of_the_layout(tmp_path):
    res = _results(tmp_path / "res", [_r("a", "p@1", 0.6), _r("b", "p@1", 0.62, rank_ratio=0.4)])
    spec = parse_spec({"paper": "leml", "tables": ["6"], "results": [str(res)],
                       "series": ["LEML-SQ"], "metrics": ["p@1"],
                       "axes": {"observed": [1.0], "dataset": ["bibtex"],
                                "k_over_L": [0.2, 0.4]},
                       "layout": {"blocks": [], "rows": ["dataset"], "columns": ["k_over_L"]}},
                      source="s")
    table = build_table(spec, read_sources(spec))
    assert [(c.key["metric"], c.key["series"], c.text()) for c in table.cells] == [
        ("p@1", "LEML-SQ", "60.00 / 58.33 (+1.67) ▲"),
        ("p@1", "LEML-SQ", "62.00 / 60.99 (+1.01) ▲")]


def test_a_table_reads_its_own_papers_published_values_only(tmp_path):
    # LEML's Table 3 prints LEML-SQ's P@3 on bibtex; MoM's Table 3 does not.
    res = _results(tmp_path / "res", [_r("a", "p@3", 0.6, rank_ratio=None)])
    spec = parse_spec({"paper": "mom", "results": [str(res)], "series": ["LEML-SQ"],
                       "metrics": ["p@3"], "axes": {"dataset": ["bibtex"]},
                       "layout": {"rows": ["dataset"]}}, source="s")
    (cell,) = build_table(spec, read_sources(spec)).cells
    assert cell.text() == "60.00 / n/p"


def lsvv_iris_spec():
    """LSVV Table 5: SRM-VV's test error on iris (linear) is 29.78 +- 6.21 %."""
    return parse_spec({"paper": "lsvv", "tables": ["5"], "series": ["SRM-VV"],
                       "metrics": ["error"], "axes": {"dataset": ["iris"],
                                                      "variant": ["linear"]},
                       "layout": {"rows": ["dataset"], "columns": ["variant", "series"]}},
                      source="s")


def test_a_published_spread_is_kept_in_the_display_unit():
    (cell,) = build_table(lsvv_iris_spec(), []).cells
    assert (cell.published, cell.published_std, cell.state) == (
        pytest.approx(29.78), pytest.approx(6.21), "not run")
    spec = parse_spec({"paper": "leml", "tables": ["6"], "series": ["LEML-SQ"],
                       "metrics": ["p@1"], "axes": {"dataset": ["bibtex"], "k_over_L": [0.2],
                                                    "observed": [1.0]},
                       "layout": {"rows": ["dataset"]}}, source="s")
    (cell,) = build_table(spec, []).cells
    assert (cell.published, cell.published_std) == (pytest.approx(58.33), None)


def test_rows_and_blocks_with_nothing_to_show_are_dropped_and_the_rest_kept():
    # k/L = 30%: neither ours nor published, a hole between shown settings. 50%: only a
    # failed run, which is shown although the paper has no value there.
    rows = [_r("a", "p@1", 0.6), _r("c", "p@1", 0.62, rank_ratio=0.4),
            _r("d", "", None, rank_ratio=0.5, status="failed", split="")]
    frame = pd.DataFrame(rows, columns=COLUMNS)
    for layout in ({"blocks": ["metric", "k_over_L"], "rows": ["dataset"]},
                   {"rows": ["dataset", "k_over_L"]}):
        spec = parse_spec({"paper": "leml", "tables": ["6"], "series": ["LEML-SQ"],
                           "metrics": ["p@1"], "axes": {"dataset": ["bibtex"], "observed": [1.0],
                                                        "k_over_L": [0.2, 0.3, 0.4, 0.5]},
                           "layout": layout}, source="s")
        table = build_table(spec, [Source("x", "results", Path("x"), frame, None)])
        assert [(c.key["k_over_L"], c.text()) for c in table.cells] == [
            (0.2, "60.00 / 58.33 (+1.67) ▲"), (0.4, "62.00 / 60.99 (+1.01) ▲"),
            (0.5, "failed / n/p")]
        assert sum(len(b.rows) for b in table.blocks) == 3
        assert table.counts()["status"] == 1


def test_a_blocks_tables_are_listed_in_numeric_order():
    # LEML-SQ on bibtex at k/L = 20%: all labels observed in Table 6, 20% in Table 11.
    rows = [_r("a", "p@1", 0.6), _r("b", "p@1", 0.5, observed_ratio=0.2)]
    spec = parse_spec({"paper": "leml", "tables": ["11", "6"], "series": ["LEML-SQ"],
                       "metrics": ["p@1"], "axes": {"dataset": ["bibtex"], "k_over_L": [0.2],
                                                    "observed": [0.2, 1.0]},
                       "layout": {"rows": ["dataset", "observed"]}}, source="s")
    table = build_table(spec, [Source("x", "results", Path("x"),
                                      pd.DataFrame(rows, columns=COLUMNS), None)])
    assert [c.table for c in table.cells] == ["11", "6"]
    assert table.blocks[0].tables == ["6", "11"]


def test_rows_of_a_results_file_older_than_an_axis_take_its_default_beside_newer_ones(tmp_path):
    # A results.csv written before the labelled ratio existed: every row was fully labelled.
    # Read with a newer file whose rows are 50% labelled, its rows are at 100%, not "any".
    old = pd.DataFrame([_r("o", "p@1", 0.7)], columns=COLUMNS).drop(columns=["labelled_ratio"])
    new = pd.DataFrame([_r("n", "p@1", 0.5, labelled_ratio=0.5)], columns=COLUMNS)
    f = ours_frame([Source("n", "results", Path("n"), new, None),
                    Source("o", "results", Path("o"), old, None)])
    assert f.set_index("cell_id")["labelled_ratio"].to_dict() == {"n": 0.5, "o": 1.0}
    spec = parse_spec({"paper": "leml", "tables": ["6"], "series": ["LEML-SQ"],
                       "metrics": ["p@1"], "axes": {"dataset": ["bibtex"], "k_over_L": [0.2],
                                                    "observed": [1.0], "labelled": [0.5, 1.0]},
                       "layout": {"rows": ["labelled"]}}, source="s")
    table = build_table(spec, [Source("n", "results", Path("n"), new, None),
                               Source("o", "results", Path("o"), old, None)])
    assert [(c.key["labelled"], c.ours) for c in table.cells] == [(0.5, 50.0), (1.0, 70.0)]


def test_a_series_by_method_and_parameters_needs_both_to_match(tmp_path):
    # BR with the same loss is no row of LEML-SQ.
    res = _results(tmp_path / "res", [
        _r("a", "p@1", 0.6), _r("b", "p@1", 0.4, method="br", label="BR-SQ", rank_ratio=None)])
    spec = parse_spec({"paper": "leml", "tables": ["6"], "results": [str(res)],
                       "series": [{"name": "LEML-SQ",
                                   "ours": {"method": "leml", "params": {"loss": "squared"}}}],
                       "metrics": ["p@1"], "axes": {"k_over_L": [0.2], "observed": [1.0],
                                                    "dataset": ["bibtex"]},
                       "layout": {"rows": ["dataset"]}}, source="s")
    (cell,) = build_table(spec, read_sources(spec)).cells
    assert (cell.n_rep, cell.text()) == (1, "60.00 / 58.33 (+1.67) ▲")


def test_an_empty_cell_beside_a_shown_one_is_no_cell_of_the_table(tmp_path):
    # The baseline has neither a result nor a published value: its cell is blank in the row
    # and absent from the cells (the CSV and the counts).
    res = _results(tmp_path / "res", [_r("a", "p@1", 0.6)])
    spec = parse_spec({"paper": "leml", "tables": ["6"], "results": [str(res)],
                       "series": ["LEML-SQ", {"name": "const", "paper": "none"}],
                       "metrics": ["p@1"], "axes": {"k_over_L": [0.2], "observed": [1.0],
                                                    "dataset": ["bibtex"]},
                       "layout": {"rows": ["dataset"]}}, source="s")
    table = build_table(spec, read_sources(spec))
    assert [c.state for c in table.blocks[0].rows[0][1]] == ["better", "empty"]
    assert [c.key["series"] for c in table.cells] == ["LEML-SQ"]
    assert render_csv(table).count("\n") == 2                   # header and one cell
