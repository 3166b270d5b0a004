"""Figures: a metric against k/L, the observed or labelled ratio, the rank K or a parameter.

The horizontal axis ``x`` is a results.csv column (``rank_ratio`` and ``observed_ratio``
as in LEML Figures 1 and 2, ``labelled_ratio``, ``rank``) or ``param:NAME``: the value of
parameter NAME in the ``params`` JSON column, or in ``selected`` when it was selected on
validation data. One line per series (our ``label``, solid, filled markers): the mean over
the rows at each x, with an error bar of ±1 standard deviation (ddof=1) where there are
two or more repetitions. Rows without an x value (binary relevance has no rank; a method
without the parameter) are drawn as a horizontal reference line, as in LEML Figure 1.
Where the paper has the same setting on that axis (``k_over_L``, ``observed`` or ``k`` in
the published values), its values are drawn in the same colour, dashed, with open
markers; the other axes have no published points and get no overlay.

There is one figure per dataset and per value of each other setting that varies (the
observed ratio for k/L and the k/L for the observed ratio, always, as in LEML; otherwise
k/L or K, the observed and the labelled ratio when they take several values), and per
value of each ``by`` parameter (rows without that parameter are in every figure). The
horizontal axis is logarithmic when its values are positive and span more than a factor
of 20 (never for k/L and the observed ratio). Files are written as PNG and PDF with
matplotlib's Agg backend (no display needed).
"""

from __future__ import annotations

import itertools
import json
import numbers
import re
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from mlx.axes import SWEEP_AXES, axis
from mlx.errors import ConfigError, MlxError, suggest
from mlx.tables.build import ours_frame, params_dict, read_sources, select_rows
from mlx.tables.compare import auto_series
from mlx.tables.published import papers, published
from mlx.tables.spec import FIGURE_X, PSEUDO_METRICS, Series, figure_x_problem, metric_style

__all__ = ["plot_results", "plot_spec", "figure_data", "line_points", "use_log_x", "x_label",
           "Panel", "Line"]

X_LABELS = {"rank_ratio": "k/L (%)", "observed_ratio": "observed entries |Ω|/(nL) (%)",
            "labelled_ratio": "labelled fraction (%)", "rank": "rank K"}
X_SLUGS = {"rank_ratio": "k", "observed_ratio": "observed", "labelled_ratio": "labelled",
           "rank": "rank"}
OTHER = {"rank_ratio": ("observed_ratio", "observed", "obs"),
         "observed_ratio": ("rank_ratio", "k_over_L", "k")}
LEML_AXES = tuple(OTHER)
PERCENT_COLUMNS = tuple(a.column for a in SWEEP_AXES if a.percent)
PUB_X = {"rank_ratio": "k_over_L", "observed_ratio": "observed", "rank": "k"}  # published axes
# Settings a figure is split by, one per numeric sweep axis of mlx.axes: (results.csv column,
# `at` key, file-name slug, title name), in the order of the file names.
_SETTING_NAMES = {"rank_ratio": ("k", "k/L"), "rank": ("rank", "K"),
                  "observed_ratio": ("obs", "observed"), "labelled_ratio": ("lab", "labelled")}
SETTINGS = tuple((col, axis(col).spec, *_SETTING_NAMES[col])
                 for col in ("rank_ratio", "rank", "observed_ratio", "labelled_ratio"))
AT_COLUMNS = {key: col for col, key, _, _ in SETTINGS}
LINKED = {"rank_ratio": ("k_over_L", "k"), "rank": ("k_over_L", "k"),
          "observed_ratio": ("observed",), "labelled_ratio": ("labelled",)}
LOG_SPAN = 20.0    # a logarithmic x axis when max/min of its (positive) values exceeds this
MAX_TICKS = 15     # a tick at every x value up to this many values


@dataclass
class Line:
    """One series of a figure: ``points`` has columns x, mean, sd, n (x in results units)."""

    name: str
    index: int
    series: Series
    points: pd.DataFrame
    flat: tuple | None = None   # (mean, sd, n) of the rows without an x value


