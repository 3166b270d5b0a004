"""Paper tables: published numbers, spec validation, rendering, compare and results-doc."""

import json
import textwrap

import pandas as pd
import pytest
from click.testing import CliRunner

from mlx.cli import cli
from mlx.reference import build as reference_build
from mlx.runner.results import COLUMNS
from mlx.tables import cli as cli_tables
from mlx.tables.build import build_table, read_sources
from mlx.tables.compare import auto_series, compare_spec
from mlx.tables.published import published
from mlx.tables.render import render_csv, render_latex, render_markdown, write_table
from mlx.tables.results_doc import results_doc_text
from mlx.tables.spec import load_spec

for _cmd in (cli_tables.table, cli_tables.compare, cli_tables.plot, cli_tables.results_doc):
    cli.add_command(_cmd)


def invoke(*args):
    return CliRunner().invoke(cli, [str(a) for a in args], obj={})


def row(label, method, loss, rank_ratio, observed, metric, value, *, rep=0, status="ok",
        dataset="bibtex"):
    ok = status == "ok"
    return dict(run_id="r1", cell_id=f"{label}-{rank_ratio}-{observed}-{rep}", experiment="t",
                dataset=dataset, method=method, label=label,
                params=json.dumps({"loss": loss}, separators=(",", ":")),
                rank_ratio=rank_ratio, observed_ratio=observed, repetition=rep,
                split="test" if ok else "", metric=metric if ok else "",
                value=value if ok else None, status=status,
                message="" if ok else "does not support missing labels", fit_seconds=2.0)


def write_results(directory, rows, manifest=None):
    directory.mkdir(parents=True, exist_ok=True)
    pd.DataFrame(rows, columns=COLUMNS).to_csv(directory / "results.csv", index=False)
    if manifest:
        (directory / "manifest.json").write_text(json.dumps(manifest))
    return directory


SMALL_ROWS = [
    row("LEML-SQ", "leml", "squared", 0.2, 1.0, "p@1", 0.60),     # paper 58.33: +1.67
    row("LEML-SQ", "leml", "squared", 0.4, 1.0, "p@1", 0.58),     # paper 60.99: -2.99, worse
    row("BR-LR", "br", "logistic", None, 1.0, "p@1", 0.55),       # no rank; not in Table 6
    row("CPLST", "cplst", "squared", 0.2, 1.0, "", None, status="skipped"),
]

SPEC = """
title: Test table
paper: leml
tables: [6]
results: [{results}]
series: [LEML-SQ, BCS, CPLST, BR-LR]
axes: {{dataset: [bibtex], k_over_L: [0.2, 0.4], observed: [1.0]}}
layout: {{blocks: [metric], rows: [dataset, k_over_L], columns: [series]}}
metrics:
  p@1: {{tolerance: 1.0}}
"""


@pytest.fixture
def small(tmp_path):
    res = write_results(tmp_path / "res", SMALL_ROWS)
    spec = tmp_path / "small.yaml"
    spec.write_text(SPEC.format(results=res))
    return spec, res


EXPECTED_MD = """\
# Test table

## top-1 accuracy (%) — LEML Table 6

| dataset | k/L | LEML-SQ | BCS | CPLST | BR-LR |
|---|---|---:|---:|---:|---:|
| bibtex | 20% | 60.00 / 58.33 (+1.67) ▲ | — / 41.43 | skipped / 55.55 | 55.00 / n/p |
|  | 40% | 58.00 / 60.99 (-2.99) ▼ | — / 54.63 | — / 58.73 | 55.00 / n/p |

Each cell: ours / published (ours − published), in the unit of the block heading. ▲ better \
and ▼ worse than the paper by more than the tolerance (unmarked: within ±tolerance); n/p no \
published value; — not run yet. \
Tolerances: p@1 1.00 (higher is better).

**2 compared cells: 0 within ±tolerance, 1 better than the paper beyond it ▲, 1 worse beyond it \
▼**; 2 n/p; 3 not run; 1 skipped or failed.

Results:

- `{res}`: 4 cells, run r1
"""


