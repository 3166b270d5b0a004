"""Paired significance tests between two methods: `mlx table RESULTS --paired A,B`."""

import json

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner
from scipy import stats

from mlx.cli import cli
from mlx.runner.results import COLUMNS, read_results
from mlx.tables.paired import (
    paired_comparison,
    paired_pvalues,
    render_paired_csv,
    render_paired_markdown,
)

LSVV = [0.281, 0.262, 0.305, 0.277, 0.290, 0.268]
SRM = [0.297, 0.271, 0.309, 0.301, 0.296, 0.290]   # every difference negative, all distinct


def row(label, rep, metric, value, *, split="test", rank_ratio=None, observed=1.0,
        status="ok", dataset="iris", params=None):
    return dict(run_id="r", cell_id=f"{label}-{rank_ratio}-{rep}", experiment="t",
                dataset=dataset, method=label.lower(), label=label,
                params=json.dumps(params or {"kernel": "linear"}), rank_ratio=rank_ratio,
                observed_ratio=observed, repetition=rep, split=split, metric=metric,
                value=value, status=status, fit_seconds=1.0)


def write(directory, rows):
    directory.mkdir(parents=True, exist_ok=True)
    pd.DataFrame(rows, columns=COLUMNS).to_csv(directory / "results.csv", index=False)
    return directory


def invoke(*args):
    return CliRunner().invoke(cli, [str(a) for a in args], obj={})


@pytest.fixture
def res(tmp_path):
    rows = []
    for rep, (x, y) in enumerate(zip(LSVV, SRM)):
        rows += [row("LSVV", rep, "error", x), row("SRM-VV", rep, "error", y)]
        # Selection candidates and training scores: never paired.
        rows += [row("LSVV", rep, "error", 0.9, split="validation"),
                 row("SRM-VV", rep, "error", 0.1, split="train")]
    return write(tmp_path / "res", rows)


def test_pvalues_equal_scipy(res):
    (r,) = paired_comparison(read_results(res), "LSVV", "SRM-VV").rows
    assert r.pairs == 6 and r.note == ""
    assert r.t_pvalue == stats.ttest_rel(LSVV, SRM).pvalue
    assert r.wilcoxon_pvalue == stats.wilcoxon(LSVV, SRM).pvalue
    # Known value: six negative differences of distinct size, exact two-sided p = 2 / 2^6.
    assert r.wilcoxon_pvalue == pytest.approx(2 / 64)
    assert r.mean_a == pytest.approx(np.mean(LSVV)) and r.mean_b == pytest.approx(np.mean(SRM))
    assert r.mean_diff == pytest.approx(np.mean(LSVV) - np.mean(SRM))


def test_table_command_prints_markdown_and_writes_csv(res):
    r = invoke("table", res, "--paired", "LSVV,SRM-VV")
    assert r.exit_code == 0, r.output
    t, w = stats.ttest_rel(LSVV, SRM).pvalue, stats.wilcoxon(LSVV, SRM).pvalue
    assert "## Paired comparison: LSVV vs SRM-VV (test split)" in r.stdout
    assert ("| dataset | metric | pairs | LSVV | SRM-VV | mean diff (LSVV − SRM-VV) | t-test p "
            "| Wilcoxon p | note |") in r.stdout
    assert (f"| iris | error | 6 | {np.mean(LSVV):.4f} | {np.mean(SRM):.4f} | "
            f"{np.mean(LSVV) - np.mean(SRM):+.4f} | {t:.3g} | {w:.3g} |  |") in r.stdout
    md = res / "paired-LSVV-vs-SRM-VV.md"
    assert md.read_text() + "\n" in r.stdout
    frame = pd.read_csv(res / "paired-LSVV-vs-SRM-VV.csv")
    assert list(frame[["label_a", "label_b", "pairs"]].iloc[0]) == ["LSVV", "SRM-VV", 6]
    assert frame["t_pvalue"].iloc[0] == pytest.approx(t, rel=1e-9)
    assert frame["wilcoxon_pvalue"].iloc[0] == pytest.approx(w, rel=1e-9)
    assert f"wrote {md}, {res / 'paired-LSVV-vs-SRM-VV.csv'}" in r.stderr


@pytest.mark.parametrize("command", [("table",), ("compare", "--paper", "lsvv")])
def test_unknown_label_is_one_line_error_listing_labels(res, command):
    r = invoke(command[0], res, *command[1:], "--paired", "LSVV,SRMVV")
    assert r.exit_code == 2
    assert r.output == (f"Error: {res}: --paired: unknown method label 'SRMVV'. Did you mean "
                        f"'SRM-VV'? Available method labels: LSVV, SRM-VV\n")


