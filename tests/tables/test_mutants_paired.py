"""Paired comparisons: properties the older tests left open (found by mutation testing)."""

import json

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner
from scipy import stats

from mlx.cli import cli
from mlx.errors import UnknownNameError
from mlx.runner.results import COLUMNS
from mlx.tables.paired import (
    CSV_COLUMNS,
    draw_pvalues,
    paired_comparison,
    paired_pvalues,
    render_paired_csv,
    render_paired_markdown,
    write_paired,
)

A = [0.281, 0.262, 0.305, 0.277, 0.290, 0.268]
B = [0.297, 0.271, 0.309, 0.301, 0.296, 0.290]


def row(label, rep, value, *, params, metric="error", dataset="iris"):
    return dict(run_id="r", cell_id=f"{label}-{params}-{rep}", experiment="t", dataset=dataset,
                method=label.lower(), label=label,
                params=params if isinstance(params, str) else json.dumps(params),
                rank_ratio=None, observed_ratio=1.0, repetition=rep, split="test",
                metric=metric, value=value, status="ok", fit_seconds=1.0)


def separator(left: int) -> str:
    """The alignment row: the setting columns left, the six figures right, the note left."""
    return "\n|" + "|".join(["---"] * left + ["---:"] * 6 + ["---"]) + "|\n"


def test_parameters_that_tell_rows_apart_are_shown_sorted_by_name():
    # A has two settings: its parameters become a column, "name=value" sorted by name.
    rows = []
    for rep, (x, y) in enumerate(zip(A, B)):
        rows += [row("A", rep, x, params={"tau": 1, "kernel": "rff"}),
                 row("A", rep, x + 0.01, params={"tau": 2, "kernel": "rff"}),
                 row("B", rep, y, params={"kernel": "linear"})]
    md = render_paired_markdown(paired_comparison(pd.DataFrame(rows, columns=COLUMNS), "A", "B"))
    assert "| dataset | metric | A params | pairs | A | B |" in md
    assert separator(3) in md
    assert "| iris | error | kernel=rff, tau=1 | 6 |" in md
    assert "| iris | error | kernel=rff, tau=2 | 6 |" in md
    assert "B params" not in md


def test_parameters_that_are_not_a_json_mapping_are_shown_as_written():
    rows = []
    for rep, (x, y) in enumerate(zip(A, B)):
        rows += [row("A", rep, x, params="[1, 2]"), row("A", rep, x, params="not json"),
                 row("B", rep, y, params={"k": 1}), row("B", rep, y + 0.1, params={"k": 2})]
    md = render_paired_markdown(paired_comparison(pd.DataFrame(rows, columns=COLUMNS), "A", "B"))
    assert "| dataset | metric | A params | B params | pairs |" in md
    assert separator(4) in md
    assert "| iris | error | [1, 2] | k=1 | 6 |" in md
    assert "| iris | error | not json | k=2 | 6 |" in md


def test_file_names_keep_letters_digits_and_dots_and_replace_the_rest(tmp_path):
    rows = []
    for rep, (x, y) in enumerate(zip(A, B)):
        rows += [row("leml sq/2", rep, x, params={}), row("Br-v1.0+x", rep, y, params={})]
    cmp = paired_comparison(pd.DataFrame(rows, columns=COLUMNS), "leml sq/2", "Br-v1.0+x")
    out = write_paired(cmp, tmp_path)
    assert out["paths"] == {"md": tmp_path / "paired-leml_sq_2-vs-Br-v1.0+x.md",
                            "csv": tmp_path / "paired-leml_sq_2-vs-Br-v1.0+x.csv"}
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "paired-leml_sq_2-vs-Br-v1.0+x.csv", "paired-leml_sq_2-vs-Br-v1.0+x.md"]


