"""BR: ridge vs a dense reference, liblinear vs an independent minimiser, missing-label and
untrained-label rules, determinism over threads, and a bibtex check (the shared method contract
is checked in test_common.py)."""

import os
from pathlib import Path

import numpy as np
import pytest
import scipy.optimize as so
import scipy.sparse as sp
from liblinear.liblinearutil import train as liblinear_train
from scipy.special import expit
from scipy.stats import rankdata

from mlx.methods import br as br_module
from mlx.methods.br import BR

LOSSES = ["squared", "logistic", "squared_hinge"]


def _problem(seed=0, n=60, d=9, L=6, density=0.4, positive=0.3, ratio=None):
    rng = np.random.default_rng(seed)
    X = sp.random(n, d, density=density, random_state=seed, format="csr",
                  data_rvs=lambda m: rng.normal(size=m))
    Y = sp.csr_matrix((rng.random((n, L)) < positive).astype(float))
    observed = None
    if ratio is not None:
        observed = sp.csr_matrix((rng.random((n, L)) < ratio).astype(float))
        Y = Y.multiply(observed).tocsr()                          # positives only inside Omega
    return X, Y, observed


def _design(X, bias):
    Xd = X.toarray()
    if bias >= 0:
        Xd = np.hstack([Xd, np.full((Xd.shape[0], 1), float(bias))])
    return Xd


def _omega(Y, observed):
    return np.ones(Y.shape, bool) if observed is None else observed.toarray() != 0


def _ridge_reference(X, Y, observed, l2_reg, bias):
    """One dense solve per label on its observed rows (slow and obvious)."""
    Xd, T, omega = _design(X, bias), Y.toarray() > 0, _omega(Y, observed)
    W = np.zeros((Xd.shape[1], Y.shape[1]))
    for j in range(Y.shape[1]):
        A = Xd[omega[:, j]]
        W[:, j] = np.linalg.solve(A.T @ A + l2_reg * np.eye(A.shape[1]),
                                  A.T @ T[omega[:, j], j].astype(float))
    return W


def _primal(w, A, t, C, loss):
    """liblinear's primal objective and gradient: C sum loss(t_i a_i'w) + ||w||^2 / 2."""
    z = t * (A @ w)
    if loss == "logistic":
        return C * np.logaddexp(0.0, -z).sum() + 0.5 * w @ w, -C * A.T @ (t * expit(-z)) + w
    h = np.maximum(0.0, 1.0 - z)
    return C * np.sum(h ** 2) + 0.5 * w @ w, -2.0 * C * A.T @ (t * h) + w


def _primal_reference(X, Y, observed, C, bias, loss):
    Xd, T, omega = _design(X, bias), Y.toarray() > 0, _omega(Y, observed)
    W = np.zeros((Xd.shape[1], Y.shape[1]))
    for j in range(Y.shape[1]):
        rows = omega[:, j]
        t = np.where(T[rows, j], 1.0, -1.0)
        res = so.minimize(_primal, np.zeros(Xd.shape[1]), args=(Xd[rows], t, C, loss),
                          jac=True, method="L-BFGS-B",
                          options={"gtol": 1e-12, "ftol": 1e-15, "maxiter": 10000})
        W[:, j] = res.x
    return W


def _trained(model):
    keep = np.ones(model.W_.shape[1], bool)
    keep[model.untrained_labels_] = False
    return keep


# ---------------------------------------------------------------------------
# protocol
# ---------------------------------------------------------------------------

def test_default_parameters():
    assert BR().get_params() == {"C": "auto", "bias": -1.0, "eps": 0.01, "l2_reg": "auto",
                                 "loss": "auto", "n_jobs": 1, "random_state": None,
                                 "task": "multilabel"}


@pytest.mark.parametrize("bias", [-1.0, 0.7])
@pytest.mark.parametrize("l2_reg", [0.0, 0.3])
def test_regression_is_ridge_on_the_real_targets(bias, l2_reg):
    rng = np.random.default_rng(3)
    X = rng.random((40, 6))
    T = X @ rng.standard_normal((6, 2)) + 5.0 + 0.1 * rng.standard_normal((40, 2))
    model = BR(loss="squared", l2_reg=l2_reg, bias=bias, task="regression")
    model.fit(sp.csr_matrix(X), T)
    Xb = np.hstack([X, np.full((40, 1), bias)]) if bias >= 0 else X
    W = np.linalg.lstsq(Xb.T @ Xb + l2_reg * np.eye(Xb.shape[1]), Xb.T @ T, rcond=None)[0]
    np.testing.assert_allclose(model.decision_function(sp.csr_matrix(X)), Xb @ W, atol=1e-8)
    # values are targets, not labels: binarising them would give a useless model
    assert np.abs(model.decision_function(sp.csr_matrix(X)) - T).mean() < 1.0  # 0/1: about 4


