"""Paper tables: our results beside the published numbers.

A *table spec* (``configs/tables/<name>.yaml``) says which results feed a table
(configs, whose output directories are read, or results directories), which
published table(s) of which paper it reproduces, how our result rows map to the
paper's rows (a *series*: our ``label``, or our ``method`` plus parameters, to the
paper's method and loss), how cells are laid out (blocks, rows, columns over the
axes ``metric``, ``dataset``, ``series``, ``k_over_L``, ``observed``, ``k`` and
``variant``), and per metric the display unit, number format, tolerance and
direction. Specs never recompute metrics: they read ``results.csv``.

Every cell shows ``ours / published (ours - published)`` in the display unit of its
metric. Published percentages and our fractions are put on one scale first: the
reference table stores each value as printed with its ``scale`` (``value / scale`` is
on the results.csv scale, e.g. 58.33 % / 100 = 0.5833), and the display unit
multiplies back (``%`` and ``x100`` by 100). Tolerances are in the display unit
(1.0 = one percentage point for top-k accuracy shown in %). A cell is marked ``▼``
when we are worse than the paper by more than the tolerance, ``n/p`` when the paper
has no value and ``—`` when we have no result yet (or the run's status, e.g.
``skipped``); none of these is ever shown as a number.

The published numbers are package data: ``mlx/reference/published.csv`` (see the
README there for provenance, units and transcription notes).
"""

from __future__ import annotations

import itertools
import json
import numbers
import os
import re
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

import pandas as pd
import yaml

from mlx.errors import ConfigError, MlxError, UnknownNameError, suggest

__all__ = ["AXES", "Series", "MetricStyle", "TableSpec", "Cell", "RenderedTable",
           "published", "papers", "load_spec", "read_sources", "build_table",
           "render_markdown", "render_csv", "render_latex", "write_table", "check_spec",
           "compare_spec", "auto_series", "metric_style", "select_rows", "params_dict",
           "results_doc_text", "write_results_doc"]

AXES = ("metric", "dataset", "series", "k_over_L", "observed", "k", "variant")
AXIS_TITLES = {"metric": "metric", "dataset": "dataset", "series": "method", "k_over_L": "k/L",
               "observed": "observed", "k": "k", "variant": "variant"}
NUMERIC_AXES = ("k_over_L", "observed", "k")
SPEC_KEYS = ("name", "title", "description", "paper", "tables", "configs", "results", "series",
             "axes", "dataset_aliases", "variants", "layout", "metrics", "figures", "needs")
METRIC_KEYS = ("tolerance", "unit", "format", "higher_is_better", "title")
SERIES_KEYS = ("name", "paper", "ours")
LAYOUT_KEYS = ("blocks", "rows", "columns")
FIGURE_KEYS = ("x", "metric", "datasets", "at")
NEEDS_KEYS = ("methods", "datasets", "note")
UNITS = {"%": 100.0, "fraction": 1.0, "x100": 100.0, "s": 1.0, "ratio": 1.0, "as printed": 1.0}
UNIT_LABELS = {"%": "%", "fraction": "", "x100": "×100", "s": "s", "ratio": "", "as printed": ""}
DEFAULT_FORMATS = {"%": ".2f", "fraction": ".4f", "x100": ".2f", "s": ".0f", "ratio": ".2f",
                   "as printed": ".2g"}
PSEUDO_METRICS = {"fit_seconds": "training time", "speedup": "speed-up"}
LOSS_CODES = {"squared": "SQ", "logistic": "LR", "squared_hinge": "SH", "warp": "WAR"}
NOT_RUN = "—"
WORSE = "▼"
NP = "n/p"
_EPS = 1e-9


# ----------------------------------------------------------------------------- published
@lru_cache(maxsize=1)
def published() -> pd.DataFrame:
    """The published numbers of every paper, one row per value (``mlx/reference``)."""
    from importlib.resources import files

    with (files("mlx.reference") / "published.csv").open("r", encoding="utf-8") as fh:
        frame = pd.read_csv(fh, dtype={"table": str, "loss": str, "variant": str, "note": str},
                            keep_default_na=False, na_values={c: [""] for c in
                                                              ("k_over_L", "k", "observed",
                                                               "value", "std", "scale")})
    for col in ("k_over_L", "k", "observed", "value", "std", "scale"):
        frame[col] = pd.to_numeric(frame[col], errors="coerce")
    return frame


def papers() -> list[str]:
    return sorted(published()["paper"].unique())


# ----------------------------------------------------------------------------- spec
@dataclass(frozen=True)
class Series:
    """One method of a table: how our rows are found and which published rows it is.

    ``paper`` holds ``method`` and optionally ``loss``; ``ours`` holds either ``label``
    or ``method`` (registry key) with optional ``params`` (a subset to match).
    """

    name: str
    paper: dict
    ours: dict


@dataclass(frozen=True)
class MetricStyle:
    name: str
    title: str
    unit: str
    fmt: str
    tolerance: float | None
    higher_is_better: bool

    @property
    def factor(self) -> float:
        return UNITS[self.unit]

    def heading(self) -> str:
        label = UNIT_LABELS[self.unit]
        return f"{self.title} ({label})" if label else self.title

    def fmt_value(self, v: float) -> str:
        return format(v, self.fmt)

    def fmt_diff(self, v: float) -> str:
        text = format(v, "+" + self.fmt)
        return "+" + text[1:] if text.startswith("-") and float(text) == 0 else text