def test_cli_names_the_files_it_wrote(tmp_path):
    rows = []
    for rep, (x, y) in enumerate(zip(A, B)):
        rows += [row("a b", rep, x, params={}), row("c", rep, y, params={})]
    res = tmp_path / "res"
    res.mkdir()
    pd.DataFrame(rows, columns=COLUMNS).to_csv(res / "results.csv", index=False)
    r = CliRunner().invoke(cli, ["table", str(res), "--paired", "a b,c"], obj={})
    assert r.exit_code == 0, r.output
    assert (res / "paired-a_b-vs-c.md").read_text() + "\n" in r.stdout


def test_csv_has_every_column_filled_with_its_own_value():
    # Six repetitions of A, five of B, on three splits (repetitions r and r + 3 share one).
    rows = []
    for rep, (x, y) in enumerate(zip(A, B)):
        fp = {"split_fingerprint": f"s{rep % 3}", "mask_fingerprint": "all",
              "validation_fingerprint": None}
        rows.append({**row("A", rep, x, params={"tau": 1}), **fp})
        if rep < 5:
            rows.append({**row("B", rep, y, params={"k": 2}), **fp})
    cmp = paired_comparison(pd.DataFrame(rows), "A", "B")
    frame = pd.read_csv(pd.io.common.StringIO(render_paired_csv(cmp)), keep_default_na=False)
    assert list(frame.columns) == CSV_COLUMNS
    (got,) = frame.to_dict("records")
    assert {k: got[k] for k in ("dataset", "metric", "label_a", "label_b", "params_a",
                                "params_b", "repetitions_a", "repetitions_b", "pairs",
                                "draws")} == {
        "dataset": "iris", "metric": "error", "label_a": "A", "label_b": "B",
        "params_a": '{"tau": 1}', "params_b": '{"k": 2}', "repetitions_a": 6,
        "repetitions_b": 5, "pairs": 5, "draws": 3}
    assert got["mean_a"] == pytest.approx(np.mean(A[:5]))
    assert got["mean_b"] == pytest.approx(np.mean(B[:5]))
    assert got["mean_diff"] == pytest.approx(np.mean(A[:5]) - np.mean(B[:5]))
    assert got["note"].startswith("paired on the 5 common repetitions (A: 6, B: 5); the 5 "
                                  "repetitions are 3 distinct draws")
    assert got["observed_ratio"] == 1.0 and got["rank_ratio"] == ""


def test_markdown_starts_with_a_second_level_heading_and_a_blank_line():
    rows = [row("A", rep, x, params={}) for rep, x in enumerate(A)]
    rows += [row("B", rep, y, params={}) for rep, y in enumerate(B)]
    cmp = paired_comparison(pd.DataFrame(rows, columns=COLUMNS), "A", "B")
    md = render_paired_markdown(cmp)
    assert md.startswith("## Paired comparison: A vs B (test split)\n\n| dataset | metric |")
    assert render_paired_markdown(cmp, heading_level=3).startswith("### Paired comparison: ")


def test_markdown_without_a_common_setting_is_heading_and_sentence_only():
    rows = [row("A", 0, 0.5, params={}, dataset="bibtex"), row("B", 0, 0.4, params={})]
    cmp = paired_comparison(pd.DataFrame(rows, columns=COLUMNS), "A", "B", source="res")
    assert render_paired_markdown(cmp) == (
        "## Paired comparison: A vs B (test split)\n\nNo setting (dataset, params, k/L, "
        "observed, labelled, k, metric) has test results of both A and B in res.\n")


def test_a_difference_that_rounds_to_zero_is_printed_without_a_minus_sign():
    rows = []
    for rep, x in enumerate(A):
        rows += [row("A", rep, x, params={}), row("B", rep, x + 1e-6 * (rep + 1), params={})]
    md = render_paired_markdown(paired_comparison(pd.DataFrame(rows, columns=COLUMNS), "A", "B"))
    assert f"| {np.mean(A):.4f} | {np.mean(A) + 3.5e-6:.4f} | +0.0000 |" in md
    assert "-0.0000" not in md


