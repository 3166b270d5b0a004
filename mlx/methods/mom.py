"""MoM: the spectral (method-of-moments) latent-variable model for multi-label text.

A document has one latent state ``h`` in ``{1..K}``; given ``h`` its words and its labels are
independent draws (ICLR 2018 submission "Multi-label learning for large text corpora using
latent variable model with provable guarantees", Sections 2-4). The parameters
``pi = P[h]``, ``P[v|h]`` and ``P[l|h]`` come from three passes over the training data:
the word co-occurrence moment and its top-``K`` eigenpairs (whitening), the whitened
third moment and its orthogonal tensor eigenpairs (robust tensor power method with
deflation), and one label pass. Neither a dense ``n_features x n_features`` matrix (past
:data:`DENSE_EIG_MAX` features) nor a ``K x K x K`` tensor is ever formed.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass
from numbers import Integral, Real

import numpy as np
import scipy.linalg as sla
import scipy.sparse as sp
from scipy.sparse.linalg import LinearOperator, eigsh

from mlx.methods._validation import as_float_csr, check_fit_data, pattern
from mlx.methods.base import (
    BOOL,
    METHODS,
    BaseMethod,
    Interval,
    InvalidParameterError,
    StrOptions,
    check_is_fitted,
)

__all__ = [
    "DENSE_EIG_MAX",
    "MoM",
    "PowerResult",
    "WhitenedMoments",
    "sample_corpus",
    "second_moment_eigenpairs",
    "tensor_power_method",
    "top_eigenpairs",
]

log = logging.getLogger(__name__)

DENSE_EIG_MAX = 64
"""Up to this many features the co-occurrence matrix is decomposed densely (``eigh``); past it
the sparse Lanczos solver (``eigsh``) sees ``M2`` only through products ``X'(X V)``."""

_EIG_RCOND = 1e-10
"""Eigenvalues of ``M2`` below ``_EIG_RCOND * max`` (or not positive) are dropped before
whitening: their directions carry no second-moment mass to whiten."""


# ---------------------------------------------------------------------------
# Numerical kernels
# ---------------------------------------------------------------------------

def top_eigenpairs(matmat, dim: int, k: int, *, rng: np.random.Generator, dense=None,
                   tol: float = 0.0) -> tuple[np.ndarray, np.ndarray]:
    """The ``k`` algebraically largest eigenpairs of a symmetric ``dim x dim`` operator.

    ``matmat(V)`` returns the product with a ``(dim, r)`` block. Past :data:`DENSE_EIG_MAX`
    (and when ``k < dim - 1``) ARPACK's Lanczos method (``scipy.sparse.linalg.eigsh``)
    works from products alone, started from a vector drawn from ``rng`` so the result is
    deterministic; otherwise the matrix is formed (from ``dense()`` if given, else from
    ``matmat`` on the identity) and ``scipy.linalg.eigh`` computes the top ``k`` directly.

    Returns
    -------
    evals : ndarray of shape (k,)
        Decreasing.
    evecs : ndarray of shape (dim, k)
        Orthonormal columns, each with its largest-magnitude entry positive (a fixed sign, so
        that equal inputs give equal outputs whatever the solver's sign convention).
    """
    k = int(min(k, dim))
    if k <= 0:
        return np.zeros(0), np.zeros((dim, 0))
    if dim <= DENSE_EIG_MAX or k >= dim - 1:
        M = dense() if dense is not None else matmat(np.eye(dim))
        M = 0.5 * (M + M.T)
        evals, evecs = sla.eigh(M, subset_by_index=[dim - k, dim - 1], check_finite=False)
    else:
        op = LinearOperator((dim, dim), matvec=lambda v: matmat(v.reshape(-1, 1)).ravel(),
                            matmat=matmat, dtype=np.float64)
        evals, evecs = eigsh(op, k=k, which="LA", v0=rng.standard_normal(dim), tol=tol)
    order = np.argsort(-evals, kind="stable")
    evals, evecs = evals[order], evecs[:, order]
    rows = np.argmax(np.abs(evecs), axis=0)
    evecs *= np.where(evecs[rows, np.arange(k)] < 0, -1.0, 1.0)
    return evals, evecs


