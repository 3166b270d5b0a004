"""The LIBLINEAR driver: properties the older tests left open (found by mutation testing): the
iteration counts are the solvers' own (the last ``iter N`` line of the primal Newton solvers,
``#iter = N`` of the coordinate-descent ones), the types of the result, every negative bias
meaning none and a bias of 0 a constant feature, the default seed, and liblinear's messages
outside :func:`train` ignored without an error in the print hook."""

from __future__ import annotations

import re
import sys
import threading

import numpy as np
import pytest
import scipy.sparse as sp
from liblinear.liblinear import (
    PRINT_STRING_FUN,
    ctypes_print_null,
    liblinear,
    parameter,
    problem,
)
from liblinear.liblinearutil import train as liblinear_train

from mlx.methods._liblinear import capturing, seed_c_rand, train, train_columns
from tests.methods.test_liblinear import _data, _reference_weights


def _messages(y, X, options, seed=None):
    """liblinear's own messages for one fit of ``y`` on ``X`` (tests only)."""
    got = []
    hook = PRINT_STRING_FUN(got.append)
    param = parameter(options + " -q")               # -q: parsing sets the null hook ...
    liblinear.set_print_string_function(hook)        # ... which this one replaces
    try:
        if seed is not None:
            seed_c_rand(seed)
        liblinear.train(problem(np.ascontiguousarray(y, dtype=np.float64), X), param)
    finally:
        liblinear.set_print_string_function(ctypes_print_null)
    return b"".join(got).decode()


def _solver_count(text):
    """The iterations liblinear reports: the number of its last ``iter N`` line (primal Newton)
    or of ``#iter = N`` (coordinate descent)."""
    final = re.findall(r"#iter = (\d+)", text)
    if final:
        return int(final[-1])
    return max(int(n) for n in re.findall(r"^iter +(\d+)", text, flags=re.M))


@pytest.mark.parametrize("solver, p, capped", [(0, None, False), (2, None, False),
                                               (11, 0.05, False), (13, 0.0, True),
                                               (3, None, False)])
def test_iterations_and_convergence_are_the_solvers_own_account(solver, p, capped):
    """``n_iter`` is the count liblinear prints, ``converged`` False exactly where it warns
    that it reached its iteration cap (-s 13 with a tolerance of 1e-4 here)."""
    X, T = _data(6, n=60, columns=3)
    regression = solver in (11, 13)

    def targets(j):
        return None, (T[:, j] if regression else np.where(T[:, j] > 0, 1.0, -1.0))

    options = f"-s {solver} -c 2 -e 0.0001" + ("" if p is None else f" -p {p}")
    fit = train_columns(X, targets, 3, solver=solver, C=2.0, eps=1e-4, p=p, seed=3)
    texts = [_messages(targets(j)[1], X, options, seed=3 + j) for j in range(3)]
    expected = [_solver_count(text) for text in texts]
    assert min(expected) >= 2                     # more than one step to count
    np.testing.assert_array_equal(fit.n_iter, expected)
    assert fit.n_iter.dtype == np.int64 and fit.converged.dtype == bool
    warned = ["reaching max number" in text for text in texts]
    assert warned == [capped] * 3
    np.testing.assert_array_equal(fit.converged, np.logical_not(warned))


def test_no_columns_gives_integer_zero_iterations_and_boolean_convergence():
    fit = train_columns(sp.csr_matrix((4, 3)), lambda j: pytest.fail("no column to train"), 2,
                        solver=0, C=1.0, eps=0.1, columns=[])
    np.testing.assert_array_equal(fit.n_iter, [0, 0])
    assert fit.n_iter.dtype == np.int64 and fit.converged.dtype == bool


def test_every_negative_bias_means_none_and_zero_is_a_constant_feature():
    X, T = _data(7)
    y = np.where(T[:, 0] > np.median(T[:, 0]), 1.0, -1.0)

    def run(bias):
        return train_columns(X, lambda j: (None, y), 1, solver=0, C=1.0, eps=1e-6,
                             bias=bias).W[:, 0]

    none = run(-1.0)
    np.testing.assert_array_equal(run(-2.5), none)
    zero = run(0.0)
    reference = liblinear_train(y, X, "-s 0 -c 1 -e 0.000001 -B 0 -q")
    assert zero.shape == (7,) and reference.nr_feature == 6 and reference.bias == 0
    np.testing.assert_allclose(zero, _reference_weights(reference, 6, 0.0), rtol=1e-12,
                               atol=1e-14)
    np.testing.assert_allclose(zero[:6], none, rtol=1e-12, atol=1e-14)   # a feature of 0s


def test_coordinate_descent_is_seeded_with_zero_by_default():
    X, T = _data(8, n=150, columns=2)

    def run(**kw):
        return train_columns(X, lambda j: (None, T[:, j]), 2, solver=13, C=100.0, eps=1e-2,
                             p=0.0, **kw).W

    default = run()
    np.testing.assert_array_equal(default, run(seed=0))
    assert not np.array_equal(default, run(seed=1))


def test_messages_outside_train_are_ignored_without_error(monkeypatch):
    """A fit that liblinear runs inside :func:`capturing` but outside :func:`train` (in a thread
    that never trained, or after a :func:`train` in this one) is nobody's record: the print
    hook ignores its messages instead of raising in the callback, where Python can only
    report the error as unraisable."""
    X, T = _data(9)
    y = np.where(T[:, 0] > 0, 1.0, -1.0)
    raised = []
    monkeypatch.setattr(sys, "unraisablehook", raised.append)
    param = parameter("-s 0 -c 1 -q")

    def raw_fit():
        liblinear.train(problem(y, X), param)

    with capturing():
        worker = threading.Thread(target=raw_fit)
        worker.start()
        worker.join()
        model, n_iter, converged = train(problem(y, X), param)
        raw_fit()
    assert raised == []
    assert n_iter >= 1 and converged and model.get_nr_feature() == 6


def test_integer_targets_are_read_as_numbers():
    X, T = _data(10)
    labels = np.where(T[:, 0] > 0, 1, -1)
    values = np.rint(10 * T[:, 1]).astype(np.int64)
    for solver, y in ((0, labels), (11, values)):
        as_int = train_columns(X, lambda j: (None, y), 1, solver=solver, C=1.0, eps=1e-6)
        as_float = train_columns(X, lambda j: (None, y.astype(float)), 1, solver=solver,
                                 C=1.0, eps=1e-6)
        np.testing.assert_array_equal(as_int.W, as_float.W)
        np.testing.assert_array_equal(as_int.n_iter, as_float.n_iter)