@dataclass(frozen=True)
class TableSpec:
    name: str
    title: str
    source: str | None
    paper: str
    tables: tuple
    configs: tuple
    results: tuple
    series: tuple
    axes: dict
    dataset_aliases: dict
    variants: dict
    blocks: tuple
    rows: tuple
    columns: tuple
    metrics: tuple
    figures: tuple = ()
    needs: dict = field(default_factory=dict)
    description: str = ""

    def metric(self, name: str) -> MetricStyle:
        return next(m for m in self.metrics if m.name == name)


def _where(path: str, key) -> str:
    return f"{path}.{key}" if path else str(key)


def _check_keys(node, valid, path: str, source) -> None:
    if not isinstance(node, dict):
        raise ConfigError(source, path or None,
                          f"must be a mapping, got {type(node).__name__}")
    for key in node:
        if key not in valid:
            hint = suggest(str(key), valid)
            msg = f"unknown key {_where(path, key)!r}."
            if hint:
                msg += f" Did you mean {_where(path, hint)!r}?"
            under = f"under {path!r}" if path else "at the top level"
            raise ConfigError(source, None,
                              msg + f" Valid keys {under}: {', '.join(sorted(valid))}")


def _str_list(node, path, source) -> list[str]:
    if isinstance(node, (str, numbers.Number)) and not isinstance(node, bool):
        node = [node]
    if not isinstance(node, list) or not node:
        raise ConfigError(source, path, "must be a non-empty list")
    out = []
    for i, v in enumerate(node):
        if isinstance(v, bool) or not isinstance(v, (str, numbers.Number)):
            raise ConfigError(source, f"{path}[{i}]", f"must be a string. Got {v!r} instead.")
        out.append(str(v))
    return out


def metric_style(name: str, options: dict | None = None, *, pub: pd.DataFrame | None = None,
                 source=None, key_path: str | None = None) -> MetricStyle:
    """Display style of metric ``name``: defaults from the metric and the published unit.

    Problems are ConfigErrors at ``key_path`` (default ``metrics.<name>``) of ``source``.
    """
    from mlx.metrics import metric_names, parse_metric

    options = options or {}
    key = key_path or f"metrics.{name}"
    if name in PSEUDO_METRICS:
        canonical, title, hib, family = name, PSEUDO_METRICS[name], name == "speedup", name
    else:
        try:
            spec = parse_metric(name)
        except UnknownNameError:
            raise UnknownNameError("metric", name, list(metric_names()) + list(PSEUDO_METRICS),
                                   source=source, key_path=key) from None
        except ConfigError as exc:
            raise ConfigError(source, key, exc.message) from None
        canonical, hib, family = spec.name, spec.higher_is_better, spec.family.form
        title = {"p@<k>": f"top-{spec.k} accuracy", "ndcg@<k>": f"nDCG@{spec.k}",
                 "hamming": "Hamming loss", "auc": "average AUC", "error": "test error",
                 "rmse": "RMSE", "mse": "MSE", "mae": "MAE"}.get(family, canonical)
    unit = options.get("unit")
    if unit is None and pub is not None:
        units = pub.loc[pub["metric"] == canonical, "unit"]
        unit = units.iloc[0] if len(units) else None
    if unit is None:
        unit = {"p@<k>": "%", "ndcg@<k>": "%", "error": "%", "fit_seconds": "s",
                "speedup": "ratio"}.get(family, "fraction")
    if unit not in UNITS:
        raise ConfigError(source, f"{key}.unit",
                          f"must be one of {', '.join(repr(u) for u in UNITS)}. "
                          f"Got {unit!r} instead.")
    default_tol = {"p@<k>": 1.0, "ndcg@<k>": 1.0, "auc": 0.01, "error": 1.0,
                   "hamming": 0.1 if unit == "%" else 0.001, "rmse": 0.5 if unit != "fraction"
                   else 0.005}.get(family)
    tol = options.get("tolerance", default_tol)
    if tol is not None and (isinstance(tol, bool) or not isinstance(tol, numbers.Real) or tol < 0):
        raise ConfigError(source, f"{key}.tolerance",
                          f"must be a number >= 0 or null. Got {tol!r} instead.")
    fmt = options.get("format", DEFAULT_FORMATS[unit])
    try:
        format(1.5, fmt)
    except (ValueError, TypeError):
        raise ConfigError(source, f"{key}.format",
                          f"must be a Python format spec such as '.2f'. "
                          f"Got {fmt!r} instead.") from None
    hib = options.get("higher_is_better", hib)
    if not isinstance(hib, bool):
        raise ConfigError(source, f"{key}.higher_is_better",
                          f"must be true or false. Got {hib!r} instead.")
    title = options.get("title", title)
    return MetricStyle(canonical, str(title), unit, fmt, None if tol is None else float(tol), hib)


