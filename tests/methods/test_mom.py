"""MoM (spectral latent-variable model): numerics against explicit references, recovery of
the generative model, prediction rules and the documented input rules.

The shared contract battery (tests/methods/test_common.py) covers parameters, batching,
determinism, degenerate data and input errors.
"""

from __future__ import annotations

import itertools
import textwrap

import numpy as np
import pytest
import scipy.sparse as sp
from click.testing import CliRunner
from scipy.optimize import linear_sum_assignment

from mlx.methods.base import FitContext, InvalidParameterError
from mlx.methods.mom import (
    DENSE_EIG_MAX,
    NEWTON_AFTER,
    SELECTION_ITERATIONS,
    MoM,
    WhitenedMoments,
    _polarised_hessian,
    _trust_region,
    sample_corpus,
    second_moment_eigenpairs,
    tensor_power_method,
)


def _counts(seed=0, n=60, d=12, density=0.4, high=4):
    rng = np.random.default_rng(seed)
    X = sp.random(n, d, density=density, format="csr", random_state=rng,
                  data_rvs=lambda k: rng.integers(1, high, size=k).astype(float))
    return X


def _m2(X, moments):
    """M2 from its definition (dense)."""
    X = X.toarray()
    m = X.sum(axis=1)
    if moments == "paper":
        return X.T @ X / np.sum(m ** 2)
    return (X.T @ X - np.diag(X.sum(axis=0))) / np.sum(m * (m - 1))


def _m3_explicit(X, moments):
    """The third moment from its definition: counts of ordered triples of distinct tokens
    (falling factorials on repeated indices) or, for ``paper``, ``sum_d x (x) x (x) x``."""
    X = X.toarray()
    n, d = X.shape
    m = X.sum(axis=1)
    T = np.zeros((d, d, d))
    for x in X:
        if moments == "paper":
            T += np.einsum("i,j,l->ijl", x, x, x)
            continue
        for i, j, l in itertools.product(range(d), repeat=3):
            if i == j == l:
                T[i, j, l] += x[i] * (x[i] - 1) * (x[i] - 2)
            elif i == j:
                T[i, j, l] += x[i] * (x[i] - 1) * x[l]
            elif i == l:
                T[i, j, l] += x[i] * (x[i] - 1) * x[j]
            elif j == l:
                T[i, j, l] += x[j] * (x[j] - 1) * x[i]
            else:
                T[i, j, l] += x[i] * x[j] * x[l]
    z = np.sum(m ** 3) if moments == "paper" else np.sum(m * (m - 1) * (m - 2))
    return T / z


# ----------------------------------------------------------------------------- whitening
@pytest.mark.parametrize("moments", ["paper", "unbiased"])
@pytest.mark.parametrize("d,k", [(12, 4), (DENSE_EIG_MAX + 40, 9)])   # dense and Lanczos paths
def test_whitening_makes_m2_the_identity(moments, d, k):
    X = _counts(seed=d, n=300, d=d, density=0.15)
    evals, evecs = second_moment_eigenpairs(X, k, moments=moments,
                                            rng=np.random.default_rng(0))
    assert evals.size == k and np.all(np.diff(evals) <= 0)
    W = evecs / np.sqrt(evals)
    np.testing.assert_allclose(W.T @ _m2(X, moments) @ W, np.eye(k), atol=1e-8)
    # the top eigenvalues of the definition, too
    ref = np.sort(np.linalg.eigvalsh(_m2(X, moments)))[::-1][:k]
    np.testing.assert_allclose(evals, ref, rtol=1e-8)


# ----------------------------------------------------------------------------- tensors
@pytest.mark.parametrize("moments", ["paper", "unbiased"])
def test_implicit_tensor_products_equal_the_explicit_tensor(moments):
    X = _counts(seed=3, n=40, d=7, density=0.5, high=4)            # counts up to 3
    rng = np.random.default_rng(1)
    W = rng.normal(size=(7, 4))
    T = np.einsum("abc,ai,bj,cl->ijl", _m3_explicit(X, moments), W, W, W)
    mom = WhitenedMoments(X, W, moments=moments)
    np.testing.assert_allclose(mom.dense(), T, rtol=1e-10, atol=1e-14)
    U = rng.normal(size=(4, 5))
    np.testing.assert_allclose(mom.products(U), np.einsum("ijl,jr,lr->ir", T, U, U),
                               rtol=1e-10, atol=1e-14)


