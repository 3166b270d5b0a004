"""CPLST: conditional principal label space transformation (Chen and Lin, NIPS 2012).

Everything is computed from three dense matrices, ``X'X`` (n_features x n_features),
``X'Y`` (n_features x n_labels) and ``Y'HY`` (n_labels x n_labels); the ``n_samples x
n_samples`` hat matrix is never formed. With fewer rows than features the Gram matrix is
``XX'`` (n_samples x n_samples) instead, and the centred labels are then formed densely
(n_samples x n_labels).
"""

from __future__ import annotations

import logging
import time

import numpy as np
import scipy.linalg as sla

from mlx.methods._auto import AutoChoice, is_auto, loo_prior_weight, loo_rows, record
from mlx.methods._validation import check_fit_data, check_n_features
from mlx.methods.base import METHODS, BaseMethod, check_is_fitted
from mlx.methods.table import TABLES
from mlx.numerics.regpath import RidgePath, leave_one_out, tridiag_pays
from mlx.numerics.ridge import psd_solve
from mlx.numerics.spmm import gram

__all__ = ["CPLST"]

log = logging.getLogger(__name__)

DENSE_MAX = 20000
"""Largest order of a dense square matrix CPLST forms: the Gram matrix of the smaller of
``n_samples`` and ``n_features`` (``X'X``, or ``XX'`` when there are fewer rows than
features) and the ``n_labels x n_labels`` ``Yc' H Yc``; its ``n_features x n_labels``
matrices may hold as many entries (20000^2 float64 is 3.2 GB)."""