def _parse_series(node, i: int, source, pairs: set) -> Series:
    path = f"series[{i}]"
    if isinstance(node, str):
        node = {"name": node}
    _check_keys(node, SERIES_KEYS, path, source)
    name = node.get("name")
    if not isinstance(name, str) or not name:
        raise ConfigError(source, f"{path}.name",
                          f"must be a non-empty string. Got {name!r} instead.")
    paper = node.get("paper")
    if paper is None:
        paper = _split_label(name, pairs)
        if paper is None:
            methods = sorted({m for m, _ in pairs})
            raise ConfigError(source, path, f"cannot tell the paper's method from {name!r}; add "
                              f"'paper: {{method: ..., loss: ...}}' (methods in the paper: "
                              f"{', '.join(methods)})")
    _check_keys(paper, ("method", "loss"), f"{path}.paper", source)
    if "method" not in paper:
        raise ConfigError(source, f"{path}.paper", "missing required key 'method'")
    methods = {m for m, _ in pairs}
    if paper["method"] not in methods:
        raise UnknownNameError("published method", str(paper["method"]), methods, source=source,
                               key_path=f"{path}.paper.method")
    ours = node.get("ours", {"label": name})
    _check_keys(ours, ("label", "method", "params"), f"{path}.ours", source)
    if ("label" in ours) == ("method" in ours):
        raise ConfigError(source, f"{path}.ours", "give exactly one of 'label' or 'method'")
    if "params" in ours and not isinstance(ours["params"], dict):
        raise ConfigError(source, f"{path}.ours.params", "must be a mapping")
    return Series(name, {k: str(v) for k, v in paper.items()}, dict(ours))


def _split_label(label: str, pairs: set) -> dict | None:
    """'LEML-SQ' -> {method: LEML, loss: SQ}; 'WSABIE' -> {method: WSABIE} (its one loss)."""
    by_upper = {}
    for method, loss in pairs:
        by_upper.setdefault(method.upper(), (method, set()))[1].add(loss.upper())
    if label.upper() in by_upper:
        method, losses = by_upper[label.upper()]
        # A bare method name is enough only when the paper reports it with one loss.
        return {"method": method} if len(losses) == 1 else None
    head, sep, tail = label.rpartition("-")
    if sep and head.upper() in by_upper:
        method, losses = by_upper[head.upper()]
        if tail.upper() in losses:
            loss = next(l for m, l in pairs if m == method and l.upper() == tail.upper())
            return {"method": method, "loss": loss}
    return None


def _axis_values(axis: str, node, path, source) -> tuple:
    values = node if isinstance(node, list) else [node]
    if not values:
        raise ConfigError(source, path, "must be a non-empty list")
    out = []
    for i, v in enumerate(values):
        if axis in ("k_over_L", "observed"):
            if isinstance(v, bool) or not isinstance(v, numbers.Real) or not 0 < v <= 1:
                raise ConfigError(source, f"{path}[{i}]", f"must be a fraction in (0, 1] "
                                  f"(0.2 for 20%). Got {v!r} instead.")
            out.append(float(v))
        elif axis == "k":
            if isinstance(v, bool) or not isinstance(v, numbers.Integral) or v < 1:
                raise ConfigError(source, f"{path}[{i}]",
                                  f"must be an int >= 1. Got {v!r} instead.")
            out.append(float(v))
        else:
            out.append(str(v))
    return tuple(out)


def load_spec(path: str | os.PathLike, *, require_configs: bool = True) -> TableSpec:
    """Read and validate a table spec; every problem is a one-line ConfigError."""
    from mlx.config import read_yaml

    source = str(path)
    raw = read_yaml(path, empty_hint="a table spec needs at least 'paper', 'series' and "
                                     "'metrics'")
    return parse_spec(raw, source=source, require_configs=require_configs,
                      default_name=Path(path).stem)