# ----------------------------------------------------------------------------- reference data
def test_shipped_reference_equals_rebuild_from_transcriptions():
    from importlib.resources import files

    for name, text in reference_build.build().items():
        assert (files("mlx.reference") / name).read_text(encoding="utf-8") == text, name


def test_published_units_and_scale():
    pub = published()
    r = pub[(pub["paper"] == "leml") & (pub["table"] == "6") & (pub["dataset"] == "bibtex")
            & (pub["method"] == "LEML") & (pub["loss"] == "SQ") & (pub["k_over_L"] == 0.2)]
    assert len(r) == 1 and r["metric"].iloc[0] == "p@1"
    assert (r["value"].iloc[0], r["unit"].iloc[0], r["scale"].iloc[0]) == (58.33, "%", 100)
    auc = pub[(pub["paper"] == "leml") & (pub["metric"] == "auc")]
    assert set(auc["unit"]) == {"fraction"} and (auc["value"] <= 1).all()
    assert set(pub["paper"]) == {"leml", "mom", "lsvv", "similarity"}
    # The paper prints two values for one setting; both are kept, with a note.
    both = pub[(pub["paper"] == "leml") & pub["table"].isin(["5", "15"]) & (pub["method"] == "BCS")
               & (pub["metric"] == "auc") & (pub["dataset"] == "bibtex")
               & (pub["k_over_L"] == 0.4) & (pub["observed"] == 0.2)]
    assert sorted(both["value"]) == [0.7817, 0.7871]
    assert both["note"].str.contains("prints").all()


def test_duration_parsing():
    assert reference_build.duration_seconds("3h40min") == ("13200", "")
    assert reference_build.duration_seconds(">2 days")[0] == "172800"
    assert "lower bound" in reference_build.duration_seconds(">2 days")[1]


# ----------------------------------------------------------------------------- rendering
def test_markdown_exact(small):
    spec_path, res = small
    spec = load_spec(spec_path)
    table = build_table(spec, read_sources(spec))
    assert render_markdown(table) == EXPECTED_MD.format(res=res)


def test_missing_values_are_marked_never_zero(small):
    spec_path, _ = small
    spec = load_spec(spec_path)
    table = build_table(spec, read_sources(spec))
    frame = pd.read_csv(pd.io.common.StringIO(render_csv(table)))
    states = dict(zip(zip(frame["series"], frame["k_over_L"]), frame["state"]))
    assert states[("BCS", 0.2)] == "not run"
    assert states[("BR-LR", 0.2)] == "n/p"
    assert states[("CPLST", 0.2)] == "skipped"
    assert states[("LEML-SQ", 0.4)] == "worse"
    assert frame.loc[frame["state"] == "not run", "ours"].isna().all()
    assert frame.loc[frame["state"] == "n/p", "published"].isna().all()
    md = render_markdown(table)
    assert "| 0.00 /" not in md and "/ 0.00 " not in md and "/ 0.00 |" not in md
    tex = render_latex(table)
    assert r"-- / 41.43" in tex and "55.00 / n/p" in tex and r"$\blacktriangledown$" in tex


def test_repetitions_are_averaged_and_metric_shown_as_fraction(tmp_path):
    rows = [row("LEML-SQ", "leml", "squared", 0.2, 1.0, "auc", v, rep=i)
            for i, v in enumerate((0.88, 0.90))]
    res = write_results(tmp_path / "res", rows)
    spec = tmp_path / "s.yaml"
    spec.write_text(SPEC.format(results=res).replace("tables: [6]", "tables: [10]")
                    .replace("p@1: {tolerance: 1.0}", "auc: {tolerance: 0.01}"))
    s = load_spec(spec)
    cell = next(c for c in build_table(s, read_sources(s)).cells
                if c.key["series"] == "LEML-SQ" and c.key["k_over_L"] == 0.2)
    # mean (sd over the 2 repetitions, ddof=1: 0.01414) / published (difference)
    assert cell.text() == "0.8900 (0.0141) / 0.8910 (-0.0010)" and cell.n_rep == 2
    assert cell.state == "within"


