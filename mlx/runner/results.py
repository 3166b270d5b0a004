"""Result files: per-cell cache, long-format results.csv, manifest, wide tables.

Layout of ``results/<name>/``::

    cells/<cell_id>.json     one finished cell (written atomically; a rerun skips it)
    results.csv              one row per (cell, split, metric), or one row for a cell
                             that produced no metrics (skipped / diverged / error); a cell
                             with ``select`` also has one ``split=validation`` row per
                             candidate (its parameters in ``candidate``, its validation score
                             of the selection metric in ``value``)
    config.resolved.yaml     the config after defaults
    manifest.json            versions, git commit, CPU, jobs, BLAS threads, times, argv
    table.md, table.csv      the wide table (``mlx table`` re-renders them)
"""

from __future__ import annotations

import json
import os
import platform
import subprocess
import sys
import tempfile
from pathlib import Path

import pandas as pd

__all__ = ["COLUMNS", "atomic_write", "CellStore", "records_to_frame", "write_manifest",
           "render_tables", "read_results"]

COLUMNS = ["run_id", "cell_id", "experiment", "dataset", "method", "label", "params",
           "selected", "preprocess", "rank_ratio", "rank", "observed_ratio", "repetition", "seed",
           "split", "metric", "candidate", "value", "n_eval", "status", "message", "converged",
           "n_iter", "mask_fingerprint", "validation_fingerprint", "fit_seconds",
           "predict_seconds", "peak_rss_mb"]
VALIDATION = "validation"   # the split name of the selection candidates' rows
TIMING_COLUMNS = ("run_id", "fit_seconds", "predict_seconds", "peak_rss_mb")


