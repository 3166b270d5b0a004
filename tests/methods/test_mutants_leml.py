"""LEML: properties the older tests left open (found by mutation testing). Every outer iteration
is one W-step and then one H-step from the current iterate, checked against slow dense
references of both subproblems; one inner iteration of CG and of TRON is the step their
algorithms define; the start, the stopping rule and the solver routes are the documented ones."""

import numpy as np
import pytest
import scipy.sparse as sp

from mlx.methods import leml as leml_module
from mlx.methods.base import FitContext, InvalidParameterError
from mlx.methods.bcs import BCS
from mlx.methods.cplst import CPLST
from mlx.methods.leml import LEML, clear_gram_cache, gram_eigh
from tests.conftest import random_multilabel, tolerance_at_equality

# value, first and second derivative in the score, written from their definitions
_LOSSES = {
    "squared": (lambda y, s: 0.5 * (y - s) ** 2, lambda y, s: s - y,
                lambda y, s: np.ones_like(s)),
    "logistic": (lambda y, s: np.log1p(np.exp(-y * s)), lambda y, s: -y / (1 + np.exp(y * s)),
                 lambda y, s: 1 / ((1 + np.exp(y * s)) * (1 + np.exp(-y * s)))),
    "squared_hinge": (lambda y, s: np.maximum(0, 1 - y * s) ** 2,
                      lambda y, s: -2 * y * np.maximum(0, 1 - y * s),
                      lambda y, s: 2.0 * (y * s < 1)),
}


def _problem(seed=0, n=30, d=5, L=6, mask=None):
    return random_multilabel(seed, n, d, L, positive_rate=0.35, mask=mask)


class _Dense:
    """The LEML objective on dense arrays, and its two convex subproblems (tests only)."""

    def __init__(self, X, Y, observed, loss, lam):
        self.X = X.toarray()
        positive = Y.toarray() > 0
        self.T = positive.astype(float) if loss == "squared" else 2.0 * positive - 1.0
        self.omega = (np.ones(Y.shape) if observed is None else (observed.toarray() != 0) * 1.0)
        self.value, self.d1, self.d2 = _LOSSES[loss]
        self.squared = loss == "squared"
        self.lam = lam

    def objective(self, W, H):
        S = self.X @ W @ H.T
        return (np.sum(self.omega * self.value(self.T, S))
                + 0.5 * self.lam * (np.sum(W * W) + np.sum(H * H)))

    # the W subproblem (P = X, F = W, Q = H) and the H subproblem (P = I, F = H, Q = X W)
    def _parts(self, which, other):
        if which == "W":
            return self.X, other, self.T, self.omega
        return np.eye(self.T.shape[1]), self.X @ other, self.T.T, self.omega.T

    def sub(self, which, other):
        P, Q, T, om = self._parts(which, other)
        lam, value, d1, d2 = self.lam, self.value, self.d1, self.d2

        def f(F):
            return np.sum(om * value(T, P @ F @ Q.T)) + 0.5 * lam * np.sum(F * F)

        def grad(F):
            return P.T @ (om * d1(T, P @ F @ Q.T)) @ Q + lam * F

        def hessp(F, V):
            return P.T @ (om * d2(T, P @ F @ Q.T) * (P @ V @ Q.T)) @ Q + lam * V

        return f, grad, hessp

    def exact(self, which, other, F0):
        """The minimiser of a subproblem: the minimum-norm solution of the normal equations
        for squared loss, Newton's method with backtracking otherwise."""
        f, grad, hessp = self.sub(which, other)
        shape = F0.shape

        def hessian(F):
            E = np.eye(F0.size)
            return np.column_stack([hessp(F, E[i].reshape(shape)).ravel()
                                    for i in range(F0.size)])

        if self.squared:
            Z = np.zeros(shape)
            return (np.linalg.pinv(hessian(Z)) @ -grad(Z).ravel()).reshape(shape)
        F = F0.copy()
        for _ in range(100):
            g = grad(F)
            if np.linalg.norm(g) < 1e-13:
                break
            step = np.linalg.solve(hessian(F), -g.ravel()).reshape(shape)
            t = 1.0
            while f(F + t * step) > f(F) + 1e-4 * t * np.vdot(g, step) and t > 1e-10:
                t /= 2
            F = F + t * step
        return F

    def alternate(self, H, n_iter):
        """``n_iter`` exact W-steps and H-steps from ``W = 0`` and ``H``: ``(W, H, objectives)``."""
        W, objective = np.zeros((self.X.shape[1], H.shape[1])), []
        for _ in range(n_iter):
            W = self.exact("W", H, W)
            H = self.exact("H", W, H)
            objective.append(self.objective(W, H))
        return W, H, objective

    def cg_step(self, which, other, F):
        """One conjugate-gradient iteration from ``F``: the steepest-descent step with exact
        line search on the quadratic subproblem."""
        _, grad, hessp = self.sub(which, other)
        r = -grad(F)
        return F + np.vdot(r, r) / np.vdot(r, hessp(F, r)) * r

    def tron_step(self, which, other, F):
        """One TRON Newton step whose inner CG may take one iteration: ``-min(alpha, 1) g``
        (the Cauchy step, cut at the first radius ``||g||``), which must be accepted."""
        f, grad, hessp = self.sub(which, other)
        g = grad(F)
        alpha = np.vdot(g, g) / np.vdot(g, hessp(F, g))
        s = -min(alpha, 1.0) * g
        predicted = -(np.vdot(g, s) + 0.5 * np.vdot(s, hessp(F, s)))
        assert f(F) - f(F + s) > 0.25 * predicted        # accepted: the test stays in its case
        return F + s


