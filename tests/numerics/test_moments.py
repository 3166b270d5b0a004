"""The moments of the spectral latent-variable model against their definitions: whitening,
the implicit third moment, its products and Hessian, the label cross-moment."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
import scipy.sparse as sp

from mlx.numerics.eigen import DENSE_EIG_MAX
from mlx.numerics.moments import WhitenedMoments, second_moment_eigenpairs
from mlx.numerics.tensor_power import polarised_hessian


def _counts(seed=0, n=60, d=12, density=0.4, high=4):
    rng = np.random.default_rng(seed)
    X = sp.random(n, d, density=density, format="csr", random_state=rng,
                  data_rvs=lambda k: rng.integers(1, high, size=k).astype(float))
    return X



def _m2(X, moments):
    """M2 from its definition (dense)."""
    X = X.toarray()
    m = X.sum(axis=1)
    if moments == "paper":
        return X.T @ X / np.sum(m ** 2)
    return (X.T @ X - np.diag(X.sum(axis=0))) / np.sum(m * (m - 1))


def _m3_explicit(X, moments):
    """The third moment from its definition: counts of ordered triples of distinct tokens
    (falling factorials on repeated indices) or, for ``paper``, ``sum_d x (x) x (x) x``."""
    X = X.toarray()
    n, d = X.shape
    m = X.sum(axis=1)
    T = np.zeros((d, d, d))
    for x in X:
        if moments == "paper":
            T += np.einsum("i,j,l->ijl", x, x, x)
            continue
        for i, j, k in itertools.product(range(d), repeat=3):
            if i == j == k:
                T[i, j, k] += x[i] * (x[i] - 1) * (x[i] - 2)
            elif i == j:
                T[i, j, k] += x[i] * (x[i] - 1) * x[k]
            elif i == k:
                T[i, j, k] += x[i] * (x[i] - 1) * x[j]
            elif j == k:
                T[i, j, k] += x[j] * (x[j] - 1) * x[i]
            else:
                T[i, j, k] += x[i] * x[j] * x[k]
    z = np.sum(m ** 3) if moments == "paper" else np.sum(m * (m - 1) * (m - 2))
    return T / z


# ----------------------------------------------------------------------------- whitening
@pytest.mark.parametrize("moments", ["paper", "unbiased"])
@pytest.mark.parametrize("d,k", [(12, 4), (DENSE_EIG_MAX + 40, 9)])   # dense and Lanczos paths
def test_whitening_makes_m2_the_identity(moments, d, k):
    X = _counts(seed=d, n=300, d=d, density=0.15)
    evals, evecs = second_moment_eigenpairs(X, k, moments=moments,
                                            rng=np.random.default_rng(0))
    assert evals.size == k and np.all(np.diff(evals) <= 0)
    W = evecs / np.sqrt(evals)
    np.testing.assert_allclose(W.T @ _m2(X, moments) @ W, np.eye(k), atol=1e-8)
    # the top eigenvalues of the definition, too
    ref = np.sort(np.linalg.eigvalsh(_m2(X, moments)))[::-1][:k]
    np.testing.assert_allclose(evals, ref, rtol=1e-8)


# ----------------------------------------------------------------------------- tensors
@pytest.mark.parametrize("moments", ["paper", "unbiased"])
def test_implicit_tensor_products_equal_the_explicit_tensor(moments):
    X = _counts(seed=3, n=40, d=7, density=0.5, high=4)            # counts up to 3
    rng = np.random.default_rng(1)
    W = rng.normal(size=(7, 4))
    T = np.einsum("abc,ai,bj,cl->ijl", _m3_explicit(X, moments), W, W, W)
    mom = WhitenedMoments(X, W, moments=moments)
    np.testing.assert_allclose(mom.dense(), T, rtol=1e-10, atol=1e-14)
    U = rng.normal(size=(4, 5))
    np.testing.assert_allclose(mom.products(U), np.einsum("ijl,jr,lr->ir", T, U, U),
                               rtol=1e-10, atol=1e-14)


def test_binary_unbiased_tensor_keeps_only_distinct_index_entries():
    X = _counts(seed=4, n=50, d=6, density=0.5, high=2)            # 0/1
    T = _m3_explicit(X, "unbiased")
    i, j, k = np.indices(T.shape)
    assert np.all(T[(i == j) | (i == k) | (j == k)] == 0)
    dense = X.toarray()
    m = dense.sum(axis=1)
    distinct = (i != j) & (i != k) & (j != k)
    full = np.einsum("di,dj,dl->ijl", dense, dense, dense) / np.sum(m * (m - 1) * (m - 2))
    np.testing.assert_allclose(T[distinct], full[distinct])


@pytest.mark.parametrize("moments", ["paper", "unbiased"])
def test_label_moments_equal_their_definition(moments):
    X = _counts(seed=5, n=30, d=6, density=0.5)
    rng = np.random.default_rng(2)
    Y = sp.csr_matrix((rng.random((30, 4)) < 0.4).astype(float))
    W = rng.normal(size=(6, 3))
    V = np.linalg.qr(rng.normal(size=(3, 3)))[0]
    Xd = X.toarray()
    expected = np.zeros((4, 3))
    for x, y in zip(Xd, Y.toarray()):
        pairs = np.outer(x, x) - (np.diag(x) if moments == "unbiased" else 0)
        expected += np.outer(y, np.einsum("ab,ak,bk->k", pairs, W @ V, W @ V))
    got = WhitenedMoments(X, W, moments=moments).label_moments(Y, V)
    np.testing.assert_allclose(got, expected, rtol=1e-10)



@pytest.mark.parametrize("moments", ["paper", "unbiased"])
def test_batched_products_and_hessian_equal_the_unbatched_ones(moments):
    X = _counts(seed=6, n=50, d=9, density=0.4, high=4)
    rng = np.random.default_rng(4)
    mom = WhitenedMoments(X, rng.normal(size=(9, 5)), moments=moments)
    U = rng.normal(size=(5, 7))
    batched = mom.products(U)
    for r in range(U.shape[1]):
        np.testing.assert_allclose(batched[:, r], mom.products(U[:, r:r + 1])[:, 0],
                                   rtol=1e-12, atol=1e-15)
    T = mom.dense()
    u = U[:, 0]
    np.testing.assert_allclose(mom.hessian(u), np.einsum("ijl,l->ij", T, u), rtol=1e-10,
                               atol=1e-14)
    np.testing.assert_allclose(polarised_hessian(mom.products, u), mom.hessian(u),
                               rtol=1e-10, atol=1e-14)
    single = mom.single_products(U)                                   # float32 copies
    assert single.dtype == np.float64
    np.testing.assert_allclose(single, batched, rtol=1e-5, atol=1e-6 * np.abs(batched).max())