def atomic_write(path: str | os.PathLike, text: str) -> None:
    """Write ``text`` to ``path`` through a temporary file and a rename."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as fh:
            fh.write(text)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


class CellStore:
    """Finished cells under ``<output>/cells``; ok, skipped and diverged cells are reused."""

    REUSABLE = ("ok", "skipped", "diverged")

    def __init__(self, output: str | os.PathLike):
        self.dir = Path(output) / "cells"

    def path(self, cell_id: str) -> Path:
        return self.dir / f"{cell_id}.json"

    def get(self, cell_id: str) -> dict | None:
        try:
            with open(self.path(cell_id), encoding="utf-8") as fh:
                rec = json.load(fh)
        except (OSError, ValueError):
            return None
        return rec if rec.get("status") in self.REUSABLE else None

    def put(self, record: dict) -> None:
        atomic_write(self.path(record["cell_id"]), json.dumps(record, sort_keys=True, indent=1))


def records_to_frame(cells, records: dict, run_id: str) -> pd.DataFrame:
    """Long-format rows for ``cells`` (in order) from their records."""
    rows = []
    for cell in cells:
        rec = records[cell.cell_id()]
        base = {
            "run_id": run_id, "cell_id": cell.cell_id(), "experiment": cell.experiment,
            "dataset": cell.dataset.name, "method": cell.method, "label": cell.label,
            "params": cell.params,
            "selected": json.dumps(rec["selected"], sort_keys=True) if rec.get("selected") else "",
            "preprocess": "[" + ",".join(cell.preprocess) + "]"
            if not (rec.get("selected") or {}).get("preprocess")
            else json.dumps(rec["selected"]["preprocess"], separators=(",", ":")),
            "rank_ratio": cell.rank_ratio, "rank": rec.get("rank"),
            "observed_ratio": cell.observed_ratio, "repetition": cell.repetition,
            "seed": rec.get("seed"), "status": rec["status"], "message": rec.get("message", ""),
            "converged": _short(rec.get("converged")), "n_iter": _short(rec.get("n_iter")),
            "mask_fingerprint": rec.get("mask_fingerprint"),
            "validation_fingerprint": rec.get("validation_fingerprint"),
            "fit_seconds": rec.get("fit_seconds"), "predict_seconds": rec.get("predict_seconds"),
            "peak_rss_mb": rec.get("peak_rss_mb"), "candidate": "",
        }
        results = rec.get("results") or {}
        if not results:
            rows.append({**base, "split": "", "metric": "", "value": None, "n_eval": None})
            continue
        for trial in rec.get("trials") or ():
            rows.append({**base, "split": VALIDATION, "metric": cell.selection_metric,
                         "candidate": json.dumps(trial["params"], sort_keys=True),
                         "value": trial["value"], "n_eval": trial.get("n_eval")})
        for split_name, metrics in results.items():
            for metric in cell.metrics:
                value, n_eval = metrics[metric]
                rows.append({**base, "split": split_name, "metric": metric, "value": value,
                             "n_eval": n_eval})
    frame = pd.DataFrame(rows, columns=COLUMNS)
    frame["rank"] = frame["rank"].astype("Int64")
    frame["n_eval"] = frame["n_eval"].astype("Int64")
    frame["seed"] = frame["seed"].astype("Int64")
    return frame


def _short(v):
    if isinstance(v, list):
        return json.dumps(v) if len(v) <= 3 else f"list[{len(v)}]"
    return v


def write_results(frame: pd.DataFrame, output: str | os.PathLike) -> Path:
    path = Path(output) / "results.csv"
    atomic_write(path, frame.to_csv(index=False, float_format="%.10g", lineterminator="\n"))
    return path


def read_results(path: str | os.PathLike) -> pd.DataFrame:
    """Read a results.csv (or the one inside a results directory)."""
    from mlx.errors import MlxError

    path = Path(path)
    if path.is_dir():
        path = path / "results.csv"
    if not path.exists():
        raise MlxError(f"{path}: file not found; run 'mlx run CONFIG' first")
    try:
        frame = pd.read_csv(path, keep_default_na=True, dtype={"message": str, "params": str,
                                                               "selected": str, "split": str,
                                                               "metric": str})
    except (ValueError, pd.errors.ParserError) as exc:
        raise MlxError(f"{path}: not a results.csv written by mlx ({exc})") from None
    missing = [c for c in ("label", "metric", "value", "status") if c not in frame.columns]
    if missing:
        raise MlxError(f"{path}: not a results.csv written by mlx (missing columns: "
                       f"{', '.join(missing)})")
    return frame


def _git_commit() -> tuple[str | None, bool | None]:
    here = Path(__file__).resolve().parent
    try:
        commit = subprocess.run(["git", "rev-parse", "HEAD"], cwd=here, capture_output=True,
                                text=True, timeout=5)
        if commit.returncode != 0:
            return None, None
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=here,
                               capture_output=True, text=True, timeout=5)
        return commit.stdout.strip(), bool(dirty.stdout.strip())
    except (OSError, subprocess.SubprocessError):
        return None, None


def _cpu_model() -> str:
    try:
        with open("/proc/cpuinfo") as fh:
            for line in fh:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def system_info(jobs: int, blas_threads: int | str) -> dict:
    import numpy
    import scipy
    import yaml

    import mlx

    versions = {"mlx": mlx.__version__, "python": platform.python_version(),
                "numpy": numpy.__version__, "scipy": scipy.__version__,
                "pandas": pd.__version__, "pyyaml": yaml.__version__}
    try:
        from importlib.metadata import version
        for dist in ("click", "liblinear-official", "tqdm"):
            versions[dist] = version(dist)
    except Exception:  # noqa: BLE001 - metadata lookups may fail in odd installs
        pass
    commit, dirty = _git_commit()
    return {"versions": versions, "git_commit": commit, "git_dirty": dirty,
            "platform": platform.platform(), "cpu": _cpu_model(), "cpu_count": os.cpu_count(),
            "jobs": jobs, "blas_threads_per_worker": blas_threads, "argv": sys.argv}


def write_manifest(output, info: dict) -> None:
    atomic_write(Path(output) / "manifest.json", json.dumps(info, indent=2, sort_keys=True, default=str))


# ----------------------------------------------------------------------------- tables
def wide_table(frame: pd.DataFrame, *, split: str = "test") -> pd.DataFrame:
    """Rows: (method label, parameters, k/L, observed ratio); columns: metrics.

    Values are means over repetitions; with more than one repetition the standard
    deviation follows as ``mean ± std``. A row without results shows its status.
    """
    frame = frame.copy()
    for col in ("rank_ratio", "observed_ratio"):
        frame[col] = pd.to_numeric(frame[col], errors="coerce")
    frame["_key"] = [
        "\x1f".join(str(v) for v in t)
        for t in zip(frame["label"], frame["params"], frame["rank_ratio"], frame["observed_ratio"])]
    ok = frame[(frame["status"] == "ok") & (frame["split"] == split)]
    metric_order = list(dict.fromkeys(ok["metric"]))
    show_params = frame.groupby("label")["params"].nunique().gt(1).any()
    rows = []
    for key in dict.fromkeys(frame["_key"]):
        group = frame[frame["_key"] == key]
        sub = ok[ok["_key"] == key]
        first = group.iloc[0]
        row = {"method": first["label"]}
        if show_params:
            row["params"] = _param_summary(first["params"])
        row["k/L"] = "" if pd.isna(first["rank_ratio"]) else f"{first['rank_ratio']:g}"
        row["observed"] = f"{first['observed_ratio']:g}"
        reps = sub["repetition"].nunique()
        for metric in metric_order:
            vals = sub.loc[sub["metric"] == metric, "value"].astype(float)
            if len(vals) == 0:
                statuses = sorted(set(group["status"]) - {"ok"}) or ["missing"]
                row[metric] = "/".join(statuses)
            elif reps > 1:
                row[metric] = f"{vals.mean():.4f} ± {vals.std(ddof=1):.4f}"
            else:
                row[metric] = f"{vals.mean():.4f}"
        fit = sub.drop_duplicates("cell_id")["fit_seconds"].astype(float)
        row["fit s"] = f"{fit.mean():.2f}" if len(fit) else ""
        rows.append(row)
    table = pd.DataFrame(rows)
    if len(table) and (table["k/L"] == "").all():
        table = table.drop(columns="k/L")
    if len(table) and (table["observed"] == "1").all():
        table = table.drop(columns="observed")
    return table


def _param_summary(params_json: str) -> str:
    try:
        params = json.loads(params_json)
    except (TypeError, ValueError):
        return ""
    return ", ".join(f"{k}={v}" for k, v in sorted(params.items()))


def to_markdown(table: pd.DataFrame) -> str:
    cols = list(table.columns)
    lines = ["| " + " | ".join(cols) + " |",
             "|" + "|".join("---" if c in ("method", "params") else "---:" for c in cols) + "|"]
    for _, r in table.iterrows():
        lines.append("| " + " | ".join(str(r[c]) for c in cols) + " |")
    return "\n".join(lines) + "\n"


def render_tables(frame: pd.DataFrame, output, *, title: str = "") -> str:
    """Write table.md and table.csv under ``output``; return the Markdown."""
    parts = []
    splits = [s for s in dict.fromkeys(frame["split"].dropna()) if s and s != VALIDATION]
    for split in splits or ["test"]:
        table = wide_table(frame, split=split)
        heading = f"## {title} ({split})" if title else f"## {split}"
        parts.append(heading + "\n\n" + to_markdown(table))
        if split == (splits or ["test"])[0]:
            atomic_write(Path(output) / "table.csv", table.to_csv(index=False, lineterminator="\n"))
    notes = frame[frame["status"] != "ok"].drop_duplicates("cell_id")
    if len(notes):
        parts.append("Cells without results:\n\n" + "\n".join(
            f"- {r['label']} (k/L={r['rank_ratio']}, observed={r['observed_ratio']}, "
            f"rep={r['repetition']}): {r['status']}: {r['message']}"
            for _, r in notes.iterrows()) + "\n")
    md = "\n".join(parts)
    atomic_write(Path(output) / "table.md", md)
    return md
