"""MoM: the spectral (method-of-moments) latent-variable model for multi-label text.

A document has one latent state ``h`` in ``{1..K}``; given ``h`` its words and its labels are
independent draws (ICLR 2018 submission "Multi-label learning for large text corpora using
latent variable model with provable guarantees", Sections 2-4). The parameters
``pi = P[h]``, ``P[v|h]`` and ``P[l|h]`` come from three passes over the training data:
the word co-occurrence moment and its top-``K`` eigenpairs (whitening), the whitened
third moment and its orthogonal tensor eigenpairs (robust tensor power method with
deflation), and one label pass. Neither a dense ``n_features x n_features`` matrix (past
:data:`~mlx.numerics.eigen.DENSE_EIG_MAX` features) nor a ``K x K x K`` tensor is ever
formed. The numerical parts live in :mod:`mlx.numerics`: the moments and the whitening in
:mod:`~mlx.numerics.moments` (which says why the tensor stays implicit), the tensor power
method in :mod:`~mlx.numerics.tensor_power`; this module is the estimator.
"""

from __future__ import annotations

import logging
import time

import numpy as np
import scipy.sparse as sp
from threadpoolctl import threadpool_limits

from mlx.methods._auto import fit_holdout, is_auto, log_grid
from mlx.methods._validation import as_float_csr, check_fit_data, pattern
from mlx.methods.base import (
    METHODS,
    BaseMethod,
    InvalidParameterError,
    check_is_fitted,
)
from mlx.methods.table import TABLES, mom_check_context, mom_rank_message
from mlx.numerics.moments import WhitenedMoments, second_moment_eigenpairs
from mlx.numerics.tensor_power import tensor_power_method

__all__ = ["MoM", "non_count_value"]

log = logging.getLogger(__name__)


def non_count_value(X: sp.csr_matrix) -> float | None:
    """A stored value of ``X`` that is not a word count (a negative or fractional number), or
    None when every value is a non-negative integer."""
    bad = X.data[(X.data < 0) | (X.data != np.round(X.data))]
    return float(bad[0]) if bad.size else None


def _normalise_columns(P: np.ndarray) -> np.ndarray:
    """Columns clipped at 0 and scaled to sum 1; a column with nothing positive is uniform."""
    P = np.maximum(P, 0.0)
    sums = P.sum(axis=0)
    ok = sums > 0
    P[:, ok] /= sums[ok]
    P[:, ~ok] = 1.0 / P.shape[0]
    return P


# ---------------------------------------------------------------------------
# The method
# ---------------------------------------------------------------------------

