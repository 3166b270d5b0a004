"""LEML's fit, continued (found by mutation testing): what the fits of one ``auto`` walk share
on a row set is what a cold fit computes, and the later fits read it from there; the solver
routes on wide data; what counts as a divergence."""

import logging
import re
import time

import numpy as np
import pytest

from mlx.errors import DivergenceError
from mlx.methods import leml as leml_module
from mlx.methods.leml import LEML, clear_gram_cache, gram_eigh, gram_tridiagonal
from tests.methods.test_mutants_leml import CASES, _Dense, _problem, _random_start


def _fit(shared, l2_reg, observed=None, **params):
    X, Y, _ = _problem(20)
    params = {**dict(rank=2, max_iter=3, tol=0, inner_tol=1e-13, inner_max_iter=500), **params}
    return LEML(l2_reg=l2_reg, **params)._fit(X, Y, observed=observed, shared=shared)


def test_the_first_fit_of_a_row_set_keeps_its_start_and_the_rotated_products_in_the_memo():
    X, Y, _ = _problem(20)
    clear_gram_cache()
    shared = {}
    _fit(shared, 0.3)
    assert list(shared) == [30]                                   # keyed by the number of rows
    memo = shared[30]
    assert sorted(memo) == ["Ct", "H", "y_sq"]
    Q = gram_tridiagonal(X).unrotate(np.eye(X.shape[1]))          # X'X = Q T Q'
    np.testing.assert_allclose(memo["Ct"], Q.T @ (X.T @ Y).toarray(),
                               rtol=1e-12, atol=1e-12)            # Q'X'Y
    assert memo["y_sq"] == Y.nnz                                  # ||Y||^2 of a 0/1 matrix
    P = Y.toarray()
    top = np.linalg.svd(P)[2][:2].T                               # top right singular vectors
    np.testing.assert_allclose(memo["H"] @ memo["H"].T, top @ top.T, atol=1e-10)
    clear_gram_cache()


@pytest.mark.parametrize("mask", [None, 0.6])
def test_a_later_fit_of_the_row_set_equals_a_cold_fit(mask):
    observed = None if mask is None else _problem(20, mask=mask)[2]
    shared = {}
    _fit(shared, 0.3, observed)
    later = _fit(shared, 2.0, observed)
    cold = _fit(None, 2.0, observed)
    assert later.w_solver_ == ("eig" if mask is None else "cg")
    np.testing.assert_array_equal(later.W_, cold.W_)
    np.testing.assert_array_equal(later.H_, cold.H_)
    assert later.objective_ == cold.objective_
    assert sorted(shared[30]) == (["Ct", "H", "y_sq"] if mask is None else ["H"])


def test_a_later_fit_of_the_row_set_reads_its_start_and_the_rotated_products_from_the_memo():
    """Doubled ``Q'X'Y``, four times ``||Y||^2`` and another start in the memo: the fit is the
    one of the targets ``2 Y`` from that start."""
    X, Y, _ = _problem(20)
    shared = {}
    _fit(shared, 0.3)
    memo = shared[30]
    memo["Ct"] = 2 * memo["Ct"]
    memo["y_sq"] = 4 * memo["y_sq"]
    memo["H"] = _random_start(5, 6, 2, None)
    model = _fit(shared, 0.3)
    ref = _Dense(X, Y, None, "squared", 0.3)
    ref.T = 2 * ref.T
    W, H, objective = ref.alternate(_random_start(5, 6, 2, None), 3)
    np.testing.assert_allclose(model.W_, W, rtol=1e-8, atol=1e-10)
    np.testing.assert_allclose(model.H_, H, rtol=1e-8, atol=1e-10)
    np.testing.assert_allclose(model.objective_, objective, rtol=1e-9)


@pytest.mark.parametrize("route", ["eig", "row", "tridiag"])
def test_v_x_y_is_kept_dense_up_to_the_entry_limit_inclusive(monkeypatch, route):
    row_side = route == "row"
    X, Y, _ = _problem(21, n=4, d=7) if row_side else _problem(21)
    if row_side:                                                  # V = X'U s^-1/2 from X X'
        eig = gram_eigh(X.T.tocsr(), use_cache=False)
        V = np.asarray(X.T @ eig.evecs) / np.sqrt(eig.evals)
        engine = leml_module._RowEigEngine
    elif route == "tridiag":                                      # Q of X'X = Q T Q'
        eig = gram_tridiagonal(X, use_cache=False)
        V = eig.unrotate(np.eye(X.shape[1]))
        engine = leml_module._TridiagEngine
    else:
        eig = gram_eigh(X, use_cache=False)
        V = eig.evecs
        engine = leml_module._EigEngine
    entries = V.shape[1] * Y.shape[1]                             # rank of X'X times labels
    assert entries == (4 if row_side else 5) * 6
    monkeypatch.setattr(leml_module, "_ROTATED_MAX_ENTRIES", entries)
    kept = engine(X, Y, 0.3, eig)
    np.testing.assert_allclose(kept.C, V.T @ (X.T @ Y).toarray(), rtol=1e-10, atol=1e-12)
    monkeypatch.setattr(leml_module, "_ROTATED_MAX_ENTRIES", entries - 1)
    assert engine(X, Y, 0.3, eig).C is None


