"""Tables of one's own runs: a table spec without a paper.

A spec whose ``paper`` is absent (or ``none``) lays out any results, with no published
values: rows and columns over the axes ``series`` (result labels), ``dataset``,
``metric`` and the numeric sweep axes of :mod:`mlx.axes` (``k_over_L``, ``observed``,
``labelled``, ``k``), several datasets side by side. Each cell is the mean ± standard deviation
(ddof=1) over repetitions; the best mean of each column
of a block (by the metric's direction) is bold; with ``baseline: LABEL`` every other
series is tested against the baseline, paired by repetition on the same dataset and
setting (:func:`mlx.tables.paired.draw_pvalues`, two-sided paired t-test; repetitions of
one draw count once, so an official split gives no test): ``↑`` marks
a significantly better mean and ``↓`` a significantly worse one at ``alpha`` (0.05).
``percent: true`` shows every metric that lies in [0, 1] (top-k accuracy, nDCG, AUC,
Hamming loss, F1, error) in percent; otherwise as fractions.

    title: My methods on three datasets
    results: [results/scene, results/yeast]      # and/or configs: [...]
    series: [LSVV, BR]                           # default: every label in the results
    baseline: BR
    metrics: [hamming, auc]
    layout: {blocks: [metric], rows: [series], columns: [dataset]}   # the default
    percent: true
"""

from __future__ import annotations

import itertools
import math
import os
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from mlx.axes import SPEC_AXES
from mlx.errors import ConfigError, MlxError, UnknownNameError
from mlx.tables.spec import AXIS_TITLES, NUMERIC_AXES, Series, fmt_axis, parse_layout, parse_metrics
from mlx.validation import as_str_list, check_keys, read_yaml

__all__ = ["OwnSpec", "is_own_spec", "load_own_spec", "build_own", "render_own_markdown",
           "render_own_latex", "render_own_csv", "render_own_html", "write_own",
           "read_own_sources"]

OWN_KEYS = ("name", "title", "description", "paper", "configs", "results", "series",
            "baseline", "alpha", "axes", "layout", "metrics", "percent", "dataset_aliases")
OWN_AXES = ("metric", "dataset", "series", *NUMERIC_AXES)   # the numeric ones: mlx.axes
BETTER, WORSE_THAN_BASELINE = "↑", "↓"


@dataclass(frozen=True)
class OwnSpec:
    name: str
    title: str
    source: str
    description: str
    configs: tuple
    results: tuple
    series: tuple            # Series, or () for every label
    baseline: str | None
    alpha: float
    axes: dict
    blocks: tuple
    rows: tuple
    columns: tuple
    metrics: tuple           # MetricStyle
    percent: bool
    dataset_aliases: dict = field(default_factory=dict)


def is_own_spec(raw) -> bool:
    """A spec of one's own runs: no ``paper`` key, or ``paper: none``."""
    return isinstance(raw, dict) and str(raw.get("paper", "none")).lower() == "none"


def _unit(name: str, percent: bool) -> str:
    from mlx.tables.units import unit_factor

    if unit_factor(name, percent) is None:
        return "as printed"
    return "%" if percent else "fraction"


