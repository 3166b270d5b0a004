"""CPLST: LEML's closed form (Claims 1-2), a dense hat-matrix reference, optimality (the shared
method contract is checked in test_common.py)."""

import numpy as np
import pytest
import scipy.sparse as sp

from mlx.data.synthetic import make_low_rank_multilabel
from mlx.methods.base import FitContext
from mlx.methods.cplst import CPLST
from mlx.metrics import precision_at_k
from mlx.numerics.ridge import psd_solve as ridge_solve


def _problem(seed=0, n=60, d=8, L=12, sparse_x=True):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))                            # full column rank, n > d
    if sparse_x:
        X[rng.random((n, d)) < 0.3] = 0.0
    Y = (rng.random((n, L)) < 0.3).astype(float)
    return sp.csr_matrix(X), sp.csr_matrix(Y)


def _dense_reference(X, Y, rank, l2_reg):
    """CPLST exactly as written in the paper: explicit n x n hat matrix, dense Y."""
    X, Y = X.toarray(), Y.toarray()
    mean = Y.mean(axis=0)
    Yc = Y - mean
    d = X.shape[1]
    H = X @ np.linalg.pinv(X.T @ X + l2_reg * np.eye(d)) @ X.T
    evals, evecs = np.linalg.eigh(Yc.T @ H @ Yc)
    V = evecs[:, np.argsort(evals)[::-1][:rank]]
    W = np.linalg.pinv(X.T @ X + l2_reg * np.eye(d)) @ X.T @ Yc @ V
    return W @ V.T, mean


@pytest.mark.parametrize("l2_reg", [0.0, 1e-10])
@pytest.mark.parametrize("rank", [1, 3, 12])
def test_small_lambda_is_leml_closed_form_on_centred_labels(l2_reg, rank):
    X, Y = _problem()
    Yc = Y.toarray() - Y.toarray().mean(axis=0)
    U, s, Vt = np.linalg.svd(X.toarray(), full_matrices=False)   # X = U_X S_X V_X'
    Um, sm, Vmt = np.linalg.svd(U.T @ Yc, full_matrices=False)    # M = U_X' Yc
    M_k = (Um[:, :rank] * sm[:rank]) @ Vmt[:rank]
    Z_star = Vt.T @ np.diag(1.0 / s) @ M_k                        # V_X S_X^-1 M_k
    model = CPLST(rank=rank, l2_reg=l2_reg).fit(X, Y)
    np.testing.assert_allclose(model.W_ @ model.H_.T, Z_star, atol=1e-7)
    np.testing.assert_allclose(model.decision_function(X),
                               X.toarray() @ Z_star + Y.toarray().mean(axis=0), atol=1e-7)


@pytest.mark.parametrize("l2_reg", [0.0, 0.3, 5.0])
@pytest.mark.parametrize("shape", [(60, 8, 12), (15, 20, 9)])   # n > d and d > n
def test_matches_dense_hat_matrix_reference(l2_reg, shape):
    n, d, L = shape
    X, Y = _problem(seed=1, n=n, d=d, L=L)
    rank = 4
    Z_ref, mean = _dense_reference(X, Y, rank, l2_reg)
    model = CPLST(rank=rank, l2_reg=l2_reg).fit(X, Y)
    np.testing.assert_allclose(model.W_ @ model.H_.T, Z_ref, atol=1e-8)
    np.testing.assert_allclose(model.mean_, mean, atol=1e-14)
    Xt, _ = _problem(seed=2, n=7, d=d, L=L)
    np.testing.assert_allclose(model.decision_function(Xt), Xt.toarray() @ Z_ref + mean,
                               atol=1e-8)