def parse_spec(raw: dict, *, source: str | None = None, require_configs: bool = True,
               default_name: str = "table") -> TableSpec:
    _check_keys(raw, SPEC_KEYS, "", source)
    for required in ("paper", "series", "metrics"):
        if required not in raw:
            raise ConfigError(source, None, f"missing required key {required!r}")
    pub_all = published()
    paper = str(raw["paper"])
    if paper not in papers():
        raise UnknownNameError("paper", paper, papers(), source=source, key_path="paper")
    pub = pub_all[pub_all["paper"] == paper]
    available_tables = sorted(pub["table"].unique(), key=lambda t: (len(t), t))
    tables = _str_list(raw.get("tables", available_tables), "tables", source)
    for i, t in enumerate(tables):
        if t not in available_tables:
            raise ConfigError(source, f"tables[{i}]", f"paper {paper!r} has no published table "
                              f"{t!r}. Tables: {', '.join(available_tables)}")
    pub = pub[pub["table"].isin(tables)]

    configs = tuple(_str_list(raw["configs"], "configs", source)) if raw.get("configs") else ()
    results = tuple(_str_list(raw["results"], "results", source)) if raw.get("results") else ()
    if require_configs:
        for i, c in enumerate(configs):
            if not Path(c).is_file():
                raise ConfigError(source, f"configs[{i}]", f"config file {c!r} not found")

    pairs = set(zip(pub_all.loc[pub_all["paper"] == paper, "method"],
                    pub_all.loc[pub_all["paper"] == paper, "loss"]))
    series_node = raw["series"]
    if not isinstance(series_node, list) or not series_node:
        raise ConfigError(source, "series", "must be a non-empty list, e.g. [LEML-SQ, BR-LR]")
    series = tuple(_parse_series(n, i, source, pairs) for i, n in enumerate(series_node))
    names = [s.name for s in series]
    if len(set(names)) != len(names):
        raise ConfigError(source, "series", "names a series twice")

    metrics_node = raw["metrics"]
    if isinstance(metrics_node, list):
        metrics_node = {str(m): {} for m in metrics_node}
    if not isinstance(metrics_node, dict) or not metrics_node:
        raise ConfigError(source, "metrics", "must be a non-empty mapping of metric -> options "
                                             "(or a list of metric names)")
    metrics = []
    for name, opts in metrics_node.items():
        opts = opts or {}
        _check_keys(opts, METRIC_KEYS, f"metrics.{name}", source)
        metrics.append(metric_style(str(name), opts, pub=pub, source=source))

    axes_node = raw.get("axes", {}) or {}
    _check_keys(axes_node, ("dataset", "k_over_L", "observed", "k", "variant"), "axes", source)
    axes = {a: _axis_values(a, v, f"axes.{a}", source) for a, v in axes_node.items()}

    layout = raw.get("layout", {}) or {}
    _check_keys(layout, LAYOUT_KEYS, "layout", source)
    parts = {}
    for key, default in (("blocks", ["metric"]), ("rows", ["dataset", "k_over_L"]),
                         ("columns", ["series"])):
        vals = layout.get(key, default)
        vals = [vals] if isinstance(vals, str) else list(vals or [])
        for j, a in enumerate(vals):
            if a not in AXES:
                raise UnknownNameError("axis", str(a), AXES, source=source,
                                       key_path=f"layout.{key}[{j}]")
        parts[key] = tuple(vals)
    used = list(itertools.chain(*parts.values()))
    if len(set(used)) != len(used):
        raise ConfigError(source, "layout", "uses an axis twice")
    for a in ("metric", "series"):
        if a not in used and len(metrics if a == "metric" else series) > 1:
            raise ConfigError(source, "layout", f"axis {a!r} has several values but is not in "
                                                f"blocks, rows or columns")
    for a, vals in axes.items():
        if a not in used and len(vals) > 1:
            raise ConfigError(source, f"axes.{a}", f"lists {len(vals)} values but {a!r} is not in "
                                                   f"layout.blocks, layout.rows or layout.columns")
    if not parts["rows"] and not parts["columns"]:
        raise ConfigError(source, "layout", "needs at least one axis in rows or columns")

    aliases = raw.get("dataset_aliases", {}) or {}
    if not isinstance(aliases, dict):
        raise ConfigError(source, "dataset_aliases", "must be a mapping of our dataset name -> "
                                                     "the paper's dataset name")
    variants = raw.get("variants", {}) or {}
    if not isinstance(variants, dict):
        raise ConfigError(source, "variants", "must be a mapping of variant -> {params: {...}}")
    for v, sel in variants.items():
        _check_keys(sel, ("params", "label"), f"variants.{v}", source)

    metric_names_ = {m.name for m in metrics}
    figures = []
    for i, fig in enumerate(raw.get("figures", []) or []):
        path = f"figures[{i}]"
        _check_keys(fig, FIGURE_KEYS, path, source)
        if fig.get("x") not in ("rank_ratio", "observed_ratio"):
            raise ConfigError(source, f"{path}.x", f"must be 'rank_ratio' or 'observed_ratio'. "
                                                   f"Got {fig.get('x')!r} instead.")
        m = metric_style(str(fig.get("metric")), source=source, key_path=f"{path}.metric").name
        if m not in metric_names_:
            raise ConfigError(source, f"{path}.metric", f"metric {m!r} is not in 'metrics'")
        figures.append({"x": fig["x"], "metric": m, "datasets": fig.get("datasets"),
                        "at": fig.get("at") or {}})
    needs = raw.get("needs", {}) or {}
    _check_keys(needs, NEEDS_KEYS, "needs", source)

    name = str(raw.get("name", default_name))
    return TableSpec(
        name=name, title=str(raw.get("title", name)), source=source, paper=paper,
        tables=tuple(tables), configs=configs, results=results, series=series, axes=axes,
        dataset_aliases={str(k): str(v) for k, v in aliases.items()}, variants=variants,
        blocks=parts["blocks"], rows=parts["rows"], columns=parts["columns"],
        metrics=tuple(metrics), figures=tuple(figures), needs=dict(needs),
        description=str(raw.get("description", "")))


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
        frames.append(f)
    if not frames:
        return pd.DataFrame(columns=["_source", "cell_id", "dataset", "method", "label", "params",
                                     "rank_ratio", "rank", "observed_ratio", "repetition",
                                     "split", "metric", "value", "status", "message",
                                     "fit_seconds", "_params"])
    frame = pd.concat(frames, ignore_index=True)
    for col in ("rank_ratio", "rank", "observed_ratio", "value", "fit_seconds"):
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
class Cell:
    """One cell of a rendered table, in display units."""

    key: dict
    metric: MetricStyle
    ours: float | None
    ours_std: float | None
    n_rep: int
    published: float | None
    published_std: float | None
    table: str
    state: str                 # ok, worse, compared, n/p, not run, empty, or a run status

    @property
    def diff(self) -> float | None:
        if self.ours is None or self.published is None:
            return None
        return self.ours - self.published

    def text(self, *, latex: bool = False) -> str:
        m = self.metric
        if self.ours is not None:
            ours = m.fmt_value(self.ours)
        elif self.state in ("not run", "empty"):
            ours = "--" if latex else NOT_RUN
        else:
            ours = self.state
        pub = NP if self.published is None else m.fmt_value(self.published)
        if self.diff is None:
            return f"{ours} / {pub}"
        diff = m.fmt_diff(self.diff)
        if latex:
            mark = r" $\blacktriangledown$" if self.state == "worse" else ""
            return f"{ours} / {pub} {{\\scriptsize ({diff})}}{mark}"
        return f"{ours} / {pub} ({diff})" + (f" {WORSE}" if self.state == "worse" else "")