def test_binary_unbiased_tensor_keeps_only_distinct_index_entries():
    X = _counts(seed=4, n=50, d=6, density=0.5, high=2)            # 0/1
    T = _m3_explicit(X, "unbiased")
    i, j, l = np.indices(T.shape)
    assert np.all(T[(i == j) | (i == l) | (j == l)] == 0)
    dense = X.toarray()
    m = dense.sum(axis=1)
    distinct = (i != j) & (i != l) & (j != l)
    full = np.einsum("di,dj,dl->ijl", dense, dense, dense) / np.sum(m * (m - 1) * (m - 2))
    np.testing.assert_allclose(T[distinct], full[distinct])


@pytest.mark.parametrize("moments", ["paper", "unbiased"])
def test_label_moments_equal_their_definition(moments):
    X = _counts(seed=5, n=30, d=6, density=0.5)
    rng = np.random.default_rng(2)
    Y = sp.csr_matrix((rng.random((30, 4)) < 0.4).astype(float))
    W = rng.normal(size=(6, 3))
    V = np.linalg.qr(rng.normal(size=(3, 3)))[0]
    Xd = X.toarray()
    expected = np.zeros((4, 3))
    for x, y in zip(Xd, Y.toarray()):
        pairs = np.outer(x, x) - (np.diag(x) if moments == "unbiased" else 0)
        expected += np.outer(y, np.einsum("ab,ak,bk->k", pairs, W @ V, W @ V))
    got = WhitenedMoments(X, W, moments=moments).label_moments(Y, V)
    np.testing.assert_allclose(got, expected, rtol=1e-10)


@pytest.mark.parametrize("adaptive", [True, False])
def test_power_method_recovers_a_planted_orthogonal_decomposition(adaptive):
    rng = np.random.default_rng(0)
    k = 8
    V = np.linalg.qr(rng.normal(size=(k, k)))[0]
    lam = np.linspace(1.0, 4.0, k)
    T = np.einsum("r,ir,jr,lr->ijl", lam, V, V, V)
    res = tensor_power_method(lambda U: np.einsum("ijl,jr,lr->ir", T, U, U), k, k,
                              n_restarts=5, max_iter=200, tol=1e-12, adaptive_shift=adaptive,
                              rng=np.random.default_rng(1))
    assert res.converged.all()
    found = np.abs(V.T @ res.eigenvectors)                           # (true, found)
    rows, cols = linear_sum_assignment(-found)
    np.testing.assert_allclose(res.eigenvalues[cols], lam[rows], atol=1e-6)
    for r, c in zip(rows, cols):
        assert np.linalg.norm(res.eigenvectors[:, c] - V[:, r]) <= 1e-6


def test_plain_power_method_reports_non_convergence():
    """One start, no shift, few iterations: the flag says so instead of pretending."""
    rng = np.random.default_rng(3)
    k = 6
    T = rng.normal(size=(k, k, k))
    T = sum(T.transpose(p) for p in itertools.permutations(range(3))) / 6   # symmetric, noise
    res = tensor_power_method(lambda U: np.einsum("ijl,jr,lr->ir", T, U, U), k, k,
                              n_restarts=1, max_iter=3, tol=1e-12, adaptive_shift=False,
                              rng=np.random.default_rng(0))
    assert not res.converged.all()
    assert np.all(res.n_iter <= 3) and np.all(res.eigenvalues >= 0)


def _noisy_tensor(k=12, sigma=0.3, seed=1):
    """An orthogonal decomposition (eigenvalues 1..2) plus symmetric Gaussian noise: far from
    orthogonally decomposable, the plain power iteration cycles on several eigenpairs."""
    rng = np.random.default_rng(seed)
    V = np.linalg.qr(rng.normal(size=(k, k)))[0]
    E = rng.normal(size=(k, k, k))
    E = sum(E.transpose(p) for p in itertools.permutations(range(3))) / 6
    return np.einsum("r,ir,jr,lr->ijl", np.linspace(1.0, 2.0, k), V, V, V) + sigma * E


def _dense_ops(T):
    return (lambda U: np.einsum("ijl,jr,lr->ir", T, U, U),
            lambda u: np.einsum("ijl,l->ij", T, u))


