"""Gram eigendecomposition, its content-keyed cache, and the Sylvester solve it enables."""

import threading

import numpy as np
import pytest
import scipy.sparse as sp

from mlx.numerics.gram import (
    GramEigenCache,
    content_key,
    gram_eigen,
    solve_sylvester_eig,
)


def _X(seed, n=40, d=7):
    rng = np.random.default_rng(seed)
    return sp.random(n, d, density=0.5, random_state=seed, format="csr",
                     data_rvs=lambda m: rng.normal(size=m))


def test_gram_eigen_reconstructs_the_gram_matrix():
    X = _X(0)
    eig = gram_eigen(X)
    np.testing.assert_allclose((eig.evecs * eig.evals) @ eig.evecs.T, (X.T @ X).toarray(),
                               atol=1e-10)
    assert np.all(np.diff(eig.evals) >= 0) and eig.evals[0] >= 0
    np.testing.assert_allclose(eig.evecs.T @ eig.evecs, np.eye(7), atol=1e-12)
    wide = gram_eigen(_X(1, n=3, d=7))                            # rank 3: four exact zeros
    assert np.count_nonzero(wide.evals == 0.0) >= 4


def test_miss_then_hit_returns_the_same_object():
    cache = GramEigenCache(maxsize=2)
    X = _X(2)
    first = cache.get(X)
    assert (cache.misses, cache.hits, len(cache)) == (1, 0, 1)
    assert cache.get(X) is first
    assert cache.get(X.copy()) is first                           # equal content, new object
    assert cache.get(X.toarray()) is first                        # dense input, same CSR
    assert (cache.misses, cache.hits) == (1, 3)
    assert X in cache and cache.nbytes == first.nbytes > 0


def test_keys_follow_content_not_identity():
    cache = GramEigenCache()
    X = _X(3)
    first = cache.get(X)
    changed = X.copy()
    changed.data[0] += 1.0
    assert changed not in cache
    second = cache.get(changed)
    assert second is not first
    np.testing.assert_allclose((second.evecs * second.evals) @ second.evecs.T,
                               (changed.T @ changed).toarray(), atol=1e-10)
    X.data[0] += 1.0                                              # mutate in place: now equal
    assert cache.get(X) is second
    assert content_key(X) == content_key(changed)
    assert content_key(X) != content_key(X[:, :6])               # shape is part of the key


def test_least_recently_used_entry_is_evicted():
    cache = GramEigenCache(maxsize=2)
    A, B, C = _X(4), _X(5), _X(6)
    eig_a = cache.get(A)
    cache.get(B)
    assert cache.get(A) is eig_a                                  # A is now the most recent
    cache.get(C)                                                  # evicts B
    assert len(cache) == 2 and A in cache and C in cache and B not in cache
    assert cache.get(A) is eig_a
    misses = cache.misses
    cache.get(B)
    assert cache.misses == misses + 1


def test_clear_and_a_zero_size_cache():
    cache = GramEigenCache(maxsize=1)
    X = _X(7)
    first = cache.get(X)
    cache.clear()
    assert len(cache) == 0 and X not in cache
    assert cache.get(X) is not first
    off = GramEigenCache(maxsize=0)
    assert off.get(X) is not off.get(X) and len(off) == 0
    with pytest.raises(ValueError, match="maxsize"):
        GramEigenCache(maxsize=-1)


def test_concurrent_gets_agree():
    cache = GramEigenCache(maxsize=2)
    X = _X(8, n=200, d=30)
    out = []
    threads = [threading.Thread(target=lambda: out.append(cache.get(X))) for _ in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(out) == 6 and len(cache) == 1
    for eig in out:
        np.testing.assert_array_equal(eig.evals, out[0].evals)
    assert cache.hits + cache.misses == 6


def test_leml_uses_its_module_cache():
    from mlx.methods import leml

    assert isinstance(leml.GRAM_CACHE, GramEigenCache)
    leml.clear_gram_cache()
    X = _X(9)
    Y = sp.csr_matrix((np.random.default_rng(0).random((40, 5)) < 0.3).astype(float))
    # a positive l2_reg: the tridiagonal form; l2_reg = 0: the eigendecomposition
    for cache, l2_reg, other in ((leml.TRIDIAG_CACHE, 0.1, leml.GRAM_CACHE),
                                 (leml.GRAM_CACHE, 0.0, leml.TRIDIAG_CACHE)):
        hits = cache.hits
        leml.LEML(rank=2, max_iter=2, l2_reg=l2_reg).fit(X, Y)
        leml.LEML(rank=3, max_iter=2, l2_reg=l2_reg).fit(X, Y)
        assert X in cache and cache.hits == hits + 1
        assert X not in other
        leml.clear_gram_cache()
        assert len(cache) == 0


@pytest.mark.parametrize("l2_reg", [0.0, 0.3])
def test_sylvester_solve_matches_the_kronecker_system(l2_reg):
    X = _X(10, n=5, d=6)                                          # X'X singular
    rng = np.random.default_rng(1)
    H = rng.normal(size=(4, 2))
    M = H.T @ H
    B = rng.normal(size=(6, 2))
    W = solve_sylvester_eig(gram_eigen(X), B, M, l2_reg)
    K = np.kron(M, (X.T @ X).toarray()) + l2_reg * np.eye(12)
    expected = (np.linalg.pinv(K) @ B.ravel(order="F")).reshape((6, 2), order="F")
    np.testing.assert_allclose(W, expected, rtol=1e-7, atol=1e-9)


def test_cold_caches_hides_the_entries_then_puts_them_back_as_most_recent():
    from mlx.numerics.gram import cold_caches

    rng = np.random.default_rng(0)
    A, B, C = (sp.csr_matrix(rng.standard_normal((8, 4))) for _ in range(3))
    cache = GramEigenCache(maxsize=2)
    cache.get(A)
    with cold_caches():
        assert len(cache) == 0 and A not in cache
        cache.get(B)
        cache.get(C)                                   # B, C inside the block
    assert A in cache and C in cache and B not in cache   # A back as the most recent
    assert len(cache) == 2
