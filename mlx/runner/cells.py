"""Running cells: one cell in-process (:func:`run_cell`), many in a process pool.

:func:`run_cell` is a plain function of a :class:`~mlx.runner.sweep.Cell` with no
global state beyond a per-process memo of loaded data, so it can be shipped to
any executor. It never raises for a failing method: the failure becomes the
cell's status (``skipped``, ``diverged`` or ``error``) and the sweep goes on.
"""

from __future__ import annotations

import contextlib
import itertools
import logging
import os
import signal
import threading
import time
import traceback
from typing import TYPE_CHECKING

from mlx.errors import DivergenceError, Interrupted, MlxError
from mlx.lazy import lazy_module

np = lazy_module("numpy")   # read in a cell, not when a command imports the runner

if TYPE_CHECKING:
    from concurrent.futures import ProcessPoolExecutor

__all__ = ["run_cell", "run_cell_record", "run_cells", "stop_on_signals", "BLAS_ENV_VARS",
           "cell_threads"]

log = logging.getLogger(__name__)

BLAS_ENV_VARS = ("OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "OMP_NUM_THREADS",
                 "BLIS_NUM_THREADS", "VECLIB_MAXIMUM_THREADS", "NUMEXPR_NUM_THREADS")

# ----------------------------------------------------------------------------- memory
def _reset_peak_rss() -> None:
    """Reset the kernel's peak-RSS counter of this process (Linux; no-op elsewhere)."""
    try:
        with open("/proc/self/clear_refs", "w") as fh:
            fh.write("5")
    except OSError:
        pass


def _peak_rss_mb() -> float | None:
    try:
        with open("/proc/self/status") as fh:
            for line in fh:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024.0
    except OSError:
        pass
    try:
        import resource
        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0
    except (ImportError, OSError):  # pragma: no cover
        return None


# ----------------------------------------------------------------------------- cells
def _preprocess(steps, X_fit, *X_others):
    from mlx.preprocess import Preprocessor

    pre = Preprocessor(list(steps))
    pre.fit(X_fit)
    return pre, (pre.transform(X_fit),) + tuple(pre.transform(X) for X in X_others)


def _make_method(cell, params: dict, n_labels: int, method_seed: int):
    """The method of ``cell`` with the runner's parameters (rank, random_state, and the task
    object as ``task``); a ``rank_ratio`` in ``params`` (from ``select``) sets the rank."""
    from mlx.methods import METHODS
    from mlx.tasks import get_task

    cls = METHODS.get(cell.method)
    params = dict(params)
    rank_ratio = params.pop("rank_ratio", None)
    rank = None
    if cls.uses_rank:
        rank = cell.rank_for(n_labels, rank_ratio)
        params["rank"] = rank
    names = cls._param_names()
    if "random_state" in names:
        params["random_state"] = method_seed
    if "task" in names:
        params["task"] = get_task(cell.task)
    return cls(**params), rank


def _context(cell, n_samples: int, n_features: int, n_labels: int):
    from mlx.methods.base import FitContext

    return FitContext(task=cell.task, n_samples=n_samples, n_features=n_features,
                      n_labels=n_labels, observed_ratio=cell.observed_ratio,
                      labelled_ratio=cell.labelled_ratio)


def _fit(method, X, Y, mask, X_unlabelled):
    """``method.fit``, handing unlabelled rows only to methods that use them."""
    if getattr(method, "uses_unlabelled", False):
        return method.fit(X, Y, observed=mask, unlabelled=X_unlabelled)
    return method.fit(X, Y, observed=mask)


def _evaluate(method, cell, X, Y, metrics, threshold, Y_train):
    """``{metric: (value, n_eval)}``; thresholded metrics are ``(None, 0)`` when neither the
    config nor the method gives a decision threshold."""
    from mlx.metrics import evaluate, parse_metric
    from mlx.tasks import get_task

    t = threshold if threshold is not None else method.threshold
    blank = [] if t is not None else [m for m in metrics if parse_metric(m).family.uses_threshold]
    computed = [m for m in metrics if m not in blank]
    predict = get_task(cell.task).predictor(method.decision_function, Y_train)
    out = {}
    if computed:
        out = evaluate(predict, X, Y, computed, batch_size=cell.evaluation.batch_size,
                       threshold=0.0 if t is None else t,
                       auc_degenerate=cell.evaluation.auc_degenerate)
    out.update({m: (None, 0) for m in blank})
    return out