def ranked(label, rep, value, *, rank_ratio, rank):
    return {**row(label, rep, value, params={}), "rank_ratio": rank_ratio, "rank": rank}


def test_k_is_a_column_for_absolute_ranks_only():
    # k/L with its k (e.g. 20% of 25 labels = 5): k follows from k/L and is not shown.
    rows = []
    for rep, (x, y) in enumerate(zip(A, B)):
        for rr, k in ((0.2, 5), (0.4, 10)):
            rows += [ranked("A", rep, x + rr, rank_ratio=rr, rank=k),
                     ranked("B", rep, y, rank_ratio=rr, rank=k)]
    md = render_paired_markdown(paired_comparison(pd.DataFrame(rows), "A", "B"))
    assert "| dataset | k/L | metric | pairs |" in md
    assert separator(3) in md
    assert "| iris | 20% | error | 6 |" in md and "| iris | 40% | error | 6 |" in md
    # Absolute ranks: k is the column.
    rows = [{**r, "rank_ratio": None} for r in rows]
    md = render_paired_markdown(paired_comparison(pd.DataFrame(rows), "A", "B"))
    assert "| dataset | k | metric | pairs |" in md
    assert "| iris | 5 | error | 6 |" in md and "| iris | 10 | error | 6 |" in md


def test_settings_without_common_repetitions_have_zero_pairs_and_zero_draws():
    rows = [row("A", 0, 0.5, params={}), row("B", 1, 0.4, params={})]
    cmp = paired_comparison(pd.DataFrame(rows, columns=COLUMNS), "A", "B")
    (r,) = cmp.rows
    assert (r.pairs, r.draws, r.mean_diff, r.t_pvalue) == (0, 0, None, None)
    frame = pd.read_csv(pd.io.common.StringIO(render_paired_csv(cmp)))
    assert frame[["pairs", "draws"]].values.tolist() == [[0, 0]]


def twenty_pairs():
    """20 positive differences of distinct size: exact Wilcoxon p = 2 / 2^20."""
    x = [0.5 + i / 100 for i in range(20)]
    y = [v - 0.1 - i / 1000 for i, v in enumerate(x)]
    rows = [row("A", rep, v, params={}) for rep, v in enumerate(x)]
    rows += [row("B", rep, v, params={}) for rep, v in enumerate(y)]
    return x, y, rows


def test_small_pvalues_are_printed_in_lower_case_exponent_form_before_the_legend():
    x, y, rows = twenty_pairs()
    md = render_paired_markdown(paired_comparison(pd.DataFrame(rows, columns=COLUMNS), "A", "B"))
    t, w = stats.ttest_rel(x, y).pvalue, stats.wilcoxon(x, y).pvalue
    assert w == pytest.approx(2 / 2 ** 20)
    assert f"| {t:.3g} | {w:.3g} |  |\n\nPairs: repetitions" in md
    assert "e-" in f"{t:.3g}" and "1.91e-06" == f"{w:.3g}"


def test_a_row_axes_hold_the_numeric_setting_axes_only():
    rows = [row("A", rep, x, params={}) for rep, x in enumerate(A)]
    rows += [row("B", rep, y, params={}) for rep, y in enumerate(B)]
    (r,) = paired_comparison(pd.DataFrame(rows, columns=COLUMNS), "A", "B").rows
    assert r.axes == {"rank_ratio": None, "observed_ratio": 1.0, "labelled_ratio": None,
                      "rank": None}         # results.csv columns left empty: None


def test_axes_missing_from_an_older_results_file_take_their_defaults():
    rows = [row("A", rep, x, params={}) for rep, x in enumerate(A)]
    rows += [row("B", rep, y, params={}) for rep, y in enumerate(B)]
    frame = pd.DataFrame(rows).drop(columns=["observed_ratio", "rank_ratio"])
    assert "labelled_ratio" not in frame and "rank" not in frame
    cmp = paired_comparison(frame, "A", "B")
    assert cmp.rows[0].axes == {"rank_ratio": None, "observed_ratio": 1.0,
                                "labelled_ratio": 1.0, "rank": None}
    got = pd.read_csv(pd.io.common.StringIO(render_paired_csv(cmp)))
    assert got[["observed_ratio", "labelled_ratio"]].values.tolist() == [[1.0, 1.0]]


