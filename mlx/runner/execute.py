"""Running cells: one cell in-process (:func:`run_cell`), many in a process pool.

:func:`run_cell` is a plain function of a :class:`~mlx.runner.sweep.Cell` with no
global state beyond a per-process memo of loaded data, so it can be shipped to
any executor. It never raises for a failing method: the failure becomes the
cell's status (``skipped``, ``diverged`` or ``error``) and the sweep goes on.
"""

from __future__ import annotations

import itertools
import json
import logging
import os
import time
import traceback
from concurrent.futures import ProcessPoolExecutor, as_completed
from multiprocessing import get_context

import numpy as np

from mlx.errors import DivergenceError, MlxError

__all__ = ["run_cell", "run_cells", "BLAS_ENV_VARS"]

log = logging.getLogger(__name__)

BLAS_ENV_VARS = ("OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "OMP_NUM_THREADS",
                 "BLIS_NUM_THREADS", "VECLIB_MAXIMUM_THREADS", "NUMEXPR_NUM_THREADS")

_DATA_MEMO: dict = {}


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


# ----------------------------------------------------------------------------- data
def _load(cell):
    from mlx.data.catalog import load_split

    key = cell.dataset.key()
    if key not in _DATA_MEMO:
        _DATA_MEMO.clear()  # one dataset at a time per worker keeps memory bounded
        _DATA_MEMO[key] = load_split(cell.dataset)
    return _DATA_MEMO[key]


def _preprocess(steps, X_fit, *X_others):
    from mlx.preprocess import Preprocessor

    pre = Preprocessor(list(steps))
    pre.fit(X_fit)
    return pre, (pre.transform(X_fit),) + tuple(pre.transform(X) for X in X_others)


def _train_view(cell, split):
    """Training labels as the method sees them: restricted to the observed entries."""
    from mlx.masks import MaskSampler, apply_mask, seed_for

    Y = split.train.Y
    if cell.observed_ratio >= 1.0:
        return Y, None
    sampler = MaskSampler(Y.shape, seed_for(cell.seed, "mask", cell.dataset.name, cell.repetition))
    mask = sampler.mask(cell.observed_ratio)
    return apply_mask(Y, mask), mask


def fingerprint(*arrays) -> str:
    """A short content hash of integer index arrays (which entries or rows a cell used).

    Two cells with the same fingerprint saw the same observed entries (or rows); it is
    written to results.csv so a reader can check that without rerunning anything.
    """
    import hashlib

    h = hashlib.sha256()
    for a in arrays:
        a = np.ascontiguousarray(a, dtype=np.int64)
        h.update(str(a.shape).encode())
        h.update(a.tobytes())
    return h.hexdigest()[:12]


def _mask_fingerprint(mask) -> str:
    """Fingerprint of an observed-label mask; ``"all"`` when every entry is observed."""
    if mask is None:
        return "all"
    m = mask.tocsr()
    m.sort_indices()
    return fingerprint(np.asarray(m.shape), m.indptr, m.indices)


def _validation_rows(cell, n: int):
    from mlx.masks import rng_for

    rng = rng_for(cell.seed, "validation", cell.dataset.name, cell.repetition)
    perm = rng.permutation(n)
    n_val = max(1, int(round(cell.validation_fraction * n)))
    return np.sort(perm[n_val:]), np.sort(perm[:n_val])


def _make_method(cell, params: dict, n_labels: int, method_seed: int):
    from mlx.methods import METHODS

    cls = METHODS.get(cell.method)
    params = dict(params)
    rank = None
    if cls.uses_rank:
        rank = max(1, int(round(cell.rank_ratio * n_labels)))
        params["rank"] = rank
    if "random_state" in cls._param_names():
        params["random_state"] = method_seed
    return cls(**params), rank


def _evaluate(method, cell, X, Y, metrics, threshold):
    from mlx.metrics import evaluate

    t = threshold if threshold is not None else method.threshold
    return evaluate(method.decision_function, X, Y, list(metrics), batch_size=cell.batch_size,
                    threshold=t, auc_degenerate=cell.auc_degenerate)


def _select(cell, split, Y_obs, mask, fixed: dict, method_seed: int):
    """Choose the ``select`` parameters on a validation split of the training data."""
    select = json.loads(cell.select)
    keys = sorted(select)
    train_rows, val_rows = _validation_rows(cell, split.train.n_samples)
    Y_fit, Y_val = Y_obs[train_rows], Y_obs[val_rows]
    obs_fit = mask[train_rows] if mask is not None else None
    from mlx.metrics import parse_metric

    better = max if parse_metric(cell.selection_metric).higher_is_better else min
    trials = []
    for values in itertools.product(*(select[k] for k in keys)):
        cand = dict(zip(keys, values))
        steps = cand.pop("preprocess", None)
        steps = [json.loads(s) for s in cell.preprocess] if steps is None else steps
        _, (X_fit, X_val) = _preprocess(steps, split.train.X[train_rows], split.train.X[val_rows])
        method, _ = _make_method(cell, {**fixed, **cand}, split.train.n_labels, method_seed)
        reason = method.skip(n_samples=X_fit.shape[0], n_features=X_fit.shape[1],
                             n_labels=Y_fit.shape[1], observed_ratio=cell.observed_ratio)
        if reason:
            return None, reason, [], None
        n_eval = None
        try:
            method.fit(X_fit, Y_fit, observed=obs_fit)
            value, n_eval = _evaluate(method, cell, X_val, Y_val, [cell.selection_metric],
                                      cell.threshold)[cell.selection_metric]
        except DivergenceError:
            value = float("nan")
        record = dict(zip(keys, values))
        trials.append({"params": record, "value": _jsonable(value),
                       "n_eval": None if n_eval is None else int(n_eval)})
    finite = [t for t in trials if t["value"] is not None and np.isfinite(t["value"])]
    if not finite:
        raise DivergenceError("every candidate of 'select' diverged on the validation split; "
                              "widen the candidate lists (e.g. larger l2_reg)")
    best_value = better(t["value"] for t in finite)
    best = next(t for t in finite if t["value"] == best_value)  # first of ties: config order
    return best["params"], None, trials, fingerprint(val_rows)


