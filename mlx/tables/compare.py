"""Comparing any results with a paper: matching labels to the paper's methods automatically.

:func:`compare_spec` builds a table spec for ``mlx compare RESULTS --paper P``: rows are
matched by dataset, method (a result label such as ``LEML-SQ``, else the registry method
and its ``loss`` parameter), metric and every numeric axis of :mod:`mlx.axes` (k/L or k,
observed and labelled ratio); an axis with several values becomes a row axis.
"""

from __future__ import annotations

import pandas as pd

from mlx.axes import SPEC_AXES
from mlx.errors import ConfigError, MlxError, UnknownNameError
from mlx.tables.build import params_dict
from mlx.tables.published import paper_name, papers, published
from mlx.tables.spec import PSEUDO_METRICS, Series, TableSpec, metric_style, split_label

__all__ = ["LOSS_CODES", "auto_series", "compare_spec"]

LOSS_CODES = {"squared": "SQ", "logistic": "LR", "squared_hinge": "SH", "warp": "WAR"}


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
        target = split_label(label, pairs)
        if target is None:
            first = frame[frame["label"] == label].iloc[0]
            params = params_dict(first["params"])
            loss = LOSS_CODES.get(str(params.get("loss", "")), "")
            by_upper = {m.upper(): m for m, _ in pairs}
            method = by_upper.get(str(first["method"]).upper())
            if method is not None:
                losses = {ls for m, ls in pairs if m == method}
                if loss and loss in losses:
                    target = {"method": method, "loss": loss}
                elif not loss and len(losses) == 1:
                    target = {"method": method}
        if target is None:
            unmatched.append(label)
        else:
            series.append(Series(label, target, {"label": label}))
    return series, unmatched


def _reported_datasets(frame: pd.DataFrame, pub: pd.DataFrame, paper: str, tables, notes: list,
                       source: str) -> tuple:
    """The datasets of ``frame`` that ``pub`` (the paper's rows, maybe only some tables) has.

    The others get a note each; none at all is a :class:`ConfigError`, since there is nothing
    to compare."""
    ours = [d for d in dict.fromkeys(frame["dataset"]) if d]
    reported = list(dict.fromkeys(pub["dataset"]))
    known = tuple(d for d in ours if d in set(reported))
    where = ""
    if tables:
        where = f" in table{'s' if len(tables) > 1 else ''} {', '.join(tables)}"
    theirs = f"(it reports: {', '.join(reported)})"
    if ours and not known:
        names = ", ".join(repr(d) for d in ours)
        raise ConfigError(source, None, f"the {paper} paper has no rows for "
                                        f"dataset{'s' if len(ours) > 1 else ''} {names}{where} "
                                        f"{theirs}; nothing to compare")
    notes.extend(f"the {paper} paper has no rows for dataset {d!r}{where} {theirs}"
                 for d in ours if d not in known)
    return known


# Complexity 19 (over 15): the matching rules of labels, metrics and axes with their errors.
def compare_spec(frame: pd.DataFrame, paper: str, *, tables=None, metrics=None,  # noqa: C901
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
    datasets = _reported_datasets(frame, pub, paper, tables, notes, source)
    if datasets:
        frame = frame[frame["dataset"].isin(datasets)]
    series, unmatched = auto_series(frame, paper)
    if unmatched:
        notes.append(f"no published counterpart in {paper} for: {', '.join(unmatched)}")
    if not series:
        raise MlxError(f"{source}: no result label matches a method of {paper!r} (labels: "
                       f"{', '.join(dict.fromkeys(lb for lb in frame['label'] if lb))}; methods "
                       f"in the paper: {', '.join(sorted(pub['method'].unique()))})")
    ours_metrics = [m for m in dict.fromkeys(frame["metric"]) if isinstance(m, str) and m]
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
    rows, axes = ["dataset"], {"dataset": datasets}
    f = frame.assign(**{ax.column: pd.to_numeric(frame[ax.column], errors="coerce")
                        if ax.column in frame else ax.default for ax in SPEC_AXES})
    scope = pub[pub["dataset"].isin(datasets)]
    rank_axis = "k_over_L"
    if len(scope) and scope["k_over_L"].isna().all() and scope["k"].notna().any():
        rank_axis = "k"
    # Every numeric setting axis of mlx.axes: a row axis when we ran several values (never
    # pooled), else fixed at the one we ran. One of k/L and k stands for the rank.
    for ax in SPEC_AXES:
        if ax.spec in ("k_over_L", "k") and ax.spec != rank_axis:
            continue
        vals = sorted(set(f[ax.column].dropna().astype(float).round(9)))
        if len(vals) > 1:
            rows.append(ax.spec)
        if vals:  # only the settings we ran
            axes[ax.spec] = tuple(float(v) for v in vals)
    columns = ["series"]
    variants = [v for v in dict.fromkeys(scope["variant"]) if v]
    if variants:
        columns = ["variant", "series"]
    spec = TableSpec(
        name=f"compare-{paper}", title=f"Comparison with {paper_name(paper)} "
        f"({source})", source=source, paper=paper, tables=tuple(order), configs=(),
        results=(), series=tuple(series), axes=axes, dataset_aliases={}, variants={},
        blocks=("metric",), rows=tuple(rows), columns=tuple(columns),
        metrics=tuple(metric_style(m, pub=pub) for m in use))
    return spec, notes
