"""Building a paper table: our results and the published values, matched cell by cell.

Our rows come from the results.csv of each :class:`Source` (a config's output
directory or a results path); rows with ``split == "validation"`` (selection
candidates) are dropped on reading. Every cell shows ``ours / published (ours -
published)`` in the display unit of its metric (``ours (sd) / ...`` with more than one
repetition): published values are divided by their
``scale`` and both are multiplied by the unit's factor. A cell is *within* ±tolerance of
the paper, or marked ``▲`` when we are better than the paper by more than the tolerance
and ``▼`` when we are worse by more than it (lower is better for losses, errors and
times); ``n/p`` when the paper has no value and ``—`` when we have no result yet (or the
run's status, e.g. ``skipped``); none of these is ever shown as a number.
"""

from __future__ import annotations

import itertools
import json
import os
from dataclasses import dataclass
from pathlib import Path

import pandas as pd
import yaml

from mlx.axes import SETTING_AXES, SPEC_AXES, SWEEP_AXES, by_spec
from mlx.errors import ConfigError, MlxError
from mlx.tables.published import published
from mlx.tables.spec import (
    AXIS_TITLES,
    NUMERIC_AXES,
    PSEUDO_METRICS,
    MetricStyle,
    Series,
    TableSpec,
    fmt_axis,
)

__all__ = ["NOT_RUN", "WORSE", "BETTER", "NP", "judge", "Source", "TableCell", "Block",
           "RenderedTable", "config_output", "read_sources", "ours_frame", "params_dict",
           "select_rows", "build_table"]

NOT_RUN = "—"
WORSE = "▼"
BETTER = "▲"
NP = "n/p"
_EPS = 1e-9


# ----------------------------------------------------------------------------- our results
@dataclass
class Source:
    """One input of a table: a config (results read from its output) or a results path."""

    given: str
    kind: str                 # "config" or "results"
    results: Path
    frame: pd.DataFrame | None
    manifest: dict | None


def config_output(path: str) -> tuple[str, str]:
    """(name, output directory) of a config, read without running its full validation."""
    try:
        with open(path, encoding="utf-8") as fh:
            raw = yaml.safe_load(fh) or {}
    except (OSError, yaml.YAMLError) as exc:
        raise ConfigError(path, None, f"cannot read config: {exc}") from None
    if not isinstance(raw, dict) or "name" not in raw:
        raise ConfigError(path, None, "not an mlx config (no 'name')")
    name = str(raw["name"])
    return name, str(raw.get("output") or os.path.join("results", name))


def _read_source(given: str, kind: str) -> Source:
    from mlx.runner.results import read_results

    if kind == "config":
        _, out = config_output(given)
        results = Path(out)
    else:
        results = Path(given)
    csv_path = results / "results.csv" if results.suffix != ".csv" else results
    run_dir = csv_path.parent
    frame = read_results(csv_path) if csv_path.exists() else None
    manifest = None
    if (run_dir / "manifest.json").exists():
        try:
            manifest = json.loads((run_dir / "manifest.json").read_text(encoding="utf-8"))
        except (OSError, ValueError):
            manifest = None
    return Source(given, kind, run_dir, frame, manifest)


def read_sources(spec: TableSpec) -> list[Source]:
    return ([_read_source(c, "config") for c in spec.configs]
            + [_read_source(r, "results") for r in spec.results])


def ours_frame(sources: list[Source], aliases: dict | None = None) -> pd.DataFrame:
    """All result rows of ``sources``, typed, with parsed params and dataset aliases applied."""
    frames = []
    for i, src in enumerate(sources):
        if src.frame is None or not len(src.frame):
            continue
        f = src.frame.copy()
        f["_source"] = i
        for ax in SWEEP_AXES:
            if ax.column not in f:           # a results.csv older than the axis
                f[ax.column] = ax.default
        frames.append(f)
    if not frames:
        return pd.DataFrame(columns=["_source", "cell_id", "dataset", "method", "label", "params",
                                     *(ax.column for ax in SWEEP_AXES), "repetition",
                                     "split", "metric", "value", "status", "message",
                                     "fit_seconds", "_params"])
    frame = pd.concat(frames, ignore_index=True)
    for col in (*(ax.column for ax in SWEEP_AXES), "value", "fit_seconds"):
        frame[col] = pd.to_numeric(frame[col], errors="coerce")
    for col in ("split", "metric", "message", "status", "label", "method", "dataset", "params"):
        frame[col] = frame[col].fillna("").astype(str)
    frame["dataset"] = frame["dataset"].map(lambda d: (aliases or {}).get(d, d))
    frame["_params"] = frame["params"].map(params_dict)
    frame = frame[frame["split"] != "validation"]   # selection candidates' rows
    frame = frame.drop_duplicates(["cell_id", "split", "metric"])
    return frame