def load_own_spec(path: str | os.PathLike, raw: dict | None = None) -> OwnSpec:
    source = str(path)
    if raw is None:
        raw = read_yaml(path, empty_hint="a table spec needs at least 'metrics'")
    check_keys(raw, OWN_KEYS, "", source)
    configs = tuple(as_str_list(raw["configs"], "configs", source)) if raw.get("configs") else ()
    results = tuple(as_str_list(raw["results"], "results", source)) if raw.get("results") else ()
    if not configs and not results:
        raise ConfigError(source, None, "a table without a paper needs 'configs' or 'results' "
                                        "(the runs to lay out)")
    for i, c in enumerate(configs):
        if not Path(c).is_file():
            raise ConfigError(source, f"configs[{i}]", f"config file {c!r} not found")
    percent = raw.get("percent", False)
    if not isinstance(percent, bool):
        raise ConfigError(source, "percent", f"must be true or false. Got {percent!r} instead.")
    series = []
    for i, node in enumerate(raw.get("series") or []):
        if isinstance(node, str):
            node = {"name": node}
        check_keys(node, ("name", "ours"), f"series[{i}]", source)
        if not isinstance(node.get("name"), str) or not node["name"]:
            raise ConfigError(source, f"series[{i}].name", "must be a non-empty string")
        ours = node.get("ours", {"label": node["name"]})
        check_keys(ours, ("label", "method", "params"), f"series[{i}].ours", source)
        if ("label" in ours) == ("method" in ours):
            raise ConfigError(source, f"series[{i}].ours", "give exactly one of 'label' or "
                                                            "'method'")
        series.append(Series(node["name"], {}, dict(ours)))
    def defaults(name, opts):
        unit = opts.get("unit", _unit(name, percent))
        return {"unit": unit, "format": ".2f" if unit == "%" else ".4f"}

    metrics = parse_metrics(raw.get("metrics"), source, defaults=defaults,
                            keys=("unit", "format", "higher_is_better", "title"))
    axes_node = raw.get("axes") or {}
    check_keys(axes_node, ("dataset", *NUMERIC_AXES), "axes", source)
    axes = {a: tuple(float(v) if a != "dataset" else str(v)
                     for v in (vals if isinstance(vals, list) else [vals]))
            for a, vals in axes_node.items()}
    parts, used = parse_layout(raw.get("layout") or {}, OWN_AXES,
                               (["metric"], ["series"], ["dataset"]), source)
    if "metric" not in used and len(metrics) > 1:
        raise ConfigError(source, "layout", "axis 'metric' has several values but is not in "
                                            "blocks, rows or columns")
    alpha = raw.get("alpha", 0.05)
    if isinstance(alpha, bool) or not isinstance(alpha, (int, float)) or not 0 < alpha < 1:
        raise ConfigError(source, "alpha", f"must be a number in (0, 1). Got {alpha!r} instead.")
    baseline = raw.get("baseline")
    name = str(raw.get("name", Path(path).stem))
    return OwnSpec(name=name, title=str(raw.get("title", name)), source=source,
                   description=str(raw.get("description", "")), configs=configs,
                   results=results, series=tuple(series),
                   baseline=None if baseline is None else str(baseline), alpha=float(alpha),
                   axes=axes, blocks=parts["blocks"], rows=parts["rows"],
                   columns=parts["columns"], metrics=tuple(metrics), percent=percent,
                   dataset_aliases={str(k): str(v) for k, v in
                                    (raw.get("dataset_aliases") or {}).items()})


# ----------------------------------------------------------------------------- building
@dataclass
class OwnCell:
    mean: float | None
    sd: float | None
    n: int
    state: str                # ok, not run, or the cells' status (skipped, ...)
    best: bool = False
    mark: str = ""            # ↑ / ↓ against the baseline
    pvalue: float | None = None
    pairs: int = 0
    style: object = None      # the metric's MetricStyle


@dataclass
class OwnTable:
    spec: OwnSpec
    blocks: list              # [(title, [(row texts, [OwnCell per column])])]
    columns: list             # column keys
    sources: list


def _matches(frame: pd.DataFrame, key: dict) -> pd.DataFrame:
    f = frame
    if "dataset" in key:
        f = f[f["dataset"] == key["dataset"]]
    for ax in SPEC_AXES:
        if ax.spec in key:   # a row without the axis (no rank) appears at every value
            col = f[ax.column]
            f = f[col.isna() | ((col - key[ax.spec]).abs() < 1e-9)]
    return f


SETTING_COLUMNS = (("dataset", "dataset"), ("_source", "run"),
                   *((ax.column, ax.title) for ax in SPEC_AXES),
                   ("params", "params"))


def _per_rep(rows: pd.DataFrame, metric: str, *, what: str = "", source: str = ""
             ) -> pd.Series:
    """The value of each repetition. Rows of more than one setting (two datasets, two k/L, two
    runs, two parameter settings) are never averaged together: that is an error naming them."""
    vals = rows[(rows["status"] == "ok") & (rows["split"] == "test")
                & (rows["metric"] == metric) & rows["value"].notna()]
    numeric = {ax.column for ax in SPEC_AXES}     # a value to 9 digits, as in the layout
    for col, name in SETTING_COLUMNS:
        if col not in vals:
            continue
        values = vals[col].astype(float).round(9) if col in numeric else vals[col]
        if values.nunique(dropna=False) > 1:
            seen = ", ".join(sorted(str(v) for v in vals[col].unique()))   # NaN as "nan"
            hint = {"run": "restrict the runs with 'axes: {dataset: [...]}' or rename a "
                           "dataset with 'dataset_aliases'",
                    "params": "choose one with 'ours: {label: ..., params: {...}}'"}.get(
                name, "fix it with 'axes' or put it in the layout")
            raise MlxError(f"{source}: {what} matches results of several {name} settings "
                           f"({seen}); {hint}")
    return vals.groupby(["_source", "repetition"])["value"].mean()


