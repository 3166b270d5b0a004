"""The estimators' public entry points run as a runner cell does: BLAS on one thread, mlx's
kernels on every core (or an enclosing budget), so a fit in a user's own code gives the
runner's numbers to the last bit."""

import numpy as np
import pytest
import scipy.sparse as sp
from threadpoolctl import threadpool_info, threadpool_limits

from mlx.methods import BR, CPLST, LEML
from mlx.numerics import spmm


def _blas_threads() -> set:
    return {lib["num_threads"] for lib in threadpool_info() if lib["user_api"] == "blas"}


def _data(n=600, d=300, L=150, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.random((n, d))
    return X, sp.csr_matrix((X @ rng.standard_normal((d, L)) > 1.0).astype(float))


@pytest.mark.skipif(spmm.available_cores() < 2 or not _blas_threads(),
                    reason="needs a threaded BLAS and two cores to differ")
@pytest.mark.parametrize("cls, params", [(LEML, {"rank": 10, "l2_reg": 1.0}),
                                         (BR, {"loss": "squared", "l2_reg": 1.0}),
                                         (CPLST, {"rank": 10, "l2_reg": 1.0})])
def test_a_fit_in_user_code_equals_the_runner_cells_bit_for_bit(cls, params):
    X, Y = _data()
    with spmm.fit_threads(1):                       # as run_cell runs a cell of -j 2
        cell = cls(random_state=0, **params)._fit(X, Y)
        expected = cell._decision_function(X)
    with threadpool_limits(limits=2):               # a user's process: BLAS on two threads
        mine = cls(random_state=0, **params).fit(X, Y)
        np.testing.assert_array_equal(mine.decision_function(X), expected)
        # the raw products on two threads do differ here, or this test proves nothing
        assert not np.array_equal(cls(random_state=0, **params)._fit(X, Y)
                                  ._decision_function(X), expected)


def test_public_calls_pin_blas_and_give_the_kernels_every_core_or_the_enclosing_budget(
        monkeypatch):
    X, Y = _data(60, 8, 5)
    seen = []
    real = LEML._fit

    def spy(self, *args, **kwargs):
        seen.append((_blas_threads(), spmm.get_threads()))
        return real(self, *args, **kwargs)

    monkeypatch.setattr(LEML, "_fit", spy)
    with threadpool_limits(limits=2):
        before = _blas_threads()
        LEML(rank=2, l2_reg=1.0).fit(X, Y)
        assert _blas_threads() == before              # restored after the call
    with spmm.threads(1):
        LEML(rank=2, l2_reg=1.0).fit(X, Y)
    assert seen[0] == ({1}, spmm.available_cores()) or not before
    assert seen[1][1] == 1
    assert spmm.get_threads() == 1                   # the default outside any call


def test_fit_threads_takes_an_explicit_count_and_restores_the_budget():
    with spmm.threads(3):
        with spmm.fit_threads():
            assert spmm.get_threads() == 3
        with spmm.fit_threads(2):
            assert spmm.get_threads() == 2
        assert spmm.get_threads() == 3
    with spmm.fit_threads():
        assert spmm.get_threads() == spmm.available_cores()