def test_fitted_factors_solve_the_cplst_problem():
    X, Y = _problem(seed=3)
    lam = 0.7
    model = CPLST(rank=5, l2_reg=lam).fit(X, Y)
    Xd, Yc = X.toarray(), Y.toarray() - Y.toarray().mean(axis=0)
    V, W = model.H_, model.W_
    np.testing.assert_allclose(V.T @ V, np.eye(5), atol=1e-12)              # V'V = I
    grad = Xd.T @ (Xd @ W - Yc @ V) + lam * W                                # ridge optimality
    np.testing.assert_allclose(grad, 0.0, atol=1e-10)
    assert np.all(np.diff(model.eigenvalues_) <= 1e-12)                      # decreasing
    # the eigenvalues are the captured "conditional" variance Yc' H Yc along V
    H = Xd @ np.linalg.solve(Xd.T @ Xd + lam * np.eye(Xd.shape[1]), Xd.T)
    np.testing.assert_allclose(np.diag(V.T @ Yc.T @ H @ Yc @ V), model.eigenvalues_,
                               rtol=1e-10)


def test_full_rank_is_ridge_regression_on_every_label():
    X, Y = _problem(seed=4)
    lam = 2.0
    model = CPLST(rank=50, l2_reg=lam).fit(X, Y)                            # clamped to L
    assert model.rank_ == Y.shape[1] and model.H_.shape == (12, 12)
    Xd, Yd = X.toarray(), Y.toarray()
    mean = Yd.mean(axis=0)
    W = np.linalg.solve(Xd.T @ Xd + lam * np.eye(8), Xd.T @ (Yd - mean))
    np.testing.assert_allclose(model.decision_function(X), Xd @ W + mean, atol=1e-10)


def test_ridge_solve_singular_uses_pseudo_inverse():
    A = np.array([[1.0, 1.0], [1.0, 1.0]])
    B = np.array([[2.0], [2.0]])
    np.testing.assert_allclose(ridge_solve(A, B, 0.0), np.linalg.pinv(A) @ B, atol=1e-12)
    np.testing.assert_allclose(ridge_solve(A, B, 0.5), np.linalg.solve(A + 0.5 * np.eye(2), B))


def test_recovery_on_synthetic_data():
    split = make_low_rank_multilabel(n_samples=400, n_features=30, n_labels=20, rank=3,
                                     n_test=200, seed=0)
    model = CPLST(rank=3, l2_reg=0.1).fit(split.train.X, split.train.Y)
    p1 = precision_at_k(split.test.Y, model.decision_function(split.test.X), k=1).mean()
    # labels are per-label quantile thresholds of X W* H*', so a linear ranking tops out
    # near 0.73 here; chance is about 0.12
    assert p1 > 0.65


def test_missing_labels_declined():
    model = CPLST()
    assert not CPLST.supports_missing_labels
    assert model.skip(FitContext(n_samples=10, n_features=5, n_labels=3, observed_ratio=0.5)) == \
        "cplst does not support missing labels"
    assert model.skip(FitContext(n_samples=10, n_features=5, n_labels=3,
                                 observed_ratio=1.0)) is None
    assert "n_features=30000" in model.skip(FitContext(n_samples=30000, n_features=30000,
                                                       n_labels=3))
    assert model.skip(FitContext(n_samples=10, n_features=30000, n_labels=3)) is None
    X, Y = _problem()
    partial = sp.csr_matrix(np.random.default_rng(0).random(Y.shape) < 0.5, dtype=float)
    with pytest.raises(ValueError, match="CPLST does not support missing labels"):
        model.fit(X, Y, observed=partial)
    everything = sp.csr_matrix(np.ones(Y.shape))
    np.testing.assert_array_equal(model.fit(X, Y, observed=everything).decision_function(X),
                                  CPLST().fit(X, Y).decision_function(X))


def test_threshold_and_default_parameters():
    assert CPLST().threshold == 0.5                                         # 0/1 targets
    assert CPLST().get_params() == {"l2_reg": "auto", "random_state": None, "rank": 10}


def test_label_without_positives_and_row_without_features():
    X, Y = _problem(seed=6)
    X = X.tolil()
    X[0, :] = 0
    Y = Y.tolil()
    Y[:, 2] = 0
    model = CPLST(rank=4).fit(X.tocsr(), Y.tocsr())
    scores = model._decision_function(X.tocsr())   # the model's own, before auto's prior
    assert np.isfinite(scores).all()
    np.testing.assert_allclose(scores[:, 2], 0.0, atol=1e-12)     # mean 0, no signal
    np.testing.assert_allclose(scores[0], model.mean_)             # no features: the mean
