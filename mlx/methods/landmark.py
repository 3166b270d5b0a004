"""Supervised learning with (indefinite) similarity functions by landmarking (Kar and Jain 2012).

One method, ``landmark``, with four models: RegLand, RegLand-Sp, ORLand (Algorithm 1 with an
epsilon-insensitive, a sparse squared-loss and an ordinal EXC learner on the landmarked
features) and KR, the kernel-regression baseline of the paper's experiments. The similarity
functions live in :mod:`mlx.numerics.similarity`, Forward Greedy Selection in
:mod:`mlx.numerics.fgs`, the ORLand objective and its solver in :mod:`mlx.numerics.exc`.
"""

from __future__ import annotations

import logging
import math

import numpy as np
import scipy.sparse as sp

from mlx.methods._auto import fit_holdout, is_auto, log_grid
from mlx.methods._validation import check_n_features
from mlx.methods.base import (
    METHODS,
    BaseMethod,
    FitContext,
    InvalidParameterError,
    check_is_fitted,
)
from mlx.methods.table import (
    LANDMARK_OWNER,
    TABLES,
    landmark_check_context,
    landmark_check_n_landmarks,
    landmark_check_sparsity,
    landmark_skip,
)
from mlx.numerics.exc import exc_descent, exc_levels
from mlx.numerics.fgs import forward_greedy_selection
from mlx.numerics.similarity import (
    NonFiniteSimilarityError,
    mean_distance,
    nadaraya_watson,
    similarity,
)
from mlx.tasks.ordinal import nearest_level

__all__ = ["Landmark"]

log = logging.getLogger(__name__)

_OWNER = LANDMARK_OWNER
_MODELS = ("regland", "regland_sp", "orland", "kr")
_TASKS = ("regression", "ordinal")
_SVR_SOLVER = {"squared_epsilon_insensitive": 11, "epsilon_insensitive": 13}
"""liblinear ``-s`` codes: L2-loss SVR (primal trust-region Newton) and L1-loss SVR (dual
coordinate descent)."""
_SVR_TOL = {11: 1e-4, 13: 0.1}
"""liblinear's own default ``-e`` for those solvers."""
_EXC_TOL = 1e-4


# ----------------------------------------------------------------------------- RegLand (liblinear)
def _fit_svr(Z: np.ndarray, T: np.ndarray, *, solver: int, C: float, epsilon: float,
             tol: float, seed: int):
    """One liblinear SVR fit per column of ``T`` on the dense features ``Z``
    (:func:`mlx.methods._liblinear.train_columns`; ``-s 13`` is seeded with ``seed + j``).

    Returns ``(W, n_iter, converged)``: ``W`` of shape (m, n_targets); ``n_iter`` the
    iterations liblinear reports per target (Newton steps for ``-s 11``, coordinate-descent
    passes for ``-s 13``); ``converged`` of shape (n_targets,), False where liblinear stopped
    at its own iteration cap (which its binding does not let one raise) before ``tol``.
    """
    from mlx.methods._liblinear import train_columns

    fit = train_columns(sp.csr_matrix(Z), lambda j: (None, T[:, j]), T.shape[1],
                        solver=solver, C=C, eps=tol, p=epsilon, seed=seed)
    return fit.W, fit.n_iter, fit.converged


