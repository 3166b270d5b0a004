"""The LIBLINEAR driver: one linear model per target column, and liblinear's own account of
each fit (iterations run and whether it stopped at its cap).

:func:`train_columns` fits one liblinear model per column of a target matrix that is never
formed: the features are copied into liblinear's node array once, and each column gets a
light ``problem`` that points at the rows it trains on, with its own targets. BR (one
classifier per label) and RegLand (one SVR per target) both use it.

liblinear's Python binding returns only the model; the solvers report their iterations and
their iteration cap on the print hook (``iter  N f ...`` lines of the primal Newton solvers,
``optimization finished, #iter = N`` of the dual coordinate descent ones, and ``WARNING:
reaching max number of ... iterations`` when they stop at the cap, which the binding does
not let one change). :func:`train` routes that hook to the training thread's record.
"""

from __future__ import annotations

import ctypes
import re
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp
from liblinear.liblinear import (
    PRINT_STRING_FUN,
    ctypes_print_null,
    feature_node,
    liblinear,
    parameter,
    problem,
    toPyModel,
)

__all__ = ["RAND_SOLVERS", "LiblinearFit", "capturing", "seed_c_rand", "train", "train_columns"]

RAND_SOLVERS = frozenset({1, 3, 4, 5, 6, 7, 12, 13})
"""liblinear ``-s`` codes of the dual and L1 coordinate-descent solvers, which draw their
coordinate order from the C library's ``rand()``: :func:`train_columns` seeds it before each of
their fits and runs them one at a time (``rand()``'s state is shared by every thread)."""

_local = threading.local()
_DUAL_ITER = re.compile(rb"#iter = (\d+)")


def _on_message(message: bytes) -> None:
    """Count the iterations liblinear reports for the fit this thread runs."""
    record = getattr(_local, "record", None)
    if record is None:
        return
    if message.startswith(b"iter"):                      # one line per primal Newton step
        record[0] += 1
    found = _DUAL_ITER.search(message)
    if found:                                            # the dual solvers' final count
        record[0] = int(found.group(1))
    if b"reaching max number" in message:
        record[1] = True


_PRINT_CAPTURE = PRINT_STRING_FUN(_on_message)   # module-level: never collected


@contextmanager
def capturing():
    """Route liblinear's messages to :func:`train`'s records while the block runs (then
    silence them again). :func:`train` may run in several threads inside one block."""
    liblinear.set_print_string_function(_PRINT_CAPTURE)
    try:
        yield
    finally:
        liblinear.set_print_string_function(ctypes_print_null)


def train(prob, param):
    """``liblinear.train`` inside :func:`capturing`: ``(model, n_iter, converged)``, with
    ``converged`` False when the solver stopped at its iteration cap."""
    _local.record = record = [0, False]
    try:
        model = toPyModel(liblinear.train(prob, param))
    finally:
        _local.record = None
    return model, record[0], not record[1]


def seed_c_rand(seed: int) -> None:
    """Seed the C library's ``rand()``, which liblinear's coordinate-descent solvers draw their
    coordinate order from, so that their fits are reproducible."""
    try:
        ctypes.CDLL(None).srand(ctypes.c_uint(seed & 0xFFFFFFFF))
    except (OSError, AttributeError):  # pragma: no cover - no C library in the namespace
        pass


@dataclass(frozen=True)
class LiblinearFit:
    """Outcome of :func:`train_columns`.

    Attributes
    ----------
    W : ndarray of shape (n_features, n_columns), or (n_features + 1, n_columns) with a bias
        Column ``j`` holds column ``j``'s weights (the bias weight last); zero for columns not
        trained.
    n_iter : ndarray of int, shape (n_columns,)
        Iterations liblinear reported per column (Newton steps of the primal solvers,
        coordinate-descent passes of the dual ones); 0 for columns not trained.
    converged : ndarray of bool, shape (n_columns,)
        False where liblinear stopped at its own iteration cap before its tolerance.
    """

    W: np.ndarray
    n_iter: np.ndarray
    converged: np.ndarray


