"""k-NN graphs: the blockwise and k-d tree searches against a brute-force loop; Laplacians."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

from mlx.numerics.knn_graph import graph_laplacian, knn_graph, knn_indices


def _brute_knn(A: np.ndarray, k: int) -> np.ndarray:
    """Row by row: exact distances, sorted by (distance, index), the row itself left out."""
    n = A.shape[0]
    out = np.empty((n, k), dtype=np.int64)
    for i in range(n):
        dist = [(float(np.sum((A[i] - A[j]) ** 2)), j) for j in range(n) if j != i]
        out[i] = [j for _, j in sorted(dist)[:k]]
    return out


def _brute_graph(A: np.ndarray, k: int, mode: str) -> np.ndarray:
    nn = _brute_knn(A, k)
    n = A.shape[0]
    S = np.zeros((n, n))
    for i in range(n):
        for j in range(n):
            a, b = j in nn[i], i in nn[j]
            S[i, j] = float(a or b) if mode == "union" else float(a and b)
    return S


@pytest.mark.parametrize("algorithm", ["brute", "kd_tree", "auto"])
def test_knn_indices_equal_a_brute_force_loop_on_dense_data(algorithm):
    rng = np.random.default_rng(0)
    A = rng.standard_normal((45, 4))
    for k in (1, 5, 44):
        np.testing.assert_array_equal(knn_indices(A, k, algorithm=algorithm), _brute_knn(A, k))


def test_knn_indices_on_sparse_data_in_small_blocks():
    rng = np.random.default_rng(1)
    X = sp.random(50, 30, density=0.2, format="csr", random_state=rng,
                  data_rvs=lambda m: rng.normal(size=m))
    expected = _brute_knn(X.toarray(), 6)
    for block_entries in (1, 120, 10 ** 6):                        # 1 row, a few rows, all
        np.testing.assert_array_equal(knn_indices(X, 6, block_entries=block_entries), expected)
    np.testing.assert_array_equal(knn_indices(X.toarray(), 6, algorithm="brute"), expected)


def test_ties_go_to_the_smaller_index():
    rng = np.random.default_rng(2)
    A = rng.integers(0, 2, size=(40, 5)).astype(float)             # ties and duplicates
    for k in (1, 3, 10):
        np.testing.assert_array_equal(knn_indices(A, k, algorithm="brute"), _brute_knn(A, k))
        np.testing.assert_array_equal(knn_indices(sp.csr_matrix(A), k, block_entries=200),
                                      _brute_knn(A, k))


@pytest.mark.parametrize("mode", ["union", "mutual"])
def test_graph_and_laplacian(mode):
    rng = np.random.default_rng(3)
    A = rng.standard_normal((30, 6))
    S = knn_graph(A, 4, mode=mode)
    assert sp.isspmatrix_csr(S) or sp.issparse(S)
    np.testing.assert_array_equal(S.toarray(), _brute_graph(A, 4, mode))
    Sd = S.toarray()
    assert set(np.unique(Sd)) <= {0.0, 1.0} and np.all(np.diag(Sd) == 0)
    np.testing.assert_array_equal(Sd, Sd.T)
    L = graph_laplacian(S)
    Ld = L.toarray()
    np.testing.assert_array_equal(Ld, np.diag(Sd.sum(axis=1)) - Sd)
    np.testing.assert_array_equal(Ld, Ld.T)
    np.testing.assert_allclose(Ld.sum(axis=1), 0.0, atol=0)
    assert np.linalg.eigvalsh(Ld).min() > -1e-10
    degrees = np.diag(Ld)
    if mode == "union":
        assert degrees.min() >= 4                                  # every row keeps its own k
    else:
        assert degrees.max() <= 4


def test_invalid_neighbour_counts():
    A = np.zeros((5, 2))
    for k in (0, 5, 6):
        with pytest.raises(ValueError, match=r"n_neighbors must be in \[1, n_samples - 1\] = "
                                             r"\[1, 4\]; got " + str(k)):
            knn_indices(A, k)
    with pytest.raises(ValueError, match="mode must be 'union' or 'mutual'"):
        knn_graph(np.eye(4), 1, mode="both")