@dataclass
class Block:
    title: str
    rows: list                 # [(row key values, [Cell per column])]
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
        c = {"within": 0, "worse": 0, "compared": 0, "np": 0, "not_run": 0, "status": 0}
        for cell in self.cells:
            if cell.state == "ok":
                c["within"] += 1
            elif cell.state == "worse":
                c["worse"] += 1
            elif cell.state == "compared":
                c["compared"] += 1
            elif cell.state == NP:
                c["np"] += 1
            elif cell.state == "not run":
                c["not_run"] += 1
            elif cell.state != "empty":
                c["status"] += 1
        return c


def _close(a, b) -> bool:
    return abs(float(a) - float(b)) < _EPS


def _fmt_axis(axis: str, value) -> str:
    if axis in ("k_over_L", "observed"):
        return f"{value * 100:g}%"
    if axis == "k":
        return f"{int(value)}"
    return str(value)


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


def _select_variant(frame: pd.DataFrame, spec: TableSpec, variant: str) -> pd.DataFrame:
    sel = spec.variants.get(variant)
    if sel is None:  # default: a parameter whose value is the variant's name
        mask = frame["_params"].map(lambda p: variant in [str(v) for v in p.values()])
        return frame.loc[mask.astype(bool)]
    mask = pd.Series(True, index=frame.index)
    if "label" in sel:
        mask &= frame["label"] == str(sel["label"])
    for k, v in (sel.get("params") or {}).items():
        mask &= frame["_params"].map(lambda p, k=k, v=v: p.get(k) == v).astype(bool)
    return frame.loc[mask]


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
    col = {"k_over_L": "rank_ratio", "observed": "observed_ratio", "k": "rank"}[axis]
    values = list(pub[axis].dropna()) + list(ours[col].dropna())
    out = []
    for v in sorted(values):
        if not out or not _close(out[-1], v):
            out.append(float(v))
    return tuple(out)


def _published_value(pub: pd.DataFrame, spec: TableSpec, series: Series, key: dict):
    mask = (pub["metric"] == key["metric"]) & (pub["dataset"] == key["dataset"]) \
        & (pub["method"] == series.paper["method"])
    if "loss" in series.paper:
        mask &= pub["loss"] == series.paper["loss"]
    if "variant" in key:
        mask &= pub["variant"] == key["variant"]
    for axis in NUMERIC_AXES:
        if axis in key:
            mask &= (pub[axis] - key[axis]).abs() < _EPS
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
        f = _select_variant(f, spec, key["variant"])
    if "k_over_L" in key:  # a method without a rank (BR) matches every k/L, as in the paper
        f = f[f["rank_ratio"].isna() | ((f["rank_ratio"] - key["k_over_L"]).abs() < _EPS)]
    if "observed" in key:
        f = f[(f["observed_ratio"] - key["observed"]).abs() < _EPS]
    if "k" in key:
        f = f[(f["rank"] - key["k"]).abs() < _EPS]
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
        if vals["params"].nunique() > 1:
            where = ", ".join(f"{AXIS_TITLES[a]}={_fmt_axis(a, v)}" for a, v in key.items()
                              if a != "metric")
            p = sorted(vals["params"].unique())
            raise MlxError(f"{spec.source}: series {series.name!r} matches results with different "
                           f"parameters ({p[0]}; {p[1]}) at {where}; add 'ours: {{params: ...}}' "
                           f"to the series to choose one")
        per_rep = vals.groupby(["_source", "repetition"])["value"].mean()
        std = float(per_rep.std(ddof=1)) if len(per_rep) > 1 else None
        return float(per_rep.mean()), std, len(per_rep), "ok"
    if len(rows):
        statuses = sorted(set(rows["status"]) - {"ok"})
        if statuses:
            return None, None, 0, "/".join(statuses)
    return None, None, 0, "not run"


def build_table(spec: TableSpec, sources: list[Source], *, ours: pd.DataFrame | None = None
                ) -> RenderedTable:
    """Match our results and the published values cell by cell."""
    pub = published()
    pub = pub[(pub["paper"] == spec.paper) & pub["table"].isin(spec.tables)]
    if ours is None:
        ours = ours_frame(sources, spec.dataset_aliases)
    series_by_name = {s.name: s for s in spec.series}
    metric_names_ = [m.name for m in spec.metrics]
    pub_scope = pub[pub["metric"].isin(metric_names_)
                    & pub["method"].isin({s.paper["method"] for s in spec.series})]
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

    def cell_for(key: dict) -> Cell:
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
            if style.tolerance is None:
                state = "compared"
            else:
                d = oval - pval
                worse = d < -style.tolerance - _EPS if style.higher_is_better \
                    else d > style.tolerance + _EPS
                state = "worse" if worse else "ok"
        elif oval is not None:
            state = NP
        elif state == "not run" and pval is None:
            state = "empty"
        return Cell(key, style, oval, ostd, n_rep, pval, pstd, table, state)

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


_PAPER_NAMES = {"leml": "LEML", "mom": "MoM", "lsvv": "LSVV", "similarity": "Similarity"}


def _block_title(spec: TableSpec, bdict: dict) -> str:
    parts = []
    for axis, value in bdict.items():
        if axis == "metric":
            parts.append(spec.metric(value).heading())
        elif axis in ("k_over_L", "observed", "k"):
            parts.append(f"{AXIS_TITLES[axis]} = {_fmt_axis(axis, value)}")
        else:
            parts.append(str(value))
    return ", ".join(parts)