@dataclass
class Panel:
    """One figure: a dataset, the settings and ``by`` values it is drawn at, its lines."""

    dataset: str
    settings: list = field(default_factory=list)  # [(column, at key, slug, name, value)]
    by: dict = field(default_factory=dict)        # parameter -> value (as text)
    rows: pd.DataFrame | None = None
    xs: list = field(default_factory=list)        # every x value of the rows (rounded)
    lines: list = field(default_factory=list)
    pub_filters: dict = field(default_factory=dict)  # published column -> value
    params: dict = field(default_factory=dict)    # parameter filters of ``at`` -> value

    def _named(self) -> list:
        return [*self.params.items(), *self.by.items()]

    def suffix(self) -> str:
        parts = [f"-{slug}{_fmt_setting(col, v, pct_sign=False)}"
                 for col, _, slug, _, v in self.settings if v is not None]
        parts += [f"-{_slug(k)}={_slug(v)}" for k, v in self._named()]
        return "".join(parts)

    def at_text(self) -> str:
        parts = [f"{name} = {_fmt_setting(col, v)}" for col, _, _, name, v in self.settings
                 if v is not None]
        parts += [f"{k} = {v}" for k, v in self._named()]
        return f" ({', '.join(parts)})" if parts else ""


def _pyplot():
    import matplotlib

    matplotlib.use("Agg", force=True)
    import matplotlib.pyplot as plt

    return plt


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "", str(text).replace("@", ""))


def _fmt_setting(col: str, v: float, pct_sign: bool = True) -> str:
    if col in PERCENT_COLUMNS:
        return f"{v * 100:g}" + ("%" if pct_sign else "")
    return f"{v:g}"


def _fmt_value(v) -> str:
    if isinstance(v, bool) or not isinstance(v, numbers.Real):
        return v if isinstance(v, str) else json.dumps(v, sort_keys=True)
    return f"{float(v):g}"


def _same(a, b) -> bool:
    try:
        return abs(float(a) - float(b)) < 1e-9
    except (TypeError, ValueError):
        return _fmt_value(a) == _fmt_value(b)


def _x_name(x: str) -> str:
    return x.split(":", 1)[1].strip() if x.startswith("param:") else x


def x_label(x: str) -> str:
    """The axis label of ``x``: 'rank K', 'labelled fraction (%)', a parameter's name."""
    return X_LABELS.get(x, _x_name(x))


def _param_of(params: dict, selected: dict, name: str):
    """Parameter ``name`` of a row: from its parameters, else from the selected ones."""
    if name in params:
        return params[name]
    return selected.get(name)


def _check_param(ok: pd.DataFrame, name: str, key_path: str, source: str) -> None:
    present = sorted(set(itertools.chain.from_iterable(ok["_params"]))
                     | set(itertools.chain.from_iterable(ok["_selected"])))
    if name in present:
        return
    hint = suggest(name, present)
    msg = f"no result has parameter {name!r}."
    if hint:
        msg += f" Did you mean {hint!r}?"
    msg += (f" Parameters in the results: {', '.join(present)}" if present
            else " The results have no parameters")
    raise ConfigError(source, key_path, msg)


def _choose_paper(frame: pd.DataFrame, metric: str) -> str | None:
    best, best_n = None, 0
    pub = published()
    for paper in papers():
        series, _ = auto_series(frame, paper)
        p = pub[(pub["paper"] == paper) & (pub["metric"] == metric)
                & pub["dataset"].isin(set(frame["dataset"]))]
        n = sum(int(((p["method"] == s.paper["method"])
                     & ((p["loss"] == s.paper["loss"]) if "loss" in s.paper else True)).sum())
                for s in series if s.paper)
        if n > best_n:
            best, best_n = paper, n
    return best


def _published_points(pub, s, dataset, pub_x, filters) -> pd.DataFrame:
    """The paper's values for series ``s`` along ``pub_x`` (empty when it has none)."""
    if not s.paper or not len(pub) or pub_x is None:
        return pub.iloc[0:0]
    p = pub[(pub["dataset"] == dataset) & (pub["method"] == s.paper["method"])]
    if "loss" in s.paper:
        p = p[p["loss"] == s.paper["loss"]]
    for col, g in filters.items():
        p = p[(p[col] - g).abs() < 1e-9]
    return p[p[pub_x].notna()].drop_duplicates(pub_x).sort_values(pub_x)


def line_points(rows: pd.DataFrame, x: str = "_x") -> pd.DataFrame:
    """Mean, standard deviation (ddof=1; NaN for one row) and count of ``value`` per x.

    Rows without an x value are left out. Returns columns x, mean, sd, n sorted by x.
    """
    r = rows[rows[x].notna()]
    g = r.groupby(r[x].astype(float).round(9))["value"]
    out = pd.DataFrame({"mean": g.mean(), "sd": g.std(ddof=1), "n": g.size()})
    out.index.name = "x"
    return out.reset_index()