@pytest.mark.parametrize("loss,mask,w_solver", [case for case in CASES if case[2] != "eig"])
def test_wide_data_beyond_the_limit_keeps_the_iterative_w_step_it_is_given(monkeypatch, loss, mask,
                                                                            w_solver):
    """Only the exact W-step moves to ``X X'`` on wide data: CG and TRON still take their own
    single steps there."""
    X, Y, observed = _problem(22, n=4, d=5, mask=mask)
    monkeypatch.setattr(leml_module, "EIG_MAX_FEATURES", 4)
    assert leml_module._row_side(X)
    model = LEML(rank=2, l2_reg=0.3, loss=loss, max_iter=2, tol=0, w_solver=w_solver,
                 init="random", inner_max_iter=1, inner_tol=1e-12,
                 random_state=3).fit(X, Y, observed=observed)
    ref = _Dense(X, Y, observed, loss, 0.3)
    W, H = np.zeros((5, 2)), _random_start(3, 6, 2, observed)
    for _ in range(2):
        W = ref.cg_step("W", H, W) if w_solver == "cg" else ref.tron_step("W", H, W)
        H = ref.exact("H", W, H) if loss == "squared" else ref.tron_step("H", W, H)
    np.testing.assert_allclose(model.W_, W, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(model.H_, H, rtol=1e-9, atol=1e-12)
    assert model.w_solver_ == w_solver and [w for w, _ in model.n_inner_iter_] == [1, 1]


def test_a_non_finite_objective_with_finite_factors_is_a_divergence(monkeypatch):
    X, Y, _ = _problem(23)
    real, calls = leml_module._squared_full_objective, []

    def objective(*args):                                         # the second one overflows
        calls.append(1)
        return real(*args) if len(calls) == 1 else np.inf

    monkeypatch.setattr(leml_module, "_squared_full_objective", objective)
    with pytest.raises(DivergenceError) as diverged:
        LEML(rank=2, l2_reg=0.3, max_iter=3, tol=0, w_solver="eig").fit(X, Y)
    assert str(diverged.value) == ("LEML diverged at outer iteration 2 (non-finite factors); try "
                                   "a larger l2_reg or fewer inner iterations (inner_max_iter)")


@pytest.mark.parametrize("n,d,row_side", [(4, 5, True), (6, 6, False), (7, 6, False),
                                          (5, 6, True)])
def test_the_exact_w_step_decomposes_x_x_only_with_fewer_rows_than_features(n, d, row_side):
    """``X X'`` with fewer rows than features (the smaller Gram matrix); with as many rows as
    features or more, ``X'X``."""
    X, Y, _ = _problem(24, n=n, d=d)
    clear_gram_cache()
    model = LEML(rank=2, l2_reg=0.3, max_iter=2, tol=0, w_solver="eig").fit(X, Y)
    assert model.w_solver_ == "eig"
    assert (X in leml_module.TRIDIAG_CACHE, X.T.tocsr() in leml_module.TRIDIAG_CACHE) == (
        not row_side, row_side)
    assert len(leml_module.GRAM_CACHE) == 0                      # l2_reg > 0: no eigenvectors
    clear_gram_cache()


def test_the_shared_ridge_h_step_drops_directions_below_the_pinv_cutoff():
    """``H = Y'A (A'A + l2_reg I)^+`` with the pseudo-inverse cut at PINV_RCOND (1e-12) of the
    largest eigenvalue: a direction at 1e-13 of it is dropped, one at 1e-9 kept."""
    YtA = np.random.default_rng(1).normal(size=(4, 3))
    H = leml_module._ridge_shared(np.diag([2.0, 2e-13, 2e-9]), YtA, 0.0)
    np.testing.assert_allclose(H, YtA * [0.5, 0.0, 5e8], rtol=1e-12)


@pytest.mark.parametrize("limit,w_solver", [(1, "eig"), (0, "cg")])
def test_auto_takes_the_exact_w_step_with_rows_up_to_the_limit_down_to_one_row(monkeypatch, limit,
                                                                                w_solver):
    X, Y, _ = _problem(25, n=1, d=3, L=3)
    monkeypatch.setattr(leml_module, "EIG_MAX_FEATURES", limit)
    model = LEML(rank=2, l2_reg=0.3, max_iter=2, tol=0, inner_tol=1e-13,
                 inner_max_iter=50).fit(X, Y)
    assert model.w_solver_ == w_solver
    ref = _Dense(X, Y, None, "squared", 0.3)
    H = np.linalg.svd(Y.toarray())[2][:2].T                       # the SVD start
    W, H, objective = ref.alternate(H, 2)
    np.testing.assert_allclose(model.W_ @ model.H_.T, W @ H.T, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(model.objective_, objective, rtol=1e-9)


def test_rank_is_clamped_to_the_number_of_labels_when_that_is_the_smaller():
    X, Y, _ = _problem(26, d=5, L=3)
    model = LEML(rank=4, l2_reg=0.3, max_iter=2, tol=0).fit(X, Y)
    assert model.rank_ == 3 and model.W_.shape == (5, 3) and model.H_.shape == (3, 3)
    same = LEML(rank=3, l2_reg=0.3, max_iter=2, tol=0).fit(X, Y)
    np.testing.assert_array_equal(model.W_, same.W_)
    assert model.objective_ == same.objective_


def test_a_clamped_rank_is_logged_once_and_an_unclamped_one_not(caplog):
    X, Y, _ = _problem(26, d=5, L=3)
    with caplog.at_level(logging.INFO, logger="mlx.methods.leml"):
        LEML(rank=3, l2_reg=0.3, max_iter=1).fit(X, Y)
        assert caplog.messages == []
        LEML(rank=9, l2_reg=0.3, max_iter=1).fit(X, Y)
    assert caplog.messages == ["LEML: rank 9 clamped to min(n_features, n_labels) = 3"]


def test_each_outer_iteration_is_logged_with_its_objective_and_the_time_since_the_start(caplog):
    X, Y, _ = _problem(27)
    with caplog.at_level(logging.DEBUG, logger="mlx.methods.leml"):
        began = time.perf_counter()
        model = LEML(rank=2, l2_reg=0.3, max_iter=3, tol=0).fit(X, Y)
        took = time.perf_counter() - began
    lines = [re.fullmatch(r"LEML iteration (\d): objective (\S+) \((\d+\.\d\d)s\)", message)
             for message in caplog.messages]
    assert all(lines) and len(lines) == 3
    assert [int(line[1]) for line in lines] == [1, 2, 3]
    assert [line[2] for line in lines] == [f"{J:.6g}" for J in model.objective_]
    seconds = [float(line[3]) for line in lines]
    assert seconds == sorted(seconds) and seconds[-1] <= took + 0.01


def test_x_y_is_rotated_once_only_when_that_costs_less_than_rotating_every_iteration():
    import scipy.sparse as sp

    def shaped(n, d, L, x_row, y_row):            # only the shapes and nnz matter
        X = sp.random(n, d, density=x_row / d, format="csr", random_state=0)
        Y = sp.random(n, L, density=y_row / L, format="csr", random_state=1)
        return X, Y

    X, Y = shaped(4880, 1837, 159, 68, 2.4)        # bibtex: once 1.3 GFLOP, each time 5.0
    assert leml_module._rotated_pays(X, Y, (32, 10))
    assert not leml_module._rotated_pays(X, Y, (32, 1))
    X, Y = shaped(12920, 501, 983, 19.5, 19)      # delicious: sparse products weigh more
    assert leml_module._rotated_pays(X, Y, (197, 30))
    assert leml_module._rotated_pays(X, Y, (50, 10))  # 1.2 against 2.1 (1.0 unweighted)
    assert not leml_module._rotated_pays(X, Y, (50, 1))
    X, Y = shaped(2000, 5000, 3993, 240, 5)       # eurlex-shaped labels: more than features
    assert not leml_module._rotated_pays(X, Y, (250, 5))
    assert not leml_module._rotated_pays(X, Y, (250, 15))   # 410 against 387 (weighted):
    assert leml_module._rotated_pays(X, Y, (250, 20))       # 480 against 516
    assert leml_module._rotated_pays(X, Y, None)  # no plan (an engine built directly): always
    X, Y, _ = _problem(21)
    tri = gram_tridiagonal(X, use_cache=False)
    assert leml_module._TridiagEngine(X, Y, 0.3, tri, plan=(2, 10)).C is not None
    assert leml_module._TridiagEngine(X, Y, 0.3, tri, plan=(2, 0)).C is None