def test_regression_needs_the_squared_loss_and_full_targets():
    from mlx.methods.base import FitContext, InvalidParameterError

    X, T = sp.csr_matrix(np.eye(3)), np.ones((3, 1))
    assert BR(loss="logistic").skip(FitContext(task="regression")) == \
        "br with loss='logistic' does not handle regression tasks (loss='squared' does)"
    assert BR(loss="squared").skip(FitContext(task="regression")) is None
    with pytest.raises(InvalidParameterError, match="a regression task needs loss='squared'"):
        BR(loss="logistic", task="regression").fit(X, T)
    with pytest.raises(ValueError, match="a regression task has no missing-label mask"):
        BR(loss="squared", task="regression").fit(X, T, observed=sp.csr_matrix(np.eye(3, 1)))


@pytest.mark.parametrize("loss, threshold", [("squared", 0.5), ("logistic", 0.0),
                                             ("squared_hinge", 0.0)])
def test_threshold_follows_the_target_encoding(loss, threshold):
    assert BR(loss=loss).threshold == threshold


# ---------------------------------------------------------------------------
# squared loss: exact ridge
# ---------------------------------------------------------------------------

@pytest.mark.parametrize("shape", [(70, 9), (25, 40)], ids=["n>d", "n<d"])
@pytest.mark.parametrize("ratio", [None, 0.15, 0.7], ids=["full", "obs15", "obs70"])
@pytest.mark.parametrize("bias", [-1.0, 1.5], ids=["no-bias", "bias"])
def test_ridge_matches_dense_reference(shape, ratio, bias):
    n, d = shape
    X, Y, observed = _problem(seed=1, n=n, d=d, L=7, ratio=ratio)
    model = BR(loss="squared", l2_reg=0.7, bias=bias).fit(X, Y, observed=observed)
    expected = _ridge_reference(X, Y, observed, 0.7, bias)
    keep = _trained(model)
    assert model.W_.shape == (d + (bias >= 0), 7)
    np.testing.assert_allclose(model.W_[:, keep], expected[:, keep], rtol=1e-8,
                               atol=1e-10 * np.abs(expected).max())
    assert model.converged_


@pytest.mark.parametrize("ratio", [None, 0.5])
def test_ridge_iterative_routes_match_dense_reference(monkeypatch, ratio):
    # A tiny dense-size limit sends full labels to block CG (Jacobi preconditioner) and
    # missing labels with |Omega_j| > 4 to it too; blocks of 2 labels run on 2 threads.
    monkeypatch.setattr(br_module, "_DENSE_MAX", 4)
    monkeypatch.setattr(br_module, "_CG_BLOCK", 2)
    X, Y, observed = _problem(seed=2, n=40, d=30, L=5, ratio=ratio)
    model = BR(loss="squared", l2_reg=0.5, bias=1.0, n_jobs=2).fit(X, Y, observed=observed)
    expected = _ridge_reference(X, Y, observed, 0.5, 1.0)
    keep = _trained(model)
    np.testing.assert_allclose(model.W_[:, keep], expected[:, keep], rtol=1e-7,
                               atol=1e-9 * np.abs(expected).max())
    assert model.converged_
    assert np.all(model.n_iter_[keep] > 0)


def test_ridge_with_missing_labels_uses_cg_for_well_observed_labels():
    # |Omega_j| > n_features: preconditioned block CG; |Omega_j| <= n_features: dual Cholesky.
    X, Y, observed = _problem(seed=3, n=200, d=12, L=4, ratio=0.5)
    omega, T = observed.toarray(), Y.toarray()
    omega[:, 0] = 0
    omega[:8, 0] = 1                                              # label 0: 8 rows -> dual
    T[0, 0] = 1
    Y, observed = sp.csr_matrix(T * omega), sp.csr_matrix(omega)
    model = BR(loss="squared", l2_reg=0.3).fit(X, Y, observed=observed)
    np.testing.assert_allclose(model.W_, _ridge_reference(X, Y, observed, 0.3, -1), rtol=1e-8,
                               atol=1e-12)
    assert model.n_iter_[0] == 0 and np.all(model.n_iter_[1:] > 0)


