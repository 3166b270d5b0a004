"""``mlx report``: one self-contained HTML page for one or more runs and paper tables.

The page needs no network to be viewed: Plotly's JavaScript, the styles and the small
script that sorts and filters the tables are written into the file. For each run (a
results directory or results.csv) it shows the configuration and manifest, the run's own
table (mean ± sd, the constant's ``▽`` marks, selected parameters, convergence) as a table
that sorts by a click on a heading and filters by the text typed above it, interactive
figures (each metric against every axis that varies: k/L or the rank K, the observed and
the labelled ratio, and grid parameters; the mean over repetitions with ±1 sd and every
repetition as a point, whose hover names the cell), the comparison with a paper's
published numbers where the paper has rows for the run's datasets, and the cells that were
skipped or failed, with their reasons. For each table spec (configs/tables/NAME.yaml) it
shows the paper table (ours / published (difference)) and the sections of its runs.
"""

from __future__ import annotations

import dataclasses
import html
import json
import math
import os
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path

import numpy as np
import pandas as pd

from mlx.errors import MlxError

__all__ = ["build_report", "write_report", "axes_of", "RunPart"]

AXIS_NAMES = {"rank_ratio": "k/L", "rank": "rank K", "observed_ratio": "observed ratio",
              "labelled_ratio": "labelled ratio"}
MAX_POINTS = 20000      # per-repetition points drawn per figure (the means are always drawn)


def _esc(text) -> str:
    return html.escape("" if text is None else str(text))


@dataclass
class RunPart:
    """One run in the report: where it is, its rows, manifest and configuration text."""

    path: Path
    frame: pd.DataFrame
    manifest: dict | None
    config_text: str | None
    anchor: str = ""
    specs: list = field(default_factory=list)   # titles of the tables that use this run


