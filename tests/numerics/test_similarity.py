"""Similarity functions against per-pair formulas; blockwise kernel regression and bandwidth
against brute-force loops; the NaN/inf guard names the similarity and the row."""

import math

import numpy as np
import pytest
import scipy.sparse as sp

from mlx.errors import UnknownNameError
from mlx.numerics.similarity import (
    SIMILARITIES,
    NonFiniteSimilarityError,
    get_similarity,
    mean_distance,
    nadaraya_watson,
    similarity,
)

PARAMS = {"sigmoid": {"scale": 0.2, "offset": -1.0}, "gaussian": {"bandwidth": 0.7}}


def _pair(name, x, y):
    """K(x, y) for one pair, straight from the formula (Python floats, no numpy kernels)."""
    x, y = [float(v) for v in x], [float(v) for v in y]
    if name == "sigmoid":
        p = PARAMS["sigmoid"]
        return math.tanh(p["scale"] * sum(a * b for a, b in zip(x, y)) + p["offset"])
    if name == "manhattan":
        return -sum(abs(a - b) for a, b in zip(x, y))
    if name == "euclidean":
        return -math.sqrt(sum((a - b) ** 2 for a, b in zip(x, y)))
    if name == "sqeuclidean":
        return -sum((a - b) ** 2 for a, b in zip(x, y))
    if name == "gaussian":
        s = PARAMS["gaussian"]["bandwidth"]
        return math.exp(-sum((a - b) ** 2 for a, b in zip(x, y)) / (2 * s * s))
    raise AssertionError(name)


def _data(seed=0, n=13, m=4, p=5):
    rng = np.random.default_rng(seed)
    X = sp.random(n, p, density=0.5, format="csr", random_state=rng,
                  data_rvs=lambda k: rng.normal(size=k))
    B = rng.normal(size=(m, p))
    return X, B


NAMES = ["sigmoid", "manhattan", "euclidean", "sqeuclidean", "gaussian"]


def test_registry_holds_the_documented_similarities():
    assert SIMILARITIES.names() == sorted(NAMES)
    assert [n for n in NAMES if get_similarity(n).psd] == ["gaussian"]
    assert get_similarity("sigmoid").params == ("scale", "offset")
    assert get_similarity("gaussian").params == ("bandwidth",)
    with pytest.raises(UnknownNameError, match="manhattan"):
        get_similarity("manhatan")