def train_columns(X: sp.csr_matrix,
                  targets: Callable[[int], tuple[np.ndarray | None, np.ndarray]],
                  n_columns: int, *, solver: int, C: float, eps: float,
                  p: float | None = None, bias: float = -1.0,
                  columns: Sequence[int] | None = None, seed: int = 0,
                  n_jobs: int = 1) -> LiblinearFit:
    """One liblinear fit (``-s solver``) per target column, on the rows of ``X`` it names.

    Parameters
    ----------
    X : csr_matrix of shape (n_samples, n_features)
        Features, copied into liblinear's node array once and shared by every fit.
    targets : callable
        ``targets(j) -> (rows, y)``: the rows column ``j`` trains on (an index array, or None
        for every row) and their targets (``+-1`` for classification, values for regression).
        Called for one column at a time, so the target matrix is never formed.
    n_columns : int
        Columns of the result.
    solver : int
        liblinear's ``-s`` code.
    C, eps : float
        liblinear's ``-c`` and ``-e``.
    p : float, optional
        liblinear's ``-p`` (the insensitive zone of the SVR solvers).
    bias : float
        liblinear's ``-B``: a constant feature of this value when ``>= 0`` (its weight is the
        last row of ``W``).
    columns : sequence of int, optional
        The columns to train (default: all); the others get zero weights.
    seed : int
        For the solvers in :data:`RAND_SOLVERS`, ``rand()`` is seeded with ``seed + j`` before
        column ``j``'s fit.
    n_jobs : int
        Threads over columns (the solvers in :data:`RAND_SOLVERS` always run on one); the
        result is the same for every value.

    Returns
    -------
    LiblinearFit
        A classifier's weights belong to its first class and are flipped when that class is
        ``-1``, so that positive scores predict ``+1``.
    """
    n = X.shape[0]
    w_size = X.shape[1] + (bias >= 0)
    W = np.zeros((w_size, n_columns))
    n_iter = np.zeros(n_columns, dtype=np.int64)
    converged = np.ones(n_columns, dtype=bool)
    columns = list(range(n_columns) if columns is None else columns)
    if not columns:
        return LiblinearFit(W, n_iter, converged)
    base = problem(np.zeros(n), X, bias if bias >= 0 else -1)
    row_ptr = np.ctypeslib.as_array(ctypes.cast(base.x, ctypes.POINTER(ctypes.c_uint64)), (n,))
    param = parameter(f"-s {solver} -q")
    param.C = float(C)
    param.eps = float(eps)
    if p is not None:
        param.p = float(p)
    seeded = solver in RAND_SOLVERS

    def train_column(j):
        rows, y = targets(j)
        ptrs = row_ptr if rows is None else np.ascontiguousarray(row_ptr[rows])
        y = np.ascontiguousarray(y, dtype=np.float64)
        sub = problem.__new__(problem)
        sub.l, sub.n, sub.bias = y.size, base.n, base.bias
        sub.y = y.ctypes.data_as(ctypes.POINTER(ctypes.c_double))
        sub.x = ctypes.cast(ptrs.ctypes.data, ctypes.POINTER(ctypes.POINTER(feature_node)))
        if seeded:
            seed_c_rand(seed + j)
        model, n_iter[j], converged[j] = train(sub, param)
        w = np.ctypeslib.as_array(model.w, (w_size,))
        # a classifier's w belongs to the model's first class; flip it when that class is -1
        W[:, j] = w if model.is_regression_model() else w * model.label[0]

    with capturing():
        if n_jobs == 1 or len(columns) <= 1 or seeded:
            for j in columns:
                train_column(j)
        else:
            with ThreadPoolExecutor(max_workers=min(n_jobs, len(columns))) as pool:
                list(pool.map(train_column, columns))
    return LiblinearFit(W, n_iter, converged)
