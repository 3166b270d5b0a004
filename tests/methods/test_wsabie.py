"""WSABIE / WARP: the compiled epoch against a slow reference, calculus, constraints, recovery."""

import numpy as np
import pytest
import scipy.sparse as sp

from mlx.data.synthetic import make_low_rank_multilabel
from mlx.errors import DivergenceError
from mlx.methods.wsabie import WSABIE
from mlx.metrics import instance_auc, precision_at_k
from mlx.numerics.warp import (
    bounded,
    draw_epoch,
    harmonic_weights,
    project_rows,
    splitmix64,
    warp_epoch,
)

MASK64 = (1 << 64) - 1


# ---------------------------------------------------------------------------
# Slow, obvious reference implementation
# ---------------------------------------------------------------------------

def _py_splitmix64(state):
    state = (state + 0x9E3779B97F4A7C15) & MASK64
    z = state
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK64
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK64
    return state, z ^ (z >> 31)


def _py_bounded(z, n):
    return ((z >> 32) * n) >> 32


def _reference_epoch(U, VT, X, positives, negatives, order, seed, lr, margin, max_norm):
    """One WARP epoch with Python loops and lists; returns the summed weighted hinge.

    ``positives[i]`` / ``negatives[i]`` are lists of label indices; pair ``p`` is the p-th
    (row, positive) in row-major order.
    """
    X = X.toarray()
    pairs = [(i, y) for i in range(X.shape[0]) for y in positives[i]]
    state = seed
    loss = 0.0
    for p in order:
        i, y = pairs[p]
        cands = negatives[i]
        if not cands:
            continue
        phi = [sum(X[i, f] * VT[f, c] for f in range(X.shape[1])) for c in range(U.shape[1])]
        f_y = sum(U[y, c] * phi[c] for c in range(U.shape[1]))
        found = None
        draws = 0
        while draws < len(cands):
            draws += 1
            state, z = _py_splitmix64(state)
            n = cands[_py_bounded(z, len(cands))]
            f_n = sum(U[n, c] * phi[c] for c in range(U.shape[1]))
            if margin - f_y + f_n > 0:
                found = n
                break
        if found is None:
            continue
        rank = len(cands) // draws
        weight = sum(1.0 / q for q in range(1, rank + 1))
        loss += weight * (margin - f_y + f_n)
        u_y, u_n = U[y].copy(), U[found].copy()
        U[y] = u_y + lr * weight * np.array(phi)
        U[found] = u_n - lr * weight * np.array(phi)
        touched = [f for f in range(X.shape[1]) if X[i, f] != 0]
        for f in touched:
            VT[f] = VT[f] - lr * weight * X[i, f] * (u_n - u_y)
        if max_norm is not None:
            for row in [U[y], U[found]] + [VT[f] for f in touched]:
                norm = np.sqrt(sum(v * v for v in row))
                if norm > max_norm:
                    row *= max_norm / norm
    return loss


def _tiny(seed=0, n=12, d=7, L=6, k=3, density=0.5):
    rng = np.random.default_rng(seed)
    X = sp.random(n, d, density=density, format="csr", random_state=seed,
                  data_rvs=lambda m: rng.uniform(0.5, 1.5, m))
    Y = sp.csr_matrix(rng.random((n, L)) < 0.35, dtype=np.float64)
    U = rng.standard_normal((L, k)) * 0.8
    VT = rng.standard_normal((d, k)) * 0.8
    return X, Y, U, VT


def _arrays(M):
    return M.indptr.astype(np.int64), M.indices.astype(np.int64)


# ---------------------------------------------------------------------------
# Kernel
# ---------------------------------------------------------------------------

def test_splitmix64_matches_python_and_published_value():
    state, z = splitmix64(np.uint64(0))
    assert int(z) == 0xE220A8397B1DCDAF                  # first output of SplitMix64(0)
    s_py, s_nb = 12345, np.uint64(12345)
    for _ in range(50):
        s_py, z_py = _py_splitmix64(s_py)
        s_nb, z_nb = splitmix64(np.uint64(s_nb))          # keep the uint64 signature
        assert int(s_nb) == s_py and int(z_nb) == z_py
        for n in (1, 2, 7, 159, 2**31 + 5):
            r = bounded(np.uint64(z_nb), n)
            assert r == _py_bounded(z_py, n) and 0 <= r < n


def test_harmonic_weights():
    np.testing.assert_allclose(harmonic_weights(4), [0, 1, 1.5, 1.5 + 1 / 3, 1.5 + 1 / 3 + 0.25])


