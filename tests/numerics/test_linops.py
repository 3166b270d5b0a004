"""LEML subproblems: gradients and Hessian-vector products vs finite differences and
vs the explicit Kronecker form x~_ij = h_j (x) x_i of Yu et al. (2014), eq. (7)-(9)."""

import numpy as np
import pytest
import scipy.sparse as sp

from mlx.numerics import linops
from mlx.numerics.linops import FactorProblem, build_targets, ridge_rows
from mlx.numerics.losses import LOSSES, get_loss
from mlx.numerics.ridge import psd_solve

N, D, L, K = 10, 5, 4, 3


def _data(seed, mask_density):
    rng = np.random.default_rng(seed)
    X = sp.random(N, D, density=0.6, random_state=seed, format="csr",
                  data_rvs=lambda m: rng.normal(size=m))
    Y = sp.csr_matrix((rng.random((N, L)) < 0.4).astype(float))
    observed = None
    if mask_density is not None:
        mask = rng.random((N, L)) < mask_density
        mask[0, :] = True                                        # keep every label observed once
        observed = sp.csr_matrix(mask.astype(float))
    return rng, X, Y, observed


def _omega(observed):
    if observed is None:
        return [(i, j) for i in range(N) for j in range(L)]
    r, c = observed.nonzero()
    return sorted(zip(r.tolist(), c.tolist()))


def _kron_reference(design, y, w, loss, lam):
    s = design @ w
    f = loss.value(y, s).sum() + 0.5 * lam * w @ w
    g = design.T @ loss.derivative(y, s) + lam * w
    Hm = design.T @ (loss.second_derivative(y, s)[:, None] * design) + lam * np.eye(w.size)
    return f, g, Hm


def _fd_grad(fun, x, eps=1e-6):
    g = np.zeros_like(x)
    for t in range(x.size):
        e = np.zeros_like(x)
        e.flat[t] = eps
        g.flat[t] = (fun(x + e) - fun(x - e)) / (2 * eps)
    return g


CASES = [(loss, mask, lam) for loss in sorted(LOSSES) for mask in (None, 0.5) for lam in (0.0, 1.0)]


@pytest.fixture(params=[(False, "dense"), (True, "dense"), (False, "gather"), (True, "gather")],
                ids=["one_chunk-dense", "tiny_chunks-dense", "one_chunk-gather",
                     "tiny_chunks-gather"])
def chunking(request, monkeypatch):
    tiny, scores = request.param
    if tiny:
        monkeypatch.setattr(linops, "CHUNK_ENTRIES", 5)
        monkeypatch.setattr(linops, "CURVATURE_CACHE_ENTRIES", 0)  # recompute l'' per block
    monkeypatch.setattr(linops, "DENSE_SCORE_DENSITY", 0.0 if scores == "dense" else 2.0)


