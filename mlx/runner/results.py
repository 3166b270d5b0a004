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
    table.tex                the same (first split) as a booktabs LaTeX table
"""

from __future__ import annotations

import json
import os
import platform
import subprocess
import sys
from pathlib import Path

from mlx.axes import AXES
from mlx.io import atomic_write_text
from mlx.lazy import lazy_module

np = lazy_module("numpy")
pd = lazy_module("pandas")  # read only when the results are written, after the cells ran

__all__ = ["COLUMNS", "CellStore", "records_to_frame", "write_manifest",
           "render_tables", "read_results"]

COLUMNS = ["run_id", "cell_id", "experiment", "dataset", "task", "method", "label", "params",
           "selected", "preprocess", "rank_ratio", "rank", "observed_ratio", "labelled_ratio",
           "repetition", "seed", "split", "metric", "candidate", "value", "n_eval", "status",
           "message", "converged", "n_iter", "split_fingerprint", "mask_fingerprint",
           "validation_fingerprint", "data_sha256", "fit_seconds", "predict_seconds",
           "cell_seconds", "peak_rss_mb", "budget_seconds"]
VALIDATION = "validation"   # the split name of the selection candidates' rows
TIMING_COLUMNS = ("run_id", "fit_seconds", "predict_seconds", "cell_seconds", "peak_rss_mb")


class CellStore:
    """Finished cells under ``<output>/cells``; ok, skipped and diverged cells are reused, and
    cells stopped over their time budget while the budget is not raised."""

    REUSABLE = ("ok", "skipped", "diverged", "over_budget")

    def __init__(self, output: str | os.PathLike):
        self.dir = Path(output) / "cells"

    def path(self, cell_id: str) -> Path:
        return self.dir / f"{cell_id}.json"

    def get(self, cell_id: str) -> dict | None:
        try:                                     # a planted link is not a finished cell
            fd = os.open(self.path(cell_id), os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
            with open(fd, encoding="utf-8") as fh:
                rec = json.load(fh)
        except (OSError, ValueError):
            return None
        return rec if rec.get("status") in self.REUSABLE else None

    def summaries_path(self, cell_id: str) -> Path:
        return self.dir / f"{cell_id}.scores.npz"

    def summaries(self, cell_id: str) -> dict | None:
        """The stored score summaries ``{split: summary}`` of a cell, or None."""
        from mlx.metrics.stored import load_summaries

        try:
            return load_summaries(self.summaries_path(cell_id))
        except (OSError, ValueError, KeyError):
            return None

    def put(self, record: dict) -> None:
        """Write a finished cell: its score summaries and fitted model (when the record
        carries them) first, then the JSON record that marks the cell finished."""
        from mlx.io import atomic_write_bytes
        from mlx.runner.cells import MODEL, SUMMARIES

        record = dict(record)
        summaries, model = record.pop(SUMMARIES, None), record.pop(MODEL, None)
        if summaries:
            from mlx.metrics.stored import save_summaries

            atomic_write_bytes(self.summaries_path(record["cell_id"]), save_summaries(summaries))
        if model is not None:
            from mlx.runner.models import model_path

            atomic_write_bytes(model_path(self.dir.parent, record["cell_id"]), model)
        atomic_write_text(self.path(record["cell_id"]),
                          json.dumps(record, sort_keys=True, indent=1))


def records_to_frame(cells, records: dict, run_id: str) -> pd.DataFrame:
    """Long-format rows for ``cells`` (in order) from their records."""
    rows = []
    for cell in cells:
        rec = records[cell.cell_id()]
        base = {
            "run_id": run_id, "cell_id": cell.cell_id(), "experiment": cell.experiment,
            **{ax.column: _column(getattr(cell, ax.name)) for ax in AXES},  # every sweep axis
            "dataset": cell.dataset.name, "task": cell.task, "method": cell.method,
            "selected": json.dumps(rec["selected"], sort_keys=True) if rec.get("selected") else "",
            "preprocess": _steps_text(cell, rec),
            "rank": rec.get("rank") if rec.get("rank") is not None else cell.rank,
            "seed": rec.get("seed"), "status": rec["status"], "message": rec.get("message", ""),
            "converged": _short(rec.get("converged")), "n_iter": _short(rec.get("n_iter")),
            "split_fingerprint": rec.get("split_fingerprint") or "official",
            "mask_fingerprint": rec.get("mask_fingerprint"),
            "validation_fingerprint": rec.get("validation_fingerprint"),
            "data_sha256": cell.dataset.checksum_text(),
            "fit_seconds": rec.get("fit_seconds"), "predict_seconds": rec.get("predict_seconds"),
            "cell_seconds": rec.get("cell_seconds"),
            "peak_rss_mb": rec.get("peak_rss_mb"), "candidate": "",
            "budget_seconds": cell.budget,
        }
        results = rec.get("results") or {}
        if not results:
            rows.append({**base, "split": "", "metric": "", "value": None, "n_eval": None})
            continue
        for trial in rec.get("trials") or ():
            rows.append({**base, "split": VALIDATION, "metric": cell.selection.metric,
                         "candidate": json.dumps(trial["params"], sort_keys=True),
                         "value": trial["value"], "n_eval": trial.get("n_eval")})
        for split_name, metrics in results.items():
            for metric in cell.evaluation.metrics:
                value, n_eval = metrics[metric]
                rows.append({**base, "split": split_name, "metric": metric, "value": value,
                             "n_eval": n_eval})
    frame = pd.DataFrame(rows, columns=COLUMNS)
    frame["rank"] = frame["rank"].astype("Int64")
    frame["n_eval"] = frame["n_eval"].astype("Int64")
    frame["seed"] = frame["seed"].astype("Int64")
    return frame


def _steps_text(cell, rec) -> str:
    """The preprocessing a cell's final fit used, in one canonical form whether it was fixed
    or chosen by ``select`` (``[{"l2_normalize":{}},{"bias":{"value":1.0}}]``)."""
    from mlx.runner.sweep import _canonical_steps

    selected = (rec.get("selected") or {})
    steps = cell.preprocess if "preprocess" not in selected else \
        _canonical_steps(selected["preprocess"])
    return "[" + ",".join(step.json() for step in steps) + "]"


def _column(value):
    """A cell's axis value as results.csv holds it: parameters as canonical JSON text."""
    from mlx.runner.sweep import FrozenMap

    return value.json() if isinstance(value, FrozenMap) else value