@pytest.mark.parametrize("shape, ratio", [((30, 8), None), ((12, 30), None), ((30, 8), 0.5)])
def test_ridge_without_penalty_is_the_minimum_norm_least_squares_solution(shape, ratio):
    n, d = shape
    X, Y, observed = _problem(seed=4, n=n, d=d, L=4, ratio=ratio)
    X = sp.csr_matrix(X.toarray()[:, [0, 1, 1, *range(2, d - 1)]])   # rank deficient
    model = BR(loss="squared", l2_reg=0.0).fit(X, Y, observed=observed)
    omega, T = _omega(Y, observed), Y.toarray() > 0
    for j in np.flatnonzero(_trained(model)):
        A = X.toarray()[omega[:, j]]
        expected = np.linalg.lstsq(A, T[omega[:, j], j].astype(float), rcond=None)[0]
        np.testing.assert_allclose(model.W_[:, j], expected, rtol=1e-7, atol=1e-9)


def test_ridge_full_labels_is_closed_form():
    X, Y, _ = _problem()
    model = BR(loss="squared").fit(X, Y)
    assert model.converged_ and not model.n_iter_.any()


# ---------------------------------------------------------------------------
# logistic and squared hinge: liblinear primal Newton
# ---------------------------------------------------------------------------

@pytest.mark.parametrize("loss", ["logistic", "squared_hinge"])
@pytest.mark.parametrize("bias", [-1.0, 0.5], ids=["no-bias", "bias"])
@pytest.mark.parametrize("ratio", [None, 0.6], ids=["full", "obs60"])
def test_liblinear_minimises_the_primal_objective(loss, bias, ratio):
    X, Y, observed = _problem(seed=5, n=50, d=7, L=4, ratio=ratio)
    model = BR(loss=loss, C=2.0, bias=bias, eps=1e-8).fit(X, Y, observed=observed)
    expected = _primal_reference(X, Y, observed, 2.0, bias, loss)
    keep = _trained(model)
    np.testing.assert_allclose(model.W_[:, keep], expected[:, keep], rtol=1e-4,
                               atol=1e-6 * np.abs(expected).max())
    assert model.converged_
    assert np.all(model.n_iter_[keep] > 0) and not model.n_iter_[~keep].any()