def test_sd_over_repetitions_in_markdown_latex_and_csv(tmp_path):
    rows = [row("LEML-SQ", "leml", "squared", 0.2, 1.0, "p@1", v, rep=i)
            for i, v in enumerate((0.59, 0.61, 0.63))] + SMALL_ROWS[1:]
    res = write_results(tmp_path / "res", rows)
    spec = tmp_path / "s.yaml"
    spec.write_text(SPEC.format(results=res))
    s = load_spec(spec)
    table = build_table(s, read_sources(s))
    md = render_markdown(table)
    # 3 repetitions: mean 61.00, sd 2.00 (in %); a single repetition shows no sd.
    assert "| bibtex | 20% | 61.00 (2.00) / 58.33 (+2.67) ▲ | — / 41.43 |" in md
    assert "|  | 40% | 58.00 / 60.99 (-2.99) ▼ |" in md
    assert ("in the unit of the block heading. Where a cell has more than one repetition, ours "
            "is their mean with the standard deviation in parentheses: ours (sd) / published "
            "(ours − published). ▲ better and ▼ worse") in md
    tex = render_latex(table)
    assert r"61.00 (2.00) / 58.33 {\scriptsize (+2.67)} $\blacktriangle$" in tex
    assert "% ours (sd): mean and standard deviation over repetitions." in tex
    frame = pd.read_csv(pd.io.common.StringIO(render_csv(table)))
    first = frame[(frame["series"] == "LEML-SQ") & (frame["k_over_L"] == 0.2)].iloc[0]
    assert (first["ours"], first["ours_std"], first["repetitions"]) == (61, 2, 3)


def test_compare_shows_sd_over_repetitions(tmp_path):
    rows = [row("LEML-SQ", "leml", "squared", 0.2, 1.0, "p@1", v, rep=i)
            for i, v in enumerate((0.60, 0.62))]
    res = write_results(tmp_path / "res", rows)
    r = invoke("compare", res, "--paper", "leml")
    assert r.exit_code == 0, r.output
    assert "| bibtex | 61.00 (1.41) / 58.33 (+2.67) ▲ |" in r.stdout
    assert "ours (sd) / published (ours − published)" in r.stdout


def test_table_command_writes_files_and_prints_markdown(small, tmp_path):
    spec_path, res = small
    out = tmp_path / "tables"
    r = invoke("table", "-o", out, spec_path)
    assert r.exit_code == 0, r.output
    assert r.stdout == EXPECTED_MD.format(res=res) + "\n"
    for ext in ("md", "csv", "tex", "json"):
        assert (out / f"small.{ext}").stat().st_size > 0
    meta = json.loads((out / "small.json").read_text())
    assert meta["command"] == f"mlx table -o {out} {spec_path}"
    assert meta["counts"]["worse"] == 1 and meta["counts"]["better"] == 1
    assert meta["counts"]["within"] == 0


def test_table_command_still_renders_a_results_directory(small):
    _, res = small
    r = invoke("table", res)
    assert r.exit_code == 0, r.output
    assert "| LEML-SQ |" in r.output and (res / "table.md").exists()


# ----------------------------------------------------------------------------- spec errors
@pytest.mark.parametrize("edit, message", [
    (lambda s: s.replace("results: [{results}]", "configs: [nope.yaml]"),
     "configs[0]: config file 'nope.yaml' not found"),
    (lambda s: s.replace("p@1: {{tolerance: 1.0}}", "p@0: {{tolerance: 1.0}}"),
     "metrics.p@0: invalid metric 'p@0': k in 'p@<k>' must be an integer >= 1, as in 'p@3'; "
     "got '0'"),
    (lambda s: s.replace("paper: leml", "paper: lemml"),
     "paper: unknown paper 'lemml'. Did you mean 'leml'? Available papers: leml, lsvv, mom, "
     "similarity"),
    (lambda s: s.replace("tables: [6]", "tables: [16]"),
     "tables[0]: paper 'leml' has no published table '16'. Tables: 3, 4, 5, 6, 7, 8, 9, 10, 11, "
     "12, 13, 14, 15"),
    (lambda s: s.replace("layout:", "layuot:"),
     "unknown key 'layuot'. Did you mean 'layout'? Valid keys at the top level: axes, configs, "
     "dataset_aliases, description, figures, layout, metrics, name, needs, paper, results, "
     "series, tables, title, variants"),
    (lambda s: s.replace("columns: [series]", "columns: [method]"),
     "layout.columns[0]: unknown axis 'method'. Available axes: dataset, k, k_over_L, labelled, "
     "metric, observed, series, variant"),
])
def test_bad_spec_is_one_line_error_exit_2(tmp_path, edit, message):
    spec = tmp_path / "bad.yaml"
    spec.write_text(edit(SPEC).format(results=tmp_path))
    r = invoke("table", spec)
    assert r.exit_code == 2
    assert r.output == f"Error: {spec}: {message}\n"