def params_dict(text) -> dict:
    try:
        out = json.loads(text)
    except (TypeError, ValueError):
        return {}
    return out if isinstance(out, dict) else {}


# ----------------------------------------------------------------------------- cells
@dataclass
class TableCell:
    """One cell of a rendered table, in display units.

    With more than one repetition, ``ours`` is their mean and ``ours_std`` their
    standard deviation (ddof=1), printed in parentheses after the mean as the papers
    print theirs: ``13.60 (0.80) / 14.00 (-0.40)``.
    """

    key: dict
    metric: MetricStyle
    ours: float | None
    ours_std: float | None
    n_rep: int
    published: float | None
    published_std: float | None
    table: str
    state: str                 # within, better, worse, compared, n/p, not run, empty, or a
    #                            run status

    @property
    def diff(self) -> float | None:
        if self.ours is None or self.published is None:
            return None
        return self.ours - self.published

    def text(self, *, latex: bool = False) -> str:
        m = self.metric
        if self.ours is not None:
            ours = m.fmt_value(self.ours)
            if self.n_rep > 1 and self.ours_std is not None:  # as the papers print it
                ours += f" ({m.fmt_value(self.ours_std)})"
        elif self.state in ("not run", "empty"):
            ours = "--" if latex else NOT_RUN
        else:
            ours = self.state
        pub = NP if self.published is None else m.fmt_value(self.published)
        if self.diff is None:
            return f"{ours} / {pub}"
        diff = m.fmt_diff(self.diff)
        if latex:
            mark = {"worse": r" $\blacktriangledown$", "better": r" $\blacktriangle$"}.get(
                self.state, "")
            return f"{ours} / {pub} {{\\scriptsize ({diff})}}{mark}"
        mark = {"worse": f" {WORSE}", "better": f" {BETTER}"}.get(self.state, "")
        return f"{ours} / {pub} ({diff})" + mark


@dataclass
class Block:
    title: str
    rows: list                 # [(row key values, [TableCell per column])]
    tables: list


@dataclass
class RenderedTable:
    spec: TableSpec
    blocks: list
    row_axes: tuple
    column_axes: tuple
    columns: list              # column key tuples
    cells: list
    sources: list

    def counts(self) -> dict:
        c = {"within": 0, "better": 0, "worse": 0, "compared": 0, "np": 0, "not_run": 0,
             "status": 0}
        for cell in self.cells:
            if cell.state in ("within", "better", "worse"):
                c[cell.state] += 1
            elif cell.state == "compared":
                c["compared"] += 1
            elif cell.state == NP:
                c["np"] += 1
            elif cell.state == "not run":
                c["not_run"] += 1
            elif cell.state != "empty":
                c["status"] += 1
        return c


def judge(diff: float, tolerance: float, higher_is_better: bool) -> str:
    """``within`` ±tolerance of the paper, else ``better`` or ``worse`` beyond it.

    ``diff`` is ours − published; for a metric where lower is better (Hamming loss, error,
    RMSE, time) a negative difference is the better one."""
    if abs(diff) <= tolerance + _EPS:
        return "within"
    return "better" if (diff > 0) == higher_is_better else "worse"


def _close(a, b) -> bool:
    return abs(float(a) - float(b)) < _EPS


def select_rows(frame: pd.DataFrame, series: Series) -> pd.DataFrame:
    sel = series.ours
    if "label" in sel:
        mask = frame["label"] == str(sel["label"])
    else:
        mask = frame["method"] == str(sel["method"])
    if sel.get("params"):
        want = sel["params"]
        mask &= frame["_params"].map(
            lambda p: all(p.get(k) == v for k, v in want.items())).astype(bool)
    return frame.loc[mask.astype(bool)]


def _select_variant(frame: pd.DataFrame, spec: TableSpec, variant: str,
                    variants: tuple = ()) -> pd.DataFrame:
    """Rows of ``variant``. Default rule: a parameter whose value is the variant's name; a
    row none of whose parameter values names any of the table's ``variants`` (a baseline
    such as the constant predictor) belongs to every variant, as a method without a rank
    matches every k/L."""
    sel = spec.variants.get(variant)
    if sel is None:
        names = set(variants) | {variant}
        mask = frame["_params"].map(
            lambda p: variant in [str(v) for v in p.values()]
            or not names & {str(v) for v in p.values()})
        return frame.loc[mask.astype(bool)]
    mask = pd.Series(True, index=frame.index)
    if "label" in sel:
        mask &= frame["label"] == str(sel["label"])
    for k, v in (sel.get("params") or {}).items():
        mask &= frame["_params"].map(lambda p, k=k, v=v: p.get(k) == v).astype(bool)
    return frame.loc[mask]


