"""LSVV: vector-valued learning with local Rademacher complexity and unlabelled data."""

from __future__ import annotations

import logging
import math
import time
from typing import ClassVar

import numpy as np
import scipy.linalg
import scipy.sparse as sp

from mlx.errors import DivergenceError
from mlx.methods._auto import fit_holdout, is_auto, log_grid
from mlx.methods._scale import apply_scale, fit_scale
from mlx.methods._status import settled
from mlx.methods._validation import as_float_csr, check_fit_data, check_n_features
from mlx.methods.base import (
    METHODS,
    BaseMethod,
    InvalidParameterError,
    check_is_fitted,
)
from mlx.methods.table import (
    TABLES,
    lsvv_check_context,
    lsvv_neighbors_error,
    lsvv_theta_error,
)
from mlx.numerics.adadelta import proximal_adadelta
from mlx.numerics.knn_graph import graph_laplacian, knn_graph
from mlx.numerics.rff import draw_rff, median_distance
from mlx.numerics.svt import partial_svt, shrunk_sum

__all__ = ["LSVV", "multiclass_hinge", "squared_loss"]

log = logging.getLogger(__name__)

EIG_MAX_FEATURES = 4000
"""With ``tau_I > 0`` and at most this many features (D), the manifold term is diagonalised
once (``M = V diag(lam) V'``) and the fit runs in the rotated basis; above it, every step
computes ``Phi' (L (Phi W))`` from the sparse graph."""

_KDTREE_MAX_FEATURES = 16
"""The k-NN search densifies feature matrices up to this many columns (k-d tree)."""

_SCORE_BLOCK = 1 << 22
"""Entries of one (rows, outputs) score block when the objective is evaluated."""

_DENSE_TARGETS = 1 << 24
"""Multi-label targets (and mask) with at most this many entries are densified once;
larger ones are densified one mini-batch at a time."""

def _dense(M) -> np.ndarray:
    return M.toarray() if sp.issparse(M) else M


# ----------------------------------------------------------------------------- losses
def squared_loss(S: np.ndarray, T: np.ndarray, mask: np.ndarray | None = None):
    """Summed squared loss ``sum mask * (S - T)^2`` and its gradient in ``S`` (eq. (20)).

    Parameters
    ----------
    S : ndarray of shape (m, K)
        Scores ``h(x_i)``.
    T : ndarray of shape (m, K)
        Targets (0/1 labels or real values).
    mask : ndarray of shape (m, K) or None
        1 on observed entries, 0 elsewhere; None: all observed.

    Returns
    -------
    value : float
    grad : ndarray of shape (m, K)
        ``2 mask * (S - T)``.
    """
    R = S - T
    if mask is not None:
        R *= mask
    return float(np.vdot(R, R)), 2.0 * R


def multiclass_hinge(S: np.ndarray, y: np.ndarray):
    """Summed multi-class hinge loss ``sum_i |1 - m_i|_+`` and a subgradient in ``S`` (eq. (19)).

    ``m_i = S[i, y_i] - max_{k != y_i} S[i, k]``; where ``m_i < 1`` the subgradient of row i is
    ``+1`` at the arg-max ``k*`` (the smallest index among ties) and ``-1`` at ``y_i``, else 0.
    With a single class the loss is 0.

    Parameters
    ----------
    S : ndarray of shape (m, K)
    y : ndarray of int, shape (m,)
        Class of each row.

    Returns
    -------
    value : float
    grad : ndarray of shape (m, K)
    """
    m, K = S.shape
    grad = np.zeros_like(S)
    if K < 2 or m == 0:
        return 0.0, grad
    rows = np.arange(m)
    true = S[rows, y]
    other = S.copy()
    other[rows, y] = -np.inf
    rival = np.argmax(other, axis=1)
    margin = true - other[rows, rival]
    active = margin < 1.0
    grad[rows[active], rival[active]] = 1.0
    grad[rows[active], y[active]] = -1.0
    return float(np.sum(np.maximum(1.0 - margin, 0.0))), grad


