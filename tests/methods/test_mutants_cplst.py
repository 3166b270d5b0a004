"""CPLST: properties the older tests left open (found by mutation testing): ``l2_reg="auto"``
is the penalty of lowest GCV for the centred labels, checked against dense hat matrices; the
size limit and its message; the closed-form status attributes."""

import numpy as np
import pytest
import scipy.sparse as sp

from mlx.methods import cplst as cplst_module
from mlx.methods.base import FitContext
from mlx.methods.cplst import CPLST


def _problem(seed=0, n=40, d=6, L=7):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d)) * (rng.random((n, d)) < 0.7)
    Y = (rng.random((n, L)) < 0.3).astype(float)
    Y[:, 0] = rng.random(n) < 0.7 * (X[:, 0] > 0)                # a label X can explain
    return sp.csr_matrix(X), sp.csr_matrix(Y)


def _dense_cplst(X, Y, rank, lam):
    """``W V'`` from the explicit hat matrix (as in the paper), and the GCV of the ridge
    regression of the centred labels at ``lam`` (tests only)."""
    X, Y = X.toarray(), Y.toarray()
    n, d = X.shape
    Yc = Y - Y.mean(axis=0)
    K = np.linalg.pinv(X.T @ X + lam * np.eye(d)) @ X.T
    H = X @ K
    evals, evecs = np.linalg.eigh(Yc.T @ H @ Yc)
    V = evecs[:, np.argsort(evals)[::-1][:rank]]
    gcv = np.sum((Yc - H @ Yc) ** 2) / (1 - np.trace(H) / n) ** 2
    return K @ Yc @ V @ V.T, gcv


@pytest.mark.parametrize("shape", [(40, 6, 7), (60, 9, 4)])
def test_auto_l2_reg_is_the_lowest_gcv_for_the_centred_labels(shape):
    n, d, L = shape
    X, Y = _problem(1, n, d, L)
    model = CPLST(rank=3).fit(X, Y)
    choice = model.auto_["l2_reg"]
    assert list(model.auto_)[0] == "l2_reg" and choice.procedure == "gcv"
    s_max = np.linalg.eigvalsh(X.toarray().T @ X.toarray())[-1]
    assert len(choice.grid) == 34
    assert choice.grid[0] == pytest.approx(1e-10 * s_max, rel=1e-9)
    assert choice.grid[-1] == pytest.approx(10 * s_max, rel=1e-9)
    reference = [_dense_cplst(X, Y, 3, lam)[1] for lam in choice.grid]
    np.testing.assert_allclose(choice.scores, reference, rtol=1e-7)
    assert choice.value == choice.grid[int(np.argmin(reference))]
    Z, _ = _dense_cplst(X, Y, 3, choice.value)
    np.testing.assert_allclose(model.W_ @ model.H_.T, Z, rtol=1e-7, atol=1e-10)
    explicit = CPLST(rank=3, l2_reg=choice.value).fit(X, Y)
    assert explicit.auto_ == {}
    np.testing.assert_allclose(explicit.W_ @ explicit.H_.T, Z, rtol=1e-7, atol=1e-10)
    np.testing.assert_allclose(model.mean_, Y.toarray().mean(axis=0), rtol=1e-14)


def test_closed_form_status_and_shapes():
    X, Y = _problem(2)
    for l2_reg in ("auto", 0.5):
        model = CPLST(rank=3, l2_reg=l2_reg).fit(X, Y)
        assert model.n_iter_ == 1 and model.converged_ is True
        assert model.rank_ == 3 and model.n_features_in_ == 6
        assert model.W_.shape == (6, 3) and model.H_.shape == (7, 3)
        assert model.eigenvalues_.shape == (3,)


def test_the_top_eigenvectors_of_the_symmetrised_matrix_in_decreasing_order():
    X, Y = _problem(3)
    Xd, Yd = X.toarray(), Y.toarray()
    Yc = Yd - Yd.mean(axis=0)
    lam = 0.4
    M = Yc.T @ Xd @ np.linalg.solve(Xd.T @ Xd + lam * np.eye(6), Xd.T @ Yc)
    evals = np.linalg.eigvalsh(M)[::-1]
    for rank in (1, 4, 7):
        model = CPLST(rank=rank, l2_reg=lam).fit(X, Y)
        np.testing.assert_allclose(model.eigenvalues_, evals[:rank], rtol=1e-10, atol=1e-12)
        np.testing.assert_allclose(M @ model.H_, model.H_ * model.eigenvalues_, atol=1e-10)