def spec_variants(spec: TableSpec) -> tuple:
    """The variants of the spec's published tables (e.g. ``linear``, ``rff``)."""
    pub = published()
    pub = pub[(pub["paper"] == spec.paper) & pub["table"].isin(spec.tables)]
    return tuple(dict.fromkeys(v for v in pub["variant"] if isinstance(v, str) and v))


def _axis_domain(axis: str, spec: TableSpec, pub: pd.DataFrame, ours: pd.DataFrame) -> tuple:
    if axis == "metric":
        return tuple(m.name for m in spec.metrics)
    if axis == "series":
        return tuple(s.name for s in spec.series)
    if axis in spec.axes:
        return spec.axes[axis]
    if axis == "dataset":
        return tuple(dict.fromkeys(list(pub["dataset"]) + list(ours["dataset"])))
    if axis == "variant":
        return tuple(dict.fromkeys(v for v in pub["variant"] if v))
    col = by_spec(axis).column
    values = list(pub[axis].dropna() if axis in pub else []) + list(ours[col].dropna())
    out = []
    for v in sorted(values):
        if not out or not _close(out[-1], v):
            out.append(float(v))
    return tuple(out)


def _published_value(pub: pd.DataFrame, spec: TableSpec, series: Series, key: dict):
    if not series.paper:                                  # a baseline the paper does not have
        return None
    mask = (pub["metric"] == key["metric"]) & (pub["dataset"] == key["dataset"]) \
        & (pub["method"] == series.paper["method"])
    if "loss" in series.paper:
        mask &= pub["loss"] == series.paper["loss"]
    if "variant" in key:
        mask &= pub["variant"] == key["variant"]
    for axis in NUMERIC_AXES:  # a published value that leaves an axis open fits any value
        if axis in key and axis in pub:
            mask &= pub[axis].isna() | ((pub[axis] - key[axis]).abs() < _EPS)
    rows = pub[mask]
    if not len(rows):
        return None
    order = {t: i for i, t in enumerate(spec.tables)}
    rows = rows.assign(_o=rows["table"].map(order)).sort_values("_o", kind="stable")
    return rows.iloc[0]


def _our_rows(ours: pd.DataFrame, spec: TableSpec, series: Series, key: dict) -> pd.DataFrame:
    f = select_rows(ours, series)
    f = f[f["dataset"] == key["dataset"]]
    if "variant" in key:
        f = _select_variant(f, spec, key["variant"], spec_variants(spec))
    for ax in SPEC_AXES:
        if ax.spec in key:  # a row without the axis (BR has no rank) matches every value
            col = f[ax.column]
            f = f[col.isna() | ((col - key[ax.spec]).abs() < _EPS)]
    return f


def _our_value(rows: pd.DataFrame, metric: str, spec: TableSpec, series: Series, key: dict):
    """(mean, std, n_rep, state) over repetitions for one cell."""
    ok = rows[rows["status"] == "ok"]
    if metric in PSEUDO_METRICS:
        vals = ok.drop_duplicates("cell_id")
        vals = vals.assign(value=vals["fit_seconds"]) if metric == "fit_seconds" else vals.iloc[0:0]
    else:
        vals = ok[(ok["metric"] == metric) & (ok["split"] == "test")]
    vals = vals[vals["value"].notna()]
    if len(vals):
        where = ", ".join(f"{AXIS_TITLES[a]}={fmt_axis(a, v)}" for a, v in key.items()
                          if a != "metric")
        if vals["params"].nunique() > 1:
            p = sorted(vals["params"].unique())
            raise MlxError(f"{spec.source}: series {series.name!r} matches results with different "
                           f"parameters ({p[0]}; {p[1]}) at {where}; add 'ours: {{params: ...}}' "
                           f"to the series to choose one")
        _refuse_pooling(vals, spec, series, where)
        per_rep = vals.groupby(["_source", "repetition"])["value"].mean()
        std = float(per_rep.std(ddof=1)) if len(per_rep) > 1 else None
        return float(per_rep.mean()), std, len(per_rep), "ok"
    if len(rows):
        statuses = sorted(set(rows["status"]) - {"ok"})
        if statuses:
            return None, None, 0, "/".join(statuses)
    return None, None, 0, "not run"


def _refuse_pooling(vals: pd.DataFrame, spec: TableSpec, series: Series, where: str) -> None:
    """A cell never pools unlike settings: results that differ in a setting axis the spec
    leaves open (say the observed ratio, with runs at 100% and 20%) are an error naming
    the axis, not a mean shown as if it were a spread over repetitions."""
    for ax in SETTING_AXES:
        if ax.column in ("dataset", "params"):     # the key / the error above
            continue
        values = vals[ax.column].dropna()
        if ax.numeric:
            values = values.astype(float).round(9)
        # Numbers in numeric order ("8, 16", not "16, 8"), other values as text.
        distinct = sorted(values.unique(), key=None if ax.numeric else str)
        if len(distinct) < 2:
            continue
        shown = ", ".join(ax.fmt(v) if ax.numeric else str(v) for v in distinct)
        if ax.spec:
            fix = (f"add '{ax.spec}' to layout.blocks, rows or columns, or fix it with "
                   f"axes.{ax.spec}: [value]")
        else:
            fix = f"select one with 'ours: {{{ax.column}: ...}}' in the series"
        raise ConfigError(spec.source, "layout",
                          f"series {series.name!r} would pool results of {len(distinct)} "
                          f"{ax.title} values ({shown}) at {where}; {fix}")


