"""Rendering a built paper table as Markdown, CSV and LaTeX, and writing the files.

:func:`write_table` writes ``<name>.md``, ``.csv``, ``.tex`` and a ``.json`` record of
the command, the counts and the sources (with their runs' machines), which
``mlx results-doc`` reads.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pandas as pd

from mlx.tables.build import BETTER, NOT_RUN, NP, WORSE, RenderedTable, Source, TableCell
from mlx.tables.published import paper_name
from mlx.tables.spec import AXES, AXIS_TITLES, NUMERIC_AXES, fmt_axis

__all__ = ["render_markdown", "render_csv", "render_latex", "render_html", "write_table",
           "summary_line", "render_run_latex", "three_way"]


def _column_titles(table: RenderedTable) -> list[str]:
    return [" ".join(fmt_axis(a, v) for a, v in zip(table.column_axes, ckey)) or "value"
            for ckey in table.columns]


def _row_titles(table: RenderedTable, rows) -> list[list[str]]:
    """Row key texts, with a key left blank when it repeats the row above (as in the papers)."""
    out, prev = [], None
    for rkey, _ in rows:
        texts = [fmt_axis(a, v) for a, v in zip(table.row_axes, rkey)]
        shown = list(texts)
        if prev is not None:
            for i in range(len(texts) - 1):
                if texts[: i + 1] == prev[: i + 1]:
                    shown[i] = ""
                else:
                    break
        out.append(shown)
        prev = texts
    return out


def _legend(table: RenderedTable) -> str:
    spec = table.spec
    tols = []
    for m in spec.metrics:
        if m.tolerance is None:
            tols.append(f"{m.name} none")
        else:
            tols.append(f"{m.name} {format(m.tolerance, m.fmt)}")
    lower = [m.name for m in spec.metrics if not m.higher_is_better]
    direction = ("higher is better" if not lower else
                 f"lower is better for {', '.join(lower)}, higher for the rest"
                 if len(lower) < len(spec.metrics) else "lower is better")
    reps = (" Where a cell has more than one repetition, ours is their mean with the standard "
            "deviation in parentheses: ours (sd) / published (ours − published)."
            if _has_repetitions(table) else "")
    return (f"Each cell: ours / published (ours − published), in the unit of the block "
            f"heading.{reps} {BETTER} better and {WORSE} worse than the paper by more than the "
            f"tolerance (unmarked: within ±tolerance); {NP} no "
            f"published value; {NOT_RUN} not run yet. Tolerances: {'; '.join(tols)} "
            f"({direction}).")


def _has_repetitions(table: RenderedTable) -> bool:
    return any(c.n_rep > 1 and c.ours_std is not None for c in table.cells)


def three_way(c: dict) -> str:
    """``N compared cells: W within ±tolerance, B better beyond it ▲, X worse beyond it ▼``."""
    judged = c["within"] + c["better"] + c["worse"]
    return (f"{judged} compared cells: {c['within']} within ±tolerance, {c['better']} better "
            f"than the paper beyond it {BETTER}, {c['worse']} worse beyond it {WORSE}")


def summary_line(table: RenderedTable) -> str:
    parts = [f"**{three_way(table.counts())}**"]
    c = table.counts()
    if c["compared"]:
        parts.append(f"{c['compared']} compared without a tolerance")
    parts.append(f"{c['np']} {NP}")
    parts.append(f"{c['not_run']} not run")
    if c["status"]:
        parts.append(f"{c['status']} skipped or failed")
    return "; ".join(parts) + "."


def _source_line(src: Source) -> str:
    if src.frame is None:
        state = "not run yet"
    else:
        n = src.frame["cell_id"].nunique()
        run = (src.manifest or {}).get("run_id") or (src.frame["run_id"].iloc[0]
                                                     if len(src.frame) else "")
        state = f"{n} cells, run {run}" if run else f"{n} cells"
    given = f"`{src.given}` → `{src.results}/`" if src.kind == "config" else f"`{src.given}`"
    return f"- {given}: {state}"


def render_markdown(table: RenderedTable, *, heading_level: int = 1) -> str:
    spec = table.spec
    h = "#" * heading_level
    paper = paper_name(spec.paper)
    lines = [f"{h} {spec.title}", ""]
    if spec.description:
        lines += [spec.description.strip(), ""]
    col_titles = _column_titles(table)
    row_heads = [AXIS_TITLES[a] for a in table.row_axes]
    for block in table.blocks:
        tables = ", ".join(block.tables)
        src = f" — {paper} Table{'s' if len(block.tables) > 1 else ''} {tables}" if tables else ""
        if block.title or src:
            lines += [f"{h}# {block.title or 'values'}{src}", ""]
        # A column with neither a published value nor a result in this block is left out.
        keep = [j for j in range(len(col_titles))
                if any(cells[j].state != "empty" for _, cells in block.rows)]
        titles = [col_titles[j] for j in keep]
        lines.append("| " + " | ".join(row_heads + titles) + " |")
        lines.append("|" + "|".join(["---"] * len(row_heads) + ["---:"] * len(titles)) + "|")
        for texts, (_, cells) in zip(_row_titles(table, block.rows), block.rows):
            lines.append("| " + " | ".join(texts + [cells[j].text() for j in keep]) + " |")
        lines.append("")
    if not table.blocks:
        lines += ["No cells: neither published values nor results match this spec.", ""]
    lines += [_legend(table), "", summary_line(table), ""]
    if table.sources:
        lines += ["Results:", ""] + [_source_line(s) for s in table.sources] + [""]
    return "\n".join(lines)


def render_html(table: RenderedTable) -> str:
    """The table's blocks as HTML tables (``mlx report``): the cells as in Markdown, each
    ``<td>`` with its state as a class (``worse``, ``ok``, ``n/p``, ...) and its numbers as
    data attributes, then the legend and the summary line."""
    from html import escape

    col_titles = _column_titles(table)
    row_heads = [AXIS_TITLES[a] for a in table.row_axes]
    out = []
    for block in table.blocks:
        tables = ", ".join(block.tables)
        paper = paper_name(table.spec.paper)
        src = f" — {paper} Table{'s' if len(block.tables) > 1 else ''} {tables}" if tables else ""
        if block.title or src:
            out.append(f"<h4>{escape(block.title or 'values')}{escape(src)}</h4>")
        keep = [j for j in range(len(col_titles))
                if any(cells[j].state != "empty" for _, cells in block.rows)]
        out.append('<table class="results sortable">')
        out.append("<thead><tr>" + "".join(f"<th>{escape(t)}</th>" for t in row_heads)
                   + "".join(f'<th class="num">{escape(col_titles[j])}</th>' for j in keep)
                   + "</tr></thead><tbody>")
        for texts, (_, cells) in zip(_row_titles(table, block.rows), block.rows):
            tds = "".join(f"<td>{escape(t)}</td>" for t in texts)
            for j in keep:
                c = cells[j]
                state = "np" if c.state == NP else c.state.replace(" ", "-")
                data = "".join(f' data-{k}="{v:.6g}"' for k, v in (
                    ("ours", c.ours), ("published", c.published), ("diff", c.diff))
                    if v is not None)
                tds += f'<td class="num state-{escape(state)}"{data}>{escape(c.text())}</td>'
            out.append(f"<tr>{tds}</tr>")
        out.append("</tbody></table>")
    if not table.blocks:
        out.append("<p>No cells: neither published values nor results match this spec.</p>")
    out.append(f'<p class="legend">{escape(_legend(table))}</p>')
    summary = summary_line(table).replace("**", "")
    out.append(f'<p class="summary">{escape(summary)}</p>')
    return "\n".join(out)


def render_csv(table: RenderedTable) -> str:
    rows = []
    for cell in table.cells:
        row = {a: (f"{cell.key[a]:g}" if a in NUMERIC_AXES else cell.key[a])
               if a in cell.key else "" for a in AXES}
        row.update({"unit": cell.metric.unit, "ours": cell.ours, "ours_std": cell.ours_std,
                    "repetitions": cell.n_rep, "published": cell.published,
                    "published_std": cell.published_std, "table": cell.table,
                    "diff": cell.diff, "tolerance": cell.metric.tolerance, "state": cell.state})
        rows.append(row)
    cols = list(AXES) + ["unit", "ours", "ours_std", "repetitions", "published", "published_std",
                         "table", "diff", "tolerance", "state"]
    return pd.DataFrame(rows, columns=cols).to_csv(index=False, float_format="%.6g",
                                                   lineterminator="\n")


def _tex(text: str) -> str:
    out = str(text)
    for a, b in (("\\", r"\textbackslash{}"), ("&", r"\&"), ("%", r"\%"), ("_", r"\_"),
                 ("#", r"\#"), ("—", "--"), ("−", "-"), ("×", r"$\times$")):
        out = out.replace(a, b)
    return out


def render_latex(table: RenderedTable) -> str:
    spec = table.spec
    col_titles = _column_titles(table)
    row_heads = [AXIS_TITLES[a] for a in table.row_axes]
    ncols = len(row_heads) + len(col_titles)
    lines = [f"% {spec.title}. Generated by 'mlx table {spec.source}'.",
             r"% Needs \usepackage{booktabs,amssymb}. Cells: ours / published (difference);",
             r"% $\blacktriangle$ better, $\blacktriangledown$ worse than the paper beyond the "
             r"tolerance (unmarked: within it); n/p no published value; -- not run.",
             *([r"% ours (sd): mean and standard deviation over repetitions."]
               if _has_repetitions(table) else []),
             r"\begin{table}[ht]", r"\centering", r"\small",
             f"\\caption{{{_tex(spec.title)}}}",
             f"\\label{{tab:{spec.name}}}",
             r"\begin{tabular}{" + "l" * len(row_heads) + "r" * len(col_titles) + "}",
             r"\toprule",
             " & ".join(_tex(t) for t in row_heads + col_titles) + r" \\"]
    for block in table.blocks:
        lines.append(r"\midrule")
        if block.title:
            lines.append(f"\\multicolumn{{{ncols}}}{{l}}{{\\textit{{{_tex(block.title)}}}}} \\\\")
            lines.append(r"\midrule")
        for texts, (_, cells) in zip(_row_titles(table, block.rows), block.rows):
            vals = [_tex(t) for t in texts] + [_tex_cell(c) for c in cells]
            lines.append(" & ".join(vals) + r" \\")
    lines += [r"\bottomrule", r"\end{tabular}", r"\end{table}", ""]
    return "\n".join(lines)


def render_run_latex(table: pd.DataFrame, *, title: str, label: str,
                     notes=()) -> str:
    """A run's own wide table (:func:`mlx.runner.results.wide_table`) as a booktabs table:
    ``mean ± sd`` as ``mean $\\pm$ sd``, the constant's ``▽`` as ``$\\triangledown$``, the
    edge mark ``†`` as ``$^\\dagger$``; the notes follow the table."""
    def cell(v) -> str:
        text = _tex("" if v is None else str(v))
        return (text.replace("±", r"$\pm$").replace("▽", r"$\triangledown$")
                .replace("†", r"$^\dagger$"))

    cols = list(table.columns)
    left = ("method", "params", "selected", "converged")
    lines = [f"% {title}. Generated by mlx (table.tex beside table.md). Needs "
             r"\usepackage{booktabs,amssymb}.",
             r"\begin{table}[ht]", r"\centering", r"\small",
             f"\\caption{{{_tex(title)}}}",
             f"\\label{{tab:{re.sub(r'[^A-Za-z0-9:.-]+', '-', label)}}}",
             r"\begin{tabular}{" + "".join("l" if c in left else "r" for c in cols) + "}",
             r"\toprule", " & ".join(cell(c) for c in cols) + r" \\", r"\midrule"]
    for _, row in table.iterrows():
        lines.append(" & ".join(cell(row[c]) for c in cols) + r" \\")
    lines += [r"\bottomrule", r"\end{tabular}"]
    if notes:
        lines.append(r"\par\smallskip{\footnotesize " + " ".join(cell(n) for n in notes) + "}")
    lines += [r"\end{table}", ""]
    return "\n".join(lines)


def _tex_cell(cell: TableCell) -> str:
    text = cell.text(latex=True)
    head, sep, tail = text.partition(" {")
    return _tex(head) + (sep + tail if sep else "")


def write_table(table: RenderedTable, out_dir: str | os.PathLike, *, command: str) -> dict:
    """Write ``<name>.md``, ``.csv``, ``.tex`` and ``.json`` (sources, machines) to ``out_dir``."""
    from datetime import datetime, timezone

    from mlx.io import atomic_write_text

    out = Path(out_dir)
    name = table.spec.name
    md = render_markdown(table)
    paths = {"md": out / f"{name}.md", "csv": out / f"{name}.csv", "tex": out / f"{name}.tex",
             "json": out / f"{name}.json"}
    atomic_write_text(paths["md"], md)
    atomic_write_text(paths["csv"], render_csv(table))
    atomic_write_text(paths["tex"], render_latex(table))
    meta = {
        "name": name, "title": table.spec.title, "spec": table.spec.source,
        "paper": table.spec.paper, "tables": list(table.spec.tables), "command": command,
        "rendered": datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "counts": table.counts(), "summary": summary_line(table),
        "sources": sources_meta(table.sources),
    }
    atomic_write_text(paths["json"], json.dumps(meta, indent=2, sort_keys=True) + "\n")
    return {"markdown": md, "paths": paths, "meta": meta}


def sources_meta(sources) -> list[dict]:
    """The ``sources`` of a table's ``.json`` record: each input as given, its results
    directory, whether it has run and a summary of its manifest (machine, versions, command)."""
    return [{"given": s.given, "kind": s.kind, "results": str(s.results),
             "ran": s.frame is not None, "manifest": _manifest_summary(s.manifest)}
            for s in sources]


def _manifest_summary(manifest: dict | None) -> dict | None:
    if not manifest:
        return None
    keys = ("run_id", "cpu", "cpu_count", "jobs", "blas_threads_per_worker", "platform",
            "versions", "git_commit", "git_dirty", "started", "finished", "config_source",
            "n_cells", "argv")
    return {k: manifest.get(k) for k in keys if k in manifest}