# ----------------------------------------------------------------------------- inputs
def _read_run(target: str | os.PathLike) -> RunPart:
    from mlx.runner.results import read_results

    frame = read_results(target)
    run_dir = Path(target) if Path(target).is_dir() else Path(target).parent
    manifest = config = None
    try:
        manifest = json.loads((run_dir / "manifest.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        pass
    try:
        config = (run_dir / "config.resolved.yaml").read_text(encoding="utf-8")
    except OSError:
        pass
    return RunPart(run_dir, frame, manifest, config)


def _is_spec(target: str) -> bool:
    return Path(target).suffix.lower() in (".yaml", ".yml")


# ----------------------------------------------------------------------------- figures
def axes_of(frame: pd.DataFrame) -> list[str]:
    """The horizontal axes worth a figure: the settings and grid parameters that take more
    than one value among the finished test rows (k/L, else K when ranks are absolute)."""
    ok = frame[(frame["status"] == "ok") & (frame["split"] == "test")]
    out = []
    for col in ("rank_ratio", "rank", "observed_ratio", "labelled_ratio"):
        if col not in ok:
            continue
        if col == "rank" and pd.to_numeric(ok.get("rank_ratio"), errors="coerce").notna().any():
            continue
        if pd.to_numeric(ok[col], errors="coerce").dropna().round(9).nunique() > 1:
            out.append(col)
    from mlx.tables.build import params_dict

    per_label: dict = {}
    for label, params in zip(ok["label"], ok["params"]):
        for name, value in params_dict(params).items():
            if isinstance(value, (int, float)) and not isinstance(value, bool):
                per_label.setdefault((label, name), set()).add(float(value))
    names = sorted({name for (_, name), values in per_label.items() if len(values) > 1})
    return out + [f"param:{n}" for n in names]


def _round(values, digits=6):
    return [None if v is None or (isinstance(v, float) and not math.isfinite(v))
            else float(f"{v:.{digits}g}") for v in values]


def _figures(frame: pd.DataFrame, prefix: str, percent: bool | None = None
             ) -> list[tuple[str, str, dict]]:
    """(element id, title, Plotly figure as a dict) for every axis and panel of a run."""
    from mlx.metrics import parse_metric
    from mlx.tables.build import select_rows
    from mlx.tables.plot import figure_data, use_log_x, x_label
    from mlx.tables.spec import metric_style
    from mlx.tables.units import in_unit

    ok = frame[(frame["status"] == "ok") & (frame["split"] == "test")]
    metrics = [m for m in dict.fromkeys(ok["metric"].dropna()) if m]
    out = []
    for x in axes_of(frame):
        panels: dict = {}           # panel title -> {metric: Panel}
        for metric in metrics:
            try:
                parse_metric(metric)
                drawn = figure_data(frame, x=x, metric=metric, source="report",
                                    series=_series(ok, x))
            except MlxError:
                continue
            for panel in drawn:
                panels.setdefault((panel.dataset, panel.at_text()), {})[metric] = panel
        scale = 100 if x in ("rank_ratio", "observed_ratio", "labelled_ratio") else 1
        for (dataset, at), by_metric in panels.items():
            traces, buttons, xs = [], [], set()
            for mi, (metric, panel) in enumerate(by_metric.items()):
                style = in_unit(metric_style(metric), percent)
                factor = style.factor
                first = len(traces)
                for line in panel.lines:
                    colour = PALETTE[line.index % len(PALETTE)]
                    rows = select_rows(panel.rows, line.series)
                    pts = line.points
                    group = f"{metric}:{line.name}"
                    if len(pts):
                        xs.update(float(v) * scale for v in pts["x"])
                        has_sd = bool((pts["n"] > 1).any())
                        traces.append({
                            "type": "scatter", "mode": "lines+markers", "name": line.name,
                            "legendgroup": group, "visible": mi == 0,
                            "x": _round(pts["x"] * scale), "y": _round(pts["mean"] * factor),
                            "line": {"color": colour, "width": 2},
                            "marker": {"color": colour, "size": 8},
                            "error_y": {"type": "data", "visible": has_sd,
                                        "array": _round(pts["sd"].fillna(0) * factor)},
                            "customdata": [[int(n)] for n in pts["n"]],
                            "hovertemplate": (f"<b>{_esc(line.name)}</b> mean of %{{customdata[0]}}"
                                              f"<br>{_esc(x_label(x))}: %{{x}}<br>"
                                              f"{_esc(style.heading())}: %{{y}}<extra></extra>"),
                        })
                    elif line.flat:
                        traces.append({
                            "type": "scatter", "mode": "lines", "name": f"{line.name} (no "
                            f"{AXIS_NAMES.get(x, x[len('param:'):])})", "legendgroup": group,
                            "visible": mi == 0, "x": [], "y": [],
                            "line": {"color": colour, "width": 2, "dash": "dot"},
                            "_flat": line.flat[0] * factor,
                        })
                    reps = rows[rows["_x"].notna()].head(MAX_POINTS)
                    if len(reps):
                        traces.append({
                            "type": "scatter", "mode": "markers", "name": f"{line.name} runs",
                            "legendgroup": group, "showlegend": False, "visible": mi == 0,
                            "x": _round(reps["_x"].astype(float) * scale),
                            "y": _round(reps["value"].astype(float) * factor),
                            "marker": {"color": colour, "size": 5, "opacity": 0.45,
                                       "symbol": "circle-open"},
                            "customdata": [[str(c), _cell_text(r)] for c, (_, r)
                                           in zip(reps["cell_id"], reps.iterrows())],
                            "hovertemplate": ("cell %{customdata[0]}<br>%{customdata[1]}<br>"
                                              f"{_esc(style.title)}: %{{y}}<extra></extra>"),
                        })
                buttons.append((metric, style.heading(), first, len(traces)))
            if not traces:
                continue
            lo, hi = (min(xs), max(xs)) if xs else (0.0, 1.0)
            for t in traces:
                if "_flat" in t:
                    t["x"], t["y"] = [lo, hi], [t["_flat"], t["_flat"]]
                    del t["_flat"]
            n = len(traces)
            menu = [{"label": m, "method": "update",
                     "args": [{"visible": [a <= i < b for i in range(n)]},
                              {"yaxis.title.text": heading}]}
                     for m, heading, a, b in buttons]
            title = f"{dataset}: metric vs {x_label(x).split(' (')[0]}{at}"
            layout = {
                "title": {"text": _esc(title), "font": {"size": 15}},
                "xaxis": {"title": {"text": x_label(x)},
                          "type": "log" if scale == 1 and use_log_x(sorted(xs)) else "linear"},
                "yaxis": {"title": {"text": buttons[0][1]}},
                "hovermode": "closest", "height": 420, "margin": {"t": 60, "r": 20},
                "legend": {"orientation": "v"}, "template": "plotly_white",
            }
            if len(menu) > 1:
                layout["updatemenus"] = [{"buttons": menu, "x": 0.0, "xanchor": "left",
                                          "y": 1.16, "yanchor": "bottom", "direction": "down"}]
            fid = f"{prefix}-fig{len(out) + 1}"
            out.append((fid, title, {"data": traces, "layout": layout}))
    return out


def _series(ok: pd.DataFrame, x: str) -> list:
    """One line per label, or per label and setting of the parameters that vary within it
    (a grid), named ``BR (l2_reg=0.1)``; the parameter on the x axis does not split lines."""
    from mlx.tables.build import params_dict
    from mlx.tables.spec import Series

    along = x[len("param:"):] if x.startswith("param:") else None
    out = []
    for label in dict.fromkeys(ok["label"]):
        settings = [params_dict(p) for p in dict.fromkeys(ok.loc[ok["label"] == label, "params"])]
        varying = sorted({k for p in settings for k in p if k != along
                          and len({json.dumps(q.get(k), sort_keys=True) for q in settings}) > 1})
        if not varying:
            out.append(Series(label, {}, {"label": label}))
            continue
        seen = set()
        for p in settings:
            key = {k: p.get(k) for k in varying if k in p}
            text = json.dumps(key, sort_keys=True)
            if text in seen:
                continue
            seen.add(text)
            name = f"{label} ({', '.join(f'{k}={v}' for k, v in key.items())})"
            out.append(Series(name, {}, {"label": label, "params": key}))
    return out


PALETTE = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2",
           "#7f7f7f", "#bcbd22", "#17becf"]


def _cell_text(row) -> str:
    parts = [str(row.get("label", ""))]
    for col, name in (("rank_ratio", "k/L"), ("rank", "k"), ("observed_ratio", "observed"),
                      ("labelled_ratio", "labelled")):
        v = pd.to_numeric(row.get(col), errors="coerce")
        if pd.notna(v):
            parts.append(f"{name}={float(v):g}")
    parts.append(f"rep={row.get('repetition')}")
    for col in ("params", "selected"):
        v = row.get(col)
        if isinstance(v, str) and v not in ("", "{}"):
            parts.append(f"{col} {v}")
    return html.escape(" ".join(parts))


# ----------------------------------------------------------------------------- HTML parts
def _frame_table(table: pd.DataFrame, cls: str = "results sortable") -> str:
    num = {c for c in table.columns if c not in ("method", "params", "label", "status",
                                                 "message", "selected", "setting")}
    head = "".join(f'<th class="num">{_esc(c)}</th>' if c in num else f"<th>{_esc(c)}</th>"
                   for c in table.columns)
    body = []
    for _, r in table.iterrows():
        tds = []
        for c in table.columns:
            v = "" if r[c] is None or (isinstance(r[c], float) and np.isnan(r[c])) else r[c]
            marked = " worse" if isinstance(v, str) and v.endswith("▽") else ""
            tds.append(f'<td class="{"num" if c in num else ""}{marked}">{_esc(v)}</td>')
        body.append("<tr>" + "".join(tds) + "</tr>")
    return (f'<table class="{cls}"><thead><tr>{head}</tr></thead><tbody>'
            + "".join(body) + "</tbody></table>")


def _filterable(inner: str) -> str:
    return ('<div class="tablebox"><input class="filter" type="search" '
            'placeholder="filter rows (all words must match)"><span class="shown"></span>'
            + inner + "</div>")


def _manifest_html(manifest: dict | None) -> str:
    if not manifest:
        return "<p>No manifest.json: the run did not finish writing its results.</p>"
    keys = [("run_id", "run"), ("config_source", "config"), ("started", "started"),
            ("finished", "finished"), ("n_cells", "cells"), ("n_reused", "reused"),
            ("jobs", "jobs"), ("backend", "backend"), ("cpu", "CPU"),
            ("cpu_count", "CPU cores"), ("git_commit", "git commit"), ("git_dirty", "dirty"),
            ("platform", "platform")]
    rows = "".join(f"<tr><th>{_esc(name)}</th><td>{_esc(manifest[k])}</td></tr>"
                   for k, name in keys if manifest.get(k) is not None)
    versions = manifest.get("versions") or {}
    if versions:
        rows += ("<tr><th>versions</th><td>"
                 + _esc(", ".join(f"{k} {v}" for k, v in sorted(versions.items())))
                 + "</td></tr>")
    if manifest.get("argv"):
        rows += f"<tr><th>command</th><td><code>{_esc(' '.join(manifest['argv']))}</code></td></tr>"
    return f'<table class="facts">{rows}</table>'


def _failed_html(frame: pd.DataFrame) -> str:
    bad = frame[frame["status"] != "ok"].drop_duplicates("cell_id")
    if not len(bad):
        return "<p>Every cell finished with results.</p>"
    rows = []
    for _, r in bad.iterrows():
        setting = " ".join(
            f"{n}={float(v):g}" for col, n in (("rank_ratio", "k/L"), ("rank", "k"),
                                               ("observed_ratio", "observed"),
                                               ("labelled_ratio", "labelled"))
            if pd.notna(v := pd.to_numeric(r.get(col), errors="coerce")))
        rows.append({"method": r["label"], "setting": setting, "rep": r.get("repetition"),
                     "status": r["status"], "message": r.get("message", "")})
    return _filterable(_frame_table(pd.DataFrame(rows), "results sortable failed"))


def _paper_comparisons(part: RunPart, percent: bool | None = None) -> list[tuple[str, str]]:
    """(paper, HTML) for each paper whose published rows match some of the run's cells."""
    from mlx.tables.build import Source, build_table
    from mlx.tables.compare import compare_spec
    from mlx.tables.published import papers
    from mlx.tables.render import render_html
    from mlx.tables.units import in_unit

    out = []
    ok = part.frame[part.frame["status"] == "ok"]
    if not len(ok):
        return out
    for paper in papers():
        try:
            spec, notes = compare_spec(part.frame, paper, source=str(part.path))
            spec = dataclasses.replace(spec, metrics=tuple(in_unit(m, percent)
                                                           for m in spec.metrics))
            src = Source(str(part.path), "results", part.path, part.frame, part.manifest)
            rendered = build_table(spec, [src])
        except MlxError:
            continue
        c = rendered.counts()
        if c["within"] + c["better"] + c["worse"] + c["compared"] == 0:
            continue
        body = render_html(rendered)
        if notes:
            body += "".join(f'<p class="note">Note: {_esc(n)}</p>' for n in notes)
        out.append((paper, body))
    return out


def _run_html(part: RunPart, parts_out: dict, percent: bool | None = None) -> str:
    from mlx.runner.results import VALIDATION, wide_table
    from mlx.tables.units import run_units

    percent = run_units(part.path, percent)

    f = part.frame
    name = str(f["experiment"].iloc[0]) if len(f) and "experiment" in f else part.path.name
    cells = f.drop_duplicates("cell_id")
    counts = ", ".join(f"{n} {s}" for s, n in sorted(cells["status"].value_counts().items()))
    datasets = ", ".join(str(d) for d in dict.fromkeys(f["dataset"].dropna()))
    used_by = (f"<p>Used by: {', '.join(_esc(s) for s in part.specs)}</p>" if part.specs
               else "")
    html_parts = [f'<section class="run" id="{part.anchor}">',
                  f"<h2>Run {_esc(name)} <small>{_esc(part.path)}</small></h2>",
                  f'<p class="lead">{len(cells)} cells ({_esc(counts)}) on {_esc(datasets)}.'
                  "</p>", used_by]
    splits = [s for s in dict.fromkeys(f["split"].dropna()) if s and s != VALIDATION]
    for split in splits or ["test"]:
        table = wide_table(f, split=split, percent=percent)
        html_parts.append(f"<h3>Results ({_esc(split)})</h3>")
        if len(table):
            html_parts.append(_filterable(_frame_table(table)))
        for note in table.attrs.get("notes", ()):
            html_parts.append(f'<p class="note">{_esc(note)}</p>')
    blanks = f[(f["status"] == "ok") & f["message"].fillna("").astype(str).ne("")]
    for text in dict.fromkeys(f"{r['label']}: {r['message']}" for _, r in blanks.iterrows()):
        html_parts.append(f'<p class="note">note: {_esc(text)}</p>')
    figs = _figures(f, part.anchor, percent)
    parts_out["figures"] += len(figs)
    if figs:
        html_parts.append("<h3>Figures</h3><p class=\"note\">The mean over repetitions "
                          "(±1 sd) and each repetition as an open point; hover a point for "
                          "its cell, choose the metric in the menu, click a legend entry to "
                          "hide a line.</p>")
        for fid, title, fig in figs:
            payload = json.dumps(fig, separators=(",", ":")).replace("</", "<\\/")
            html_parts.append(f'<div class="figure" id="{fid}" title="{_esc(title)}"></div>'
                              f'<script type="application/json" data-figure="{fid}">'
                              f"{payload}</script>")
    for paper, body in _paper_comparisons(part, percent):
        from mlx.tables.published import paper_name

        parts_out["comparisons"] += 1
        html_parts.append(f"<h3>Against the {_esc(paper_name(paper))} paper</h3>{body}")
    html_parts.append("<h3>Skipped and failed cells</h3>" + _failed_html(f))
    html_parts.append("<details><summary>Manifest</summary>" + _manifest_html(part.manifest)
                      + "</details>")
    if part.config_text:
        html_parts.append("<details><summary>Configuration (config.resolved.yaml)</summary>"
                          f"<pre>{_esc(part.config_text)}</pre></details>")
    html_parts.append("</section>")
    return "\n".join(html_parts)


def _spec_html(spec, rendered, anchor: str, run_links: list[tuple[str, str, str]]) -> str:
    from mlx.tables.own import OwnSpec, render_own_html
    from mlx.tables.render import render_html

    out = [f'<section class="spec" id="{anchor}">', f"<h2>{_esc(spec.title)}</h2>"]
    if spec.description:
        out.append(f"<p>{_esc(spec.description.strip())}</p>")
    out.append('<div class="scroll">' + (render_own_html(rendered) if isinstance(spec, OwnSpec)
                                        else render_html(rendered)) + "</div>")
    items = []
    for given, state, link in run_links:
        target = f' — <a href="#{link}">its section</a>' if link else ""
        items.append(f"<li><code>{_esc(given)}</code>: {_esc(state)}{target}</li>")
    out.append("<p>Runs:</p><ul>" + "".join(items) + "</ul></section>")
    return "\n".join(out)


# ----------------------------------------------------------------------------- page
def build_report(targets, *, title: str | None = None, percent: bool | None = None,
                 lead=()) -> tuple[str, dict]:
    """The HTML page for ``targets`` (results directories, results.csv files, table specs)
    and counts of what it holds (runs, specs, figures, comparisons).

    ``lead``: ``(title, html)`` sections shown first, before the tables and runs (a summary
    across the runs, such as the benchmark's ranks); their HTML is the caller's, put in the
    page as it is."""
    import mlx
    from mlx.tables.build import build_table, read_sources
    from mlx.tables.spec import load_spec

    if not targets:
        raise MlxError("mlx report: give at least one results directory, results.csv or "
                       "table spec")
    runs: dict = {}              # resolved path -> RunPart
    specs = []
    stats = {"runs": 0, "specs": 0, "figures": 0, "comparisons": 0}

    def add_run(part: RunPart) -> RunPart:
        key = str(part.path.resolve())
        if key not in runs:
            part.anchor = f"run{len(runs) + 1}"
            runs[key] = part
        return runs[key]

    for target in targets:
        if _is_spec(str(target)):
            from mlx.tables.own import build_own, is_own_spec, load_own_spec, read_own_sources
            from mlx.validation import read_yaml

            raw = read_yaml(target, empty_hint="a table spec needs at least 'metrics'")
            if is_own_spec(raw):
                spec = load_own_spec(target, raw)
                sources = read_own_sources(spec)
                rendered = build_own(spec, sources)
            else:
                spec = load_spec(target)
                sources = read_sources(spec)
                rendered = build_table(spec, sources)
            links = []
            for src in sources:
                if src.frame is None:
                    links.append((src.given, "not run yet", ""))
                    continue
                part = add_run(RunPart(src.results, src.frame, src.manifest, _config_text(
                    src.results)))
                part.specs.append(spec.title)
                links.append((src.given, f"{src.frame['cell_id'].nunique()} cells",
                              part.anchor))
            specs.append((spec, rendered, f"spec{len(specs) + 1}", links))
        else:
            add_run(_read_run(target))
    stats["runs"], stats["specs"] = len(runs), len(specs)
    lead = [(str(head), html, f"lead{i + 1}") for i, (head, html) in enumerate(lead)]
    sections = [f'<section class="lead-section" id="{a}"><h2>{_esc(head)}</h2>\n{html}</section>'
                for head, html, a in lead]
    sections += [_spec_html(*s) for s in specs]
    sections += [_run_html(part, stats, percent) for part in runs.values()]
    toc = "".join(f'<li><a href="#{a}">{_esc(head)}</a></li>' for head, _, a in lead)
    toc += "".join(f'<li><a href="#{a}">{_esc(s.title)}</a></li>' for s, _, a, _ in specs)
    toc += "".join(f'<li><a href="#{p.anchor}">Run {_esc(_run_name(p))}</a> '
                   f"<small>{_esc(p.path)}</small></li>" for p in runs.values())
    if title is None:
        if len(specs) == 1:
            title = specs[0][0].title
        elif len(runs) == 1 and not specs:
            title = f"mlx report: {_run_name(next(iter(runs.values())))}"
        else:
            title = "mlx report"
    generated = datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    page = TEMPLATE.format(
        title=_esc(title), style=STYLE, plotly=_plotly_js(), script=SCRIPT,
        header=(f"<h1>{_esc(title)}</h1><p class=\"lead\">Generated {generated} by mlx "
                f"{_esc(mlx.__version__)}: {stats['specs']} table(s), {stats['runs']} run(s). "
                "Tables sort by a click on a heading and filter by the words typed above "
                "them.</p><nav><ul>" + toc + "</ul></nav>"),
        body="\n".join(sections))
    return page, stats


def _run_name(part: RunPart) -> str:
    f = part.frame
    return str(f["experiment"].iloc[0]) if len(f) and "experiment" in f else part.path.name


def _config_text(run_dir: Path) -> str | None:
    try:
        return (Path(run_dir) / "config.resolved.yaml").read_text(encoding="utf-8")
    except OSError:
        return None


def _plotly_js() -> str:
    """Plotly's minified bundle, shipped with the plotly package, inlined in the page."""
    try:
        from plotly.offline import get_plotlyjs
    except ImportError:  # pragma: no cover - a dependency
        raise MlxError("mlx report needs the plotly package: pip install plotly") from None
    return get_plotlyjs().replace("</script", "<\\/script")


def write_report(targets, output: str | os.PathLike, *, title: str | None = None,
                 percent: bool | None = None, lead=()) -> dict:
    """Write the page to ``output`` (atomically); returns the counts and the size in bytes."""
    from mlx.io import atomic_write_text

    page, stats = build_report(targets, title=title, percent=percent, lead=lead)
    path = Path(output)
    atomic_write_text(path, page)
    stats["bytes"] = path.stat().st_size
    stats["path"] = path
    return stats


STYLE = """
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;margin:0 auto;
max-width:1200px;padding:0 24px 48px;color:#222}
h1{font-size:24px;margin:24px 0 4px}h2{font-size:20px;border-bottom:2px solid #ddd;
padding-bottom:4px;margin-top:40px}h2 small{font-size:12px;color:#777;font-weight:normal}
h3{font-size:16px;margin:24px 0 6px}h4{font-size:14px;margin:16px 0 4px}
.lead{color:#444}nav ul{columns:2;padding-left:18px}
table{border-collapse:collapse;margin:6px 0;font-size:13px}
th,td{padding:3px 9px;border-bottom:1px solid #e4e4e4;text-align:left;vertical-align:top}
th{background:#f4f6f8;position:sticky;top:0}
table.sortable th{cursor:pointer;user-select:none}
table.sortable th:after{content:" \\2195";color:#bbb;font-size:11px}
table.sortable th.asc:after{content:" \\2191";color:#333}
table.sortable th.desc:after{content:" \\2193";color:#333}
td.num,th.num{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}
td.worse,td.state-worse{background:#fdecea}td.state-within{background:#eef8ee}
td.state-better{background:#e8f0fb}
td.state-np,td.state-not-run{color:#888}
tbody tr:hover{background:#f7f7fb}
.tablebox,.scroll{overflow-x:auto}.filter{width:340px;padding:4px 6px;margin:4px 0}
.shown{margin-left:10px;color:#777;font-size:12px}
.note,.legend{color:#555;font-size:12.5px}.summary{font-weight:600}
.figure{width:100%;min-height:420px;border:1px solid #eee;margin:10px 0}
table.facts th{background:none;position:static;width:140px}
pre{background:#f6f8fa;padding:10px;overflow-x:auto;font-size:12px}
details{margin:8px 0}summary{cursor:pointer;color:#245}
"""

SCRIPT = r"""
(function(){
function key(text){var t=text.trim().replace(/[▽▼†]/g,'');
 var m=t.match(/^[-+]?\d*\.?\d+(e[-+]?\d+)?/i);
 return m?[0,parseFloat(m[0])]:[1,t.toLowerCase()];}
function cmp(a,b){if(a[0]!==b[0])return a[0]-b[0];return a[1]<b[1]?-1:a[1]>b[1]?1:0;}
document.querySelectorAll('table.sortable').forEach(function(table){
 table.querySelectorAll('thead th').forEach(function(th,i){
  th.addEventListener('click',function(){
   var asc=!th.classList.contains('asc');
   table.querySelectorAll('thead th').forEach(function(o){o.classList.remove('asc','desc');});
   th.classList.add(asc?'asc':'desc');
   var body=table.tBodies[0];var rows=Array.prototype.slice.call(body.rows);
   rows.sort(function(r,s){var c=cmp(key(r.cells[i].textContent),key(s.cells[i].textContent));
    return asc?c:-c;});
   rows.forEach(function(r){body.appendChild(r);});});});});
document.querySelectorAll('.tablebox').forEach(function(box){
 var input=box.querySelector('input.filter'),shown=box.querySelector('.shown');
 var rows=box.querySelectorAll('tbody tr');
 function apply(){var words=input.value.toLowerCase().split(/\s+/).filter(Boolean);var n=0;
  rows.forEach(function(r){var t=r.textContent.toLowerCase();
   var ok=words.every(function(w){return t.indexOf(w)>=0;});
   r.style.display=ok?'':'none';if(ok)n++;});
  shown.textContent=n+' of '+rows.length+' rows';}
 input.addEventListener('input',apply);apply();});
document.querySelectorAll('script[data-figure]').forEach(function(s){
 var fig=JSON.parse(s.textContent);var el=document.getElementById(s.getAttribute('data-figure'));
 Plotly.newPlot(el,fig.data,fig.layout,{responsive:true,displaylogo:false});});
})();
"""

TEMPLATE = """<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{title}</title>
<style>{style}</style>
<script>{plotly}</script>
</head><body>
{header}
{body}
<script>{script}</script>
</body></html>
"""