def test_unknown_metric_name_lists_valid_names(tmp_path):
    spec = tmp_path / "bad.yaml"
    spec.write_text(SPEC.format(results=tmp_path).replace("p@1:", "top1:"))
    r = invoke("table", spec)
    assert r.exit_code == 2
    assert r.output.startswith(f"Error: {spec}: metrics.top1: unknown metric 'top1'.")
    assert "fit_seconds" in r.output and r.output.count("\n") == 1


def test_check_and_list_configs(tmp_path):
    spec = tmp_path / "s.yaml"
    spec.write_text(SPEC.format(results=tmp_path).replace("results: [" + str(tmp_path) + "]",
                                                          "configs: [configs/absent.yaml]"))
    r = invoke("table", "--list-configs", spec)
    assert r.exit_code == 0 and r.stdout == "configs/absent.yaml\n"
    r = invoke("table", "--check", spec)
    assert r.exit_code == 3
    assert r.stderr == ("s: cannot be produced here yet:\n"
                        "  - configs/absent.yaml: config not written yet\n")


def test_check_reports_unimplemented_method(tmp_path):
    config = tmp_path / "c.yaml"
    config.write_text(textwrap.dedent("""
        name: c
        dataset: {synthetic: {n_samples: 50, n_features: 5, n_labels: 4, rank: 2, seed: 0}}
        methods: [{name: notamethod}]
    """))
    spec = tmp_path / "s.yaml"
    spec.write_text(SPEC.format(results=tmp_path).replace(
        "results: [" + str(tmp_path) + "]", f"configs: [{config}]"))
    r = invoke("table", "--check", spec)
    assert r.exit_code == 3
    assert f"{config}: method 'notamethod' is not implemented yet" in r.stderr


def test_spec_with_a_config_reads_its_output_directory(tmp_path):
    out = tmp_path / "runs" / "c"
    write_results(out, SMALL_ROWS)
    config = tmp_path / "c.yaml"
    config.write_text(f"name: c\ndataset: bibtex\nmethods: [br]\noutput: {out}\n")
    spec = tmp_path / "s.yaml"
    spec.write_text(SPEC.format(results=tmp_path).replace(
        "results: [" + str(tmp_path) + "]", f"configs: [{config}]"))
    s = load_spec(spec)
    md = render_markdown(build_table(s, read_sources(s)))
    assert "60.00 / 58.33 (+1.67)" in md and f"`{config}` → `{out}/`" in md


def test_every_shipped_spec_loads():
    from pathlib import Path

    specs = sorted((Path(__file__).resolve().parents[2] / "configs" / "tables").glob("*.yaml"))
    assert len(specs) >= 8
    for path in specs:
        spec = load_spec(path, require_configs=False)
        assert spec.configs and spec.series and spec.metrics


# ----------------------------------------------------------------------------- compare
COMPARE_ROWS = [
    row("LEML-SQ", "leml", "squared", 0.2, 1.0, "p@1", 0.60),
    row("LEML-SQ", "leml", "squared", 0.4, 1.0, "p@1", 0.62),
    row("leml", "leml", "logistic", 0.2, 1.0, "p@1", 0.47),       # matched by method + loss
    row("mystery", "mystery", "squared", 0.2, 1.0, "p@1", 0.10),  # no counterpart
    row("LEML-SQ", "leml", "squared", 0.2, 1.0, "micro_f1", 0.3),  # not published
]