@pytest.mark.parametrize("masked", [False, True])
@pytest.mark.parametrize("max_norm", [None, 1.2])
def test_epoch_matches_reference(masked, max_norm):
    X, Y, U, VT = _tiny()
    n, L = Y.shape
    rng = np.random.default_rng(5)
    if masked:
        obs = rng.random((n, L)) < 0.6
        pos = sp.csr_matrix(Y.toarray() * obs)
        neg_dense = obs & (Y.toarray() == 0)
        neg = sp.csr_matrix(neg_dense, dtype=np.float64)
        negatives = [list(np.flatnonzero(neg_dense[i])) for i in range(n)]
        neg_kw = dict(zip(("neg_indptr", "neg_indices"), _arrays(neg)))
    else:
        pos = Y
        negatives = [[j for j in range(L) if Y[i, j] == 0] for i in range(n)]
        neg_kw = {}
    positives = [list(pos[i].indices) for i in range(n)]
    U_ref, VT_ref = U.copy(), VT.copy()
    for epoch in range(3):
        order, seed = draw_epoch(rng, pos.nnz)
        res = warp_epoch(U, VT, *_arrays(X), X.data, *_arrays(pos), rng=None,
                         learning_rate=0.05, margin=1.0, max_norm=max_norm, order=order,
                         seed=seed, **neg_kw)
        loss = _reference_epoch(U_ref, VT_ref, X, positives, negatives, order, seed, 0.05,
                                1.0, max_norm)
        np.testing.assert_allclose(U, U_ref, rtol=0, atol=1e-10)
        np.testing.assert_allclose(VT, VT_ref, rtol=0, atol=1e-10)
        assert res.objective == pytest.approx(loss / pos.nnz, abs=1e-10)
        assert res.n_pairs == pos.nnz and 0 < res.n_updates <= res.n_pairs
    assert not np.allclose(U, _tiny()[2])                 # something did change


def test_step_is_the_weighted_hinge_gradient():
    """With one pair and one negative the step is ``-lr * grad`` of the hinge (weight 1)."""
    rng = np.random.default_rng(3)
    d, k = 5, 4
    X = sp.csr_matrix(rng.uniform(0.5, 1.5, (1, d)))
    Y = sp.csr_matrix(np.array([[1.0, 0.0]]))            # positive 0, negative 1
    U0 = rng.standard_normal((2, k)) * 0.3
    VT0 = rng.standard_normal((d, k)) * 0.3
    margin = 50.0                                         # guarantees a violation

    def hinge(U, VT):
        phi = VT.T @ X.toarray()[0]
        return margin - U[0] @ phi + U[1] @ phi

    def num_grad(f, A, eps=1e-6):
        G = np.zeros_like(A)
        for idx in np.ndindex(A.shape):
            A[idx] += eps
            hi = f()
            A[idx] -= 2 * eps
            lo = f()
            A[idx] += eps
            G[idx] = (hi - lo) / (2 * eps)
        return G

    U, VT = U0.copy(), VT0.copy()
    gU = num_grad(lambda: hinge(U, VT), U)
    gV = num_grad(lambda: hinge(U, VT), VT)
    lr = 1e-3
    U1, VT1 = U0.copy(), VT0.copy()
    res = warp_epoch(U1, VT1, *_arrays(X), X.data, *_arrays(Y), rng=np.random.default_rng(0),
                     learning_rate=lr, margin=margin, max_norm=None)
    assert res.n_updates == 1 and res.objective == pytest.approx(hinge(U0, VT0))
    np.testing.assert_allclose((U1 - U0) / -lr, gU, atol=1e-6)
    np.testing.assert_allclose((VT1 - VT0) / -lr, gV, atol=1e-6)


def test_rank_weight_uses_number_of_draws():
    """When the first draw violates, the rank estimate is |N_i| and the weight L(|N_i|)."""
    d, L, k = 3, 5, 2
    X = sp.csr_matrix(np.ones((1, d)))
    Y = sp.csr_matrix(np.array([[0.0, 0.0, 1.0, 0.0, 0.0]]))
    U = np.zeros((L, k))
    VT = np.ones((d, k))
    res = warp_epoch(U, VT, *_arrays(X), X.data, *_arrays(Y), rng=np.random.default_rng(0),
                     learning_rate=0.1, margin=1.0, max_norm=None)
    # all scores 0: every negative violates at once; weight = 1 + 1/2 + 1/3 + 1/4
    assert res.n_draws == 1
    assert res.objective == pytest.approx(harmonic_weights(4)[4] * 1.0)


def test_kernel_rejects_bad_arguments():
    X, Y, U, VT = _tiny()
    with pytest.raises(ValueError, match="warp_epoch: x_indptr must be a 1-D int64 array"):
        warp_epoch(U, VT, X.indptr.astype(np.int32), X.indices.astype(np.int64), X.data,
                   *_arrays(Y), rng=np.random.default_rng(0), learning_rate=0.1, margin=1.0,
                   max_norm=1.0)
    with pytest.raises(ValueError, match="give both order and seed"):
        warp_epoch(U, VT, *_arrays(X), X.data, *_arrays(Y), rng=np.random.default_rng(0),
                   learning_rate=0.1, margin=1.0, max_norm=1.0, seed=3)