# ----------------------------------------------------------------------------- rendering
def _column_titles(table: RenderedTable) -> list[str]:
    return [" ".join(_fmt_axis(a, v) for a, v in zip(table.column_axes, ckey)) or "value"
            for ckey in table.columns]


def _row_titles(table: RenderedTable, rows) -> list[list[str]]:
    """Row key texts, with a key left blank when it repeats the row above (as in the papers)."""
    out, prev = [], None
    for rkey, _ in rows:
        texts = [_fmt_axis(a, v) for a, v in zip(table.row_axes, rkey)]
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
    return (f"Each cell: ours / published (ours − published), in the unit of the block "
            f"heading. {WORSE} worse than the paper by more than the tolerance; {NP} no "
            f"published value; {NOT_RUN} not run yet. Tolerances: {'; '.join(tols)} "
            f"({direction}).")


def summary_line(table: RenderedTable) -> str:
    c = table.counts()
    judged = c["within"] + c["worse"]
    parts = [f"**Within tolerance: {c['within']} of {judged} compared cells**"
             + (f" ({c['worse']} {WORSE})" if c["worse"] else "")]
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
        state = f"{n} cells, run {run}"
    given = f"`{src.given}` → `{src.results}/`" if src.kind == "config" else f"`{src.given}`"
    return f"- {given}: {state}"


def render_markdown(table: RenderedTable, *, heading_level: int = 1) -> str:
    spec = table.spec
    h = "#" * heading_level
    paper = _PAPER_NAMES.get(spec.paper, spec.paper)
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


def render_csv(table: RenderedTable) -> str:
    rows = []
    for cell in table.cells:
        row = {a: (_fmt_axis(a, cell.key[a]) if a in NUMERIC_AXES else cell.key[a])
               if a in cell.key else "" for a in AXES}
        for a in NUMERIC_AXES:
            if a in cell.key:
                row[a] = f"{cell.key[a]:g}"
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
             r"% $\blacktriangledown$ worse than the paper beyond the tolerance; n/p no published "
             r"value; -- not run.",
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


def _tex_cell(cell: Cell) -> str:
    text = cell.text(latex=True)
    head, sep, tail = text.partition(" {")
    return _tex(head) + (sep + tail if sep else "")


def write_table(table: RenderedTable, out_dir: str | os.PathLike, *, command: str) -> dict:
    """Write ``<name>.md``, ``.csv``, ``.tex`` and ``.json`` (sources, machines) to ``out_dir``."""
    from datetime import datetime, timezone

    from mlx.runner.results import atomic_write

    out = Path(out_dir)
    name = table.spec.name
    md = render_markdown(table)
    paths = {"md": out / f"{name}.md", "csv": out / f"{name}.csv", "tex": out / f"{name}.tex",
             "json": out / f"{name}.json"}
    atomic_write(paths["md"], md)
    atomic_write(paths["csv"], render_csv(table))
    atomic_write(paths["tex"], render_latex(table))
    meta = {
        "name": name, "title": table.spec.title, "spec": table.spec.source,
        "paper": table.spec.paper, "tables": list(table.spec.tables), "command": command,
        "rendered": datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "counts": table.counts(), "summary": summary_line(table),
        "sources": [{"given": s.given, "kind": s.kind, "results": str(s.results),
                     "ran": s.frame is not None, "manifest": _manifest_summary(s.manifest)}
                    for s in table.sources],
    }
    atomic_write(paths["json"], json.dumps(meta, indent=2, sort_keys=True) + "\n")
    return {"markdown": md, "paths": paths, "meta": meta}


def _manifest_summary(manifest: dict | None) -> dict | None:
    if not manifest:
        return None
    keys = ("run_id", "cpu", "cpu_count", "jobs", "blas_threads_per_worker", "platform",
            "versions", "git_commit", "git_dirty", "started", "finished", "config_source",
            "n_cells", "argv")
    return {k: manifest.get(k) for k in keys if k in manifest}


# ----------------------------------------------------------------------------- readiness
def check_spec(spec: TableSpec) -> list[str]:
    """What is missing before this table can be produced here (empty when ready).

    Raises ConfigError for a config that is wrong (rather than merely waiting for a
    method that is not implemented yet).
    """
    from mlx.config import load_config
    from mlx.data.catalog import find_files, list_datasets, resolve_dataset
    from mlx.methods import METHODS

    missing = []
    for c in spec.configs:
        if not Path(c).is_file():
            missing.append(f"{c}: config not written yet")
            continue
        try:
            cfg = load_config(c)
        except UnknownNameError as exc:
            if exc.kind != "method":
                raise
            missing.append(f"{c}: method {exc.name!r} is not implemented yet "
                           f"(mlx/methods/{exc.name}.py)")
            continue
        absent = find_files(cfg.dataset)
        if absent:
            missing.append(f"{c}: data for {cfg.dataset.name!r} not found: {', '.join(absent)} "
                           f"(run 'mlx datasets fetch {cfg.dataset.name}' or put the files on "
                           f"MLX_DATA_PATH)")
    for m in _as_list(spec.needs.get("methods")):
        if m not in METHODS.names():
            missing.append(f"method {m!r} is not implemented yet (mlx/methods/{m}.py)")
    registered = set(list_datasets())
    for d in _as_list(spec.needs.get("datasets")):
        if d not in registered:
            missing.append(f"dataset {d!r} is not in the dataset registry (mlx/data/registry.yaml)"
                           f"; its files are not available here")
            continue
        absent = find_files(resolve_dataset(d, source=None))
        if absent:
            missing.append(f"dataset {d!r}: files not found: {', '.join(absent)} (run 'mlx "
                           f"datasets fetch {d}' or put the files on MLX_DATA_PATH)")
    missing = list(dict.fromkeys(missing))
    if missing and spec.needs.get("note"):
        missing.append(f"note: {' '.join(str(spec.needs['note']).split())}")
    return missing