def test_auto_series_matches_label_then_method_and_loss():
    frame = pd.DataFrame(COMPARE_ROWS, columns=COLUMNS)
    series, unmatched = auto_series(frame, "leml")
    assert [(s.name, s.paper) for s in series] == [
        ("LEML-SQ", {"method": "LEML", "loss": "SQ"}), ("leml", {"method": "LEML", "loss": "LR"})]
    assert unmatched == ["mystery"]
    frame = pd.DataFrame([row("WSABIE", "wsabie", "warp", 0.2, 1.0, "p@1", 0.5),
                          row("BR-SH", "br", "squared_hinge", None, 0.2, "p@1", 0.5)],
                         columns=COLUMNS)
    series, _ = auto_series(frame, "leml")
    assert [s.paper for s in series] == [{"method": "WSABIE"}, {"method": "BR", "loss": "SH"}]


def test_compare_auto_matches_rows(tmp_path):
    res = write_results(tmp_path / "res", COMPARE_ROWS)
    r = invoke("compare", res, "--paper", "leml")
    assert r.exit_code == 0, r.output
    assert "| dataset | k/L | LEML-SQ | leml |" in r.stdout
    assert "| bibtex | 20% | 60.00 / 58.33 (+1.67) ▲ | 47.00 / 46.20 (+0.80) |" in r.stdout
    assert "|  | 40% | 62.00 / 60.99 (+1.01) ▲ | — / 50.78 |" in r.stdout
    assert "Note: no published counterpart in leml for: mystery" in r.stderr
    assert "Note: not published in leml: micro_f1" in r.stderr


def test_compare_missing_label_rate_uses_missing_label_tables(tmp_path):
    rows = [row("BR-LR", "br", "logistic", None, 0.2, "p@1", 0.5594)]
    frame = pd.DataFrame(rows, columns=COLUMNS)
    spec, _ = compare_spec(frame, "leml")
    from mlx.tables.build import Source

    table = build_table(spec, [Source("x", "results", tmp_path, frame, None)])
    (cell,) = table.cells
    assert cell.text() == "55.94 / 55.94 (+0.00)" and cell.table == "11"


def test_compare_unknown_paper_is_one_line(tmp_path):
    res = write_results(tmp_path / "res", COMPARE_ROWS)
    r = invoke("compare", res, "--paper", "lem")
    assert r.exit_code == 2
    assert r.output == ("Error: unknown paper 'lem'. Did you mean 'leml'? Available papers: "
                        "leml, lsvv, mom, similarity\n")



LEML_DATASETS = "bibtex, autofood, compphys, delicious, eurlex, nus-wide, wiki"


def test_compare_on_datasets_the_paper_never_used_is_an_error(tmp_path):
    rows = [row("LEML-SQ", "leml", "squared", 0.2, 1.0, "p@1", 0.6, dataset=d)
            for d in ("scene", "yeast")]
    res = write_results(tmp_path / "res", rows)
    r = invoke("compare", res, "--paper", "leml")
    assert r.exit_code == 2
    assert r.stdout == ""
    assert r.output == (f"Error: {res}: the leml paper has no rows for datasets 'scene', 'yeast' "
                        f"(it reports: {LEML_DATASETS}); nothing to compare\n")


def test_compare_notes_datasets_the_paper_never_used(tmp_path):
    rows = COMPARE_ROWS[:2] + [row("LEML-SQ", "leml", "squared", 0.2, 1.0, "p@1", 0.7,
                                   dataset="scene"),
                               row("BR-LR", "br", "logistic", None, 1.0, "p@1", 0.5,
                                   dataset="scene")]
    res = write_results(tmp_path / "res", rows)
    r = invoke("compare", res, "--paper", "leml")
    assert r.exit_code == 0, r.output
    assert "| bibtex | 20% | 60.00 / 58.33 (+1.67) ▲ |" in r.stdout
    assert "scene" not in r.stdout and "n/p" not in r.stdout.split("Each cell")[0]
    assert "BR-LR" not in r.stdout          # only run on scene: not a column of the table
    assert r.stderr == (f"Note: the leml paper has no rows for dataset 'scene' (it reports: "
                        f"{LEML_DATASETS})\n")