def build_own(spec: OwnSpec, sources) -> OwnTable:
    from mlx.tables.build import ours_frame, select_rows
    from mlx.tables.paired import draw_pvalues

    ours = ours_frame(sources, spec.dataset_aliases)
    series = list(spec.series) or [Series(label, {}, {"label": label})
                                   for label in dict.fromkeys(ours["label"]) if label]
    names = [s.name for s in series]
    if spec.baseline is not None and spec.baseline not in names:
        raise UnknownNameError("baseline", spec.baseline, names, source=spec.source,
                               key_path="baseline")
    by_name = {s.name: s for s in series}
    metric_by = {m.name: m for m in spec.metrics}
    domain = {"metric": [m.name for m in spec.metrics], "series": names}
    for axis, col in (("dataset", "dataset"), *((ax.spec, ax.column) for ax in SPEC_AXES)):
        present = [v for v in dict.fromkeys(ours[col].dropna()) if v != ""]
        if axis != "dataset":
            present = sorted({round(float(v), 9) for v in present})
        domain[axis] = list(spec.axes.get(axis, present))
    layout = spec.blocks + spec.rows + spec.columns
    fixed = {a: v[0] for a, v in spec.axes.items() if a not in layout and len(v) == 1}
    for axis in ("metric", "series"):          # one metric or series need not be laid out
        if axis not in layout:
            if len(domain[axis]) != 1:
                raise ConfigError(spec.source, "layout", f"axis {axis!r} has "
                                  f"{len(domain[axis])} values but is not in blocks, rows or "
                                  f"columns")
            fixed[axis] = domain[axis][0]
    columns = list(itertools.product(*[domain[a] for a in spec.columns]))
    blocks = []
    for bkey in itertools.product(*[domain[a] for a in spec.blocks]):
        btitle = " ".join(_axis_text(a, v, metric_by) for a, v in zip(spec.blocks, bkey))
        rows = []
        for rkey in itertools.product(*[domain[a] for a in spec.rows]):
            cells = []
            for ckey in columns:
                key = {**fixed, **dict(zip(spec.blocks, bkey)), **dict(zip(spec.rows, rkey)),
                       **dict(zip(spec.columns, ckey))}
                cell = _cell(ours, key, by_name, spec, select_rows, draw_pvalues)
                cell.style = metric_by[key["metric"]]
                cells.append(cell)
            rows.append(([_axis_text(a, v, metric_by) for a, v in zip(spec.rows, rkey)],
                         cells))
        for j in range(len(columns)):   # bold: the best of each column (per metric in it)
            for metric, style in metric_by.items():
                cells = [r[1][j] for r in rows
                         if r[1][j].style is style and r[1][j].mean is not None]
                if cells:
                    pick = max if style.higher_is_better else min
                    best = pick(c.mean for c in cells)
                    for c in cells:
                        c.best = math.isclose(c.mean, best, rel_tol=0, abs_tol=1e-12)
        blocks.append((btitle, rows))
    return OwnTable(spec, blocks, columns, list(sources))


def _draws(rows: pd.DataFrame, metric: str) -> dict:
    """(run, repetition) -> what it drew (split, label mask, validation rows), for the paired
    test: repetitions of one draw count once (:func:`mlx.tables.paired.draw_pvalues`)."""
    from mlx.tables.paired import draw_of

    vals = rows[(rows["status"] == "ok") & (rows["split"] == "test") & (rows["metric"] == metric)]
    return {k: draw_of(g.iloc[0]) for k, g in vals.groupby(["_source", "repetition"])}


def _cell(ours, key, by_name, spec, select_rows, draw_pvalues) -> OwnCell:
    series = by_name[key["series"]]
    rows = _matches(select_rows(ours, series), key)
    where = ", ".join(f"{AXIS_TITLES[a]} {v if isinstance(v, str) else fmt_axis(a, v)}"
                      for a, v in key.items() if a not in ("series", "metric"))
    per_rep = _per_rep(rows, key["metric"], what=f"series {series.name!r} at {where or 'all'}",
                       source=spec.source)
    if not len(per_rep):
        statuses = sorted(set(rows["status"]) - {"ok"}) if len(rows) else []
        return OwnCell(None, None, 0, "/".join(statuses) or "not run")
    cell = OwnCell(float(per_rep.mean()), float(per_rep.std(ddof=1)) if len(per_rep) > 1
                   else None, len(per_rep), "ok")
    if spec.baseline and key["series"] != spec.baseline:
        base_rows = _matches(select_rows(ours, by_name[spec.baseline]), key)
        base = _per_rep(base_rows, key["metric"], what=f"baseline {spec.baseline!r}",
                        source=spec.source)
        common = per_rep.index.intersection(base.index)
        cell.pairs = len(common)
        da, db = _draws(rows, key["metric"]), _draws(base_rows, key["metric"])
        p, _, _, _ = draw_pvalues(per_rep[common].to_numpy(), base[common].to_numpy(),
                                  [(da.get(i), db.get(i)) for i in common])
        cell.pvalue = p
        if p is not None and p < spec.alpha:
            hib = next(m for m in spec.metrics if m.name == key["metric"]).higher_is_better
            better = per_rep[common].mean() > base[common].mean()
            cell.mark = BETTER if better == hib else WORSE_THAN_BASELINE
    return cell


