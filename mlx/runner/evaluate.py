"""``mlx evaluate RESULTS --metrics ...``: new metric rows from the cells' stored scores.

Every finished cell keeps a summary of its scores (:mod:`mlx.metrics.stored`); a metric
computed from it is exactly what a fresh run would report, and nothing is refitted.
"""

from __future__ import annotations

import os
from pathlib import Path

import pandas as pd

from mlx.errors import ConfigError, MlxError
from mlx.runner.results import VALIDATION, CellStore, read_results, render_tables, write_results

__all__ = ["evaluate_results"]


def _parse_metrics(text: str, tasks) -> list[str]:
    from mlx.metrics import parse_metric
    from mlx.tasks import get_task

    names = []
    for i, raw in enumerate(t.strip() for t in text.split(",")):
        if not raw:
            raise ConfigError(None, "--metrics", f"empty metric name in {text!r}; give names "
                                                 f"separated by commas, e.g. ndcg@3,auc")
        try:
            name = parse_metric(raw).name
        except ConfigError as exc:
            raise ConfigError(None, "--metrics", exc.message) from None
        for task in tasks:
            get_task(task).check_metric(name, key_path="--metrics")
        if name not in names:
            names.append(name)
    return names


def evaluate_results(results: str | os.PathLike, metrics: str) -> dict:
    """Add (or recompute) the rows of ``metrics`` (comma-separated names) for every finished
    cell of the run in ``results``; rewrite results.csv and the run's tables.

    Nothing is written when a finished cell has no stored scores for them (it finished
    before scores were stored, or its ranking is too shallow for a ``@k``): the error names
    the cells to rerun. Returns counts and the rendered Markdown.
    """
    from mlx.metrics.stored import metrics_from_summary, missing_metrics

    out = Path(results)
    out = out if out.is_dir() else out.parent
    frame = read_results(out)
    tasks = sorted(set(frame["task"].dropna())) if "task" in frame.columns else ["multilabel"]
    names = _parse_metrics(metrics, tasks)
    store = CellStore(out)
    ok = frame[(frame["status"] == "ok") & frame["split"].notna()
               & (frame["split"] != VALIDATION)]
    new_rows, lacking, n_cells = [], [], 0
    for cell_id, rows in ok.groupby("cell_id", sort=False):
        summaries = store.summaries(cell_id)
        splits = list(dict.fromkeys(rows["split"]))
        if summaries is None or any(s not in summaries or missing_metrics(summaries[s], names)
                                    for s in splits):
            lacking.append(str(cell_id))
            continue
        n_cells += 1
        record = store.get(cell_id)
        for split in splits:
            values = metrics_from_summary(summaries[split], names)
            template = rows[rows["split"] == split].iloc[-1]
            for name in names:
                value, n_eval = values[name]
                new_rows.append({**template.to_dict(), "metric": name, "value": value,
                                 "n_eval": n_eval, "_after": template.name})
            if record is not None:
                record.setdefault("results", {}).setdefault(split, {}).update(
                    {m: [None if v is None or v != v else v, int(n)]
                     for m, (v, n) in values.items()})
        if record is not None:
            store.put(record)
    if lacking:
        shown = ", ".join(lacking[:5]) + (" ..." if len(lacking) > 5 else "")
        raise MlxError(f"{out}: {len(lacking)} finished cell(s) have no stored scores for "
                       f"{', '.join(names)} ({shown}); they finished before scores were "
                       f"stored, or their stored ranking is shallower than a @k asked for "
                       f"(evaluation.store_top_k): rerun them with 'mlx run CONFIG --force'")
    replaced = frame["cell_id"].isin(ok["cell_id"]) & frame["split"].isin(ok["split"]) \
        & frame["metric"].isin(names)
    kept = frame[~replaced].copy()
    kept["_after"] = kept.index.astype(float)
    added = pd.DataFrame(new_rows, columns=list(frame.columns) + ["_after"])
    added["_after"] = added["_after"].astype(float) + 0.5
    merged = pd.concat([kept, added], ignore_index=True)
    merged = merged.sort_values("_after", kind="stable").drop(columns="_after")
    merged = merged.reset_index(drop=True)
    for col in ("rank", "n_eval", "seed"):
        if col in merged.columns:
            merged[col] = merged[col].astype("Int64")
    write_results(merged, out)
    title = str(merged["experiment"].iloc[0]) if len(merged) else ""
    md = render_tables(merged, out, title=title)
    return {"cells": n_cells, "rows": len(added), "metrics": names, "table_md": md,
            "output": out}