@pytest.mark.parametrize("pair", ["LSVV", "LSVV,LSVV", "LSVV,SRM-VV,X", "LSVV,"])
def test_malformed_pair_is_one_line_error(res, pair):
    r = invoke("table", res, "--paired", pair)
    assert r.exit_code == 2
    assert r.output == (f"Error: --paired: needs two different method labels separated by a "
                        f"comma, e.g. --paired LSVV,SRM-VV. Got {pair!r} instead.\n")


def test_paired_does_not_apply_to_a_spec(tmp_path):
    spec = tmp_path / "s.yaml"
    spec.write_text("paper: lsvv\nseries: [LSVV]\nmetrics: [error]\n")
    r = invoke("table", spec, "--paired", "LSVV,SRM-VV")
    assert r.exit_code == 2 and "--paired applies to a results directory" in r.output


def test_mismatched_repetitions_pair_the_common_ones(tmp_path):
    a = {rep: v for rep, v in zip(range(0, 6), LSVV)}          # repetitions 0-5
    b = {rep: v for rep, v in zip(range(2, 6), SRM)}           # repetitions 2-5
    rows = [row("LSVV", rep, "error", v) for rep, v in a.items()]
    rows += [row("SRM-VV", rep, "error", v) for rep, v in b.items()]
    rows += [row("SRM-VV", 9, "error", 0.5)]                   # only SRM-VV has repetition 9
    res = write(tmp_path / "res", rows)
    cmp = paired_comparison(read_results(res), "LSVV", "SRM-VV", source=str(res))
    (r,) = cmp.rows
    common = [2, 3, 4, 5]
    xa, xb = [a[i] for i in common], [b[i] for i in common]
    assert (r.repetitions_a, r.repetitions_b, r.pairs) == (6, 5, 4)
    assert r.t_pvalue == stats.ttest_rel(xa, xb).pvalue
    assert r.wilcoxon_pvalue == stats.wilcoxon(xa, xb).pvalue
    assert r.mean_a == pytest.approx(np.mean(xa)) and r.mean_b == pytest.approx(np.mean(xb))
    assert r.note == "paired on the 4 common repetitions (LSVV: 6, SRM-VV: 5)"
    md = render_paired_markdown(cmp)
    assert "| iris | error | 4 |" in md and md.rstrip().endswith("is zero.")
    assert "paired on the 4 common repetitions (LSVV: 6, SRM-VV: 5) |" in md


def test_fewer_than_two_pairs_and_all_zero_differences():
    assert paired_pvalues([0.5], [0.4]) == (None, None, "n/a: fewer than 2 pairs")
    assert paired_pvalues([], []) == (None, None, "n/a: fewer than 2 pairs")
    assert paired_pvalues([0.5, 0.6, 0.7], [0.5, 0.6, 0.7]) == (1.0, 1.0,
                                                                "all differences zero: p = 1")


def test_na_and_all_zero_rows_are_marked(tmp_path):
    rows = [row("A", 0, "p@1", 0.5), row("B", 0, "p@1", 0.4)]             # one pair
    rows += [row("A", rep, "auc", 0.8) for rep in range(3)]
    rows += [row("B", rep, "auc", 0.8) for rep in range(3)]                 # identical
    rows += [row("A", 1, "hamming", 0.1), row("B", 2, "hamming", 0.2)]     # no common rep
    cmp = paired_comparison(pd.DataFrame(rows, columns=COLUMNS), "A", "B")
    md = render_paired_markdown(cmp)
    assert ("| iris | p@1 | 1 | 0.5000 | 0.4000 | +0.1000 | n/a | n/a | n/a: fewer than 2 pairs |"
            in md)
    assert ("| iris | auc | 3 | 0.8000 | 0.8000 | +0.0000 | 1 | 1 | all differences zero: p = 1 |"
            in md)
    assert ("| iris | hamming | 0 | n/a | n/a | n/a | n/a | n/a | no common repetitions "
            "(A: 1, B: 1) |") in md
    frame = pd.read_csv(pd.io.common.StringIO(render_paired_csv(cmp)))
    assert frame["t_pvalue"].tolist()[1] == 1 and np.isnan(frame["t_pvalue"].tolist()[0])


