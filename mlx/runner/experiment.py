"""Run a whole experiment: expand, reuse finished cells, execute the rest, write results."""

from __future__ import annotations

import dataclasses
import hashlib
import logging
import os
import signal
import time
from dataclasses import dataclass, replace
from pathlib import Path

import yaml

import mlx
from mlx.config import Config
from mlx.errors import ConfigError, Interrupted, WriteFailedError
from mlx.io import atomic_write_text
from mlx.runner.cells import MODEL, SUMMARIES, run_cells, stop_on_signals
from mlx.runner.output import OutputLock, check_no_links, probe_output, remove_created
from mlx.runner.progress import Progress
from mlx.runner.results import (
    CellStore,
    records_to_frame,
    render_tables,
    system_info,
    write_manifest,
    write_results,
)
from mlx.runner.sweep import canonical_json, expand

__all__ = ["RunSummary", "run_experiment", "default_jobs"]

log = logging.getLogger(__name__)


def default_jobs() -> int:
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # pragma: no cover - not Linux
        return max(1, os.cpu_count() or 1)


@dataclass
class RunSummary:
    output: Path
    n_cells: int
    n_reused: int
    counts: dict
    table_md: str
    errors: list


def _echo(msg: str, quiet: bool) -> None:
    if not quiet:
        from tqdm import tqdm  # 35 ms to import (it reads package metadata): on use

        tqdm.write(msg)


def resume_hint(force: bool) -> str:
    """How to resume: the same command, but without --force (which would recompute all)."""
    if force:
        return "to resume, run the same command without --force (with it, every cell is " \
               "recomputed)"
    return "run the same command again to resume"


def run_experiment(config: Config, *, jobs: int | None = None, force: bool = False,
                   output: str | None = None, only: str | None = None,
                   quiet: bool = False, progress: bool = True,
                   wait: bool = False, backend: str | None = None,
                   scheduler: str | None = None, ship_data: bool | None = None,
                   scheduler_timeout: float = 10.0,
                   heartbeat: float | None = None, save_models: bool = False) -> RunSummary:
    """Run every cell of ``config`` not already finished under its output directory.

    The output directory is checked writable and locked (``wait``: until another run on it
    ends) before any data are loaded. ``backend`` (default: the config's ``runner.backend``)
    is ``"local"``, a pool of ``jobs`` processes, or ``"dask"``: the cells go to the Dask
    scheduler at ``scheduler`` (None: a local Dask cluster of ``jobs`` workers), the data
    scattered once when ``ship_data`` (see :mod:`mlx.runner.dask_backend`); the results are
    the same. ``save_models`` keeps each finished cell's fitted model under ``models/``
    (:func:`mlx.load_model`). SIGINT and SIGTERM stop the run within about a second:
    queued cells are cancelled, workers terminated, finished cells kept in the cell cache,
    and :class:`~mlx.errors.Interrupted` is raised with how many cells are kept. A run that
    fails before finishing any cell leaves no output directory behind.
    """
    out = Path(output or config.output)
    all_cells = expand(config)
    if save_models:
        all_cells = [dataclasses.replace(c, save_model=True) for c in all_cells]
    cells = all_cells
    if only:
        cells = [c for c in all_cells if only in (c.method, c.label)]
        if not cells:
            labels = sorted({c.label for c in all_cells} | {c.method for c in all_cells})
            raise ConfigError(config.source, None, f"--only {only!r} matches no method name or "
                                                   f"label; valid: {', '.join(labels)}")
    backend = backend or config.backend
    if backend not in ("local", "dask"):
        raise ConfigError(config.source, None, f"--backend must be 'local' or 'dask'; got "
                                               f"{backend!r}")
    runner = {"backend": backend,
              "scheduler": scheduler if scheduler is not None else config.scheduler,
              "ship_data": config.ship_data if ship_data is None else ship_data,
              "timeout": scheduler_timeout}
    if backend != "dask" and scheduler is not None:
        raise ConfigError(config.source, None, "--scheduler is only used with --backend dask")
    budgeted = [m for m in config.methods if m.budget is not None]
    if backend == "dask" and budgeted:
        raise ConfigError(config.source, f"methods[{budgeted[0].index}].budget",
                          "time budgets are enforced by the local backend only; drop the "
                          "budgets or run with --backend local")
    if backend == "dask":
        from mlx.runner.dask_backend import _import_distributed, check_scheduler_address

        if scheduler is not None:
            check_scheduler_address(scheduler)
        _import_distributed()                   # fail before touching the output directory
    created = probe_output(out)
    kept = {"n": 0}
    try:
        with OutputLock(out, wait=wait), stop_on_signals():
            check_no_links(out)
            return _run_locked(config, out, all_cells, cells, jobs=jobs, force=force,
                               only=only, quiet=quiet, progress=progress, kept=kept,
                               runner=runner, heartbeat=heartbeat)
    except WriteFailedError as exc:
        raise WriteFailedError(f"{exc}; {kept['n']} cell(s) finished in this run are kept in "
                               f"{out}/cells: {resume_hint(force)}") from None
    except Interrupted as exc:
        raise Interrupted(exc.signum, f"interrupted by {signal.Signals(exc.signum).name}: "
                                      f"{kept['n']} cell(s) finished in this run are kept in "
                                      f"{out}/cells; {resume_hint(force)}") from None
    finally:
        if not kept["n"]:
            remove_created(created)