def test_size_limits_are_inclusive_and_each_message_names_its_sizes():
    """The Gram matrix is of order min(n_samples, n_features): a set with more features than
    the limit runs when its rows are fewer (the n x n Gram); n_labels x n_labels and
    n_features x n_labels are bounded too."""
    model = CPLST()
    limit = cplst_module.DENSE_MAX
    ok = [FitContext(n_samples=10, n_features=limit, n_labels=3),
          FitContext(n_samples=10, n_features=3, n_labels=limit),
          FitContext(n_samples=limit, n_features=limit + 1, n_labels=3),
          FitContext(n_samples=10, n_features=limit * 100, n_labels=limit // 100)]
    assert [model.skip(c) for c in ok] == [None] * 4
    assert model.skip(FitContext(n_samples=10, n_features=5, n_labels=limit + 1)) == (
        f"cplst needs a dense n_labels x n_labels matrix; n_labels={limit + 1} exceeds {limit}")
    assert model.skip(FitContext(n_samples=limit + 1, n_features=limit + 2, n_labels=3)) == (
        f"cplst needs a dense Gram matrix of order min(n_samples, n_features); "
        f"n_samples={limit + 1} and n_features={limit + 2} both exceed {limit}")
    assert model.skip(FitContext(n_samples=10, n_features=limit * 100 + 1,
                                 n_labels=limit // 100)) == (
        f"cplst needs dense n_features x n_labels matrices; n_features={limit * 100 + 1} "
        f"x n_labels={limit // 100} exceeds {limit}^2 entries")
    # missing labels are the first reason, whatever the size
    assert model.skip(FitContext(n_samples=10, n_features=5, n_labels=limit + 1,
                                 observed_ratio=0.5)) == "cplst does not support missing labels"


@pytest.mark.parametrize("l2_reg", [0.0, 0.7])
def test_a_fit_with_fewer_rows_than_features_never_forms_the_feature_gram(monkeypatch,
                                                                           l2_reg):
    """With n < d a fixed penalty solves with XX' (n x n): the same model as with X'X."""
    X, Y = _problem(11, n=12, d=30, L=7)
    import mlx.methods.cplst as module

    real = module.gram
    orders = []

    def watched(A, rows=False):
        G = real(A, rows=rows)
        orders.append(G.shape[0])
        return G

    monkeypatch.setattr(module, "gram", watched)
    model = CPLST(rank=3, l2_reg=l2_reg).fit(X, Y)
    assert orders == [12]
    Xd, Yd = X.toarray(), Y.toarray()
    Yc = Yd - Yd.mean(axis=0)
    A = np.linalg.pinv(Xd.T @ Xd + l2_reg * np.eye(30)) @ Xd.T @ Yc   # the d x d route
    evals, evecs = np.linalg.eigh(Yc.T @ Xd @ A)
    V = evecs[:, np.argsort(evals)[::-1][:3]]
    np.testing.assert_allclose(model.W_ @ model.H_.T, A @ V @ V.T, atol=1e-9)


def test_a_partial_mask_is_refused_with_the_full_message():
    X, Y = _problem(9)
    partial = sp.csr_matrix(np.eye(*Y.shape))
    with pytest.raises(ValueError, match=r"^CPLST does not support missing labels: observed must "
                                         r"be None or mark every entry of Y$"):
        CPLST(rank=2, l2_reg=0.3).fit(X, Y, observed=partial)


@pytest.mark.parametrize("n,d", [(40, 8), (12, 30)])               # X'X and XX' routes
def test_labels_positive_in_no_training_row_or_in_all_score_their_mean_exactly(n, d):
    """Their centred column is 0, so is their row of every eigenvector with a non-zero
    eigenvalue; the eigensolver's rounding noise there (1e-16) must not rank them among
    themselves: they score exactly 0 (never positive) or 1 (always)."""
    rng = np.random.default_rng(5)
    X = sp.csr_matrix(rng.normal(size=(n, d)))
    Y = (rng.random((n, 9)) < 0.3).astype(float)
    Y[:, [2, 5]] = 0.0
    Y[:, 7] = 1.0
    model = CPLST(rank=4, l2_reg=0.5).fit(X, sp.csr_matrix(Y))
    assert not model.H_[[2, 5, 7]].any()
    scores = model.decision_function(sp.csr_matrix(rng.normal(size=(6, d))))
    assert np.array_equal(scores[:, [2, 5]], np.zeros((6, 2)))
    assert np.array_equal(scores[:, 7], np.ones(6))
    assert np.abs(scores[:, [0, 1, 3]]).max() > 1e-3              # the others are fitted
