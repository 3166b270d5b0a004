"""Tables of one's own runs: a spec without a paper (datasets side by side, mean ± sd, the
best of each column bold, paired tests against a baseline, percent or fractions, never two
settings averaged together), its .tex compiling with pdflatex, and a run's own table.tex."""

import json
import shutil
import subprocess
import textwrap

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner
from scipy import stats

from mlx.cli import cli
from mlx.runner.results import COLUMNS, read_results, render_tables

VALUES = {  # dataset -> label -> p@1 per repetition
    "scene": {"BR": [0.70, 0.72, 0.74], "LEML": [0.60, 0.61, 0.65], "NEW": [0.75, 0.78, 0.80]},
    "yeast": {"BR": [0.76, 0.75, 0.77], "LEML": [0.74, 0.76, 0.75], "NEW": [0.70, 0.71, 0.69]},
}


def _write(directory, dataset, rank_ratios=(0.5,)):
    rows = []
    for label, reps in VALUES[dataset].items():
        for rr in rank_ratios:
            for rep, v in enumerate(reps):
                for metric, value in (("p@1", v), ("hamming", 1 - v)):
                    rows.append(dict(run_id="r", cell_id=f"{dataset}-{label}-{rr}-{rep}",
                                     experiment=dataset,
                                     dataset=dataset, method="br", label=label,
                                     params=json.dumps({"loss": "squared"}), rank_ratio=rr,
                                     observed_ratio=1.0, labelled_ratio=1.0, repetition=rep,
                                     split="test", metric=metric, value=value + rr - 0.5,
                                     status="ok", fit_seconds=1.0))
    directory.mkdir(parents=True)
    pd.DataFrame(rows, columns=COLUMNS).to_csv(directory / "results.csv", index=False)
    return directory


SPEC = """
title: Ours on two sets
results: [{a}, {b}]
series: [BR, LEML, NEW]
baseline: BR
metrics: [p@1, hamming]
percent: {percent}
"""


def _spec(tmp_path, percent="true", extra="", **dirs):
    a = dirs.get("a") or _write(tmp_path / "a", "scene")
    b = dirs.get("b") or _write(tmp_path / "b", "yeast")
    p = tmp_path / "own.yaml"
    p.write_text(textwrap.dedent(SPEC.format(a=a, b=b, percent=percent)) + extra)
    return p


def invoke(*args):
    return CliRunner().invoke(cli, [str(a) for a in args], obj={})


def _expected(dataset, label, factor=100.0, fmt=".2f"):
    v = np.array(VALUES[dataset][label]) * factor
    text = f"{format(v.mean(), fmt)} ± {format(v.std(ddof=1), fmt)}"
    if label == "BR":
        return text, None
    base = np.array(VALUES[dataset]["BR"]) * factor
    return text, stats.ttest_rel(v, base).pvalue


def test_spec_without_a_paper_lays_out_datasets_side_by_side(tmp_path):
    spec = _spec(tmp_path)
    r = invoke("table", spec, "-o", tmp_path / "out")
    assert r.exit_code == 0, r.output
    md = (tmp_path / "out" / "own.md").read_text()
    assert "| method | scene | yeast |" in md
    lines = {ln.split(" | ")[0].strip("| "): ln for ln in md.splitlines()
             if ln.startswith("| ") and "top-1" not in ln}
    block = md.split("## Hamming loss")[0]
    for dataset, col in (("scene", 1), ("yeast", 2)):
        means = {lab: np.mean(v) for lab, v in VALUES[dataset].items()}
        best = max(means, key=means.get)
        for label in VALUES[dataset]:
            text, p = _expected(dataset, label)
            line = next(ln for ln in block.splitlines() if ln.startswith(f"| {label} |"))
            got = line.strip("|").split("|")[col].strip()
            want = f"**{text}**" if label == best else text
            if p is not None and p < 0.05:
                want += " ↑" if means[label] > means["BR"] else " ↓"
            assert got == want, (dataset, label, p)
    assert "NEW" in lines and "**" in block
    # scene: NEW beats BR significantly; yeast: NEW is significantly worse
    assert "| NEW | **77.67 ± 2.52** ↑ | 70.00 ± 1.00 ↓ |" in block
    # Hamming loss: lower is better, so the bold goes to the smallest loss
    ham = md.split("## Hamming loss")[1]
    assert "| NEW | **22.33 ± 2.52** ↑ |" in ham
    assert "↑ / ↓: better / worse than BR (paired t-test over repetitions on the same splits, " \
           "p < 0.05; 3 pairs)." in md