@dataclass(frozen=True)
class PowerResult:
    """Tensor eigenpairs found by :func:`tensor_power_method`, in the order found.

    Attributes
    ----------
    eigenvalues : ndarray of shape (n_components,)
        ``lambda_j = T(v_j, v_j, v_j)`` of the tensor deflated by the previous pairs, >= 0.
    eigenvectors : ndarray of shape (dim, n_components)
        Unit columns ``v_j``.
    n_iter : ndarray of shape (n_components,)
        Power iterations the chosen start ran in its deflation step.
    converged : ndarray of shape (n_components,) of bool
        Whether the chosen start met the convergence test before ``max_iter``.
    """

    eigenvalues: np.ndarray
    eigenvectors: np.ndarray
    n_iter: np.ndarray
    converged: np.ndarray


SELECTION_ITERATIONS = 10
"""Iterations every start of the tensor power method runs in a deflation step before the
leading one is refined alone (``N`` of Anandkumar et al.'s Algorithm 1)."""


def _unit_columns(rng, dim: int, r: int) -> np.ndarray:
    U = rng.standard_normal((dim, r))
    return U / np.linalg.norm(U, axis=0)


def tensor_power_method(products, dim: int, n_components: int, *, n_restarts: int = 10,
                        max_iter: int = 100, tol: float = 1e-8, shift: float = 0.0,
                        adaptive_shift: bool = True, rng: np.random.Generator) -> PowerResult:
    """Robust tensor power method with deflation (Anandkumar et al., JMLR 2014, Algorithm 1).

    For a symmetric ``dim x dim x dim`` tensor ``T`` given only by ``products(U)``, which
    returns ``T(I, u, u)`` for every column ``u`` of a ``(dim, r)`` block, finds
    ``n_components`` eigenpairs one at a time. At step ``j``, ``n_restarts`` starts iterate

        u <- (T_j(I, u, u) + alpha u) / ||T_j(I, u, u) + alpha u||

    on the deflated tensor ``T_j = T - sum_{i<j} lambda_i v_i (x) v_i (x) v_i`` until the
    relative eigen-residual ``||T_j(I, u, u) - lambda u|| <= tol |lambda|`` (with
    ``lambda = T_j(u, u, u)``) or ``max_iter`` iterations; the start with the largest
    ``lambda`` becomes ``(lambda_j, v_j)``, with the sign making ``lambda_j >= 0``.

    ``alpha`` is the shift of SS-HOPM (Kolda and Mayo, 2011). With ``adaptive_shift=False``
    it stays ``shift`` (``shift=0``: the plain power iteration, which can cycle without
    converging on a noisy tensor). With ``adaptive_shift=True`` a step that does not
    increase ``T_j(u, u, u)`` is rejected and retried with ``alpha`` doubled (at least
    ``|lambda|``), and ``alpha`` halves back towards ``shift`` after every accepted step: the
    iteration is then monotone, as SS-HOPM with a large enough shift is, but takes the
    unshifted, fast steps wherever they already ascend.

    The starts are iterated together (``products`` of ``(dim, r)`` blocks) and the pool is
    carried from one deflation step to the next: only the chosen start is replaced by a
    fresh random unit vector, while the others, which usually sit near eigenvectors not yet
    deflated, start the next step where they stopped. As in the paper's algorithm, every
    start runs a few iterations (:data:`SELECTION_ITERATIONS`), the one with the largest
    ``lambda`` is then iterated alone until it converges (or ``max_iter`` iterations in all),
    and the others keep their progress for the next step. Every step thus compares
    ``n_restarts`` candidates for the price of about one fresh start.

    Returns
    -------
    PowerResult
    """
    pool = _unit_columns(rng, dim, n_restarts)
    lams = np.zeros(n_components)
    V = np.zeros((dim, n_components))
    n_iter = np.zeros(n_components, dtype=np.int64)
    converged = np.zeros(n_components, dtype=bool)

    for j in range(n_components):
        Vj, lj = V[:, :j], lams[:j]

        def deflated(U, Vj=Vj, lj=lj):
            out = products(U)
            if Vj.shape[1]:
                out -= Vj @ (lj[:, None] * (Vj.T @ U) ** 2)
            return out

        P = deflated(pool)                                          # T_j(I, u, u)
        f = np.einsum("ij,ij->j", pool, P)                          # T_j(u, u, u)
        alpha = np.full(n_restarts, float(shift))
        iters = np.zeros(n_restarts, dtype=np.int64)

        def residual_ok(U, P, f):
            res = np.linalg.norm(P - U * f, axis=0)
            return (res <= tol * np.abs(f)) | ~(np.abs(f) > 0) & ~(res > 0)

        active = ~residual_ok(pool, P, f)
        for it in range(max_iter):
            neg = f < 0
            pool[:, neg] *= -1.0                                   # T(-u,-u,-u) = -T(u,u,u)
            f[neg] *= -1.0
            lead = int(np.argmax(f))
            if not active[lead]:                                   # the leading start converged
                break
            idx = np.flatnonzero(active) if it < SELECTION_ITERATIONS else np.array([lead])
            U, Pi = pool[:, idx], P[:, idx]
            new = Pi + alpha[idx] * U
            norms = np.linalg.norm(new, axis=0)
            dead = ~(norms > 0.0)                                  # nothing left to follow
            new[:, dead] = U[:, dead]
            new[:, ~dead] /= norms[~dead]
            Pn = deflated(new)
            fn = np.einsum("ij,ij->j", new, Pn)
            iters[idx] += 1
            if adaptive_shift:
                ok = fn >= f[idx] - 1e-12 * np.abs(f[idx])
                grow = np.maximum(2.0 * alpha[idx], np.abs(f[idx]))
                alpha[idx] = np.where(ok, np.maximum(float(shift), 0.5 * alpha[idx]), grow)
            else:
                ok = np.ones(idx.size, dtype=bool)
            acc = idx[ok]
            pool[:, acc], P[:, acc], f[acc] = new[:, ok], Pn[:, ok], fn[ok]
            done = residual_ok(new[:, ok], Pn[:, ok], fn[ok]) | dead[ok]
            active[acc[done]] = False
        neg = f < 0
        pool[:, neg] *= -1.0
        f[neg] *= -1.0
        best = int(np.argmax(f))
        lams[j] = f[best]
        V[:, j] = pool[:, best]
        n_iter[j] = iters[best]
        converged[j] = not active[best]
        pool[:, best] = _unit_columns(rng, dim, 1)[:, 0]
    return PowerResult(eigenvalues=lams, eigenvectors=V, n_iter=n_iter, converged=converged)