SUMMARIES = "_summaries"   # record keys the cell store writes to files, not to the JSON
MODEL = "_model"


def _summarize(method, cell, X, Y, Y_train) -> dict:
    """What every metric needs of the method's scores on ``(X, Y)`` (mlx.metrics.stored)."""
    from mlx.metrics import parse_metric
    from mlx.metrics.stored import summarize
    from mlx.tasks import get_task

    t = cell.threshold if cell.threshold is not None else method.threshold
    predict = get_task(cell.task).predictor(method.decision_function, Y_train)
    # At least as deep as the config's own @k metrics need.
    ev = cell.evaluation
    depth = max([ev.store_top_k] + [parse_metric(m).k or 0 for m in ev.metrics])
    return summarize(predict, X, Y, task=cell.task, threshold=t,
                     auc_degenerate=ev.auc_degenerate, batch_size=ev.batch_size, top_k=depth)


def results_from_summary(summary: dict, metrics) -> dict:
    """A record's ``results[split]``: ``{metric: [value, n_eval]}`` from a summary."""
    from mlx.metrics.stored import metrics_from_summary

    res = metrics_from_summary(summary, metrics)
    return {m: [_jsonable(v), int(n)] for m, (v, n) in res.items()}


def _model_bytes(cell, method, pre, Y_train) -> bytes:
    """The fitted model with its preprocessing, as joblib bytes (see mlx.runner.models)."""
    import io

    import joblib

    from mlx.runner.models import FittedCell
    from mlx.tasks import get_task

    levels = get_task(cell.task).levels(Y_train)
    buf = io.BytesIO()
    joblib.dump(FittedCell(cell_id=cell.cell_id(), description=cell.describe(), task=cell.task,
                           preprocessor=pre, estimator=method, levels=levels), buf, compress=3)
    return buf.getvalue()


def _blank_note(method, cell) -> str:
    """Why thresholded metrics are blank for this cell ("" when they are not)."""
    from mlx.metrics import parse_metric

    if cell.threshold is not None or method.threshold is not None:
        return ""
    blank = [m for m in cell.evaluation.metrics if parse_metric(m).family.uses_threshold]
    if not blank:
        return ""
    return (f"{', '.join(blank)} not computed: {cell.method} has no decision threshold (its "
            f"scores only rank labels); set methods[{cell.method_index}].threshold to compute "
            f"them")


INPUT_CHECK_ROWS = 256
"""How many test rows :func:`_input_note` scores to see whether the scores vary."""


def _input_note(method, cell, X) -> str:
    """A note when the fitted model ignores its input: distinct rows among the first
    :data:`INPUT_CHECK_ROWS` of ``X`` all get exactly the same scores, so every figure of the
    cell is a constant predictor's ("" otherwise, and for the ``constant`` method)."""
    import scipy.sparse as sp

    if cell.method == "constant":
        return ""
    rows = sp.csr_matrix(X[:INPUT_CHECK_ROWS])
    m = rows.shape[0]
    if m < 2 or abs(rows - rows[np.zeros(m, dtype=np.int64)]).sum() == 0:
        return ""                                    # fewer than two distinct rows: no evidence
    scores = np.asarray(method.decision_function(rows))
    if not (scores == scores[:1]).all():
        return ""
    return (f"the scores do not depend on the input: {m} distinct test rows all get the same "
            f"scores, so every figure is a constant predictor's; check the method's settings "
            f"and preprocessing for this data")


