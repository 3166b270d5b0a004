"""LSVV: losses and gradients, the four models of Table 6, recovery, configuration errors."""

from __future__ import annotations

import math

import numpy as np
import pytest
import scipy.sparse as sp

import mlx.methods.lsvv as lsvv_module
from mlx.methods.base import FitContext, InvalidParameterError
from mlx.methods.lsvv import LSVV as _LSVV
from mlx.methods.lsvv import multiclass_hinge, squared_loss
from mlx.numerics.knn_graph import graph_laplacian, knn_graph
from mlx.numerics.rff import draw_rff, median_distance


class LSVV(_LSVV):
    """The algorithm's tests fix tau_A at the paper configs' 1e-6 and take features as given;
    the ``auto`` choice and the scaling have tests of their own."""

    def __init__(self, *, tau_A=1e-6, scale_features="none", **params):
        super().__init__(tau_A=tau_A, scale_features=scale_features, **params)


def _fd_grad(f, x, h=1e-6):
    """Central finite differences of the scalar function ``f`` at ``x``."""
    g = np.zeros_like(x)
    for idx in np.ndindex(x.shape):
        e = np.zeros_like(x)
        e[idx] = h
        g[idx] = (f(x + e) - f(x - e)) / (2 * h)
    return g


def _onehot(y, K):
    return sp.csr_matrix((np.ones(y.size), (np.arange(y.size), y)), shape=(y.size, K))


def _blobs(seed=0, n=120, d=6, K=4, spread=0.6):
    """Well separated classes: centre 3 e_k plus noise; returns X, classes."""
    rng = np.random.default_rng(seed)
    y = rng.integers(0, K, size=n)
    X = 3.0 * np.eye(d)[y] + spread * rng.standard_normal((n, d))
    return X, y


# ----------------------------------------------------------------------------- losses
def test_squared_loss_gradient_with_and_without_mask():
    rng = np.random.default_rng(0)
    S, T = rng.standard_normal((5, 4)), rng.integers(0, 2, (5, 4)).astype(float)
    mask = rng.integers(0, 2, (5, 4)).astype(float)
    for M in (None, mask):
        value, grad = squared_loss(S, T, M)
        w = 1.0 if M is None else M
        assert value == pytest.approx(np.sum(w * (S - T) ** 2))
        np.testing.assert_allclose(grad, _fd_grad(lambda Z, M=M: squared_loss(Z, T, M)[0], S),
                                   atol=1e-6)
    # masked entries do not matter
    T2 = np.where(mask == 0, 1 - T, T)
    assert squared_loss(S, T2, mask)[0] == squared_loss(S, T, mask)[0]


def test_multiclass_hinge_value_and_subgradient_away_from_kinks():
    rng = np.random.default_rng(1)
    S = rng.standard_normal((30, 5)) * 2.0
    y = rng.integers(0, 5, size=30)
    value, grad = multiclass_hinge(S, y)
    rows = np.arange(30)
    other = S.copy()
    other[rows, y] = -np.inf
    margin = S[rows, y] - other.max(axis=1)
    assert value == pytest.approx(np.sum(np.maximum(0, 1 - margin)))
    # away from kinks (margin != 1, no tie for the runner-up) the loss is differentiable
    second = np.sort(other, axis=1)[:, -2]
    ok = (np.abs(margin - 1) > 1e-3) & (other.max(axis=1) - second > 1e-3)
    assert ok.sum() > 20
    fd = _fd_grad(lambda Z: multiclass_hinge(Z[ok], y[ok])[0], S)
    np.testing.assert_allclose(grad[ok], fd[ok], atol=1e-6)
    # rows with margin >= 1 have zero subgradient; active rows sum to zero
    np.testing.assert_array_equal(grad[margin >= 1], 0.0)
    np.testing.assert_array_equal(grad.sum(axis=1), 0.0)
    assert multiclass_hinge(S[:, :1], np.zeros(30, dtype=int))[0] == 0.0   # one class


def _problem(method, X, Y, observed=None, unlabelled=None, seed=0):
    return method._problem(X, Y, observed, unlabelled, np.random.default_rng(seed))