# ----------------------------------------------------------------------------- the method
@METHODS.register("landmark")
class Landmark(BaseMethod):
    r"""Learning with similarity functions by landmarking (Kar and Jain 2012, Algorithm 1).

    Landmarks ``l_1 .. l_d`` are ``d = n_landmarks`` training rows drawn uniformly without
    replacement with ``random_state`` (the paper's "double dipping", Appendix B: the same
    rows then train the model). Every row is mapped to

    ``Psi(x) = (K(x, l_1), ..., K(x, l_d)) / sqrt(d)``

    with the similarity ``K`` (:mod:`mlx.numerics.similarity`; never formed as an n x n
    matrix) and a linear model is learnt on ``Psi``. With ``fit_intercept`` the columns of
    ``Psi`` and the regression targets are centred on their training means and an
    unpenalised intercept is added. Each target column is fitted on its own.

    * ``model="regland"`` (RegLand): liblinear's support vector regression on ``Psi``,
      ``min_w 1/2 ||w||^2 + C sum_i l(<w, Psi(x_i)> - y_i)`` with the epsilon-insensitive
      ``l(u) = max(0, |u| - epsilon)`` (``loss="epsilon_insensitive"``, liblinear ``-s 13``,
      the loss of the paper's section 3.1) or its square
      (``loss="squared_epsilon_insensitive"``, ``-s 11``, the default).
    * ``model="regland_sp"`` (RegLand-Sp): fully corrective Forward Greedy Selection with the
      squared loss (Appendix D, Algorithm 2; section 4): at most ``sparsity`` landmarks are
      chosen greedily by the largest gradient entry, the least-squares fit on the chosen
      ones redone after each choice (:mod:`mlx.numerics.fgs`).
    * ``model="orland"`` (ORLand, ordinal tasks only): the EXC formulation (Chu and Keerthi
      2007) with fixed, equi-spaced thresholds between the level indices: a training row of
      the k-th smallest level should score in ``(k - 1/2 + margin, k + 1/2 - margin)``; the
      primal ``1/2 ||w||^2 + C sum_i (squared margin violations)`` is minimised by gradient
      descent (:func:`~mlx.numerics.exc.exc_descent`). Predictions are training levels:
      the level whose interval holds the latent score.
    * ``model="kr"`` (KR, the paper's baseline): Nadaraya-Watson kernel regression over the
      whole training set, ``f(x) = sum_i y_i K(x, x_i) / sum_i K(x, x_i)``, rounded to the
      nearest training level for an ordinal task (ties to the lower level). No landmarks
      and no training beyond storing the data.

    **KR with negative similarities.** The similarity values are used as weights as they
    are, sign included, exactly as the paper's predictor is written (section 4): it is the
    baseline whose numbers Table 1 reports, and it is meant to show what a non-PSD
    similarity does without landmarking. For a similarity that is never positive
    (Manhattan, Euclidean, and the sigmoid on features scaled to [0, 1], where
    ``<x, y> / d_orig <= 1``) the minus signs cancel in the ratio: the prediction is a mean
    of the training targets weighted by ``|K(x, x_i)|``, which grows with the distance, so
    KR predicts little more than a distance-weighted global mean (the paper's KR errors are
    close to the target variance). Where positive and negative weights cancel,
    ``|sum_i K| <= 1e-12 sum_i |K|``, the row gets the mean training target.

    Similarities: ``sigmoid`` ``tanh(<x, y> / d_orig - 1)`` (the paper's fixed ``a = 1/d_orig``
    and ``r = -1``, ``d_orig`` the number of input features), ``manhattan`` ``-||x - y||_1``,
    ``euclidean`` ``-||x - y||_2``, ``sqeuclidean`` ``-||x - y||_2^2`` (what Appendix G calls
    Euclidean) and ``gaussian`` ``exp(-||x - y||^2 / (2 bandwidth^2))`` (PSD).

    Parameters
    ----------
    model : {"regland", "regland_sp", "orland", "kr"}, default="regland"
        The learner: RegLand, RegLand-Sp, ORLand or the KR baseline (see above).
    similarity : str, default="manhattan"
        The paper's Table 1 uses sigmoid and Manhattan and reports Manhattan as good or
        better; here it does not hold on abalone, bodyfat and cpudata (docs/RESULTS.md).
        The sigmoid, ``tanh(<x, x'> / n_features - 1)``, assumes features in ``[-1, 1]``: on
        larger values it saturates, and ``message_`` (the cell's message) then names the fix,
        ``preprocess: [minmax]``. The distances need no particular scale. One of
        ``"sigmoid"``, ``"manhattan"``, ``"euclidean"``, ``"sqeuclidean"``, ``"gaussian"``.
    n_landmarks : int >= 1, default=50
        ``d``, the number of landmarks (Table 1 uses 50). At most the number of training rows
        (RegLand, RegLand-Sp, ORLand). KR has no landmarks; it draws this many rows only to
        estimate a Gaussian bandwidth.
    sparsity : int >= 1 or None, default=None
        RegLand-Sp: the most landmarks the sparse model may use (at most ``n_landmarks``).
        None: half of them, ``ceil(n_landmarks / 2)``. The paper does not give its value. On
        one split each of abalone, cpusmall, pumadyn-32nh and cadata (targets scaled to
        [0, 1], 50 landmarks) 25 landmarks came within 0-15% of the test MSE of all 50 (the
        paper's Table 1 values lie in between), while keeping the model sparse.
    C : float > 0 or "auto", default="auto"
        RegLand and ORLand: weight of the summed loss against ``1/2 ||w||^2`` (liblinear's
        ``-c``); ``"auto"`` chooses it on a hold-out split of the training rows, from 0.1 to
        1e7. The paper does not give it. ``"auto"``: the best of ``0.1 .. 1e7`` (a
        decade apart, walking from 1e3 while the score improves) by the squared error on a hold-out
        split of 20% of the
        training rows, then a fit on every row (:mod:`mlx.methods._auto`); the paper configs
        set 1e4, the earlier fixed default. Weak regularisation is needed: ``Psi`` carries a
        ``1/sqrt(d)`` and the sigmoid's values vary little from point to point (``tanh`` near
        ``-1``), so at liblinear's default C = 1 ORLand with the sigmoid predicts little
        more than the median level (bank-8fm, one split: MAE 2.4 at C = 1, 0.60 at C = 1e4,
        Table 1: 0.61); Manhattan results hardly change above C = 100. liblinear's ``-s 11``
        slows down as C grows (``benchmarks/bench_landmark.py --regland-c`` times it).
    epsilon : float >= 0, default=0.0
        RegLand: width of the insensitive zone (liblinear's ``-p``), in target units. 0 makes
        the squared loss plain ridge regression. The paper does not give it; liblinear's 0.1
        would exceed the typical error of targets scaled to [0, 1] (``target: minmax``).
    loss : {"squared_epsilon_insensitive", "epsilon_insensitive"}
        RegLand's loss: squared (liblinear ``-s 11``, primal trust-region Newton,
        deterministic) or not (``-s 13``, dual coordinate descent; its random coordinate
        order is drawn from the C library's ``rand()``, seeded from ``random_state`` before
        each fit so results repeat). Default ``"squared_epsilon_insensitive"``.
    margin : float in (0, 1/2], default=0.25
        ORLand: the margin ``gamma`` each point should keep from its level's thresholds, in
        units of the threshold spacing (1). 1/2 leaves no dead zone (the loss is then a
        squared error to the level index, one-sided at the extreme levels).
    bandwidth : float in [1e-150, 1e150] or None, default=None
        Gaussian similarity: ``sigma`` (outside that range ``sigma^2`` under- or overflows). None:
        the mean Euclidean distance between
        training points (the paper's rule, Appendix G), estimated from the distances of the
        ``n_landmarks`` sampled rows to all training rows; 1.0 if that is 0.
    fit_intercept : bool, default=True
        Centre ``Psi`` (and regression targets) and fit an unpenalised intercept. Not in the
        paper's Algorithm 1; without it ORLand's fixed thresholds and the nearly constant
        sigmoid features would make the offset a penalised direction.
    max_iter : int >= 1, default=500
        ORLand: most gradient steps per target. (RegLand runs to liblinear's own cap, which
        its binding does not expose; ``converged_`` says whether a fit reached it.)
    tol : float > 0 or None, default=None
        Stopping tolerance. RegLand: liblinear's ``-e`` (None: its defaults, 1e-4 for
        ``-s 11``, 0.1 for ``-s 13``). ORLand: stop when the preconditioned gradient norm is
        ``tol`` times its starting value (None: 1e-4).
    random_state : int or None, default=None
        Seeds the landmark draw (and liblinear's ``rand()`` for ``-s 13``).
    task : {"regression", "ordinal"} or task, default="regression"
        Set by the runner from the dataset. The runner passes the task object
        (:mod:`mlx.tasks`); a name works too. Ordinal targets are levels; RegLand and
        RegLand-Sp regress on the level values (the runner rounds their scores to the
        nearest level), ORLand and KR return levels.

    Attributes
    ----------
    landmark_indices_ : ndarray of int, shape (d,)
        Training rows used as landmarks (sorted); for KR, the rows drawn for the bandwidth.
    landmarks_ : ndarray of shape (d, n_features)
        Those rows (none for KR).
    similarity_params_ : dict
        The similarity's parameters as used (``scale``/``offset`` or ``bandwidth``).
    coef_ : ndarray of shape (d, n_targets)
        Weights on ``Psi`` (not for KR).
    intercept_ : ndarray of shape (n_targets,)
        Offsets such that scores are ``Psi(x) coef_ + intercept_`` (latent scores for ORLand).
    support_ : list of ndarray
        RegLand-Sp: the landmarks chosen for each target, in the order chosen.
    levels_ : list of ndarray
        Ordinal task: each target's sorted training levels.
    n_iter_ : ndarray of int, shape (n_targets,)
        ORLand: gradient steps; RegLand: the iterations liblinear reports (Newton steps for
        ``-s 11``, coordinate-descent passes for ``-s 13``); RegLand-Sp: landmarks chosen;
        0 for KR.
    converged_ : bool or None
        False if some ORLand fit hit ``max_iter``, or some RegLand fit stopped at
        liblinear's own iteration cap before ``tol`` (raise ``tol``: the cap is fixed in
        liblinear). None for KR, which has no solver.
    n_features_in_ : int

    Notes
    -----
    Deviations from the paper, and choices it leaves open:

    * The paper constrains ``||w||_2 <= B`` (Algorithm 1); RegLand uses liblinear's
      penalised form, as the paper's experiments do. ORLand uses the same penalised form.
    * ORLand squares the EXC margin loss, so the objective is smooth and gradient steps of a
      fixed, data-derived size (preconditioned, see :func:`mlx.numerics.exc.exc_descent`)
      converge; the paper says only that it used a gradient-descent solver on the EXC primal with
      fixed equi-spaced thresholds (Chu and Keerthi's EXC uses the hinge itself).
    * RegLand-Sp has no norm constraint ``C_W`` (Algorithm 2's ``||w||_1 <= C_W``): the fully
      corrective variant re-fits by unconstrained least squares and stops after
      ``sparsity`` landmarks (earlier only when the gradient vanishes).
    * The intercept (``fit_intercept``) is an addition; see above.

    References
    ----------
    P. Kar and P. Jain, "Supervised learning with similarity functions", NIPS 2012:
    Algorithm 1 (landmarking), section 3.1 (RegLand), section 3.2 and Appendix D
    (RegLand-Sp, Algorithm 2), section 3.3 and Appendix E (ORLand, EXC), section 4 (KR,
    sigmoid and Manhattan, Table 1), Appendix B (landmarks from the training set), Appendix
    G (Gaussian and Euclidean). W. Chu and S. S. Keerthi, "Support vector ordinal
    regression", Neural Computation 19(3), 2007 (EXC). S. Shalev-Shwartz, N. Srebro and
    T. Zhang, SIAM J. Optim. 20(6), 2010 (Forward Greedy Selection). C.-H. Ho and C.-J. Lin,
    "Large-scale linear support vector regression", JMLR 13, 2012 (liblinear SVR).
    """

    tasks = _TASKS
    supports_missing_labels = False
    uses_rank = False
    _parameter_constraints = TABLES["landmark"].constraints

    def __init__(self, *, model: str = "regland", similarity: str = "manhattan",
                 n_landmarks: int = 50, sparsity: int | None = None, C: float | str = "auto",
                 epsilon: float = 0.0, loss: str = "squared_epsilon_insensitive",
                 margin: float = 0.25, bandwidth: float | None = None,
                 fit_intercept: bool = True, max_iter: int = 500, tol: float | None = None,
                 random_state: int | None = None, task: str = "regression"):
        self.model = model
        self.similarity = similarity
        self.n_landmarks = n_landmarks
        self.sparsity = sparsity
        self.C = C
        self.epsilon = epsilon
        self.loss = loss
        self.margin = margin
        self.bandwidth = bandwidth
        self.fit_intercept = fit_intercept
        self.max_iter = max_iter
        self.tol = tol
        self.random_state = random_state
        self.task = task

    def expected_failed_checks(self) -> dict[str, str]:
        """The shared ones, and on an ordinal task ``check_fit2d_1sample``: one training row
        has a single level, which the level check refuses first, with its own message."""
        out = super().expected_failed_checks()
        if self._task().has_levels:
            out["check_fit2d_1sample"] = (
                "one training row has a single ordinal level: the level check refuses first, "
                "with its own message")
        return out

    @property
    def threshold(self) -> None:
        """None: regression scores are values, not label scores."""
        return None

    # -- checks ---------------------------------------------------------------
    def _sparsity(self) -> int:
        """The sparsity level in use: ``sparsity``, or ``ceil(n_landmarks / 2)`` for None."""
        return -(-self.n_landmarks // 2) if self.sparsity is None else self.sparsity

    def _check_sparsity(self) -> None:
        landmark_check_sparsity(self)

    def _check_n_landmarks(self, n_samples: int) -> None:
        landmark_check_n_landmarks(self, n_samples)

    def _validate_params(self) -> None:
        """The per-parameter constraints, then ``sparsity <= n_landmarks`` for RegLand-Sp."""
        super()._validate_params()
        self._check_sparsity()

    def skip(self, context: FitContext) -> str | None:
        """Also decline ORLand on a regression task (it needs ordinal levels)."""
        return super().skip(context) or landmark_skip(self, context)

    def check_context(self, context: FitContext) -> None:
        """``sparsity <= n_landmarks`` (RegLand-Sp) and ``n_landmarks <= n_samples``
        (landmark models; skipped when ``context.n_samples`` is 0, i.e. unknown)."""
        landmark_check_context(self, context)

    def _check_targets(self, X, Y, observed):
        task = self._task()
        X, T = task.fit_targets(_OWNER, X, Y, observed)
        levels = task.column_levels(_OWNER, T) if task.has_levels else None
        return X, T, levels

    # -- fitting --------------------------------------------------------------
    def _similarity_params(self, X: sp.csr_matrix, rows: np.ndarray) -> dict:
        if self.similarity == "sigmoid":
            return {"scale": 1.0 / X.shape[1], "offset": -1.0}
        if self.similarity == "gaussian":
            if self.bandwidth is not None:
                return {"bandwidth": float(self.bandwidth)}
            sigma = mean_distance(X, rows)
            return {"bandwidth": sigma if sigma > 0 else 1.0}
        return {}

    def _features(self, X) -> np.ndarray:
        """``Psi(X)`` of shape (n, d), blockwise; a non-finite value is a ValueError."""
        try:
            Psi = similarity(self.similarity, X, self.landmarks_,
                             params=self.similarity_params_)
        except NonFiniteSimilarityError as exc:
            raise ValueError(f"{_OWNER}: {exc}") from None
        Psi *= 1.0 / math.sqrt(self.landmarks_.shape[0])
        return Psi

    def _fit(self, X, Y, *, observed=None):
        """Draw the landmarks and fit the model to every target column.

        Parameters
        ----------
        X : sparse matrix or ndarray of shape (n_samples, n_features)
        Y : sparse matrix or ndarray of shape (n_samples, n_targets)
            Real targets (regression) or levels (ordinal).
        observed : None
            Regression and ordinal tasks have no missing-label mask; a mask that stores every
            entry is accepted as None.

        Returns
        -------
        self

        Raises
        ------
        InvalidParameterError
            A bad parameter, ``sparsity > n_landmarks`` (RegLand-Sp), ``n_landmarks`` above
            the number of training rows, or ``model="orland"`` on a regression task.
        ValueError
            Mismatched shapes, non-finite input, an ordinal target with one level, or a
            similarity value that is NaN or infinite (names the row).
        """
        self._validate_params()
        X, T, levels = self._check_targets(X, Y, observed)
        if self.model == "orland" and levels is None:
            raise InvalidParameterError(
                "model", f"{_OWNER}: model='orland' needs an ordinal task (levels); got task="
                         f"{self._task_name()!r}")
        self.auto_ = {}
        if is_auto(self.C) and self.model in ("regland", "orland"):
            return fit_holdout(self, "C", log_grid(1e3), X, Y, task=self._task())
        self.message_ = ""
        top = float(abs(X).max()) if X.nnz else 0.0
        if self.similarity == "sigmoid" and top > 1.0:
            self.message_ = (f"{_OWNER}: the sigmoid similarity assumes features in [-1, 1] "
                             f"(largest |x| here {top:.4g}; its values saturate); add "
                             f"preprocess: [minmax]")
        n, p = X.shape
        self._check_n_landmarks(n)
        rng = np.random.default_rng(self.random_state)
        d = min(self.n_landmarks, n)
        rows = np.sort(rng.choice(n, size=d, replace=False))
        n_targets = T.shape[1]

        self.landmark_indices_ = rows
        self.similarity_params_ = self._similarity_params(X, rows)
        self.levels_ = levels
        self.support_ = None
        self.n_iter_ = np.zeros(n_targets, dtype=np.int64)
        self.converged_ = True
        self.n_features_in_ = p
        if self.model == "kr":
            self.converged_ = None                   # no solver: nothing to converge
            self.landmarks_ = None
            self.coef_ = None
            self.intercept_ = None
            self.X_train_ = X.toarray()
            self.Y_train_ = T
            self.fitted_model_ = self.model
            return self

        self.landmarks_ = X[rows].toarray()
        Psi = self._features(X)
        mean = Psi.mean(axis=0) if self.fit_intercept else np.zeros(d)
        Z = Psi - mean
        if self.model == "orland":
            W, b = self._fit_orland(Z, T, levels)
        else:
            # Column by column, so a column's fit does not depend on the others (a 2-D mean
            # may sum in another order, and the solvers' tolerances would magnify the bits).
            t_mean = np.array([T[:, j].mean() if self.fit_intercept else 0.0
                               for j in range(n_targets)])
            Tc = T - t_mean
            if self.model == "regland":
                solver = _SVR_SOLVER[self.loss]
                tol = _SVR_TOL[solver] if self.tol is None else float(self.tol)
                seed = 0 if self.random_state is None else int(self.random_state)
                W, self.n_iter_[:], conv = _fit_svr(Z, Tc, solver=solver, C=self.C,
                                                    epsilon=self.epsilon, tol=tol, seed=seed)
                self.converged_ = bool(conv.all())
            else:
                W = np.zeros((d, n_targets))
                self.support_ = []
                for j in range(n_targets):
                    res = forward_greedy_selection(Z, Tc[:, j], self._sparsity())
                    W[:, j] = res.coef
                    self.support_.append(res.support)
                    self.n_iter_[j] = res.support.size
            b = t_mean
        self.coef_ = W
        self.intercept_ = b - mean @ W                    # scores = Psi coef_ + intercept_
        self.X_train_ = None
        self.Y_train_ = None
        self.fitted_model_ = self.model
        return self

    def _fit_orland(self, Z: np.ndarray, T: np.ndarray, levels):
        n, d = Z.shape
        W = np.zeros((d, T.shape[1]))
        b = np.zeros(T.shape[1])
        Zb = np.hstack([Z, np.ones((n, 1))]) if self.fit_intercept else Z
        tol = _EXC_TOL if self.tol is None else float(self.tol)
        for j in range(T.shape[1]):
            k = np.searchsorted(levels[j], T[:, j])      # level index 0 .. r-1
            res = exc_descent(Zb, k, levels[j].size, C=float(self.C), margin=float(self.margin),
                              n_penalised=d, max_iter=self.max_iter, tol=tol)
            W[:, j] = res.w[:d]
            b[j] = res.w[d] if self.fit_intercept else 0.0
            self.n_iter_[j] = res.n_iter
            self.converged_ = self.converged_ and res.converged
        return W, b

    # -- prediction -----------------------------------------------------------
    def latent_scores(self, X) -> np.ndarray:
        """``Psi(X) coef_ + intercept_``, shape (n_rows, n_targets): the scores themselves for
        RegLand and RegLand-Sp, ORLand's latent scores before thresholding. Not for KR."""
        check_is_fitted(self, "fitted_model_")
        if self.fitted_model_ == "kr":
            raise ValueError(f"{_OWNER}: model='kr' has no latent scores")
        X = check_n_features(_OWNER, X, self.n_features_in_)
        return self._features(X) @ self.coef_ + self.intercept_

    def _decision_function(self, X) -> np.ndarray:
        """Predictions of shape (n_rows, n_targets): values (regression) or levels (ORLand,
        and KR on an ordinal task). Any row slice of X can be scored on its own."""
        check_is_fitted(self, "fitted_model_")
        X = check_n_features(_OWNER, X, self.n_features_in_)
        if self.fitted_model_ == "kr":
            try:
                out = nadaraya_watson(self.similarity, X, self.X_train_, self.Y_train_,
                                      params=self.similarity_params_)
            except NonFiniteSimilarityError as exc:
                raise ValueError(f"{_OWNER}: {exc}") from None
            if self.levels_ is not None:
                for j, lv in enumerate(self.levels_):
                    out[:, j] = nearest_level(out[:, j], lv)
            return out
        scores = self._features(X) @ self.coef_ + self.intercept_
        if self.fitted_model_ == "orland":
            for j, lv in enumerate(self.levels_):
                scores[:, j] = lv[exc_levels(scores[:, j], lv.size)]
        return scores