def _random_start(seed, L, k, observed):
    H = np.random.default_rng(seed).standard_normal((L, k)) / np.sqrt(k)
    if observed is not None:
        H[np.diff(sp.csc_matrix(observed).indptr) == 0] = 0.0
    return H


CASES = [("squared", None, "eig"), ("squared", None, "cg"), ("squared", None, "tron"),
         ("squared", 0.6, "cg"), ("squared", 0.6, "tron"),
         ("logistic", None, "tron"), ("logistic", 0.6, "tron"),
         ("squared_hinge", None, "tron"), ("squared_hinge", 0.6, "tron")]


@pytest.mark.parametrize("loss,mask,w_solver", CASES)
def test_each_outer_iteration_is_an_exact_w_step_then_an_exact_h_step(loss, mask, w_solver):
    X, Y, observed = _problem(1, mask=mask)
    if observed is not None:                                      # one label never observed
        observed = sp.csr_matrix(observed.toarray() * (np.arange(6) != 4))
    ref = _Dense(X, Y, observed, loss, 0.3)
    model = LEML(rank=2, l2_reg=0.3, loss=loss, max_iter=3, tol=0, w_solver=w_solver,
                 init="random", inner_tol=1e-12, inner_max_iter=500,
                 random_state=5).fit(X, Y, observed=observed)
    W, H, objective = ref.alternate(_random_start(5, 6, 2, observed), 3)
    rtol = 1e-5 if w_solver == "tron" else 1e-7       # TRON stops on negligible progress
    np.testing.assert_allclose(model.W_, W, rtol=rtol, atol=rtol)
    np.testing.assert_allclose(model.H_, H, rtol=rtol, atol=rtol)
    np.testing.assert_allclose(model.objective_, objective,
                               rtol=1e-9 if w_solver == "eig" else 1e-7)
    assert model.n_iter_ == 3 and not model.converged_ and model.w_solver_ == w_solver
    if mask is not None:
        np.testing.assert_array_equal(model.H_[4], 0.0)
    if w_solver == "eig":                                         # both steps closed-form
        assert model.n_inner_iter_ == [(0, 0)] * 3


@pytest.mark.parametrize("l2_reg", [0.0, 0.3])
@pytest.mark.parametrize("mask", [None, 0.6])
def test_svd_start_spans_the_top_right_singular_vectors_of_the_observed_positives(mask, l2_reg):
    # W H' after a W-step does not depend on the basis of the start's column space, so the
    # sign of each singular vector does not matter; their choice does.
    X, Y, observed = _problem(2, mask=mask)
    model = LEML(rank=2, l2_reg=l2_reg, max_iter=1, tol=0, w_solver="cg" if mask else "eig",
                 inner_tol=1e-13, inner_max_iter=500).fit(X, Y, observed=observed)
    ref = _Dense(X, Y, observed, "squared", l2_reg)
    P = ref.omega * (Y.toarray() > 0)
    H = np.linalg.svd(P)[2][:2].T
    W = ref.exact("W", H, np.zeros((5, 2)))
    H = ref.exact("H", W, H)
    np.testing.assert_allclose(model.W_ @ model.H_.T, W @ H.T, rtol=1e-6, atol=1e-9)
    assert model.objective_[0] == pytest.approx(ref.objective(W, H), rel=1e-9)


