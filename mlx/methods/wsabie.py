"""WSABIE: a joint embedding of features and labels trained with the WARP ranking loss.

The stochastic gradient loop is compiled (:mod:`mlx.numerics.warp`); this module prepares
the sparse arrays, owns the random generator and the epoch loop, and checks for divergence.
"""

from __future__ import annotations

import logging
import time

import numpy as np
import scipy.sparse as sp

from mlx.errors import DivergenceError
from mlx.methods._auto import fit_holdout, is_auto, log_grid
from mlx.methods._scale import apply_scale, fit_scale
from mlx.methods._validation import check_fit_data, check_n_features, pattern
from mlx.methods.base import (
    METHODS,
    BaseMethod,
    check_is_fitted,
    ranking_only_failed_checks,
)
from mlx.methods.table import TABLES

__all__ = ["WSABIE"]

log = logging.getLogger(__name__)


def _index_arrays(M: sp.csr_matrix) -> tuple[np.ndarray, np.ndarray]:
    return (np.ascontiguousarray(M.indptr, dtype=np.int64),
            np.ascontiguousarray(M.indices, dtype=np.int64))


_NO_THRESHOLD = ("WSABIE only ranks labels: it has no decision threshold, so predict (and score "
                 "on a 1-D y) raise ValueError; use decision_function")