def _local_max_margin(T, lam, V):
    """max over j of the top eigenvalue of P (2 T_j(I, I, v_j) - lambda_j) P on v_j's complement
    (< 0: every v_j is a strict local maximum of T_j(u, u, u) on the sphere)."""
    worst = -np.inf
    for j in range(V.shape[1]):
        v = V[:, j]
        Tj = T - np.einsum("r,ir,jr,lr->ijl", lam[:j], V[:, :j], V[:, :j], V[:, :j])
        P = np.eye(v.size) - np.outer(v, v)
        B = P @ (2.0 * np.einsum("ijl,l->ij", Tj, v) - lam[j] * np.eye(v.size)) @ P
        worst = max(worst, np.linalg.eigvalsh(B - 10.0 * np.outer(v, v))[-1])
    return worst


@pytest.mark.parametrize("moments", ["paper", "unbiased"])
def test_batched_products_and_hessian_equal_the_unbatched_ones(moments):
    X = _counts(seed=6, n=50, d=9, density=0.4, high=4)
    rng = np.random.default_rng(4)
    mom = WhitenedMoments(X, rng.normal(size=(9, 5)), moments=moments)
    U = rng.normal(size=(5, 7))
    batched = mom.products(U)
    for r in range(U.shape[1]):
        np.testing.assert_allclose(batched[:, r], mom.products(U[:, r:r + 1])[:, 0],
                                   rtol=1e-12, atol=1e-15)
    T = mom.dense()
    u = U[:, 0]
    np.testing.assert_allclose(mom.hessian(u), np.einsum("ijl,l->ij", T, u), rtol=1e-10,
                               atol=1e-14)
    np.testing.assert_allclose(_polarised_hessian(mom.products, u), mom.hessian(u),
                               rtol=1e-10, atol=1e-14)
    single = mom.single_products(U)                                   # float32 copies
    assert single.dtype == np.float64
    np.testing.assert_allclose(single, batched, rtol=1e-5, atol=1e-6 * np.abs(batched).max())


@pytest.mark.parametrize("anderson", [0, 5])
def test_fast_path_recovers_a_planted_decomposition(anderson):
    """Implicit products and Hessian of ``sum_k lambda_k v_k^(x)3`` (as WhitenedMoments gives
    them), the accelerated iteration: every pair to 1e-6, all converged."""
    rng = np.random.default_rng(5)
    k = 20
    V = np.linalg.qr(rng.normal(size=(k, k)))[0]
    lam = rng.uniform(1.0, 5.0, size=k)
    res = tensor_power_method(lambda U: V @ (lam[:, None] * (V.T @ U) ** 2), k, k,
                              hessian=lambda u: (V * (lam * (V.T @ u))) @ V.T,
                              n_restarts=10, max_iter=300, tol=1e-10, anderson=anderson,
                              rng=np.random.default_rng(0))
    assert res.converged.all()
    found = np.abs(V.T @ res.eigenvectors)
    rows, cols = linear_sum_assignment(-found)
    np.testing.assert_allclose(res.eigenvalues[cols], lam[rows], atol=1e-6)
    cosines = np.abs(np.sum(V[:, rows] * res.eigenvectors[:, cols], axis=0))
    assert np.max(np.abs(cosines - 1.0)) <= 1e-6


def test_accelerated_method_converges_where_the_plain_one_cycles():
    T = _noisy_tensor()
    products, hessian = _dense_ops(T)

    def run(anderson, hessian=None):
        return tensor_power_method(products, 12, 12, n_restarts=5, max_iter=100, tol=1e-10,
                                   anderson=anderson, hessian=hessian,
                                   rng=np.random.default_rng(0))

    plain = run(anderson=0)
    assert plain.converged.sum() <= 6                                  # measured 5 of 12
    for fast in (run(anderson=5, hessian=hessian), run(anderson=5)):   # Hessian by polarisation
        assert fast.converged.all() and fast.n_iter.max() <= 60        # measured <= 39
        lam, V = fast.eigenvalues, fast.eigenvectors
        Tj = T.copy()
        for j in range(12):                                             # eigenpairs of T_j
            g = np.einsum("ijl,j,l->i", Tj, V[:, j], V[:, j])
            assert np.linalg.norm(g - lam[j] * V[:, j]) <= 1e-10 * lam[j]
            Tj -= lam[j] * np.einsum("i,j,l->ijl", V[:, j], V[:, j], V[:, j])
        assert _local_max_margin(T, lam, V) < 0                         # maxima, not saddles


