"""Feature preprocessing: each step against a dense reference, train-fitted, config errors."""

from __future__ import annotations

import json

import numpy as np
import pytest
import scipy.sparse as sp

from mlx.errors import ConfigError, NotFittedError, UnknownNameError
from mlx.preprocess import STEPS, Preprocessor, parse_steps


def sparse_data(seed, n=30, d=8, negative=False):
    rng = np.random.default_rng(seed)
    X = rng.random((n, d)) * (rng.random((n, d)) < 0.4)
    X[:, 1] = 0.0                    # an all-zero feature
    X[:, 2] = 3.0                    # a constant non-zero feature
    X[0] = 0.0                       # an all-zero row
    if negative:
        X[:, 3] -= 0.5 * (X[:, 3] != 0)
    return X


def run(steps, train, test):
    pre = Preprocessor(steps).fit(sp.csr_matrix(train))
    return pre, pre.transform(sp.csr_matrix(test))


# --------------------------------------------------------------------------- dense references


def ref_l2(X):
    norms = np.linalg.norm(X, axis=1, keepdims=True)
    return np.divide(X, norms, out=np.zeros_like(X), where=norms > 0)


def ref_bias(X, value=1.0):
    return np.hstack([X, np.full((X.shape[0], 1), value)])


def ref_minmax(train, X):
    lo, hi = train.min(axis=0), train.max(axis=0)
    span = np.where(hi > lo, hi - lo, 1.0)
    return (X - lo) / span


def ref_tfidf(train, X):
    n = train.shape[0]
    df = (train != 0).sum(axis=0)
    return X * (np.log((1 + n) / (1 + df)) + 1)


def ref_remove_constant(train, X):
    return X[:, train.min(axis=0) != train.max(axis=0)]