def use_log_x(values) -> bool:
    """A logarithmic x axis: positive values spanning more than a factor of LOG_SPAN."""
    values = [float(v) for v in values]
    return bool(values) and min(values) > 0 and max(values) / min(values) > LOG_SPAN


def _validate_x(x: str, key_path: str) -> None:
    problem = figure_x_problem(x)
    if problem:
        raise ConfigError(None, key_path, problem)


def _result_rows(frame: pd.DataFrame, x: str, metric: str, datasets, by, source,
                 key_prefix) -> tuple[pd.DataFrame, str]:
    """The finished test rows of ``metric`` with their x value in ``_x``."""
    from mlx.metrics import parse_metric

    _validate_x(x, f"{key_prefix}x")
    if metric not in PSEUDO_METRICS:
        metric = parse_metric(metric).name
    f = frame.copy()
    for col in ("rank_ratio", "rank", "observed_ratio", "labelled_ratio", "value",
                "fit_seconds"):
        f[col] = pd.to_numeric(f[col], errors="coerce") if col in f.columns else np.nan
    for col in ("label", "method", "params", "dataset", "metric", "split", "status"):
        f[col] = f[col].fillna("").astype(str)
    if "_params" not in f.columns:
        f["_params"] = f["params"].map(params_dict)
    f["_selected"] = (f["selected"].map(params_dict) if "selected" in f.columns
                      else [{} for _ in range(len(f))])
    ok = f[f["status"] == "ok"]
    if metric == "fit_seconds":
        ok = ok.drop_duplicates("cell_id").assign(value=lambda d: d["fit_seconds"])
    else:
        ok = ok[(ok["metric"] == metric) & (ok["split"] == "test")]
    if datasets:
        ok = ok[ok["dataset"].isin(datasets)]
    if not len(ok):
        raise MlxError(f"{source}: no finished results for metric {metric!r}"
                       + (f" on {', '.join(datasets)}" if datasets else ""))
    for name in by:
        _check_param(ok, name, f"{key_prefix}by", source)
    if x.startswith("param:"):
        name = _x_name(x)
        _check_param(ok, name, f"{key_prefix}x", source)
        raw = pd.Series([_param_of(p, s, name) for p, s in zip(ok["_params"], ok["_selected"])],
                        index=ok.index, dtype=object)
        num = pd.to_numeric(raw.map(lambda v: np.nan if v is None or isinstance(v, bool)
                                    else v), errors="coerce")
        bad = sorted({_fmt_value(v) for v, n in zip(raw, num) if v is not None and pd.isna(n)})
        if bad:
            by_hint = f"--by {name}" if key_prefix == "--" else f"'by: {name}'"
            raise ConfigError(source, f"{key_prefix}x", f"parameter {name!r} is not numeric "
                              f"(values: {', '.join(bad)}); draw one figure per value with "
                              f"{by_hint} instead")
        ok = ok.assign(_x=num.astype(float))
    else:
        ok = ok.assign(_x=ok[x])
        if x not in LEML_AXES and not ok["_x"].notna().any():
            have = [a for a in FIGURE_X if ok[a].notna().any()]
            raise MlxError(f"{source}: no result for metric {metric!r} has a {x} value"
                           + (f"; axes with values: {', '.join(have)}" if have else "")
                           + " (or param:NAME)")
    return ok, metric


def _settings_groups(dok: pd.DataFrame, x: str, at: dict) -> list[list]:
    """Per setting to split by, the (column, key, slug, name, value) choices."""
    linked = LINKED.get(x, ())
    out = []
    if x in OTHER:   # LEML: always by the other axis, restricted by `at`
        col, key, slug = OTHER[x]
        groups = sorted(set(dok[col].dropna().round(9)))
        if key in at:
            groups = [g for g in groups if abs(g - float(at[key])) < 1e-9]
        name = "observed" if key == "observed" else "k/L"
        at_value = float(at[key]) if key in at else None
        out.append([(col, key, slug, name, g, g) for g in groups]
                   or [(col, key, slug, name, at_value, at_value)])
        linked = linked + (key,)
    use_ratio = dok["rank_ratio"].notna().any()
    for col, key, slug, name in SETTINGS:
        if key in linked or key in at or (col == "rank" and use_ratio) \
                or (col == "rank_ratio" and not use_ratio):
            continue
        values = sorted(set(dok[col].dropna().round(9)))
        if len(values) > 1:
            out.append([(col, key, slug, name, v, v) for v in values])
    return out


