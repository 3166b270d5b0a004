"""The LIBLINEAR driver shared by BR and RegLand: per-column fits equal plain liblinear
training, row subsets, bias, untrained columns, seeding of the coordinate-descent solvers and
the same result on every number of threads."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from liblinear.liblinearutil import train as liblinear_train

from mlx.methods._liblinear import RAND_SOLVERS, seed_c_rand, train_columns


def _data(seed=0, n=40, d=6, columns=3):
    rng = np.random.default_rng(seed)
    X = sp.random(n, d, density=0.6, format="csr", random_state=rng)
    T = X @ rng.normal(size=(d, columns)) + 0.1 * rng.normal(size=(n, columns))
    return X, T


def _reference_weights(model, d, bias):
    w = [model.get_decfun_coef(i + 1) for i in range(d)]
    return np.array(w + ([model.get_decfun_bias()] if bias >= 0 else []))


@pytest.mark.parametrize("solver", [0, 2])
@pytest.mark.parametrize("bias", [-1.0, 1.0])
def test_classifiers_equal_plain_liblinear_on_their_rows(solver, bias):
    X, T = _data(1)
    rows = {0: None, 1: np.arange(0, 40, 2), 2: np.array([3, 5, 8, 13, 21, 34, 1, 2])}

    def targets(j):
        r = rows[j]
        y = np.where(T[:, j] > np.median(T[:, j]), 1.0, -1.0)
        return r, (y if r is None else y[r])

    fit = train_columns(X, targets, 4, solver=solver, C=0.7, eps=1e-3, bias=bias,
                        columns=[0, 1, 2])
    assert fit.W.shape == (6 + (bias >= 0), 4)
    for j in range(3):
        r, y = targets(j)
        ref = liblinear_train(y, X if r is None else X[r],
                              f"-s {solver} -c 0.7 -e 0.001 -B {bias:g} -q")
        np.testing.assert_allclose(fit.W[:, j], _reference_weights(ref, 6, bias), rtol=1e-12,
                                   atol=1e-14)
        assert fit.n_iter[j] > 0
    assert not fit.W[:, 3].any() and fit.n_iter[3] == 0 and fit.converged.all()


@pytest.mark.parametrize("solver", [0, 2])
def test_weights_belong_to_the_positive_class_when_liblinear_sees_only_negatives(solver):
    """With one class, liblinear's w belongs to that class: for all -1 targets the driver
    flips it, so that positive scores still mean +1 (every row here scores below 0)."""
    X, _ = _data(5)
    y = -np.ones(40)
    fit = train_columns(X, lambda j: (None, y), 1, solver=solver, C=1.0, eps=1e-6)
    ref = liblinear_train(y, X, f"-s {solver} -c 1 -e 0.000001 -q")
    assert ref.get_labels() == [-1]
    np.testing.assert_allclose(fit.W[:, 0], -_reference_weights(ref, 6, -1), rtol=1e-12)
    assert np.all(X @ fit.W[:, 0] < 0)


@pytest.mark.parametrize("solver", [11, 13])
def test_regression_weights_equal_plain_liblinear_and_are_not_flipped(solver):
    X, T = _data(2)
    fit = train_columns(X, lambda j: (None, T[:, j]), 3, solver=solver, C=10.0, eps=1e-4,
                        p=0.05, seed=7)
    for j in range(3):
        seed_c_rand(7 + j)                   # the driver seeds rand() the same way for -s 13
        ref = liblinear_train(T[:, j], X, f"-s {solver} -c 10 -e 0.0001 -p 0.05 -q")
        np.testing.assert_allclose(fit.W[:, j], _reference_weights(ref, 6, -1), rtol=1e-12,
                                   atol=1e-14)


def test_coordinate_descent_is_seeded_and_threads_change_nothing():
    X, T = _data(3, n=200, columns=4)
    assert 13 in RAND_SOLVERS and 0 not in RAND_SOLVERS and 11 not in RAND_SOLVERS

    def run(seed, n_jobs):
        return train_columns(X, lambda j: (None, T[:, j]), 4, solver=13, C=100.0, eps=1e-2,
                             p=0.0, seed=seed, n_jobs=n_jobs)

    a, b, c = run(0, 1), run(0, 2), run(1, 1)
    np.testing.assert_array_equal(a.W, b.W)
    np.testing.assert_array_equal(a.n_iter, b.n_iter)
    assert not np.array_equal(a.W, c.W)          # another seed, another coordinate order


def test_primal_solvers_on_threads_equal_one_thread():
    X, T = _data(4, n=120, columns=6)

    def run(n_jobs):
        return train_columns(X, lambda j: (None, np.where(T[:, j] > 0, 1.0, -1.0)), 6,
                             solver=0, C=1.0, eps=1e-4, n_jobs=n_jobs)

    one, two = run(1), run(3)
    np.testing.assert_array_equal(one.W, two.W)
    np.testing.assert_array_equal(one.n_iter, two.n_iter)


def test_no_columns_builds_no_problem():
    fit = train_columns(sp.csr_matrix((5, 3)), lambda j: pytest.fail("no column to train"), 2,
                        solver=0, C=1.0, eps=0.1, columns=[])
    assert fit.W.shape == (3, 2) and not fit.W.any() and fit.converged.all()