def test_settings_are_kept_apart_and_a_rankless_method_pairs_with_every_k(tmp_path):
    rows = []
    for rep in range(3):
        for rr in (0.2, 0.4):
            for obs in (0.2, 1.0):
                rows.append(row("LEML-SQ", rep, "p@1", 0.5 + rr / 10 + rep / 100,
                                rank_ratio=rr, observed=obs))
        for obs in (0.2, 1.0):
            rows.append(row("BR-LR", rep, "p@1", 0.52 + rep / 50, observed=obs))
        rows.append(row("BR-LR", rep, "", None, status="skipped", observed=0.5))
    cmp = paired_comparison(pd.DataFrame(rows, columns=COLUMNS), "LEML-SQ", "BR-LR")
    assert [(r.observed_ratio, r.rank_ratio, r.pairs) for r in cmp.rows] == [
        (0.2, 0.2, 3), (0.2, 0.4, 3), (1.0, 0.2, 3), (1.0, 0.4, 3)]
    md = render_paired_markdown(cmp)
    assert "| dataset | k/L | observed | metric | pairs |" in md
    assert "| iris | 20% | 20% | p@1 | 3 |" in md


def test_no_common_setting_says_so(tmp_path):
    rows = [row("A", 0, "p@1", 0.5, dataset="bibtex"), row("B", 0, "p@1", 0.4)]
    cmp = paired_comparison(pd.DataFrame(rows, columns=COLUMNS), "A", "B", source="res")
    assert cmp.rows == []
    assert ("No setting (dataset, params, k/L, observed, labelled, k, metric) has test results "
            "of both A and B in res.") in render_paired_markdown(cmp)


def test_compare_paired_writes_beside_the_comparison(tmp_path):
    rows = []
    for rep, (x, y) in enumerate(zip(LSVV, SRM)):
        rows += [row("LSVV", rep, "error", x, params={"kernel": "linear"}),
                 row("SRM-VV", rep, "error", y, params={"kernel": "linear"})]
    res = write(tmp_path / "res", rows)
    out = tmp_path / "out"
    r = invoke("compare", res, "--paper", "lsvv", "-o", out, "--paired", "SRM-VV,LSVV")
    assert r.exit_code == 0, r.output
    assert "## Paired comparison: SRM-VV vs LSVV (test split)" in r.stdout
    assert (out / "paired-SRM-VV-vs-LSVV.md").exists()
    frame = pd.read_csv(out / "paired-SRM-VV-vs-LSVV.csv")
    assert frame["mean_diff"].iloc[0] == pytest.approx(np.mean(SRM) - np.mean(LSVV))
    assert frame["t_pvalue"].iloc[0] == pytest.approx(stats.ttest_rel(SRM, LSVV).pvalue,
                                                      rel=1e-9)


def fingerprinted(label, rep, metric, value, *, split_fp="official", mask_fp="all",
                  validation_fp=None, **kw):
    return {**row(label, rep, metric, value, **kw), "split_fingerprint": split_fp,
            "mask_fingerprint": mask_fp, "validation_fingerprint": validation_fp}


def test_repetitions_of_one_draw_are_one_observation():
    # An official split, all labels, deterministic methods: the repetitions are one
    # experiment run three times (identical differences; scipy's t-test says p = 0).
    rows = []
    for rep in range(3):
        rows += [fingerprinted("LEML-SQ", rep, "p@1", 0.5552, rank_ratio=0.5),
                 fingerprinted("BR-SQ", rep, "p@1", 0.7634)]
    (r,) = paired_comparison(pd.DataFrame(rows), "LEML-SQ", "BR-SQ").rows
    assert (r.pairs, r.draws, r.t_pvalue, r.wilcoxon_pvalue) == (3, 1, None, None)
    assert r.note == ("n/a: the 3 repetitions are one draw (same split, label mask and "
                      "validation rows): one observation, no test")
    assert r.mean_diff == pytest.approx(0.5552 - 0.7634)
    md = render_paired_markdown(paired_comparison(pd.DataFrame(rows), "LEML-SQ", "BR-SQ"))
    assert "| iris | 50% | p@1 | 3 | 0.5552 | 0.7634 | -0.2082 | n/a | " \
        "n/a | n/a: the 3 repetitions are one draw" in md


def test_repeated_draws_collapse_and_distinct_draws_are_tested():
    rows = []
    for rep, (x, y) in enumerate(zip(LSVV, SRM)):
        fp = f"s{rep % 3}"              # repetitions 0 and 3, 1 and 4, 2 and 5 share a split
        rows += [fingerprinted("LSVV", rep, "error", x, split_fp=fp),
                 fingerprinted("SRM-VV", rep, "error", y, split_fp=fp)]
    (r,) = paired_comparison(pd.DataFrame(rows), "LSVV", "SRM-VV").rows
    xa = [np.mean([LSVV[i], LSVV[i + 3]]) for i in range(3)]
    xb = [np.mean([SRM[i], SRM[i + 3]]) for i in range(3)]
    assert (r.pairs, r.draws) == (6, 3)
    assert r.t_pvalue == pytest.approx(stats.ttest_rel(xa, xb).pvalue, rel=1e-12)
    assert r.note == ("the 6 repetitions are 3 distinct draws (same split, label mask and "
                      "validation rows): tested on 3")
    # Distinct masks (or validation rows) on one split are distinct draws.
    rows = [{**x, "mask_fingerprint": f"m{x['repetition']}", "split_fingerprint": "official"}
            for x in rows]
    (r,) = paired_comparison(pd.DataFrame(rows), "LSVV", "SRM-VV").rows
    assert (r.draws, r.note) == (6, "") and r.t_pvalue == stats.ttest_rel(LSVV, SRM).pvalue