def _identified(config, all_cells, cells):
    """The config and cells with the data identified by content (checksums of the files,
    :func:`mlx.data.catalog.identify`): cells are keyed and seeded by what the files hold."""
    from mlx.data.catalog import identify

    dataset = identify(config.dataset)
    if dataset is config.dataset:
        return config, all_cells, cells
    config = replace(config, dataset=dataset)
    chosen = {c.order for c in cells}
    save = any(c.save_model for c in all_cells)           # --save-models, not in the config
    all_cells = [replace(c, save_model=save) for c in expand(config)]
    return config, all_cells, [c for c in all_cells if c.order in chosen]


def _current(record, other: set):
    """``record`` when this mlx version computed it; else None (the cell is recomputed), its
    cell id and version added to ``other``."""
    if record is None:
        return None
    version = record.get("mlx_version") or "unknown"
    if version != mlx.__version__:
        other.add((record["cell_id"], version))
        return None
    return record


def _reusable(store: CellStore, cell, other: set) -> dict | None:
    """A finished cell's record with results for every metric ``cell`` asks for, computed
    from its stored score summaries when the record lacks some (no refit); None when the
    cell must run (not finished, computed by another mlx version (added to ``other``), no
    summaries for a new metric, no saved model asked for)."""
    from mlx.runner.cells import results_from_summary
    from mlx.runner.models import model_path

    rec = _current(store.get(cell.cell_id()), other)
    if rec is not None and rec["status"] == "over_budget" and not (
            cell.budget is not None and cell.budget <= (rec.get("budget_seconds") or 0)):
        return None                              # its budget was raised or dropped: run again
    if rec is None or rec["status"] != "ok":
        return rec
    if cell.save_model and not model_path(store.dir.parent, cell.cell_id()).is_file():
        return None
    results = rec.get("results") or {}
    lacking = {split: [m for m in cell.evaluation.metrics if m not in results.get(split, {})]
               for split in cell.evaluation.splits}
    if not any(lacking.values()):
        return rec
    from mlx.metrics.stored import missing_metrics

    summaries = store.summaries(cell.cell_id())
    if summaries is None or any(split not in summaries or missing_metrics(summaries[split], ms)
                                for split, ms in lacking.items() if ms):
        return None
    for split, ms in lacking.items():
        if ms:
            results.setdefault(split, {}).update(results_from_summary(summaries[split], ms))
    rec["results"] = results
    store.put(rec)
    return rec