BLAS_THREADS_PER_CELL = 1


def run_cell(cell) -> dict:
    """Run one cell and return its record (never raises for a method failure).

    BLAS (and OpenMP) run on ``BLAS_THREADS_PER_CELL`` thread inside the cell, whatever
    process or executor runs it: a threaded BLAS sums in an order that depends on the
    number of threads, so pinning it here is what makes a cell's numbers the same with
    ``--jobs 1``, ``--jobs 2`` or on a cluster worker.
    """
    from threadpoolctl import threadpool_limits

    with threadpool_limits(limits=BLAS_THREADS_PER_CELL):
        return _run_cell(cell)


def _run_cell(cell) -> dict:
    from mlx.masks import seed_for

    record = {"cell_id": cell.cell_id(), "status": "ok", "message": "", "rank": None,
              "seed": None, "selected": None, "trials": None, "mask_fingerprint": None,
              "validation_fingerprint": None, "fit_seconds": None,
              "predict_seconds": None, "peak_rss_mb": None, "converged": None, "n_iter": None,
              "results": {}}
    _reset_peak_rss()
    try:
        split = _load(cell)
        method_seed = seed_for(cell.seed, "method", cell.model_key())
        record["seed"] = method_seed
        fixed = json.loads(cell.params)
        Y_obs, mask = _train_view(cell, split)
        record["mask_fingerprint"] = _mask_fingerprint(mask)
        chosen = {}
        if json.loads(cell.select):
            chosen, reason, trials, val_fp = _select(cell, split, Y_obs, mask, fixed, method_seed)
            if reason:
                record.update(status="skipped", message=reason)
                return record
            record["selected"] = chosen
            record["trials"] = trials
            record["validation_fingerprint"] = val_fp
        chosen = dict(chosen)
        steps = chosen.pop("preprocess", None)
        steps = [json.loads(s) for s in cell.preprocess] if steps is None else steps
        method, rank = _make_method(cell, {**fixed, **chosen}, split.train.n_labels, method_seed)
        record["rank"] = rank
        reason = method.skip(n_samples=split.train.n_samples, n_features=split.train.n_features,
                             n_labels=split.train.n_labels, observed_ratio=cell.observed_ratio)
        if reason:
            record.update(status="skipped", message=reason)
            return record
        _, (X_train, X_test) = _preprocess(steps, split.train.X, split.test.X)
        t0 = time.perf_counter()
        method.fit(X_train, Y_obs, observed=mask)
        record["fit_seconds"] = time.perf_counter() - t0
        record["converged"] = _jsonable(getattr(method, "converged_", None))
        n_iter = getattr(method, "n_iter_", None)
        if n_iter is not None and np.ndim(n_iter) > 0:  # per-label counts: report the largest
            n_iter = int(np.max(n_iter)) if np.size(n_iter) else 0
        record["n_iter"] = _jsonable(n_iter)
        t0 = time.perf_counter()
        for split_name in cell.eval_splits:
            X, Y = (X_test, split.test.Y) if split_name == "test" else (X_train, split.train.Y)
            res = _evaluate(method, cell, X, Y, cell.metrics, cell.threshold)
            record["results"][split_name] = {m: [_jsonable(v), int(n)] for m, (v, n) in res.items()}
        record["predict_seconds"] = time.perf_counter() - t0
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
def _init_worker(threads: int) -> None:
    # Spawned workers inherit the pinned environment before numpy loads; this also
    # quietens per-worker logging to warnings.
    for var in BLAS_ENV_VARS:
        os.environ[var] = str(threads)


def run_cells(cells, *, jobs: int, on_done, blas_threads: int | None = None) -> None:
    """Run ``cells``; call ``on_done(cell, record)`` in the parent as each finishes.

    With ``jobs == 1`` cells run in this process. Otherwise a pool of ``jobs``
    spawned workers, each with BLAS pinned to ``blas_threads`` (default 1).
    """
    if jobs <= 1 or len(cells) <= 1:
        for cell in cells:
            on_done(cell, run_cell(cell))
        return
    threads = blas_threads or BLAS_THREADS_PER_CELL
    saved = {v: os.environ.get(v) for v in BLAS_ENV_VARS}
    for var in BLAS_ENV_VARS:
        os.environ[var] = str(threads)
    try:
        with ProcessPoolExecutor(max_workers=jobs, mp_context=get_context("spawn"),
                                 initializer=_init_worker, initargs=(threads,)) as pool:
            futures = {pool.submit(run_cell, cell): cell for cell in cells}
            for fut in as_completed(futures):
                on_done(futures[fut], fut.result())
    finally:
        for var, val in saved.items():
            if val is None:
                os.environ.pop(var, None)
            else:
                os.environ[var] = val