@pytest.mark.parametrize("negative", [False, True])
@pytest.mark.parametrize("name,ref", [
    ("l2_normalize", lambda tr, X: ref_l2(X)),
    ("bias", lambda tr, X: ref_bias(X)),
    ("minmax", ref_minmax),
    ("tfidf", ref_tfidf),
    ("remove_constant", ref_remove_constant),
])
def test_step_matches_dense_reference_with_train_fitted_parameters(name, ref, negative):
    train, test = sparse_data(0, negative=negative), sparse_data(1, n=17, negative=negative)
    pre, out = run([name], train, test)
    assert sp.isspmatrix_csr(out) and out.dtype == np.float64 and out.has_sorted_indices
    assert not (out.data == 0).any()
    np.testing.assert_allclose(out.toarray(), ref(train, test), rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(pre.transform(sp.csr_matrix(train)).toarray(), ref(train, train),
                               rtol=1e-12, atol=1e-15)


def test_parameters_come_from_train_not_test():
    train, test = sparse_data(0), 10 * sparse_data(1)
    _, out = run(["minmax"], train, test)
    np.testing.assert_allclose(out.toarray(), ref_minmax(train, test))
    assert out.max() > 1.0            # test values are not clipped
    _, own = run(["minmax"], test, test)
    assert not np.allclose(out.toarray(), own.toarray())


def test_minmax_keeps_sparsity_when_train_min_is_zero():
    train = sparse_data(0)
    train[:, 2] = 0.0                     # no constant non-zero feature
    test = sparse_data(1)
    _, out = run(["minmax"], train, test)
    assert out.nnz == np.count_nonzero(test)       # a pure per-feature scaling


def test_minmax_shifted_column_becomes_dense():
    train = sparse_data(0, negative=True)
    _, out = run(["minmax"], train, np.zeros((4, train.shape[1])))
    lo = train.min(axis=0)
    expected = np.where(lo != 0, -lo / np.where(train.max(0) > lo, train.max(0) - lo, 1), 0)
    np.testing.assert_allclose(out.toarray(), np.tile(expected, (4, 1)))


def test_tfidf_does_not_normalise_rows_unless_asked():
    train = sparse_data(0)
    _, out = run(["tfidf"], train, train)
    norms = np.linalg.norm(out.toarray(), axis=1)
    assert not np.allclose(norms[norms > 0], 1.0)
    _, out = run(["tfidf", "l2_normalize"], train, train)
    np.testing.assert_allclose(out.toarray(), ref_l2(ref_tfidf(train, train)))


def test_order_matters():
    train = sparse_data(0)
    _, l2_bias = run(["l2_normalize", "bias"], train, train)
    _, bias_l2 = run(["bias", "l2_normalize"], train, train)
    np.testing.assert_allclose(l2_bias.toarray(), ref_bias(ref_l2(train)))
    np.testing.assert_allclose(bias_l2.toarray(), ref_l2(ref_bias(train)))
    assert not np.allclose(l2_bias.toarray(), bias_l2.toarray())


def test_chain_fits_each_step_on_the_previous_output():
    train, test = sparse_data(0), sparse_data(2, n=9)
    steps = ["remove_constant", "tfidf", {"bias": {"value": 2.5}}, "l2_normalize"]
    pre, out = run(steps, train, test)
    kept = train.min(0) != train.max(0)
    expected = ref_l2(ref_bias(ref_tfidf(train[:, kept], test[:, kept]), 2.5))
    np.testing.assert_allclose(out.toarray(), expected, rtol=1e-12)
    assert pre.n_features_in_ == 8 and pre.n_features_out_ == kept.sum() + 1
    np.testing.assert_allclose(pre.fit_transform(sp.csr_matrix(train)).toarray(),
                               pre.transform(sp.csr_matrix(train)).toarray())


def test_inputs_are_not_modified_and_dense_input_works():
    X = sp.csr_matrix(sparse_data(0))
    before = X.copy()
    pre = Preprocessor(["tfidf", "l2_normalize", "minmax", "bias"]).fit(X)
    pre.transform(X)
    assert (X != before).nnz == 0 and np.array_equal(X.data, before.data)
    np.testing.assert_allclose(pre.transform(X.toarray()).toarray(), pre.transform(X).toarray())


def test_no_steps_is_identity():
    X = sp.csr_matrix(sparse_data(0))
    for steps in (None, []):
        out = Preprocessor(steps).fit(X).transform(X)
        assert (out != X).nnz == 0
    assert Preprocessor(None).describe() == []


def test_describe_is_canonical_json():
    pre = Preprocessor(["l2_normalize", {"bias": {"value": 2}}, {"bias": None}, {"tfidf": {}}])
    assert pre.describe() == [{"l2_normalize": {}}, {"bias": {"value": 2.0}},
                              {"bias": {"value": 1.0}}, {"tfidf": {}}]
    json.dumps(pre.describe())
    assert Preprocessor(parse_steps(["bias"])).describe() == [{"bias": {"value": 1.0}}]


def test_not_fitted_and_width_mismatch():
    with pytest.raises(NotFittedError, match="not fitted yet"):
        Preprocessor(["bias"]).transform(sp.csr_matrix((2, 3)))
    pre = Preprocessor(["bias"]).fit(sp.csr_matrix(np.ones((2, 3))))
    with pytest.raises(ValueError, match="X has 4 features but the preprocessor was fitted on 3"):
        pre.transform(sp.csr_matrix((2, 4)))


def test_steps_registry_names():
    assert STEPS.names() == ["bias", "impute_mean", "l2_normalize", "minmax", "remove_constant",
                             "tfidf"]


def with_nan(X, seed, fraction=0.2):
    """``X`` with a random ``fraction`` of its entries (zeros included) missing, plus a column
    missing in every row."""
    X = X.copy()
    rng = np.random.default_rng(seed)
    X[rng.random(X.shape) < fraction] = np.nan
    X[:, 4] = np.nan
    return X


def ref_impute_mean(train, X):
    observed = ~np.isnan(train)
    counts = observed.sum(axis=0)
    sums = np.where(observed, train, 0.0).sum(axis=0)
    means = np.divide(sums, counts, out=np.zeros(train.shape[1]), where=counts > 0)
    return np.where(np.isnan(X), means, X)


def test_impute_mean_matches_dense_reference_with_train_fitted_means():
    train, test = with_nan(sparse_data(0), 1), with_nan(10 * sparse_data(1, n=17), 2)
    assert np.isnan(train).sum() > 10 and np.isnan(test[:, 0]).any()
    X = sp.csr_matrix(train)
    assert np.isnan(X.data).sum() == np.isnan(train).sum()   # NaN entries are stored
    pre, out = run(["impute_mean"], train, test)
    assert sp.isspmatrix_csr(out) and out.has_sorted_indices
    assert np.isfinite(out.data).all() and not (out.data == 0).any()
    np.testing.assert_allclose(out.toarray(), ref_impute_mean(train, test), rtol=1e-12)
    np.testing.assert_allclose(pre.transform(X).toarray(), ref_impute_mean(train, train))
    mean = pre.steps[0].mean_
    assert mean[4] == 0.0                                    # never observed: filled with 0
    assert mean[0] == pytest.approx(np.nanmean(train[:, 0]))  # implicit zeros are observed


def test_impute_mean_then_other_steps_and_no_nan_is_identity():
    train, test = with_nan(sparse_data(0), 3), with_nan(sparse_data(1), 4)
    _, out = run(["impute_mean", "minmax", "bias"], train, test)
    filled = ref_impute_mean(train, train), ref_impute_mean(train, test)
    np.testing.assert_allclose(out.toarray(), ref_bias(ref_minmax(*filled)), rtol=1e-12)
    X = sp.csr_matrix(sparse_data(0))
    same = Preprocessor(["impute_mean"]).fit(X).transform(X)
    assert (same != X).nnz == 0
    assert Preprocessor(["impute_mean"]).describe() == [{"impute_mean": {}}]


# --------------------------------------------------------------------------- config errors


def test_unknown_step_name():
    with pytest.raises(UnknownNameError) as info:
        parse_steps(["l2_normalize", "l2_normalise"], source="configs/x.yaml")
    assert str(info.value) == (
        "configs/x.yaml: preprocess[1]: unknown preprocessing step 'l2_normalise'. Did you mean "
        "'l2_normalize'? Available preprocessing steps: bias, impute_mean, l2_normalize, minmax, "
        "remove_constant, tfidf")


def test_bad_parameter_value_names_the_key_path():
    with pytest.raises(ConfigError) as info:
        parse_steps(["tfidf", {"bias": {"value": -1}}], source="configs/x.yaml")
    assert str(info.value) == ("configs/x.yaml: preprocess[1].bias.value: must be a positive "
                               "finite number. Got -1 instead.")
    for bad in ("one", True, float("inf"), 0):
        with pytest.raises(ConfigError, match=r"preprocess\[0\]\.bias\.value: must be a positive"):
            parse_steps([{"bias": {"value": bad}}])


def test_unknown_parameter():
    with pytest.raises(ConfigError) as info:
        parse_steps([{"bias": {"valeu": 1.0}}], source="c.yaml", key_path="dataset.preprocess")
    assert str(info.value) == ("c.yaml: dataset.preprocess[0].bias: unknown parameter 'valeu'. "
                               "Did you mean 'value'? Valid parameters: value")
    with pytest.raises(ConfigError) as info:
        parse_steps([{"tfidf": {"norm": "l2"}}])
    assert str(info.value) == ("preprocess[0].tfidf: unknown parameter 'norm'. "
                               "Step 'tfidf' takes no parameters.")


@pytest.mark.parametrize("node,where,fragment", [
    ("l2_normalize", "preprocess", "must be a list of steps"),
    ({"bias": {}}, "preprocess", "must be a list of steps"),
    ([{"bias": {}, "tfidf": {}}], "preprocess[0]", "a step is a name such as 'l2_normalize'"),
    ([3], "preprocess[0]", "a step is a name such as"),
    ([{"bias": 2.0}], "preprocess[0].bias", "parameters must be a mapping"),
])
def test_malformed_nodes(node, where, fragment):
    with pytest.raises(ConfigError) as info:
        parse_steps(node)
    assert info.value.key_path == where
    assert fragment in info.value.message


def test_l2_normalize_is_exact_near_the_float_limits():
    import warnings

    from mlx.preprocess import Preprocessor

    X = sp.csr_matrix(np.array([[1e308, 1e308, 0.0], [3e-320, 4e-320, 0.0], [3.0, 4.0, 0.0],
                                [0.0, 0.0, 0.0]]))
    with warnings.catch_warnings():
        warnings.simplefilter("error")                # no overflow or underflow warning
        out = Preprocessor(["l2_normalize"]).fit(X).transform(X).toarray()
    np.testing.assert_allclose(out[0], [2 ** -0.5, 2 ** -0.5, 0.0], rtol=1e-15)
    np.testing.assert_allclose(out[1], [0.6, 0.8, 0.0], rtol=1e-3)   # subnormal inputs
    np.testing.assert_allclose(out[2], [0.6, 0.8, 0.0], rtol=1e-15)
    assert not out[3].any()
