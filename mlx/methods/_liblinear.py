"""liblinear's own account of a fit: iterations run and whether it stopped at its cap.

liblinear's Python binding returns only the model; the solvers report their iterations and
their iteration cap on the print hook (``iter  N f ...`` lines of the primal Newton solvers,
``optimization finished, #iter = N`` of the dual coordinate descent ones, and ``WARNING:
reaching max number of ... iterations`` when they stop at the cap, which the binding does
not let one change). :func:`train` routes that hook to the training thread's record.
"""

from __future__ import annotations

import re
import threading
from contextlib import contextmanager

from liblinear.liblinear import PRINT_STRING_FUN, ctypes_print_null, liblinear, toPyModel

__all__ = ["capturing", "train"]

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