def test_rows_without_a_label_or_parameters_are_read_as_empty_text():
    rows = [row("A", rep, x, params={}) for rep, x in enumerate(A)]
    rows += [row("B", rep, y, params={}) for rep, y in enumerate(B)]
    rows += [{**row("X", 0, None, params={}), "label": None, "metric": None, "status": "failed"}]
    frame = pd.DataFrame(rows, columns=COLUMNS)
    frame.loc[frame["label"] == "B", "params"] = None
    with pytest.raises(UnknownNameError) as exc:
        paired_comparison(frame, "A", "C")
    assert str(exc.value) == ("results: --paired: unknown method label 'C'. Available method "
                              "labels: A, B")
    (r,) = paired_comparison(frame, "A", "B").rows
    assert (r.params_a, r.params_b) == ("{}", "")


def test_ratios_equal_up_to_float_noise_are_one_setting():
    rows = [{**row("A", rep, x, params={}), "rank_ratio": 0.1 + 0.2} for rep, x in enumerate(A)]
    rows += [{**row("B", rep, y, params={}), "rank_ratio": 0.3} for rep, y in enumerate(B)]
    (r,) = paired_comparison(pd.DataFrame(rows, columns=COLUMNS), "A", "B").rows
    assert (r.pairs, r.axes["rank_ratio"]) == (6, 0.3)


def test_values_and_axes_given_as_text_are_read_as_numbers():
    # As a results.csv read without types: empty text for an axis a method does not have.
    rows = [{**row("A", rep, str(x), params={}), "rank_ratio": "0.5"} for rep, x in enumerate(A)]
    rows += [{**row("B", rep, str(y), params={}), "rank_ratio": ""} for rep, y in enumerate(B)]
    rows += [{**row("B", 9, "", params={}), "status": "failed"}]
    (r,) = paired_comparison(pd.DataFrame(rows, columns=COLUMNS).astype(str), "A", "B").rows
    assert (r.pairs, r.axes["rank_ratio"], r.repetitions_b) == (6, 0.5, 6)
    assert r.mean_diff == pytest.approx(np.mean(A) - np.mean(B))


def test_a_test_value_without_a_metric_is_not_a_setting():
    rows = [row("A", rep, x, params={}) for rep, x in enumerate(A)]
    rows += [row("B", rep, y, params={}) for rep, y in enumerate(B)]
    rows += [row("A", 0, 0.1, params={}, metric=""), row("B", 0, 0.2, params={}, metric="")]
    cmp = paired_comparison(pd.DataFrame(rows, columns=COLUMNS), "A", "B")
    assert [r.metric for r in cmp.rows] == ["error"]


def test_a_rankless_first_method_takes_the_rank_of_the_second():
    rows = []
    for rep, (x, y) in enumerate(zip(A, B)):
        rows.append(row("BR", rep, x, params={}))
        rows += [{**row("LEML", rep, y + rr, params={}), "rank_ratio": rr} for rr in (0.4, 0.2)]
    cmp = paired_comparison(pd.DataFrame(rows, columns=COLUMNS), "BR", "LEML")
    assert [(r.axes["rank_ratio"], r.pairs) for r in cmp.rows] == [(0.2, 6), (0.4, 6)]
    md = render_paired_markdown(cmp)
    assert "| iris | 20% | error | 6 |" in md and "| iris | 40% | error | 6 |" in md


