"""benchmarks/benchmark_multilabel.py: the benchmark page from results.csv files."""

import csv
import importlib.util
from pathlib import Path

import numpy as np
import yaml

from mlx.ranks import average_ranks, critical_difference

SCRIPT = Path(__file__).resolve().parents[1] / "benchmarks" / "benchmark_multilabel.py"

COLUMNS = ["run_id", "cell_id", "dataset", "method", "label", "candidate", "metric", "value",
           "status", "message", "fit_seconds"]


def _module():
    spec = importlib.util.spec_from_file_location("benchmark_multilabel", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _write(root: Path, dataset: str, p1: dict, labels=("A", "B", "C", "D")):
    d = root / dataset
    d.mkdir(parents=True)
    with open(d / "results.csv", "w", newline="") as fh:
        w = csv.DictWriter(fh, COLUMNS)
        w.writeheader()
        for label, values in p1.items():
            for rep, v in enumerate(values):
                cell = f"{label}-{rep}"
                for metric, value in (("p@1", v), ("auc", 0.5)):
                    w.writerow({"run_id": "r", "cell_id": cell, "dataset": dataset,
                                "method": label.lower(), "label": label, "candidate": "",
                                "metric": metric, "value": value, "status": "ok",
                                "message": "", "fit_seconds": 2.0})
                # a selection candidate's row is not a test result
                w.writerow({"run_id": "r", "cell_id": cell, "dataset": dataset,
                            "method": label.lower(), "label": label, "candidate": "1",
                            "metric": "p@1", "value": 0.0, "status": "ok", "message": "",
                            "fit_seconds": 1.0})
    config = {"dataset": dataset, "methods": [{"name": lab.lower(), "label": lab}
                                              for lab in labels]}
    (d / "config.resolved.yaml").write_text(yaml.safe_dump(config))


def test_page_ranks_complete_methods_and_lists_the_missing(tmp_path):
    res = tmp_path / "results"
    _write(res, "s1", {"A": [0.5, 0.7], "B": [0.4], "C": [0.1]})
    _write(res, "s2", {"A": [0.3], "B": [0.35], "C": [0.2]})
    _write(res, "s3", {"A": [0.9], "B": [0.2], "C": [0.3]})
    out = tmp_path / "docs" / "BENCHMARK.md"
    out.parent.mkdir()
    text = _module().render(res, out, tmp_path / "docs" / "figures")
    assert out.read_text() == text
    scores = np.array([[0.6, 0.4, 0.1], [0.3, 0.35, 0.2], [0.9, 0.2, 0.3]])
    ranks = average_ranks(scores)
    assert "Ranked: A, B, C on 3 data sets; not ranked (no P@1 on every set): D." in text
    assert f"| A | {ranks[0]:.2f} | {scores[:, 0].mean():.4f} | 8.0 |" in text
    assert f"CD = {critical_difference(3, 3):.2f} (k = 3, N = 3)" in text
    assert "No two methods' average ranks differ by more than CD." in text   # CD 1.91, ranks 1-3
    assert "| A | 2 | 0.6000 | — | — | — | 0.5000 | — | 2.0 |" in text
    assert "* D: no result: not run yet, or every cell failed (see the run's output)" in text
    assert "![CD diagram](figures/benchmark-cd-p1.svg)" in text
    assert (tmp_path / "docs" / "figures" / "benchmark-time-p1.svg").is_file()


def _write_budgeted(root: Path) -> None:
    """Two sets: LEML-SQ over its budget on one split of s2, trees and LEML-SQ otherwise ok."""
    cols = COLUMNS + ["repetition", "cell_seconds", "budget_seconds"]
    for dataset, rows in {
        "s1": [("LEML-SQ", 0, "ok", 0.600, 3.0), ("PLT", 0, "ok", 0.605, 5.0),
               ("Omikuji", 0, "ok", 0.590, 1.0)],
        "s2": [("LEML-SQ", 0, "ok", 0.500, 9.0), ("LEML-SQ", 1, "over_budget", None, None),
               ("PLT", 0, "ok", 0.400, 2.0), ("PLT", 1, "ok", 0.400, 2.0),
               ("Omikuji", 0, "ok", 0.560, 4.0), ("Omikuji", 1, "ok", 0.540, 4.0)],
    }.items():
        d = root / dataset
        d.mkdir(parents=True)
        with open(d / "results.csv", "w", newline="") as fh:
            w = csv.DictWriter(fh, cols)
            w.writeheader()
            for label, rep, status, p1, fit in rows:
                budget = 30 if label == "LEML-SQ" else ""
                base = {"run_id": "r", "cell_id": f"{label}-{rep}", "dataset": dataset,
                        "method": label.lower(), "label": label, "candidate": "",
                        "status": status, "repetition": rep, "budget_seconds": budget,
                        "cell_seconds": 31.5 if status == "over_budget" else 2 * fit}
                if status == "over_budget":
                    w.writerow({**base, "metric": "", "value": "", "fit_seconds": "",
                                "message": "stopped after 31.50 s, over the budget of 30 s "
                                           "per cell (methods[0].budget)"})
                    continue
                w.writerow({**base, "metric": "p@1", "value": p1, "message": "",
                            "fit_seconds": fit})
        config = {"dataset": dataset, "methods": [
            {"name": "leml", "label": "LEML-SQ", "budget": 30.0},
            {"name": "plt", "label": "PLT"}, {"name": "omikuji", "label": "Omikuji"}]}
        (d / "config.resolved.yaml").write_text(yaml.safe_dump(config))


def test_page_states_budgets_lists_over_budget_cells_and_compares_leml_with_trees(tmp_path):
    res = tmp_path / "results"
    _write_budgeted(res)
    out = tmp_path / "BENCHMARK.md"
    text = _module().render(res, out, tmp_path / "figures")
    # budgets, outcomes and totals per method (cell s: 2 x fit, over-budget cell 31.5 s)
    assert "| LEML-SQ | 30 | 2 | 1 | 0 | 12.0 | 55.5 |" in text
    assert "| PLT | none | 3 | 0 | 0 | 9.0 | 18.0 |" in text
    assert ("| method | data set | split | stopped after s | budget s |\n"
            "|---|---|---:|---:|---:|\n| LEML-SQ | s2 | 1 | 31.5 | 30 |\n") in text
    # s1: PLT best (0.605), LEML 0.5 points below and faster (3 s vs 5 s); s2: Omikuji best
    # (0.55), LEML's one finished split 5 points below
    assert "| s1 | 0.6000 | PLT 0.6050 | -0.50 | 3.0 | 5.0 |" in text
    assert "| s2 | 0.5000 | Omikuji 0.5500 | -5.00 | 9.0 | 4.0 |" in text
    assert ("Within 1 point of the best tree's P@1 on 1 of 2 sets; within 1 point and no "
            "slower to fit on 1 of 2.") in text
    assert "* LEML-SQ: over_budget: stopped after 31.50 s, over the budget of 30 s" in text


def test_page_without_over_budget_cells_says_so(tmp_path):
    res = tmp_path / "results"
    _write(res, "s1", {"A": [0.5], "B": [0.4]}, labels=("A", "B"))
    text = _module().render(res, tmp_path / "B.md", tmp_path / "figures", note="Busy machine.")
    assert text.splitlines()[4] == "> **Note.** Busy machine."
    assert "No cell went over its budget." in text
    assert "| A | none | 1 | 0 | 0 | 2.0 | — |" in text


def test_page_names_the_pairs_further_apart_than_cd(tmp_path):
    res = tmp_path / "results"
    for i in range(8):        # A best, C worst on every set: ranks 1, 2, 3; CD(3, 8) = 1.17
        _write(res, f"s{i}", {"A": [0.9], "B": [0.5 + 0.01 * i], "C": [0.1]})
    text = _module().render(res, tmp_path / "B.md", tmp_path / "figures")
    assert f"CD = {critical_difference(3, 8):.2f} (k = 3, N = 8)" in text
    assert "Average ranks further apart than CD (better first): A over C (2.00)." in text


def test_page_of_a_partial_run_says_so_at_the_top(tmp_path, monkeypatch):
    res = tmp_path / "results"
    _write(res, "s1", {"A": [0.5], "B": [0.4]}, labels=("A", "B"))
    (tmp_path / "configs" / "benchmark").mkdir(parents=True)
    for name in ("s1", "s2", "s3"):
        (tmp_path / "configs" / "benchmark" / f"{name}.yaml").write_text("")
    monkeypatch.chdir(tmp_path)
    text = _module().render(res, tmp_path / "B.md", tmp_path / "figures")
    lines = text.splitlines()
    assert lines[4] == ("> **Partial.** 2 of the benchmark's data sets have no results here "
                        "(s2, s3): the ranks and totals below cover the 1 that do.")
    assert "interrupted before the run wrote it): s2, s3." in text
    (tmp_path / "configs" / "benchmark" / "s2.yaml").unlink()
    (tmp_path / "configs" / "benchmark" / "s3.yaml").unlink()
    assert "Partial" not in _module().render(res, tmp_path / "B.md", tmp_path / "figures")


RESULTS_DOC = """# Results: our numbers beside the published ones

Intro.

| table | compared: within ±tolerance / better / worse | command |
|---|---|---|
| [LEML t](#leml-t) | 1 / 0 / 0 of 1 | `mlx table t.yaml` |

## LEML t

The table.
"""


def test_summary_goes_into_results_doc_once_and_survives_results_doc(tmp_path):
    from mlx.tables.results_doc import results_doc_text

    module = _module()
    res = tmp_path / "results"
    _write_budgeted(res)
    docs = tmp_path / "docs"
    docs.mkdir()
    doc = docs / "RESULTS.md"
    doc.write_text(RESULTS_DOC)
    page = docs / "BENCHMARK.md"
    text = module.render(res, page, docs / "figures")
    assert module.update_results_doc(doc, text, page)
    once = doc.read_text()
    row = ("| [Multi-label benchmark](#multi-label-benchmark) | — (methods against each other: "
           "no published values) | `make benchmark-multilabel` |")
    assert f"| [LEML t](#leml-t) | 1 / 0 / 0 of 1 | `mlx table t.yaml` |\n{row}\n\n## LEML t" \
        in once
    section = once.split("## Multi-label benchmark\n", 1)[1]
    assert "[BENCHMARK.md](BENCHMARK.md)" in section
    assert "### LEML-SQ beside the best tree method (P@1)" in section
    assert "| s1 | 0.6000 | PLT 0.6050 | -0.50 | 3.0 | 5.0 |" in section
    assert "Command: `make benchmark-multilabel`" in section
    assert "## Per data set" not in section and "### s1" not in section
    # again, after a new run: replaced, not added twice
    assert module.update_results_doc(doc, text.replace("-0.50", "-0.75"), page)
    twice = doc.read_text()
    assert twice.count("## Multi-label benchmark") == 1 and twice.count(row) == 1
    assert "| -0.75 |" in twice and "| -0.50 |" not in twice
    # regenerating the paper tables keeps the section (its index row names it)
    regenerated, n = results_doc_text(tmp_path / "no-tables", previous=twice)
    assert n == 2 and row in regenerated

    def lines(text):
        return [ln for ln in text.split("## Multi-label benchmark\n", 1)[1].splitlines() if ln]

    assert lines(regenerated) == lines(twice)
    assert not module.update_results_doc(tmp_path / "absent.md", text, page)


def test_images_in_results_doc_point_at_the_figures_from_where_it_is(tmp_path):
    module = _module()
    res = tmp_path / "results"
    for i in range(3):
        _write(res, f"s{i}", {"A": [0.5 + i / 10], "B": [0.4]}, labels=("A", "B"))
    page = tmp_path / "docs" / "BENCHMARK.md"
    page.parent.mkdir()
    text = module.render(res, page, tmp_path / "docs" / "figures")
    doc = tmp_path / "elsewhere" / "RESULTS.md"
    doc.parent.mkdir()
    doc.write_text(RESULTS_DOC)
    module.update_results_doc(doc, text, page)
    body = doc.read_text()
    assert "![CD diagram](../docs/figures/benchmark-cd-p1.svg)" in body
    assert "[../docs/BENCHMARK.md](../docs/BENCHMARK.md)" in body


def _write_full(root: Path, dataset: str, p1: dict) -> None:
    """A results.csv with every column a run writes (``mlx report`` reads them)."""
    import json as _json

    import pandas as pd

    from mlx.runner.results import COLUMNS as RUN_COLUMNS

    rows = [dict(run_id="r", cell_id=f"{dataset}-{label}", experiment=dataset, dataset=dataset,
                 method=label.lower(), label=label, params=_json.dumps({}), rank_ratio=None,
                 observed_ratio=1.0, labelled_ratio=1.0, repetition=0, split="test",
                 metric="p@1", value=v, status="ok", fit_seconds=2.0)
            for label, v in p1.items()]
    (root / dataset).mkdir(parents=True)
    pd.DataFrame(rows, columns=RUN_COLUMNS).to_csv(root / dataset / "results.csv", index=False)


def test_html_report_is_led_by_the_summary_with_inlined_figures(tmp_path):
    import base64

    module = _module()
    res = tmp_path / "results"
    for i in range(3):
        _write_full(res, f"s{i}", {"A": 0.5 + i / 10, "B": 0.4})
    page = tmp_path / "docs" / "BENCHMARK.md"
    page.parent.mkdir()
    text = module.render(res, page, tmp_path / "docs" / "figures")
    stats = module.write_html_report(res, tmp_path / "report.html", text, page)
    html = (tmp_path / "report.html").read_text(encoding="utf-8")
    assert stats["runs"] == 3
    lead = html.split('<section class="lead-section" id="lead1"><h2>Across data sets</h2>', 1)[1]
    lead = lead.split("</section>", 1)[0]
    assert "<h3>Across data sets (P@1)</h3>" in lead
    assert "<tr><td>A</td><td>1.00</td><td>0.6000</td><td>6.0</td></tr>" in lead
    assert "<tr><td>B</td><td>2.00</td><td>0.4000</td><td>6.0</td></tr>" in lead
    svg = (tmp_path / "docs" / "figures" / "benchmark-cd-p1.svg").read_bytes()
    assert f'src="data:image/svg+xml;base64,{base64.b64encode(svg).decode()}"' in lead
    assert "<code>make benchmark-multilabel</code>" in lead
    assert html.index('id="lead1"') < html.index('id="run1"')


def test_wall_times_name_a_last_run_of_some_methods_only_and_leave_it_out_of_the_total():
    manifests = {
        "s1": {"started": "2026-01-01T10:00:00Z", "finished": "2026-01-01T10:06:00Z",
               "jobs": 2, "n_cells": 40, "argv": ["mlx", "run", "-j", "2", "c/s1.yaml"]},
        "s2": {"started": "2026-01-01T11:00:00Z", "finished": "2026-01-01T11:00:30Z",
               "jobs": 2, "n_cells": 5,
               "argv": ["mlx", "run", "-j", "2", "--only", "CPLST", "c/s2.yaml"]},
        "s3": {"started": "2026-01-01T12:00:00Z", "finished": "2026-01-01T12:03:00Z",
               "jobs": 2, "n_cells": 9, "n_reused": 4, "argv": ["mlx", "run", "c/s3.yaml"]},
    }
    line = _module()._run_times(manifests)[0]
    assert line == ("Wall time of each set's last run, in minutes (`-j 2`): s1 6.0; s2 0.5 "
                    "(only CPLST: 5 cells); s3 3.0 (4 cells reused); total 9.0 minutes for "
                    "the 2 sets whose last run ran every method.")
    del manifests["s2"]
    assert _module()._run_times(manifests)[0].endswith("; s3 3.0 (4 cells reused); "
                                                       "total 9.0 minutes.")
    only = {"s4": {"started": "2026-01-01T11:00:00Z", "finished": "2026-01-01T11:00:30Z",
                   "jobs": 1, "n_cells": 1, "argv": ["mlx", "run", "--only", "A", "c/s4.yaml"]}}
    assert _module()._run_times(only)[0] == (
        "Wall time of each set's last run, in minutes (`-j 1`): s4 0.5 (only A: 1 cell); none "
        "of these runs ran every method of its set, so none times the set.")