def _as_list(v) -> list[str]:
    if v is None:
        return []
    return [str(x) for x in (v if isinstance(v, list) else [v])]


# ----------------------------------------------------------------------------- compare
def auto_series(frame: pd.DataFrame, paper: str) -> tuple[list[Series], list[str]]:
    """Match each result label to a published (method, loss) of ``paper``.

    First by the label (``LEML-SQ`` -> LEML with SQ; ``WSABIE`` -> WSABIE), then by the
    registry method and its ``loss`` parameter (``leml`` + ``squared`` -> LEML with SQ).
    Returns the series and the labels left unmatched.
    """
    pub = published()
    pub = pub[pub["paper"] == paper]
    pairs = set(zip(pub["method"], pub["loss"]))
    series, unmatched = [], []
    for label in dict.fromkeys(frame["label"]):
        if not label:
            continue
        target = _split_label(label, pairs)
        if target is None:
            first = frame[frame["label"] == label].iloc[0]
            params = params_dict(first["params"])
            loss = LOSS_CODES.get(str(params.get("loss", "")), "")
            by_upper = {m.upper(): m for m, _ in pairs}
            method = by_upper.get(str(first["method"]).upper())
            if method is not None:
                losses = {l for m, l in pairs if m == method}
                if loss and loss in losses:
                    target = {"method": method, "loss": loss}
                elif not loss and len(losses) == 1:
                    target = {"method": method}
        if target is None:
            unmatched.append(label)
        else:
            series.append(Series(label, target, {"label": label}))
    return series, unmatched


def compare_spec(frame: pd.DataFrame, paper: str, *, tables=None, metrics=None,
                 source: str = "results") -> tuple[TableSpec, list[str]]:
    """A table spec comparing ``frame`` with ``paper``, matched automatically."""
    from mlx.metrics import parse_metric

    if paper not in papers():
        raise UnknownNameError("paper", paper, papers())
    pub_all = published()
    pub = pub_all[pub_all["paper"] == paper]
    all_tables = sorted(pub["table"].unique(), key=lambda t: (len(t), t))
    if tables:
        for t in tables:
            if t not in all_tables:
                raise MlxError(f"paper {paper!r} has no published table {t!r}. Tables: "
                               f"{', '.join(all_tables)}")
        pub = pub[pub["table"].isin(tables)]
    notes = []
    series, unmatched = auto_series(frame, paper)
    if unmatched:
        notes.append(f"no published counterpart in {paper} for: {', '.join(unmatched)}")
    if not series:
        raise MlxError(f"{source}: no result label matches a method of {paper!r} (labels: "
                       f"{', '.join(dict.fromkeys(l for l in frame['label'] if l))}; methods "
                       f"in the paper: {', '.join(sorted(pub['method'].unique()))})")
    ours_metrics = [m for m in dict.fromkeys(frame["metric"]) if m]
    if metrics:
        wanted = []
        for m in metrics:
            try:
                wanted.append(parse_metric(m).name if m not in PSEUDO_METRICS else m)
            except MlxError:
                raise UnknownNameError("metric", m, ours_metrics) from None
        ours_metrics = [m for m in wanted]
    pub_metrics = set(pub["metric"])
    dropped = [m for m in ours_metrics if m not in pub_metrics]
    if dropped:
        notes.append(f"not published in {paper}: {', '.join(dropped)}")
    use = [m for m in ours_metrics if m in pub_metrics]
    if not use:
        raise MlxError(f"{source}: none of the metrics ({', '.join(ours_metrics)}) is published "
                       f"in {paper!r} ({', '.join(sorted(pub_metrics))})")
    # Prefer the fuller (appendix) tables where two tables print the same setting.
    order = pub.groupby("table").size().sort_values(ascending=False, kind="stable").index.tolist()
    datasets = tuple(d for d in dict.fromkeys(frame["dataset"]) if d)
    unknown = [d for d in datasets if d not in set(pub["dataset"])]
    if unknown:
        notes.append(f"{paper} reports no results on: {', '.join(unknown)} (its datasets: "
                     f"{', '.join(dict.fromkeys(pub['dataset']))})")
    rows, axes = ["dataset"], {"dataset": datasets}
    f = frame.assign(rank_ratio=pd.to_numeric(frame["rank_ratio"], errors="coerce"),
                     observed_ratio=pd.to_numeric(frame["observed_ratio"], errors="coerce"),
                     rank=pd.to_numeric(frame["rank"], errors="coerce"))
    scope = pub[pub["dataset"].isin(datasets)]
    rank_axis = "k_over_L"
    if len(scope) and scope["k_over_L"].isna().all() and scope["k"].notna().any():
        rank_axis = "k"
    for axis, col in ((rank_axis, "rank_ratio" if rank_axis == "k_over_L" else "rank"),
                      ("observed", "observed_ratio")):
        vals = sorted(set(f[col].dropna().round(9)))
        if len(vals) > 1:
            rows.append(axis)
        if vals:  # only the settings we ran
            axes[axis] = tuple(float(v) for v in vals)
    columns = ["series"]
    variants = [v for v in dict.fromkeys(scope["variant"]) if v]
    if variants:
        columns = ["variant", "series"]
    spec = TableSpec(
        name=f"compare-{paper}", title=f"Comparison with {_PAPER_NAMES.get(paper, paper)} "
        f"({source})", source=source, paper=paper, tables=tuple(order), configs=(),
        results=(), series=tuple(series), axes=axes, dataset_aliases={}, variants={},
        blocks=("metric",), rows=tuple(rows), columns=tuple(columns),
        metrics=tuple(metric_style(m, pub=pub) for m in use))
    return spec, notes