def _at_mask(rows: pd.DataFrame, x: str, at: dict) -> pd.Series:
    """Rows matching the `at` restrictions not already used as a split (missing values match)."""
    linked = LINKED.get(x, ()) + ((OTHER[x][1],) if x in OTHER else ())
    mask = pd.Series(True, index=rows.index)
    for key, want in (at or {}).items():
        if key in linked or key == _x_name(x):
            continue
        if key in AT_COLUMNS:
            col = AT_COLUMNS[key]
            try:
                want = float(want)
            except (TypeError, ValueError):
                raise ConfigError(None, f"at.{key}", f"must be a number. Got {want!r} "
                                                     f"instead.") from None
            mask &= rows[col].isna() | ((rows[col] - want).abs() < 1e-9)
        else:
            mask &= pd.Series([(v := _param_of(p, s, key)) is None or _same(v, want)
                               for p, s in zip(rows["_params"], rows["_selected"])],
                              index=rows.index)
    return mask


def _by_groups(dok: pd.DataFrame, by) -> list[dict]:
    """Per combination of ``by`` values present: {parameter: value text}; [{}] without by."""
    combos = [{}]
    for name in by:
        vals = [_param_of(p, s, name) for p, s in zip(dok["_params"], dok["_selected"])]
        present = {_fmt_value(v): v for v in vals if v is not None}
        if not present:
            continue
        if all(isinstance(v, numbers.Real) and not isinstance(v, bool)
               for v in present.values()):
            keys = sorted(present, key=lambda k: float(present[k]))
        else:
            keys = sorted(present)
        combos = [{**c, name: k} for c in combos for k in keys]
    return combos


def _by_mask(rows: pd.DataFrame, combo: dict) -> pd.Series:
    mask = pd.Series(True, index=rows.index)
    for name, want in combo.items():
        mask &= pd.Series([(v := _param_of(p, s, name)) is None or _fmt_value(v) == want
                           for p, s in zip(rows["_params"], rows["_selected"])],
                          index=rows.index)
    return mask


def figure_data(frame: pd.DataFrame, *, x: str, metric: str, by=(), datasets=None,
                series=None, at: dict | None = None, source: str = "results",
                key_prefix: str = "--") -> list[Panel]:
    """The figures ``plot_results`` draws, as data: one Panel per figure with its Lines.

    ``series`` defaults to one per ``label``, in order of appearance. Each Line's
    ``points`` holds the mean, the standard deviation and the number of rows per x value
    (in results units: fractions for the ratios); ``flat`` the rows without an x value.
    """
    by = (by,) if isinstance(by, str) else tuple(by or ())
    ok, metric = _result_rows(frame, x, metric, datasets, by, source, key_prefix)
    if series is None:
        series = [Series(label, {}, {"label": label}) for label in dict.fromkeys(ok["label"])]
    return _panels(ok, x, by, series, at or {})


def _panels(ok, x, by, series, at) -> list[Panel]:
    panels = []
    by = tuple(by or ())
    for dataset in dict.fromkeys(ok["dataset"]):
        dok = ok[ok["dataset"] == dataset]
        dok = dok[_at_mask(dok, x, at)]
        for combo_settings in itertools.product(*_settings_groups(dok, x, at)):
            sok = dok
            filters = {}
            for col, key, _, _, g, g_pub in combo_settings:
                if g is not None:
                    sok = sok[sok[col].isna() | ((sok[col] - g).abs() < 1e-9)]
                pub_col = PUB_X.get(col)
                if g_pub is not None and pub_col:
                    filters[pub_col] = g_pub
            for combo in _by_groups(sok, by):
                gok = sok[_by_mask(sok, combo)] if combo else sok
                panel = Panel(dataset, [(c, k, sl, n, gp) for c, k, sl, n, _, gp
                                        in combo_settings], combo, gok,
                              sorted(set(gok["_x"].dropna().round(9))), [], filters,
                              {k: str(v) for k, v in at.items()
                               if k not in AT_COLUMNS and k != _x_name(x)})
                for i, s in enumerate(series):
                    rows = select_rows(gok, s)
                    flat = rows[rows["_x"].isna()]["value"]
                    panel.lines.append(Line(
                        s.name, i, s, line_points(rows),
                        (float(flat.mean()), float(flat.std(ddof=1)) if len(flat) > 1
                         else float("nan"), len(flat)) if len(flat) else None))
                panels.append(panel)
    return panels