@pytest.mark.parametrize("loss_name,mask,lam", CASES)
def test_w_subproblem_matches_kronecker_form_and_finite_differences(loss_name, mask, lam, chunking):
    rng, X, Y, observed = _data(0, mask)
    loss = get_loss(loss_name)
    by_instance, _ = build_targets(Y, observed, loss)
    H = rng.normal(size=(L, K))
    W = 0.5 * rng.normal(size=(D, K))
    V = rng.normal(size=(D, K))
    problem = FactorProblem(by_instance, H, loss, lam, P=X)

    omega = _omega(observed)
    Xd = X.toarray()
    design = np.array([np.kron(H[j], Xd[i]) for i, j in omega])   # rows x~_ij = h_j (x) x_i
    y = loss.encode(np.array([Y[i, j] for i, j in omega]))
    f_ref, g_ref, H_ref = _kron_reference(design, y, W.ravel(order="F"), loss, lam)

    f, g = problem.fun_grad(W)
    assert g.shape == W.shape
    assert f == pytest.approx(f_ref, rel=1e-12)
    assert problem.objective(W) == pytest.approx(f_ref, rel=1e-12)
    np.testing.assert_allclose(g.ravel(order="F"), g_ref, rtol=1e-10, atol=1e-12)
    Hv = problem.hessp(W, V)
    np.testing.assert_allclose(Hv.ravel(order="F"), H_ref @ V.ravel(order="F"),
                               rtol=1e-10, atol=1e-12)

    np.testing.assert_allclose(_fd_grad(problem.objective, W), g, rtol=1e-5, atol=1e-6)
    eps = 1e-6
    fd_hv = (problem.fun_grad(W + eps * V)[1] - problem.fun_grad(W - eps * V)[1]) / (2 * eps)
    if loss_name != "squared_hinge":                              # generalised Hessian at kinks
        np.testing.assert_allclose(problem.hessp(W, V), fd_hv, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("loss_name,mask,lam", CASES)
def test_h_subproblem_matches_kronecker_form_and_finite_differences(loss_name, mask, lam, chunking):
    rng, _, Y, observed = _data(1, mask)
    loss = get_loss(loss_name)
    _, by_label = build_targets(Y, observed, loss)
    A = rng.normal(size=(N, K))                                   # A = X W, fixed
    H = 0.5 * rng.normal(size=(L, K))
    V = rng.normal(size=(L, K))
    problem = FactorProblem(by_label, A, loss, lam)

    omega = _omega(observed)
    eye = np.eye(L)
    design = np.array([np.kron(A[i], eye[j]) for i, j in omega])  # s_ij = a_i . h_j
    y = loss.encode(np.array([Y[i, j] for i, j in omega]))
    f_ref, g_ref, H_ref = _kron_reference(design, y, H.ravel(order="F"), loss, lam)

    f, g = problem.fun_grad(H)
    assert f == pytest.approx(f_ref, rel=1e-12)
    np.testing.assert_allclose(g.ravel(order="F"), g_ref, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(problem.hessp(H, V).ravel(order="F"), H_ref @ V.ravel(order="F"),
                               rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(_fd_grad(problem.objective, H), g, rtol=1e-5, atol=1e-6)
    if loss_name != "squared_hinge":
        eps = 1e-6
        fd_hv = (problem.fun_grad(H + eps * V)[1] - problem.fun_grad(H - eps * V)[1]) / (2 * eps)
        np.testing.assert_allclose(problem.hessp(H, V), fd_hv, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("mask", [None, 0.5])
@pytest.mark.parametrize("loss_name", sorted(LOSSES))
def test_hessian_at_a_point_not_last_evaluated(loss_name, mask):
    rng, X, Y, observed = _data(2, mask)
    loss = get_loss(loss_name)
    by_instance, _ = build_targets(Y, observed, loss)
    problem = FactorProblem(by_instance, rng.normal(size=(L, K)), loss, 0.3, P=X)
    W1, W2, W3, V = (rng.normal(size=(D, K)) for _ in range(4))
    problem.fun_grad(W1)
    expected = problem.hessp(W1, V)
    problem.fun_grad(W2)                                          # W1 is still cached
    np.testing.assert_array_equal(problem.hessp(W1, V), expected)
    problem.fun_grad(W3)                                          # W1 evicted: recomputed
    np.testing.assert_allclose(problem.hessp(W1, V), expected, rtol=1e-12)


def test_rhs_of_the_quadratic_problem():
    rng, X, Y, observed = _data(3, 0.5)
    loss = get_loss("squared")
    by_instance, _ = build_targets(Y, observed, loss)
    problem = FactorProblem(by_instance, rng.normal(size=(L, K)), loss, 0.7, P=X)
    W = rng.normal(size=(D, K))
    # gradient = A W - b for a quadratic
    np.testing.assert_allclose(problem.fun_grad(W)[1], problem.hessp(W, W) - problem.rhs(),
                               rtol=1e-10, atol=1e-12)


def test_build_targets_ignores_positives_outside_omega_and_duplicates():
    Y = sp.csr_matrix(np.array([[1, 0, 1], [0, 1, 1]], dtype=float))
    observed = sp.coo_matrix(([1, 1, 1, 1], ([0, 0, 1, 1], [0, 1, 2, 2])), shape=(2, 3))
    by_instance, by_label = build_targets(Y, observed, get_loss("logistic"))
    assert by_instance.n_observed == 3
    np.testing.assert_array_equal(by_instance.indices, [0, 1, 2])
    np.testing.assert_array_equal(by_instance.y, [1, -1, 1])      # (0,2) positive is unobserved
    np.testing.assert_array_equal(by_label.counts(), [1, 1, 1])
    np.testing.assert_array_equal(by_label.y, [1, -1, 1])
    full_i, full_l = build_targets(Y, None, get_loss("squared"))
    assert full_i.full and full_l.shape == (3, 2) and full_i.n_observed == 6


def test_full_and_explicit_all_observed_targets_agree():
    rng, _, Y, _ = _data(4, None)
    everything = sp.csr_matrix(np.ones((N, L)))
    A, Q, T = rng.normal(size=(N, K)), rng.normal(size=(L, K)), rng.normal(size=(N, K))
    for name in sorted(LOSSES):
        loss = get_loss(name)
        full, _ = build_targets(Y, None, loss)
        explicit, _ = build_targets(Y, everything, loss)
        f1, g1, c1 = full.loss_grad(loss, A, Q)
        f2, g2, c2 = explicit.loss_grad(loss, A, Q)
        assert f1 == pytest.approx(f2, rel=1e-12)
        np.testing.assert_allclose(g1, g2, rtol=1e-12)
        np.testing.assert_allclose(full.hess_prod(loss, c1, A, Q, T),
                                   explicit.hess_prod(loss, c2, A, Q, T), rtol=1e-12)
        np.testing.assert_allclose(full.target_product(Q), explicit.target_product(Q), rtol=1e-12)


@pytest.mark.parametrize("lam", [0.0, 0.5])
def test_ridge_rows_matches_per_label_least_squares(lam):
    rng, _, Y, observed = _data(5, 0.5)
    observed = observed.tolil()
    observed[:, 3] = 0                                            # label 3 never observed
    observed = observed.tocsr()
    observed.eliminate_zeros()
    loss = get_loss("squared")
    _, by_label = build_targets(Y, observed, loss)
    A = rng.normal(size=(N, K))
    H = ridge_rows(by_label, A, lam)
    mask = observed.toarray() > 0
    Yd = Y.toarray()
    for j in range(L):
        rows = np.flatnonzero(mask[:, j])
        Aj = A[rows]
        ref = np.linalg.pinv(Aj.T @ Aj + lam * np.eye(K)) @ Aj.T @ Yd[rows, j]
        np.testing.assert_allclose(H[j], ref, rtol=1e-9, atol=1e-12)
    np.testing.assert_array_equal(H[3], 0.0)


def test_psd_solve_singular_gives_minimum_norm_solution():
    rng = np.random.default_rng(6)
    B = rng.normal(size=(4, 2))
    G = B @ B.T                                                   # rank 2
    rhs = G @ rng.normal(size=4)
    x = psd_solve(G, rhs)
    np.testing.assert_allclose(x, np.linalg.pinv(G) @ rhs, rtol=1e-8, atol=1e-10)
    Gs = np.stack([G + np.eye(4), 2 * np.eye(4)])
    rs = np.stack([rhs, rhs])
    np.testing.assert_allclose(psd_solve(Gs, rs), np.linalg.solve(Gs, rs[..., None])[..., 0])