# ----------------------------------------------------------------------------- docs/RESULTS.md
_PAPER_ORDER = {"leml": 0, "mom": 1, "lsvv": 2, "similarity": 3}


def _machine(m: dict | None) -> list[str]:
    if not m:
        return ["", "", "", "", "", ""]
    v = m.get("versions") or {}
    versions = ", ".join(f"{k} {v[k]}" for k in ("mlx", "python", "numpy", "scipy",
                                                  "liblinear-official") if k in v)
    cpu = f"{m.get('cpu', '')} ({m.get('cpu_count', '?')} CPUs)"
    commit = (m.get("git_commit") or "")[:10]
    if commit and m.get("git_dirty"):
        commit += " (dirty)"
    return [m.get("run_id", ""), m.get("finished", ""), cpu,
            f"{m.get('jobs', '')} (BLAS {m.get('blas_threads_per_worker', '')})", versions,
            commit]


def results_doc_text(tables_dir: str | os.PathLike) -> tuple[str, int]:
    """The text of docs/RESULTS.md, from the tables ``mlx table SPEC`` wrote to ``tables_dir``."""
    tdir = Path(tables_dir)
    metas = []
    for meta_path in sorted(tdir.glob("*.json")) if tdir.is_dir() else []:
        try:
            meta = json.loads(meta_path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        md_path = meta_path.with_suffix(".md")
        if not str(meta.get("spec", "")).endswith((".yaml", ".yml")) or not md_path.exists():
            continue
        meta["_md"] = md_path.read_text(encoding="utf-8")
        meta["_figures"] = sorted(p.name for p in tdir.glob(f"{meta['name']}-*.png"))
        metas.append(meta)
    metas.sort(key=lambda m: (_PAPER_ORDER.get(m.get("paper"), 9),
                              [int(t) if t.isdigit() else t
                               for t in re.split(r"(\d+)", m.get("name", ""))]))
    lines = ["# Results: our numbers beside the published ones", "",
             "<!-- Generated by `mlx results-doc` from the tables that `mlx table "
             "configs/tables/NAME.yaml` rendered into " + f"{tdir.as_posix()}/" + "; do not edit "
             "by hand. Regenerate with `make tables results-doc`. -->", "",
             "Each section is one table of a paper, rendered from our results.csv files by the "
             "command shown, with the machine and software of every run that fed it (from the "
             "run's manifest.json). In each cell: ours / published (ours − published), in the "
             f"unit of the block heading; {WORSE} marks a cell where we are worse than the paper "
             f"by more than the tolerance, {NP} a setting the paper does not report, and "
             f"{NOT_RUN} a setting we have not run yet.", ""]
    if not metas:
        lines += ["No paper table has been rendered yet: run `make tables` (or `mlx table "
                  "configs/tables/NAME.yaml`), then `mlx results-doc`.", ""]
        return "\n".join(lines), 0
    lines += ["| table | within tolerance | command |", "|---|---|---|"]
    for m in metas:
        c = m.get("counts", {})
        judged = c.get("within", 0) + c.get("worse", 0)
        lines.append(f"| [{m['title']}](#{_anchor(m['title'])}) | {c.get('within', 0)} of "
                     f"{judged} | `{m.get('command', '')}` |")
    lines.append("")
    for m in metas:
        lines += [f"## {m['title']}", "",
                  f"Rendered {m.get('rendered', '')} by `{m.get('command', '')}` from the spec "
                  f"`{m.get('spec', '')}`.", ""]
        srcs = m.get("sources", [])
        if srcs:
            lines += ["| input | results | run | finished | machine | jobs | versions | commit |",
                      "|---|---|---|---|---|---|---|---|"]
            for s in srcs:
                cells = _machine(s.get("manifest")) if s.get("ran") else \
                    ["not run yet", "", "", "", "", ""]
                lines.append(f"| `{s['given']}` | `{s['results']}` | " + " | ".join(cells) + " |")
            lines.append("")
        body = m["_md"].split("\nResults:\n", 1)[0].rstrip().splitlines()
        if body and body[0].startswith("# "):
            body = body[1:]
        body = [("#" + ln) if ln.startswith("#") else ln for ln in body]
        lines += [ln for ln in body] + [""]
        if m["_figures"]:
            lines += ["Figures (PNG and PDF beside the table): "
                      + ", ".join(f"`{tdir.as_posix()}/{f}`" for f in m["_figures"]), ""]
    return "\n".join(lines).replace("\n\n\n", "\n\n"), len(metas)


def _anchor(title: str) -> str:
    text = re.sub(r"[^\w\- ]", "", title.lower()).strip()
    return text.replace(" ", "-")


def write_results_doc(tables_dir: str | os.PathLike, output: str | os.PathLike
                      ) -> tuple[Path, int]:
    from mlx.runner.results import atomic_write

    text, n = results_doc_text(tables_dir)
    atomic_write(output, text)
    return Path(output), n