def _select(cell, data, fixed: dict, method_seed: int):
    """Choose the ``select`` parameters on validation rows of the labelled training data.

    Each candidate is fitted on the fit rows of every fold and scored on that fold's
    validation rows; its value is the mean over folds (one fold for a hold-out split). Test
    rows are never seen: ``data.train`` holds training rows only.
    """
    from mlx.metrics import parse_metric
    from mlx.runner.protocol import selection_folds
    from mlx.tasks import get_task

    select = cell.select.thaw()
    keys = sorted(select)
    rows = data.X_fit_rows
    X_all, Y_all, mask_all = data.train.X[rows], data.Y_fit, data.mask
    X_unlab = data.train.X[data.unlabelled] if data.labelled is not None else None
    folds, folds_fp = selection_folds(cell, Y_all, get_task(cell.task))
    metric = cell.selection.metric
    better = max if parse_metric(metric).higher_is_better else min
    trials = []
    for values in itertools.product(*(select[k] for k in keys)):
        cand = dict(zip(keys, values))
        steps = cand.pop("preprocess", None)
        steps = cell.steps() if steps is None else steps
        fold_values, n_eval = [], 0
        for fit_rows, val_rows in folds:
            X_parts = [X_all[fit_rows], X_all[val_rows]] + ([X_unlab] if X_unlab is not None
                                                            else [])
            _, X_pre = _preprocess(steps, *X_parts)
            X_fit, X_val = X_pre[0], X_pre[1]
            Y_fit = Y_all[fit_rows]
            method, _ = _make_method(cell, {**fixed, **cand}, Y_all.shape[1], method_seed)
            reason = method.skip(_context(cell, X_fit.shape[0], X_fit.shape[1], Y_fit.shape[1]))
            if reason:
                return None, reason, [], None
            try:
                _fit(method, X_fit, Y_fit, None if mask_all is None else mask_all[fit_rows],
                     X_pre[2] if X_unlab is not None else None)
                value, n = _evaluate(method, cell, X_val, Y_all[val_rows], [metric],
                                     cell.threshold, Y_fit)[metric]
            except DivergenceError:
                value, n = float("nan"), 0
            fold_values.append(value)
            n_eval += int(n)
        value = float(np.mean(fold_values)) if all(np.isfinite(fold_values)) else float("nan")
        trial = {"params": dict(zip(keys, values)), "value": _jsonable(value),
                 "n_eval": n_eval or None}
        if len(folds) > 1:
            trial["folds"] = [_jsonable(v) for v in fold_values]
        trials.append(trial)
    finite = [t for t in trials if t["value"] is not None and np.isfinite(t["value"])]
    if not finite:
        raise DivergenceError("every candidate of 'select' diverged on the validation split; "
                              "widen the candidate lists (e.g. larger l2_reg)")
    best_value = better(t["value"] for t in finite)
    best = next(t for t in finite if t["value"] == best_value)  # first of ties: config order
    return best["params"], None, trials, folds_fp


BLAS_THREADS_PER_CELL = 1
"""BLAS threads of a cell: :data:`mlx.numerics.spmm.BLAS_THREADS`, which :func:`run_cell` applies
(a test keeps the two equal; the runner reads this one without importing numpy)."""