@METHODS.register("wsabie")
class WSABIE(BaseMethod):
    r"""WSABIE: low-dimensional joint embedding trained with the WARP loss.

    Label ``j`` scores ``f_j(x) = u_j' V x`` with ``V`` of shape ``(rank, n_features)``
    (column ``V[:, f]`` embeds feature ``f``) and ``U`` of shape ``(n_labels, rank)``
    (row ``u_j`` embeds label ``j``). Training minimises the WARP loss

        sum_i sum_{y in P_i} sum_{n in N_i}  L(rank_y(x_i)) / rank_y(x_i)
                                             * max(0, margin - f_y(x_i) + f_n(x_i)),
        L(r) = sum_{q=1}^{r} 1/q,   rank_y(x) = #{n in N_i : margin + f_n(x) > f_y(x)},

    subject to ``||u_j|| <= max_norm`` for every label and ``||V[:, f]|| <= max_norm`` for
    every feature, by stochastic gradient descent. ``P_i`` are the positives of row ``i``
    and ``N_i`` its candidate negatives. Each epoch visits every (instance, positive label)
    pair once in random order; for each it samples negatives uniformly from ``N_i`` until
    one violates the margin, estimates ``rank_y`` as ``floor(|N_i| / draws)``, and takes
    one projected gradient step on the weighted hinge of that negative
    (:func:`mlx.numerics.warp.warp_epoch` has the exact update).

    Parameters
    ----------
    rank : int >= 1, default=10
        Embedding dimension.
    learning_rate : float > 0 or "auto", default="auto"
        Constant SGD step size; ``"auto"`` chooses it on a hold-out split of the training rows,
        from 1e-7 to 10. ``"auto"``: the best of ``1e-7 .. 10`` (a decade apart,
        walking from 1e-3 towards the better neighbour while the score improves) by the mean of P@1
        and AUC on a hold-out split of 20% of the training
        rows, then a fit on every row (:mod:`mlx.methods._auto`); 1e-3 was the fixed default
        chosen on bibtex (the paper configs set it).
    margin : float > 0, default=30.0
        Hinge margin; a negative violates when ``f_n > f_y - margin``.
    max_norm : float > 0 or None, default=10.0
        Radius ``C`` of the norm balls (the regulariser); None: no constraint.
    epochs : int >= 1, default=10
        Passes over all (instance, positive label) pairs.
    scale_features : {"auto", "none"}, default="auto"
        ``"auto"``: when some training feature value lies outside ``[-1, 1]``, every feature
        is divided by its largest absolute training value (:mod:`mlx.methods._scale`; the
        step size and norm bound assume features on that scale) and ``message_`` says so.
    random_state : None or int, default=None
        Seeds the initial embeddings and every epoch's order and negative samples.

    The defaults were chosen on a validation split (20% of the rows, seed 0) of bibtex's
    training set with its binary features as stored (about 70 non-zeros per row), rank 32
    and full labels: the best validation AUC (0.932; top-1 0.562) of a grid over learning
    rates 1e-4 to 3e-3, norm radii 1 to 20, margins 1 to 30 and 5 to 40 epochs
    (``benchmarks/bench_baselines.py
    --tune``). Which negatives violate depends on ``margin`` relative to the score scale,
    which grows with ``max_norm^2`` and with the size of the feature rows, so features of
    another scale (e.g. after ``l2_normalize``) need their own values. Weston et al. use
    ``margin=1``.

    Attributes
    ----------
    U_ : ndarray of shape (n_labels, rank)
        Label embeddings.
    V_ : ndarray of shape (rank, n_features)
        Feature embeddings (a transposed view of the C-contiguous ``(n_features, rank)``
        array the kernel updates).
    objective_ : list of float
        Per epoch, the mean over the epoch's pairs of the weighted hinge at the sampled
        violating negative (0 when none was found), measured before each step: a running
        estimate of the WARP objective, not the exact loss at the epoch's end.
    epoch_seconds_ : list of float
        Wall time of each epoch (the first includes compiling the kernel unless it is
        already in numba's on-disk cache).
    n_iter_ : int
        Epochs run (``epochs``).
    converged_ : None
        Not known. WSABIE runs a fixed number of epochs and has no stopping test, and its
        ``objective_`` is a sampled running estimate too noisy to tell a plateau (on a
        planted low-rank set it moves by 2-60 % from epoch to epoch after 40 epochs and
        still by 15-280 % after 200, while falling towards 0), so it does not claim
        convergence either way; the results table leaves the cell empty.
    n_features_in_ : int

    Notes
    -----
    **Missing labels.** Only observed entries take part: positives are the stored entries
    of ``Y`` inside ``observed``, and the candidate negatives ``N_i`` of row ``i`` are its
    observed zeros (entries of ``observed`` where ``Y`` is 0). Unobserved labels are never
    sampled. With full labels ``N_i`` is every label that is not a positive of row ``i``,
    sampled without materialising it. Rows with no positive contribute no pair; a pair whose
    row has no candidate negative is skipped. Labels that are never a positive are only
    pushed down as negatives.

    **Thresholds.** WSABIE produces a ranking, not a 0/1 decision: scores have no natural
    cut-off, so ``threshold`` is None and the runner leaves Hamming loss and F1 blank for it
    (with the reason), as the LEML paper reports no Hamming loss for it. A config may still
    set ``methods[].threshold`` to compute them at a cut-off of its choosing.

    **Initialisation.** Entries of ``U`` and ``V`` are drawn from ``N(0, 1/rank)`` and then
    projected onto the norm balls.

    **Determinism.** All randomness comes from ``np.random.default_rng(random_state)``:
    the initial embeddings, then per epoch a permutation of the pairs and a seed for the
    kernel's negative sampler. Fits with the same ``random_state`` on the same machine are
    bitwise identical; on CPUs with another SIMD width the dot products and norms may
    round differently in the last bits (see :mod:`mlx.numerics.warp`).

    Deviations from the papers: the rank estimate uses ``|N_i|`` (the number of candidate
    negatives of the row) instead of ``n_labels - 1``, which it equals for single-label
    rows; epochs are passes over a permutation of all pairs rather than i.i.d. draws of
    pairs; the step size is constant. The LEML paper hand-tuned the learning rate and the
    margin per dataset and reported the epoch with the best test AUC; here hyper-parameters
    and the number of epochs are fixed in advance.

    References
    ----------
    J. Weston, S. Bengio and N. Usunier, "Large scale image annotation: learning to rank
    with joint word-image embeddings", Machine Learning 81(1), 2010, section 3 (WARP loss,
    Algorithm 1, the max-norm constraints).
    J. Weston, S. Bengio and N. Usunier, "WSABIE: scaling up to large vocabulary image
    annotation", IJCAI 2011.
    H.-F. Yu, P. Jain, P. Kar and I. S. Dhillon, "Large-scale multi-label learning with
    missing labels", ICML 2014, section 5 (WSABIE as a baseline).
    """

    supports_missing_labels = True
    uses_rank = True
    _parameter_constraints = TABLES["wsabie"].constraints

    # scikit-learn's checks that call predict (see expected_failed_checks)
    _expected_failed_checks = ranking_only_failed_checks(_NO_THRESHOLD)

    def __init__(self, *, rank: int = 10, learning_rate: float | str = "auto",
                 margin: float = 30.0, max_norm: float | None = 10.0, epochs: int = 10,
                 scale_features: str = "auto", random_state: int | None = None):
        self.rank = rank
        self.scale_features = scale_features
        self.learning_rate = learning_rate
        self.margin = margin
        self.max_norm = max_norm
        self.epochs = epochs
        self.random_state = random_state

    @property
    def threshold(self) -> None:
        """None: WSABIE ranks labels and has no decision threshold (see Notes)."""
        return None

    def _fit(self, X, Y, *, observed=None):
        """Train the embeddings by WARP stochastic gradient descent.

        Parameters
        ----------
        X : sparse matrix of shape (n_samples, n_features)
        Y : sparse matrix of shape (n_samples, n_labels)
            Stored non-zeros are positives.
        observed : sparse matrix of shape (n_samples, n_labels) or None
            Stored entries mark the observed (instance, label) pairs; None: all observed.

        Returns
        -------
        self

        Raises
        ------
        DivergenceError
            When the embeddings become non-finite (only possible with ``max_norm=None``).
        """
        self._validate_params()
        start = time.perf_counter()
        self.auto_ = {}
        data = check_fit_data("WSABIE", X, Y, observed)
        if is_auto(self.learning_rate):
            return fit_holdout(self, "learning_rate", log_grid(1e-3), data.X, data.positives,
                               observed=data.observed)
        X, pos = data.X, data.positives                       # observed positives
        self.feature_scale_, self.message_ = fit_scale(X, self.scale_features, "WSABIE")
        X = apply_scale(X, self.feature_scale_)
        n, d = X.shape
        L = pos.shape[1]
        neg_indptr = neg_indices = None
        if data.observed is not None:
            neg = pattern(data.observed - pos)                # observed zeros
            neg_indptr, neg_indices = _index_arrays(neg)
        pos_indptr, pos_indices = _index_arrays(pos)
        x_indptr, x_indices = _index_arrays(X)
        x_data = np.ascontiguousarray(X.data, dtype=np.float64)

        from mlx.numerics.warp import project_rows, warp_epoch  # numba loads on first fit only

        k = int(self.rank)
        max_norm = None if self.max_norm is None else float(self.max_norm)
        rng = np.random.default_rng(self.random_state)
        U = rng.standard_normal((L, k)) / np.sqrt(k)
        VT = rng.standard_normal((d, k)) / np.sqrt(k)
        project_rows(U, max_norm)
        project_rows(VT, max_norm)

        objective = []
        seconds = []
        for epoch in range(1, self.epochs + 1):
            tic = time.perf_counter()
            res = warp_epoch(U, VT, x_indptr, x_indices, x_data, pos_indptr, pos_indices,
                             rng=rng, learning_rate=float(self.learning_rate),
                             margin=float(self.margin), max_norm=max_norm,
                             neg_indptr=neg_indptr, neg_indices=neg_indices)
            if not (np.isfinite(res.objective) and np.isfinite(U).all()
                    and np.isfinite(VT).all()):
                raise DivergenceError(
                    f"WSABIE diverged in epoch {epoch} (non-finite embeddings); try a smaller "
                    f"learning_rate or max_norm (learning_rate={self.learning_rate}, "
                    f"max_norm={self.max_norm})")
            seconds.append(time.perf_counter() - tic)
            objective.append(float(res.objective))
            log.debug("wsabie epoch %d: objective %.6g, %d/%d updates, %d draws", epoch,
                      res.objective, res.n_updates, res.n_pairs, res.n_draws)

        self.U_ = U
        self.V_ = VT.T
        self.objective_ = objective
        self.epoch_seconds_ = seconds
        self.n_iter_ = int(self.epochs)
        self.converged_ = None          # no stopping test, and no reliable one (see above)
        self.n_features_in_ = d
        log.debug("wsabie fit %d epochs (rank %d) in %.2fs", self.epochs, k,
                  time.perf_counter() - start)
        return self

    def _decision_function(self, X) -> np.ndarray:
        """Scores ``X V_' U_'`` of shape (n_rows, n_labels), for any row slice."""
        check_is_fitted(self, "U_")
        X = apply_scale(check_n_features("WSABIE", X, self.n_features_in_), self.feature_scale_)
        return np.asarray(X @ self.V_.T) @ self.U_.T