def test_trust_region_newton_converges_in_a_few_steps_to_the_nearby_maximum():
    T = _noisy_tensor(sigma=0.1)
    products, hessian = _dense_ops(T)
    ref = tensor_power_method(products, 12, 1, n_restarts=5, max_iter=500, tol=1e-13,
                              anderson=0, rng=np.random.default_rng(0))
    v = ref.eigenvectors[:, 0]
    u = v + 0.05 * np.random.default_rng(1).normal(size=12)
    u /= np.linalg.norm(u)
    g = products(u[:, None])[:, 0]
    u2, _, lam, res, steps, nh = _trust_region(lambda U: products(U), hessian, u, g, u @ g,
                                                tol=1e-13, budget=50)
    assert res <= 1e-13 * lam and steps <= 12 and nh <= steps / 2    # measured 10 and 2
    assert abs(lam - ref.eigenvalues[0]) <= 1e-12 and np.linalg.norm(u2 - v) <= 1e-10


def test_trust_region_takes_over_after_newton_after_iterations():
    """On a start that is still climbing after the selection and NEWTON_AFTER iterations,
    the deflation step finishes with Newton steps (counted in n_hessians)."""
    T = _noisy_tensor(sigma=0.3, seed=3)
    products, hessian = _dense_ops(T)
    res = tensor_power_method(products, 12, 12, n_restarts=5, max_iter=100, tol=1e-10,
                              hessian=hessian, rng=np.random.default_rng(0))
    assert res.converged.all() and res.n_hessians >= 1
    assert res.n_iter.max() > SELECTION_ITERATIONS + NEWTON_AFTER


def test_power_method_is_deterministic_under_the_seed():
    T = _noisy_tensor(sigma=0.3, seed=3)
    products, hessian = _dense_ops(T)
    runs = [tensor_power_method(products, 12, 12, n_restarts=5, max_iter=100, tol=1e-10,
                                hessian=hessian, rng=np.random.default_rng(7))
            for _ in range(2)]
    for field in ("eigenvalues", "eigenvectors", "n_iter", "converged"):
        np.testing.assert_array_equal(getattr(runs[0], field), getattr(runs[1], field))
    assert runs[0].n_products == runs[1].n_products


def test_rough_selection_products_only_rank_the_starts():
    """selection_products ranks the starts; every returned pair meets tol with the exact
    products (checked on each deflated tensor), and exact "rough" products change nothing
    (but rounding: the chosen start's product is recomputed alone, not in its block)."""
    T = _noisy_tensor(sigma=0.2, seed=2)
    products, hessian = _dense_ops(T)
    noise = np.random.default_rng(9)

    def rough(U):
        out = products(U)
        return out * (1.0 + 1e-6 * noise.standard_normal(out.shape))

    kw = {"n_restarts": 5, "max_iter": 100, "tol": 1e-10, "hessian": hessian}
    res = tensor_power_method(products, 12, 12, selection_products=rough,
                              rng=np.random.default_rng(0), **kw)
    assert res.converged.all()
    Tj = T.copy()
    for j in range(12):
        v, lam = res.eigenvectors[:, j], res.eigenvalues[j]
        assert np.linalg.norm(np.einsum("ijl,j,l->i", Tj, v, v) - lam * v) <= 1e-10 * lam
        Tj -= lam * np.einsum("i,j,l->ijl", v, v, v)
    same = [tensor_power_method(products, 12, 12, selection_products=sel,
                                rng=np.random.default_rng(0), **kw) for sel in (None, products)]
    np.testing.assert_allclose(same[0].eigenvectors, same[1].eigenvectors, atol=1e-12)
    np.testing.assert_array_equal(same[0].n_iter, same[1].n_iter)      # only rounding differs


def test_single_precision_selection_fits_the_same_model_on_a_planted_corpus():
    X, Y, _ = sample_corpus(3000, 40, 6, 4, doc_length=15.0, seed=4)
    fits = [MoM(rank=4, moments="unbiased", selection_precision=p, random_state=0).fit(X, Y)
            for p in ("double", "single")]
    assert all(m.converged_ for m in fits)
    np.testing.assert_allclose(np.sort(fits[0].eigenvalues_), np.sort(fits[1].eigenvalues_),
                               rtol=1e-6)
    np.testing.assert_allclose(np.sort(fits[0].prior_), np.sort(fits[1].prior_), atol=1e-6)