@METHODS.register("mom")
class MoM(BaseMethod):
    r"""Spectral latent-variable model for multi-label text (method of moments, "MoM").

    Model (paper, Section 2): a latent state ``h`` with ``P[h = k] = pi_k``; given ``h``, a
    document's words and labels are independent, with word distribution ``mu_k = P[v|h=k]``
    and label distribution ``gamma_k = P[l|h=k]``; labels are scored by

        P[l|d] = sum_k P[l|h=k] P[h=k|d].                                     (eq. 1)

    Fit (Algorithm 1, three passes over ``X``; ``K = rank``):

    1. ``M2 = X'X / sum_d m_d^2`` (``m_d``: words of document ``d``); its top-``K`` eigenpairs
       ``(sigma_k, omega_k)`` by Lanczos from products ``X'(X v)`` only, whitening
       ``W = Omega diag(sigma)^(-1/2)`` so that ``W' M2 W = I``.
    2. The whitened third moment ``T = M3(W, W, W)``, used only through ``T(I, u, u)``
       computed from ``A = X W`` (:class:`~mlx.numerics.moments.WhitenedMoments`); its
       eigenpairs ``(lambda_k, u_k)`` by the robust tensor power method with deflation
       (:func:`~mlx.numerics.tensor_power.tensor_power_method`). ``pi_k = lambda_k^-2``
       (normalised to sum 1), and ``P[v|h=k]`` is ``W^+ u_k = Omega diag(sigma)^(1/2) u_k``
       clipped at 0 and normalised.
    3. ``Gamma = Y'((X W U) * (X W U))``, clipped at 0, columns normalised: ``P[l|h]``.

    Prediction (Section 4), in log space: ``prediction="paper"``::

        log P[h=k|d] = log pi_k + sum_{v in d} log P[v|h=k]
                       + sum_{v not in d, P[v|h=k] > eta} log(1 - P[v|h=k]) + const;

    ``prediction="code"`` (the authors' released code): a uniform prior over ``h`` and the
    present words only, ``sum_{v in d} x_v log P[v|h=k]``. Both use word probabilities
    smoothed as in the code, ``(P[v|h] + smoothing / n_features) / (1 + smoothing)``. Scores
    are ``P[l|d]`` (a distribution over labels), so ranking metrics (AUC, p@k) are the
    meaningful ones; ``threshold`` (0.5) makes Hamming loss count almost every label negative.

    Parameters
    ----------
    rank : int >= 1, default=10
        ``K``, the number of latent states; at most ``min(n_samples, n_features)`` (a larger
        value is a config error at ``mlx validate`` when the data are present, and a
        ``ValueError`` in ``fit``). Directions of ``M2`` with no positive eigenvalue are
        dropped, so ``rank_`` can be smaller.
    moments : {"paper", "unbiased"}, default="paper"
        ``"paper"``: the moments of the paper's Algorithm 1 and of the authors' code,
        ``X'X / sum m^2`` and ``(XW)^(x)3 / sum m^3``, which keep the repeated-index terms
        (a word paired with itself); neither the paper nor the code corrects the diagonal.
        ``"unbiased"``: pairs and triples of distinct word tokens only, normalised by
        ``sum m(m-1)`` and ``sum m(m-1)(m-2)``, the estimators that are unbiased for
        ``sum_k pi_k mu_k mu_k'`` and ``sum_k pi_k mu_k^(x)3`` when word tokens are exchangeable
        given ``h`` (for 0/1 data: the diagonal of ``X'X`` and every repeated-index entry
        of the third moment removed); the label pass drops the same pairs.
    prediction : {"paper", "code"}, default="paper"
        Posterior over ``h`` used for scoring (above).
    eta : float in [0, 1), default=0.001
        The paper's threshold: absent words with ``P[v|h] > eta`` contribute
        ``log(1 - P[v|h])`` (``prediction="paper"`` only; the paper uses 0.001).
    smoothing : float >= 0 or "auto", default="auto"
        ``beta`` of the authors' code: ``beta / n_features`` is added to every word
        probability before renormalising (their code: 0.001 on bibtex, 0.0001 on delicious).
        The paper is silent; without smoothing a word that the clipping set to 0 in every
        state has probability 0. ``"auto"``: the best of ``1e-7 .. 10`` (a decade apart,
        walking from 1e-3) on a 20% hold-out split of the training rows (the mean of P@1
        and AUC there); the smoothing changes only the scoring, so the fit rows are fitted
        once and every value re-scores that fit; then a fit on every row
        (:mod:`mlx.methods._auto`, which also lets the model fall back towards the constant
        predictor where it does worse on the held-out rows). 0.001 was the fixed default
        before.
    n_restarts : int >= 1, default=10
        Starts of the tensor power method per eigenpair (the authors' code: 1). Fewer are not
        faster: the starts not chosen carry over to the next deflation step, where they
        give its chosen start a head start (``benchmarks/bench_mom.py --restarts`` times 10,
        3 and 1 starts on bibtex, K = 150, with their validation AUC).
    max_iter : int >= 1, default=300
        Cap on the iterations of a deflation step (the authors' code: 1000); a power step,
        an extrapolated step or a Newton step (``anderson``) each counts as one.
    tol : float > 0, default=1e-6
        Convergence test on the relative eigen-residual,
        ``||T_j(I, u, u) - lambda u|| <= tol * lambda`` (see
        :func:`~mlx.numerics.tensor_power.tensor_power_method`).
    shift : float >= 0, default=0.0
        SS-HOPM shift ``alpha``: ``u <- T(I, u, u) + alpha u`` (the authors' code: 0); the
        smallest shift with ``adaptive_shift``.
    adaptive_shift : bool, default=True
        Reject steps that do not increase ``T(u, u, u)`` and retry them with a doubled shift
        (a monotone iteration that converges where the plain one cycles). ``False`` with
        ``shift=0``, ``n_restarts=1`` and ``max_iter=1000`` is the authors' power method
        (every step taken as computed; ``anderson`` is then ignored).
    anderson : int >= 0, default=5
        Acceleration of the chosen start once its relative eigen-residual is below
        ``1e-2`` (``adaptive_shift=True`` only): Anderson extrapolation from its last
        ``anderson`` iterates, and trust-region Newton steps if it has not converged after
        30 iterations alone; both keep only ascending steps, so they reach the eigenpair
        the plain iteration converges to, in fewer iterations (bibtex, K = 150: median 22,
        at most 52, every eigenpair converged; with ``anderson=0``, the unaccelerated
        method: median 49, 4 of 150 stopped at 300; ``benchmarks/bench_mom.py --baseline``
        times both). See :func:`~mlx.numerics.tensor_power.tensor_power_method`.
    selection_precision : {"double", "single"}, default="double"
        Precision of the products that rank the ``n_restarts`` starts in each deflation step
        (:data:`~mlx.numerics.tensor_power.SELECTION_ITERATIONS` iterations each, most of
        the power method's work). ``"single"``: float32 copies of the whitened data, faster
        per product (``benchmarks/bench_mom.py --single`` and ``--tensor`` time the fit and
        the products); the chosen start is
        still iterated to ``tol`` in double precision, but float32 rounding can change which
        start ranks first, so the order of deflation, and from there the decomposition,
        differ from the default's (on bibtex from the 30th eigenpair on; validation AUC
        within the seed-to-seed spread).
    binarize : bool, default=False
        Read features as word occurrences ``x != 0``. By default ``X`` must hold word counts
        (non-negative integers; 0/1 occurrences are counts too), used as exchangeable word
        tokens; other values (tf-idf weights, normalised or negative features) are refused
        with a message naming this parameter. The paper (and its code, ``logical(X)``)
        models occurrences only: set ``binarize=True`` to use count data its way.
    random_state : None or int, default=None
        Seeds the Lanczos start vector and the power-method starts.

    Attributes
    ----------
    rank_ : int
        Latent states kept (``rank`` unless ``M2`` has fewer positive eigenvalues).
    smoothing_ : float
        The smoothing the scores use (the value ``"auto"`` chose, or ``smoothing``).
    prior_ : ndarray of shape (rank_,)
        ``pi``, by decreasing tensor eigenvalue.
    word_probs_ : ndarray of shape (n_features, rank_)
        ``P[v|h]`` after clipping and normalisation, before smoothing.
    label_probs_ : ndarray of shape (n_labels, rank_)
        ``P[l|h]``.
    eigenvalues_ : ndarray of shape (rank_,)
        Tensor eigenvalues ``lambda_k``.
    m2_eigenvalues_ : ndarray of shape (rank_,)
        Top eigenvalues of ``M2``.
    n_iter_ : ndarray of shape (rank_,)
        Power iterations of the chosen start of each eigenpair.
    component_converged_ : ndarray of shape (rank_,) of bool
    converged_ : bool
        Every eigenpair met the convergence test.
    timings_ : dict
        Seconds spent in each pass: ``whiten``, ``power``, ``labels``, ``total``.
    n_features_in_ : int

    Notes
    -----
    Where the paper is silent or differs from the authors' released code (Tensor_Bibtex.m and
    companions, MATLAB), this implementation follows the code unless a parameter says so:

    * the code whitens with ``eigs`` of ``M2`` (or ``svds`` of ``X``) and forms the dense
      ``K x K x K`` tensor; here ``M2`` and the tensor are implicit (same numbers);
    * the code's power method is Tensor Toolbox's ``sshopm`` with shift 0, one random start
      and at most 1000 iterations (``n_restarts=1, max_iter=1000, shift=0``), which on bibtex
      stops unconverged for about half of the eigenpairs at ``K = 50``; the default here is
      the robust method with 10 starts, whose selection by the largest ``T(u, u, u)`` is the
      paper's reference algorithm (Anandkumar et al. 2014);
    * ``P[v|h]``: the released code does not show how ``lambda_k W^+ u_k`` is made a
      distribution (whether negative entries are clipped, dropped or kept); here negative
      entries are clipped at 0 and each column scaled to sum 1 (the paper's probabilities are
      non-negative);
    * ``pi_k = lambda_k^-2`` is renormalised to sum 1 (it does only in population);
    * the code's prediction uses a uniform prior (its ``log(pi)`` is MATLAB's constant pi),
      only the present words, and the smoothing ``beta``: ``prediction="code"``;
    * word counts: the paper binarises; ``binarize=False`` reads counts as repeated tokens in
      both the moments and the prediction (``x_v log P[v|h]``), which for 0/1 data is the
      same model.

    Cost: pass 1 ``O(nnz(X) K)`` per Lanczos block product; pass 2 ``O(nnz(X) K)`` for
    ``A = XW`` plus ``O((n + n_features) K)`` per tensor-vector product (about
    ``K (n_restarts SELECTION_ITERATIONS + 25)`` of them, in blocks of ``n_restarts``) and
    ``O((n + n_features) K^2)`` per Newton step; pass 3 ``O(nnz(Y) K + n K^2)``. Memory:
    ``X``, ``A`` and ``O(n_features K + K^2)``; ``M2`` is formed only up to
    :data:`~mlx.numerics.eigen.DENSE_EIG_MAX` features and the ``K^3`` tensor never
    (:mod:`mlx.numerics.moments`: it is not faster where it fits). BLAS runs on one thread
    during ``fit``.

    References
    ----------
    Anonymous, "Multi-label learning for large text corpora using latent variable model with
    provable guarantees", ICLR 2018 submission, Sections 2-4 and Algorithm 1.
    A. Anandkumar, R. Ge, D. Hsu, S. M. Kakade and M. Telgarsky, "Tensor decompositions for
    learning latent variable models", JMLR 15, 2014 (robust tensor power method).
    T. G. Kolda and J. R. Mayo, "Shifted power method for computing tensor eigenpairs",
    SIAM J. Matrix Anal. Appl. 32(4), 2011.
    """

    supports_missing_labels = False
    uses_rank = True
    # scikit-learn's check_estimator, run with binarize=True (its X is real-valued, not counts)
    _expected_failed_checks = {
        "check_classifiers_train": (
            "the checks' dense real-valued X, binarized, is all ones: word occurrences carry "
            "no information about the class"),
        "check_non_transformer_estimators_n_iter": (
            "n_iter_ counts power iterations per topic and is 0 when the start is already a "
            "fixed point (one topic on the checks' data)"),
        "check_fit2d_1sample": (
            "one row gives a co-occurrence matrix of rank 1: the rank check refuses rank=2 "
            "first, with its own message"),
        "check_fit2d_1feature": (
            "one feature gives a 1 x 1 co-occurrence matrix: the rank check refuses rank=2 "
            "first, with its own message"),
    }
    _parameter_constraints = TABLES["mom"].constraints

    def __init__(self, *, rank: int = 10, moments: str = "paper", prediction: str = "paper",
                 eta: float = 0.001, smoothing: float | str = "auto", n_restarts: int = 10,
                 max_iter: int = 300, tol: float = 1e-6, shift: float = 0.0,
                 adaptive_shift: bool = True, anderson: int = 5,
                 selection_precision: str = "double", binarize: bool = False,
                 random_state: int | None = None):
        self.rank = rank
        self.moments = moments
        self.prediction = prediction
        self.eta = eta
        self.smoothing = smoothing
        self.n_restarts = n_restarts
        self.max_iter = max_iter
        self.tol = tol
        self.shift = shift
        self.adaptive_shift = adaptive_shift
        self.anderson = anderson
        self.selection_precision = selection_precision
        self.binarize = binarize
        self.random_state = random_state

    @property
    def threshold(self) -> float:
        """0.5 (scores are probabilities ``P[l|d]``; use ranking metrics)."""
        return 0.5

    def check_context(self, context) -> None:
        """``rank`` above ``min(n_samples, n_features)`` is a config error (sizes known)."""
        mom_check_context(self, context)

    @property
    def needs_counts(self) -> bool:
        """Whether ``fit`` needs word counts in X (the runner checks its preprocessed
        training features before any cell runs): True unless ``binarize``."""
        return not self.binarize

    # -- data ---------------------------------------------------------------
    def _features(self, X: sp.csr_matrix) -> sp.csr_matrix:
        """Counts (checked) or the occurrence pattern, as float64 CSR."""
        if self.binarize:
            return pattern(X)
        bad = non_count_value(X)
        if bad is not None:
            raise ValueError(f"MoM: X holds values that are not word counts (e.g. {bad:g}); "
                             f"the model reads word occurrences or counts: set binarize=True to "
                             f"use the occurrence pattern X != 0")
        if X.nnz and not (X.data != 0).all():
            X = X.copy()
            X.eliminate_zeros()
        return X

    # -- fit ----------------------------------------------------------------
    def _fit(self, X, Y, *, observed=None):
        """Estimate ``pi``, ``P[v|h]`` and ``P[l|h]`` in three passes (Algorithm 1).

        Parameters
        ----------
        X : sparse matrix of shape (n_samples, n_features)
            Word counts or occurrences (see ``binarize``).
        Y : sparse matrix of shape (n_samples, n_labels)
            0/1 labels.
        observed : None, or a mask that stores every entry. MoM needs full labels; a
            partial mask raises ``ValueError``.

        Returns
        -------
        self

        Notes
        -----
        BLAS runs on one thread during the fit: its dense products are Lanczos vectors and
        ``(n, K)`` by ``(K, r <= n_restarts)`` blocks, which threads do not speed up and, on
        a loaded machine, slow down many times (``benchmarks/bench_mom.py --threads-whiten``
        times the whitening pass on 1 and 2 BLAS threads); the fitted numbers then do not
        depend on the caller's thread setting either.
        """
        self._validate_params()
        t0 = time.perf_counter()
        self.auto_ = {}
        data = check_fit_data("MoM", X, Y, observed)
        if data.observed is not None:
            raise ValueError("MoM does not support missing labels: observed must be None or "
                             "mark every entry of Y")
        if is_auto(self.smoothing):
            _check_rank(self.rank, *data.X.shape)  # on every row: the hold-out fit has fewer
            return fit_holdout(self, "smoothing", log_grid(1e-3), data.X, data.positives,
                               rescore=_smoothed)
        with threadpool_limits(limits=1):
            return self._fit_moments(data, t0)

    def _fit_moments(self, data, t0):
        X = self._features(data.X)
        Y = data.positives
        n, d = X.shape
        _check_rank(self.rank, n, d)
        rng = np.random.default_rng(self.random_state)

        # Pass 1: M2 and whitening.
        f = np.asarray(X.sum(axis=0)).ravel()
        evals, evecs = second_moment_eigenpairs(X, self.rank, moments=self.moments, rng=rng)
        K = int(evals.size)
        t1 = time.perf_counter()

        if K == 0:                        # no co-occurrence mass at all: one state, the marginals
            self._fit_marginals(X, Y, f, t0, t1)
            return self
        W = evecs / np.sqrt(evals)

        # Pass 2: tensor eigenpairs from implicit products.
        moments = WhitenedMoments(X, W, moments=self.moments)
        single = self.selection_precision == "single"
        res = tensor_power_method(moments.products, K, K, n_restarts=self.n_restarts,
                                  max_iter=self.max_iter, tol=self.tol, shift=self.shift,
                                  adaptive_shift=self.adaptive_shift, anderson=self.anderson,
                                  hessian=moments.hessian,
                                  selection_products=moments.single_products if single else None,
                                  rng=rng)
        t2 = time.perf_counter()
        order = np.argsort(-res.eigenvalues, kind="stable")
        lam, U = res.eigenvalues[order], res.eigenvectors[:, order]
        tiny = np.finfo(np.float64).tiny ** 0.25
        prior = np.where(lam > tiny, 1.0 / np.maximum(lam, tiny) ** 2, 0.0)
        prior = prior / prior.sum() if prior.sum() > 0 else np.full(K, 1.0 / K)
        words = _normalise_columns((evecs * np.sqrt(evals)) @ U)          # W^+ u_k

        # Pass 3: labels.
        labels = _normalise_columns(moments.label_moments(Y, U))
        t3 = time.perf_counter()

        self._set_model(prior, words, labels, d)
        self.eigenvalues_ = lam
        self.m2_eigenvalues_ = evals
        self.n_iter_ = res.n_iter[order]
        self.component_converged_ = res.converged[order]
        self.converged_ = bool(res.converged.all())
        self.timings_ = {"whiten": t1 - t0, "power": t2 - t1, "labels": t3 - t2,
                         "total": t3 - t0}
        log.debug("mom fit K=%d (n=%d, d=%d): %d/%d eigenpairs converged, %.2fs "
                  "(power %.2fs)", K, n, d, int(res.converged.sum()), K, t3 - t0, t2 - t1)
        return self

    def _fit_marginals(self, X, Y, f, t0, t1):
        """One latent state with the marginal word and label frequencies (``rank_ = 1``)."""
        d = X.shape[1]
        words = _normalise_columns(f.reshape(-1, 1).astype(np.float64))
        labels = _normalise_columns(np.asarray(Y.sum(axis=0)).reshape(-1, 1))
        self._set_model(np.ones(1), words, labels, d)
        self.eigenvalues_ = np.zeros(1)
        self.m2_eigenvalues_ = np.zeros(1)
        self.n_iter_ = np.zeros(1, dtype=np.int64)
        self.component_converged_ = np.ones(1, dtype=bool)
        self.converged_ = True
        self.timings_ = {"whiten": t1 - t0, "power": 0.0, "labels": 0.0, "total": t1 - t0}

    def _set_model(self, prior, words, labels, d):
        self.smoothing_ = float(self.smoothing)
        self.rank_ = int(prior.size)
        self.prior_ = prior
        self.word_probs_ = words
        self.label_probs_ = labels
        self.n_features_in_ = d
        self._scoring = self._scoring_tables()

    def _scoring_tables(self):
        """``log P[v|h]`` smoothed, ``log pi``, the absent words' ``log(1 - P[v|h])`` and
        their column sums, from the fitted attributes (kept once computed)."""
        beta = self.smoothing_
        smoothed = (self.word_probs_ + beta / self.n_features_in_) / (1.0 + beta)
        floor = np.finfo(np.float64).tiny                 # log(0) -> about -708, never -inf
        absent = np.where(smoothed > self.eta, np.log1p(-np.minimum(smoothed, 1.0 - 1e-16)), 0.0)
        return (np.log(np.maximum(smoothed, floor)), np.log(np.maximum(self.prior_, floor)),
                absent, absent.sum(axis=0))

    # -- predict ------------------------------------------------------------
    def posterior(self, X) -> np.ndarray:
        """``P[h|d]`` of shape (n_rows, rank_) under the ``prediction`` rule."""
        check_is_fitted(self, "label_probs_")
        X = as_float_csr(X, "X", "MoM")
        if X.shape[1] != self.n_features_in_:
            raise ValueError(f"MoM: X has {X.shape[1]} features, but MoM is expecting "
                             f"{self.n_features_in_} features as input (it was fitted with "
                             f"{self.n_features_in_})")
        X = self._features(X)
        if "_scoring" not in self.__dict__:   # a fitted copy of the auto choice's final fit
            self._scoring = self._scoring_tables()
        log_words, log_prior, absent, absent_total = self._scoring
        ll = np.asarray(X @ log_words)
        if self.prediction == "paper":
            ll += log_prior + absent_total
            ll -= np.asarray(pattern(X) @ absent)
        ll -= ll.max(axis=1, keepdims=True) if ll.shape[0] else 0.0
        post = np.exp(ll)
        post /= post.sum(axis=1, keepdims=True)
        return post

    def _decision_function(self, X) -> np.ndarray:
        """Scores ``P[l|d] = sum_k P[l|h=k] P[h=k|d]``, shape (n_rows, n_labels)."""
        check_is_fitted(self, "label_probs_")
        return self.posterior(X) @ self.label_probs_.T


def _check_rank(rank: int, n: int, d: int) -> None:
    if rank > min(n, d):
        raise InvalidParameterError("rank", f"MoM: {mom_rank_message(rank, n, d)}")


def _smoothed(model: MoM, smoothing: float) -> MoM:
    """A copy of the fitted ``model`` with another ``smoothing`` (the fit is shared: the
    smoothing enters only the word probabilities used to score)."""
    import copy

    new = copy.copy(model)
    new.smoothing = smoothing
    new._set_model(model.prior_, model.word_probs_, model.label_probs_, model.n_features_in_)
    return new