@pytest.mark.parametrize("task", ["multilabel", "multiclass", "regression"])
@pytest.mark.parametrize("space", ["linear", "rff"])
def test_full_batch_gradient_of_g_matches_finite_differences(task, space):
    rng = np.random.default_rng(2)
    n, d, K = 25, 6, 4
    X = sp.csr_matrix(rng.standard_normal((n, d)))
    observed = None
    if task == "multiclass":
        Y = _onehot(rng.integers(0, K, n), K)
    elif task == "regression":
        Y = rng.standard_normal((n, K))
    else:
        Y = sp.csr_matrix(rng.integers(0, 2, (n, K)).astype(float))
        observed = sp.csr_matrix(rng.integers(0, 2, (n, K)).astype(float))
        Y = sp.csr_matrix(Y.multiply(observed))
    X_u = rng.standard_normal((10, d))
    method = LSVV(task=task, space=space, n_components=7, bandwidth=2.0, tau_A=0.3,
                  tau_I=0.05, n_neighbors=4)
    problem, _, _, _, _ = _problem(method, X, Y, observed, X_u)
    D = problem.Psi.shape[1]
    W = rng.standard_normal((D, K))
    value, grad = problem.gradient(W, np.arange(n))
    np.testing.assert_allclose(value / n + 0.3 * np.sum(W * W)
                               + 0.05 * problem.manifold.value(W),
                               problem.smooth_objective(W), rtol=1e-12)
    fd = _fd_grad(problem.smooth_objective, W)
    if task == "multiclass":        # the hinge is piecewise linear: fine away from its kinks
        np.testing.assert_allclose(grad, fd, atol=1e-5)
    else:
        np.testing.assert_allclose(grad, fd, rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("space", ["linear", "rff"])
def test_manifold_term_routes_agree_and_match_the_graph(space, monkeypatch):
    rng = np.random.default_rng(3)
    X = sp.random(30, 8, density=0.5, random_state=rng, format="csr")
    X_u = sp.random(12, 8, density=0.5, random_state=rng, format="csr")
    Y = sp.csr_matrix(rng.integers(0, 2, (30, 3)).astype(float))
    method = LSVV(space=space, n_components=9, bandwidth=1.0, tau_I=0.1, n_neighbors=3)
    eig, _, _, _, _ = _problem(method, X, Y, None, X_u)
    monkeypatch.setattr(lsvv_module, "EIG_MAX_FEATURES", 0)
    sparse, _, _, _, _ = _problem(method, X, Y, None, X_u)
    assert (eig.manifold.route, sparse.manifold.route) == ("eig", "sparse")
    # tr(W' Phi~' L Phi~ W) with the graph over labelled + unlabelled rows
    Phi_all = sparse.manifold.Phi
    Phi_all = Phi_all.toarray() if sp.issparse(Phi_all) else Phi_all
    L = graph_laplacian(knn_graph(Phi_all, 3)).toarray()
    W = rng.standard_normal((Phi_all.shape[1], 3))
    expected = np.trace(W.T @ Phi_all.T @ L @ Phi_all @ W)
    V = eig.manifold.V
    assert sparse.manifold.value(W) == pytest.approx(expected, rel=1e-10)
    assert eig.manifold.value(V.T @ W) == pytest.approx(expected, rel=1e-10)
    np.testing.assert_allclose(V @ eig.manifold.apply(V.T @ W), Phi_all.T @ L @ Phi_all @ W,
                               rtol=1e-9, atol=1e-9)
    np.testing.assert_allclose(_fd_grad(sparse.manifold.value, W),
                               2 * sparse.manifold.apply(W), rtol=1e-6, atol=1e-6)


def test_eig_and_sparse_routes_fit_the_same_model(monkeypatch):
    rng = np.random.default_rng(4)
    X = sp.random(60, 10, density=0.4, random_state=rng, format="csr")
    Y = sp.csr_matrix(rng.integers(0, 2, (60, 5)).astype(float))
    params = dict(tau_I=1e-2, tau_S=1e-2, theta=2, n_neighbors=4, epochs=3, min_steps=0,
                  random_state=0)
    a = LSVV(**params).fit(X, Y)
    monkeypatch.setattr(lsvv_module, "EIG_MAX_FEATURES", 0)
    b = LSVV(**params).fit(X, Y)
    assert (a.manifold_route_, b.manifold_route_) == ("eig", "sparse")
    np.testing.assert_allclose(a.W_, b.W_, rtol=1e-8, atol=1e-10)
    np.testing.assert_allclose(a.objective_, b.objective_, rtol=1e-9)


# ----------------------------------------------------------------------------- random features
def test_rff_inner_products_approach_the_gaussian_kernel():
    rng = np.random.default_rng(5)
    A = rng.standard_normal((15, 4))
    sigma = 1.7
    sq = ((A[:, None, :] - A[None, :, :]) ** 2).sum(-1)
    kernel = np.exp(-sq / (2 * sigma ** 2))
    errors = []
    for D in (20, 200, 20000):
        Z = draw_rff(np.random.default_rng(0), 4, D, sigma).transform(A)
        errors.append(np.abs(Z @ Z.T - kernel).max())
    assert errors[2] < 0.05 and errors[2] < errors[1] < errors[0]
    Z = draw_rff(np.random.default_rng(0), 4, 20000, sigma).transform(sp.csr_matrix(A))
    assert np.abs(Z @ Z.T - kernel).max() == pytest.approx(errors[2], rel=1e-9)  # sparse: same


def test_median_distance():
    A = np.array([[0.0, 0.0], [3.0, 4.0], [6.0, 8.0]])             # distances 5, 5, 10
    assert median_distance(A, np.random.default_rng(0)) == 5.0
    assert median_distance(np.zeros((4, 2)), np.random.default_rng(0)) == 1.0


# ----------------------------------------------------------------------------- the four models
class _Spy:
    def __init__(self, fn):
        self.fn, self.calls = fn, 0

    def __call__(self, *args, **kwargs):
        self.calls += 1
        return self.fn(*args, **kwargs)


@pytest.mark.parametrize("name,tau_I,tau_S,graph,prox", [
    ("SRM-VV", 0.0, 0.0, False, False),
    ("LRC-VV", 0.0, 0.05, False, True),
    ("SS-VV", 0.01, 0.0, True, False),
    ("LSVV", 0.01, 0.05, True, True),
])
def test_table6_models_are_parameter_settings(name, tau_I, tau_S, graph, prox, monkeypatch):
    rng = np.random.default_rng(6)
    X = sp.random(40, 8, density=0.5, random_state=rng, format="csr")
    Y = sp.csr_matrix(rng.integers(0, 2, (40, 5)).astype(float))
    X_u = sp.random(20, 8, density=0.5, random_state=rng, format="csr")
    svt_spy = _Spy(lsvv_module.partial_svt)
    knn_spy = _Spy(lsvv_module.knn_graph)
    monkeypatch.setattr(lsvv_module, "partial_svt", svt_spy)
    monkeypatch.setattr(lsvv_module, "knn_graph", knn_spy)
    m = LSVV(tau_I=tau_I, tau_S=tau_S, theta=1, n_neighbors=3, batch_size=10, epochs=2, min_steps=0,
             random_state=0).fit(X, Y, unlabelled=X_u)
    assert knn_spy.calls == int(graph)
    assert (m.manifold_route_ is not None) == graph
    assert svt_spy.calls == m.n_prox_ == (8 if prox else 0)        # 4 batches x 2 epochs
    assert m.n_steps_ == 8


def test_prox_every_sums_the_thresholds_of_the_steps_it_covers(monkeypatch):
    rng = np.random.default_rng(7)
    X = rng.standard_normal((50, 6))
    Y = sp.csr_matrix(rng.integers(0, 2, (50, 4)).astype(float))
    taus = []

    def record(Q, tau, theta, *, shrink):                          # a prox that changes nothing:
        taus.append(tau)                                           # both runs take equal steps
        return Q

    monkeypatch.setattr(lsvv_module, "partial_svt", record)
    base = dict(tau_S=0.05, theta=1, batch_size=5, epochs=2, min_steps=0, random_state=0)
    every = LSVV(**base).fit(X, Y)
    per_step, taus[:] = list(taus), []
    lazy = LSVV(**base, prox_every=3).fit(X, Y)
    assert every.n_prox_ == 20 and lazy.n_prox_ == 2 * 4           # batches 3, 6, 9, 10
    groups = [slice(0, 3), slice(3, 6), slice(6, 9), slice(9, 10)]
    expected = [sum(per_step[10 * e:10 * e + 10][g]) for e in range(2) for g in groups]
    np.testing.assert_allclose(taus, expected, rtol=1e-12)
    assert all(t > 0 for t in per_step)


def test_prox_every_stays_close_to_every_step():
    rng = np.random.default_rng(7)
    X = rng.standard_normal((50, 6))
    Y = sp.csr_matrix(rng.integers(0, 2, (50, 4)).astype(float))
    base = dict(tau_S=0.05, theta=1, batch_size=5, epochs=2, min_steps=0, random_state=0)
    every = LSVV(**base).fit(X, Y)
    lazy = LSVV(**base, prox_every=2).fit(X, Y)
    assert np.linalg.norm(lazy.W_ - every.W_) < 0.1 * np.linalg.norm(every.W_)


@pytest.mark.parametrize("shrink", ["tail", "head"])
def test_objective_is_eq_11_at_the_fitted_weights(shrink):
    rng = np.random.default_rng(17)
    X = rng.standard_normal((30, 6))
    Y = rng.integers(0, 2, (30, 4)).astype(float)
    m = LSVV(tau_A=0.01, tau_S=0.3, theta=1, shrink=shrink, epochs=3, min_steps=0,
             random_state=0).fit(X, sp.csr_matrix(Y))
    s = np.linalg.svd(m.W_, compute_uv=False)
    T = s[1:].sum() if shrink == "tail" else s[:1].sum()
    expected = np.sum((X @ m.W_ - Y) ** 2) / 30 + 0.01 * np.sum(m.W_ ** 2) + 0.3 * T
    assert m.objective_[-1] == pytest.approx(expected, rel=1e-10)


def test_theta_at_min_K_D_equals_no_shrinkage():
    rng = np.random.default_rng(8)
    X = rng.standard_normal((40, 6))
    Y = sp.csr_matrix(rng.integers(0, 2, (40, 4)).astype(float))
    for space, D in (("linear", 6), ("rff", 3)):
        common = dict(space=space, n_components=3, epochs=3, min_steps=0, random_state=1)
        plain = LSVV(**common).fit(X, Y).W_
        r = min(4, D)
        np.testing.assert_array_equal(LSVV(**common, tau_S=0.5, theta=r).fit(X, Y).W_, plain)
        np.testing.assert_array_equal(
            LSVV(**common, tau_S=0.5, theta=0, shrink="head").fit(X, Y).W_, plain)
        assert not np.array_equal(LSVV(**common, tau_S=0.5, theta=r - 1).fit(X, Y).W_, plain)


def test_theta_none_is_half_of_min_K_D():
    X = np.random.default_rng(9).standard_normal((20, 7))
    Y = sp.csr_matrix(np.eye(5)[np.arange(20) % 5])
    assert LSVV(epochs=1, min_steps=0).fit(X, Y).theta_ == 3           # ceil(min(5, 7) / 2)
    assert LSVV(epochs=1, min_steps=0, space="rff", n_components=2).fit(X, Y).theta_ == 1


# ----------------------------------------------------------------------------- recovery
def test_recovers_a_low_rank_linear_regression():
    rng = np.random.default_rng(10)
    n, d, K = 300, 15, 8
    W_star = rng.standard_normal((d, 2)) @ rng.standard_normal((2, K)) / np.sqrt(d)
    X, X_test = rng.standard_normal((n, d)), rng.standard_normal((200, d))
    m = LSVV(task="regression", epochs=10, min_steps=0, random_state=0).fit(X, X @ W_star)
    rel = np.linalg.norm(m.decision_function(X_test) - X_test @ W_star) / np.linalg.norm(
        X_test @ W_star)
    assert rel < 0.1


def test_tail_shrinkage_lowers_the_rank_of_a_noisy_low_rank_model():
    rng = np.random.default_rng(11)
    n, d, K = 300, 15, 8
    W_star = rng.standard_normal((d, 2)) @ rng.standard_normal((2, K)) / np.sqrt(d)
    X = rng.standard_normal((n, d))
    T = X @ W_star + 0.3 * rng.standard_normal((n, K))
    common = dict(task="regression", epochs=10, min_steps=0, random_state=0)
    srm = LSVV(**common).fit(X, T)
    lrc = LSVV(**common, tau_S=2.0, theta=2).fit(X, T)
    s_srm = np.linalg.svd(srm.W_, compute_uv=False)
    s_lrc = np.linalg.svd(lrc.W_, compute_uv=False)
    assert s_srm[2] > 0.05 * s_srm[0]                              # noise fills the tail
    assert s_lrc[2] < 0.2 * s_srm[2]                               # shrunk
    assert s_lrc[1] > 0.8 * s_srm[1]                               # the top 2 are kept
    err = [np.linalg.norm(m.W_ - W_star) for m in (srm, lrc)]
    assert err[1] < err[0]


def test_multiclass_recovery_and_scores_argmax():
    X, y = _blobs(0, n=200)
    X_test, y_test = _blobs(1, n=200)
    for space in ("linear", "rff"):
        m = LSVV(task="multiclass", space=space, epochs=10, min_steps=0, random_state=0).fit(
            X, _onehot(y, 4))
        acc = np.mean(np.argmax(m.decision_function(X_test), axis=1) == y_test)
        assert acc > 0.95, (space, acc)
        assert m.threshold == 0.0 and m.empty_outputs_.size == 0 and m.message_ == ""


def test_multilabel_recovery_of_an_exact_low_rank_model():
    rng = np.random.default_rng(12)
    clusters = rng.integers(0, 10, size=300)
    X = sp.csr_matrix(np.eye(10)[clusters])                        # one-hot cluster features
    P1, P2 = np.array([1, 1, 0, 0, 1, 0, 0, 0.0]), np.array([0, 0, 1, 1, 0, 0, 1, 0.0])
    B = np.array([P1 if c % 3 == 0 else P2 if c % 3 == 1 else P1 + P2 for c in range(10)])
    Y = sp.csr_matrix(X @ B)                                       # rank 2, label 7 never on
    m = LSVV(epochs=20, min_steps=0, tau_S=0.01, theta=2, random_state=0).fit(X, Y)
    pred = m.decision_function(X) > m.threshold
    assert m.threshold == 0.5
    assert np.mean(pred != (Y.toarray() > 0)) == 0.0
    np.testing.assert_array_equal(m.empty_outputs_, [5, 7])
    assert m.message_.startswith("2 of 8 labels have no labelled (observed) positive")


def test_missing_labels_enter_only_through_the_mask():
    rng = np.random.default_rng(13)
    X = rng.standard_normal((40, 5))
    Y = rng.integers(0, 2, (40, 4)).astype(float)
    obs = rng.integers(0, 2, (40, 4)).astype(float)
    a = LSVV(epochs=2, min_steps=0, random_state=0).fit(X, sp.csr_matrix(Y * obs),
                                                        observed=sp.csr_matrix(obs))
    b = LSVV(epochs=2, min_steps=0, random_state=0).fit(X, sp.csr_matrix(Y * obs))
    assert not np.array_equal(a.W_, b.W_)                          # unobserved 0s are not 0s
    # nothing observed in a label: its weights only follow the regularisers (stay 0 from 0)
    obs[:, 2] = 0
    c = LSVV(epochs=2, min_steps=0, random_state=0).fit(X, sp.csr_matrix(Y * obs),
                                                        observed=sp.csr_matrix(obs))
    np.testing.assert_array_equal(c.W_[:, 2], 0.0)


def test_empty_class_fits_without_nan():
    X, y = _blobs(2, n=60)
    y[y == 2] = 0                                                  # class 2 never labelled
    m = LSVV(task="multiclass", epochs=3, min_steps=0, random_state=0, tau_S=0.1, theta=1).fit(
        X, _onehot(y, 4))
    assert np.isfinite(m.W_).all() and np.isfinite(m.objective_).all()
    np.testing.assert_array_equal(m.empty_outputs_, [2])
    assert m.message_ == ("1 of 4 classes have no labelled (observed) positive example; their "
                          "weights come from the regularisers only")


# ----------------------------------------------------------------------------- unlabelled rows
def test_unlabelled_rows_enter_the_graph_only():
    rng = np.random.default_rng(14)
    X = rng.standard_normal((30, 4))
    Y = sp.csr_matrix(rng.integers(0, 2, (30, 3)).astype(float))
    X_u = rng.standard_normal((40, 4)) + 2.0
    ss = dict(tau_I=0.05, n_neighbors=3, epochs=2, min_steps=0, random_state=0)
    assert not np.array_equal(LSVV(**ss).fit(X, Y, unlabelled=X_u).W_,
                              LSVV(**ss).fit(X, Y).W_)
    srm = dict(epochs=2, min_steps=0, random_state=0)
    np.testing.assert_array_equal(LSVV(**srm).fit(X, Y, unlabelled=X_u).W_,
                                  LSVV(**srm).fit(X, Y).W_)
    np.testing.assert_array_equal(LSVV(**srm).fit(X, Y, unlabelled=X_u[:0]).W_,
                                  LSVV(**srm).fit(X, Y).W_)
    with pytest.raises(ValueError, match="^LSVV: unlabelled has 3 features but X has 4$"):
        LSVV(**ss).fit(X, Y, unlabelled=X_u[:, :3])


def test_tol_stops_and_records_the_objective():
    X, y = _blobs(3, n=80)
    Y = _onehot(y, 4)
    loose = LSVV(task="multiclass", epochs=50, min_steps=0, tol=0.5, random_state=0).fit(X, Y)
    assert loose.converged_ is True and loose.n_iter_ < 50
    assert len(loose.objective_) == loose.n_iter_
    fixed = LSVV(task="multiclass", epochs=4, min_steps=0, random_state=0).fit(X, Y)
    assert fixed.n_iter_ == 4 and len(fixed.objective_) == 4


def test_fixed_epochs_report_whether_the_objective_settled():
    """Without a tol test LSVV runs a fixed number of epochs; converged_ says whether the last
    epoch moved the objective by at most 1e-3 of its value (it used to stay empty)."""
    X, y = _blobs(3, n=80)
    Y = _onehot(y, 4)
    short = LSVV(task="multiclass", epochs=2, min_steps=0, random_state=0).fit(X, Y)
    obj = short.objective_
    assert abs(obj[1] - obj[0]) > 1e-3 * abs(obj[0]) and short.converged_ is False
    one = LSVV(task="multiclass", epochs=1, min_steps=0, random_state=0).fit(X, Y)
    assert one.converged_ is False
    long = LSVV(task="multiclass", epochs=400, min_steps=0, random_state=0).fit(X, Y)
    obj = long.objective_
    assert abs(obj[-1] - obj[-2]) <= 1e-3 * abs(obj[-2]) and long.converged_ is True


# ----------------------------------------------------------------------------- configuration
def _context(**kw):
    return FitContext(**{**dict(task="multilabel", n_samples=100, n_features=20, n_labels=8),
                         **kw})


def _raises(method, context, param, message):
    with pytest.raises(InvalidParameterError) as info:
        method.check_context(context)
    assert info.value.param == param
    assert str(info.value) == message


def test_check_context_theta():
    _raises(LSVV(theta=9), _context(), "theta",
            "LSVV: theta=9 exceeds min(K, D) = min(8, 20) = 8 (K outputs; D = n_features in the "
            "linear space); use theta <= 8")
    _raises(LSVV(theta=6, space="rff", n_components=5), _context(), "theta",
            "LSVV: theta=6 exceeds min(K, D) = min(8, 5) = 5 (K outputs; D = n_components in "
            "the rff space); use theta <= 5")
    LSVV(theta=8).check_context(_context())                        # theta = min(K, D) is fine
    LSVV(theta=50).check_context(_context(n_labels=0))             # unknown sizes: no check
    LSVV(theta=50).check_context(_context(n_features=0))
    LSVV(theta=6, space="rff", n_components=5).check_context(_context(n_labels=0))
    _raises(LSVV(theta=-1), _context(), "theta", "The 'theta' parameter of LSVV must be an int "
            "in the range [0, inf), a float in the range (0, 1) or None. Got -1 instead.")


def test_check_context_neighbours():
    message = ("LSVV: n_neighbors=10 needs more than 10 training rows (labelled and "
               "unlabelled) for the k-NN graph; there are {rows}; use n_neighbors <= {k} or "
               "tau_I=0")
    _raises(LSVV(tau_I=0.1), _context(n_samples=10), "n_neighbors",
            message.format(rows="10", k=9))
    LSVV(tau_I=0.1).check_context(_context(n_samples=11))
    LSVV(tau_I=0.0).check_context(_context(n_samples=3))           # no graph: no check
    LSVV(tau_I=0.1).check_context(_context(n_samples=0))           # unknown size
    # 4 labelled rows at 40%: at most floor(4.5 / 0.4) = 11 rows in all
    _raises(LSVV(tau_I=0.1, n_neighbors=11), _context(n_samples=4, labelled_ratio=0.4),
            "n_neighbors", message.replace("10", "11").format(rows="at most 11", k=10))
    LSVV(tau_I=0.1, n_neighbors=10).check_context(_context(n_samples=4, labelled_ratio=0.4))


def test_fit_repeats_the_context_checks_with_exact_sizes():
    rng = np.random.default_rng(15)
    X = rng.standard_normal((6, 3))
    Y = sp.csr_matrix(rng.integers(0, 2, (6, 2)).astype(float))
    with pytest.raises(InvalidParameterError) as info:
        LSVV(theta=3).fit(X, Y)
    assert info.value.param == "theta" and "min(K, D) = min(2, 3) = 2" in str(info.value)
    with pytest.raises(InvalidParameterError) as info:
        LSVV(tau_I=0.1, n_neighbors=6).fit(X, Y)
    assert info.value.param == "n_neighbors" and "there are 6;" in str(info.value)
    LSVV(tau_I=0.1, n_neighbors=6).fit(X, Y, unlabelled=X[:1])     # 7 rows with the unlabelled


def test_task_specific_input_errors():
    X = np.random.default_rng(16).standard_normal((6, 3))
    two = sp.csr_matrix(np.array([[1, 1, 0]] + [[1, 0, 0]] * 5, dtype=float))
    with pytest.raises(ValueError, match="^LSVV: a multiclass task needs exactly one class per "
                                         "row; row 0 has 2$"):
        LSVV(task="multiclass").fit(X, two)
    with pytest.raises(ValueError, match="^LSVV: a multiclass task has no missing-label mask"):
        LSVV(task="multiclass").fit(X, _onehot(np.zeros(6, int), 3),
                                    observed=sp.csr_matrix(np.eye(6, 3)))
    with pytest.raises(ValueError, match="^LSVV: a regression task has no missing-label mask"):
        LSVV(task="regression").fit(X, np.ones((6, 2)), observed=sp.csr_matrix(np.eye(6, 2)))
    # a mask that stores every entry leaves nothing missing: the fit is the one without it
    full = LSVV(task="regression", epochs=2, min_steps=0, random_state=0, tau_A=1e-3)
    none = LSVV(task="regression", epochs=2, min_steps=0, random_state=0, tau_A=1e-3)
    T = np.arange(12.0).reshape(6, 2)
    np.testing.assert_array_equal(
        full.fit(X, T, observed=sp.csr_matrix(np.ones((6, 2)))).decision_function(X),
        none.fit(X, T).decision_function(X))
    m = LSVV(task="regression", epochs=2, min_steps=0, random_state=0).fit(X, 3.5 * np.ones((6, 2)))
    assert m.threshold == 0.0 and m.empty_outputs_.size == 0
    assert LSVV(task="ordinal").skip(FitContext(task="ordinal")) is not None


def test_rff_draws_depend_on_the_seed_and_the_fit_is_deterministic():
    X, y = _blobs(4, n=50)
    Y = _onehot(y, 4)
    a = LSVV(task="multiclass", space="rff", n_components=20, epochs=2, min_steps=0, random_state=0)
    b = LSVV(task="multiclass", space="rff", n_components=20, epochs=2, min_steps=0, random_state=1)
    a.fit(X, Y)
    b.fit(X, Y)
    assert not np.array_equal(a.rff_.omega, b.rff_.omega)
    expected = median_distance(sp.csr_matrix(X), np.random.default_rng(0))
    assert a.rff_.bandwidth == pytest.approx(expected)
    assert math.isclose(np.std(a.rff_.omega) * a.rff_.bandwidth, 1.0, rel_tol=0.2)


@pytest.mark.parametrize("theta, expected", [(0.4, 2), (0.1, 0), (0.5, 2), (0.9, 4), (3, 3)])
def test_a_fractional_theta_is_a_share_of_min_k_d(theta, expected):
    """The paper's grid {0, 0.1, ..., 0.9} x min(K, D): here min(5 outputs, 8 features) = 5."""
    rng = np.random.default_rng(0)
    X = sp.csr_matrix(rng.normal(size=(60, 8)))
    Y = sp.csr_matrix((rng.random((60, 5)) < 0.3).astype(float))
    model = LSVV(tau_S=0.1, theta=theta, epochs=1, min_steps=0, random_state=0).fit(X, Y)
    assert model.theta_ == expected


def test_small_labelled_sets_get_at_least_min_steps_steps():
    rng = np.random.default_rng(0)
    classes = np.arange(60) % 3
    X = sp.csr_matrix(rng.normal(size=(60, 8)) + 2.0 * np.eye(8)[classes])   # separable-ish
    Y = sp.csr_matrix((np.ones(60), (np.arange(60), classes)), shape=(60, 3))
    short = LSVV(task="multiclass", epochs=10, min_steps=0, random_state=0).fit(X, Y)
    assert short.n_steps_ == 20                                          # 2 batches per epoch
    long = LSVV(task="multiclass", epochs=10, min_steps=1000, random_state=0).fit(X, Y)
    assert long.n_steps_ == 1000 and len(long.objective_) == 500
    assert long.objective_[-1] < 0.5 * short.objective_[-1]
    big = LSVV(task="multiclass", epochs=3, min_steps=5, batch_size=8, random_state=0).fit(X, Y)
    assert big.n_steps_ == 24                                            # 8 per epoch > 5


def test_the_safeguard_keeps_the_best_iterate_and_damps_an_overshooting_step():
    """Dense linear multi-label data where Algorithm 1's step rule with eps = 1e-2 overshoots:
    the plain algorithm ends far above the best objective it passed; the safeguard returns
    the best iterate and halves the steps."""
    rng = np.random.default_rng(3)
    X = sp.csr_matrix(rng.random((400, 60)))
    Y = sp.csr_matrix((rng.random((400, 12)) < 0.3).astype(float))
    plain = LSVV(safeguard=False, epochs=30, min_steps=0, eps=1.0, random_state=0).fit(X, Y)
    assert plain.objective_[-1] > 2 * min(plain.objective_)
    safe = LSVV(epochs=30, min_steps=0, eps=1.0, random_state=0).fit(X, Y)
    assert safe.n_damped_ >= 1
    best = min(safe.objective_)
    assert best < 0.01 * plain.objective_[-1]
    # the returned weights are the best iterate: objective (11) of W_ (tau_I = tau_S = 0:
    # summed squared error over rows / n + tau_A ||W||^2) is the lowest recorded
    R = safe.decision_function(X) - Y.toarray()
    assert (R ** 2).sum() / X.shape[0] + 1e-6 * (safe.W_ ** 2).sum() == pytest.approx(best,
                                                                                   rel=1e-10)
    assert safe.objective_[-1] > best


@pytest.mark.parametrize("n, batch, min_steps, epochs", [
    (100, 32, 10, 1),      # 4 batches an epoch: 10 steps need 3 epochs (12), not 2 (8)
    (50, 16, 9, 2),        # 4 batches: 9 steps need 3 epochs
    (40, 8, 11, 1),        # 5 batches: 11 steps need 3 epochs
    (40, 8, 10, 1),        # an exact multiple: 2 epochs
    (40, 8, 10, 4),        # epochs already give more
])
def test_min_steps_is_a_floor_on_the_steps_taken(n, batch, min_steps, epochs):
    X, y = _blobs(1, n=n)
    model = LSVV(task="multiclass", batch_size=batch, epochs=epochs, min_steps=min_steps,
                 random_state=0).fit(X, _onehot(y, 4))
    per_epoch = math.ceil(n / batch)
    assert model.n_steps_ >= min_steps
    assert model.n_iter_ == max(epochs, math.ceil(min_steps / per_epoch))
    assert model.n_steps_ == model.n_iter_ * per_epoch
