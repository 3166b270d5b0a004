"""LEML: closed-form optimum (Claim 1), recovery, monotone objective, solver agreement."""

import numpy as np
import pytest
import scipy.sparse as sp

from mlx.errors import DivergenceError
from mlx.methods import leml as leml_module
from mlx.methods.base import InvalidParameterError
from mlx.methods.leml import LEML, clear_gram_cache, gram_eigh, solve_w_squared_eig
from mlx.numerics.cg import cg
from mlx.numerics.losses import get_loss


def _problem(seed=0, n=60, d=8, L=10, density=0.5, mask=None):
    rng = np.random.default_rng(seed)
    X = sp.random(n, d, density=density, random_state=seed, format="csr",
                  data_rvs=lambda m: rng.normal(size=m))
    Y = sp.csr_matrix((rng.random((n, L)) < 0.3).astype(float))
    observed = None
    if mask is not None:
        observed = sp.csr_matrix((rng.random((n, L)) < mask).astype(float))
    return X, Y, observed


def _brute_objective(model, X, Y, observed):
    """J(W, H) from the dense n x L score matrix (tests only)."""
    loss = get_loss(model.loss)
    S = X.toarray() @ model.W_ @ model.H_.T
    T = loss.encode(Y.toarray() > 0)
    omega = np.ones(S.shape, bool) if observed is None else observed.toarray() > 0
    reg = 0.5 * model.l2_reg * (np.sum(model.W_ ** 2) + np.sum(model.H_ ** 2))
    return loss.value(T[omega], S[omega]).sum() + reg


def _p_at_1(scores, Y):
    """Fraction of rows whose top-scored label is positive (slow and obvious)."""
    hits = 0
    for i in range(scores.shape[0]):
        hits += Y[i, int(np.argmax(scores[i]))] > 0
    return hits / scores.shape[0]


# ---------------------------------------------------------------------------
# Claim 1 and recovery
# ---------------------------------------------------------------------------

@pytest.mark.parametrize("w_solver", ["eig", "cg"])
def test_claim1_small_lambda_matches_closed_form_rank_k_solution(w_solver):
    rng = np.random.default_rng(0)
    n, d, L, k = 60, 8, 12, 3
    X = rng.normal(size=(n, d))                                   # full column rank, n > d
    Y = (rng.random((n, L)) < 0.3).astype(float)
    U, s, Vt = np.linalg.svd(X, full_matrices=False)              # X = U_X S_X V_X'
    Um, sm, Vmt = np.linalg.svd(U.T @ Y, full_matrices=False)     # M = U_X' Y
    M_k = (Um[:, :k] * sm[:k]) @ Vmt[:k]
    Z_star = Vt.T @ np.diag(1.0 / s) @ M_k                        # V_X S_X^-1 M_k
    model = LEML(rank=k, l2_reg=1e-8, max_iter=150, tol=0, w_solver=w_solver,
                 inner_tol=1e-10, inner_max_iter=200, random_state=0).fit(X, Y)
    Z = model.W_ @ model.H_.T
    assert np.linalg.norm(Z - Z_star) <= 1e-6 * np.linalg.norm(Z_star)
    assert model.objective_[-1] == pytest.approx(0.5 * np.linalg.norm(Y - X @ Z_star) ** 2,
                                                 rel=1e-7)


@pytest.mark.parametrize("loss", ["squared", "logistic", "squared_hinge"])
def test_recovers_planted_rank3_model(loss):
    rng = np.random.default_rng(0)
    n, d, L, k = 400, 12, 20, 3
    W_star, H_star = rng.normal(size=(d, k)), rng.normal(size=(L, k))
    X, X_new = rng.normal(size=(n, d)), rng.normal(size=(200, d))
    Y = (X @ W_star @ H_star.T > 0).astype(float)                 # noise-free labels
    Y_new = (X_new @ W_star @ H_star.T > 0).astype(float)
    model = LEML(rank=3, l2_reg=1e-3, loss=loss, max_iter=30, random_state=0).fit(X, Y)
    assert _p_at_1(model.decision_function(X), Y) == 1.0
    assert _p_at_1(model.decision_function(X_new), Y_new) == 1.0


