"""Render the multi-label benchmark (``make benchmark-multilabel``) into docs/BENCHMARK.md.

Reads ``results/benchmark/<set>/results.csv`` (one ``mlx run`` of ``configs/benchmark/<set>.yaml``
each) and writes, for every data set, each method's test metrics averaged over the splits
(the official split, or the 5 seeded 80/20 splits of a set without one) with its mean fit
time; the cells that did not finish are listed with their status and message, never dropped.
Across the data sets where every ranked method has a result: average ranks on P@1, the
Friedman test (with Iman-Davenport's F) and the Nemenyi critical difference at alpha = 0.05
(:mod:`mlx.ranks`), drawn as a CD diagram, and a scatter of total fit time against mean P@1.

The summary across data sets (with the command and machine) also goes into docs/RESULTS.md,
as its section "Multi-label benchmark", and leads an HTML report of every run
(``mlx report``; ``results/benchmark/report.html``).

Usage::

    python benchmarks/benchmark_multilabel.py [--results results/benchmark] \\
        [--out docs/BENCHMARK.md] [--figures docs/figures] [--results-doc docs/RESULTS.md] \\
        [--report results/benchmark/report.html]
"""

from __future__ import annotations

import argparse
import csv
import json
import math
import os
import re
import sys
from collections import defaultdict
from pathlib import Path

import numpy as np
import yaml

from mlx.ranks import average_ranks, critical_difference, friedman, plot_cd_diagram

METRICS = ("p@1", "p@3", "p@5", "ndcg@5", "auc", "hamming")
HEADERS = ("P@1", "P@3", "P@5", "nDCG@5", "AUC", "Hamming")
RANK_METRIC = "p@1"


def load(results_dir: Path):
    """{dataset: {label: {"metrics": {m: [values]}, "fit": {cell: s}, "cell": {cell: s},
    "over": {cell: (repetition, elapsed s, budget s)}, "status": {...}}}}, the manifests by
    set, and {label: {budget per cell in seconds, or None}} from the configs."""
    data: dict = {}
    manifests, budgets = {}, {}
    for csv_path in sorted(results_dir.glob("*/results.csv")):
        manifest = csv_path.parent / "manifest.json"
        if manifest.is_file():
            manifests[csv_path.parent.name] = json.loads(manifest.read_text())
        with open(csv_path, newline="", encoding="utf-8") as fh:
            for row in csv.DictReader(fh):
                if row["candidate"]:
                    continue
                entry = data.setdefault(row["dataset"], {}).setdefault(row["label"], {
                    "metrics": defaultdict(list), "fit": {}, "status": {}, "method":
                    row["method"]})
                entry["status"][row["cell_id"]] = (row["status"], row["message"])
                if row.get("cell_seconds"):
                    entry.setdefault("cell", {})[row["cell_id"]] = float(row["cell_seconds"])
                if row["status"] == "over_budget":
                    entry.setdefault("over", {})[row["cell_id"]] = (
                        row.get("repetition", ""), float(row.get("cell_seconds") or "nan"),
                        float(row.get("budget_seconds") or "nan"))
                if row["status"] != "ok":
                    continue
                if row["fit_seconds"]:
                    entry["fit"][row["cell_id"]] = float(row["fit_seconds"])
                if row["value"] not in ("", "nan"):
                    entry["metrics"][row["metric"]].append(float(row["value"]))
    # Methods of a config without any row (never run, or every cell failed: a failed cell
    # leaves no row): listed, not dropped.
    for resolved in sorted(results_dir.glob("*/config.resolved.yaml")):
        config = yaml.safe_load(resolved.read_text(encoding="utf-8"))
        name = config["dataset"] if isinstance(config["dataset"], str) else resolved.parent.name
        for m in config["methods"]:
            label = m.get("label") or m["name"]
            budgets.setdefault(label, set()).add(m.get("budget"))
            if label not in data.setdefault(name, {}):
                data[name][label] = {"metrics": {}, "fit": {}, "method": m["name"], "status": {
                    "-": ("no result", "not run yet, or every cell failed (see the run's "
                                       "output)")}}
    return data, manifests, budgets


def _fmt(values, digits=4) -> str:
    if not values:
        return "—"
    return f"{np.mean(values):.{digits}f}"