@pytest.mark.parametrize("mask", [None, 0.6])
def test_sparse_svd_start_spans_the_same_space_as_the_dense_one(monkeypatch, mask):
    X, Y, observed = _problem(3, n=40, L=9, mask=mask)
    params = dict(rank=2, l2_reg=0.3, max_iter=2, tol=0, w_solver="cg", inner_tol=1e-13,
                  inner_max_iter=500, random_state=0)
    dense = LEML(**params).fit(X, Y, observed=observed)
    monkeypatch.setattr(leml_module, "_DENSE_SVD_MAX_LABELS", 8)
    sparse = LEML(**params).fit(X, Y, observed=observed)
    np.testing.assert_allclose(sparse.W_ @ sparse.H_.T, dense.W_ @ dense.H_.T, rtol=1e-6,
                               atol=1e-9)
    assert not np.array_equal(sparse.W_, dense.W_)                # another route was taken


def test_random_state_moves_the_start_only_on_the_sparse_svd_route(monkeypatch):
    """Up to ``_DENSE_SVD_MAX_LABELS`` labels, or at a rank of at least ``min(n, L) - 1``, the
    start is a dense eigendecomposition, whatever ``random_state`` is."""
    X, Y, _ = _problem(4, n=6, L=9)
    params = dict(l2_reg=0.3, max_iter=1, w_solver="cg", inner_tol=1e-13, inner_max_iter=500)

    def fits(rank):
        return [LEML(rank=rank, random_state=seed, **params).fit(X, Y).W_ for seed in (0, 1)]

    monkeypatch.setattr(leml_module, "_DENSE_SVD_MAX_LABELS", 9)
    a, b = fits(2)
    np.testing.assert_array_equal(a, b)
    monkeypatch.setattr(leml_module, "_DENSE_SVD_MAX_LABELS", 8)
    a, b = fits(4)                                                # rank 4 < min(6, 9) - 1
    assert not np.array_equal(a, b)
    a, b = fits(5)                                                # rank 5 = min(6, 9) - 1
    np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("mask", [None, 0.6])