def test_recovers_planted_model_from_missing_labels():
    rng = np.random.default_rng(0)
    n, d, L, k = 400, 12, 20, 3
    W_star, H_star = rng.normal(size=(d, k)), rng.normal(size=(L, k))
    X = rng.normal(size=(n, d))
    Y = (X @ W_star @ H_star.T > 0).astype(float)
    observed = sp.csr_matrix(rng.random((n, L)) < 0.3)
    Y_seen = sp.csr_matrix(Y).multiply(observed).tocsr()          # positives only inside Omega
    for loss in ("squared", "logistic"):
        model = LEML(rank=3, l2_reg=1e-3, loss=loss, max_iter=30, random_state=0)
        model.fit(X, Y_seen, observed=observed)
        assert _p_at_1(model.decision_function(X), Y) == 1.0


# ---------------------------------------------------------------------------
# Objective: monotone, and equal to the brute-force value
# ---------------------------------------------------------------------------

SOLVER_CASES = [
    ("squared", None, "eig"), ("squared", None, "cg"), ("squared", None, "tron"),
    ("squared", 0.3, "cg"), ("squared", 0.3, "tron"),
    ("logistic", None, "tron"), ("logistic", 0.3, "tron"),
    ("squared_hinge", None, "tron"), ("squared_hinge", 0.3, "tron"),
]


@pytest.mark.parametrize("loss,mask,w_solver", SOLVER_CASES)
@pytest.mark.parametrize("l2_reg", [0.0, 0.5])
@pytest.mark.parametrize("init", ["svd", "random"])
def test_objective_never_increases_and_is_the_true_objective(loss, mask, w_solver, l2_reg, init):
    X, Y, observed = _problem(1, mask=mask)
    model = LEML(rank=3, l2_reg=l2_reg, loss=loss, max_iter=8, tol=0, w_solver=w_solver,
                 init=init, inner_max_iter=5, random_state=3).fit(X, Y, observed=observed)
    J = np.array(model.objective_)
    assert model.n_iter_ == 8 == len(J) and not model.converged_
    assert np.all(np.diff(J) <= 1e-10 * np.abs(J[:-1]) + 1e-12)
    assert J[-1] == pytest.approx(_brute_objective(model, X, Y, observed), rel=1e-8, abs=1e-10)
    assert model.w_solver_ == w_solver


def test_tol_stops_early_and_reports_convergence():
    X, Y, _ = _problem(2)
    model = LEML(rank=3, max_iter=500, tol=1e-6, random_state=0).fit(X, Y)
    assert model.converged_ and model.n_iter_ < 500
    J = model.objective_
    assert J[-2] - J[-1] <= 1e-6 * abs(J[-2])


# ---------------------------------------------------------------------------
# The exact eigendecomposition W-step
# ---------------------------------------------------------------------------

@pytest.mark.parametrize("l2_reg", [0.0, 1e-3, 1.0])
def test_eig_w_step_equals_cg_and_dense_kronecker_solve(l2_reg):
    X, Y, _ = _problem(3, n=40, d=6, L=7, density=0.6)
    H = np.random.default_rng(0).normal(size=(7, 3))
    M = H.T @ H
    B = np.asarray(X.T @ (Y @ H))                                 # X'YH
    W_eig = solve_w_squared_eig(gram_eigh(X, use_cache=False), B, M, l2_reg)

    def op(S):
        return np.asarray(X.T @ (np.asarray(X @ S) @ M)) + l2_reg * S

    W_cg = cg(op, B, tol=1e-13, max_iter=500).x
    G = (X.T @ X).toarray()
    K = np.kron(M, G) + l2_reg * np.eye(18)                       # (H'H kron X'X + lambda I)
    W_ref = (np.linalg.pinv(K) @ B.ravel(order="F")).reshape((6, 3), order="F")
    np.testing.assert_allclose(W_eig, W_ref, rtol=1e-7, atol=1e-9)
    np.testing.assert_allclose(W_cg, W_ref, rtol=1e-6, atol=1e-8)


def test_eig_w_step_without_regularisation_on_wide_data_is_minimum_norm():
    X, Y, _ = _problem(4, n=5, d=9, L=4, density=0.7)             # X'X singular
    H = np.random.default_rng(1).normal(size=(4, 2))
    M = H.T @ H
    B = np.asarray(X.T @ (Y @ H))
    W = solve_w_squared_eig(gram_eigh(X, use_cache=False), B, M, 0.0)
    K = np.kron(M, (X.T @ X).toarray())
    W_ref = (np.linalg.pinv(K) @ B.ravel(order="F")).reshape((9, 2), order="F")
    np.testing.assert_allclose(W, W_ref, rtol=1e-6, atol=1e-9)


