"""BR's ridge by block conjugate gradients runs its products X P and X' (X P) on the cell's
kernel threads (:mod:`mlx.numerics.spmm`): the same fit, bit for bit, for 1, 2 or 3 threads
and with label blocks on several Python threads."""

import numpy as np
import pytest
import scipy.sparse as sp

from mlx.methods import br as br_module
from mlx.methods.br import BR
from mlx.numerics import spmm
from mlx.numerics.spmm import threads


@pytest.fixture
def always_threaded(monkeypatch):
    monkeypatch.setattr(spmm, "MIN_THREADED_WORK", 0)      # thread even these small products


def _data(seed=0, n=160, d=30, L=9):
    rng = np.random.default_rng(seed)
    X = sp.random(n, d, density=0.2, random_state=seed, format="csr")
    X.data = rng.standard_normal(X.nnz)
    Y = sp.csr_matrix((rng.random((n, L)) < 0.3).astype(float))
    return X, Y


@pytest.mark.parametrize("route", ["missing", "too-big"])
def test_br_block_cg_is_identical_for_1_2_3_threads(always_threaded, monkeypatch, route):
    X, Y = _data()
    observed = None
    if route == "missing":       # |Omega_j| > n_features: the labels go to block CG
        mask = np.random.default_rng(1).random(Y.shape) < 0.7
        observed = sp.csr_matrix(mask.astype(float))
    else:                        # full labels with min(n, d) above the dense limit
        monkeypatch.setattr(br_module, "_DENSE_MAX", 20)
    calls = []
    real = spmm._threaded_product
    monkeypatch.setattr(spmm, "_threaded_product",
                        lambda *a: calls.append((a[0].shape, a[2])) or real(*a))
    fits, threaded = [], []
    for n_threads, n_jobs in ((1, 1), (2, 1), (3, 1), (2, 2)):
        calls.clear()
        with threads(n_threads):
            fits.append(BR(loss="squared", l2_reg=0.5, n_jobs=n_jobs)
                        .fit(X, Y, observed=observed))
        threaded.append(set(calls))
    # X P (X is n x d) and X' (X P) (X' is d x n) are threaded; label blocks on 2 Python
    # threads take one kernel thread each: scipy's own products
    n, d = X.shape
    assert threaded == [set(), {((n, d), 2), ((d, n), 2)}, {((n, d), 3), ((d, n), 3)}, set()]
    assert fits[0].n_iter_.max() > 1             # the CG route ran
    for other in fits[1:]:
        assert np.array_equal(other.W_, fits[0].W_)
        assert np.array_equal(other.n_iter_, fits[0].n_iter_)