# ----------------------------------------------------------------------------- manifold term
class _Manifold:
    """The Laplacian term ``tr(W' M W)``, ``M = Phi~' L Phi~`` over labelled + unlabelled rows.

    ``route="eig"``: ``M = V diag(lam) V'`` is formed once and the fit works with
    ``W~ = V' W`` (``M W`` becomes ``lam * W~``). ``route="sparse"``: ``M W`` is
    ``Phi~' (L (Phi~ W))`` at every call.
    """

    def __init__(self, Phi_all, L, route: str):
        self.route = route
        if route == "eig":
            LPhi = L @ Phi_all
            M = Phi_all.T @ LPhi
            M = M.toarray() if sp.issparse(M) else np.asarray(M)
            M = 0.5 * (M + M.T)
            lam, V = scipy.linalg.eigh(M, overwrite_a=True, check_finite=False)
            self.lam = np.maximum(lam, 0.0)[:, None]     # PSD: negatives are rounding
            self.V = V
        else:
            self.Phi = Phi_all
            self.PhiT = Phi_all.T.tocsr() if sp.issparse(Phi_all) else Phi_all.T
            self.L = L

    def apply(self, W: np.ndarray) -> np.ndarray:
        """``M W`` (in the rotated basis for the eig route)."""
        if self.route == "eig":
            return self.lam * W
        return np.asarray(self.PhiT @ (self.L @ np.asarray(self.Phi @ W)))

    def value(self, W: np.ndarray) -> float:
        """``tr(W' M W)``."""
        if self.route == "eig":
            return float(np.sum(self.lam * (W * W)))
        H = np.asarray(self.Phi @ W)
        return float(np.vdot(H, self.L @ H))