def test_project_rows():
    A = np.array([[3.0, 4.0], [0.3, 0.4]])
    project_rows(A, 1.0)
    np.testing.assert_allclose(A, [[0.6, 0.8], [0.3, 0.4]])


# ---------------------------------------------------------------------------
# Method
# ---------------------------------------------------------------------------

@pytest.fixture(scope="module")
def synthetic():
    return make_low_rank_multilabel(n_samples=300, n_features=40, n_labels=20, rank=4,
                                    n_test=200, density=0.3, seed=1)


def test_no_decision_threshold():
    assert WSABIE().threshold is None                     # a ranking: no natural cut-off


def test_recovery_precision_well_above_chance(synthetic):
    tr, te = synthetic.train, synthetic.test
    model = WSABIE(rank=8, learning_rate=0.005, margin=1.0, max_norm=5.0, epochs=40,
                   random_state=0).fit(tr.X, tr.Y)
    scores = model.decision_function(te.X)
    p1 = precision_at_k(te.Y, scores, k=1).mean()
    chance = te.Y.nnz / np.prod(te.Y.shape)               # about 0.12
    assert p1 > max(0.65, 5 * chance)                     # a linear model reaches about 0.75
    assert np.nanmean(instance_auc(te.Y, scores)) > 0.9
    assert len(model.objective_) == 40 and model.n_iter_ == 40
    assert model.converged_ is None                       # no test: it claims nothing
    assert model.objective_[-1] < model.objective_[0]


def test_seed_determines_the_model(synthetic):
    tr = synthetic.train
    a = WSABIE(rank=4, epochs=3, learning_rate=0.02, random_state=7).fit(tr.X, tr.Y)
    b = WSABIE(rank=4, epochs=3, learning_rate=0.02, random_state=7).fit(tr.X, tr.Y)
    c = WSABIE(rank=4, epochs=3, learning_rate=0.02, random_state=8).fit(tr.X, tr.Y)
    assert a.objective_ == b.objective_
    assert not np.array_equal(a.U_, c.U_)


@pytest.mark.parametrize("max_norm", [0.3, 1.0])
def test_projection_keeps_norms_below_max_norm(synthetic, max_norm):
    tr = synthetic.train
    model = WSABIE(rank=5, learning_rate=0.5, max_norm=max_norm, epochs=3,
                   random_state=0).fit(tr.X, tr.Y)
    assert np.linalg.norm(model.U_, axis=1).max() <= max_norm * (1 + 1e-12)
    assert np.linalg.norm(model.V_, axis=0).max() <= max_norm * (1 + 1e-12)


def test_missing_labels_ignore_unobserved_entries(synthetic):
    tr = synthetic.train
    n, L = tr.Y.shape
    rng = np.random.default_rng(0)
    obs = rng.random((n, L)) < 0.5
    obs[:, 3] = False                                     # label 3 never observed
    observed = sp.csr_matrix(obs, dtype=np.float64)
    flipped = sp.csr_matrix(np.where(obs, tr.Y.toarray(), 1 - tr.Y.toarray()))
    kw = dict(rank=4, epochs=3, learning_rate=0.02, random_state=2)
    a = WSABIE(**kw).fit(tr.X, tr.Y, observed=observed)
    b = WSABIE(**kw).fit(tr.X, flipped, observed=observed)    # differs only outside Omega
    np.testing.assert_array_equal(a.U_, b.U_)
    np.testing.assert_array_equal(a.V_, b.V_)
    init = np.random.default_rng(2).standard_normal((L, 4)) / 2.0
    project_rows(init, a.max_norm)
    np.testing.assert_array_equal(a.U_[3], init[3])       # never sampled, never moved
    full = WSABIE(**kw).fit(tr.X, tr.Y, observed=sp.csr_matrix(np.ones((n, L))))
    ref = WSABIE(**kw).fit(tr.X, tr.Y)
    np.testing.assert_array_equal(full.U_, ref.U_)        # an all-observed mask = full labels


def test_divergence_raises_with_advice():
    X = sp.csr_matrix(np.full((20, 5), 100.0))
    Y = sp.csr_matrix(np.eye(20, 4) + np.eye(20, 4, k=-4))
    model = WSABIE(rank=3, learning_rate=1e6, max_norm=None, epochs=50, random_state=0)
    with pytest.raises(DivergenceError, match="try a smaller learning_rate or max_norm"):
        model.fit(X, Y)


def test_rows_without_candidate_negatives_give_zero_objective():
    X = sp.csr_matrix(np.array([[1.0, 0, 0], [0, 0, 0], [0, 2.0, 1.0], [1.0, 1.0, 0]]))
    only_pos = sp.csr_matrix(np.ones((4, 3)))            # no negatives anywhere
    model = WSABIE(rank=2, epochs=2, random_state=0).fit(X, only_pos)
    assert model.objective_ == [0.0, 0.0]
