"""LSVV: properties the older tests left open (found by mutation testing): the multi-class
hinge with two classes, one row and margins exactly 1, scaling applied when scoring, the
error texts of scoring."""

import numpy as np
import pytest
import scipy.sparse as sp

import mlx.methods.lsvv as lsvv_module
from mlx.methods.lsvv import LSVV, multiclass_hinge


def _onehot(y, K):
    return sp.csr_matrix((np.ones(y.size), (np.arange(y.size), y)), shape=(y.size, K))


# ----------------------------------------------------------------------------- the hinge
def test_hinge_with_two_classes_and_with_one_row():
    S = np.array([[0.3, -0.2], [2.0, 0.5], [-1.0, 1.5]])
    y = np.array([0, 0, 1])
    value, grad = multiclass_hinge(S, y)
    # margins 0.5, 1.5, 2.5: only row 0 is active
    assert value == pytest.approx(0.5)
    np.testing.assert_array_equal(grad, [[-1.0, 1.0], [0.0, 0.0], [0.0, 0.0]])
    value, grad = multiclass_hinge(S[:1], y[:1])                   # one row
    assert value == pytest.approx(0.5)
    np.testing.assert_array_equal(grad, [[-1.0, 1.0]])


def test_hinge_subgradient_is_zero_at_a_margin_of_exactly_one():
    """The docstring: the subgradient is non-zero where ``m_i < 1``; at ``m_i = 1`` the loss
    is 0 and so is the chosen subgradient."""
    S = np.array([[2.0, 1.0, 0.0], [0.0, 0.5, 1.0]])
    y = np.array([0, 2])                                           # margins 1 and 0.5
    value, grad = multiclass_hinge(S, y)
    assert value == pytest.approx(0.5)
    np.testing.assert_array_equal(grad, [[0.0, 0.0, 0.0], [0.0, 1.0, -1.0]])


# ----------------------------------------------------------------------------- scoring
def _raw_features(seed=0, n=50, d=5, K=3):
    """Dense features in the hundreds (``scale_features="auto"`` scales them)."""
    rng = np.random.default_rng(seed)
    X = 100.0 * rng.standard_normal((n, d))
    Y = (rng.random((n, K)) < 0.4).astype(float)
    return X, Y


def test_scaling_found_at_fit_is_applied_to_the_rows_scored():
    X, Y = _raw_features()
    m = LSVV(tau_A=1e-3, epochs=4, min_steps=0, random_state=0).fit(X, sp.csr_matrix(Y))
    assert m.feature_scale_ is not None and "features scaled" in m.message_
    scale = 1.0 / np.abs(X).max(axis=0)
    np.testing.assert_allclose(m.decision_function(X), (X * scale) @ m.W_, rtol=1e-12)
    # the returned iterate is the best one: objective (11) of its scores on the training rows
    R = m.decision_function(X) - Y
    assert (R ** 2).sum() / X.shape[0] + 1e-3 * (m.W_ ** 2).sum() == pytest.approx(
        min(m.objective_), rel=1e-10)


def test_scoring_rows_with_another_number_of_features_names_both():
    X, Y = _raw_features()
    m = LSVV(tau_A=1e-3, epochs=1, min_steps=0, random_state=0).fit(X, sp.csr_matrix(Y))
    with pytest.raises(ValueError) as info:
        m.decision_function(X[:, :4])
    assert str(info.value) == ("LSVV: X has 4 features, but LSVV is expecting 5 features as "
                               "input (it was fitted with 5)")


# ----------------------------------------------------------------------------- blocks and routes
def _multilabel(seed=0, n=30, d=6, K=4, observed_share=0.7):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d))
    Y = (rng.random((n, K)) < 0.4).astype(float)
    obs = (rng.random((n, K)) < observed_share).astype(float)
    return X, sp.csr_matrix(Y * obs), sp.csr_matrix(obs)


def test_objective_in_blocks_of_rows_is_the_objective_in_one(monkeypatch):
    X, Y, obs = _multilabel()
    m = LSVV(tau_A=0.01, tau_S=0.2, theta=1, epochs=2, min_steps=0, random_state=0)
    problem = m._problem(X, Y, obs, None, np.random.default_rng(0))[0]
    W = np.random.default_rng(1).standard_normal((6, 4))
    R = (X @ W - Y.toarray()) * obs.toarray()
    s = np.linalg.svd(W, compute_uv=False)
    expected = (R ** 2).sum() / 30 + 0.01 * (W ** 2).sum() + 0.2 * s[1:].sum()
    assert problem.objective(W) == pytest.approx(expected, rel=1e-12)
    monkeypatch.setattr(lsvv_module, "_SCORE_BLOCK", 4 * 7)       # blocks of 7 rows: 7 7 7 7 2
    assert problem.objective(W) == pytest.approx(expected, rel=1e-12)


def test_large_targets_densified_per_batch_fit_as_dense_ones(monkeypatch):
    X, Y, obs = _multilabel(seed=2, n=40)
    params = dict(tau_A=0.01, tau_S=0.1, theta=2, batch_size=8, epochs=3, min_steps=0,
                  random_state=0)
    dense = LSVV(**params).fit(X, Y, observed=obs)
    monkeypatch.setattr(lsvv_module, "_DENSE_TARGETS", 0)
    per_batch = LSVV(**params).fit(X, Y, observed=obs)
    np.testing.assert_allclose(per_batch.W_, dense.W_, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(per_batch.objective_, dense.objective_, rtol=1e-12)
    # and the mask matters on that route too
    unmasked = LSVV(**params).fit(X, Y)
    assert not np.allclose(unmasked.W_, per_batch.W_)