class _Problem:
    """The fit's data in the basis the iteration runs in, and objective (11) on it.

    ``Psi`` are the labelled rows' features (``phi``, or ``phi V`` on the eig route);
    ``targets`` are 0/1 labels (dense or CSR) or real values, shape (n, K), with the squared
    loss, or class indices, shape (n,), with the multi-class hinge; ``mask`` marks observed
    labels (None: all).
    """

    def __init__(self, Psi, targets, mask, manifold, *, tau_A, tau_I, tau_S, theta, shrink):
        self.Psi = Psi
        self.targets = targets
        self.mask = mask
        self.manifold = manifold
        self.tau_A = float(tau_A)
        self.tau_I = float(tau_I)
        self.tau_S = float(tau_S)
        self.theta = int(theta)
        self.shrink = shrink

    @property
    def n_samples(self) -> int:
        return self.Psi.shape[0]

    def loss(self, W: np.ndarray, rows, P=None):
        """Summed loss over ``rows`` (an index array or slice of the labelled rows) and its
        gradient in the scores; ``P`` are those rows of ``Psi`` when already sliced."""
        P = self.Psi[rows] if P is None else P
        S = np.asarray(P @ W)
        if self.targets.ndim == 1:                          # class indices
            return multiclass_hinge(S, self.targets[rows])
        M = None if self.mask is None else _dense(self.mask[rows])
        return squared_loss(S, _dense(self.targets[rows]), M)

    def gradient(self, W: np.ndarray, rows, P=None):
        """``(loss_sum, grad)``: the summed loss over ``rows`` and the mini-batch gradient
        of ``g`` (Algorithm 1): ``1/m sum_i dl_i/dW + 2 tau_A W + 2 tau_I M W``."""
        P = self.Psi[rows] if P is None else P
        value, dS = self.loss(W, rows, P)
        dS /= P.shape[0]
        grad = np.asarray(P.T @ dS)
        if self.tau_A > 0:
            grad += (2.0 * self.tau_A) * W
        if self.manifold is not None:
            grad += (2.0 * self.tau_I) * self.manifold.apply(W)
        return value, grad

    def smooth_objective(self, W: np.ndarray) -> float:
        """``g(W)`` over all labelled rows (the objective without the singular value term)."""
        n, K = self.n_samples, W.shape[1]
        step = max(1, _SCORE_BLOCK // max(K, 1))
        loss = 0.0
        for i in range(0, n, step):
            loss += self.loss(W, slice(i, min(n, i + step)))[0]
        value = loss / n + self.tau_A * float(np.vdot(W, W))
        if self.manifold is not None:
            value += self.tau_I * self.manifold.value(W)
        return value

    def objective(self, W: np.ndarray) -> float:
        """Objective (11): ``g(W) + tau_S T(W)``, ``T`` the sum the proximal step shrinks."""
        value = self.smooth_objective(W)
        if self.tau_S > 0:
            s = scipy.linalg.svdvals(W, check_finite=False)
            value += self.tau_S * shrunk_sum(s, self.theta, self.shrink)
        return value


# ----------------------------------------------------------------------------- the method
@METHODS.register("lsvv")
class LSVV(BaseMethod):
    r"""LSVV: local Rademacher complexity based semi-supervised vector-valued learning.

    A linear model ``h(x) = W' phi(x)`` with ``W`` of shape (D, K) (K outputs) minimises (11)

    ``g(W) + tau_S T(W)``, ``g(W) = 1/n sum_i l(h(x_i), y_i) + tau_A ||W||_F^2
    + tau_I tr(W' Phi~' L Phi~ W)``,

    over the n labelled rows, where ``Phi~`` stacks ``phi`` of the labelled and unlabelled
    training rows, ``L = D - S`` is the Laplacian of their k-NN graph with binary weights and
    ``T(W) = sum_{j > theta} s_j(W)`` is the tail sum of the singular values of ``W``. The
    feature map ``phi`` is the identity (``space="linear"``, X kept sparse) or ``D`` random
    Fourier features of a Gaussian kernel (``space="rff"``). The four models of Table 6 are
    parameter settings:

    ========  ======================  ===========================================
    SRM-VV    tau_I = 0, tau_S = 0     no graph is built, no proximal step runs
    LRC-VV    tau_I = 0, tau_S > 0
    SS-VV     tau_I > 0, tau_S = 0     no proximal step runs
    LSVV      tau_I > 0, tau_S > 0
    ========  ======================  ===========================================

    Losses: multi-label classification, squared loss on 0/1 targets over the observed
    entries (eq. (20)); multi-output regression, squared loss on the given targets (eq. (20));
    multi-class classification, the multi-class hinge ``|1 - m_h(x, y)|_+`` with the
    subgradient (19).

    Optimisation is Algorithm 1: ``W_1 = 0``; at every mini-batch step a gradient step on
    ``g`` with the Adadelta-style scalar step size
    ``G <- rho G + (1 - rho) ||grad||^2``, ``eta = sqrt((M + eps) / (G + eps))``,
    ``M <- rho M + (1 - rho) ||eta grad||^2``, then the proximal step on the singular
    values with threshold ``eta tau_S``. Mini-batches are drawn without replacement, one
    permutation per epoch.

    Parameters
    ----------
    task : {"multilabel", "multiclass", "regression"} or task, default="multilabel"
        Set by the runner from the dataset. The runner passes the task object
        (:mod:`mlx.tasks`); a name works too. The squared loss on labels or real values, the
        multi-class hinge on one class per row.
    space : {"linear", "rff"}, default="linear"
        ``phi(x) = x``, or ``phi(x) = sqrt(2/D) cos(Omega' x + b)`` (eq. (18)).
    n_components : int >= 1, default=100
        D, the number of random Fourier features (the paper's D = 100); unused when linear.
    bandwidth : float in [1e-150, 1e150] or "median", default="median"
        sigma of the Gaussian kernel ``exp(-||x - x'||^2 / (2 sigma^2))``: ``Omega`` has
        ``N(0, 1/sigma^2)`` entries. ``"median"``: the median distance between training rows
        (labelled and unlabelled; at most 500 drawn with ``random_state``). The paper tunes
        sigma over ``2^-5 .. 2^5``; the median heuristic is this implementation's default.
    tau_A : float >= 0 or "auto", default="auto"
        Weight of ``||W||_F^2`` (paper grid from 1e-15 to 1e-6); ``"auto"`` chooses it on a
        hold-out split of the labelled rows, from 1e-8 to 1. ``"auto"``: the best of
        ``1e-8 .. 1`` (a decade apart, walking from 1e-4 while the score improves) on a hold-out
        split of 20% of the
        labelled rows (multi-label and multi-class: the mean of P@1 and AUC; regression: the
        squared error), then a fit on every row (:mod:`mlx.methods._auto`). The paper configs
        set it (1e-6).
    tau_I : float >= 0, default=0.0
        Weight of the manifold term (paper grid ``0, 1e-15 .. 1e-6``); 0 builds no graph.
    tau_S : float >= 0, default=0.0
        Weight of the singular value term (paper grid ``0, 1e-10 .. 1e-1``); 0 runs no
        proximal step.
    theta : int >= 0, float in (0, 1) or None, default=None
        Singular values kept (``shrink="tail"``) or shrunk (``"head"``);
        ``theta <= min(K, D)``. A float in (0, 1) is a fraction of ``min(K, D)``, rounded
        to the nearest integer (the paper's grid ``{0, 0.1, ..., 0.9} x min(K, D)``, which
        one config can then use for every dataset and space). None:
        ``ceil(min(K, D) / 2)``, the default of an older commit of the authors' code (their
        final code uses ``ceil(0.3 min(K, D))``; ``theta=0.3`` rounds to the nearest integer
        instead, which differs when ``0.3 min(K, D)`` has a fractional part below 1/2).
        With ``"tail"``, ``theta = 0`` is the trace norm and ``theta = min(K, D)`` no
        shrinkage (section 6.5).
    shrink : {"tail", "head"}, default="tail"
        ``"tail"``: the exact proximal step of ``tau_S sum_{j > theta} s_j`` (objective (11),
        Appendix D): the ``theta`` largest singular values are kept and the others
        soft-thresholded. ``"head"``: the update as printed in Algorithm 1, eqs. (13) and
        (16), which soft-thresholds the ``theta`` largest and keeps the others.
    n_neighbors : int >= 1, default=10
        k of the k-NN graph (section 6.1.3); must be below the number of training rows.
    graph : {"union", "mutual"}, default="union"
        Symmetrisation of the k-NN relation: an edge when either row is among the other's
        neighbours, or only when both are (the authors' code).
    batch_size : int >= 1, default=32
        m, rows per mini-batch (the authors' code uses 32).
    epochs : int >= 1, default=10
        Passes over the labelled rows (T = epochs * ceil(n / m) steps; the authors' code
        runs 10), extended to at least ``min_steps`` steps.
    min_steps : int >= 0, default=1000
        The fewest mini-batch steps T: more epochs run when ``epochs`` passes would take
        fewer. Ten passes over a small labelled set leave the objective near its starting
        value (vehicle, 60 labelled rows, multi-class hinge: 1.09 to 1.03 after 10 epochs of
        2 steps, 0.32 after 1000 steps); 1000 steps are about 7 epochs of corel5k, so large
        sets keep the authors' 10 epochs. 0: exactly ``epochs`` passes.
    safeguard : bool, default=True
        Keep the iterate with the lowest objective (11) at the end of an epoch and return it;
        when an epoch ends with more than twice that objective, go back to it and halve all
        further steps. Algorithm 1's step-size rule does not decrease, and with the authors'
        eps it overshoots on dense linear multi-label data (yeast: the objective reaches 3.35,
        then ends at 47.7 after 1000 steps; with the safeguard the fit keeps the best iterate
        and damps the steps). False: Algorithm 1 as printed, returning the last iterate.
    rho : float in [0, 1), default=0.5
        The forget factor xi of the step size (authors' code: 0.5; the paper gives no value).
    eps : float > 0, default=1e-2
        The conditioning constant epsilon (authors' code: 1e-2).
    prox_every : int >= 1, default=1
        The proximal step runs every ``prox_every`` mini-batches (and after the last one of
        every epoch) with the summed threshold ``tau_S sum eta_t`` of the steps since the last
        one. 1 is Algorithm 1.
    tol : float >= 0 or None, default=None
        Stop after an epoch whose objective (11) changed by at most ``tol`` times the
        previous epoch's. None: run all ``epochs`` (Algorithm 1's fixed T).
    scale_features : {"auto", "none"}, default="auto"
        ``"auto"``: when some training feature value lies outside ``[-1, 1]``, every feature
        is divided by its largest absolute training value before the feature map
        (:mod:`mlx.methods._scale`; the step-size rule and ``tau_A`` assume features on that
        scale; the paper configs scale by ``preprocess: [minmax]`` and are left as they are)
        and ``message_`` says so.
    random_state : None or int, default=None
        Seeds Omega and b, the median-heuristic rows and the mini-batch order.

    Attributes
    ----------
    W_ : ndarray of shape (D, K)
    theta_ : int
        The theta used.
    rff_ : RandomFourierFeatures or None
    n_features_in_ : int
    n_iter_ : int
        Epochs run.
    n_steps_, n_prox_ : int
        Mini-batch steps and proximal steps taken.
    objective_ : list of float
        Objective (11) after every epoch (with ``T(W)`` the sum the step shrinks:
        ``sum_{j > theta}`` for tail, ``sum_{j <= theta}`` for head).
    converged_ : bool
        Whether the ``tol`` test stopped the fit. Without a test (``tol=None``, a fixed
        number of epochs): whether the last epoch changed the objective by at most
        :data:`~mlx.methods._status.SETTLED_RTOL` (1e-3) of the previous one's value, i.e.
        whether the epochs were enough (False after one epoch). When False, raise
        ``epochs`` or ``min_steps``.
    empty_outputs_ : ndarray of int
        Classes / labels with no labelled (observed) positive example; their weights are
        shaped by the regularisers only. Empty for regression.
    message_ : str
        A note about ``empty_outputs_`` ("" when there are none).
    n_damped_ : int
        How many times the safeguard halved the steps.
    manifold_route_ : str or None
        ``"eig"`` or ``"sparse"`` (see EIG_MAX_FEATURES); None when ``tau_I = 0``.

    Notes
    -----
    **Proximal step.** :func:`mlx.numerics.svt.partial_svt` diagonalises the Gram matrix of
    the smaller side of W (``min(K, D)`` square) instead of taking a full SVD of W, and reads
    the singular values as column norms (absolute error near ``1e-12 ||W||`` on graded
    spectra, against ``1e-8`` from the square roots of the eigenvalues; see that module).
    ``benchmarks/bench_lsvv.py`` times one step against the full SVD at corel5k's shape; the
    symmetric eigensolver is most of it, so ``prox_every`` is the remaining lever (the
    benchmark compares the objectives too). With the eig route the fit runs
    in the eigenbasis of ``M``: the rotation ``W~ = V'W`` is orthogonal, so losses, norms,
    singular values and the proximal step are those of the unrotated iteration (up to
    rounding), and ``M W`` costs ``D K`` instead of ``D^2 K`` flops per step.

    **Deviations and choices.** The paper writes ``E(h) = sum_ij S_ij ||h_i - h_j||^2 =
    tr(W' Phi~' L Phi~ W)``; the left side is twice the right; the algorithm's gradient
    ``2 tau_I Phi~ L Phi~' W`` belongs to the trace form used here. The graph is built in
    the chosen feature space. The paper's objective (11) penalises the tail
    ``sum_{j > theta}`` while its Algorithm 1 / eq. (16) / Proposition 2 shrink the first
    ``theta`` values; ``shrink`` offers both, the default being the exact proximal step of
    (11). (The authors' final ``lsvv_multi_train.m`` shrinks the first ``theta`` values, as
    Algorithm 1 prints, i.e. ``shrink="head"``; an older commit shrank the values from index
    ``theta`` on, 1-based: the tail plus the theta-th.) The authors' code starts from a
    uniform random W and measures ``||grad||`` with the spectral norm; Algorithm 1 (followed
    here) starts from 0 and uses the Frobenius norm. ``rho``, ``eps``, ``batch_size``,
    ``epochs`` are the authors' code defaults and ``theta=None`` that of an older commit of
    it (the paper gives none). No
    intercept (the paper has none). With ``tau_I = 0`` unlabelled rows only enter the median
    bandwidth. The mini-batch loss is divided by the rows in the batch (the authors' code
    divides a short last batch by the full batch size).

    References
    ----------
    Y. Liu, J. Li, L. Ding, X. Liu and W. Wang, "Learning vector-valued functions with local
    Rademacher complexity and unlabeled data", section 5 (eqs. (9)-(20), Algorithm 1),
    section 6.1 and Table 6.
    T.-H. Oh, Y.-W. Tai, J.-C. Bazin, H. Kim and I. S. Kweon, "Partial sum minimization of
    singular values in robust PCA", IEEE TPAMI 38(4), 2016 (the tail proximal step).
    M. D. Zeiler, "ADADELTA: an adaptive learning rate method", arXiv:1212.5701, 2012.
    """

    tasks = ("multilabel", "multiclass", "regression")
    supports_missing_labels = True
    uses_rank = False
    uses_unlabelled: ClassVar[bool] = True
    _parameter_constraints = TABLES["lsvv"].constraints

    def __init__(self, *, task: str = "multilabel", space: str = "linear",
                 n_components: int = 100, bandwidth: float | str = "median",
                 tau_A: float | str = "auto", tau_I: float = 0.0, tau_S: float = 0.0,
                 theta: int | None = None, shrink: str = "tail", n_neighbors: int = 10,
                 graph: str = "union", batch_size: int = 32, epochs: int = 10,
                 min_steps: int = 1000, safeguard: bool = True, rho: float = 0.5,
                 eps: float = 1e-2, prox_every: int = 1,
                 tol: float | None = None, scale_features: str = "auto",
                 random_state: int | None = None):
        self.task = task
        self.scale_features = scale_features
        self.space = space
        self.n_components = n_components
        self.bandwidth = bandwidth
        self.tau_A = tau_A
        self.tau_I = tau_I
        self.tau_S = tau_S
        self.theta = theta
        self.shrink = shrink
        self.n_neighbors = n_neighbors
        self.graph = graph
        self.batch_size = batch_size
        self.epochs = epochs
        self.min_steps = min_steps
        self.safeguard = safeguard
        self.rho = rho
        self.eps = eps
        self.prox_every = prox_every
        self.tol = tol
        self.random_state = random_state

    @property
    def threshold(self) -> float:
        """0.5 for multi-label (squared loss on 0/1 targets); 0 otherwise (unused there)."""
        return 0.5 if self._task().needs_threshold else 0.0

    # -- configuration checks -------------------------------------------------
    def _theta_error(self, K: int, D: int) -> InvalidParameterError | None:
        return lsvv_theta_error(self, K, D)

    def _neighbors_error(self, n_rows: int, exact: bool) -> InvalidParameterError | None:
        return lsvv_neighbors_error(self, n_rows, exact)

    def check_context(self, context) -> None:
        """Refuse ``theta > min(K, D)`` and, with ``tau_I > 0``, ``n_neighbors`` not below the
        number of training rows; sizes of 0 (unknown) are not checked."""
        lsvv_check_context(self, context)

    # -- data -----------------------------------------------------------------
    def _targets(self, X, Y, observed):
        """Canonical X and the task's targets: ``(X, targets, mask, n_outputs, empty)``."""
        task = self._task()
        if task.real_valued:
            X, T = task.fit_targets("LSVV", X, Y, observed)
            return X, T, None, T.shape[1], np.empty(0, dtype=np.int64)
        data = check_fit_data("LSVV", X, Y, observed)
        pos = data.positives
        if not task.multi_output:                               # one class per row
            classes = task.class_indices("LSVV", pos, data.observed)
            counts = np.bincount(pos.indices, minlength=pos.shape[1])
            return data.X, classes, None, pos.shape[1], np.flatnonzero(counts == 0)
        counts = np.diff(pos.tocsc().indptr)
        obs = data.observed
        if pos.shape[0] * pos.shape[1] <= _DENSE_TARGETS:
            pos = pos.toarray()
            obs = None if obs is None else obs.toarray()
        return data.X, pos, obs, data.n_labels, np.flatnonzero(counts == 0)

    def _feature_map(self, X, X_u, rng):
        """phi of the labelled and unlabelled rows (or None), and the map itself."""
        if self.space == "linear":
            return X, X_u, None
        bandwidth = self.bandwidth
        if bandwidth == "median":
            rows = X if X_u is None else sp.vstack([X, X_u], format="csr")
            bandwidth = median_distance(rows, rng)
        rff = draw_rff(rng, X.shape[1], self.n_components, float(bandwidth))
        return rff.transform(X), None if X_u is None else rff.transform(X_u), rff

    def _manifold(self, Phi, Phi_u):
        """The manifold term over labelled + unlabelled rows, or None when tau_I = 0."""
        if self.tau_I <= 0:
            return None
        if Phi_u is None or Phi_u.shape[0] == 0:
            Phi_all = Phi
        elif sp.issparse(Phi):
            Phi_all = sp.vstack([Phi, Phi_u], format="csr")
        else:
            Phi_all = np.vstack([Phi, Phi_u])
        n_all, D = Phi_all.shape
        err = self._neighbors_error(n_all, exact=True)
        if err is not None:
            raise err
        search = Phi_all
        if sp.issparse(search) and D <= _KDTREE_MAX_FEATURES:
            search = search.toarray()
        S = knn_graph(search, self.n_neighbors, mode=self.graph)
        L = graph_laplacian(S)
        route = "eig" if D <= EIG_MAX_FEATURES else "sparse"
        return _Manifold(Phi_all, L, route)

    # -- fit / predict ----------------------------------------------------------
    def _fit(self, X, Y, *, observed=None, unlabelled=None):
        """Fit W by Algorithm 1.

        Parameters
        ----------
        X : sparse matrix or ndarray of shape (n_samples, n_features)
            Labelled rows.
        Y : sparse matrix or ndarray of shape (n_samples, K)
            0/1 labels (multi-label), one-hot classes (multi-class) or real targets
            (regression).
        observed : sparse matrix of shape (n_samples, K) or None
            Multi-label only: stored entries mark the observed labels; the loss runs over
            them. None: all observed.
        unlabelled : sparse matrix or ndarray of shape (n_unlabelled, n_features) or None
            Unlabelled rows; they enter the k-NN graph (tau_I > 0) and the median bandwidth.

        Returns
        -------
        self

        Raises
        ------
        InvalidParameterError
            A parameter out of range, ``theta > min(K, D)``, or ``n_neighbors`` not below the
            number of training rows (with ``tau_I > 0``).
        ValueError
            Mismatched shapes, non-finite values, bad targets for the task.
        DivergenceError
            W became non-finite.
        """
        self._validate_params()
        start = time.perf_counter()
        self.auto_ = {}
        X = self._targets(X, Y, observed)[0]                     # checked (a canonical copy)
        if is_auto(self.tau_A):
            return fit_holdout(self, "tau_A", log_grid(1e-4), X, Y, observed=observed,
                               task=self._task(), unlabelled=unlabelled)
        self.feature_scale_, scale_note = fit_scale(X, self.scale_features, "LSVV")
        X = apply_scale(X, self.feature_scale_)
        if unlabelled is not None:
            unlabelled = apply_scale(unlabelled, self.feature_scale_)
        rng = np.random.default_rng(self.random_state)
        problem, rff, n_features, K, empty = self._problem(X, Y, observed, unlabelled, rng)
        manifold, theta = problem.manifold, problem.theta
        n, D = problem.Psi.shape
        prox = self.tau_S > 0 and (theta < min(K, D) if self.shrink == "tail" else theta > 0)

        def shrink(W, tau):                                      # the proximal step, (13)
            return partial_svt(W, tau, theta, shrink=self.shrink)

        # Algorithm 1 from W_1 = 0: Adadelta-style steps (12), then the proximal step (13)
        res = proximal_adadelta(
            lambda W, rows: problem.gradient(W, rows)[1], problem.objective,
            np.zeros((D, K)), n, rng=rng, batch_size=self.batch_size, epochs=self.epochs,
            min_steps=self.min_steps, prox=shrink if prox else None, prox_weight=self.tau_S,
            prox_every=self.prox_every, rho=self.rho, eps=self.eps, safeguard=self.safeguard,
            tol=self.tol)
        if res.diverged:
            raise DivergenceError(
                f"LSVV: the weights became non-finite in epoch {res.n_epochs}; try larger "
                f"regularisation, a smaller eps or rho, or scaled features")
        W, history = res.x, res.objective
        if manifold is not None and manifold.route == "eig":
            W = manifold.V @ W                                   # back to the original basis
        self.W_ = W
        self.theta_ = theta
        self.rff_ = rff
        self.n_features_in_ = n_features
        self.n_iter_ = res.n_epochs
        self.n_steps_ = res.n_steps
        self.n_prox_ = res.n_prox
        self.objective_ = history
        self.n_damped_ = res.n_damped
        # Without a tol test (Algorithm 1's fixed T), say whether T was long enough.
        self.converged_ = settled(history) if res.converged is None else res.converged
        self.empty_outputs_ = empty
        self.manifold_route_ = None if manifold is None else manifold.route
        noun = "labels" if self._task().multi_output else "classes"
        self.message_ = "; ".join(m for m in [scale_note, "" if empty.size == 0 else (
            f"{empty.size} of {K} {noun} have no labelled (observed) positive example; their "
            f"weights come from the regularisers only")] if m)
        log.debug("lsvv fit (%s, %s) %d epochs, %d steps, %d prox steps in %.2fs", self.task,
                  self.space, res.n_epochs, res.n_steps, res.n_prox, time.perf_counter() - start)
        return self

    def _problem(self, X, Y, observed, unlabelled, rng):
        """Check the data, map the features, build the graph: ``(problem, rff, n_features,
        n_outputs, empty_outputs)``. Draws from ``rng`` (median rows, Omega,
        b) exactly as ``fit`` does before its first epoch."""
        X, targets, mask, K, empty = self._targets(X, Y, observed)
        d = X.shape[1]
        X_u = None
        if unlabelled is not None:
            X_u = as_float_csr(unlabelled, "unlabelled", "LSVV")
            if X_u.shape[1] != d:
                raise ValueError(f"LSVV: unlabelled has {X_u.shape[1]} features but X has {d}")
            if X_u.shape[0] == 0:
                X_u = None
        Phi, Phi_u, rff = self._feature_map(X, X_u, rng)
        D = Phi.shape[1]
        err = self._theta_error(K, D)
        if err is not None:
            raise err
        if self.theta is None:
            theta = math.ceil(min(K, D) / 2)
        elif isinstance(self.theta, float):
            theta = int(round(self.theta * min(K, D)))
        else:
            theta = int(self.theta)
        manifold = self._manifold(Phi, Phi_u)
        Psi = Phi
        if manifold is not None and manifold.route == "eig":
            Psi = np.asarray(Phi @ manifold.V)                   # rotated: W~ = V' W
        problem = _Problem(Psi, targets, mask, manifold, tau_A=self.tau_A,
                           tau_I=self.tau_I, tau_S=self.tau_S, theta=theta, shrink=self.shrink)
        return problem, rff, d, K, empty

    def _decision_function(self, X) -> np.ndarray:
        """Scores ``phi(X) W_`` of shape (n_rows, K); any row slice is scored on its own."""
        check_is_fitted(self, "W_")
        X = apply_scale(check_n_features("LSVV", X, self.n_features_in_), self.feature_scale_)
        Phi = X if self.rff_ is None else self.rff_.transform(X)
        return np.asarray(Phi @ self.W_, dtype=np.float64)
