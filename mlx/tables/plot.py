"""Figures in the style of LEML Figures 1 and 2: a metric against k/L or the observed ratio.

One line per method (our results, solid, filled markers). Where the paper has the same
setting, its values are drawn in the same colour, dashed, with open markers. Methods
without a rank (binary relevance) are drawn as a horizontal reference line when the
horizontal axis is k/L, as in the paper's Figure 1. Files are written as PNG and PDF
with matplotlib's Agg backend (no display needed).
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pandas as pd

from mlx.errors import MlxError
from mlx.tables.build import ours_frame, params_dict, read_sources, select_rows
from mlx.tables.compare import auto_series
from mlx.tables.published import papers, published
from mlx.tables.spec import PSEUDO_METRICS, Series, metric_style

__all__ = ["plot_results", "plot_spec"]

X_LABELS = {"rank_ratio": "k/L (%)", "observed_ratio": "observed entries |Ω|/(nL) (%)"}
X_SLUGS = {"rank_ratio": "k", "observed_ratio": "observed"}
OTHER = {"rank_ratio": ("observed_ratio", "observed", "obs"),
         "observed_ratio": ("rank_ratio", "k_over_L", "k")}


def _pyplot():
    import matplotlib

    matplotlib.use("Agg", force=True)
    import matplotlib.pyplot as plt

    return plt


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "", str(text).replace("@", ""))


def _choose_paper(frame: pd.DataFrame, metric: str) -> str | None:
    best, best_n = None, 0
    pub = published()
    for paper in papers():
        series, _ = auto_series(frame, paper)
        p = pub[(pub["paper"] == paper) & (pub["metric"] == metric)
                & pub["dataset"].isin(set(frame["dataset"]))]
        n = sum(int(((p["method"] == s.paper["method"])
                     & ((p["loss"] == s.paper["loss"]) if "loss" in s.paper else True)).sum())
                for s in series)
        if n > best_n:
            best, best_n = paper, n
    return best


def _published_points(pub, s, dataset, x, other_axis, g) -> pd.DataFrame:
    """The paper's values for series ``s`` along ``x`` (empty when it has none)."""
    if not s.paper or not len(pub):
        return pub.iloc[0:0]
    p = pub[(pub["dataset"] == dataset) & (pub["method"] == s.paper["method"])]
    if "loss" in s.paper:
        p = p[p["loss"] == s.paper["loss"]]
    if g is not None:
        p = p[(p[other_axis] - g).abs() < 1e-9]
    pub_x = "k_over_L" if x == "rank_ratio" else "observed"
    return p[p[pub_x].notna()].drop_duplicates(pub_x).sort_values(pub_x)