def test_compare_dataset_missing_from_the_chosen_table(tmp_path):
    rows = [row("LEML-SQ", "leml", "squared", 0.2, 1.0, "p@1", 0.6, dataset="delicious")]
    res = write_results(tmp_path / "res", rows)
    r = invoke("compare", res, "--paper", "leml", "--table", "5")
    assert r.exit_code == 2
    assert r.output == (f"Error: {res}: the leml paper has no rows for dataset 'delicious' in "
                        "table 5 (it reports: bibtex, autofood, compphys); nothing to compare\n")

# ----------------------------------------------------------------------------- results doc
def test_results_doc_lists_command_and_machine(small, tmp_path):
    spec_path, res = small
    (res / "manifest.json").write_text(json.dumps({
        "run_id": "r1", "cpu": "Test CPU", "cpu_count": 4, "jobs": 2,
        "blas_threads_per_worker": 1, "git_commit": "0123456789abcdef", "git_dirty": True,
        "versions": {"mlx": "0.1.0", "numpy": "2.0"}, "finished": "2026-01-01T00:00:00Z"}))
    out = tmp_path / "tables"
    spec = load_spec(spec_path)
    write_table(build_table(spec, read_sources(spec)), out, command=f"mlx table {spec_path}")
    text, n = results_doc_text(out)
    assert n == 1
    assert f"by `mlx table {spec_path}`" in text
    assert "| Test CPU (4 CPUs) | 2 (BLAS 1) | mlx 0.1.0, numpy 2.0 | 0123456789 (dirty) |" in text
    assert "### top-1 accuracy (%) — LEML Table 6" in text
    assert "\nResults:\n" not in text
    doc = tmp_path / "RESULTS.md"
    r = invoke("results-doc", "--tables-dir", out, "-o", doc)
    assert r.exit_code == 0 and doc.read_text() == text


def test_results_doc_keeps_sections_of_tables_not_rendered_here(small, tmp_path):
    spec_path, _ = small
    out = tmp_path / "tables"
    spec = load_spec(spec_path)
    write_table(build_table(spec, read_sources(spec)), out, command=f"mlx table {spec_path}")
    previous = ("# Results\n\n| table | within tolerance | command |\n|---|---|---|\n"
                "| [Other paper Table 9](#other-paper-table-9) | 3 of 4 | `mlx table o.yaml` |\n"
                "| [Test table](#test-table) | 0 of 0 | `old` |\n\n"
                "## Other paper Table 9\n\nRendered elsewhere.\n\n### a block\n\n| x |\n\n"
                "## Test table\n\nan outdated rendering\n")
    text, n = results_doc_text(out, previous)
    assert n == 2
    assert "| [Other paper Table 9](#other-paper-table-9) | 3 of 4 | `mlx table o.yaml` |" in text
    assert "## Other paper Table 9\n\nRendered elsewhere.\n\n### a block\n\n| x |" in text
    assert "an outdated rendering" not in text and "`old`" not in text
    assert text.index("## Test table") < text.index("## Other paper Table 9")
    doc = tmp_path / "RESULTS.md"
    doc.write_text(previous)
    assert invoke("results-doc", "--tables-dir", out, "-o", doc).exit_code == 0
    assert doc.read_text() == text


def test_results_doc_without_tables(tmp_path):
    text, n = results_doc_text(tmp_path / "none")
    assert n == 0 and "No paper table has been rendered yet" in text


def render_rows(tmp_path, rows, spec_body: str) -> str:
    """Markdown of a spec (``title: T`` plus ``spec_body``) over ``rows`` written as results."""
    res = write_results(tmp_path / "res", rows)
    spec = tmp_path / "s.yaml"
    spec.write_text(f"title: T\nresults: [{res}]\n" + textwrap.dedent(spec_body))
    s = load_spec(spec)
    return render_markdown(build_table(s, read_sources(s)))