# Complexity 22 (over 15): one branch per option and per figure layout.
def plot_results(frame: pd.DataFrame, *, x: str, metric: str, out_dir, paper: str | None = "auto",  # noqa: C901
                 datasets=None, series=None, tables=None, at: dict | None = None,
                 by=(), prefix: str = "", source: str = "results",
                 key_prefix: str = "--", percent: bool | None = None) -> list[Path]:
    """Draw ``metric`` against ``x`` for each dataset (and each value of the other settings).

    Parameters
    ----------
    frame : DataFrame
        Rows of a results.csv.
    x : str
        ``rank_ratio``, ``observed_ratio``, ``labelled_ratio``, ``rank`` or ``param:NAME``.
    metric : str
        A metric in the results (``p@1``, ``auc``, ...) or ``fit_seconds``.
    paper : str or None
        Overlay this paper's published values; ``"auto"`` picks the paper that matches
        the most points, ``None`` or ``"none"`` draws none.
    series : list of mlx.tables.spec.Series, optional
        Which results to draw and their published counterparts (default: every label,
        matched automatically).
    at : dict, optional
        Restrict the settings, e.g. ``{"observed": 0.2}``, ``{"k_over_L": 0.4}``,
        ``{"labelled": 0.1}``, ``{"k": 50}``, or a parameter: ``{"similarity": "sigmoid"}``
        (rows without that setting or parameter are kept).
    by : sequence of str
        Parameters to draw one figure per value of (``similarity=sigmoid`` in the title
        and the file name).
    key_prefix : str
        How errors name the x and by options: ``--`` (``--x``), or ``figures[0].``.
    percent : bool or None
        A [0, 1] metric in percent (True) or as a fraction (False); None: the paper's unit
        (:mod:`mlx.tables.units`).

    Returns the written files (PNG and PDF for each figure).
    """
    by = (by,) if isinstance(by, str) else tuple(by or ())
    ok, metric = _result_rows(frame, x, metric, datasets, by, source, key_prefix)

    if paper == "auto":
        paper = _choose_paper(ok, metric)
    if paper in (None, "none"):
        paper = None
    pub = published()
    if paper is not None:
        pub = pub[(pub["paper"] == paper) & (pub["metric"] == metric)]
        if tables:                          # published table ids are strings ("6", "7a")
            pub = pub[pub["table"].isin([str(t) for t in tables])]
    else:
        pub = pub.iloc[0:0]
    if series is None:
        if paper:
            matched, unmatched = auto_series(ok, paper)
        else:
            matched, unmatched = [], list(dict.fromkeys(ok["label"]))
        series = matched + [Series(label, {}, {"label": label}) for label in unmatched]
        order = {label: i for i, label in enumerate(dict.fromkeys(ok["label"]))}
        series.sort(key=lambda s: order.get(s.ours.get("label"), 0))
    from mlx.tables.units import in_unit

    style = in_unit(metric_style(metric, pub=pub if len(pub) else None), percent)
    factor = style.factor

    leml = x in LEML_AXES
    pub_x = PUB_X.get(x)
    scale = 100 if x in PERCENT_COLUMNS else 1
    no_x = "rank" if leml or x == "rank" else x_label(x).split(" (")[0]
    plt = _pyplot()
    colours = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    markers = ["o", "s", "^", "D", "v", "P", "X", "<", ">", "*"]
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    written = []
    for panel in _panels(ok, x, by, series, at or {}):
        fig, ax = plt.subplots(figsize=(7.6, 4.6))
        xs_all = panel.xs
        ticks = set(xs_all)
        lines_drawn = 0
        pub_drawn = False
        handles = []
        for line in panel.lines:
            s, i, pts = line.series, line.index, line.points
            colour, marker = colours[i % len(colours)], markers[i % len(markers)]
            p = _published_points(pub, s, panel.dataset, pub_x, panel.pub_filters)
            if len(pts):
                xv, yv = pts["x"].to_numpy() * scale, pts["mean"].to_numpy() * factor
                if (pts["n"] > 1).any():
                    h = ax.errorbar(xv, yv, yerr=pts["sd"].to_numpy() * factor, color=colour,
                                    marker=marker, linewidth=1.8, markersize=6, capsize=3,
                                    elinewidth=1.0, label=s.name)
                else:
                    h, = ax.plot(xv, yv, color=colour, marker=marker, linewidth=1.8,
                                 markersize=6, label=s.name)
            elif line.flat and (xs_all or len(p)):
                h = ax.axhline(line.flat[0] * factor, color=colour, linewidth=1.5,
                               linestyle="-", label=f"{s.name} (no {no_x})")
            elif line.flat:
                h, = ax.plot([0], [line.flat[0] * factor], color=colour, marker=marker,
                             linestyle="none", label=s.name)
            elif len(p):
                h = None  # published only: drawn below, labelled as such
            else:
                continue
            if h is not None:
                handles.append(h)
                lines_drawn += 1
            if len(p):
                ticks.update(round(float(v), 9) for v in p[pub_x])
                hp, = ax.plot(p[pub_x] * scale, p["value"] / p["scale"] * factor,
                              color=colour, marker=marker, markerfacecolor="none",
                              linestyle="--", linewidth=1.3, markersize=6,
                              label=f"{s.name} (paper only)")
                if h is None:
                    handles.append(hp)
                pub_drawn = True
        if not lines_drawn:
            plt.close(fig)
            continue
        from matplotlib.lines import Line2D

        if pub_drawn:   # "ours (solid)" only beside a dashed published line
            handles.append(Line2D([], [], color="0.2", linestyle="-", marker="o",
                                  label="ours (solid)"))
            handles.append(Line2D([], [], color="0.2", linestyle="--", marker="o",
                                  markerfacecolor="none",
                                  label=f"published, {paper.upper()} (dashed)"))
        ax.legend(handles=handles, loc="upper left", bbox_to_anchor=(1.02, 1.0),
                  frameon=False, fontsize=9)
        ax.set_xlabel(x_label(x))
        ax.set_ylabel(style.heading())
        tick_values = sorted(ticks)
        if not leml and use_log_x(tick_values):
            from matplotlib.ticker import NullFormatter

            ax.set_xscale("log")
            ax.xaxis.set_minor_formatter(NullFormatter())
        if tick_values and (leml or len(tick_values) <= MAX_TICKS):
            ax.set_xticks(np.array(tick_values) * scale)
            ax.set_xticklabels([f"{t * scale:g}" for t in tick_values])
        ax.grid(True, alpha=0.3)
        what = f"{style.title} vs {x_label(x).split(' (')[0]}"
        ax.set_title(f"{panel.dataset}: {what}{panel.at_text()}", fontsize=11)
        fig.tight_layout()
        x_slug = X_SLUGS.get(x) or _slug(_x_name(x))
        stem = f"{prefix}{_slug(panel.dataset)}-{_slug(metric)}-vs-{x_slug}{panel.suffix()}"
        for ext in ("png", "pdf"):
            path = out / f"{stem}.{ext}"
            fig.savefig(path, dpi=150 if ext == "png" else None, bbox_inches="tight")
            written.append(path)
        plt.close(fig)
    return written