@pytest.mark.parametrize("name", NAMES)
def test_each_similarity_equals_the_per_pair_formula_dense_and_sparse(name):
    X, B = _data()
    expected = np.array([[_pair(name, x, b) for b in B] for x in X.toarray()])
    params = PARAMS.get(name, {})
    for Xin in (X, X.toarray(), sp.csc_matrix(X)):
        got = similarity(name, Xin, B, params=params)
        assert got.shape == (X.shape[0], B.shape[0]) and got.dtype == np.float64
        np.testing.assert_allclose(got, expected, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("name", NAMES)
def test_blockwise_equals_whole(name):
    X, B = _data(1, n=29)
    params = PARAMS.get(name, {})
    whole = similarity(name, X, B, params=params, block_elems=10**9)
    for block_elems in (1, 5, 17, 40):                  # 1 row, 1 row, 3 rows, 8 rows per block
        np.testing.assert_allclose(similarity(name, X, B, params=params,
                                              block_elems=block_elems), whole,
                                   rtol=1e-13, atol=1e-13)
    for rows in (slice(0, 1), slice(3, 11), slice(28, None)):
        np.testing.assert_allclose(similarity(name, X[rows], B, params=params), whole[rows],
                                   rtol=1e-13, atol=1e-13)


@pytest.mark.parametrize("name", ["manhattan", "euclidean", "sqeuclidean", "gaussian"])
def test_overflow_names_the_similarity_and_the_row(name):
    X, B = _data(2, n=9)
    X = X.toarray()
    X[6] = [1e308, -1e308, 1e308, -1e308, 1e308]
    if name == "gaussian":                               # exp(-inf) = 0 is finite: overflow
        X[6] = np.nan                                    # is not possible, NaN still is
    with pytest.raises(NonFiniteSimilarityError) as info:
        similarity(name, X, B, params=PARAMS.get(name, {}), block_elems=10)
    assert info.value.row == 6 and info.value.name == name
    assert str(info.value) == (
        f"similarity {name!r} is NaN or infinite on row 6 (against reference row 0): the "
        f"feature values overflow float64 in it; rescale the features (e.g. preprocess: "
        f"[minmax])")


def test_sigmoid_overflowing_inner_product_is_caught_though_tanh_saturates():
    X = np.array([[1.0, -1.0], [1e308, 1e308]])          # <x, b> = 0, then inf
    B = np.array([[1e308, 1e308]])
    with pytest.raises(NonFiniteSimilarityError) as info:
        similarity("sigmoid", X, B, params={"scale": 1.0, "offset": -1.0})
    assert info.value.row == 1 and info.value.name == "sigmoid"


def _nw_loop(name, Xq, Xt, Yt):
    """Kernel regression with explicit loops over query and training rows."""
    out = []
    for x in Xq:
        num = [0.0] * Yt.shape[1]
        den = mag = 0.0
        for xt, yt in zip(Xt, Yt):
            k = _pair(name, x, xt)
            num = [a + k * b for a, b in zip(num, yt)]
            den += k
            mag += abs(k)
        if abs(den) <= 1e-12 * mag:
            out.append(list(Yt.mean(axis=0)))
        else:
            out.append([a / den for a in num])
    return np.array(out)


@pytest.mark.parametrize("name", NAMES)
def test_nadaraya_watson_equals_a_loop(name):
    rng = np.random.default_rng(3)
    Xt = rng.normal(size=(11, 3))
    Yt = rng.normal(size=(11, 2))
    Xq = rng.normal(size=(7, 3))
    expected = _nw_loop(name, Xq, Xt, Yt)
    params = PARAMS.get(name, {})
    for block_elems in (1, 30, 10**6):                   # 1x1 pairs, several blocks, one block
        for Xin in (Xq, sp.csr_matrix(Xq)):
            got = nadaraya_watson(name, Xin, Xt, Yt, params=params, block_elems=block_elems)
            np.testing.assert_allclose(got, expected, rtol=1e-10, atol=1e-12)


def test_nadaraya_watson_vanishing_denominator_falls_back_to_the_mean():
    # Manhattan similarities of a query to training points equal to it are all 0.
    got = nadaraya_watson("manhattan", np.zeros((1, 2)), np.zeros((4, 2)),
                          np.arange(4.0)[:, None])
    np.testing.assert_array_equal(got, [[1.5]])        # the mean of 0, 1, 2, 3
    # Sigmoid with values of both signs summing to 0: tanh(+-1) for the two training rows.
    got = nadaraya_watson("sigmoid", np.ones((1, 1)), np.array([[2.0], [0.0]]),
                          np.array([[5.0], [7.0]]), params={"scale": 1.0, "offset": -1.0})
    np.testing.assert_array_equal(got, [[6.0]])
    # Otherwise negative values are weights as they are: |K| = 0, 2, 2 here.
    got = nadaraya_watson("manhattan", np.zeros((1, 2)),
                          np.array([[0.0, 0.0], [1.0, 1.0], [2.0, 0.0]]),
                          np.array([[1.0], [2.0], [6.0]]))
    np.testing.assert_allclose(got, [[(2 * 2.0 + 2 * 6.0) / 4.0]])


def test_nadaraya_watson_empty_query():
    got = nadaraya_watson("manhattan", np.zeros((0, 2)), np.ones((3, 2)), np.ones((3, 1)))
    assert got.shape == (0, 1)


def test_mean_distance_equals_a_loop():
    rng = np.random.default_rng(4)
    X = rng.normal(size=(15, 4))
    rows = np.array([2, 7, 11])
    pairs = [np.linalg.norm(X[r] - X[i]) for r in rows for i in range(15) if i != r]
    for Xin in (X, sp.csr_matrix(X)):
        for block_elems in (1, 9, 10**6):
            assert mean_distance(Xin, rows, block_elems=block_elems) == pytest.approx(
                np.mean(pairs), rel=1e-12)
    assert mean_distance(np.ones((1, 2)), np.array([0])) == 0.0