def test_a_baseline_without_published_values_appears_in_every_variant(tmp_path):
    """`paper: none` series (the constant) and the variant rule for rows without one."""
    def srow(label, method, params, value, rep):
        return dict(run_id="r1", cell_id=f"{label}-{json.dumps(params)}-{rep}", experiment="t",
                    dataset="abalone", method=method, label=label,
                    params=json.dumps(params, separators=(",", ":")), repetition=rep,
                    split="test", metric="mse", value=value, status="ok", fit_seconds=1.0)

    rows = [srow("constant", "constant", {}, 0.0144, 0),
            srow("constant", "constant", {}, 0.0146, 1)]
    for sim, v in (("sigmoid", 0.0061), ("manhattan", 0.0069)):
        rows += [srow("RegLand-Sp", "landmark", {"model": "regland_sp", "similarity": sim}, v, r)
                 for r in (0, 1)]
    md = render_rows(tmp_path, rows, """
        paper: similarity
        tables: ["1"]
        series:
          - {name: constant, paper: none, ours: {method: constant}}
          - RegLand-Sp
        axes: {dataset: [abalone]}
        layout: {blocks: [metric], rows: [dataset], columns: [variant, series]}
        metrics:
          mse: {tolerance: null, format: ".2e"}
        """)
    line = next(ln for ln in md.splitlines() if ln.startswith("| abalone"))
    cells = [c.strip() for c in line.strip("|").split("|")][1:]
    # sigmoid: constant, RegLand-Sp; manhattan: constant, RegLand-Sp
    assert cells[0].startswith("1.45e-02") and cells[0].endswith("/ n/p")
    assert cells[2].startswith("1.45e-02") and cells[2].endswith("/ n/p")
    assert cells[1].startswith("6.10e-03") and "/ 6.20e-03" in cells[1]
    assert cells[3].startswith("6.90e-03") and "/ 6.00e-03" in cells[3]


def test_a_method_without_a_rank_appears_at_every_absolute_rank(tmp_path):
    """Rows by absolute rank k (LEML Table 4): the constant, which has no rank, fills every k;
    a ranked method only its own."""
    def krow(label, method, rank, value):
        return dict(run_id="r1", cell_id=f"{label}-{rank}", experiment="t",
                    dataset="eurlex-synth", method=method, label=label, params="{}",
                    rank=rank, observed_ratio=1.0, repetition=0, split="test", metric="p@1",
                    value=value, status="ok", fit_seconds=1.0)

    rows = [krow("constant", "constant", None, 0.06), krow("LEML-SQ", "leml", 250, 0.66)]
    md = render_rows(tmp_path, rows, """
        paper: leml
        tables: [4]
        series:
          - {name: constant, paper: none, ours: {method: constant}}
          - {name: LEML-SQ, paper: none, ours: {method: leml}}
        axes: {k: [250, 500]}
        layout: {blocks: [metric], rows: [dataset, k], columns: [series]}
        metrics:
          p@1: {tolerance: null}
        """)
    lines = [ln for ln in md.splitlines()
             if ln.startswith("| eurlex-synth") or ln.startswith("|  |")]
    cells = [[c.strip() for c in ln.strip("|").split("|")][2:] for ln in lines]
    assert cells[0][0].startswith("6.00") and cells[0][1].startswith("66.00")
    assert cells[1][0].startswith("6.00") and cells[1][1].startswith("—")


def test_a_published_value_without_a_rank_fits_any_rank_the_spec_fixes(tmp_path):
    """MoM Table 3 gives training times with no K: fixing k in the spec keeps them."""
    rows = [dict(run_id="r1", cell_id="m", experiment="t", dataset="bibtex", method="mom",
                 label="MoM", params="{}", rank=150, observed_ratio=1.0, repetition=0,
                 split="test", metric="auc", value=0.86, status="ok", fit_seconds=4.5)]
    md = render_rows(tmp_path, rows, """
        paper: mom
        tables: ["3"]
        series: [MoM]
        axes: {dataset: [bibtex], k: [150]}
        layout: {blocks: [metric], rows: [dataset], columns: [series]}
        metrics:
          fit_seconds: {tolerance: null, format: ".2f"}
        """)
    assert "| bibtex | 4.50 / 300.00 (-295.50) |" in md


