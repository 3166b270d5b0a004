"""LSVV: properties the older tests left open (found by mutation testing): the multi-class
hinge with two classes, one row and margins exactly 1, scaling applied when scoring, the
error texts of scoring."""

import numpy as np
import pytest
import scipy.sparse as sp

import mlx.methods.lsvv as lsvv_module
from mlx.methods._auto import holdout_split
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
    assert m.message_ == ("LSVV: features scaled by their largest absolute training value "
                          f"(largest {np.abs(X).max():.4g}; the method assumes features in "
                          "[-1, 1]); set preprocess: [minmax] to choose the scaling, or "
                          "scale_features: none")
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


def test_scaling_applies_the_labelled_rows_factors_to_the_unlabelled_rows():
    """With ``scale_features="auto"`` the fit is the fit on features divided by the labelled
    rows' largest absolute values, the unlabelled rows (graph, bandwidth) included."""
    X, Y = _raw_features(seed=3, n=40)
    U = 300.0 * np.random.default_rng(4).standard_normal((20, 5))
    params = dict(tau_A=1e-3, tau_I=0.05, n_neighbors=4, space="rff", n_components=8,
                  epochs=3, min_steps=0, random_state=0)
    auto = LSVV(scale_features="auto", **params).fit(X, sp.csr_matrix(Y), unlabelled=U)
    scale = 1.0 / np.abs(X).max(axis=0)
    by_hand = LSVV(scale_features="none", **params).fit(X * scale, sp.csr_matrix(Y),
                                                         unlabelled=U * scale)
    np.testing.assert_allclose(auto.W_, by_hand.W_, rtol=1e-10, atol=1e-12)
    assert auto.rff_.bandwidth == pytest.approx(by_hand.rff_.bandwidth, rel=1e-12)


# ----------------------------------------------------------------------------- the proximal step
@pytest.mark.parametrize("shrink, theta, runs", [
    ("tail", 3, False),        # theta = min(K, D): nothing is shrunk
    ("tail", 0, True),         # the trace norm
    ("tail", 2, True),
    ("head", 0, False),        # nothing is shrunk
    ("head", 1, True),
    ("head", 3, True),
])
def test_proximal_steps_run_exactly_when_some_value_is_shrunk(shrink, theta, runs):
    X, Y, _ = _multilabel(seed=5, n=20, d=6, K=3)
    m = LSVV(tau_A=0.01, tau_S=0.2, theta=theta, shrink=shrink, batch_size=5, epochs=2,
             min_steps=0, random_state=0).fit(X, Y)
    assert m.n_steps_ == 8
    assert m.n_prox_ == (8 if runs else 0)
    plain = LSVV(tau_A=0.01, batch_size=5, epochs=2, min_steps=0, random_state=0).fit(X, Y)
    assert np.array_equal(m.W_, plain.W_) != runs


# ----------------------------------------------------------------------------- tau_A="auto"
def test_auto_tau_a_scores_regression_candidates_by_their_squared_error():
    rng = np.random.default_rng(6)
    X = rng.standard_normal((60, 5))
    T = X @ rng.standard_normal((5, 3)) + 0.3 * rng.standard_normal((60, 3))
    common = dict(task="regression", scale_features="none", epochs=3, min_steps=0,
                  random_state=0)
    m = LSVV(tau_A="auto", **common).fit(X, T)
    choice = m.auto_["tau_A"]
    fit, val = holdout_split(m, 60)
    for value, score in zip(choice.grid, choice.scores):
        if np.isnan(score):
            continue
        cand = LSVV(tau_A=value, **common).fit(X[fit], T[fit])
        assert score == pytest.approx(-np.mean((cand.decision_function(X[val]) - T[val]) ** 2),
                                      rel=1e-12)
    final = LSVV(tau_A=choice.value, **common).fit(X, T)
    np.testing.assert_array_equal(m.W_, final.W_)
    assert final.auto_ == {}                                        # nothing chosen


