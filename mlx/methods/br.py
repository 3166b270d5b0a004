"""Binary relevance: one L2-regularised linear model per label.

Squared loss is ridge regression solved exactly (Cholesky factorisations, or block
conjugate gradients to a relative residual of ``1e-10``); logistic and squared-hinge
losses use liblinear's deterministic primal Newton solvers (``-s 0`` and ``-s 2``).
"""

from __future__ import annotations

import contextlib
import logging
import time
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import scipy.sparse as sp

from mlx.methods._auto import (
    AutoChoice,
    fit_holdout,
    is_auto,
    log_grid,
    loo_prior_weight,
    loo_rows,
    record,
)
from mlx.methods._validation import check_fit_data, check_n_features
from mlx.methods.base import (
    METHODS,
    BaseMethod,
    InvalidParameterError,
    check_is_fitted,
)
from mlx.methods.table import TABLES, br_loss, br_skip
from mlx.numerics.cg import block_cg
from mlx.numerics.regpath import RidgePath, leave_one_out
from mlx.numerics.ridge import PSDFactor, psd_solve, ridge
from mlx.numerics.spmm import SparseProducts, gram
from mlx.numerics.spmm import threads as spmm_threads

__all__ = ["BR"]

log = logging.getLogger(__name__)

_LIBLINEAR_SOLVER = {"logistic": 0, "squared_hinge": 2}
"""liblinear ``-s`` codes: L2-regularised logistic regression and L2-loss SVC, both primal."""

_DENSE_MAX = 6000
"""Largest side of a dense Gram matrix (X'X or XX') formed by the ridge solver (288 MB)."""

_BLOCK_ELEMS = 1 << 22
"""Entries of one dense (n_samples, block) work array in block CG (32 MB)."""

_CG_BLOCK = 64
"""Labels per block in block CG; fixed, so the fitted model does not depend on n_jobs."""

_RIDGE_RTOL = 1e-10
"""Block CG stops a label when ||A_j w_j - b_j|| <= _RIDGE_RTOL * ||b_j||."""


# ----------------------------------------------------------------------------- ridge (squared loss)
class _ActiveColumns:
    """``M[:, cols]`` for block CG's active columns, sliced again only when they change.

    Saves a copy of ``M``'s active block per iteration (and the allocator churn it causes).
    """

    def __init__(self, M: np.ndarray):
        self.M = M
        self._cols = None
        self._block = None

    def __call__(self, cols: np.ndarray) -> np.ndarray:
        if self._cols is None or not np.array_equal(cols, self._cols):
            self._cols = cols.copy()
            self._block = self.M[:, cols]
        return self._block


def _map(fn, items, n_jobs: int) -> list:
    """``[fn(x) for x in items]``, on ``n_jobs`` threads; the order of results is fixed."""
    if n_jobs == 1 or len(items) <= 1:
        return [fn(x) for x in items]
    with ThreadPoolExecutor(max_workers=min(n_jobs, len(items))) as pool:
        return list(pool.map(fn, items))


