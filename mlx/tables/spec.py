"""Table specs: which results feed a paper table, and how it is laid out.

A *table spec* (``configs/tables/<name>.yaml``) says which results feed a table
(configs, whose output directories are read, or results directories), which
published table(s) of which paper it reproduces, how our result rows map to the
paper's rows (a *series*: our ``label``, or our ``method`` plus parameters, to the
paper's method and loss), how cells are laid out (blocks, rows, columns over the
axes ``metric``, ``dataset``, ``series``, ``k_over_L``, ``k``, ``observed``,
``labelled`` (the numeric sweep axes of :mod:`mlx.axes`) and ``variant``), and per metric the
display unit, number format, tolerance and
direction. Specs never recompute metrics: they read ``results.csv``.

Tolerances are in the display unit of their metric (``%`` and ``x100`` multiply the
results.csv fraction by 100: 1.0 = one percentage point for top-k accuracy shown in %).
:func:`check_spec` says what is still missing before a spec's table can be produced here.
"""

from __future__ import annotations

import itertools
import numbers
import os
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from mlx.axes import SPEC_AXES, SWEEP_AXES, by_spec, fmt_value
from mlx.errors import ConfigError, UnknownNameError
from mlx.tables.published import papers, published
from mlx.validation import as_str_list, check_keys, read_yaml

__all__ = ["AXES", "AXIS_TITLES", "NUMERIC_AXES", "PSEUDO_METRICS", "UNITS", "Series",
           "MetricStyle", "TableSpec", "metric_style", "load_spec", "parse_spec", "check_spec",
           "split_label", "fmt_axis", "FIGURE_X", "figure_x_problem", "parse_layout"]

# The numeric axes are the sweep axes of mlx.axes that have a spec name.
NUMERIC_AXES = tuple(a.spec for a in SPEC_AXES)
AXES = ("metric", "dataset", "series", *NUMERIC_AXES, "variant")
AXIS_TITLES = {"metric": "metric", "dataset": "dataset", "series": "method",
               **{a.spec: a.title for a in SPEC_AXES}, "variant": "variant"}
SPEC_KEYS = ("name", "title", "description", "paper", "tables", "configs", "results", "series",
             "axes", "dataset_aliases", "variants", "layout", "metrics", "figures", "needs")
METRIC_KEYS = ("tolerance", "unit", "format", "higher_is_better", "title")
SERIES_KEYS = ("name", "paper", "ours")
LAYOUT_KEYS = ("blocks", "rows", "columns")
FIGURE_KEYS = ("x", "metric", "datasets", "at", "by")
# Horizontal axes of a figure: these results.csv columns, or ``param:NAME`` (a parameter).
FIGURE_X = tuple(a.column for a in SWEEP_AXES)
NEEDS_KEYS = ("methods", "datasets", "note")
UNITS = {"%": 100.0, "fraction": 1.0, "x100": 100.0, "s": 1.0, "ratio": 1.0, "as printed": 1.0}
UNIT_LABELS = {"%": "%", "fraction": "", "x100": "×100", "s": "s", "ratio": "", "as printed": ""}
DEFAULT_FORMATS = {"%": ".2f", "fraction": ".4f", "x100": ".2f", "s": ".0f", "ratio": ".2f",
                   "as printed": ".2g"}
PSEUDO_METRICS = {"fit_seconds": "training time", "speedup": "speed-up"}


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
    check_keys(node, SERIES_KEYS, path, source)
    name = node.get("name")
    if not isinstance(name, str) or not name:
        raise ConfigError(source, f"{path}.name",
                          f"must be a non-empty string. Got {name!r} instead.")
    paper = node.get("paper")
    if paper == "none":                   # a baseline of ours the paper does not report
        ours = node.get("ours", {"label": name})
        check_keys(ours, ("label", "method", "params"), f"{path}.ours", source)
        return Series(name, {}, dict(ours))
    if paper is None:
        paper = split_label(name, pairs)
        if paper is None:
            methods = sorted({m for m, _ in pairs})
            raise ConfigError(source, path, f"cannot tell the paper's method from {name!r}; add "
                              f"'paper: {{method: ..., loss: ...}}' (methods in the paper: "
                              f"{', '.join(methods)}), or 'paper: none' for a baseline the "
                              f"paper does not report")
    check_keys(paper, ("method", "loss"), f"{path}.paper", source)
    if "method" not in paper:
        raise ConfigError(source, f"{path}.paper", "missing required key 'method'")
    methods = {m for m, _ in pairs}
    if paper["method"] not in methods:
        raise UnknownNameError("published method", str(paper["method"]), methods, source=source,
                               key_path=f"{path}.paper.method")
    ours = node.get("ours", {"label": name})
    check_keys(ours, ("label", "method", "params"), f"{path}.ours", source)
    if ("label" in ours) == ("method" in ours):
        raise ConfigError(source, f"{path}.ours", "give exactly one of 'label' or 'method'")
    if "params" in ours and not isinstance(ours["params"], dict):
        raise ConfigError(source, f"{path}.ours.params", "must be a mapping")
    return Series(name, {k: str(v) for k, v in paper.items()}, dict(ours))