def test_auto_tau_a_passes_the_unlabelled_rows_to_every_fit():
    X, Y, _ = _multilabel(seed=7, n=50, d=5, K=3, observed_share=1.0)
    U = np.random.default_rng(8).standard_normal((30, 5)) + 1.5
    common = dict(tau_I=0.05, n_neighbors=4, scale_features="none", epochs=3, min_steps=0,
                  random_state=0)
    m = LSVV(tau_A="auto", **common).fit(X, Y, unlabelled=U)
    final = LSVV(tau_A=m.auto_["tau_A"].value, **common).fit(X, Y, unlabelled=U)
    np.testing.assert_array_equal(m.W_, final.W_)
    alone = LSVV(tau_A=m.auto_["tau_A"].value, **common).fit(X, Y)
    assert not np.allclose(alone.W_, final.W_)


# ----------------------------------------------------------------------------- Algorithm 1
def test_first_two_steps_follow_algorithm_1s_step_size_rule():
    """One mini-batch per epoch (all rows), no safeguard: from W_1 = 0,
    ``G <- rho G + (1 - rho) ||g||^2``, ``eta = sqrt((M + eps) / (G + eps))``, ``W <- W - eta g``,
    ``M <- rho M + (1 - rho) ||eta g||^2``, with g the gradient of g(W)."""
    rng = np.random.default_rng(9)
    X = rng.standard_normal((12, 4))
    Y = (rng.random((12, 3)) < 0.5).astype(float)
    rho, eps, tau_A = 0.8, 0.3, 0.05

    def grad(W):
        return 2.0 * X.T @ (X @ W - Y) / 12 + 2.0 * tau_A * W

    W, G, M = np.zeros((4, 3)), 0.0, 0.0
    for epochs in (1, 2):
        g = grad(W)
        G = rho * G + (1 - rho) * np.sum(g * g)
        eta = np.sqrt((M + eps) / (G + eps))
        W = W - eta * g
        M = rho * M + (1 - rho) * np.sum((eta * g) ** 2)
        m = LSVV(tau_A=tau_A, rho=rho, eps=eps, batch_size=12, epochs=epochs, min_steps=0,
                 safeguard=False, scale_features="none", random_state=0).fit(X, sp.csr_matrix(Y))
        np.testing.assert_allclose(m.W_, W, rtol=1e-12, atol=1e-15)


def test_non_finite_weights_are_a_divergence_error_naming_the_epoch():
    from mlx.errors import DivergenceError

    rng = np.random.default_rng(0)
    X = 1e200 * rng.standard_normal((40, 5))                      # overflows in the first step
    Y = sp.csr_matrix((rng.random((40, 3)) < 0.4).astype(float))
    with pytest.raises(DivergenceError) as info, np.errstate(all="ignore"):
        LSVV(tau_A=1e-6, safeguard=False, scale_features="none", epochs=5, min_steps=0,
             random_state=0).fit(X, Y)
    assert str(info.value) == ("LSVV: the weights became non-finite in epoch 1; try larger "
                               "regularisation, a smaller eps or rho, or scaled features")


def test_message_joins_the_scaling_note_and_the_empty_labels():
    X, Y = _raw_features(seed=10, n=40)
    Y[:, 1] = 0.0                                                  # a label never positive
    m = LSVV(tau_A=1e-3, epochs=1, min_steps=0, random_state=0).fit(X, sp.csr_matrix(Y))
    assert m.message_ == (f"LSVV: features scaled by their largest absolute training value "
                          f"(largest {np.abs(X).max():.4g}; the method assumes features in "
                          f"[-1, 1]); set preprocess: [minmax] to choose the scaling, or "
                          f"scale_features: none; 1 of 3 labels have no labelled (observed) "
                          f"positive example; their weights come from the regularisers only")


# ----------------------------------------------------------------------------- empty outputs
def test_a_last_class_never_labelled_is_an_empty_output():
    rng = np.random.default_rng(11)
    X = rng.standard_normal((30, 4))
    y = rng.integers(0, 3, size=30)                                # class 3 of 4 never seen
    m = LSVV(task="multiclass", tau_A=1e-3, scale_features="none", epochs=2, min_steps=0,
             random_state=0).fit(X, _onehot(y, 4))
    np.testing.assert_array_equal(m.empty_outputs_, [3])
    assert m.message_ == ("1 of 4 classes have no labelled (observed) positive example; their "
                          "weights come from the regularisers only")
    reg = LSVV(task="regression", tau_A=1e-3, scale_features="none", epochs=1, min_steps=0,
               random_state=0).fit(X, X[:, :2])
    assert reg.empty_outputs_.size == 0 and reg.empty_outputs_.dtype.kind == "i"  # "of int"