def _dataset_table(name: str, methods: dict) -> list[str]:
    lines = [f"### {name}", "", "| method | splits | " + " | ".join(HEADERS) + " | fit s |",
             "|---|---:|" + "---:|" * (len(HEADERS) + 1)]
    notes = []
    for label, e in methods.items():
        ok = sum(1 for s, _ in e["status"].values() if s == "ok")
        cells = [_fmt(e["metrics"].get(m, [])) for m in METRICS]
        fit = f"{np.mean(list(e['fit'].values())):.1f}" if e["fit"] else "—"
        lines.append(f"| {label} | {ok} | " + " | ".join(cells) + f" | {fit} |")
        for status, message in sorted(set(e["status"].values())):
            if status != "ok" or message:
                notes.append(f"* {label}: {status}" + (f": {message}" if message else ""))
    return lines + [""] + notes + ([""] if notes else [])


def _scatter(points, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6, 4))
    for label, seconds, p1 in points:
        ax.scatter(seconds, p1)
        ax.annotate(label, (seconds, p1), fontsize=8, xytext=(3, 3), textcoords="offset points")
    ax.set_xscale("log")
    ax.set_xlabel("total fit time over the ranked data sets (s, log scale)")
    ax.set_ylabel("mean P@1 over the ranked data sets")
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)


def _seconds(values) -> str:
    return f"{sum(values):.1f}" if values else "—"


def _budget_section(data, datasets, labels, budgets) -> list[str]:
    """Each method's budget per cell, its cells by outcome and its total times; then every
    cell stopped over its budget, by method and set."""
    lines = ["## Time budgets and total time per method", "",
             "Each cell (one split of one set: selection, final fit and scoring) runs under its "
             "method's budget (`budget` in the configs); a cell still running when it is spent "
             "is stopped and recorded `over_budget`, never dropped. Total fit s sums the final "
             "fits; total cell s every cell's wall time, selection and stopped cells included.",
             "", "| method | budget per cell (s) | cells ok | over budget | other | total fit s "
             "| total cell s |", "|---|---:|---:|---:|---:|---:|---:|"]
    over = []
    for lab in labels:
        entries = [data[d][lab] for d in datasets if lab in data[d]]
        statuses = [st for e in entries for st, _ in e["status"].values()]
        shown = sorted(b for b in budgets.get(lab, ()) if b is not None)
        budget = "/".join(f"{b:g}" for b in shown) if shown else "none"
        n_ok, n_over = statuses.count("ok"), statuses.count("over_budget")
        lines.append(f"| {lab} | {budget} | {n_ok} | {n_over} | {len(statuses) - n_ok - n_over}"
                     f" | {_seconds([v for e in entries for v in e['fit'].values()])}"
                     f" | {_seconds([v for e in entries for v in e.get('cell', {}).values()])} |")
        for d in datasets:
            for rep, elapsed, limit in sorted(data[d].get(lab, {}).get("over", {}).values()):
                over.append(f"| {lab} | {d} | {rep} | {elapsed:.1f} | {limit:g} |")
    lines.append("")
    if over:
        lines += ["Cells stopped over their budget:", "",
                  "| method | data set | split | stopped after s | budget s |",
                  "|---|---|---:|---:|---:|", *over, ""]
    else:
        lines += ["No cell went over its budget.", ""]
    return lines