def test_rows_are_ordered_by_observed_labelled_and_rank_ratio_with_none_last():
    rows = []
    for rep, (x, y) in enumerate(zip(A, B)):
        for obs in (1.0, 0.2):
            for lab in (1.0, 0.5):
                for rr in (None, 0.4, 0.2):
                    setting = {"observed_ratio": obs, "labelled_ratio": lab, "rank_ratio": rr}
                    rows += [{**row("A", rep, x, params={"rr": rr}), **setting},
                             {**row("B", rep, y, params={}), **setting, "rank_ratio": None}]
    cmp = paired_comparison(pd.DataFrame(rows, columns=COLUMNS), "A", "B")
    assert [(r.observed_ratio, r.axes["labelled_ratio"], r.rank_ratio) for r in cmp.rows] == [
        (obs, lab, rr) for obs in (0.2, 1.0) for lab in (0.5, 1.0) for rr in (0.2, 0.4, None)]


def test_two_pairs_are_enough_for_both_tests():
    t, w, note = paired_pvalues([0.5, 0.7], [0.4, 0.5])
    assert (t, w, note) == (stats.ttest_rel([0.5, 0.7], [0.4, 0.5]).pvalue,
                            stats.wilcoxon([0.5, 0.7], [0.4, 0.5]).pvalue, "")
    assert 0 < t < 1 and w == 0.5


def test_a_pvalue_scipy_cannot_compute_is_none():
    t, w, note = paired_pvalues([np.inf, 1.0, 2.0], [0.0, 0.0, 0.0])
    assert (t, w, note) == (None, 0.25, "")


def test_two_distinct_draws_are_tested_and_their_notes_kept():
    xa, xb = [0.5, 0.7, 0.52, 0.66], [0.4, 0.5, 0.44, 0.52]
    draws = [(("s0",), ("s0",)), (("s1",), ("s1",))] * 2
    t, w, n, notes = draw_pvalues(xa, xb, draws)
    ya, yb = [0.51, 0.68], [0.42, 0.51]
    assert n == 2 and t == pytest.approx(stats.ttest_rel(ya, yb).pvalue, rel=1e-12)
    assert w == stats.wilcoxon(ya, yb).pvalue
    assert notes == ["the 4 repetitions are 2 distinct draws (same split, label mask and "
                     "validation rows): tested on 2"]
    # Equal means per draw: the all-zero note follows the draws note.
    t, w, n, notes = draw_pvalues([0.5, 0.7, 0.5, 0.7], [0.5, 0.7, 0.5, 0.7], draws)
    assert (t, w, n) == (1.0, 1.0, 2)
    assert notes[1:] == ["all differences zero: p = 1"]


def test_csv_text_has_ten_significant_digits_and_a_header_even_without_rows():
    x, y, rows = twenty_pairs()
    text = render_paired_csv(paired_comparison(pd.DataFrame(rows, columns=COLUMNS), "A", "B"))
    header, line = text.splitlines()
    assert header == ",".join(CSV_COLUMNS)
    w = stats.wilcoxon(x, y).pvalue
    assert f",20,20,{np.mean(x):.10g},{np.mean(y):.10g},{np.mean(x) - np.mean(y):.10g}," in line
    assert line.endswith(f",{w:.10g},") and "e-06" in f"{w:.10g}"
    only = [row("A", 0, 0.5, params={}, dataset="bibtex"), row("B", 0, 0.4, params={})]
    empty = paired_comparison(pd.DataFrame(only, columns=COLUMNS), "A", "B")
    assert empty.rows == []
    assert render_paired_csv(empty) == ",".join(CSV_COLUMNS) + "\n"


def test_rows_are_ordered_by_absolute_rank():
    rows = []
    for rep, (x, y) in enumerate(zip(A, B)):
        for k in (10, 5, 20):
            rows += [{**row("A", rep, x, params={}), "rank": k},
                     {**row("B", rep, y, params={}), "rank": k}]
    cmp = paired_comparison(pd.DataFrame(rows, columns=COLUMNS), "A", "B")
    assert [r.axes["rank"] for r in cmp.rows] == [5, 10, 20]