@pytest.mark.parametrize("scale", [1.0, 0.1])
def test_one_cg_iteration_is_a_steepest_descent_step_from_the_current_w(mask, scale):
    # At scale 0.1 the first exact line search steps past ||g||, TRON's first radius: the two
    # solvers' single steps differ there.
    X, Y, observed = _problem(5, mask=mask)
    X = X * scale
    model = LEML(rank=2, l2_reg=0.01, max_iter=2, tol=0, w_solver="cg", init="random",
                 inner_max_iter=1, random_state=1).fit(X, Y, observed=observed)
    ref = _Dense(X, Y, observed, "squared", 0.01)
    W, H = np.zeros((5, 2)), _random_start(1, 6, 2, observed)
    _, grad, hessp = ref.sub("W", H)
    g = grad(W)
    assert bool(np.vdot(g, g) / np.vdot(g, hessp(W, g)) > 1) is (scale < 1)   # first step
    for _ in range(2):
        W = ref.cg_step("W", H, W)
        H = ref.exact("H", W, H)
    np.testing.assert_allclose(model.W_, W, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(model.H_, H, rtol=1e-9, atol=1e-12)
    assert model.n_inner_iter_ == [(1, 0), (1, 0)]               # the H-step is closed-form


@pytest.mark.parametrize("loss,mask", [("squared", None), ("logistic", None),
                                       ("logistic", 0.6), ("squared_hinge", 0.6)])
def test_one_tron_step_with_one_cg_iteration_is_the_cauchy_step(loss, mask):
    X, Y, observed = _problem(6, mask=mask)
    model = LEML(rank=2, l2_reg=0.3, loss=loss, max_iter=2, tol=0, w_solver="tron",
                 init="random", inner_max_iter=1, inner_tol=1e-12,
                 random_state=2).fit(X, Y, observed=observed)
    ref = _Dense(X, Y, observed, loss, 0.3)
    W, H = np.zeros((5, 2)), _random_start(2, 6, 2, observed)
    for _ in range(2):
        W = ref.tron_step("W", H, W)
        H = ref.exact("H", W, H) if loss == "squared" else ref.tron_step("H", W, H)
    np.testing.assert_allclose(model.W_, W, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(model.H_, H, rtol=1e-9, atol=1e-12)
    h_steps = 0 if loss == "squared" else 1
    assert model.n_inner_iter_ == [(1, h_steps), (1, h_steps)]
    assert model.objective_[-1] == pytest.approx(ref.objective(W, H), rel=1e-10)


def test_closed_form_h_steps_record_no_inner_iterations():
    """``n_inner_iter_`` counts CG or TRON iterations, 0 for closed-form steps: the squared-loss
    H-step is closed-form with full and with missing labels alike."""
    X, Y, observed = _problem(5, mask=0.6)
    for mask in (None, observed):
        model = LEML(rank=2, l2_reg=0.3, max_iter=2, tol=0, w_solver="cg",
                     inner_max_iter=1).fit(X, Y, observed=mask)
        assert model.n_inner_iter_ == [(1, 0), (1, 0)]
    model = LEML(rank=2, l2_reg=0.3, loss="logistic", max_iter=2, tol=0,
                 inner_max_iter=1).fit(X, Y, observed=observed)
    assert model.n_inner_iter_ == [(1, 1), (1, 1)]


@pytest.mark.parametrize("loss,mask,w_solver", [
    ("squared", None, "cg"), ("squared", None, "tron"), ("squared", 0.6, "cg"),
    ("logistic", None, "tron"), ("logistic", 0.6, "tron")])
def test_inner_solvers_stop_at_the_first_gradient_below_inner_tol_of_its_norm_at_zero(
        loss, mask, w_solver):
    """The first W-step starts at W = 0; CG and TRON stop at the first iterate whose gradient
    is at most ``inner_tol`` times the norm at zero (W_ is the W-step's result: the H-step does
    not change W)."""
    X, Y, observed = _problem(7, mask=mask)
    _, grad, _ = _Dense(X, Y, observed, loss, 0.3).sub("W", _random_start(0, 6, 2, observed))
    g0 = np.linalg.norm(grad(np.zeros((5, 2))))

    def fit(inner_tol, inner_max_iter):
        return LEML(rank=2, l2_reg=0.3, loss=loss, max_iter=1, w_solver=w_solver,
                    inner_tol=inner_tol, inner_max_iter=inner_max_iter, init="random",
                    random_state=0).fit(X, Y, observed=observed)

    model = fit(0.02, 50)
    n = model.n_inner_iter_[0][0]
    assert 1 < n < 50
    assert np.linalg.norm(grad(model.W_)) <= 0.02 * g0
    assert np.linalg.norm(grad(fit(0.02, n - 1).W_)) > 0.02 * g0
    tight = fit(1e-14, 3)
    assert tight.n_inner_iter_[0][0] == 3 and np.linalg.norm(grad(tight.W_)) > 1e-14 * g0


def test_the_stopping_rule_is_the_first_relative_decrease_at_most_tol():
    X, Y, _ = _problem(8, n=50, L=8)
    params = dict(rank=3, l2_reg=0.01, w_solver="eig", init="random", random_state=0)
    J = LEML(max_iter=40, tol=0, **params).fit(X, Y).objective_
    drops = [(J[i - 1] - J[i]) / abs(J[i - 1]) for i in range(1, len(J))]
    assert drops[0] > drops[-1] > 0
    for tol in (drops[0] * 1.01, drops[0] * 0.99, drops[5] * 1.01, drops[5], drops[-1] / 2):
        # iteration i + 2 is the first whose decrease J[i] - J[i + 1] is small enough
        model = LEML(max_iter=40, tol=tol, **params).fit(X, Y)
        stop = next((i + 2 for i in range(len(drops)) if J[i] - J[i + 1] <= tol * abs(J[i])), None)
        n = stop if stop is not None else 40
        assert model.objective_ == J[:n] and model.n_iter_ == n
        assert model.converged_ is (stop is not None)
        assert len(model.n_inner_iter_) == n


def test_equal_relative_decrease_counts_as_converged():
    X, Y, _ = _problem(9)
    params = dict(rank=2, l2_reg=0.1, w_solver="eig", init="random", random_state=0)
    J = LEML(max_iter=2, tol=0, **params).fit(X, Y).objective_
    drop = J[0] - J[1]
    tol = tolerance_at_equality(drop, abs(J[0]))
    model = LEML(max_iter=5, tol=tol, **params).fit(X, Y)
    assert model.converged_ and model.n_iter_ == 2


def test_a_perfect_fit_has_objective_zero():
    # X = I with as many rows as labels: every 0/1 matrix is X W H' at rank L
    Y = sp.csr_matrix(np.array([[1, 0, 1], [0, 1, 1], [1, 1, 0], [0, 0, 1.0]]))
    X = sp.eye(4, format="csr")
    model = LEML(rank=3, l2_reg=0.0, max_iter=3, tol=0, w_solver="eig").fit(X, Y)
    assert 0.0 <= model.objective_[-1] < 1e-12
    assert model.n_iter_ == 3 and not model.converged_           # tol=0: every iteration runs
    np.testing.assert_allclose(model.decision_function(X), Y.toarray(), atol=1e-6)


def test_auto_w_solver_routes_by_loss_labels_and_feature_count(monkeypatch):
    X, Y, observed = _problem(10, mask=0.6)
    fit = dict(rank=2, l2_reg=0.3, max_iter=1)
    monkeypatch.setattr(leml_module, "EIG_MAX_FEATURES", 5)           # d = 5: at most
    assert LEML(**fit).fit(X, Y).w_solver_ == "eig"
    assert LEML(**fit).fit(X, Y, observed=observed).w_solver_ == "cg"
    assert LEML(loss="logistic", **fit).fit(X, Y).w_solver_ == "tron"
    assert LEML(loss="squared_hinge", **fit).fit(X, Y, observed=observed).w_solver_ == "tron"
    monkeypatch.setattr(leml_module, "EIG_MAX_FEATURES", 4)
    assert LEML(**fit).fit(X, Y).w_solver_ == "cg"


def test_features_exactly_as_large_dense_as_in_csr_are_made_dense():
    X = sp.csr_matrix(np.array([[0.0, 1.5, 0.0, -2.0]]))              # 32 bytes either way
    assert X.indices.dtype == np.int32
    assert X.data.nbytes + X.indices.nbytes + X.indptr.nbytes == 32
    dense = leml_module._dense_if_smaller(X)
    assert isinstance(dense, np.ndarray)
    np.testing.assert_array_equal(dense, X.toarray())
    wider = sp.csr_matrix(np.array([[0.0, 1.5, 0.0, -2.0, 0.0]]))
    assert leml_module._dense_if_smaller(wider) is wider


def test_gram_eigh_without_the_cache_neither_reads_nor_fills_it():
    clear_gram_cache()
    X, _, _ = _problem(11)
    fresh = gram_eigh(X, use_cache=False)
    cached = gram_eigh(X)
    assert cached is not fresh
    assert gram_eigh(X, use_cache=False) is not cached
    assert gram_eigh(X) is cached
    np.testing.assert_allclose(fresh.evals, cached.evals, rtol=1e-12)
    clear_gram_cache()


def test_fitted_attributes_of_an_explicit_fit():
    X, Y, observed = _problem(12, mask=0.6)
    model = LEML(rank=9, l2_reg=0.3, max_iter=2).fit(X, Y, observed=observed)
    assert model.auto_ == {}
    assert (model.rank_, model.n_features_in_, model.n_labels_) == (5, 5, 6)
    assert model.W_.shape == (5, 5) and model.H_.shape == (6, 5)
    assert model.W_.flags.c_contiguous and model.H_.flags.c_contiguous


def test_auto_l2_reg_is_chosen_on_the_documented_grid_and_fits_with_the_missing_labels():
    X, Y, observed = _problem(13, n=40, mask=0.6)
    T = Y.toarray()
    T[:, 3] = 1.0                                                 # positives ...
    observed = sp.csr_matrix(observed.toarray() * (np.arange(6) != 3))   # ... never observed
    model = LEML(rank=2, max_iter=3).fit(X, sp.csr_matrix(T), observed=observed)
    choice = model.auto_["l2_reg"]
    assert choice.grid[0] == pytest.approx(1e-4) and choice.grid[-1] == pytest.approx(1e4)
    assert choice.value in choice.grid
    np.testing.assert_array_equal(model.H_[3], 0.0)
    assert model.w_solver_ == "cg"                        # fitted with missing labels
    assert LEML(rank=2, max_iter=3, l2_reg=choice.value).fit(X, Y).auto_ == {}


@pytest.mark.parametrize("method", [LEML(rank=2, l2_reg=0.3, max_iter=1),
                                    CPLST(rank=2, l2_reg=0.3),
                                    BCS(rank=2, weight_precision=0.5)],
                         ids=lambda method: type(method).__name__)
def test_input_errors_name_the_method(method):
    name = type(method).__name__
    X, Y, _ = _problem(15)
    with pytest.raises(ValueError, match=rf"^{name}: X has 30 rows but Y has shape \(29, 6\); "):
        method.fit(X, Y[:29])
    method.fit(X, Y)
    with pytest.raises(ValueError, match=rf"^{name}: X has 4 features, but {name} is expecting 5 "
                                         r"features as input \(it was fitted with 5\)$"):
        method.decision_function(X[:, :4])


@pytest.mark.parametrize("rotated_max", [None, 0])
def test_row_side_eig_steps_are_the_exact_steps(monkeypatch, rotated_max):
    """Fewer rows than features beyond EIG_MAX_FEATURES: the W-steps from X X' are exact too
    (with ``V'X'Y`` kept, and without it)."""
    X, Y, _ = _problem(16, n=4, d=5)
    monkeypatch.setattr(leml_module, "EIG_MAX_FEATURES", 4)
    if rotated_max is not None:
        monkeypatch.setattr(leml_module, "_ROTATED_MAX_ENTRIES", rotated_max)
    clear_gram_cache()
    model = LEML(rank=2, l2_reg=0.3, max_iter=3, tol=0, init="random", random_state=5).fit(X, Y)
    clear_gram_cache()
    ref = _Dense(X, Y, None, "squared", 0.3)
    W, H, objective = ref.alternate(_random_start(5, 6, 2, None), 3)
    assert model.w_solver_ == "eig" and model.n_inner_iter_ == [(0, 0)] * 3
    np.testing.assert_allclose(model.W_, W, rtol=1e-8, atol=1e-10)
    np.testing.assert_allclose(model.H_, H, rtol=1e-8, atol=1e-10)
    np.testing.assert_allclose(model.objective_, objective, rtol=1e-9)


@pytest.mark.parametrize("w_solver,loss,observed_ratio", [
    ("auto", "squared", 1.0), ("auto", "logistic", 0.5), ("eig", "squared", 1.0),
    ("cg", "squared", 0.5), ("tron", "squared_hinge", 0.5)])
def test_check_context_accepts_a_w_solver_that_serves_the_cell(w_solver, loss, observed_ratio):
    method = LEML(w_solver=w_solver, loss=loss)
    assert method.check_context(FitContext(observed_ratio=observed_ratio)) is None


@pytest.mark.parametrize("w_solver,loss,observed_ratio,message", [
    ("eig", "squared", 0.999, "w_solver='eig' needs loss='squared' and fully observed labels; "
                              "got loss='squared' with missing labels. "
                              "Use 'auto', 'cg' or 'tron'."),
    ("eig", "logistic", 1.0, "w_solver='eig' needs loss='squared' and fully observed labels; "
                             "got loss='logistic' with full labels. Use 'auto', 'cg' or 'tron'."),
    ("cg", "squared_hinge", 1.0, "w_solver='cg' needs loss='squared' (got 'squared_hinge'); "
                                 "use 'tron' or 'auto'.")])
def test_a_w_solver_that_cannot_serve_the_cell_is_refused_before_and_at_fit(
        w_solver, loss, observed_ratio, message):
    method = LEML(w_solver=w_solver, loss=loss, l2_reg=0.3)
    with pytest.raises(InvalidParameterError) as refused:
        method.check_context(FitContext(observed_ratio=observed_ratio))
    assert str(refused.value) == message and refused.value.param == "w_solver"
    X, Y, observed = _problem(17, mask=None if observed_ratio == 1.0 else 0.6)
    with pytest.raises(InvalidParameterError) as refused:
        method.fit(X, Y, observed=observed)
    assert str(refused.value) == message


def test_defaults_are_the_documented_ones():
    assert LEML().get_params() == dict(rank=10, l2_reg="auto", loss="squared", max_iter=10,
                                       tol=1e-4, inner_max_iter=25, inner_tol=1e-3, init="svd",
                                       w_solver="auto", random_state=None)