def test_authors_setting_is_the_plain_iteration_whatever_anderson():
    """adaptive_shift=False, shift=0: the plain power iteration of the authors' sshopm call,
    with no extrapolation and no Newton step."""
    T = _noisy_tensor()
    products, hessian = _dense_ops(T)
    runs = [tensor_power_method(products, 12, 12, n_restarts=1, max_iter=1000, tol=1e-10,
                                shift=0.0, adaptive_shift=False, anderson=m, hessian=hessian,
                                rng=np.random.default_rng(0)) for m in (0, 5)]
    np.testing.assert_array_equal(runs[0].eigenvectors, runs[1].eigenvectors)
    assert runs[1].n_hessians == 0
    # by hand: u <- T(I, u, u) / ||T(I, u, u)|| from the same start, for the first pair
    u = np.random.default_rng(0).standard_normal((12, 1))
    u /= np.linalg.norm(u)
    for _ in range(runs[0].n_iter[0]):
        u = products(u)
        u /= np.linalg.norm(u)
    f = (u[:, 0] @ products(u)[:, 0])
    np.testing.assert_allclose(runs[0].eigenvectors[:, 0] * np.sign(f), u[:, 0], atol=1e-12)


# ----------------------------------------------------------------------------- recovery
def _errors(model, truth):
    """Max errors of pi, P[v|h] (L1 per state) and P[l|h] after matching the states."""
    cost = np.abs(model.word_probs_[:, :, None] - truth["words"][:, None, :]).sum(axis=0)
    found, true = linear_sum_assignment(cost)
    pi = np.max(np.abs(model.prior_[found] - truth["pi"][true]))
    words = np.max(cost[found, true])
    labels = np.max(np.abs(model.label_probs_[:, found] - truth["labels"][:, true]).sum(axis=0))
    return np.array([pi, words, labels])


def test_recovers_the_generative_model_at_the_sqrt_n_rate():
    """Documents from the model (Section 2): errors fall like 1/sqrt(n), 16x data -> 1/4."""
    kwargs = dict(n_features=30, n_labels=8, n_topics=3, doc_length=20.0, labels_per_doc=2.0,
                  prior=[0.5, 0.3, 0.2], word_concentration=0.3)
    _, _, truth = sample_corpus(10, seed=0, **kwargs)
    errs = {}
    for n in (2000, 32000):
        runs = []
        for rep in range(3):
            X, Y, _ = sample_corpus(n, seed=100 * rep + n, truth=truth, **kwargs)
            model = MoM(rank=3, moments="unbiased", tol=1e-10, random_state=rep).fit(X, Y)
            assert model.converged_
            runs.append(_errors(model, truth))
        errs[n] = np.mean(runs, axis=0)
    small, large = errs[2000], errs[32000]
    assert np.all(small <= [0.03, 0.08, 0.08]), small              # measured 0.014 0.037 0.034
    assert np.all(large <= small / 2.0), (small, large)           # sqrt(16) = 4, with slack
    assert np.all(large <= [0.01, 0.025, 0.025]), large            # measured 0.005 0.010 0.012


def test_paper_moments_are_biased_on_the_same_model():
    """The paper's moments keep a word paired with itself: pi does not converge to the truth
    (which is why ``moments="unbiased"`` exists)."""
    kwargs = dict(n_features=30, n_labels=8, n_topics=3, doc_length=20.0, labels_per_doc=2.0,
                  prior=[0.5, 0.3, 0.2], word_concentration=0.3)
    X, Y, truth = sample_corpus(32000, seed=7, **kwargs)
    paper = _errors(MoM(rank=3, moments="paper", random_state=0).fit(X, Y), truth)
    unbiased = _errors(MoM(rank=3, moments="unbiased", random_state=0).fit(X, Y), truth)
    assert paper[1] > 3 * unbiased[1]


# ----------------------------------------------------------------------------- prediction
def _tiny_model(prediction, eta=0.001, smoothing=0.0):
    X, Y, _ = sample_corpus(400, 10, 5, 2, doc_length=8.0, seed=1)
    return MoM(rank=2, prediction=prediction, eta=eta, smoothing=smoothing,
               random_state=0).fit(X, Y)