def split_label(label: str, pairs: set) -> dict | None:
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
            loss = next(ls for m, ls in pairs if m == method and ls.upper() == tail.upper())
            return {"method": method, "loss": loss}
    return None


def _axis_values(axis: str, node, path, source) -> tuple:
    values = node if isinstance(node, list) else [node]
    if not values:
        raise ConfigError(source, path, "must be a non-empty list")
    out = []
    for i, v in enumerate(values):
        if axis in NUMERIC_AXES and by_spec(axis).percent:
            if isinstance(v, bool) or not isinstance(v, numbers.Real) or not 0 < v <= 1:
                raise ConfigError(source, f"{path}[{i}]", f"must be a fraction in (0, 1] "
                                  f"(0.2 for 20%). Got {v!r} instead.")
            out.append(float(v))
        elif axis in NUMERIC_AXES:
            if isinstance(v, bool) or not isinstance(v, numbers.Integral) or v < 1:
                raise ConfigError(source, f"{path}[{i}]",
                                  f"must be an int >= 1. Got {v!r} instead.")
            out.append(float(v))
        else:
            out.append(str(v))
    return tuple(out)


def load_spec(path: str | os.PathLike, *, require_configs: bool = True,
              overrides=()) -> TableSpec:
    """Read and validate a table spec; every problem is a one-line ConfigError.

    ``overrides``: command-line ``key.path=value`` texts set before validation.
    """

    source = str(path)
    raw = read_yaml(path, empty_hint="a table spec needs at least 'paper', 'series' and "
                                     "'metrics'")
    if overrides:
        from mlx.overrides import apply_overrides

        raw = apply_overrides(raw, overrides, source)
    return parse_spec(raw, source=source, require_configs=require_configs,
                      default_name=Path(path).stem)


def parse_metrics(node, source: str, *, keys=METRIC_KEYS, defaults=None, pub=None) -> list:
    """A spec's ``metrics``: a list of metric names or a mapping of metric -> options (from
    ``keys``); ``defaults(name)`` gives options a metric leaves out. One style per metric."""
    if isinstance(node, list):
        node = {str(m): {} for m in node}
    if not isinstance(node, dict) or not node:
        raise ConfigError(source, "metrics", "must be a non-empty mapping of metric -> options "
                                             "(or a list of metric names)")
    metrics = []
    for name, opts in node.items():
        opts = dict(opts or {})
        check_keys(opts, keys, f"metrics.{name}", source)
        for key, value in (defaults(str(name), opts) if defaults else {}).items():
            opts.setdefault(key, value)
        metrics.append(metric_style(str(name), opts, pub=pub, source=source))
    return metrics