def _run_times(manifests) -> list[str]:
    """Wall time of each set's last `mlx run` (its manifest's start and finish). A last run
    of some methods only (``--only``) did not time the set: it is named as such and left out
    of the total."""
    from datetime import datetime

    spans = {}
    for name, m in sorted(manifests.items()):
        try:
            start, end = (datetime.strptime(m[k], "%Y-%m-%dT%H:%M:%SZ")
                          for k in ("started", "finished"))
        except (KeyError, TypeError, ValueError):
            continue
        argv = list(m.get("argv") or [])
        only = argv[argv.index("--only") + 1] if "--only" in argv[:-1] else None
        spans[name] = ((end - start).total_seconds(), m.get("jobs"), m.get("n_reused", 0),
                       only, m.get("n_cells"))
    if not spans:
        return []
    parts = []
    for name, (sec, _, reused, only, n_cells) in spans.items():
        part = f"{name} {sec / 60:.1f}"
        if only is not None:
            part += f" (only {only}: {n_cells} cell{'' if n_cells == 1 else 's'})"
        elif reused:
            part += f" ({reused} cells reused)"
        parts.append(part)
    jobs = sorted({str(j) for _, j, _, _, _ in spans.values()})
    whole = [sec for sec, _, _, only, _ in spans.values() if only is None]
    partial = len(spans) - len(whole)
    if not whole:
        total = "none of these runs ran every method of its set, so none times the set"
    else:
        total = (f"total {sum(whole) / 60:.1f} minutes"
                 + (f" for the {len(whole)} set{'' if len(whole) == 1 else 's'} whose last run "
                    f"ran every method" if partial else ""))
    return [f"Wall time of each set's last run, in minutes (`-j {'/'.join(jobs)}`): "
            f"{'; '.join(parts)}; {total}.", ""]


TREES = ("PLT", "Omikuji")


def _leml_vs_trees(data, datasets, leml="LEML-SQ") -> list[str]:
    """LEML-SQ's P@1 beside the best tree method's on each set, and their fit times."""
    rows, near, near_fast, n = [], 0, 0, 0
    for d in datasets:
        e = data[d].get(leml, {})
        trees = [(np.mean(data[d][t]["metrics"][RANK_METRIC]), t) for t in TREES
                 if data[d].get(t, {}).get("metrics", {}).get(RANK_METRIC)]
        if not e.get("metrics", {}).get(RANK_METRIC) or not trees:
            continue
        best, tree = max(trees)
        p1 = float(np.mean(e["metrics"][RANK_METRIC]))
        fit_l = np.mean(list(e["fit"].values()))
        fit_t = np.mean(list(data[d][tree]["fit"].values()))
        diff = 100 * (p1 - best)
        n += 1
        near += diff >= -1
        near_fast += diff >= -1 and fit_l <= fit_t
        rows.append(f"| {d} | {p1:.4f} | {tree} {best:.4f} | {diff:+.2f} | {fit_l:.1f} | "
                    f"{fit_t:.1f} |")
    if not rows:
        return []
    return ["## LEML-SQ beside the best tree method (P@1)", "",
            f"Within 1 point of the best tree's P@1 on {near} of {n} sets; within 1 point and "
            f"no slower to fit on {near_fast} of {n}.", "",
            "| data set | LEML-SQ | best tree | difference (points) | LEML-SQ fit s | tree fit s |",
            "|---|---:|---:|---:|---:|---:|", *rows, ""]


def _cd_pairs(labels, ranks, cd) -> str:
    """The pairs of methods whose average ranks differ by more than the critical difference."""
    pairs = [(ranks[j] - ranks[i], labels[i], labels[j])
             for i in range(len(labels)) for j in range(len(labels))
             if ranks[j] - ranks[i] > cd]
    if not pairs:
        return "No two methods' average ranks differ by more than CD."
    return "Average ranks further apart than CD (better first): " + "; ".join(
        f"{a} over {b} ({d:.2f})" for d, a, b in sorted(pairs, reverse=True)) + "."


def _rel(path: Path, out: Path) -> str:
    return os.path.relpath(path, out.parent)