def _short(v):
    if isinstance(v, list):
        return json.dumps(v) if len(v) <= 3 else f"list[{len(v)}]"
    return v


def write_results(frame: pd.DataFrame, output: str | os.PathLike) -> Path:
    path = Path(output) / "results.csv"
    atomic_write_text(path, frame.to_csv(index=False, float_format="%.10g", lineterminator="\n"))
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

    from mlx.namecheck import own_version

    versions = {"mlx": own_version(), "python": platform.python_version(),
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
    atomic_write_text(Path(output) / "manifest.json",
                      json.dumps(info, indent=2, sort_keys=True, default=str))


# ----------------------------------------------------------------------------- tables
EDGE = "†"            # a selected value at the end of its candidate list
WORSE_THAN_CONSTANT = "▽"


def _as_dict(text) -> dict:
    try:
        out = json.loads(text) if isinstance(text, str) and text else {}
    except ValueError:
        return {}
    return out if isinstance(out, dict) else {}


def _fmt_value(v) -> str:
    if isinstance(v, float):
        return f"{v:g}"
    if isinstance(v, list):
        return "[" + ",".join(next(iter(x)) if isinstance(x, dict) else str(x) for x in v) + "]"
    return str(v)


def _selection(cells: pd.DataFrame, validation: pd.DataFrame) -> tuple[str, bool]:
    """What ``select`` chose over the cells of one table row, and whether any choice lies at
    the end of a numeric candidate list of three or more values (a sign that the list should
    be widened; with two candidates every choice is an end)."""
    from mlx.methods._auto import EDGE_NOTE

    chosen = [_as_dict(t) for t in cells["selected"]]
    if not any(chosen):
        return "", False
    # an ``auto`` value at the end of its path says so in the cell's message
    edge = any(EDGE_NOTE in str(m) for m in cells.get("message", ()))
    for cell_id, sel in zip(cells["cell_id"], chosen):
        cands = [_as_dict(c) for c in validation.loc[validation["cell_id"] == cell_id,
                                                      "candidate"]]
        for name, value in sel.items():
            values = sorted({c[name] for c in cands if isinstance(c.get(name), (int, float))
                             and not isinstance(c.get(name), bool)})
            if len(values) >= 3 and value in (values[0], values[-1]):
                edge = True
    texts = [", ".join(f"{k}={_fmt_value(v)}" for k, v in sorted(sel.items())) for sel in chosen]
    counts = pd.Series(texts).value_counts(sort=False)
    if len(counts) == 1:
        text = counts.index[0]
    else:
        text = "; ".join(f"{t} ×{n}" for t, n in counts.items())
    return text + (f" {EDGE}" if edge else ""), edge


def _convergence(cells: pd.DataFrame) -> str:
    flags = [str(v).strip().lower() for v in cells["converged"]
             if not (v is None or (isinstance(v, float) and np.isnan(v)))]
    flags = [f for f in flags if f in ("true", "false")]
    if not flags:
        return ""
    bad = sum(f == "false" for f in flags)
    return "yes" if not bad else f"no ({bad}/{len(flags)})"


# Complexity 20 (over 15): settings, metric columns and their marks in one pass over the rows.
def wide_table(frame: pd.DataFrame, *, split: str = "test",  # noqa: C901
               percent: bool | None = None) -> pd.DataFrame:
    """Rows: (method label, parameters, k/L or k, observed and labelled ratio); columns: metrics.

    Values are means over repetitions; with more than one repetition the standard
    deviation follows as ``mean ± std``. A row without results shows its status. Further
    columns: what ``select`` chose (``†``: at the end of its candidate list), whether the
    fits converged, the final fit's time and the cell's total time (selection included).
    With a ``constant`` row in the table, a value worse than the constant baseline's on the
    same metric (and observed/labelled ratio) is marked ``▽``. ``percent`` (True) shows the
    [0, 1] metrics in percent with two decimals (:mod:`mlx.tables.units`).
    """
    from mlx.axes import SWEEP_AXES, setting_columns
    from mlx.metrics import parse_metric
    from mlx.tables.units import unit_factor

    frame = frame.copy()
    for ax in SWEEP_AXES:
        if ax.column not in frame:
            frame[ax.column] = ax.default
        frame[ax.column] = pd.to_numeric(frame[ax.column], errors="coerce")
    for col in ("selected", "candidate", "converged", "cell_seconds", "method", "dataset"):
        if col not in frame:
            frame[col] = None
    absolute = frame["rank_ratio"].isna()
    frame["_rank"] = frame["rank"].where(absolute)          # k shown only for absolute ranks
    # One row per setting: every setting axis of mlx.axes (never pooled over any of them);
    # the rank only where it is absolute (else it follows from k/L, and a skipped cell has none).
    frame["_key"] = ["\x1f".join(str(v) for v in t) for t in zip(
        *(frame["_rank" if c == "rank" else c] for c in setting_columns()))]
    ok = frame[(frame["status"] == "ok") & (frame["split"] == split)]
    validation = frame[frame["split"] == VALIDATION]
    metric_order = list(dict.fromkeys(ok["metric"]))
    show_params = frame.groupby("label")["params"].nunique().gt(1).any()
    show_dataset = frame["dataset"].nunique() > 1
    baseline = {}
    for metric in metric_order:
        rows_c = ok[(ok["method"] == "constant") & (ok["metric"] == metric)]
        for (obs, lab), vals in rows_c.groupby(["observed_ratio", "labelled_ratio"])["value"]:
            baseline[(metric, obs, lab)] = float(vals.astype(float).mean())
    higher = {}
    for metric in metric_order:
        try:
            higher[metric] = parse_metric(metric).higher_is_better
        except Exception:  # noqa: BLE001 - an unknown name in a foreign results.csv
            higher[metric] = True
    rows, worse_seen, edge_seen = [], False, False
    for key in dict.fromkeys(frame["_key"]):
        group = frame[frame["_key"] == key]
        sub = ok[ok["_key"] == key]
        first = group.iloc[0]
        row = {"method": first["label"]}
        if show_dataset:
            row["dataset"] = first["dataset"]
        if show_params:
            row["params"] = _param_summary(first["params"])
        row["k/L"] = "" if pd.isna(first["rank_ratio"]) else f"{first['rank_ratio']:g}"
        row["k"] = "" if pd.isna(first["_rank"]) else f"{int(first['_rank'])}"
        row["observed"] = f"{first['observed_ratio']:g}"
        row["labelled"] = f"{first['labelled_ratio']:g}"
        reps = sub["repetition"].nunique()
        for metric in metric_order:
            vals = sub.loc[sub["metric"] == metric, "value"].astype(float)
            if len(vals) == 0:
                statuses = sorted(set(group["status"]) - {"ok"}) or ["missing"]
                row[metric] = "/".join(statuses)
                continue
            if vals.isna().all():          # not computed (the message of the cell says why)
                row[metric] = "n/a"
                continue
            factor = unit_factor(metric, percent) if percent else None
            shown, fmt = (vals * factor, ".2f") if factor else (vals, ".4f")
            text = (f"{shown.mean():{fmt}} ± {shown.std(ddof=1):{fmt}}" if reps > 1
                    else f"{shown.mean():{fmt}}")
            base = baseline.get((metric, first["observed_ratio"], first["labelled_ratio"]))
            if base is not None and first["method"] != "constant" and np.isfinite(vals.mean()):
                if (vals.mean() < base) if higher[metric] else (vals.mean() > base):
                    text += f" {WORSE_THAN_CONSTANT}"
                    worse_seen = True
            row[metric] = text
        cells = group.drop_duplicates("cell_id")
        row["selected"], edge = _selection(cells[cells["status"] == "ok"], validation)
        edge_seen = edge_seen or edge
        row["converged"] = _convergence(cells[cells["status"] == "ok"])
        done = sub.drop_duplicates("cell_id")
        fit = done["fit_seconds"].astype(float)
        total = pd.to_numeric(done["cell_seconds"], errors="coerce")
        row["fit s"] = f"{fit.mean():.2f}" if len(fit) else ""
        row["total s"] = f"{total.mean():.2f}" if len(total) and total.notna().any() else ""
        rows.append(row)
    table = pd.DataFrame(rows)
    if percent:
        table = table.rename(columns={m: f"{m} (%)" for m in metric_order
                                      if unit_factor(m, True)})
    for col, unused in (("k/L", ""), ("k", ""), ("observed", "1"), ("labelled", "1"),
                        ("selected", ""), ("converged", ""), ("total s", "")):
        if len(table) and col in table and (table[col] == unused).all():
            table = table.drop(columns=col)
    unconverged = "converged" in table and table["converged"].astype(str).str.startswith("no").any()
    table.attrs["notes"] = [note for seen, note in (
        (worse_seen, f"{WORSE_THAN_CONSTANT} worse than the constant baseline on this metric: "
                     f"the method learned nothing useful for it with these settings"),
        (edge_seen, f"{EDGE} a selected value is the smallest or largest of its candidates: "
                    f"widen the candidate list"),
        (unconverged, "converged no (k/n): k of the row's n fits stopped at their iteration "
                      "limit before their convergence test held, so their figures may still "
                      "move with more iterations: raise `max_iter` (`epochs` or `min_steps` "
                      "for the epoch-based methods), or loosen the solver's tolerance `tol`; "
                      "an empty cell: the method has no convergence test")) if seen]
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
             "|" + "|".join("---" if c in ("method", "dataset", "params") else "---:"
                            for c in cols) + "|"]
    for _, r in table.iterrows():
        lines.append("| " + " | ".join(str(r[c]) for c in cols) + " |")
    return "\n".join(lines) + "\n"