# Complexity 19 (over 15): dual, direct and CG solves chosen by problem size, in one place.
def _fit_ridge(X, pos, obs, trained, l2_reg, n_jobs):  # noqa: C901
    """Per-label ridge regression with 0/1 targets on the observed rows.

    ``pos`` is the CSC pattern of observed positives, ``obs`` the CSC pattern of observed
    entries (None: all observed). Returns ``(W, n_iter, converged)``.

    Routes: full labels are solved together by one direct solve (primal or dual, whichever
    is smaller). With missing labels each label j has its own system; a label with
    ``|Omega_j| <= n_features`` uses its ``|Omega_j| x |Omega_j|`` dual by Cholesky, the others
    go, in fixed blocks of labels, to conjugate gradients preconditioned by
    ``rho X'X + l2_reg I``, ``rho`` being their mean observed fraction. ``l2_reg = 0`` always
    takes the direct minimum-norm route.
    """
    n, d = X.shape
    L = pos.shape[1]
    W = np.zeros((d, L))
    n_iter = np.zeros(L, dtype=np.int64)
    if not trained.any():
        return W, n_iter, True
    too_big = min(n, d) > _DENSE_MAX and l2_reg > 0
    if obs is None and not too_big:
        W[:] = ridge(X, pos, l2_reg)
        W[:, ~trained] = 0.0
        return W, n_iter, True

    if obs is None:
        # Both sides too large for a dense Gram matrix: block CG with a Jacobi preconditioner.
        n_obs = np.full(L, n)
        dual_labels, cg_labels = np.array([], dtype=np.int64), np.flatnonzero(trained)
    else:
        n_obs = np.diff(obs.indptr)
        dual = trained & ((n_obs <= min(d, _DENSE_MAX)) | (l2_reg == 0))
        dual_labels, cg_labels = np.flatnonzero(dual), np.flatnonzero(trained & ~dual)

    if dual_labels.size:
        K = None
        if l2_reg > 0 and n <= _DENSE_MAX and np.sum(n_obs[dual_labels] ** 2.0) >= n * n:
            # The K_j together hold more entries than XX': form it once and cut them from it.
            if n * d <= 4 * _BLOCK_ELEMS:
                Xd = X.toarray()
                K = Xd @ Xd.T                                     # dense GEMM beats sparse here
                del Xd
            else:
                K = (X @ X.T).toarray()

        def solve_label(j):
            rows = obs.indices[obs.indptr[j]:obs.indptr[j + 1]]
            y = np.isin(rows, pos.indices[pos.indptr[j]:pos.indptr[j + 1]]).astype(np.float64)
            Xj = X[rows]
            if K is not None:                                     # w = Xj' (Kj + lam I)^-1 y
                return Xj.T @ psd_solve(K[np.ix_(rows, rows)], y, l2_reg, overwrite_a=True)
            return ridge(Xj, y[:, None], l2_reg)[:, 0]

        for j, w in zip(dual_labels, _map(solve_label, list(dual_labels), n_jobs)):
            W[:, j] = w

    converged = True
    if cg_labels.size:
        if d <= _DENSE_MAX:
            A = gram(X)                                           # X'X on the cell's threads
            A *= n_obs[cg_labels].mean() / n
            factor = PSDFactor(A, l2_reg, overwrite_a=True)      # rho X'X + lam I
            del A
        else:
            sq_norms = X.multiply(X).tocsc()                      # for diag(X' diag(m) X)
        width = max(1, min(_CG_BLOCK, _BLOCK_ELEMS // max(n, d)))
        blocks = [cg_labels[i:i + width] for i in range(0, cg_labels.size, width)]
        products = SparseProducts(X)      # X P and X' (X P) on the cell's kernel threads

        def solve_block(labels):
            mask = None if obs is None else obs[:, labels].toarray()
            B = (X.T @ pos[:, labels]).toarray()                  # X' y_Omega
            if d <= _DENSE_MAX:
                def precond(R, cols):
                    return factor.solve(R)
            else:
                diag = np.asarray(sq_norms.T @ (np.ones((n, 1)) if mask is None else mask))
                diag += l2_reg                                    # diag(A_j)
                diag_cols = None if mask is None else _ActiveColumns(diag)

                def precond(R, cols):
                    return R / (diag if mask is None else diag_cols(cols))

            mask_cols = None if mask is None else _ActiveColumns(mask)

            def normal_op(P, cols):                               # A_j p_j, column by column
                XP = products.dot(P)
                if mask is not None:
                    XP *= mask_cols(cols)
                Q = products.tdot(XP)                             # X' diag(m_j) X p_j
                Q += l2_reg * P                                   #   + lam p_j
                return Q

            res = block_cg(normal_op, B, precond=precond, tol=_RIDGE_RTOL,
                           max_iter=max(100, 2 * d))
            return res.x, res.n_iter, res.converged

        # Blocks on several Python threads each take one kernel thread (numba's parallel
        # regions are not to be entered from several threads at once).
        with spmm_threads(1) if n_jobs > 1 else contextlib.nullcontext():
            solved = _map(solve_block, blocks, n_jobs)
        for labels, (Wb, it, conv) in zip(blocks, solved):
            W[:, labels] = Wb
            n_iter[labels] = it
            converged = converged and bool(conv.all())
    log.debug("ridge: %d labels by dual Cholesky, %d by block CG", dual_labels.size,
              cg_labels.size)
    return W, n_iter, converged


# ----------------------------------------------------------------------------- liblinear
def _fit_liblinear(X, pos, obs, trained, *, solver, C, eps, bias, n_jobs):
    """One liblinear primal Newton fit per trained label; returns ``(W, n_iter, converged)``.

    Each label trains on its observed rows (all rows when ``obs`` is None) with +-1 targets
    (:func:`mlx.methods._liblinear.train_columns`).
    """
    from mlx.methods._liblinear import train_columns

    def targets(j):
        positives = pos.indices[pos.indptr[j]:pos.indptr[j + 1]]
        if obs is None:
            y = np.full(X.shape[0], -1.0)
            y[positives] = 1.0
            return None, y
        rows = obs.indices[obs.indptr[j]:obs.indptr[j + 1]]
        return rows, np.where(np.isin(rows, positives), 1.0, -1.0)

    fit = train_columns(X, targets, pos.shape[1], solver=solver, C=C, eps=eps, bias=bias,
                        columns=np.flatnonzero(trained), n_jobs=n_jobs)
    return fit.W, fit.n_iter, bool(fit.converged.all())


# ----------------------------------------------------------------------------- the method
@METHODS.register("br")
class BR(BaseMethod):
    r"""Binary relevance: an independent L2-regularised linear model for every label.

    For each label j, with Omega_j the rows where label j is observed (all rows when
    labels are complete) and x_i the i-th row of X (extended by the constant ``bias`` when
    ``bias >= 0``), BR fits

    * ``loss="squared"`` (ridge regression on 0/1 targets):
      ``min_w  sum_{i in Omega_j} (y_ij - x_i'w)^2 + l2_reg ||w||^2``,
    * ``loss="logistic"`` (liblinear ``-s 0``) on +-1 targets:
      ``min_w  C sum_{i in Omega_j} log(1 + exp(-y_ij x_i'w)) + ||w||^2 / 2``,
    * ``loss="squared_hinge"`` (liblinear ``-s 2``) on +-1 targets:
      ``min_w  C sum_{i in Omega_j} max(0, 1 - y_ij x_i'w)^2 + ||w||^2 / 2``.

    The model stacks these into ``W_`` and scores ``X W_``. Together the per-label problems
    minimise the LEML objective (2) with Frobenius-norm regularisation and no rank
    constraint, which is how the LEML paper runs BR with missing labels.

    Parameters
    ----------
    loss : {"auto", "logistic", "squared", "squared_hinge"}, default="auto"
        ``"auto"``: logistic for multi-label and multi-class tasks, squared for regression
        and ordinal tasks (the only loss that fits real targets).
    C : float > 0 or "auto", default="auto"
        liblinear's cost ``-c`` for the logistic and squared-hinge losses; ``"auto"`` chooses
        it on a hold-out split of the training rows, from 1e-4 to 1e4. (The
        liblinear objective divided by C is the ridge form with ``l2_reg = 1 / (2 C)``.)
        ``"auto"`` chooses it on a hold-out split of the training rows (20%) among
        ``1e-4, 1e-3, ..., 1e4`` by the mean of P@1 and AUC, walking from 1 towards the
        better neighbour while the score improves, then refits on every row
        (:mod:`mlx.methods._auto`). The paper configs set C explicitly.
    l2_reg : float >= 0 or "auto", default="auto"
        Ridge penalty of the squared loss; ``"auto"`` takes the penalty of lowest generalised
        cross-validation on its ridge path (full labels, regression) or a hold-out choice
        (missing labels). 0 gives the minimum-norm least-squares
        solution, computed directly per label (slower). ``"auto"`` with full labels (and
        for regression) takes the penalty of lowest generalised cross-validation on the
        ridge path from one eigendecomposition of the smaller Gram matrix
        (:mod:`mlx.numerics.regpath`; 34 penalties from ``1e-10`` to ``10`` times its largest
        eigenvalue), with missing labels the best of ``1e-4 .. 1e4`` on a hold-out split as
        for ``C``.
    bias : float, default=-1
        liblinear's ``-B``: when ``bias >= 0`` every row gets an extra constant feature of
        this value, whose weight (the last row of ``W_``) is penalised like the others, for
        every loss. Negative: no bias term.
    eps : float > 0, default=0.01
        liblinear's stopping tolerance ``-e``: Newton stops when
        ``||grad f(w)|| <= eps * max(min(n_pos, n_neg), 1) / n_obs * ||grad f(0)||``.
        The squared loss is solved exactly and ignores it.
    n_jobs : int >= 1, default=1
        Threads over labels (over label blocks for the squared loss). The fitted model is
        the same for every value. BLAS may start threads of its own.
    random_state : None or int, default=None
        Unused: every solver here is deterministic. Accepted for a uniform interface.
    task : {"multilabel", "multiclass", "regression", "ordinal"} or task, default="multilabel"
        Set by the runner from the dataset. The runner passes the task object
        (:mod:`mlx.tasks`); a name works too. Multi-class data are fitted one-vs-rest like
        labels (the arg-max of the scores is the prediction). ``"regression"`` and
        ``"ordinal"`` need ``loss="squared"``: each target column is fitted by ridge
        regression on its real values or levels (no missing-label mask); the scores are the
        predictions (rounded to the nearest level by the runner for an ordinal task).

    Attributes
    ----------
    W_ : ndarray of shape (n_features, n_labels), or (n_features + 1, n_labels) with bias
        Weights; column j is label j's model, zero for untrained labels.
    bias_ : float
        The ``bias`` used in ``fit`` (negative: no bias row in ``W_``).
    n_features_in_ : int
    untrained_labels_ : ndarray of int
        Labels with no observed positive entry (see below).
    n_iter_ : ndarray of int, shape (n_labels,)
        liblinear's Newton iterations per label, or conjugate-gradient iterations per label
        for ridge labels solved iteratively; 0 for labels solved in closed form or untrained.
    converged_ : bool
        False if some label hit liblinear's Newton iteration limit or the ridge CG
        iteration limit.

    Notes
    -----
    **Untrained labels.** A label with no observed positive example (including one with no
    observed entries at all) gets no model. ``decision_function`` gives it, in each row,
    ``min(threshold, lowest score of the trained labels in that row) - 1``. So in every row it
    scores strictly below every trained label and below the threshold: it never outranks a
    trained label in P@k or AUC and is always predicted negative for Hamming loss. The rule
    depends on the row only, so scoring in batches gives the same result. A finite value
    keeps the scores usable in arithmetic, unlike ``-inf``; a fixed sentinel such as
    ``-1e6`` could still be outranked by real scores.

    A label whose observed entries are all positive is trained like any other. liblinear fits
    a one-class problem with all targets +1, which is exactly that label's objective.

    **Solvers.** Squared loss with full labels uses one Cholesky solve for all labels, on
    ``X'X`` (n_features <= n_samples) or on ``XX'``. With missing labels each label has its
    own system. Labels with ``|Omega_j| <= n_features`` use their dual
    ``w_j = X_j'(X_j X_j' + l2_reg I)^-1 y_j``, cutting ``X_j X_j'`` from ``XX'`` when the labels
    together need more entries than ``XX'`` holds. The other labels go, 64 at a time, to
    conjugate gradients preconditioned by ``rho X'X + l2_reg I`` (``rho``: their mean observed
    fraction), stopping at a relative residual of 1e-10 or after ``max(100, 2 n_features)``
    iterations. When both n_samples and n_features exceed 6000 no dense Gram matrix is
    formed and CG uses a diagonal preconditioner. Each liblinear problem shares the node
    array of ``X``; with missing labels it points at the observed rows only.

    **Deviations from the paper.** The paper does not say how BR treats a label without an
    observed positive, nor which C or penalty it used; the rule above and the defaults
    (``auto`` C and ``l2_reg``) are this implementation's; the paper configs use C = 1.

    References
    ----------
    H.-F. Yu, P. Jain, P. Kar and I. S. Dhillon, "Large-scale multi-label learning with
    missing labels", ICML 2014, section 5 ("BR") and section 5.2 (BR with missing labels).
    R.-E. Fan, K.-W. Chang, C.-J. Hsieh, X.-R. Wang and C.-J. Lin, "LIBLINEAR: a library
    for large linear classification", JMLR 9, 2008.
    """

    tasks = ("multilabel", "multiclass", "regression", "ordinal")
    supports_missing_labels = True
    uses_rank = False
    _parameter_constraints = TABLES["br"].constraints

    def __init__(self, *, loss: str = "auto", C: float | str = "auto",
                 l2_reg: float | str = "auto",
                 bias: float = -1.0, eps: float = 0.01, n_jobs: int = 1,
                 random_state: int | None = None, task: str = "multilabel"):
        self.task = task
        self.loss = loss
        self.C = C
        self.l2_reg = l2_reg
        self.bias = bias
        self.eps = eps
        self.n_jobs = n_jobs
        self.random_state = random_state

    def _loss(self) -> str:
        """The loss used: ``loss`` with ``"auto"`` resolved for ``task`` (:func:`br_loss`)."""
        return br_loss(self)

    @property
    def threshold(self) -> float:
        """0.5 for the squared loss (0/1 targets), 0 for logistic and squared hinge (+-1)."""
        return 0.5 if self._loss() == "squared" else 0.0

    def skip(self, context) -> str | None:
        """Decline a regression task unless the loss is squared (or ``"auto"``)."""
        return super().skip(context) or br_skip(self, context)

    def _fit(self, X, Y, *, observed=None):
        """Fit one model per label.

        Parameters
        ----------
        X : sparse matrix of shape (n_samples, n_features)
        Y : sparse matrix of shape (n_samples, n_labels)
            Stored non-zeros are positives.
        observed : sparse matrix of shape (n_samples, n_labels) or None
            Stored entries mark the observed (instance, label) pairs; entries of ``Y``
            outside them are ignored. None: every entry is observed.

        Returns
        -------
        self

        Raises
        ------
        ValueError
            Mismatched shapes, empty input, or non-finite values in ``X`` or ``Y``.
        """
        self._validate_params()
        self.auto_ = {}
        task = self._task()
        if task.real_valued:
            return self._fit_regression(X, Y, observed)
        start = time.perf_counter()
        data = check_fit_data("BR", X, Y, observed)
        X = data.X
        n, d = X.shape
        pos = data.positives.tocsc()                              # positives inside Omega
        obs = None if data.observed is None else data.observed.tocsc()  # None: all observed
        trained = np.diff(pos.indptr) > 0
        bias = float(self.bias)
        loss = self._loss()
        too_big = min(n, d + (bias >= 0)) > _DENSE_MAX
        if loss == "squared" and is_auto(self.l2_reg) and (obs is not None or too_big):
            return fit_holdout(self, "l2_reg", log_grid(1.0), X, data.positives,
                               observed=data.observed, task=task)
        if loss != "squared" and is_auto(self.C):
            return fit_holdout(self, "C", log_grid(1.0), X, data.positives,
                               observed=data.observed, task=task)

        if loss == "squared":
            Xb = X
            if bias >= 0:                                         # append the bias column
                Xb = sp.hstack([X, sp.csr_matrix(np.full((n, 1), bias))], format="csr")
            if is_auto(self.l2_reg):                              # full labels: GCV path
                W, path = self._gcv_coef(Xb, pos, leverage_rows=loo_rows(*pos.shape))
                W[:, ~trained] = 0.0
                n_iter, converged = np.zeros(W.shape[1], dtype=np.int64), True
            else:
                W, n_iter, converged = _fit_ridge(Xb, pos, obs, trained, float(self.l2_reg),
                                                  self.n_jobs)
        else:
            W, n_iter, converged = _fit_liblinear(
                X, pos, obs, trained, solver=_LIBLINEAR_SOLVER[loss], C=self.C,
                eps=self.eps, bias=bias, n_jobs=self.n_jobs)

        self.W_ = W
        self.bias_ = bias
        self.n_features_in_ = d
        self.untrained_labels_ = np.flatnonzero(~trained)
        self.n_iter_ = n_iter
        self.converged_ = bool(converged)
        if loss == "squared" and is_auto(self.l2_reg):    # a path that ends at the frequencies
            lam = self.auto_["l2_reg"].value
            loo_prior_weight(self, X, pos, lambda rows: self._loo_scores(path, lam, Xb, pos, rows),
                             task=task)
        log.debug("br[%s] fit %d labels (%d untrained) in %.2fs", loss, pos.shape[1],
                  self.untrained_labels_.size, time.perf_counter() - start)
        return self

    def _gcv_coef(self, Xb, T, leverage_rows: int = 0):
        """Ridge weights at the penalty of lowest GCV on the path (``l2_reg="auto"``)."""
        path = RidgePath(Xb, T, leverage_rows=leverage_rows)
        choice = path.choose()
        record(self, AutoChoice("l2_reg", choice.value, "gcv", tuple(choice.grid),
                                tuple(choice.scores)))
        return path.coef(choice.value), path

    def _loo_scores(self, path, lam: float, Xb, pos, rows) -> np.ndarray:
        """Leave-one-out scores of training ``rows`` (squared loss, GCV path): each trained
        label's ridge prediction from the other rows, exact (:func:`leave_one_out`); the
        labels without a positive below every other score, as :meth:`_decision_function`
        puts them."""
        scores = leave_one_out(np.asarray(Xb[rows] @ self.W_), pos[rows],
                               path.leverage(lam, rows))
        return self._floor_untrained(scores)

    def _fit_regression(self, X, Y, observed):
        """Ridge regression of every target column on its real values."""
        task = self._task()
        if self._loss() != "squared":
            raise InvalidParameterError(
                "loss", f"BR: a {task} task needs loss='squared'; got loss={self.loss!r}")
        X, T = task.fit_targets("BR", X, Y, observed)
        n, d = X.shape
        bias = float(self.bias)
        Xb = X
        if bias >= 0:
            Xb = sp.hstack([X, sp.csr_matrix(np.full((n, 1), bias))], format="csr")
        if is_auto(self.l2_reg):
            self.W_ = self._gcv_coef(Xb, T)[0]
        else:
            self.W_ = ridge(Xb, T, float(self.l2_reg))
        self.bias_ = bias
        self.n_features_in_ = d
        self.untrained_labels_ = np.empty(0, dtype=np.int64)
        self.n_iter_ = np.zeros(T.shape[1], dtype=np.int64)
        self.converged_ = True
        return self

    def _decision_function(self, X) -> np.ndarray:
        """Scores of shape (n_rows, n_labels); any row slice of X can be scored on its own."""
        check_is_fitted(self, "W_")
        d = self.n_features_in_
        X = check_n_features("BR", X, d)
        scores = np.asarray(X @ self.W_[:d])
        if self.bias_ >= 0:
            scores += self.bias_ * self.W_[d]
        return self._floor_untrained(scores)

    def _floor_untrained(self, scores) -> np.ndarray:
        """``scores`` with the labels that had no positive in training below every other
        label of their row (and below the threshold)."""
        untrained = self.untrained_labels_
        if untrained.size:
            trained = np.ones(scores.shape[1], dtype=bool)
            trained[untrained] = False
            floor = np.full(scores.shape[0], self.threshold)
            if trained.any():
                floor = np.minimum(floor, scores[:, trained].min(axis=1))
            scores[:, untrained] = (floor - 1.0)[:, None]
        return scores