def render(results_dir: Path, out: Path, figures: Path, note: str = "") -> str:
    data, manifests, budgets = load(results_dir)
    if not data:
        raise SystemExit(f"no results under {results_dir}/*/results.csv; run "
                         "`make benchmark-multilabel` first")
    datasets = sorted(data)
    labels = sorted({label for d in datasets for label in data[d]})
    complete = [lab for lab in labels
                if all(data[d].get(lab, {}).get("metrics", {}).get(RANK_METRIC) for d in datasets)]
    lines = ["# Multi-label benchmark", "",
             "<!-- Generated by benchmarks/benchmark_multilabel.py from results/benchmark/; "
             "do not edit by hand. -->", "",
             f"Command: `make benchmark-multilabel` (configs: `configs/benchmark/*.yaml`; this "
             f"page: `python benchmarks/benchmark_multilabel.py`). Data sets with results: "
             f"{len(datasets)} ({', '.join(datasets)}).", ""]
    machines = sorted({(m.get("cpu", "?"), m.get("cpu_count", "?"),
                        json.dumps(m.get("versions", {}), sort_keys=True))
                       for m in manifests.values()})
    for cpu, count, versions in machines:
        v = ", ".join(f"{k} {val}" for k, val in json.loads(versions).items())
        lines.append(f"Machine: {cpu} ({count} CPUs); {v}.")
    lines += ["", "Protocol: each method's package defaults, except `l2_reg` of BR-SQ and "
              "CPLST (from 0.001, 0.01, 0.1, 1, 10, 100), LEML-SQ's `l2_reg` (the same) and "
              "k/L (0.2, 0.5 or 1; up to 30 outer iterations), chosen per "
              "split on a validation part (20%) of its training rows by P@1, never on the test "
              "rows; the other methods with a rank use k/L = 0.2. The linear methods (BR-SQ, "
              "LEML-SQ, CPLST, BCS, WSABIE, LSVV) get unit-norm rows and a bias column, what "
              "napkinXC (`norm`, `bias`) and Omikuji do to their own inputs; the trees and MoM "
              "the raw features.", ""]
    lines += ["Test metrics are means over the splits (the official split, or the 5 seeded "
              "random 80/20 splits of a set without one); fit s is the mean fit time of a "
              "split's final model (selection not included). — marks a metric the method "
              "does not give (Hamming needs a decision threshold) or a method without a "
              "finished cell; the list under each table gives every cell that did not finish "
              "or carries a message.", ""]
    if len(complete) >= 2 and datasets:
        scores = np.array([[np.mean(data[d][lab]["metrics"][RANK_METRIC]) for lab in complete]
                           for d in datasets])
        ranks = average_ranks(scores)
        fr = friedman(scores)
        cd = critical_difference(len(complete), len(datasets))
        figures.mkdir(parents=True, exist_ok=True)
        cd_path, scatter_path = figures / "benchmark-cd-p1.svg", figures / "benchmark-time-p1.svg"
        plot_cd_diagram(complete, ranks, cd, cd_path,
                        title=f"P@1, {len(datasets)} data sets, Nemenyi alpha = 0.05")
        total_fit = {lab: sum(sum(data[d][lab]["fit"].values()) for d in datasets)
                     for lab in complete}
        _scatter([(lab, max(total_fit[lab], 1e-3), float(scores[:, i].mean()))
                  for i, lab in enumerate(complete)], scatter_path)
        lines += ["## Across data sets (P@1)", "",
                  f"Ranked: {', '.join(complete)} on {len(datasets)} data sets"
                  + (f"; not ranked (no P@1 on every set): "
                     f"{', '.join(lab for lab in labels if lab not in complete)}"
                     if len(complete) < len(labels) else "") + ".", "",
                  "| method | average rank | mean P@1 | total fit s |", "|---|---:|---:|---:|"]
        for i in np.argsort(ranks, kind="stable"):
            lab = complete[i]
            lines.append(f"| {lab} | {ranks[i]:.2f} | {scores[:, i].mean():.4f} | "
                         f"{total_fit[lab]:.1f} |")
        f_text = "n/a" if math.isnan(fr.f) else f"{fr.f:.2f} (p = {fr.f_p:.3g})"
        lines += ["", f"Friedman chi2_F = {fr.chi2:.2f} (k - 1 = {fr.n_methods - 1} df, "
                      f"p = {fr.chi2_p:.3g}); Iman-Davenport F_F = {f_text}. Nemenyi critical "
                      f"difference at alpha = 0.05: CD = {cd:.2f} (k = {fr.n_methods}, "
                      f"N = {fr.n_datasets}).", "", _cd_pairs(complete, ranks, cd), "",
                  f"![CD diagram]({_rel(cd_path, out)})", "",
                  f"![fit time vs P@1]({_rel(scatter_path, out)})",
                  ""]
    lines += _budget_section(data, datasets, labels, budgets)
    lines += _run_times(manifests)
    lines += _leml_vs_trees(data, datasets)
    missing = sorted(p.stem for p in Path("configs/benchmark").glob("*.yaml")
                     if not (results_dir / p.stem / "results.csv").is_file())
    if missing:
        lines += [f"Not in these tables (no results.csv under {results_dir}/: not run, or "
                  f"interrupted before the run wrote it): {', '.join(missing)}.", ""]
        lines[4:4] = [f"> **Partial.** {len(missing)} of the benchmark's data sets have no "
                      f"results here ({', '.join(missing)}): the ranks and totals below cover "
                      f"the {len(datasets)} that do.", ""]
    if note:                                     # how the run went (machine load, ...)
        lines[4:4] = [f"> **Note.** {note}", ""]
    lines += ["## Per data set", ""]
    for d in datasets:
        lines += _dataset_table(d, data[d])
    text = "\n".join(lines).rstrip() + "\n"
    out.write_text(text, encoding="utf-8")
    return text