def test_fractions_without_percent_and_paper_none_is_accepted(tmp_path):
    spec = _spec(tmp_path, percent="false", extra="paper: none\n")
    r = invoke("table", spec, "-o", tmp_path / "out")
    assert r.exit_code == 0, r.output
    assert "| NEW | **0.7767 ± 0.0252** ↑ | 0.7000 ± 0.0100 ↓ |" in r.output
    assert "## top-1 accuracy\n" in r.output


def test_two_settings_are_never_averaged_together(tmp_path):
    a = _write(tmp_path / "a", "scene", rank_ratios=(0.5, 0.6))
    spec = _spec(tmp_path, a=a)
    r = invoke("table", spec, "-o", tmp_path / "out")
    assert r.exit_code == 1
    assert r.output == (f"Error: {spec}: series 'BR' at dataset scene matches results of "
                        "several k/L settings (0.5, 0.6); fix it with 'axes' or put it in the "
                        "layout\n")
    spec.write_text(spec.read_text() + "axes: {k_over_L: [0.6]}\n")
    r = invoke("table", spec, "-o", tmp_path / "out")
    assert r.exit_code == 0, r.output
    assert "| BR | 82.00 ± 2.00 | — |" in r.output    # 0.72 + 0.1 at k/L = 60%; yeast: none


@pytest.mark.parametrize("extra, message", [
    ("baseline: CPLST\n".replace("baseline", "alpha: 0.1\nbaseline"),
     "baseline: unknown baseline 'CPLST'. Available baselines: BR, LEML, NEW"),
    ("alpha: 2\n", "alpha: must be a number in (0, 1). Got 2 instead."),
    ("layout: {rows: [method]}\n",
     "layout.rows[0]: unknown axis 'method'. Available axes: dataset, "
     "k, k_over_L, labelled, metric, observed, series"),
])
def test_bad_own_spec_is_one_line(tmp_path, extra, message):
    spec = _spec(tmp_path)
    text = spec.read_text().replace("baseline: BR\n", "")
    spec.write_text(text + extra)
    r = invoke("table", spec, "-o", tmp_path / "out")
    assert r.exit_code == 2, r.output
    assert r.output == f"Error: {spec}: {message}\n"


def test_without_results_or_configs_is_an_error(tmp_path):
    spec = tmp_path / "own.yaml"
    spec.write_text("title: T\nmetrics: [p@1]\n")
    r = invoke("table", spec)
    assert r.exit_code == 2
    assert r.output == (f"Error: {spec}: a table without a paper needs 'configs' or 'results' "
                        "(the runs to lay out)\n")


PDFLATEX = shutil.which("pdflatex")


def _compile(tmp_path, *tex_files):
    doc = tmp_path / "doc.tex"
    doc.write_text("\\documentclass{article}\n\\usepackage[utf8]{inputenc}\n"
                   "\\usepackage{booktabs,amssymb}\n\\begin{document}\n"
                   + "".join(f"\\input{{{t}}}\n" for t in tex_files) + "\\end{document}\n")
    return subprocess.run([PDFLATEX, "-interaction=nonstopmode", "-halt-on-error", doc.name],
                          cwd=tmp_path, capture_output=True, text=True, timeout=120)


@pytest.mark.skipif(PDFLATEX is None, reason="no pdflatex (apt-get install texlive-latex-base "
                                             "texlive-latex-recommended)")
def test_tex_of_an_own_table_and_of_a_run_compile(tmp_path):
    spec = _spec(tmp_path)
    assert invoke("table", spec, "-o", tmp_path / "out").exit_code == 0
    tex = (tmp_path / "out" / "own.tex").read_text()
    assert r"\toprule" in tex and r"\textbf{77.67 $\pm$ 2.52}$^{\uparrow}$" in tex
    run = _write(tmp_path / "run", "scene")
    frame = read_results(run)
    render_tables(frame, run, title="scene_run")
    run_tex = (run / "table.tex").read_text()
    assert r"\label{tab:scene-run}" in run_tex and r"0.7200 $\pm$ 0.0200" in run_tex
    done = _compile(tmp_path, tmp_path / "out" / "own.tex", run / "table.tex")
    assert done.returncode == 0, done.stdout[-3000:]
    assert (tmp_path / "doc.pdf").stat().st_size > 1000