def _axis_text(axis: str, value, metric_by) -> str:
    if axis == "metric":
        return metric_by[value].heading()
    return fmt_axis(axis, value)


def _cell_text(cell: OwnCell, style, *, latex: bool = False) -> str:
    if cell.mean is None:
        return "--" if latex and cell.state == "not run" else \
            ("—" if cell.state == "not run" else cell.state)
    f = style.factor
    text = style.fmt_value(cell.mean * f)
    if cell.sd is not None:
        text += (r" $\pm$ " if latex else " ± ") + style.fmt_value(cell.sd * f)
    if latex:
        if cell.best:
            text = r"\textbf{" + text + "}"
        if cell.mark:
            text += r"$^{\uparrow}$" if cell.mark == BETTER else r"$^{\downarrow}$"
        return text
    if cell.best:
        text = f"**{text}**"
    return text + (f" {cell.mark}" if cell.mark else "")


def _column_titles(table: OwnTable) -> list[str]:
    metric_by = {m.name: m for m in table.spec.metrics}
    only = table.spec.metrics[0].heading() if len(table.spec.metrics) == 1 else "value"
    return [" ".join(_axis_text(a, v, metric_by) for a, v in zip(table.spec.columns, ckey))
            or only for ckey in table.columns]


def _notes(table: OwnTable) -> list[str]:
    spec = table.spec
    notes = ["Each cell: the mean ± standard deviation over repetitions; bold: the best of its "
             "column."]
    if spec.baseline:
        pairs = sorted({c.pairs for _, rows in table.blocks for _, cells in rows for c in cells
                        if c.mean is not None and c.pvalue is not None})
        notes.append(f"{BETTER} / {WORSE_THAN_BASELINE}: better / worse than {spec.baseline} "
                     f"(paired t-test over repetitions on the same splits, p < {spec.alpha:g}"
                     + (f"; {', '.join(str(p) for p in pairs)} pairs" if pairs else
                        "; no setting had 2 or more pairs, so nothing is marked") + ").")
    return notes


def render_own_markdown(table: OwnTable) -> str:
    spec = table.spec
    lines = [f"# {spec.title}", ""]
    if spec.description:
        lines += [spec.description.strip(), ""]
    heads = [AXIS_TITLES[a] for a in spec.rows] + _column_titles(table)
    for title, rows in table.blocks:
        if title:
            lines += [f"## {title}", ""]
        lines.append("| " + " | ".join(heads) + " |")
        lines.append("|" + "|".join(["---"] * len(spec.rows)
                                    + ["---:"] * len(table.columns)) + "|")
        for texts, cells in rows:
            lines.append("| " + " | ".join(texts + [_cell_text(c, c.style) for c in cells])
                         + " |")
        lines.append("")
    lines += [n + "\n" for n in _notes(table)]
    return "\n".join(lines)


def _tex(text: str) -> str:
    from mlx.tables.render import _tex as tex

    return tex(text).replace("↑", r"$\uparrow$").replace("↓", r"$\downarrow$")