def test_settings_that_differ_in_labelled_ratio_are_never_merged():
    # A beats B by 0.10 at one labelled ratio and loses by 0.10 at the other.
    rows = []
    for rep in range(3):
        for lab, (x, y) in ((0.1, (0.6, 0.5)), (1.0, (0.5, 0.6))):
            rows += [{**row("A", rep, "p@1", x + rep / 100), "labelled_ratio": lab},
                     {**row("B", rep, "p@1", y + rep / 50), "labelled_ratio": lab}]
    cmp = paired_comparison(pd.DataFrame(rows), "A", "B")
    assert [(r.axes["labelled_ratio"], round(r.mean_diff, 4)) for r in cmp.rows] == [
        (0.1, 0.09), (1.0, -0.11)]
    md = render_paired_markdown(cmp)
    assert "| dataset | labelled | metric | pairs |" in md
    assert "| iris | 10% | p@1 | 3 |" in md and "| iris | 100% | p@1 | 3 |" in md
    assert pd.read_csv(pd.io.common.StringIO(render_paired_csv(cmp)))[
        "labelled_ratio"].tolist() == [0.1, 1.0]


def test_methods_with_different_parameters_are_paired():
    rows = []
    for rep, (x, y) in enumerate(zip(LSVV, SRM)):
        rows += [row("LEML-SQ", rep, "p@1", x, params={"loss": "squared", "max_iter": 10}),
                 row("BR-SQ", rep, "p@1", y, params={"loss": "squared"})]
    (r,) = paired_comparison(pd.DataFrame(rows), "LEML-SQ", "BR-SQ").rows
    assert r.pairs == 6 and r.t_pvalue == stats.ttest_rel(LSVV, SRM).pvalue
    assert (r.params_a, r.params_b) == ('{"loss": "squared", "max_iter": 10}',
                                        '{"loss": "squared"}')


def test_a_grid_both_methods_sweep_is_matched_not_crossed():
    # LSVV's four models all sweep `space`: linear is paired with linear and rff with rff,
    # never linear with rff; a parameter only one side varies (l2_reg) is paired with all.
    rows = []
    for rep, (x, y) in enumerate(zip(LSVV, SRM)):
        for space, shift in (("linear", 0.0), ("rff", 0.5)):
            rows += [row("LSVV", rep, "error", x + shift, params={"space": space}),
                     row("SRM-VV", rep, "error", y + shift, params={"space": space})]
        for lam in (0.1, 1.0):
            rows += [row("BR", rep, "error", y + lam, params={"l2_reg": lam})]
    cmp = paired_comparison(pd.DataFrame(rows), "LSVV", "SRM-VV")
    assert [(json.loads(r.params_a)["space"], json.loads(r.params_b)["space"])
            for r in cmp.rows] == [("linear", "linear"), ("rff", "rff")]
    assert all(r.mean_diff == pytest.approx(np.mean(LSVV) - np.mean(SRM)) for r in cmp.rows)
    crossed = paired_comparison(pd.DataFrame(rows), "LSVV", "BR")
    assert len(crossed.rows) == 4


def test_equal_nonzero_differences_have_no_t_test():
    # A Hamming loss one test entry worse on both splits, as results.csv stores it (10
    # significant digits): ttest_rel printed p = 1e-6 from these 2 pairs.
    a, b = [0.01451815052, 0.01427712654], [0.01451531495, 0.01427429096]
    t, w, note = paired_pvalues(a, b)
    assert t is None and w == 0.5
    assert note == ("t-test n/a: every difference is +2.836e-06 (no spread, the t statistic "
                    "is undefined); Wilcoxon only")
    # Exactly equal differences too (scipy: t = inf, p = 0).
    assert paired_pvalues([0.3, 0.5, 0.7], [0.2, 0.4, 0.6])[0] is None
    # Different differences keep their t-test.
    assert paired_pvalues([0.3, 0.5, 0.7], [0.2, 0.4, 0.5])[0] is not None