# ----------------------------------------------------------------------------- elsewhere
RESULTS_TITLE = "Multi-label benchmark"
"""The section of docs/RESULTS.md (and its row in the index) this script keeps up to date."""


def _sections(text: str) -> tuple[list[str], dict]:
    """The page's lines before its first ``## `` heading (the title and the comment left
    out), and ``{heading: lines}`` of its ``## `` sections (headings included)."""
    head, sections, current = [], {}, None
    for line in text.splitlines():
        if line.startswith("## "):
            current = line[3:].strip()
            sections[current] = [line]
        elif current is not None:
            sections[current].append(line)
        elif not line.startswith(("# ", "<!--")):
            head.append(line)
    return head, sections


def _summary(text: str, names: tuple) -> list[str]:
    """The page's preamble (command, machine, protocol, notes) and its sections ``names``,
    headings one level down."""
    head, sections = _sections(text)
    lines = list(head)
    for name in names:
        lines += ["#" + ln if ln.startswith("#") else ln for ln in sections.get(name, [])]
    return lines


def _move_images(lines: list[str], page: Path, doc: Path) -> list[str]:
    """Image links written relative to ``page``, rewritten relative to ``doc``."""
    def fix(m):
        target = (page.parent / m.group(2)).resolve()
        return f"![{m.group(1)}]({os.path.relpath(target, doc.parent.resolve())})"

    return [re.sub(r"!\[([^\]]*)\]\(([^)]+)\)", fix, ln) for ln in lines]


def update_results_doc(doc: Path, text: str, page: Path) -> bool:
    """Put the benchmark's summary (ranks, statistics, LEML-SQ beside the trees, command and
    machine) into docs/RESULTS.md as the section :data:`RESULTS_TITLE`, with its row in the
    document's index, replacing an earlier one; ``mlx results-doc`` keeps such a section when
    it regenerates the paper tables. False (nothing written) when ``doc`` does not exist."""
    if not doc.is_file():
        return False
    rel = os.path.relpath(page.resolve(), doc.parent.resolve())
    block = [f"## {RESULTS_TITLE}", "",
             f"Every multi-label method against the others on every multi-label set (no "
             f"published values: the papers have none of these comparisons). The whole page, "
             f"with each data set's table and every cell that did not finish: [{rel}]({rel}).",
             ""] + _move_images(_summary(text, ("Across data sets (P@1)",
                                                "LEML-SQ beside the best tree method (P@1)")),
                                page, doc)
    row = (f"| [{RESULTS_TITLE}](#{RESULTS_TITLE.lower().replace(' ', '-')}) | — (methods "
           f"against each other: no published values) | `make benchmark-multilabel` |")
    lines = doc.read_text(encoding="utf-8").splitlines()
    first = next((i for i, ln in enumerate(lines) if ln.startswith("## ")), len(lines))
    rows = [i for i in range(first) if lines[i].startswith("| [")]
    old_row = [i for i in rows if lines[i].startswith(f"| [{RESULTS_TITLE}](")]
    start = next((i for i, ln in enumerate(lines) if ln == f"## {RESULTS_TITLE}"), None)
    if start is not None:
        end = next((i for i in range(start + 1, len(lines)) if lines[i].startswith("## ")),
                   len(lines))
        lines[start:end] = block
    else:
        lines += [""] + block
    if old_row:
        lines[old_row[0]] = row
    else:
        at = rows[-1] + 1 if rows else next(
            (i + 1 for i in range(first) if lines[i].startswith("|---")), first)
        lines.insert(at, row)
    doc.write_text(re.sub(r"\n{3,}", "\n\n", "\n".join(lines).rstrip()) + "\n",
                   encoding="utf-8")
    return True