def cell_threads(jobs: int, n_cells: int, cores: int | None = None) -> int:
    """Threads of each cell's sparse kernels: the cores divided among the cells that run at
    once (``min(jobs, n_cells)``), at least 1. ``cores`` defaults to the cores this process
    may use (:func:`mlx.numerics.spmm.available_cores`)."""
    from mlx.numerics.spmm import available_cores

    running = max(1, min(int(jobs), int(n_cells)))
    return max(1, (available_cores() if cores is None else int(cores)) // running)


def run_cell(cell, threads: int = 1) -> dict:
    """Run one cell and return its record (never raises for a method failure).

    BLAS (and OpenMP) run on ``BLAS_THREADS_PER_CELL`` thread inside the cell, whatever
    process or executor runs it: a threaded BLAS sums in an order that depends on the
    number of threads, so pinning it here is what makes a cell's numbers the same with
    ``--jobs 1``, ``--jobs 2`` or on a cluster worker. mlx's own threaded kernels
    (:mod:`mlx.numerics.spmm`) get ``threads``: their results do not depend on it.
    """
    from mlx.numerics.spmm import fit_threads

    with fit_threads(threads):
        return _run_cell(cell)


def run_cell_record(cell) -> dict:
    """A cell's record before it runs: status ``ok``, every other field empty."""
    from mlx import __version__

    return {"cell_id": cell.cell_id(), "mlx_version": __version__, "status": "ok",
            "message": "", "rank": None,
            "seed": None, "selected": None, "trials": None, "mask_fingerprint": None,
            "validation_fingerprint": None, "split_fingerprint": None, "fit_seconds": None,
            "predict_seconds": None, "peak_rss_mb": None, "converged": None, "n_iter": None,
            "results": {}}


def _run_cell(cell) -> dict:
    from mlx.runner.protocol import cell_data
    from mlx.seeding import method_seed as seed_of

    record = run_cell_record(cell)
    _reset_peak_rss()
    started = time.perf_counter()
    try:
        data = cell_data(cell)
        record["split_fingerprint"] = data.split_fingerprint
        record["mask_fingerprint"] = data.label_fingerprint
        method_seed = seed_of(cell.seed, cell.dataset.identity, cell.repetition, cell.method)
        record["seed"] = method_seed
        fixed = cell.params.thaw()
        chosen = {}
        if cell.select:
            chosen, reason, trials, val_fp = _select(cell, data, fixed, method_seed)
            if reason:
                record.update(status="skipped", message=reason)
                return record
            record["selected"] = chosen
            record["trials"] = trials
            record["validation_fingerprint"] = val_fp
        chosen = dict(chosen)
        steps = chosen.pop("preprocess", None)
        steps = cell.steps() if steps is None else steps
        train, test = data.train, data.test
        method, rank = _make_method(cell, {**fixed, **chosen}, train.n_labels, method_seed)
        record["rank"] = rank
        rows = data.X_fit_rows
        reason = method.skip(_context(cell, len(rows), train.n_features, train.n_labels))
        if reason:
            record.update(status="skipped", message=reason)
            return record
        pre, (X_train, X_test) = _preprocess(steps, train.X, test.X)
        X_unlab = X_train[data.unlabelled] if data.labelled is not None else None
        from mlx.numerics.gram import cold_caches  # scipy.linalg: not at import

        with cold_caches():  # fit_seconds is a cold fit, whatever this worker ran before
            t0 = time.perf_counter()
            _fit(method, X_train[rows], data.Y_fit, data.mask, X_unlab)
            record["fit_seconds"] = time.perf_counter() - t0
        auto = getattr(method, "auto_", None) or {}
        if auto:   # ``auto`` parameters chosen inside the fit: recorded like ``select``'s
            record["selected"] = {**(record["selected"] or {}),
                                  **{p: _jsonable(c.value) for p, c in auto.items()}}
        record["converged"] = _jsonable(getattr(method, "converged_", None))
        n_iter = getattr(method, "n_iter_", None)
        if n_iter is not None and np.ndim(n_iter) > 0:  # per-label counts: report the largest
            n_iter = int(np.max(n_iter)) if np.size(n_iter) else 0
        record["n_iter"] = _jsonable(n_iter)
        t0 = time.perf_counter()
        summaries = {}
        for split_name in cell.evaluation.splits:
            X, Y = (X_test, test.Y) if split_name == "test" else (X_train, train.Y)
            summaries[split_name] = _summarize(method, cell, X, Y, data.Y_fit)
            record["results"][split_name] = results_from_summary(summaries[split_name],
                                                                 cell.evaluation.metrics)
        record["predict_seconds"] = time.perf_counter() - t0
        record[SUMMARIES] = summaries
        if cell.save_model:
            record[MODEL] = _model_bytes(cell, method, pre, data.Y_fit)
        # A method's own note about this fit (``message_``, e.g. classes without a labelled
        # example), then the runner's (metrics left blank).
        notes = [_input_note(method, cell, X_test),
                 str(getattr(method, "message_", "") or ""), _blank_note(method, cell)]
        notes += [c.note() for c in auto.values()]
        record["message"] = "; ".join(n for n in notes if n)
    except DivergenceError as exc:
        record.update(status="diverged", message=str(exc), results={})
    except MlxError as exc:
        record.update(status="error", message=str(exc), results={})
    except Exception as exc:  # a bug or a numerical failure inside a method: keep the sweep going
        msg = f"{type(exc).__name__}: {exc}".splitlines()[0]
        record.update(status="error", message=msg, results={},
                      traceback=traceback.format_exc())
    finally:
        record["peak_rss_mb"] = _peak_rss_mb()
        record["cell_seconds"] = time.perf_counter() - started
    return record


def _jsonable(v):
    if isinstance(v, (np.generic,)):
        return v.item()
    if isinstance(v, (list, tuple)):
        return [_jsonable(x) for x in v]
    if isinstance(v, np.ndarray):
        return _jsonable(v.tolist())
    if isinstance(v, float) and not np.isfinite(v):
        return None
    return v


# ----------------------------------------------------------------------------- pools
def _init_worker(threads: int, parent: int | None = None) -> None:
    # Spawned workers inherit the pinned environment before numpy loads. They ignore SIGINT:
    # Ctrl-C reaches the whole process group, and the parent alone decides to stop (it then
    # terminates the workers), so no worker prints a traceback of its own.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    for var in BLAS_ENV_VARS:
        os.environ[var] = str(threads)
    if parent is not None:
        exit_with_parent(parent)


#: How often the watchdog of :func:`exit_with_parent` looks for its parent (seconds).
WATCHDOG_SECONDS = 0.5


def exit_with_parent(parent: int) -> None:
    """End this process as soon as its parent ``parent`` is gone, however it ended.

    A parent killed with SIGKILL (the out-of-memory killer) cannot stop its workers, which
    would otherwise wait on its pipe forever. On Linux the kernel sends this process SIGKILL
    when the parent dies (``prctl(PR_SET_PDEATHSIG)``); everywhere, a daemon thread checks
    every :data:`WATCHDOG_SECONDS` that the parent is still this process's parent and exits
    when it is not (the child of a dead parent is re-parented to another process).
    """
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(1, int(signal.SIGKILL), 0, 0, 0)        # PR_SET_PDEATHSIG = 1
    except (OSError, AttributeError):                       # not Linux: the watchdog alone
        pass
    if os.getppid() != parent:                              # died before the line above
        os._exit(1)

    def watch():
        while os.getppid() == parent:
            time.sleep(WATCHDOG_SECONDS)
        os._exit(1)

    threading.Thread(target=watch, name="mlx-parent-watchdog", daemon=True).start()


@contextlib.contextmanager
def stop_on_signals():
    """Turn SIGINT and SIGTERM into :class:`~mlx.errors.Interrupted` in the main thread.

    Without this, SIGTERM would end the parent at once and leave its worker processes (and
    multiprocessing's resource tracker) running; as an exception it unwinds through
    :func:`run_cells`, which cancels what has not started and terminates the workers.
    Outside the main thread (where signals cannot be handled) it does nothing.
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def handler(signum, frame):
        raise Interrupted(signum)

    previous = {sig: signal.signal(sig, handler) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield
    finally:
        for sig, old in previous.items():
            signal.signal(sig, old)


def _terminate(pool: ProcessPoolExecutor) -> None:
    """Cancel queued cells and stop the workers now (cells in progress are abandoned)."""
    # The executor has no public way to stop running tasks: take its processes first, then
    # cancel the queue and end them.
    processes = list((getattr(pool, "_processes", None) or {}).values())
    pool.shutdown(wait=False, cancel_futures=True)
    _stop_processes(processes)


def _stop_processes(processes, grace: float = 0.0) -> None:
    """End ``processes``: those still running after ``grace`` seconds get SIGTERM, those
    that ignore it SIGKILL after 1 s more."""
    deadline = time.monotonic() + grace
    for proc in processes:
        proc.join(max(0.0, deadline - time.monotonic()))
    for proc in processes:
        if proc.is_alive():
            proc.terminate()
    deadline = time.monotonic() + 1.0
    for proc in processes:
        proc.join(max(0.0, deadline - time.monotonic()))
        if proc.is_alive():
            proc.kill()
            proc.join(1.0)


def run_cells(cells, *, jobs: int, on_done, blas_threads: int | None = None,
              on_start=None) -> None:
    """Run ``cells``; call ``on_done(cell, record)`` in the parent as each finishes.

    ``on_start(cell)``, if given, is called as each cell is handed to a worker (or, with one
    job, just before it runs here); the pool runs them first in, first out.

    With ``jobs == 1`` cells run in this process. Otherwise a pool of ``jobs`` spawned
    workers, each with BLAS pinned to ``blas_threads`` (default 1), is fed at most
    ``2 * jobs`` cells at a time, so an interruption (any exception here, e.g.
    :class:`~mlx.errors.Interrupted`) has little to cancel: queued cells are cancelled, the
    workers terminated, and every cell already passed to ``on_done`` stays done.

    Cells with a time budget (``Cell.budget``) always run in worker processes, one cell per
    worker at a time, whatever ``jobs`` is (:func:`_run_budgeted`): a cell still running when
    its budget is spent is stopped with its worker and recorded ``over_budget``.

    Each cell's sparse kernels run on :func:`cell_threads` threads (the cores shared by the
    cells that run at once: one cell alone on 2 cores gets 2, ``jobs=2`` with two or more
    cells 1 each); the results are the same for any count.
    """
    per_cell = cell_threads(jobs, len(cells))               # each cell's kernel threads
    budgeted = any(getattr(cell, "budget", None) is not None for cell in cells)
    if not budgeted and (jobs <= 1 or len(cells) <= 1):
        for cell in cells:
            if on_start is not None:
                on_start(cell)
            on_done(cell, run_cell(cell, per_cell))
        return
    threads = blas_threads or BLAS_THREADS_PER_CELL
    saved = {v: os.environ.get(v) for v in BLAS_ENV_VARS}
    for var in BLAS_ENV_VARS:
        os.environ[var] = str(threads)
    try:
        if budgeted:
            _run_budgeted(cells, jobs=jobs, per_cell=per_cell, threads=threads,
                          on_done=on_done, on_start=on_start)
        else:
            _run_pool(cells, jobs=jobs, per_cell=per_cell, threads=threads, on_done=on_done,
                      on_start=on_start)
    finally:
        for var, val in saved.items():
            if val is None:
                os.environ.pop(var, None)
            else:
                os.environ[var] = val


def _run_pool(cells, *, jobs, per_cell, threads, on_done, on_start) -> None:
    from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
    from multiprocessing import get_context

    pool = ProcessPoolExecutor(max_workers=jobs, mp_context=get_context("spawn"),
                               initializer=_init_worker, initargs=(threads, os.getpid()))
    try:
        queue = iter(cells)
        pending = {}

        def fill():
            while len(pending) < 2 * jobs:
                cell = next(queue, None)
                if cell is None:
                    return
                pending[pool.submit(run_cell, cell, per_cell)] = cell
                if on_start is not None:
                    on_start(cell)

        fill()
        while pending:
            done, _ = wait(pending, return_when=FIRST_COMPLETED)
            for fut in done:
                cell = pending.pop(fut)
                on_done(cell, fut.result())
            fill()
    except BaseException:
        _terminate(pool)
        raise
    else:
        pool.shutdown(wait=True)


# ----------------------------------------------------------------------------- budgets
def over_budget_record(cell, elapsed: float) -> dict:
    """The record of a cell stopped after ``elapsed`` seconds, over its ``cell.budget``."""
    record = run_cell_record(cell)
    record.update(status="over_budget", cell_seconds=elapsed, budget_seconds=cell.budget,
                  message=f"stopped after {elapsed:.2f} s, over the budget of "
                          f"{cell.budget:g} s per cell (methods[{cell.method_index}].budget)")
    return record


def _serve_cells(conn, threads: int, parent: int) -> None:
    """A budgeted worker's loop: run each ``(cell, kernel threads)`` received on ``conn``
    and send its record back, until the parent closes the pipe."""
    _init_worker(threads, parent)
    _warm_up()
    conn.send(_READY)                   # start-up done: the parent may hand a cell over
    while True:
        try:
            task = conn.recv()
        except (EOFError, OSError):
            return
        conn.send(run_cell(*task))


def _warm_up() -> None:
    """Import what every cell needs (numpy, SciPy, the data protocol, the method base class
    with scikit-learn) before a budgeted worker reports itself started."""
    import threadpoolctl  # noqa: F401

    import mlx.methods.base  # noqa: F401
    import mlx.numerics.spmm  # noqa: F401
    import mlx.runner.protocol  # noqa: F401


_READY = "ready"
"""What a budgeted worker sends once it has started, before its first cell."""


class _Worker:
    """One spawned process of :func:`_run_budgeted`, running one cell at a time.

    A worker gets a cell only once it has reported itself started (``ready``), so that a
    cell's budget never pays for starting a process (about a second: the interpreter and
    the imports)."""

    def __init__(self, ctx, threads: int):
        self.conn, child = ctx.Pipe()
        self.proc = ctx.Process(target=_serve_cells, args=(child, threads, os.getpid()),
                                daemon=True, name="mlx-cell")
        self.proc.start()
        child.close()
        self.cell, self.started, self.ready = None, 0.0, False

    def hear_ready(self) -> None:
        """Take the start-up message; a process that ended before sending it is an error."""
        try:
            message = self.conn.recv()
        except (EOFError, OSError):
            self.proc.join(5.0)
            raise RuntimeError(f"a worker process for budgeted cells ended while starting "
                               f"(exit code {self.proc.exitcode})") from None
        if message != _READY:                                     # pragma: no cover
            raise RuntimeError(f"a starting worker process sent {message!r}")
        self.ready = True

    def give(self, cell, per_cell: int) -> None:
        self.conn.send((cell, per_cell))
        self.cell, self.started = cell, time.monotonic()

    def deadline(self) -> float | None:
        if self.cell is None or self.cell.budget is None:
            return None
        return self.started + self.cell.budget

    def take(self) -> dict:
        """The record of the cell this worker ran (an ``error`` record if the process died)."""
        cell, self.cell = self.cell, None
        try:
            return self.conn.recv()
        except (EOFError, OSError):
            _stop_processes([self.proc])
            record = run_cell_record(cell)
            record.update(status="error", cell_seconds=time.monotonic() - self.started,
                          message=f"the worker process running the cell ended (exit code "
                                  f"{self.proc.exitcode}; out of memory?)")
            return record


def _run_budgeted(cells, *, jobs, per_cell, threads, on_done, on_start) -> None:
    """Run ``cells`` on ``jobs`` spawned workers, each fed one cell at a time; a cell still
    running ``cell.budget`` seconds after it was handed over is stopped (its worker killed
    and replaced) and passed to ``on_done`` as :func:`over_budget_record`. Its clock starts
    when the cell reaches a started worker: loading the data, selection, fit and scoring
    count, starting a worker process (its interpreter and imports) does not."""
    from multiprocessing import get_context
    from multiprocessing.connection import wait as wait_ready

    ctx = get_context("spawn")
    queue = iter(cells)
    workers = []
    try:
        workers += [_Worker(ctx, threads) for _ in range(max(1, min(jobs, len(cells))))]
        pending = None                  # the next cell, while no started worker is free
        while True:
            for w in workers:
                if w.cell is None and w.ready:
                    cell = pending if pending is not None else next(queue, None)
                    pending = None
                    if cell is None:
                        break
                    w.give(cell, per_cell)
                    if on_start is not None:
                        on_start(cell)
            if pending is None:
                pending = next(queue, None)
            busy = [w for w in workers if w.cell is not None]
            starting = [w for w in workers if not w.ready]
            if not busy and pending is None:
                return
            deadlines = [d for d in (w.deadline() for w in busy) if d is not None]
            timeout = max(0.0, min(deadlines) - time.monotonic()) if deadlines else None
            ready = wait_ready([w.conn for w in busy + starting], timeout)
            now = time.monotonic()
            for w in starting:
                if w.conn in ready:
                    w.hear_ready()
            for w in busy:
                if w.conn in ready:
                    cell = w.cell
                    record = w.take()
                    if not w.proc.is_alive():
                        workers[workers.index(w)] = _Worker(ctx, threads)
                    on_done(cell, record)
                elif w.deadline() is not None and now >= w.deadline():
                    cell, elapsed = w.cell, now - w.started
                    _stop_processes([w.proc])
                    w.conn.close()
                    workers[workers.index(w)] = _Worker(ctx, threads)
                    on_done(cell, over_budget_record(cell, elapsed))
    finally:
        for w in workers:
            w.conn.close()                  # an idle worker's recv ends: it exits
        _stop_processes([w.proc for w in workers], grace=5.0)