def test_eig_cg_and_tron_fits_agree():
    X, Y, _ = _problem(5)
    fits = {s: LEML(rank=3, l2_reg=0.3, max_iter=6, tol=0, w_solver=s, inner_tol=1e-12,
                    inner_max_iter=300, random_state=0).fit(X, Y)
            for s in ("eig", "cg", "tron")}
    Z = {s: m.W_ @ m.H_.T for s, m in fits.items()}
    np.testing.assert_allclose(Z["cg"], Z["eig"], rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(Z["tron"], Z["eig"], rtol=1e-5, atol=1e-7)
    np.testing.assert_allclose(fits["cg"].objective_, fits["eig"].objective_, rtol=1e-9)


def test_gram_eigendecomposition_is_cached_by_content():
    clear_gram_cache()
    X, _, _ = _problem(6)
    first = gram_eigh(X)
    assert gram_eigh(X.copy()) is first
    np.testing.assert_allclose((first.evecs * first.evals) @ first.evecs.T,
                               (X.T @ X).toarray(), atol=1e-10)
    X2 = X.copy()
    X2.data[0] += 1.0
    assert gram_eigh(X2) is not first
    clear_gram_cache()
    assert gram_eigh(X) is not first


def test_rotated_path_without_the_cached_projection(monkeypatch):
    X, Y, _ = _problem(7)
    reference = LEML(rank=3, max_iter=4, tol=0, random_state=0).fit(X, Y)
    monkeypatch.setattr(leml_module, "_ROTATED_MAX_ENTRIES", 0)
    model = LEML(rank=3, max_iter=4, tol=0, random_state=0).fit(X, Y)
    np.testing.assert_allclose(model.W_, reference.W_, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(model.objective_, reference.objective_, rtol=1e-12)


@pytest.mark.parametrize("rotated_max", [None, 0])
@pytest.mark.parametrize("l2_reg", [0.3, 0.0], ids=["tridiagonal", "eigendecomposition"])
def test_row_side_eig_gives_the_feature_side_solution_on_wide_data(monkeypatch, rotated_max,
                                                                   l2_reg):
    """Fewer rows than features: the exact W-step factorises X X' (n x n), never X'X, and
    lands on the fit of the X'X route (forced for the reference): from its tridiagonal form
    when l2_reg > 0, from its eigendecomposition (the minimum-norm solution) at 0."""
    X, Y, _ = _problem(8, n=20, d=50, L=7, density=0.3)
    X = sp.vstack([X, sp.csr_matrix((2, 50))]).tocsr()            # zero rows: s = 0 dropped
    Y = sp.vstack([Y, sp.csr_matrix(np.eye(2, 7))]).tocsr()
    params = dict(rank=3, l2_reg=l2_reg, max_iter=6, tol=0, random_state=0)
    cache = leml_module.TRIDIAG_CACHE if l2_reg > 0 else leml_module.GRAM_CACHE
    clear_gram_cache()
    with monkeypatch.context() as forced:
        forced.setattr(leml_module, "_row_side", lambda X: False)
        reference = LEML(**params).fit(X, Y)                      # the X'X route
    assert reference.w_solver_ == "eig" and X in cache
    clear_gram_cache()
    if rotated_max is not None:
        monkeypatch.setattr(leml_module, "_ROTATED_MAX_ENTRIES", rotated_max)
    model = LEML(**params).fit(X, Y)
    assert model.w_solver_ == "eig"
    assert X not in leml_module.GRAM_CACHE and X not in leml_module.TRIDIAG_CACHE
    assert sp.csr_matrix(X.T) in cache
    assert cache.nbytes < 50 * 50 * 8                            # n x n, not d x d
    np.testing.assert_allclose(model.W_ @ model.H_.T, reference.W_ @ reference.H_.T,
                               rtol=1e-8, atol=1e-10)
    np.testing.assert_allclose(model.objective_, reference.objective_, rtol=1e-10)
    assert model.W_.shape == (50, 3)
    clear_gram_cache()


def test_row_side_rotation_keeps_a_row_space_w_and_drops_the_rest():
    X, Y, _ = _problem(10, n=12, d=30, L=5, density=0.4)
    engine = leml_module._RowEigEngine(X, Y, 0.1, gram_eigh(sp.csr_matrix(X.T), use_cache=False))
    rng = np.random.default_rng(0)
    W_row = np.asarray(X.T @ rng.normal(size=(12, 3)))            # in the row space of X
    np.testing.assert_allclose(engine.to_original(engine.to_internal(W_row)), W_row,
                               rtol=1e-8, atol=1e-10)
    null = rng.normal(size=(30, 3))
    null -= np.linalg.pinv(X.toarray()) @ (X @ null)              # X null = 0
    np.testing.assert_allclose(engine.to_internal(null), 0.0, atol=1e-10)


def test_auto_w_solver_is_iterative_when_rows_and_features_both_exceed_the_limit(monkeypatch):
    X, Y, _ = _problem(9, n=20, d=50, L=7, density=0.3)
    monkeypatch.setattr(leml_module, "EIG_MAX_FEATURES", 19)
    assert LEML(rank=3, l2_reg=0.3, max_iter=2).fit(X, Y).w_solver_ == "cg"
    monkeypatch.setattr(leml_module, "EIG_MAX_FEATURES", 20)
    assert LEML(rank=3, l2_reg=0.3, max_iter=2).fit(X, Y).w_solver_ == "eig"


# ---------------------------------------------------------------------------
# Missing labels conventions
# ---------------------------------------------------------------------------

@pytest.mark.parametrize("loss", ["squared", "logistic", "squared_hinge"])
def test_unobserved_label_scores_zero(loss):
    X, Y, observed = _problem(8, mask=0.5)
    observed = observed.tolil()
    observed[:, 2] = 0
    observed = observed.tocsr()
    observed.eliminate_zeros()
    model = LEML(rank=3, loss=loss, max_iter=4, random_state=0).fit(X, Y, observed=observed)
    np.testing.assert_array_equal(model.H_[2], 0.0)
    np.testing.assert_array_equal(model._decision_function(X)[:, 2], 0.0)   # before the prior


def test_positives_outside_omega_are_ignored_and_all_observed_equals_full():
    X, Y, observed = _problem(9, mask=0.5)
    inside = Y.multiply(observed).tocsr()
    a = LEML(rank=3, loss="logistic", max_iter=3, random_state=0).fit(X, Y, observed=observed)
    b = LEML(rank=3, loss="logistic", max_iter=3, random_state=0).fit(X, inside, observed=observed)
    np.testing.assert_allclose(a.W_, b.W_, rtol=1e-12)
    everything = sp.csr_matrix(np.ones(Y.shape))
    c = LEML(rank=3, max_iter=3, random_state=0).fit(X, Y, observed=everything)
    d = LEML(rank=3, max_iter=3, random_state=0).fit(X, Y)
    assert c.w_solver_ == d.w_solver_ == "eig"
    np.testing.assert_allclose(c.W_, d.W_, rtol=1e-12)


# ---------------------------------------------------------------------------
# LEML-specific protocol details (the shared contract is in test_common.py)
# ---------------------------------------------------------------------------

def test_threshold_follows_the_loss():
    assert LEML(loss="squared").threshold == 0.5
    assert LEML(loss="logistic").threshold == 0.0
    assert LEML(loss="squared_hinge").threshold == 0.0


def test_sparse_svd_start_for_many_labels(monkeypatch):
    monkeypatch.setattr(leml_module, "_DENSE_SVD_MAX_LABELS", 3)
    X, Y, _ = _problem(11)
    a = LEML(rank=3, max_iter=2, random_state=1).fit(X, Y)
    b = LEML(rank=3, max_iter=2, random_state=1).fit(X, Y)
    np.testing.assert_array_equal(a.W_, b.W_)


def test_solver_loss_mismatch_is_explained():
    X, Y, observed = _problem(14, mask=0.5)
    with pytest.raises(InvalidParameterError, match="w_solver='eig' needs loss='squared' and "
                                                    "fully observed labels"):
        LEML(w_solver="eig").fit(X, Y, observed=observed)
    with pytest.raises(InvalidParameterError, match="w_solver='cg' needs loss='squared'"):
        LEML(w_solver="cg", loss="logistic").fit(X, Y)


def test_rank_above_min_dimensions_is_clamped():
    X, Y, _ = _problem(15, d=4, L=6)
    model = LEML(rank=50, max_iter=2).fit(X, Y)
    assert model.rank_ == 4 and model.W_.shape == (4, 4) and model.H_.shape == (6, 4)


def test_non_finite_factors_raise_divergence_error(monkeypatch):
    X, Y, _ = _problem(17)
    monkeypatch.setattr(leml_module, "_ridge_shared",
                        lambda AtA, YtA, lam: np.full(YtA.shape, np.inf))
    with pytest.raises(DivergenceError, match="LEML diverged at outer iteration 1 "
                                              r"\(non-finite factors\); try a larger l2_reg"):
        LEML(rank=3, l2_reg=0.1).fit(X, Y)
    with pytest.raises(DivergenceError, match=r"^LEML: every l2_reg tried by auto "
                                              r"\(0.0001..10000\) diverged; set l2_reg$"):
        LEML(rank=3).fit(X, Y)


def test_large_label_matrix_is_never_materialised():
    """n x L = 2e4 x 5e3 (800 MB dense); the fit must stay far below that."""
    import tracemalloc

    rng = np.random.default_rng(0)
    n, d, L = 20_000, 50, 5_000
    X = sp.random(n, d, density=0.1, random_state=0, format="csr")
    nnz = 100_000
    rows, cols = rng.integers(0, n, nnz), rng.integers(0, L, nnz)
    observed = sp.csr_matrix((np.ones(nnz), (rows, cols)), shape=(n, L))
    Y = sp.csr_matrix(((rng.random(nnz) < 0.2).astype(float), (rows, cols)), shape=(n, L))
    Y.data = (Y.data > 0).astype(float)   # repeated (row, label) pairs were summed
    tracemalloc.start()
    try:
        LEML(rank=4, loss="logistic", max_iter=2, inner_max_iter=3,
             random_state=0).fit(X, Y, observed=observed)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 100e6


@pytest.mark.parametrize("solver", ["cg", "tron"])
def test_features_dense_enough_are_multiplied_as_a_dense_array(monkeypatch, solver):
    """The squared-loss CG/TRON W-steps take X as a dense array when that is no larger than
    its CSR form (nus-wide's image features), with the same fit; sparse X stays CSR."""
    rng = np.random.default_rng(3)
    n, d, L = 300, 20, 15
    Xd = rng.standard_normal((n, d)) * (rng.random((n, d)) < 0.9)
    Y = sp.csr_matrix((rng.random((n, L)) < 0.2).astype(float))
    seen = []
    real_init = leml_module._SquaredFullEngine.__init__

    def spy(self, X, *args, **kwargs):
        seen.append(type(X))
        real_init(self, X, *args, **kwargs)

    monkeypatch.setattr(leml_module._SquaredFullEngine, "__init__", spy)
    params = dict(rank=5, loss="squared", l2_reg=0.1, max_iter=4, tol=0, w_solver=solver,
                  init="random", random_state=0)
    dense = LEML(**params).fit(sp.csr_matrix(Xd), Y)
    monkeypatch.setattr(leml_module, "_dense_if_smaller", lambda X: X)
    kept = LEML(**params).fit(sp.csr_matrix(Xd), Y)
    assert seen == [np.ndarray, sp.csr_matrix]
    np.testing.assert_allclose(dense.W_, kept.W_, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(dense.objective_, kept.objective_, rtol=1e-12)
    sparse_X = sp.random(n, d, density=0.1, random_state=4, format="csr")
    assert leml_module._dense_if_smaller(sparse_X) is sparse_X


@pytest.mark.parametrize("l2_reg", [1e-3, 0.3, 30.0])
def test_the_tridiagonal_w_step_is_the_eigendecomposition_one(monkeypatch, l2_reg):
    """A positive l2_reg takes X'X's tridiagonal form; forcing the eigenbasis engine gives
    the same fit (the same exact W-steps, another factorisation)."""
    X, Y, _ = _problem(11, n=40, d=12, L=9, density=0.4)
    params = dict(rank=4, l2_reg=l2_reg, max_iter=8, tol=0, random_state=0)
    clear_gram_cache()
    model = LEML(**params).fit(X, Y)
    assert X in leml_module.TRIDIAG_CACHE and X not in leml_module.GRAM_CACHE
    monkeypatch.setattr(leml_module, "_TridiagEngine",
                        lambda X, Y, lam, tri, memo, plan: leml_module._EigEngine(
                            X, Y, lam, gram_eigh(X), memo, plan))
    reference = LEML(**params).fit(X, Y)
    np.testing.assert_allclose(model.W_, reference.W_, rtol=1e-8, atol=1e-11)
    np.testing.assert_allclose(model.H_, reference.H_, rtol=1e-8, atol=1e-11)
    np.testing.assert_allclose(model.objective_, reference.objective_, rtol=1e-11)
    clear_gram_cache()
