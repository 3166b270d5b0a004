"""top_eigenpairs against a dense reference, on both of its paths."""

from __future__ import annotations

import numpy as np
import pytest

from mlx.numerics.eigen import DENSE_EIG_MAX, top_eigenpairs


def _symmetric(dim, seed):
    rng = np.random.default_rng(seed)
    Q = np.linalg.qr(rng.normal(size=(dim, dim)))[0]
    return (Q * np.linspace(-3.0, 10.0, dim)) @ Q.T


@pytest.mark.parametrize("dim,k", [(12, 4), (DENSE_EIG_MAX + 30, 7), (20, 19)])
def test_top_eigenpairs_match_a_dense_decomposition(dim, k):
    M = _symmetric(dim, dim)
    calls = []

    def matmat(V):
        calls.append(V.shape[1])
        return M @ V

    evals, evecs = top_eigenpairs(matmat, dim, k, rng=np.random.default_rng(0))
    ref_vals, ref_vecs = np.linalg.eigh(M)
    np.testing.assert_allclose(evals, ref_vals[::-1][:k], rtol=1e-10, atol=1e-10)
    assert np.all(np.diff(evals) <= 0)
    np.testing.assert_allclose(evecs.T @ evecs, np.eye(k), atol=1e-10)
    np.testing.assert_allclose(M @ evecs, evecs * evals, atol=1e-8)
    # the fixed sign: every column's largest-magnitude entry is positive
    assert np.all(evecs[np.argmax(np.abs(evecs), axis=0), np.arange(k)] > 0)
    lanczos = dim > DENSE_EIG_MAX and k < dim - 1
    assert (max(calls) < dim) == lanczos            # the dense path multiplies the identity


def test_dense_max_chooses_the_path_and_both_agree():
    M = _symmetric(30, 1)
    dense = top_eigenpairs(lambda V: M @ V, 30, 5, rng=np.random.default_rng(0))
    lanczos = top_eigenpairs(lambda V: M @ V, 30, 5, rng=np.random.default_rng(0),
                             dense_max=10)
    np.testing.assert_allclose(lanczos[0], dense[0], rtol=1e-10)
    np.testing.assert_allclose(lanczos[1], dense[1], atol=1e-8)    # same signs too


def test_dense_callable_is_used_instead_of_products():
    M = _symmetric(8, 2)
    got = top_eigenpairs(lambda V: pytest.fail("no products on the dense path"), 8, 3,
                         rng=np.random.default_rng(0), dense=lambda: M)
    np.testing.assert_allclose(got[0], np.linalg.eigvalsh(M)[::-1][:3], rtol=1e-12)


def test_no_pairs_asked():
    evals, evecs = top_eigenpairs(lambda V: V, 5, 0, rng=np.random.default_rng(0))
    assert evals.shape == (0,) and evecs.shape == (5, 0)