# Complexity 18 (over 15): the run's steps in order, each with its cleanup.
def _run_locked(config, out: Path, all_cells, cells, *, jobs, force, only, quiet, progress,  # noqa: C901
                kept, runner, heartbeat=None) -> RunSummary:
    jobs = jobs or config.jobs or default_jobs()
    jobs = max(1, min(jobs, len(cells) or 1))
    store = CellStore(out)
    started = time.time()
    config, all_cells, cells = _identified(config, all_cells, cells)

    records, todo, queued, other = {}, [], set(), set()
    for cell in cells:
        rec = None if force else _reusable(store, cell, other)
        if rec is not None:
            records[cell.cell_id()] = rec
        elif cell.cell_id() not in queued:    # methods differing only in label: one fit
            queued.add(cell.cell_id())
            todo.append(cell)
    n_reused = len(records)
    n_other = len(other)
    # Cells outside --only that finished earlier (with this version) stay in results.csv.
    for cell in all_cells if only else ():
        if cell.cell_id() not in records:
            rec = _current(store.get(cell.cell_id()), other)
            if rec is not None:
                records[cell.cell_id()] = rec
    if n_reused:
        _echo(f"{n_reused} of {len(cells)} cells already finished in {out}/cells; "
              f"running {len(todo)} (use --force to recompute)", quiet)
    if other:
        versions = ", ".join(sorted({v for _, v in other}))
        what = [f"recomputing {n_other}"] if n_other else []
        if len(other) > n_other:
            what.append(f"{len(other) - n_other} outside --only left out of results.csv")
        _echo(f"{len(other)} finished cell(s) in {out}/cells were computed by mlx {versions}, "
              f"not {mlx.__version__}: {'; '.join(what)}", quiet)

    if todo:
        # Load (and cache) the data once up front and run every check `mlx validate` runs: a
        # missing or malformed file, targets that do not fit the task or a protocol that
        # cannot be drawn fail the run here with one clear error, before anything is written.
        from mlx.runner.preflight import preflight

        preflight(config, todo)

    # Heavy cells first keeps the pool busy to the end (rank and label count grow cost).
    todo.sort(key=lambda c: (-(c.rank_ratio or 0.0), c.order))

    tracker = Progress(len(todo), quiet=quiet, bar=progress, desc=config.name,
                       jobs=None if runner["backend"] == "dask" else jobs, heartbeat=heartbeat)
    errors = []

    def on_done(cell, record):
        records[cell.cell_id()] = record
        if record["status"] in CellStore.REUSABLE:
            store.put(record)
            kept["n"] += 1
        for key in (SUMMARIES, MODEL):           # on disk now; not held for the whole run
            record.pop(key, None)
        status = record["status"]
        if status == "ok":
            line = f"{cell.describe()} done {record['fit_seconds']:.2f}s"
        else:
            line = f"{cell.describe()} {status}: {record['message']}"
            if status == "error":
                errors.append((cell, record))
                if record.get("traceback"):
                    log.debug("cell %s failed:\n%s", cell.cell_id(), record["traceback"])
        tracker.finished(cell, line)

    from mlx.runner.cells import BLAS_THREADS_PER_CELL

    blas = BLAS_THREADS_PER_CELL
    try:
        if runner["backend"] == "dask":
            from mlx.runner.dask_backend import run_cells_dask

            run_cells_dask(todo, on_done=on_done, scheduler=runner["scheduler"], jobs=jobs,
                           ship_data=runner["ship_data"], timeout=runner["timeout"],
                           force=force)
        else:
            run_cells(todo, jobs=jobs, on_done=on_done, blas_threads=blas,
                      on_start=tracker.dispatched)
    finally:
        tracker.close()

    run_id = time.strftime("%Y%m%d-%H%M%S", time.gmtime(started)) + "-" + \
        hashlib.sha256(canonical_json(config.resolved()).encode()).hexdigest()[:8]
    done_cells = [c for c in all_cells if c.cell_id() in records]
    frame = records_to_frame(done_cells, records, run_id)
    write_results(frame, out)
    header = "".join(f"# override: {o}\n" for o in config.overrides)
    atomic_write_text(out / "config.resolved.yaml",
                 header + yaml.safe_dump(config.resolved(), sort_keys=False,
                                         default_flow_style=None))
    info = system_info(jobs, blas)
    info.update(backend=runner["backend"], scheduler=runner["scheduler"])
    from mlx.runner.cells import cell_threads

    info.update(kernel_threads_per_cell=1 if runner["backend"] == "dask"
                else cell_threads(jobs, len(todo)))
    info.update(config_source=config.source, overrides=list(config.overrides), run_id=run_id,
                n_cells=len(cells), n_reused=n_reused,
                started=time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(started)),
                finished=time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()))
    write_manifest(out, info)
    md = render_tables(frame, out, title=config.name,
                       percent=None if config.units is None else config.units == "percent")
    counts = frame.drop_duplicates("cell_id")["status"].value_counts().to_dict()
    return RunSummary(output=out, n_cells=len(done_cells), n_reused=n_reused, counts=counts,
                      table_md=md, errors=errors)