def second_moment_eigenpairs(X: sp.csr_matrix, rank: int, *, moments: str,
                             rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """Top-``rank`` eigenpairs of the word co-occurrence moment ``M2`` (Algorithm 1, step 2).

    ``moments="paper"``: ``M2 = X'X / sum_d m_d^2``; ``"unbiased"``: pairs of distinct tokens,
    ``M2 = (X'X - diag(X'1)) / sum_d m_d (m_d - 1)`` (``m_d = sum_v x_dv``). ``M2`` is used
    through products ``X'(X V)`` only (formed only up to :data:`DENSE_EIG_MAX` features).
    Eigenvalues that are not positive, or below ``1e-10`` of the largest, are dropped, so
    fewer than ``rank`` pairs can come back. The whitening matrix is
    ``W = evecs / sqrt(evals)``, with ``W' M2 W = I``.
    """
    n, d = X.shape
    unbiased = moments == "unbiased"
    m = np.asarray(X.sum(axis=1)).ravel()
    z = float(np.sum(m * (m - 1.0))) if unbiased else float(np.sum(m * m))
    z = z if z > 0 else 1.0
    f = np.asarray(X.sum(axis=0)).ravel()
    Xt = X.T.tocsr()

    def products(V):
        out = np.asarray(Xt @ np.asarray(X @ V))
        if unbiased:
            out -= f[:, None] * V
        return out / z

    def dense():
        M = (Xt @ X).toarray()
        if unbiased:
            M[np.diag_indices(d)] -= f
        return M / z

    evals, evecs = top_eigenpairs(products, d, rank, rng=rng, dense=dense)
    keep = (evals > 0) & (evals > _EIG_RCOND * (float(evals[0]) if evals.size else 0.0))
    return evals[keep], evecs[:, keep]


class WhitenedMoments:
    """Whitened third moment ``T = M3(W, W, W)`` and label cross-moment, never formed.

    ``X`` holds word counts (0/1 for occurrences), ``W`` the ``(n_features, K)`` whitening
    matrix, ``A = X W`` the whitened documents.

    ``moments="paper"`` (the paper's eq. 18 and the authors' code)::

        T = sum_d a_d (x) a_d (x) a_d / sum_d m_d^3                  (m_d = sum_v x_dv)

    ``moments="unbiased"``: only triples of distinct word tokens of a document, the
    estimator whose expectation is exactly ``sum_k pi_k mu_k (x) mu_k (x) mu_k`` when words are
    exchangeable draws given ``h``::

        E3_d = x (x) x (x) x - sum_v x_v (e_v e_v x + e_v x e_v + x e_v e_v) + 2 sum_v x_v e_v^(x)3
        T    = sum_d E3_d(W, W, W) / sum_d m_d (m_d - 1) (m_d - 2)

    (for 0/1 data: the entries of ``x (x) x (x) x`` with three distinct indices). Products cost
    ``O(n K r + n_features K r)`` for an ``(K, r)`` block with ``B = X'A`` precomputed::

        T(I, u, u) Z = A'(A u)^2 - 2 W'[(W u) (B u)] - B'(W u)^2 + 2 W'[f (W u)^2]

    with ``f = X'1`` (word totals) and element-wise products.
    """

    def __init__(self, X: sp.csr_matrix, W: np.ndarray, *, moments: str):
        self.X = X
        self.W = W
        self.moments = moments
        m = np.asarray(X.sum(axis=1)).ravel()
        self.A = np.asarray(X @ W)
        if moments == "paper":
            z = float(np.sum(m ** 3))
            self.B = None
            self.f = None
        else:
            z = float(np.sum(m * (m - 1.0) * (m - 2.0)))
            self.B = np.asarray(X.T @ self.A)                         # X'X W
            self.f = np.asarray(X.sum(axis=0)).ravel()
        self.scale = 1.0 / z if z > 0 else 0.0

    @property
    def dim(self) -> int:
        return self.W.shape[1]

    def products(self, U: np.ndarray) -> np.ndarray:
        """``T(I, u, u)`` for every column ``u`` of ``U`` (shape ``(K, r)``)."""
        S = self.A @ U
        out = self.A.T @ (S * S)
        if self.B is not None:
            WU = self.W @ U
            BU = self.B @ U
            out -= self.W.T @ (WU * (2.0 * BU - 2.0 * self.f[:, None] * WU))
            out -= self.B.T @ (WU * WU)
        out *= self.scale
        return out

    def dense(self) -> np.ndarray:
        """The explicit ``K x K x K`` tensor (``O(n K^3)``; for tests on small problems)."""
        K = self.dim
        T = np.einsum("di,dj,dl->ijl", self.A, self.A, self.A)
        if self.B is not None:
            W, B, f = self.W, self.B, self.f
            WW = np.einsum("vi,vj->vij", W, W)
            T -= np.einsum("vij,vl->ijl", WW, B)
            T -= np.einsum("vil,vj->ijl", WW, B)
            T -= np.einsum("vjl,vi->ijl", WW, B)
            T += 2.0 * np.einsum("v,vi,vj,vl->ijl", f, W, W, W)
        return T.reshape(K, K, K) * self.scale

    def label_moments(self, Y: sp.csr_matrix, V: np.ndarray) -> np.ndarray:
        """``Gamma[:, k] = u_k' M_L(W, W) u_k`` up to a constant (Algorithm 1, step 8).

        ``paper``: ``Y'((X W V) * (X W V))``; ``unbiased``: pairs of distinct word tokens
        only, ``Y'((X W V)^2 - X (W V)^2)``.
        """
        AV = self.A @ V
        G = np.asarray(Y.T @ (AV * AV))
        if self.B is not None:
            WV = self.W @ V
            G -= np.asarray(Y.T @ np.asarray(self.X @ (WV * WV)))
        return G


def _normalise_columns(P: np.ndarray) -> np.ndarray:
    """Columns clipped at 0 and scaled to sum 1; a column with nothing positive is uniform."""
    P = np.maximum(P, 0.0)
    sums = P.sum(axis=0)
    ok = sums > 0
    P[:, ok] /= sums[ok]
    P[:, ~ok] = 1.0 / P.shape[0]
    return P


# ---------------------------------------------------------------------------
# Synthetic corpora from the model
# ---------------------------------------------------------------------------

def sample_corpus(n_samples: int, n_features: int, n_labels: int, n_topics: int, *,
                  doc_length: float = 50.0, labels_per_doc: float = 3.0,
                  word_concentration: float = 0.1, label_concentration: float = 0.1,
                  prior=None, counts: bool = True, seed=None, truth=None):
    """Documents drawn from the model: ``h ~ pi``, word tokens i.i.d. from ``P[v|h]``.

    Each document draws ``h`` from ``pi`` (uniform unless ``prior`` is given), a length
    ``m ~ 3 + Poisson(doc_length - 3)`` and ``m`` word tokens i.i.d. from ``mu_h = P[v|h]``
    (topics drawn from a symmetric Dirichlet with ``word_concentration``); ``X`` holds the
    token counts (``counts=True``) or their occurrence pattern. Label ``l`` is present
    independently with probability ``r_hl = min(1, labels_per_doc * gamma_hl)`` (``gamma_h``
    from a symmetric Dirichlet with ``label_concentration``), so ``P[l|h] = r_h / sum(r_h)``
    exactly. Pass ``truth`` (a previous result's third element) to draw more documents from
    the same model.

    Returns
    -------
    X : csr_matrix of shape (n_samples, n_features)
    Y : csr_matrix of shape (n_samples, n_labels)
    truth : dict with ``pi`` (K,), ``words`` (n_features, K), ``labels`` (n_labels, K) and
        ``topic`` (n_samples,), the latent state of each document.
    """
    rng = np.random.default_rng(seed)
    K = n_topics
    if truth is None:
        pi = np.full(K, 1.0 / K) if prior is None else np.asarray(prior, dtype=float)
        mu = rng.dirichlet(np.full(n_features, word_concentration), size=K).T
        gamma = rng.dirichlet(np.full(n_labels, label_concentration), size=K).T
        r = np.minimum(1.0, labels_per_doc * gamma)
        truth = {"pi": pi / pi.sum(), "words": mu, "labels": r / r.sum(axis=0),
                 "presence": r}
    pi, mu, r = truth["pi"], truth["words"], truth["presence"]
    h = rng.choice(K, size=n_samples, p=pi)
    m = 3 + rng.poisson(max(doc_length - 3.0, 0.0), size=n_samples)
    rows, cols = [], []
    for k in range(K):
        docs = np.flatnonzero(h == k)
        if docs.size == 0:
            continue
        cdf = np.cumsum(mu[:, k])
        cdf /= cdf[-1]
        lengths = m[docs]
        tokens = np.searchsorted(cdf, rng.random(int(lengths.sum())), side="right")
        rows.append(np.repeat(docs, lengths))
        cols.append(np.minimum(tokens, n_features - 1))
    rows = np.concatenate(rows) if rows else np.zeros(0, dtype=np.int64)
    cols = np.concatenate(cols) if cols else np.zeros(0, dtype=np.int64)
    X = sp.csr_matrix((np.ones(rows.size), (rows, cols)), shape=(n_samples, n_features))
    X.sum_duplicates()
    if not counts:
        X.data[:] = 1.0
    Ybool = rng.random((n_samples, n_labels)) < r[:, h].T
    Y = sp.csr_matrix(Ybool.astype(np.float64))
    return X, Y, {**truth, "topic": h}


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
       computed from ``A = X W`` (:class:`WhitenedMoments`); its eigenpairs
       ``(lambda_k, u_k)`` by the robust tensor power method with deflation
       (:func:`tensor_power_method`). ``pi_k = lambda_k^-2`` (normalised to sum 1), and
       ``P[v|h=k]`` is ``W^+ u_k = Omega diag(sigma)^(1/2) u_k`` clipped at 0 and normalised.
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
    smoothing : float >= 0, default=0.001
        ``beta`` of the authors' code: ``beta / n_features`` is added to every word
        probability before renormalising (their code: 0.001 on bibtex, 0.0001 on delicious).
        The paper is silent; without smoothing a word that the clipping set to 0 in every
        state has probability 0.
    n_restarts : int >= 1, default=10
        Starts of the tensor power method per eigenpair (the authors' code: 1).
    max_iter : int >= 1, default=300
        Cap on the power iterations of a deflation step (the authors' code: 1000).
    tol : float > 0, default=1e-6
        Convergence test on the relative eigen-residual,
        ``||T_j(I, u, u) - lambda u|| <= tol * lambda`` (see :func:`tensor_power_method`).
    shift : float >= 0, default=0.0
        SS-HOPM shift ``alpha``: ``u <- T(I, u, u) + alpha u`` (the authors' code: 0); the
        smallest shift with ``adaptive_shift``.
    adaptive_shift : bool, default=True
        Reject steps that do not increase ``T(u, u, u)`` and retry them with a doubled shift
        (a monotone iteration that converges where the plain one cycles). ``False`` with
        ``shift=0``, ``n_restarts=1`` and ``max_iter=1000`` is the authors' power method.
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
    * ``P[v|h]``: the code normalises ``lambda_k W^+ u_k`` without clipping; here negative
      entries are clipped at 0 first (the paper's probabilities are non-negative);
    * ``pi_k = lambda_k^-2`` is renormalised to sum 1 (it does only in population);
    * the code's prediction uses a uniform prior (its ``log(pi)`` is MATLAB's constant pi),
      only the present words, and the smoothing ``beta``: ``prediction="code"``;
    * word counts: the paper binarises; ``binarize=False`` reads counts as repeated tokens in
      both the moments and the prediction (``x_v log P[v|h]``), which for 0/1 data is the
      same model.

    Cost: pass 1 ``O(nnz(X) K)`` per Lanczos block product; pass 2 ``O(nnz(X) K)`` for
    ``A = XW`` plus ``O((n + n_features) K)`` per tensor-vector product; pass 3
    ``O(nnz(Y) K + n K^2)``. Memory: ``X``, ``A`` and ``O(n_features K)``; ``M2`` is formed
    only up to :data:`DENSE_EIG_MAX` features and the ``K^3`` tensor never.

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
    _parameter_constraints = {
        "rank": [Interval(Integral, 1, None, closed="left")],
        "moments": [StrOptions({"paper", "unbiased"})],
        "prediction": [StrOptions({"paper", "code"})],
        "eta": [Interval(Real, 0, 1, closed="left")],
        "smoothing": [Interval(Real, 0, None, closed="left")],
        "n_restarts": [Interval(Integral, 1, None, closed="left")],
        "max_iter": [Interval(Integral, 1, None, closed="left")],
        "tol": [Interval(Real, 0, None, closed="neither")],
        "shift": [Interval(Real, 0, None, closed="left")],
        "adaptive_shift": [BOOL],
        "binarize": [BOOL],
        "random_state": [None, Integral],
    }

    def __init__(self, *, rank: int = 10, moments: str = "paper", prediction: str = "paper",
                 eta: float = 0.001, smoothing: float = 0.001, n_restarts: int = 10,
                 max_iter: int = 300, tol: float = 1e-6, shift: float = 0.0,
                 adaptive_shift: bool = True,
                 binarize: bool = False, random_state: int | None = None):
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
        self.binarize = binarize
        self.random_state = random_state

    @property
    def threshold(self) -> float:
        """0.5 (scores are probabilities ``P[l|d]``; use ranking metrics)."""
        return 0.5

    def check_context(self, context) -> None:
        """``rank`` above ``min(n_samples, n_features)`` is a config error (sizes known)."""
        n, d = context.n_samples, context.n_features
        if n > 0 and d > 0 and isinstance(self.rank, Integral) and self.rank > min(n, d):
            raise InvalidParameterError("rank", _rank_message(self.rank, n, d))

    # -- data ---------------------------------------------------------------
    def _features(self, X: sp.csr_matrix) -> sp.csr_matrix:
        """Counts (checked) or the occurrence pattern, as float64 CSR."""
        if self.binarize:
            return pattern(X)
        bad = X.data[(X.data < 0) | (X.data != np.round(X.data))]
        if bad.size:
            raise ValueError(f"MoM: X holds values that are not word counts (e.g. {bad[0]:g}); "
                             f"the model reads word occurrences or counts: set binarize=True to "
                             f"use the occurrence pattern X != 0")
        if X.nnz and not (X.data != 0).all():
            X = X.copy()
            X.eliminate_zeros()
        return X

    # -- fit ----------------------------------------------------------------
    def fit(self, X, Y, *, observed=None):
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
        """
        self._validate_params()
        t0 = time.perf_counter()
        data = check_fit_data("MoM", X, Y, observed)
        if data.observed is not None:
            raise ValueError("MoM does not support missing labels: observed must be None or "
                             "mark every entry of Y")
        X = self._features(data.X)
        Y = data.positives
        n, d = X.shape
        if self.rank > min(n, d):
            raise ValueError(f"MoM: {_rank_message(self.rank, n, d)}")
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
        res = tensor_power_method(moments.products, K, K, n_restarts=self.n_restarts,
                                  max_iter=self.max_iter, tol=self.tol, shift=self.shift,
                                  adaptive_shift=self.adaptive_shift, rng=rng)
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
        beta = float(self.smoothing)
        smoothed = (words + beta / d) / (1.0 + beta)
        floor = np.finfo(np.float64).tiny                 # log(0) -> about -708, never -inf
        self._log_words = np.log(np.maximum(smoothed, floor))
        absent = np.where(smoothed > self.eta, np.log1p(-np.minimum(smoothed, 1.0 - 1e-16)), 0.0)
        self._log_prior = np.log(np.maximum(prior, floor))
        self._absent = absent
        self._absent_total = absent.sum(axis=0)
        self.rank_ = int(prior.size)
        self.prior_ = prior
        self.word_probs_ = words
        self.label_probs_ = labels
        self.n_features_in_ = d

    # -- predict ------------------------------------------------------------
    def posterior(self, X) -> np.ndarray:
        """``P[h|d]`` of shape (n_rows, rank_) under the ``prediction`` rule."""
        check_is_fitted(self, "label_probs_")
        X = as_float_csr(X, "X", "MoM")
        if X.shape[1] != self.n_features_in_:
            raise ValueError(f"MoM: X has {X.shape[1]} features, but the model was fitted with "
                             f"{self.n_features_in_}")
        X = self._features(X)
        ll = np.asarray(X @ self._log_words)
        if self.prediction == "paper":
            ll += self._log_prior + self._absent_total
            ll -= np.asarray(pattern(X) @ self._absent)
        ll -= ll.max(axis=1, keepdims=True) if ll.shape[0] else 0.0
        post = np.exp(ll)
        post /= post.sum(axis=1, keepdims=True)
        return post

    def decision_function(self, X) -> np.ndarray:
        """Scores ``P[l|d] = sum_k P[l|h=k] P[h=k|d]``, shape (n_rows, n_labels)."""
        check_is_fitted(self, "label_probs_")
        return self.posterior(X) @ self.label_probs_.T


def _rank_message(rank: int, n: int, d: int) -> str:
    return (f"rank={rank} is larger than the data allow: MoM whitens with {rank} eigenvectors of "
            f"the {d} x {d} word co-occurrence matrix, whose rank is at most "
            f"min(n_samples, n_features) = min({n}, {d}); valid: 1 <= rank <= {min(n, d)}")