def render_own_latex(table: OwnTable) -> str:
    spec = table.spec
    heads = [AXIS_TITLES[a] for a in spec.rows] + _column_titles(table)
    ncols = len(heads)
    lines = [f"% {spec.title}. Generated by 'mlx table {spec.source}'. Needs "
             r"\usepackage{booktabs}.",
             r"\begin{table}[ht]", r"\centering", r"\small",
             f"\\caption{{{_tex(spec.title)}}}", f"\\label{{tab:{spec.name}}}",
             r"\begin{tabular}{" + "l" * len(spec.rows) + "r" * len(table.columns) + "}",
             r"\toprule", " & ".join(_tex(h) for h in heads) + r" \\"]
    for title, rows in table.blocks:
        lines.append(r"\midrule")
        if title and len(table.blocks) > 1:
            lines += [f"\\multicolumn{{{ncols}}}{{l}}{{\\textit{{{_tex(title)}}}}} \\\\",
                      r"\midrule"]
        for texts, cells in rows:
            lines.append(" & ".join([_tex(t) for t in texts]
                                    + [_cell_text(c, c.style, latex=True) for c in cells])
                         + r" \\")
    lines += [r"\bottomrule", r"\end{tabular}"]
    notes = _tex(" ".join(_notes(table))).replace("±", r"$\pm$").replace("<", "$<$")
    lines += [r"\par\smallskip{\footnotesize " + notes + "}", r"\end{table}", ""]
    return "\n".join(lines)


def render_own_csv(table: OwnTable) -> str:
    rows = []
    for title, block_rows in table.blocks:
        for texts, cells in block_rows:
            for ctitle, c in zip(_column_titles(table), cells):
                rows.append({"block": title, "row": " ".join(texts), "column": ctitle,
                             "metric": c.style.name, "unit": c.style.unit,
                             "mean": None if c.mean is None else c.mean * c.style.factor,
                             "sd": None if c.sd is None else c.sd * c.style.factor,
                             "repetitions": c.n, "state": c.state, "best": c.best,
                             "vs_baseline": c.mark, "pvalue": c.pvalue, "pairs": c.pairs})
    return pd.DataFrame(rows).to_csv(index=False, float_format="%.6g", lineterminator="\n")


def write_own(table: OwnTable, out_dir, *, command: str) -> dict:
    """Write ``<name>.md``, ``.csv``, ``.tex`` and ``.json`` (the command, sources and their
    machines, as :func:`mlx.tables.render.write_table` does; ``mlx results-doc`` lists it)
    to ``out_dir``."""
    import json
    from datetime import datetime, timezone

    from mlx.io import atomic_write_text
    from mlx.tables.render import sources_meta

    out = Path(out_dir)
    spec = table.spec
    md = render_own_markdown(table)
    paths = {"md": out / f"{spec.name}.md", "csv": out / f"{spec.name}.csv",
             "tex": out / f"{spec.name}.tex", "json": out / f"{spec.name}.json"}
    atomic_write_text(paths["md"], md)
    atomic_write_text(paths["csv"], render_own_csv(table))
    atomic_write_text(paths["tex"], render_own_latex(table))
    meta = {
        "name": spec.name, "title": spec.title, "spec": spec.source, "paper": None,
        "kind": "own", "command": command,
        "rendered": datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "sources": sources_meta(table.sources),
    }
    atomic_write_text(paths["json"], json.dumps(meta, indent=2, sort_keys=True) + "\n")
    return {"markdown": md, "paths": paths, "command": command, "meta": meta}


def read_own_sources(spec: OwnSpec) -> list:
    from mlx.tables.build import _read_source

    return ([_read_source(c, "config") for c in spec.configs]
            + [_read_source(r, "results") for r in spec.results])


def render_own_html(table: OwnTable) -> str:
    """The table for ``mlx report``: bold best, the baseline marks, the notes."""
    from html import escape

    spec = table.spec
    heads = [AXIS_TITLES[a] for a in spec.rows] + _column_titles(table)
    out = []
    for title, rows in table.blocks:
        if title:
            out.append(f"<h4>{escape(title)}</h4>")
        out.append('<table class="results sortable"><thead><tr>'
                   + "".join(f"<th>{escape(h)}</th>" for h in heads[:len(spec.rows)])
                   + "".join(f'<th class="num">{escape(h)}</th>' for h in heads[len(spec.rows):])
                   + "</tr></thead><tbody>")
        for texts, cells in rows:
            tds = "".join(f"<td>{escape(t)}</td>" for t in texts)
            for c in cells:
                text = escape(_cell_text(c, c.style).replace("**", ""))
                if c.best:
                    text = text.replace(escape(c.mark), "").strip()
                    text = f"<strong>{text}</strong>" + (f" {escape(c.mark)}" if c.mark else "")
                p = "" if c.pvalue is None else f' title="paired t-test p = {c.pvalue:.3g}"'
                tds += f'<td class="num"{p}>{text}</td>'
            out.append(f"<tr>{tds}</tr>")
        out.append("</tbody></table>")
    out += [f'<p class="legend">{escape(n)}</p>' for n in _notes(table)]
    return "\n".join(out)