def _html(lines: list[str], page: Path) -> str:
    """Markdown lines of this page (headings, paragraphs, tables, quotes, lists, images) as
    HTML; an image is inlined as a data URI, so the report stays one self-contained file."""
    import base64
    from html import escape

    def inline(s: str) -> str:
        s = escape(s.strip())
        s = re.sub(r"`([^`]+)`", r"<code>\1</code>", s)
        s = re.sub(r"\*\*([^*]+)\*\*", r"<b>\1</b>", s)
        return re.sub(r"\[([^\]]+)\]\([^)]+\)", r"\1", s)      # links: their text

    out, table = [], []

    def flush():
        rows = [r.strip().strip("|").split("|") for r in table
                if not re.fullmatch(r"\|[-:| ]+\|", r.strip())]
        if rows:
            out.append('<div class="tablebox"><table class="sortable"><thead><tr>'
                       + "".join(f"<th>{inline(c)}</th>" for c in rows[0])
                       + "</tr></thead><tbody>"
                       + "".join("<tr>" + "".join(f"<td>{inline(c)}</td>" for c in r) + "</tr>"
                                 for r in rows[1:]) + "</tbody></table></div>")
        table.clear()

    for line in lines:
        if line.startswith("|"):
            table.append(line)
            continue
        flush()
        image = re.fullmatch(r"!\[([^\]]*)\]\(([^)]+)\)", line.strip())
        if not line.strip():
            continue
        if image:
            path = page.parent / image.group(2)
            kind = "svg+xml" if path.suffix == ".svg" else path.suffix.lstrip(".")
            data = base64.b64encode(path.read_bytes()).decode("ascii")
            out.append(f'<p><img alt="{escape(image.group(1))}" '
                       f'src="data:image/{kind};base64,{data}"></p>')
        elif line.startswith("#"):
            level = min(6, len(line) - len(line.lstrip("#")))
            out.append(f"<h{level}>{inline(line.lstrip('#'))}</h{level}>")
        elif line.startswith("> "):
            out.append(f'<p class="note">{inline(line[2:])}</p>')
        elif line.startswith(("* ", "- ")):
            out.append(f"<p>• {inline(line[2:])}</p>")
        else:
            out.append(f"<p>{inline(line)}</p>")
    flush()
    return "\n".join(out)


def write_html_report(results_dir: Path, out: Path, text: str, page: Path) -> dict:
    """``mlx report`` of every benchmark run, led by the page's summary across data sets
    (ranks, statistics, the diagrams, budgets, LEML-SQ beside the trees)."""
    from mlx.report import write_report

    runs = sorted(p.parent for p in results_dir.glob("*/results.csv"))
    lead = _summary(text, ("Across data sets (P@1)", "Time budgets and total time per method",
                           "LEML-SQ beside the best tree method (P@1)"))
    return write_report(runs, out, title="mlx: multi-label benchmark",
                        lead=[("Across data sets", _html(lead, page))])


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--results", type=Path, default=Path("results/benchmark"))
    ap.add_argument("--out", type=Path, default=Path("docs/BENCHMARK.md"))
    ap.add_argument("--figures", type=Path, default=Path("docs/figures"))
    ap.add_argument("--results-doc", type=Path, default=Path("docs/RESULTS.md"),
                    help="also put the summary into this document (if it exists)")
    ap.add_argument("--report", type=Path, default=None,
                    help="the HTML report (default: RESULTS/report.html)")
    ap.add_argument("--note", default="", help="a note on the run, shown at the top")
    args = ap.parse_args(argv)
    text = render(args.results, args.out, args.figures, note=args.note)
    print(f"wrote {args.out}")
    if update_results_doc(args.results_doc, text, args.out):
        print(f"updated {args.results_doc} (section {RESULTS_TITLE!r})")
    else:
        print(f"{args.results_doc} not found: its section {RESULTS_TITLE!r} was not written "
              f"(run `mlx results-doc` first, or give --results-doc)")
    report = args.report or args.results / "report.html"
    write_html_report(args.results, report, text, args.out)
    print(f"wrote {report}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