def plot_results(frame: pd.DataFrame, *, x: str, metric: str, out_dir, paper: str | None = "auto",
                 datasets=None, series=None, tables=None, at: dict | None = None,
                 prefix: str = "", source: str = "results") -> list[Path]:
    """Draw ``metric`` against ``x`` for each dataset (and each value of the other axis).

    Parameters
    ----------
    frame : DataFrame
        Rows of a results.csv.
    x : {"rank_ratio", "observed_ratio"}
    metric : str
        A metric in the results (``p@1``, ``auc``, ...) or ``fit_seconds``.
    paper : str or None
        Overlay this paper's published values; ``"auto"`` picks the paper that matches
        the most points, ``None`` or ``"none"`` draws none.
    series : list of mlx.tables.spec.Series, optional
        Which results to draw and their published counterparts (default: every label,
        matched automatically).
    at : dict, optional
        Restrict the other axis, e.g. ``{"observed": 0.2}`` or ``{"k_over_L": 0.4}``.

    Returns the written files (PNG and PDF for each figure).
    """
    from mlx.metrics import parse_metric

    if x not in X_LABELS:
        raise MlxError(f"--x must be rank_ratio or observed_ratio, not {x!r}")
    if metric not in PSEUDO_METRICS:
        metric = parse_metric(metric).name
    f = frame.copy()
    for col in ("rank_ratio", "observed_ratio", "value", "fit_seconds"):
        f[col] = pd.to_numeric(f[col], errors="coerce")
    for col in ("label", "method", "params", "dataset", "metric", "split", "status"):
        f[col] = f[col].fillna("").astype(str)
    if "_params" not in f.columns:
        f["_params"] = f["params"].map(params_dict)
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

    if paper == "auto":
        paper = _choose_paper(ok, metric)
    if paper in (None, "none"):
        paper = None
    pub = published()
    if paper is not None:
        pub = pub[(pub["paper"] == paper) & (pub["metric"] == metric)]
        if tables:
            pub = pub[pub["table"].isin(tables)]
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
    style = metric_style(metric, pub=pub if len(pub) else None)
    factor = style.factor

    other_col, other_axis, other_slug = OTHER[x]
    plt = _pyplot()
    colours = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    markers = ["o", "s", "^", "D", "v", "P", "X", "<", ">", "*"]
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    written = []
    for dataset in dict.fromkeys(ok["dataset"]):
        dok = ok[ok["dataset"] == dataset]
        groups = sorted(set(dok[other_col].dropna().round(9)))
        if at and other_axis in at:
            groups = [g for g in groups if abs(g - float(at[other_axis])) < 1e-9]
        for g in groups or [None]:
            gok = dok if g is None else dok[dok[other_col].isna()
                                            | ((dok[other_col] - g).abs() < 1e-9)]
            g_pub = g if g is not None else (float(at[other_axis]) if at and other_axis in at
                                             else None)
            fig, ax = plt.subplots(figsize=(7.6, 4.6))
            xs_all = sorted(set(gok[x].dropna().round(9)))
            ticks = set(xs_all)
            lines_drawn = 0
            pub_drawn = False
            handles = []
            for i, s in enumerate(series):
                colour, marker = colours[i % len(colours)], markers[i % len(markers)]
                p = _published_points(pub, s, dataset, x, other_axis, g_pub)
                rows = select_rows(gok, s)
                pts = rows[rows[x].notna()].groupby(rows[x].round(9))["value"].mean()
                flat = rows[rows[x].isna()]["value"]
                if len(pts):
                    h, = ax.plot(pts.index * 100, pts.values * factor, color=colour,
                                 marker=marker, linewidth=1.8, markersize=6, label=s.name)
                elif len(flat) and (xs_all or len(p)):
                    h = ax.axhline(flat.mean() * factor, color=colour, linewidth=1.5,
                                   linestyle="-", label=f"{s.name} (no rank)")
                elif len(flat):
                    h, = ax.plot([0], [flat.mean() * factor], color=colour, marker=marker,
                                 linestyle="none", label=s.name)
                elif len(p):
                    h = None  # published only: drawn below, labelled as such
                else:
                    continue
                if h is not None:
                    handles.append(h)
                    lines_drawn += 1
                if len(p):
                    pub_x = "k_over_L" if x == "rank_ratio" else "observed"
                    ticks.update(round(float(v), 9) for v in p[pub_x])
                    hp, = ax.plot(p[pub_x] * 100, p["value"] / p["scale"] * factor,
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

            handles.append(Line2D([], [], color="0.2", linestyle="-", marker="o",
                                  label="ours (solid)"))
            if pub_drawn:
                handles.append(Line2D([], [], color="0.2", linestyle="--", marker="o",
                                      markerfacecolor="none",
                                      label=f"published, {paper.upper()} (dashed)"))
            ax.legend(handles=handles, loc="upper left", bbox_to_anchor=(1.02, 1.0),
                      frameon=False, fontsize=9)
            ax.set_xlabel(X_LABELS[x])
            ax.set_ylabel(style.heading())
            if ticks:
                ax.set_xticks(np.array(sorted(ticks)) * 100)
                ax.set_xticklabels([f"{t * 100:g}" for t in sorted(ticks)])
            ax.grid(True, alpha=0.3)
            what = f"{style.title} vs {X_LABELS[x].split(' (')[0]}"
            at_text = ""
            suffix = ""
            if g_pub is not None:
                at_text = (f" ({'observed' if other_axis == 'observed' else 'k/L'} = "
                           f"{g_pub * 100:g}%)")
                suffix = f"-{other_slug}{g_pub * 100:g}"
            ax.set_title(f"{dataset}: {what}{at_text}", fontsize=11)
            fig.tight_layout()
            stem = f"{prefix}{_slug(dataset)}-{_slug(metric)}-vs-{X_SLUGS[x]}{suffix}"
            for ext in ("png", "pdf"):
                path = out / f"{stem}.{ext}"
                fig.savefig(path, dpi=150 if ext == "png" else None, bbox_inches="tight")
                written.append(path)
            plt.close(fig)
    return written


def plot_spec(spec, out_dir) -> tuple[list[Path], list[str]]:
    """Draw the ``figures`` of a table spec from its results; returns (files, notes)."""
    sources = read_sources(spec)
    frame = ours_frame(sources, spec.dataset_aliases)
    written, notes = [], []
    if not spec.figures:
        notes.append(f"{spec.source}: the spec lists no figures")
    for fig in spec.figures:
        # The spec's own restrictions apply unless the figure says otherwise.
        at = {a: v[0] for a, v in spec.axes.items() if a in ("k_over_L", "observed")
              and len(v) == 1}
        at.update(fig.get("at") or {})
        datasets = fig.get("datasets") or list(spec.axes.get("dataset", ())) or None
        try:
            written += plot_results(frame, x=fig["x"], metric=fig["metric"], out_dir=out_dir,
                                    paper=spec.paper, datasets=datasets,
                                    series=list(spec.series), tables=spec.tables,
                                    at=at, prefix=f"{spec.name}-",
                                    source=spec.source or spec.name)
        except MlxError as exc:
            notes.append(f"figure {fig['metric']} vs {fig['x']} skipped: {exc}")
    return written, notes