def plot_spec(spec, out_dir, *, percent: bool | None = None) -> tuple[list[Path], list[str]]:
    """Draw the ``figures`` of a table spec from its results; returns (files, notes)."""
    sources = read_sources(spec)
    frame = ours_frame(sources, spec.dataset_aliases)
    written, notes = [], []
    if not spec.figures:
        notes.append(f"{spec.source}: the spec lists no figures")
    for i, fig in enumerate(spec.figures):
        # The spec's own restrictions apply unless the figure says otherwise.
        at = {a: v[0] for a, v in spec.axes.items() if a in ("k_over_L", "observed")
              and len(v) == 1}
        at.update(fig.get("at") or {})
        datasets = fig.get("datasets") or list(spec.axes.get("dataset", ())) or None
        try:
            written += plot_results(frame, x=fig["x"], metric=fig["metric"], out_dir=out_dir,
                                    paper=spec.paper, datasets=datasets,
                                    series=list(spec.series), tables=spec.tables,
                                    at=at, by=fig.get("by") or (), prefix=f"{spec.name}-",
                                    source=spec.source or spec.name,
                                    key_prefix=f"figures[{i}].", percent=percent)
        except MlxError as exc:
            notes.append(f"figure {fig['metric']} vs {fig['x']} skipped: {exc}")
    return written, notes