# Complexity 25 (over 15): one check per key of a table spec.
def parse_spec(raw: dict, *, source: str | None = None, require_configs: bool = True,  # noqa: C901
               default_name: str = "table") -> TableSpec:
    check_keys(raw, SPEC_KEYS, "", source)
    for required in ("paper", "series", "metrics"):
        if required not in raw:
            raise ConfigError(source, None, f"missing required key {required!r}")
    pub_all = published()
    paper = str(raw["paper"])
    if paper not in papers():
        raise UnknownNameError("paper", paper, papers(), source=source, key_path="paper")
    pub = pub_all[pub_all["paper"] == paper]
    available_tables = sorted(pub["table"].unique(), key=lambda t: (len(t), t))
    tables = as_str_list(raw.get("tables", available_tables), "tables", source)
    for i, t in enumerate(tables):
        if t not in available_tables:
            raise ConfigError(source, f"tables[{i}]", f"paper {paper!r} has no published table "
                              f"{t!r}. Tables: {', '.join(available_tables)}")
    pub = pub[pub["table"].isin(tables)]

    configs = tuple(as_str_list(raw["configs"], "configs", source)) if raw.get("configs") else ()
    results = tuple(as_str_list(raw["results"], "results", source)) if raw.get("results") else ()
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

    metrics = parse_metrics(raw["metrics"], source, pub=pub)

    axes_node = raw.get("axes", {}) or {}
    check_keys(axes_node, ("dataset", *NUMERIC_AXES, "variant"), "axes", source)
    axes = {a: _axis_values(a, v, f"axes.{a}", source) for a, v in axes_node.items()}

    parts, used = parse_layout(raw.get("layout", {}) or {}, AXES, (["metric"],
                               ["dataset", "k_over_L"], ["series"]), source)
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
        check_keys(sel, ("params", "label"), f"variants.{v}", source)

    metric_names_ = {m.name for m in metrics}
    figures = []
    for i, fig in enumerate(raw.get("figures", []) or []):
        path = f"figures[{i}]"
        check_keys(fig, FIGURE_KEYS, path, source)
        problem = figure_x_problem(fig.get("x"))
        if problem:
            raise ConfigError(source, f"{path}.x", problem)
        if "metric" not in fig:
            raise ConfigError(source, path, f"missing required key 'metric' (one of 'metrics': "
                                            f"{', '.join(sorted(metric_names_))})")
        m = metric_style(str(fig["metric"]), source=source, key_path=f"{path}.metric").name
        if m not in metric_names_:
            raise ConfigError(source, f"{path}.metric", f"metric {m!r} is not in 'metrics'")
        at = fig.get("at") or {}
        if not isinstance(at, dict):
            raise ConfigError(source, f"{path}.at", f"must be a mapping such as {{observed: 0.2}} "
                                                    f"or {{similarity: sigmoid}}. Got {at!r} "
                                                    f"instead.")
        for key in NUMERIC_AXES:
            v = at.get(key)
            if key in at and (isinstance(v, bool) or not isinstance(v, numbers.Real)):
                raise ConfigError(source, f"{path}.at.{key}", f"must be a number. Got {v!r} "
                                                              f"instead.")
        by = tuple(as_str_list(fig["by"], f"{path}.by", source)) if "by" in fig else ()
        figures.append({"x": fig["x"], "metric": m, "datasets": fig.get("datasets"),
                        "at": at, "by": by})
    needs = raw.get("needs", {}) or {}
    check_keys(needs, NEEDS_KEYS, "needs", source)

    name = str(raw.get("name", default_name))
    return TableSpec(
        name=name, title=str(raw.get("title", name)), source=source, paper=paper,
        tables=tuple(tables), configs=configs, results=results, series=series, axes=axes,
        dataset_aliases={str(k): str(v) for k, v in aliases.items()}, variants=variants,
        blocks=parts["blocks"], rows=parts["rows"], columns=parts["columns"],
        metrics=tuple(metrics), figures=tuple(figures), needs=dict(needs),
        description=str(raw.get("description", "")))


def parse_layout(layout, axes, defaults, source) -> tuple[dict, list]:
    """``{blocks, rows, columns}`` of a spec's ``layout`` (``defaults`` for those not given),
    each a tuple of names from ``axes``, and the axes used; no axis twice."""
    check_keys(layout, LAYOUT_KEYS, "layout", source)
    parts = {}
    for key, default in zip(LAYOUT_KEYS, defaults):
        vals = layout.get(key, default)
        vals = [vals] if isinstance(vals, str) else list(vals or [])
        for j, a in enumerate(vals):
            if a not in axes:
                raise UnknownNameError("axis", str(a), axes, source=source,
                                       key_path=f"layout.{key}[{j}]")
        parts[key] = tuple(vals)
    used = list(itertools.chain(*parts.values()))
    if len(set(used)) != len(used):
        raise ConfigError(source, "layout", "uses an axis twice")
    return parts, used


def figure_x_problem(x) -> str | None:
    """Why ``x`` is not a figure's horizontal axis (None when it is one)."""
    if x in FIGURE_X:
        return None
    if isinstance(x, str) and x.startswith("param:") and x[len("param:"):].strip():
        return None
    return (f"must be one of {', '.join(repr(a) for a in FIGURE_X)} or 'param:NAME' (a "
            f"parameter, e.g. 'param:theta'). Got {x!r} instead.")


def fmt_axis(axis: str, value) -> str:
    """An axis value as printed: 0.2 -> '20%' for k/L and observed, 5.0 -> '5' for k."""
    return fmt_value(axis, value)


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
            how = (f"run 'mlx datasets fetch {cfg.dataset.name}' or put the files on "
                   f"MLX_DATA_PATH" if cfg.dataset.kind == "registry" else
                   f"put those files under ./datasets or a directory on MLX_DATA_PATH; {c} says "
                   f"where they come from")
            missing.append(f"{c}: data for {cfg.dataset.name!r} not found: {', '.join(absent)} "
                           f"({how})")
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
