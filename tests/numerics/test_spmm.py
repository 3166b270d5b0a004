"""Threaded sparse x dense products: bit for bit scipy's, for any thread count, and the
same LEML fit whatever the thread budget."""

import numpy as np
import pytest
import scipy.sparse as sp

from mlx.numerics import linops, spmm
from mlx.numerics.spmm import SparseProducts, row_ranges, threads


@pytest.fixture
def always_threaded(monkeypatch):
    """Thread even the small products of these tests, and cut LEML's fully observed score
    matrices into many row blocks (each thread takes some)."""
    monkeypatch.setattr(spmm, "MIN_THREADED_WORK", 0)
    monkeypatch.setattr(linops, "CHUNK_ENTRIES", 100)


def _matrix(seed, n=300, d=120, density=0.08, messy=False, index_dtype=np.int32):
    rng = np.random.default_rng(seed)
    X = sp.random(n, d, density=density, random_state=seed, format="csr")
    X.data = rng.standard_normal(X.nnz) * 10.0 ** rng.integers(-6, 6, X.nnz)
    keep = np.ones(n)
    keep[rng.integers(0, n, 5)] = 0.0                              # some rows without features
    X = (sp.diags(keep) @ X).tocsr()
    X.eliminate_zeros()
    if messy:                                                      # unsorted, duplicated entries
        coo = X.tocoo()
        dup = rng.integers(0, coo.nnz, 40)
        rows, cols = np.r_[coo.row, coo.row[dup]], np.r_[coo.col, coo.col[dup]]
        vals = np.r_[coo.data, rng.standard_normal(dup.size)]
        order = rng.permutation(rows.size)
        order = order[np.argsort(rows[order], kind="stable")]     # rows in order, columns not
        indptr = np.r_[0, np.cumsum(np.bincount(rows, minlength=n))]
        X = sp.csr_matrix((vals[order], cols[order], indptr), shape=(n, d))
        assert not X.has_sorted_indices
    X.indices = X.indices.astype(index_dtype)
    X.indptr = X.indptr.astype(index_dtype)
    return X


@pytest.mark.parametrize("messy", [False, True])
@pytest.mark.parametrize("index_dtype", [np.int32, np.int64])
@pytest.mark.parametrize("k", [1, 7, 33])
def test_products_equal_scipy_bit_for_bit_for_1_2_3_threads(always_threaded, messy,
                                                           index_dtype, k):
    X = _matrix(k, messy=messy, index_dtype=index_dtype)
    rng = np.random.default_rng(k)
    S, G = rng.standard_normal((X.shape[1], k)), rng.standard_normal((X.shape[0], k))
    want_xs, want_xtg = np.asarray(X @ S), np.asarray(X.T @ G)
    for n in (1, 2, 3):
        P = SparseProducts(X)
        with threads(n):
            got_xs, got_xtg = P.dot(S), P.tdot(G)
            again = P.tdot(G)                                      # the kept copy of X'
        assert np.array_equal(got_xs, want_xs), n
        assert np.array_equal(got_xtg, want_xtg), n
        assert np.array_equal(again, want_xtg), n


@pytest.mark.parametrize("messy", [False, True])
@pytest.mark.parametrize("index_dtype", [np.int32, np.int64])
def test_gram_equals_scipy_bit_for_bit_for_1_2_3_threads(always_threaded, messy, index_dtype):
    from mlx.numerics.spmm import gram_dense

    X = _matrix(5, messy=messy, index_dtype=index_dtype)
    want = (X.T.tocsr() @ X).toarray()
    for n in (1, 2, 3, 200):                  # more threads than rows of X' with entries
        with threads(n):
            assert np.array_equal(gram_dense(X), want), n


def test_gram_of_rows_or_columns_sparse_or_dense(always_threaded):
    from mlx.numerics.spmm import gram

    X = _matrix(6, n=40, d=25)
    Xd = X.toarray()
    for n in (1, 2):
        with threads(n):
            assert np.array_equal(gram(X), (X.T.tocsr() @ X).toarray())
            assert np.array_equal(gram(X, rows=True), (X @ X.T.tocsr()).toarray())
            np.testing.assert_allclose(gram(X), Xd.T @ Xd, rtol=1e-12, atol=1e-12)
            np.testing.assert_allclose(gram(X, rows=True), Xd @ Xd.T, rtol=1e-12, atol=1e-12)
    assert np.array_equal(gram(Xd), Xd.T @ Xd) and np.array_equal(gram(Xd, rows=True), Xd @ Xd.T)


def test_non_contiguous_operands_and_fallbacks(always_threaded):
    X = _matrix(0)
    rng = np.random.default_rng(0)
    S = np.asfortranarray(rng.standard_normal((X.shape[1], 5)))
    with threads(2):
        assert np.array_equal(SparseProducts(X).dot(S), X @ S)
        dense = X.toarray()                                        # dense X: numpy's product
        assert np.array_equal(SparseProducts(dense).dot(S), dense @ S)
        X32 = X.astype(np.float32)                                 # not float64: scipy's
        assert np.array_equal(SparseProducts(X32).dot(S), X32 @ S)
        v = rng.standard_normal(X.shape[1])                        # a vector: scipy's
        assert np.array_equal(SparseProducts(X).dot(v), X @ v)


def test_row_ranges_cover_the_rows_in_order_with_balanced_entries():
    X = _matrix(3, n=1000)
    for parts in (1, 2, 3, 8):
        b = row_ranges(X.indptr, parts)
        assert b.size == parts + 1 and b[0] == 0 and b[-1] == X.shape[0]
        assert np.all(np.diff(b) >= 0)
        per_part = np.diff(X.indptr[b])
        assert per_part.max() - per_part.min() <= 2 * np.diff(X.indptr).max()
    assert row_ranges(np.zeros(1, dtype=np.int64), 3).tolist() == [0, 0, 0, 0]


def test_threads_context_restores_and_refuses_zero():
    assert spmm.get_threads() == 1
    with threads(3):
        assert spmm.get_threads() == 3
    assert spmm.get_threads() == 1
    with pytest.raises(ValueError, match="threads must be >= 1"):
        with threads(0):
            pass


@pytest.mark.parametrize("params", [
    {"loss": "squared", "w_solver": "cg"},
    {"loss": "squared", "w_solver": "tron"},
    {"loss": "logistic"},
    {"loss": "squared_hinge"},
], ids=lambda p: "-".join(p.values()))
@pytest.mark.parametrize("missing", [False, True])
def test_leml_fit_is_identical_for_1_2_3_threads(always_threaded, params, missing):
    from mlx.data.synthetic import make_low_rank_multilabel
    from mlx.methods.leml import LEML

    train = make_low_rank_multilabel(n_samples=150, n_features=40, n_labels=12, rank=3,
                                     seed=1).train
    X, Y = sp.csr_matrix(train.X), train.Y
    observed = None
    if missing:
        mask = np.random.default_rng(2).random(Y.shape) < 0.5
        mask[0] = True
        observed = sp.csr_matrix(mask.astype(float))
    fits = []
    for n in (1, 2, 3):
        with threads(n):
            fits.append(LEML(rank=4, l2_reg=0.5, max_iter=2, tol=0, inner_max_iter=4,
                             random_state=0,
                             **params).fit(X, Y, observed=observed))
    for other in fits[1:]:
        assert np.array_equal(other.W_, fits[0].W_)
        assert np.array_equal(other.H_, fits[0].H_)
        assert other.objective_ == fits[0].objective_