# Complexity 17 (over 15): matching, judging and marking of each cell in one pass.
def build_table(spec: TableSpec, sources: list[Source], *, ours: pd.DataFrame | None = None  # noqa: C901
                ) -> RenderedTable:
    """Match our results and the published values cell by cell."""
    pub = published()
    pub = pub[(pub["paper"] == spec.paper) & pub["table"].isin(spec.tables)]
    if ours is None:
        ours = ours_frame(sources, spec.dataset_aliases)
    series_by_name = {s.name: s for s in spec.series}
    metric_names_ = [m.name for m in spec.metrics]
    pub_scope = pub[pub["metric"].isin(metric_names_)
                    & pub["method"].isin({s.paper["method"] for s in spec.series if s.paper})]
    ours_scope = pd.concat([select_rows(ours, s) for s in spec.series]) if len(ours) else ours
    layout_axes = spec.blocks + spec.rows + spec.columns
    domains = {a: _axis_domain(a, spec, pub_scope, ours_scope) for a in layout_axes}
    fixed = {a: v[0] for a, v in spec.axes.items() if a not in layout_axes}
    for a in ("metric", "series"):
        if a not in layout_axes:
            fixed[a] = metric_names_[0] if a == "metric" else spec.series[0].name
    if "dataset" not in layout_axes and "dataset" not in fixed:
        found = _axis_domain("dataset", spec, pub_scope, ours_scope)
        if len(found) != 1:
            raise ConfigError(spec.source, "layout",
                              f"the table has {len(found)} datasets ({', '.join(found)}) but "
                              f"'dataset' is not in blocks, rows or columns; add it, or pick "
                              f"one with axes.dataset")
        fixed["dataset"] = found[0]

    def cell_for(key: dict) -> TableCell:
        series = series_by_name[key["series"]]
        style = spec.metric(key["metric"])
        prow = _published_value(pub, spec, series, key)
        pval = pstd = None
        table = ""
        if prow is not None:
            pval = float(prow["value"]) / float(prow["scale"]) * style.factor
            pstd = None if pd.isna(prow["std"]) else float(prow["std"]) / float(prow["scale"]) \
                * style.factor
            table = str(prow["table"])
        rows = _our_rows(ours, spec, series, key)
        oval, ostd, n_rep, state = _our_value(rows, key["metric"], spec, series, key)
        if oval is not None:
            oval *= style.factor
            ostd = None if ostd is None else ostd * style.factor
        if oval is not None and pval is not None:
            state = "compared" if style.tolerance is None else \
                judge(oval - pval, style.tolerance, style.higher_is_better)
        elif oval is not None:
            state = NP
        elif state == "not run" and pval is None:
            state = "empty"
        return TableCell(key, style, oval, ostd, n_rep, pval, pstd, table, state)

    columns = list(itertools.product(*(domains[a] for a in spec.columns)))
    blocks, cells = [], []
    for bkey in itertools.product(*(domains[a] for a in spec.blocks)):
        bdict = dict(zip(spec.blocks, bkey))
        rows_out, tables = [], []
        for rkey in itertools.product(*(domains[a] for a in spec.rows)):
            rdict = dict(zip(spec.rows, rkey))
            row_cells = []
            for ckey in columns:
                key = {**fixed, **bdict, **rdict, **dict(zip(spec.columns, ckey))}
                row_cells.append(cell_for(key))
            if all(c.state == "empty" for c in row_cells):
                continue
            rows_out.append((rkey, row_cells))
            cells.extend(c for c in row_cells if c.state != "empty")
            tables.extend(c.table for c in row_cells if c.table)
        if not rows_out:
            continue
        blocks.append(Block(_block_title(spec, bdict), rows_out,
                            sorted(set(tables), key=lambda t: (len(t), t))))
    return RenderedTable(spec, blocks, spec.rows, spec.columns, columns, cells, sources)


def _block_title(spec: TableSpec, bdict: dict) -> str:
    parts = []
    for axis, value in bdict.items():
        if axis == "metric":
            parts.append(spec.metric(value).heading())
        elif axis in NUMERIC_AXES:
            parts.append(f"{AXIS_TITLES[axis]} = {fmt_axis(axis, value)}")
        else:
            parts.append(str(value))
    return ", ".join(parts)