def test_code_rule_is_uniform_prior_and_present_words():
    model = _tiny_model("code", smoothing=0.01)
    P = (model.word_probs_ + 0.01 / 10) / 1.01
    X = sp.csr_matrix(np.array([[1, 0, 2, 0, 0, 0, 0, 1, 0, 0], [0] * 10], dtype=float))
    logp = X.toarray() @ np.log(P)
    post = np.exp(logp - logp.max(axis=1, keepdims=True))
    post /= post.sum(axis=1, keepdims=True)
    np.testing.assert_allclose(model.posterior(X), post, rtol=1e-12)
    np.testing.assert_allclose(model.posterior(X)[1], [0.5, 0.5])   # empty document: uniform
    np.testing.assert_allclose(model.decision_function(X), post @ model.label_probs_.T,
                               rtol=1e-12)


def test_paper_rule_uses_the_prior_and_absent_words_above_eta():
    eta = 0.05
    model = _tiny_model("paper", eta=eta, smoothing=0.001)
    P = (model.word_probs_ + 0.001 / 10) / 1.001
    x = np.array([1, 0, 1, 0, 0, 0, 0, 1, 0, 0], dtype=float)
    logp = np.log(model.prior_) + x @ np.log(P)
    absent = (x == 0)[:, None] & (P > eta)
    logp = logp + np.where(absent, np.log1p(-P), 0.0).sum(axis=0)
    post = np.exp(logp - logp.max())
    post /= post.sum()
    np.testing.assert_allclose(model.posterior(sp.csr_matrix(x)), post[None, :], rtol=1e-10)


def test_paper_rule_on_counts_reads_absent_words_from_the_presence_pattern():
    """Counts are repeated tokens in the present-word sum (``x_v log P``), but "v not in d" is
    about presence: a word seen 3 times is as present as one seen once. A rule that used the
    counts in the absent-word term would pass every 0/1 test."""
    eta = 0.05
    model = _tiny_model("paper", eta=eta, smoothing=0.001)
    P = (model.word_probs_ + 0.001 / 10) / 1.001
    assert (P > eta).sum() >= 4                          # entries that take part in the term
    X = np.array([[3, 0, 2, 0, 0, 0, 0, 1, 0, 0],
                  [0, 4, 0, 0, 2, 0, 5, 0, 0, 3],
                  [2, 2, 2, 2, 2, 2, 2, 2, 2, 2]], dtype=float)
    logp = np.log(model.prior_) + X @ np.log(P)
    logp = logp + np.array([np.where(((x == 0)[:, None]) & (P > eta), np.log1p(-P), 0.0)
                            .sum(axis=0) for x in X])
    post = np.exp(logp - logp.max(axis=1, keepdims=True))
    post /= post.sum(axis=1, keepdims=True)
    np.testing.assert_allclose(model.posterior(sp.csr_matrix(X)), post, rtol=1e-10)


def test_long_documents_do_not_underflow():
    rng = np.random.default_rng(0)
    X, Y, _ = sample_corpus(2000, 3000, 20, 4, doc_length=200.0, seed=2)
    model = MoM(rank=4, random_state=0).fit(X, Y)
    long_doc = sp.csr_matrix(rng.integers(0, 3, size=(2, 3000)).astype(float))  # ~3000 words
    for rule in ("paper", "code"):
        model.prediction = rule
        post = model.posterior(long_doc)
        assert np.isfinite(post).all() and np.allclose(post.sum(axis=1), 1.0)
        assert post.max() == 1.0 or post.max() > 0.5                 # a clear winner, no NaN


# ----------------------------------------------------------------------------- bad input
def test_non_count_features_are_refused_with_the_parameter_to_binarise_them():
    X = _counts(seed=1, n=30, d=8)
    X.data = X.data * 0.5                                            # 0.5, 1.0, 1.5
    Y = sp.csr_matrix((np.random.default_rng(0).random((30, 3)) < 0.5).astype(float))
    with pytest.raises(ValueError) as info:
        MoM(rank=2, random_state=0).fit(X, Y)
    message = str(info.value)
    assert "\n" not in message and "binarize=True" in message and "0.5" in message
    binarised = MoM(rank=2, binarize=True, random_state=0).fit(X, Y)
    pattern = X.copy()
    pattern.data[:] = 1.0
    same = MoM(rank=2, random_state=0).fit(pattern, Y)
    np.testing.assert_array_equal(binarised.decision_function(X), same.decision_function(pattern))
    with pytest.raises(ValueError, match="binarize=True"):
        same.decision_function(X)                                    # scoring checks it too