def test_metrics_along_the_rows_bold_the_best_of_each_metric(tmp_path):
    spec = _spec(tmp_path, extra="layout: {blocks: [], rows: [metric, series], "
                                 "columns: [dataset]}\n")
    r = invoke("table", spec, "-o", tmp_path / "out")
    assert r.exit_code == 0, r.output
    rows = [[c.strip() for c in ln.strip("|").split("|")] for ln in r.output.splitlines()
            if ln.startswith("| ") and "---" not in ln][1:]
    bold_scene = [(row[0] or None, row[1]) for row in rows if row[2].startswith("**")]
    assert [b[1] for b in bold_scene] == ["NEW", "NEW"]     # best p@1 and best Hamming loss
    assert sum(row[3].startswith("**") for row in rows) == 2   # yeast: BR on both


def test_one_series_and_one_metric_need_no_place_in_the_layout(tmp_path):
    a = _write(tmp_path / "a", "scene")
    spec = tmp_path / "one.yaml"
    spec.write_text(f"title: T\nresults: [{a}]\nseries: [NEW]\nmetrics: [p@1]\n"
                    "layout: {blocks: [], rows: [dataset], columns: []}\n")
    r = invoke("table", spec, "-o", tmp_path / "out")
    assert r.exit_code == 0, r.output
    assert "| dataset | top-1 accuracy |\n|---|---:|\n| scene | **0.7767 ± 0.0252** |" in r.output
    spec.write_text(spec.read_text().replace("series: [NEW]", "series: [NEW, BR]"))
    r = invoke("table", spec, "-o", tmp_path / "out")
    assert r.exit_code == 2
    assert r.output == (f"Error: {spec}: layout: axis 'series' has 2 values but is not in "
                        "blocks, rows or columns\n")


def test_repetitions_of_one_draw_give_no_test_against_the_baseline(tmp_path):
    """An official split with all labels: the repetitions are one draw, never a t-test."""
    def official(directory):
        frame = pd.read_csv(directory / "results.csv")
        frame["split_fingerprint"], frame["mask_fingerprint"] = "official", "all"
        frame.to_csv(directory / "results.csv", index=False)
        return directory

    spec = _spec(tmp_path, a=official(_write(tmp_path / "a", "scene")),
                 b=_write(tmp_path / "b", "yeast"))
    r = invoke("table", spec, "-o", tmp_path / "out")
    assert r.exit_code == 0, r.output
    block = (tmp_path / "out" / "own.md").read_text().split("## Hamming loss")[0]
    # scene (one draw): no mark; yeast (fingerprints not recorded): tested as before
    assert "| NEW | **77.67 ± 2.52** | 70.00 ± 1.00 ↓ |" in block


def test_an_own_table_records_its_command_and_results_doc_lists_it(tmp_path):
    spec = _spec(tmp_path)
    out = tmp_path / "out"
    r = invoke("table", "-o", out, spec)
    assert r.exit_code == 0, r.output
    assert r.stderr.strip().endswith(f"{out / 'own.tex'}")   # as for paper tables
    assert (out / "own.json").is_file()
    meta = json.loads((out / "own.json").read_text())
    assert meta["command"] == f"mlx table -o {out} {spec}"
    assert (meta["kind"], meta["paper"], meta["spec"], meta["title"]) == (
        "own", None, str(spec), "Ours on two sets")
    assert [(s["given"], s["kind"], s["ran"]) for s in meta["sources"]] == [
        (str(tmp_path / "a"), "results", True), (str(tmp_path / "b"), "results", True)]
    from mlx.tables.results_doc import results_doc_text

    text, n = results_doc_text(out)
    assert n == 1
    assert (f"| [Ours on two sets](#ours-on-two-sets) | — (own runs: no published values) | "
            f"`mlx table -o {out} {spec}` |") in text
    section = text.split("## Ours on two sets\n", 1)[1]
    assert section.startswith(f"\nRendered {meta['rendered']} by `mlx table -o {out} {spec}` "
                              f"from the spec `{spec}`.\n")
    assert "| method | scene | yeast |" in section