# ----------------------------------------------------------------------------- unlabelled rows
def test_median_bandwidth_draws_from_labelled_and_unlabelled_rows():
    """600 training rows in all: the median heuristic draws 500 of them with ``random_state``
    (before Omega and b)."""
    from mlx.numerics.rff import median_distance

    rng = np.random.default_rng(12)
    X = rng.standard_normal((300, 4)) * 0.2
    Y = sp.csr_matrix((rng.random((300, 3)) < 0.4).astype(float))
    U = rng.standard_normal((300, 4)) * 0.2 + 0.5
    m = LSVV(tau_A=1e-3, space="rff", n_components=6, epochs=1, min_steps=0,
             random_state=5).fit(X, Y, unlabelled=U)
    expected = median_distance(np.vstack([X, U]), np.random.default_rng(5))
    assert m.rff_.bandwidth == pytest.approx(expected, rel=1e-12)
    assert expected != pytest.approx(median_distance(X, np.random.default_rng(5)), rel=1e-3)


@pytest.mark.parametrize("space", ["linear", "rff"])
def test_unlabelled_rows_enter_the_graph_in_either_space(space):
    rng = np.random.default_rng(13)
    X = rng.standard_normal((30, 4)) * 0.3
    Y = sp.csr_matrix((rng.random((30, 3)) < 0.4).astype(float))
    U = rng.standard_normal((40, 4)) * 0.3 + 0.6
    common = dict(tau_A=1e-3, space=space, n_components=6, bandwidth=1.0, tau_I=0.05,
                  n_neighbors=3, epochs=2, min_steps=0, random_state=0)
    with_u = LSVV(**common).fit(X, Y, unlabelled=U)
    without = LSVV(**common).fit(X, Y)
    assert not np.allclose(with_u.W_, without.W_)
    median = {**common, "bandwidth": "median"}                     # no unlabelled row: none
    np.testing.assert_array_equal(LSVV(**median).fit(X, Y, unlabelled=U[:0]).W_,
                                  LSVV(**median).fit(X, Y).W_)


def test_unlabelled_rows_with_nan_are_refused_by_name():
    X, Y, _ = _multilabel(seed=14)
    U = np.ones((5, 6))
    U[2, 3] = np.nan
    with pytest.raises(ValueError) as info:
        LSVV(tau_A=1e-3, tau_I=0.1, n_neighbors=3, epochs=1, min_steps=0).fit(X, Y, unlabelled=U)
    assert str(info.value) == ("LSVV: unlabelled contains NaN or infinity; remove or impute "
                               "those entries before fitting")


@pytest.mark.parametrize("graph", ["union", "mutual"])
def test_the_manifold_term_uses_the_chosen_symmetrisation(graph):
    from mlx.numerics.knn_graph import graph_laplacian, knn_graph

    rng = np.random.default_rng(15)
    X = rng.standard_normal((25, 3))
    Y = sp.csr_matrix((rng.random((25, 2)) < 0.5).astype(float))
    U = rng.standard_normal((15, 3))
    m = LSVV(tau_A=1e-3, tau_I=0.1, n_neighbors=4, graph=graph, scale_features="none")
    problem = m._problem(X, Y, None, U, np.random.default_rng(0))[0]
    A = np.vstack([X, U])
    L = graph_laplacian(knn_graph(A, 4, mode=graph)).toarray()
    other = graph_laplacian(knn_graph(A, 4, mode={"union": "mutual", "mutual": "union"}[graph]))
    assert not np.allclose(L, other.toarray())
    W = rng.standard_normal((3, 2))
    V = problem.manifold.V
    assert problem.manifold.value(V.T @ W) == pytest.approx(np.trace(W.T @ A.T @ L @ A @ W),
                                                            rel=1e-10)