def test_counts_are_read_as_repeated_tokens():
    X = _counts(seed=2, n=80, d=9, high=5)
    Y = sp.csr_matrix((np.random.default_rng(1).random((80, 3)) < 0.5).astype(float))
    counts = MoM(rank=2, random_state=0).fit(X, Y)
    binary = MoM(rank=2, binarize=True, random_state=0).fit(X, Y)
    assert not np.allclose(counts.word_probs_, binary.word_probs_)


@pytest.mark.parametrize("rank,n,d", [(13, 100, 12), (6, 5, 12)])
def test_rank_above_the_data_is_an_error_with_the_valid_range(rank, n, d):
    X = _counts(seed=0, n=n, d=d, density=0.6)
    Y = sp.csr_matrix(np.ones((n, 2)))
    limit = min(n, d)
    with pytest.raises(ValueError, match=f"valid: 1 <= rank <= {limit}$"):
        MoM(rank=rank).fit(X, Y)
    context = FitContext(n_samples=n, n_features=d, n_labels=2)
    with pytest.raises(InvalidParameterError) as info:
        MoM(rank=rank).check_context(context)
    assert info.value.param == "rank" and f"1 <= rank <= {limit}" in str(info.value)
    MoM(rank=limit).check_context(context)
    MoM(rank=rank).check_context(FitContext())                       # sizes unknown: no verdict


def test_rank_error_at_validate_time(tmp_path):
    from mlx.cli import cli

    config = tmp_path / "c.yaml"
    config.write_text(textwrap.dedent("""
        name: momrank
        dataset:
          synthetic: {n_samples: 80, n_features: 12, n_labels: 5, rank: 2, seed: 0}
        methods:
          - name: mom
            params: {binarize: true}
        sweep:
          rank: [5, 40]
        metrics: [auc]
    """))
    r = CliRunner().invoke(cli, ["validate", str(config)], obj={})
    assert r.exit_code == 2, r.output
    assert "sweep.rank" in r.output and "1 <= rank <= 12" in r.output
    assert len(r.output.strip().splitlines()) == 1


@pytest.mark.filterwarnings("error::RuntimeWarning")
@pytest.mark.parametrize("moments", ["paper", "unbiased"])
@pytest.mark.parametrize("smoothing", [0.0, 0.001])
def test_empty_documents_and_unused_words_give_no_nan(moments, smoothing):
    X, Y, _ = sample_corpus(300, 12, 4, 2, doc_length=6.0, seed=3)
    X = X.tolil()
    X[0, :] = 0                                                      # an empty document
    X[:, 5] = 0                                                      # a word that never occurs
    X = sp.csr_matrix(X)
    X.eliminate_zeros()
    for rule in ("paper", "code"):
        model = MoM(rank=2, moments=moments, prediction=rule, smoothing=smoothing,
                    random_state=0).fit(X, Y)
        assert np.isfinite(model.word_probs_).all() and np.isfinite(model.prior_).all()
        scores = model.decision_function(X)
        assert np.isfinite(scores).all()
        only_unused = sp.csr_matrix(np.eye(1, 12, 5))                # only the unused word
        assert np.isfinite(model.decision_function(only_unused)).all()


def test_no_co_occurrence_falls_back_to_the_marginals():
    X = sp.csr_matrix(np.eye(6, 4))                                  # one word per document
    Y = sp.csr_matrix(np.eye(6, 3))
    model = MoM(rank=2, moments="unbiased", random_state=0).fit(X, Y)
    assert model.rank_ == 1
    assert np.isfinite(model.decision_function(X)).all()


def test_sample_corpus_draws_from_the_model():
    X, Y, truth = sample_corpus(20000, 15, 6, 2, doc_length=10.0, labels_per_doc=2.0,
                                prior=[0.7, 0.3], seed=0)
    h = truth["topic"]
    assert abs(np.mean(h == 0) - 0.7) < 0.02
    words = np.asarray(X[h == 1].sum(axis=0)).ravel()
    np.testing.assert_allclose(words / words.sum(), truth["words"][:, 1], atol=0.01)
    labels = np.asarray(Y[h == 0].mean(axis=0)).ravel()
    np.testing.assert_allclose(labels, truth["presence"][:, 0], atol=0.02)
    np.testing.assert_allclose(truth["labels"].sum(axis=0), 1.0)