@METHODS.register("cplst")
class CPLST(BaseMethod):
    r"""Conditional principal label space transformation (CPLST).

    With the label means ``mu = Y' 1 / n`` and the centred labels ``Yc = Y - 1 mu'``,
    CPLST picks an orthonormal label projection ``V`` (n_labels x rank) and ridge
    weights ``W`` (n_features x rank) minimising

        ||X W - Yc V||_F^2 + l2_reg ||W||_F^2  +  ||Yc - Yc V V'||_F^2      s.t. V'V = I,

    (prediction error in the projected space plus encoding error). For fixed ``V`` the
    optimal ``W = (X'X + l2_reg I)^-1 X' Yc V``; substituting it, ``V`` holds the top
    ``rank`` eigenvectors of ``Yc' H Yc`` with the ridge hat matrix
    ``H = X (X'X + l2_reg I)^-1 X'``. Scores decode the projection back to labels::

        scores(x) = x' W V' + mu'.

    Computation: ``X'Yc = X'Y - (X'1) mu'`` from the sparse ``X'Y``;
    ``A = (X'X + l2_reg I)^-1 X'Yc`` by one Cholesky factorisation, or, with fewer rows than
    features, ``A = X'(XX' + l2_reg I)^-1 Yc`` (the same matrix, from the ``n x n`` Gram
    matrix); ``Yc' H Yc = (X'Yc)' A`` (n_labels x n_labels); then ``W = A V``. Cost
    ``O(nnz(X) m + m^3 + m^2 L + d L^2 + L^3)`` for ``m = min(n_samples, n_features)``,
    ``d = n_features``, ``L = n_labels``.

    Parameters
    ----------
    rank : int >= 1, default=10
        Dimension of the label projection. Values above ``n_labels`` are clamped to it
        (``rank_``); with ``rank_ = n_labels``, ``V V' = I`` and CPLST is ridge regression
        on every label (binary relevance with squared loss and the label mean as bias).
    l2_reg : float >= 0 or "auto", default="auto"
        Ridge penalty ``lambda`` in ``X'X + lambda I``; ``"auto"`` takes the penalty of lowest
        generalised cross-validation for the centred labels. ``"auto"``: the penalty of lowest
        generalised cross-validation for the ridge regression of the centred labels on
        ``X``, over a path of 34 penalties from ``1e-10`` to ``10`` times the largest
        eigenvalue of ``X'X``, all from one eigendecomposition of ``X'X`` (of ``X X'`` when
        there are fewer rows than features; :mod:`mlx.numerics.regpath`), which then gives
        ``A`` without a Cholesky solve, and the leave-one-out scores of the fallback to the
        constant (:func:`mlx.methods._auto.loo_prior_weight`). The
        authors' released code, which the LEML paper ran, fixes 0.1 (the paper configs set
        it). ``l2_reg = 0`` is allowed and uses the pseudo-inverse ``(X'X)^+`` (the paper's
        formulation, ``H = X X^+`` and ``W = X^+ Yc V``). Larger values regularise more: on
        a validation split of bibtex's training set (rank 32) top-1 accuracy rises from
        0.540 at 0.1 to 0.564 at 10.
    random_state : None or int, default=None
        Unused: CPLST is deterministic. Accepted for a uniform interface.

    Attributes
    ----------
    W_ : ndarray of shape (n_features, rank_)
        Ridge weights onto the projected labels.
    H_ : ndarray of shape (n_labels, rank_)
        The orthonormal label projection ``V``, columns by decreasing eigenvalue.
    mean_ : ndarray of shape (n_labels,)
        Label means ``mu`` added back when decoding.
    eigenvalues_ : ndarray of shape (rank_,)
        The top eigenvalues of ``Yc' H Yc``, decreasing.
    rank_ : int
        ``min(rank, n_labels)``.
    n_features_in_ : int
    n_iter_ : int
        Always 1 (closed form).
    converged_ : bool
        Always True.

    Notes
    -----
    Full labels only (``supports_missing_labels = False``): the eigenproblem needs every
    entry of ``Y``, so :meth:`skip` declines ``observed_ratio < 1`` and :meth:`fit`
    rejects a partial ``observed`` mask.

    Targets are 0/1, so ``threshold`` is 0.5 (a label is predicted when its decoded score
    exceeds 1/2). The authors' code encodes labels as +-1; after centring this only scales
    ``Yc`` by 2, which leaves ``V`` unchanged and maps scores to ``2 * scores - 1``, so
    rankings and thresholded predictions are identical.

    With ``l2_reg -> 0`` and full labels CPLST is LEML's closed-form squared-loss solution
    applied to the centred labels (LEML paper, Claims 1 and 2):
    ``W V' = V_X S_X^-1 M_k`` for the thin SVD ``X = U_X S_X V_X'`` and the rank-``k``
    truncated SVD ``M_k`` of ``U_X' Yc``.

    Deviations from the authors' code: no constant feature is appended to ``X`` (the label
    mean ``mu`` plays the part of the bias, as in the paper's formulation); ``V`` comes from
    a symmetric eigendecomposition instead of an SVD of the same PSD matrix.

    References
    ----------
    Y.-N. Chen and H.-T. Lin, "Feature-aware label space dimension reduction for
    multi-label classification", NIPS 2012, section 3 (the CPLST objective and its
    closed-form solution with ridge regression).
    H.-F. Yu, P. Jain, P. Kar and I. S. Dhillon, "Large-scale multi-label learning with
    missing labels", ICML 2014, section 3, Claims 1 and 2.
    """

    supports_missing_labels = False
    uses_rank = True
    _parameter_constraints = TABLES["cplst"].constraints

    def __init__(self, *, rank: int = 10, l2_reg: float | str = "auto",
                 random_state: int | None = None):
        self.rank = rank
        self.l2_reg = l2_reg
        self.random_state = random_state

    @property
    def threshold(self) -> float:
        """0.5: CPLST regresses 0/1 targets."""
        return 0.5

    def skip(self, context) -> str | None:
        """Decline missing labels, and problems whose dense matrices would not fit."""
        reason = super().skip(context)
        if reason is not None:
            return reason
        n, d, L = context.n_samples, context.n_features, context.n_labels
        if L > DENSE_MAX:
            return (f"{self.name} needs a dense n_labels x n_labels matrix; n_labels={L} "
                    f"exceeds {DENSE_MAX}")
        if min(n, d) > DENSE_MAX:
            return (f"{self.name} needs a dense Gram matrix of order min(n_samples, "
                    f"n_features); n_samples={n} and n_features={d} both exceed {DENSE_MAX}")
        if d * L > DENSE_MAX ** 2:
            return (f"{self.name} needs dense n_features x n_labels matrices; n_features={d} "
                    f"x n_labels={L} exceeds {DENSE_MAX}^2 entries")
        return None

    def _fit(self, X, Y, *, observed=None):
        """Fit the label projection and the ridge weights.

        Parameters
        ----------
        X : sparse matrix of shape (n_samples, n_features)
        Y : sparse matrix of shape (n_samples, n_labels)
            Stored non-zeros are positives.
        observed : None, or a sparse matrix of shape (n_samples, n_labels) that stores
            every entry. CPLST needs full labels; a partial mask raises ``ValueError``.

        Returns
        -------
        self
        """
        self._validate_params()
        start = time.perf_counter()
        data = check_fit_data("CPLST", X, Y, observed)
        if data.observed is not None:
            raise ValueError("CPLST does not support missing labels: observed must be None "
                             "or mark every entry of Y")
        X, P = data.X, data.positives                                     # P: 0/1 pattern of Y
        n, d = X.shape
        L = P.shape[1]
        rank = int(min(self.rank, L))
        self.auto_ = {}

        mean = np.asarray(P.sum(axis=0)).ravel() / n                    # mu = Y'1 / n
        col_sums = np.asarray(X.sum(axis=0)).ravel()                      # X'1
        B = (X.T @ P).toarray() - np.outer(col_sums, mean)                # X'Yc  (d, L)
        if is_auto(self.l2_reg):                                          # GCV on the ridge path
            A, path = self._gcv_solve(X, P, B, mean)
        elif d > n:                           # fewer rows than features: the n x n Gram XX'
            K = gram(X, rows=True)                                        # XX'   (n, n)
            Z = psd_solve(K, P.toarray() - mean, float(self.l2_reg), overwrite_a=True)
            A = np.asarray(X.T @ Z)                                       # X'(XX' + lam I)^-1 Yc
        else:
            G = gram(X)                                                   # X'X   (d, d)
            A = psd_solve(G, B, float(self.l2_reg), overwrite_a=True)     # (X'X + lam I)^-1 X'Yc
        M = B.T @ A                                                       # Yc' H Yc  (L, L)
        M = 0.5 * (M + M.T)
        evals, evecs = sla.eigh(M, subset_by_index=[L - rank, L - 1], check_finite=False)
        order = np.argsort(-evals, kind="stable")
        V = np.ascontiguousarray(evecs[:, order])                         # top-rank eigenvectors
        # A label positive in no training row (or in all) has a zero centred column: its row of
        # M, and so of every eigenvector with a non-zero eigenvalue, is 0. The eigensolver
        # leaves rounding noise there (1e-16), which would rank such labels among themselves
        # by noise; set it to 0, so that they score their mean exactly.
        V[(mean == 0.0) | (mean == 1.0)] = 0.0
        self.W_ = A @ V                                                   # (X'X + lam I)^-1 X'Yc V
        self.H_ = V
        self.mean_ = mean
        self.eigenvalues_ = evals[order]
        self.rank_ = rank
        self.n_features_in_ = d
        self.n_iter_ = 1
        self.converged_ = True
        if is_auto(self.l2_reg):                # a path that ends at the label frequencies
            lam = self.auto_["l2_reg"].value
            loo_prior_weight(self, X, P, lambda rows: self._loo_scores(path, lam, X, P, rows))
        log.debug("cplst fit rank %d (d=%d, L=%d) in %.2fs", rank, d, L,
                  time.perf_counter() - start)
        return self

    def _gcv_solve(self, X, P, B, mean):
        """``(X'X + lam I)^-1 X'Yc`` at the penalty of lowest GCV for the centred labels."""
        from mlx.methods.leml import gram_eigh, gram_tridiagonal

        n, d = X.shape
        L = P.shape[1]
        t_sq = float(P.multiply(P).sum()) - n * float(mean @ mean)     # ||Yc||^2
        rows = loo_rows(n, L)
        if d <= n and tridiag_pays(d, L, rows):  # X'X's factors, cached and shared with LEML
            path = RidgePath(X, None, tri=gram_tridiagonal(X), t_sq=t_sq, XtT=B)
        elif d <= n:
            eig = gram_eigh(X)
            path = RidgePath(X, None, eig=(eig.evals, eig.evecs, True), t_sq=t_sq, XtT=B)
        else:                                   # fewer rows than features: the n x n Gram
            path = RidgePath(X, P.toarray() - mean, t_sq=t_sq, leverage_rows=rows)
        choice = path.choose()
        record(self, AutoChoice("l2_reg", choice.value, "gcv", tuple(choice.grid),
                                tuple(choice.scores)))
        return path.coef(choice.value), path

    def _loo_scores(self, path, lam: float, X, P, rows) -> np.ndarray:
        """Leave-one-out scores of training ``rows``: the ridge's exact leave-one-out
        prediction of the projected centred labels ``(y_i - mean) H H'`` (the projection ``H``
        held fixed) plus the mean of the other rows."""
        n = X.shape[0]
        Yr = P[rows].toarray()
        fitted = np.asarray(X[rows] @ self.W_) @ self.H_.T
        targets = ((Yr - self.mean_) @ self.H_) @ self.H_.T
        loo = leave_one_out(fitted, targets, path.leverage(lam, rows))
        return loo + (n * self.mean_ - Yr) / max(n - 1, 1)

    def _decision_function(self, X) -> np.ndarray:
        """Scores ``X W_ H_' + mean_`` of shape (n_rows, n_labels), for any row slice."""
        check_is_fitted(self, "W_")
        X = check_n_features("CPLST", X, self.n_features_in_)
        scores = np.asarray(X @ self.W_) @ self.H_.T
        scores += self.mean_
        return scores