def render_tables(frame: pd.DataFrame, output, *, title: str = "",
                  percent: bool | None = None) -> str:
    """Write table.md, table.csv and table.tex under ``output``; return the Markdown."""
    parts = []
    splits = [s for s in dict.fromkeys(frame["split"].dropna()) if s and s != VALIDATION]
    for split in splits or ["test"]:
        table = wide_table(frame, split=split, percent=percent)
        heading = f"## {title} ({split})" if title else f"## {split}"
        notes = "".join(f"\n{n}\n" for n in table.attrs.get("notes", ()))
        parts.append(heading + "\n\n" + to_markdown(table) + notes)
        if split == (splits or ["test"])[0]:
            atomic_write_text(Path(output) / "table.csv",
                              table.to_csv(index=False, lineterminator="\n"))
            from mlx.tables.render import render_run_latex

            atomic_write_text(Path(output) / "table.tex", render_run_latex(
                table, title=f"{title or 'results'} ({split})", label=title or "results",
                notes=table.attrs.get("notes", ())))
    blanks = frame[(frame["status"] == "ok") & frame["message"].fillna("").astype(str).ne("")]
    blank_msgs = list(dict.fromkeys(f"{r['label']}: {r['message']}"
                                    for _, r in blanks.iterrows()))
    if blank_msgs:
        # ok cells with something to say (a metric left blank, a chosen value at its grid's
        # edge, scaled features, scores that ignore the input): each label's message once
        parts.append("Notes on cells with results:\n\n"
                     + "\n".join(f"- {m}" for m in blank_msgs) + "\n")
    notes = frame[frame["status"] != "ok"].drop_duplicates("cell_id")
    if len(notes):
        parts.append("Cells without results:\n\n" + "\n".join(
            f"- {r['label']} (k/L={r['rank_ratio']}, observed={r['observed_ratio']}, "
            f"rep={r['repetition']}): {r['status']}: {r['message']}"
            for _, r in notes.iterrows()) + "\n")
    md = "\n".join(parts)
    atomic_write_text(Path(output) / "table.md", md)
    return md