@pytest.mark.parametrize("loss, solver", [("logistic", 0), ("squared_hinge", 2)])
@pytest.mark.parametrize("ratio", [None, 0.5], ids=["full", "obs50"])
def test_liblinear_weights_equal_plain_liblinear_training(loss, solver, ratio):
    X, Y, observed = _problem(seed=6, n=50, d=8, L=4, ratio=ratio)
    model = BR(loss=loss, C=0.5, bias=1.0, eps=0.001).fit(X, Y, observed=observed)
    omega, T = _omega(Y, observed), Y.toarray() > 0
    for j in np.flatnonzero(_trained(model)):
        rows = np.flatnonzero(omega[:, j])
        reference = liblinear_train(np.where(T[rows, j], 1.0, -1.0), X[rows],
                                    f"-s {solver} -c 0.5 -e 0.001 -B 1 -q")
        w = np.array([reference.get_decfun_coef(i + 1) for i in range(8)]
                     + [reference.get_decfun_bias()])
        np.testing.assert_allclose(model.W_[:, j], w, rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("loss", ["logistic", "squared_hinge"])
def test_label_positive_on_every_observed_row_is_trained_exactly(loss):
    # liblinear sees a single class; it trains that class against all +1 targets, which is the
    # label's objective, and the weights must come out with the right sign.
    X, Y, _ = _problem(seed=7, n=40, d=6, L=3)
    T = Y.toarray()
    T[:, 1] = 1
    Y = sp.csr_matrix(T)
    model = BR(loss=loss, C=1.0, eps=1e-8).fit(X, Y)
    assert 1 not in model.untrained_labels_
    expected = _primal_reference(X, Y, None, 1.0, -1, loss)
    np.testing.assert_allclose(model.W_[:, 1], expected[:, 1], rtol=1e-4, atol=1e-8)


# ---------------------------------------------------------------------------
# missing labels, untrained labels
# ---------------------------------------------------------------------------

@pytest.mark.parametrize("loss", LOSSES)
@pytest.mark.parametrize("bias", [-1.0, 1.0])
def test_labels_without_observed_positive_score_below_everything(loss, bias):
    X, Y, observed = _problem(seed=9, n=50, L=6, ratio=0.6)
    T, omega = Y.toarray(), observed.toarray()
    T[:, 1] = 0                                                   # never positive
    omega[:, 4] = 0                                               # never observed
    T[:, 3], omega[7, 3] = 0, 0
    T = T * omega
    T[7, 3] = 1                                                   # positive only outside Omega
    Y, observed = sp.csr_matrix(T), sp.csr_matrix(omega)
    model = BR(loss=loss, bias=bias).fit(X, Y, observed=observed)
    np.testing.assert_array_equal(model.untrained_labels_, [1, 3, 4])
    assert not model.W_[:, [1, 3, 4]].any()
    scores = model._decision_function(X)         # the model's own, before auto's frequencies
    assert np.isfinite(scores).all()
    real = scores[:, [0, 2, 5]]
    expected = np.minimum(real.min(axis=1), model.threshold) - 1.0
    for j in (1, 3, 4):
        np.testing.assert_array_equal(scores[:, j], expected)
    for scores in (scores, model.decision_function(X)):        # and with them
        assert np.all(scores[:, [1, 3, 4]].max(axis=1) < scores[:, [0, 2, 5]].min(axis=1))
        assert np.all(scores[:, [1, 3, 4]] < model.threshold)    # predicted negative
    batches = np.vstack([model.decision_function(X[i:i + 7]) for i in range(0, X.shape[0], 7)])
    np.testing.assert_array_equal(batches, scores)                # the rule is row-local


@pytest.mark.parametrize("loss", LOSSES)
def test_no_trained_label_at_all_scores_threshold_minus_one(loss):
    X, _, _ = _problem()
    model = BR(loss=loss).fit(X, sp.csr_matrix((X.shape[0], 3)))
    np.testing.assert_array_equal(model.untrained_labels_, [0, 1, 2])
    np.testing.assert_array_equal(model.decision_function(X),
                                  np.full((X.shape[0], 3), model.threshold - 1.0))


# ---------------------------------------------------------------------------
# determinism over threads, refitting
# ---------------------------------------------------------------------------

@pytest.mark.parametrize("loss", LOSSES)
@pytest.mark.parametrize("ratio", [None, 0.5])
def test_fit_is_deterministic_for_any_n_jobs(monkeypatch, loss, ratio):
    monkeypatch.setattr(br_module, "_CG_BLOCK", 2)                # several blocks to share out
    X, Y, observed = _problem(seed=10, n=80, d=10, L=7, ratio=ratio)
    fits = [BR(loss=loss, n_jobs=jobs, bias=1.0).fit(X, Y, observed=observed)
            for jobs in (1, 1, 3)]
    for other in fits[1:]:
        np.testing.assert_array_equal(fits[0].W_, other.W_)
        np.testing.assert_array_equal(fits[0].n_iter_, other.n_iter_)


def test_refit_starts_from_scratch():
    X, Y, _ = _problem(seed=14)
    model = BR(loss="squared", bias=1.0).fit(X, Y)
    model.set_params(bias=-1.0).fit(X, Y[:, :2])
    assert model.W_.shape == (X.shape[1], 2)
    np.testing.assert_array_equal(model.W_, BR(loss="squared").fit(X, Y[:, :2]).W_)


# ---------------------------------------------------------------------------
# real data
# ---------------------------------------------------------------------------

def _bibtex_on_data_path() -> bool:
    from mlx.data.catalog import find_file

    dirs = [Path(p) for p in os.environ.get("MLX_DATA_PATH", "").split(os.pathsep) if p]
    return bool(dirs) and all(find_file(f"bibtex/bibtex-{part}.arff.gz", dirs) is not None
                              for part in ("train", "test"))


def _p_at_1(Y, scores):
    return float(np.mean([Y[i, int(np.argmax(scores[i]))] > 0 for i in range(Y.shape[0])]))


def _mean_auc(Y, scores):
    """Per-instance AUC, ties counting 1/2; rows without positives or negatives skipped."""
    truth = Y.toarray() > 0
    values = []
    for s, t in zip(scores, truth):
        n_pos = t.sum()
        if 0 < n_pos < t.size:
            values.append((rankdata(s)[t].sum() - n_pos * (n_pos + 1) / 2)
                          / (n_pos * (t.size - n_pos)))
    return float(np.mean(values))


@pytest.mark.slow
@pytest.mark.data
def test_bibtex_matches_published_liblinear_figures():
    if not _bibtex_on_data_path():
        pytest.skip("bibtex not on MLX_DATA_PATH")
    from mlx.data.catalog import load_split, resolve_dataset

    split = load_split(resolve_dataset("bibtex", source=None))
    train, test = split.train, split.test
    logistic = BR(loss="logistic", C=1.0).fit(train.X, train.Y)
    scores = logistic.decision_function(test.X)
    assert _p_at_1(test.Y, scores) == pytest.approx(0.631, abs=0.005)
    assert _mean_auc(test.Y, scores) == pytest.approx(0.936, abs=0.002)
    assert logistic.converged_
    hinge = BR(loss="squared_hinge", C=1.0).fit(train.X, train.Y)
    assert _p_at_1(test.Y, hinge.decision_function(test.X)) == pytest.approx(0.565, abs=0.005)