@pytest.mark.parametrize("diff, higher, state", [
    (0.9, True, "within"), (-1.0, True, "within"), (1.2, True, "better"), (-1.2, True, "worse"),
    (-1.2, False, "better"), (1.2, False, "worse"), (-0.4, False, "within")])
def test_a_cell_is_within_better_or_worse(diff, higher, state):
    from mlx.tables.build import judge

    assert judge(diff, 1.0, higher) == state


def test_counts_are_three_way_for_a_lower_is_better_metric(tmp_path):
    """A cell far better than the paper is not "within tolerance" (it used to count so)."""
    # Published LEML-SQ bibtex Hamming loss: 0.0126, 0.0124, 0.0123 (lower is better).
    rows = [row("LEML-SQ", "leml", "squared", rr, 1.0, "hamming", v)
            for rr, v in ((0.2, 0.0098), (0.4, 0.0140), (0.6, 0.0130))]
    md = render_rows(tmp_path, rows, """
        paper: leml
        tables: ["9"]
        series: [LEML-SQ]
        axes: {dataset: [bibtex], k_over_L: [0.2, 0.4, 0.6], observed: [1.0]}
        layout: {blocks: [metric], rows: [dataset, k_over_L], columns: [series]}
        metrics:
          hamming: {tolerance: 0.001, format: ".4f"}
        """)
    assert "| bibtex | 20% | 0.0098 / 0.0126 (-0.0028) ▲ |" in md
    assert "|  | 40% | 0.0140 / 0.0124 (+0.0016) ▼ |" in md
    assert "|  | 60% | 0.0130 / 0.0123 (+0.0007) |" in md
    assert ("**3 compared cells: 1 within ±tolerance, 1 better than the paper beyond it ▲, "
            "1 worse beyond it ▼**") in md


def test_results_doc_does_not_pass_old_not_worse_counts_off_as_within():
    from mlx.tables.results_doc import _counts

    assert _counts({"within": 42, "worse": 38}) == (
        "42 not worse / 38 worse of 80 (re-render for the three-way counts)")
    assert _counts({"within": 11, "better": 31, "worse": 38}) == "11 / 31 / 38 of 80"


def test_an_open_axis_with_several_values_is_an_error_not_a_pooled_mean(tmp_path):
    """BR-SQ at 100% and 20% observed entries: the mean of both is not a spread over
    repetitions of one setting (it used to print as "74.62 (0.50)")."""
    rows = [row("BR-SQ", "br", "squared", None, obs, "p@3", v, rep=rep)
            for rep in (0, 1) for obs, v in ((1.0, 0.75 + rep / 200), (0.2, 0.74 + rep / 200))]
    res = write_results(tmp_path / "res", rows)
    spec = tmp_path / "s.yaml"
    spec.write_text(f"paper: leml\ntables: [5]\nresults: [{res}]\nseries: [BR-SQ]\n"
                    f"axes: {{dataset: [bibtex], k_over_L: [0.4]}}\n"
                    f"layout: {{blocks: [metric], rows: [dataset], columns: [series]}}\n"
                    f"metrics: [p@3]\n")
    r = invoke("table", spec)
    assert r.exit_code == 2
    assert r.output == (f"Error: {spec}: layout: series 'BR-SQ' would pool results of 2 "
                        f"observed values (20%, 100%) at k/L=40%, dataset=bibtex, method=BR-SQ; "
                        f"add 'observed' to layout.blocks, rows or columns, or fix it with "
                        f"axes.observed: [value]\n")
    spec.write_text(spec.read_text().replace("k_over_L: [0.4]", "k_over_L: [0.4], observed: [0.2]"))
    r = invoke("table", "-o", tmp_path / "out", spec)
    assert r.exit_code == 0, r.output
    assert "| bibtex | 74.25 (0.35) / " in r.stdout
