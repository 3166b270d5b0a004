"""MoM: the spectral (method-of-moments) latent-variable model for multi-label text.

A document has one latent state ``h`` in ``{1..K}``; given ``h`` its words and its labels are
independent draws (ICLR 2018 submission "Multi-label learning for large text corpora using
latent variable model with provable guarantees", Sections 2-4). The parameters
``pi = P[h]``, ``P[v|h]`` and ``P[l|h]`` come from three passes over the training data:
the word co-occurrence moment and its top-``K`` eigenpairs (whitening), the whitened
third moment and its orthogonal tensor eigenpairs (robust tensor power method with
deflation), and one label pass. Neither a dense ``n_features x n_features`` matrix (past
:data:`DENSE_EIG_MAX` features) nor a ``K x K x K`` tensor is ever formed.

Why the tensor stays implicit even where it would fit in memory (bibtex, K = 150: 27 MB),
measured on one core: ``T(I, u, u)`` costs ``2 n K`` from ``A = X W`` (0.22 ms per column,
0.17 ms per column in blocks of 10) against ``K^3`` from the dense tensor (1.1 ms, 0.65 ms:
the 27 MB do not stay in cache), and forming it costs ``n K^3 / 2`` (1.3 s). Only the
``K x K`` Hessian ``T(I, I, u)`` is formed, for the few Newton steps of
:func:`tensor_power_method` (9 ms from ``A``, 2 ms from the dense tensor: about 190 of them
would be needed to repay forming it; bibtex uses about 50).
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
from threadpoolctl import threadpool_limits

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
    "non_count_value",
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
    n_products : int
        Columns ``u`` for which ``T(I, u, u)`` was computed, over all starts and steps (the
        method's cost: each is one pass over ``A`` in :meth:`WhitenedMoments.products`).
    n_hessians : int
        ``T(I, I, u)`` matrices formed for trust-region Newton steps (each costs about 40
        products with :meth:`WhitenedMoments.hessian`).
    """

    eigenvalues: np.ndarray
    eigenvectors: np.ndarray
    n_iter: np.ndarray
    converged: np.ndarray
    n_products: int = 0
    n_hessians: int = 0


SELECTION_ITERATIONS = 10
"""Iterations every start of the tensor power method runs in a deflation step before the
leading one is refined alone (``N`` of Anandkumar et al.'s Algorithm 1)."""

ANDERSON_START = 1e-2
"""Relative eigen-residual ``||T_j(I, u, u) - lambda u|| / lambda`` below which a start's steps
are extrapolated (Anderson acceleration, ``anderson > 0``). Farther out the plain shifted
steps pick the basin: on bibtex (K = 150) extrapolating from the first iteration makes
some starts jump to another eigenvector than the plain iteration converges to, while from
``1e-2`` on every eigenpair the plain iteration converges to is found again (to ``tol``)."""


def _unit_columns(rng, dim: int, r: int) -> np.ndarray:
    U = rng.standard_normal((dim, r))
    return U / np.linalg.norm(U, axis=0)


def _anderson(hx: np.ndarray, hr: np.ndarray, hn: np.ndarray) -> np.ndarray:
    """Anderson (type II) extrapolation of fixed-point iterations, one per row.

    ``hx[c]`` and ``hr[c]`` hold the last ``hn[c]`` iterates ``u`` and their steps
    ``g(u) - u`` (oldest first, right-aligned in a buffer of ``m + 1``). Returns
    ``u + r - (dX + dR) gamma`` with ``gamma`` minimising ``||r - dR gamma||``, the secant
    (multi-secant Broyden) step; the differences of slots not yet filled are zero and get
    ``gamma = 0`` (a ridge of ``1e-12`` of the Gram matrix's trace keeps the solve regular).
    """
    u, r = hx[:, -1], hr[:, -1]
    dX, dR = np.diff(hx, axis=1), np.diff(hr, axis=1)                # (c, m, dim)
    filled = np.arange(hx.shape[1] - 1)[None, :] >= hx.shape[1] - hn[:, None]
    dX *= filled[:, :, None]
    dR *= filled[:, :, None]
    gram = np.einsum("cmk,cnk->cmn", dR, dR)
    ridge = 1e-12 * np.einsum("cmm->c", gram) + np.finfo(np.float64).tiny
    gram += ridge[:, None, None] * np.eye(gram.shape[1])
    gamma = np.linalg.solve(gram, np.einsum("cmk,ck->cm", dR, r)[:, :, None])[:, :, 0]
    return u + r - np.einsum("cmk,cm->ck", dX + dR, gamma)


NEWTON_AFTER = 30
"""Iterations a chosen start runs alone (shifted and Anderson steps) before its deflation step
switches to the trust-region Newton ascent (:func:`_trust_region`); on bibtex (K = 150) most
eigenpairs converge before, a few climb a ridge of ``T(u, u, u)`` for hundreds more."""


def _polarised_hessian(products, u: np.ndarray) -> np.ndarray:
    """``T(I, I, u)`` from products alone: ``T(I, u, e) = (T(I, u+e, u+e) - T(I, u-e, u-e)) / 4``
    (exact for a symmetric tensor; ``2 dim`` product columns)."""
    E = np.eye(u.size)
    out = products(np.hstack([u[:, None] + E, u[:, None] - E]))
    H = (out[:, :u.size] - out[:, u.size:]) / 4.0
    return 0.5 * (H + H.T)


def _trust_region(deflated, hessian, u, g, lam, *, tol: float, budget: int):
    """Riemannian trust-region Newton ascent of ``f(u) = T_j(u, u, u)`` on the unit sphere.

    From ``u`` (with ``g = T_j(I, u, u)``, ``lam = f(u) > 0``) each step maximises the second
    order model ``f(u) + 3 [r's + s'(2 H - lam I) s / 2]`` (``r = g - lam u`` the residual,
    ``H = T_j(I, I, u)``) over tangent ``s`` with ``||s|| <= delta`` (exactly, from the
    eigendecomposition of the projected Hessian), retracts ``u <- (u + s) / ||u + s||``
    and keeps the step if ``f`` rose by at least a tenth of the model's prediction (or, at
    rounding level, did not fall while the residual shrank); ``delta`` shrinks after poor
    predictions and grows after good full-length ones (Absil, Mahony and Sepulchre, 2008,
    ch. 7). Every accepted step ascends, so the limit is a local maximum of ``f`` (where the
    projected ``2 H - lam I`` is negative semi-definite), and convergence near it is quadratic.
    The Hessian is kept for the next step while steps are accepted with ``rho >= 0.5`` and
    cut the residual by at least 0.3 (chord steps: on bibtex, K = 150, 46 Hessians instead
    of 65 for the same eigenpairs).

    Returns ``(u, g, lam, res, steps, hessians)`` after convergence (``res <= tol lam``) or
    ``budget`` products.
    """
    dim = u.size
    r = g - lam * u
    res = float(np.linalg.norm(r))
    delta = min(1.0, max(10.0 * res / lam, 1e-3)) if lam > 0 else 1.0
    steps = hessians = 0
    B = None
    while steps < budget and not res <= tol * abs(lam):
        if B is None:
            H = hessian(u)
            hessians += 1
            Pu = np.eye(dim) - np.outer(u, u)
            B = Pu @ (2.0 * H - lam * np.eye(dim)) @ Pu
            B = 0.5 * (B + B.T)
            d, E = np.linalg.eigh(B - (np.abs(B).sum() + lam) * np.outer(u, u))
        c = E.T @ r
        top = float(d[-1])
        if top < 0 and np.linalg.norm(c / d) <= delta:             # the Newton step fits
            s = -E @ (c / d)
        else:                                       # on the boundary: ||s(mu)|| = delta
            lo = max(top, 0.0)
            hi = lo + np.linalg.norm(c) / delta + abs(lo) + 1e-300
            for _ in range(100):
                mid = 0.5 * (lo + hi)
                if np.linalg.norm(c / (mid - d)) > delta:
                    lo = mid
                else:
                    hi = mid
                if hi - lo <= 1e-12 * hi:
                    break
            s = E @ (c / (hi - d))
        pred = float(r @ s + 0.5 * s @ (B @ s))
        new = u + s
        new /= np.linalg.norm(new)
        gn = deflated(new[:, None])[:, 0]
        fn = float(new @ gn)
        steps += 1
        rn = gn - fn * new
        resn = float(np.linalg.norm(rn))
        rho = (fn - lam) / (3.0 * pred) if pred > 0 else -1.0
        norm_s = float(np.linalg.norm(s))
        if rho < 0.25:
            delta = 0.25 * norm_s
        elif rho > 0.75 and norm_s >= 0.99 * delta:
            delta = min(2.0 * delta, 1.0)
        if rho > 0.1 or (fn >= lam - 1e-12 * abs(lam) and resn < res):
            if resn > 0.3 * res or rho < 0.5:   # keep the Hessian while it serves (chord)
                B = None
            u, g, lam, r, res = new, gn, fn, rn, resn
    return u, g, lam, res, steps, hessians


def tensor_power_method(products, dim: int, n_components: int, *, n_restarts: int = 10,
                        max_iter: int = 100, tol: float = 1e-8, shift: float = 0.0,
                        adaptive_shift: bool = True, anderson: int = 5, hessian=None,
                        selection_products=None, rng: np.random.Generator) -> PowerResult:
    """Robust tensor power method with deflation (Anandkumar et al., JMLR 2014, Algorithm 1).

    For a symmetric ``dim x dim x dim`` tensor ``T`` given only by ``products(U)``, which
    returns ``T(I, u, u)`` for every column ``u`` of a ``(dim, r)`` block, finds
    ``n_components`` eigenpairs one at a time. At step ``j``, ``n_restarts`` starts iterate

        u <- (T_j(I, u, u) + alpha u) / ||T_j(I, u, u) + alpha u||

    on the deflated tensor ``T_j = T - sum_{i<j} lambda_i v_i (x) v_i (x) v_i`` (applied
    implicitly: ``T_j(I, U, U) = products(U) - V_j diag(lambda) (V_j' U)^2``) until the
    relative eigen-residual ``||T_j(I, u, u) - lambda u|| <= tol |lambda|`` (with
    ``lambda = T_j(u, u, u)``) or ``max_iter`` iterations; the start with the largest
    ``lambda`` becomes ``(lambda_j, v_j)``, with the sign making ``lambda_j >= 0``.

    ``alpha`` is the shift of SS-HOPM (Kolda and Mayo, 2011). With ``adaptive_shift=False``
    it stays ``shift`` and every step is taken as computed (``shift=0``: the plain power
    iteration, which can cycle without converging on a noisy tensor; ``anderson`` is then
    ignored). With ``adaptive_shift=True`` a step that does not increase ``T_j(u, u, u)`` is
    rejected and retried with ``alpha`` doubled (at least ``|lambda|``), and ``alpha`` halves
    back towards ``shift`` after every accepted step: the iteration is then monotone, as
    SS-HOPM with a large enough shift is, but takes the unshifted, fast steps wherever they
    already ascend.

    Acceleration (``adaptive_shift=True`` and ``anderson = m > 0``): once a start's relative
    eigen-residual is below :data:`ANDERSON_START`, its steps are Anderson-extrapolated
    from its last ``m`` iterates (:func:`_anderson`), which costs no extra tensor product.
    Near an eigenvector the iteration is linear with rate ``max |2 h_i + alpha| / (lambda +
    alpha)`` over the eigenvalues ``h_i`` of ``T_j(I, I, v)`` orthogonal to ``v``; on real
    data some ``2 h_i / lambda`` sit near +1 or -1 (bibtex, K = 150: up to 0.99 and down to
    -0.99), where the plain steps need hundreds of iterations and the extrapolated ones a
    few tens (the secant steps converge like GMRES on the linearised iteration). An
    extrapolated step is kept only if it does not decrease ``T_j(u, u, u)`` either (it is
    otherwise dropped with the start's history, without growing ``alpha``), so the limit is
    the local maximum the plain monotone iteration climbs to. A start still unconverged
    after :data:`NEWTON_AFTER` iterations alone is climbing a ridge (residuals that stall
    or grow while ``T_j(u, u, u)`` creeps up; bibtex, K = 150: about one eigenpair in ten,
    some of which took 300+ plain iterations) and finishes with trust-region Newton steps
    (:func:`_trust_region`, from ``hessian(u) = T(I, I, u)``, or from ``2 dim`` products by
    polarisation when ``hessian`` is None), which ascend too and converge in a few steps.
    ``anderson=0`` gives the unaccelerated method (neither extrapolation nor Newton steps).

    ``selection_products``, if given, is a cheaper, less accurate ``products`` (e.g. single
    precision) used for the :data:`SELECTION_ITERATIONS` of the starts, whose only role is
    to rank them; a start is iterated and tested with ``products`` before it is kept, so
    every returned eigenpair meets ``tol`` with the exact products. The ranking, and with it
    the order of deflation, can then differ from the exact one.

    The starts are iterated together (``products`` of ``(dim, r)`` blocks: one BLAS-3 pass
    for all of them) and the pool is carried from one deflation step to the next: only the
    chosen start is replaced by a fresh random unit vector, while the others, which usually
    sit near eigenvectors not yet deflated, start the next step where they stopped. As in
    the paper's algorithm, every start runs a few iterations (:data:`SELECTION_ITERATIONS`),
    the one with the largest ``lambda`` is then iterated alone until it converges (or
    ``max_iter`` iterations in all), and the others keep their progress for the next step.
    Every step thus compares ``n_restarts`` candidates for the price of about one fresh
    start. Deflation is applied to the carried products as a rank-one update
    (``T_j(I, u, u) = T_{j-1}(I, u, u) - lambda_{j-1} (v_{j-1}' u)^2 v_{j-1}``), so a step
    starts with one new product, the fresh start's.

    Returns
    -------
    PowerResult
    """
    pool = _unit_columns(rng, dim, n_restarts)
    lams = np.zeros(n_components)
    V = np.zeros((dim, n_components))
    n_iter = np.zeros(n_components, dtype=np.int64)
    converged = np.zeros(n_components, dtype=bool)
    m = int(anderson) if adaptive_shift else 0
    n_products = n_hessians = 0
    eps = 1e-12
    rough_selection = selection_products is not None
    selection_products = products if selection_products is None else selection_products
    exact = np.ones(n_restarts, dtype=bool)
    fresh = 0                                  # the start replaced after the previous step

    for j in range(n_components):
        Vj, lj = V[:, :j], lams[:j]

        def deflated(U, Vj=Vj, lj=lj, rough=False):
            out = (selection_products if rough else products)(U)
            if Vj.shape[1]:
                out -= Vj @ (lj[:, None] * (Vj.T @ U) ** 2)
            return out

        if j == 0:
            P = deflated(pool, rough=True)                          # T_j(I, u, u)
            n_products += n_restarts
            exact[:] = not rough_selection
        else:                          # T_j = T_{j-1} - lambda v (x) v (x) v: no new products
            P -= np.outer(lams[j - 1] * V[:, j - 1], (V[:, j - 1] @ pool) ** 2)
            P[:, fresh] = deflated(pool[:, fresh:fresh + 1], rough=True)[:, 0]
            n_products += 1
            exact[fresh] = not rough_selection
        f = np.einsum("ij,ij->j", pool, P)                          # T_j(u, u, u)
        res = np.linalg.norm(P - pool * f, axis=0)
        alpha = np.full(n_restarts, float(shift))
        iters = np.zeros(n_restarts, dtype=np.int64)
        hx = np.zeros((n_restarts, m + 1, dim))   # the deflated map changed: fresh histories
        hr = np.zeros((n_restarts, m + 1, dim))
        hn = np.zeros(n_restarts, dtype=np.int64)

        def hessian_j(u, Vj=Vj, lj=lj):
            H = hessian(u) if hessian is not None else _polarised_hessian(products, u)
            if Vj.shape[1]:
                H = H - (Vj * (lj * (Vj.T @ u))) @ Vj.T
            return H

        def residual_ok(res, f):
            return (res <= tol * np.abs(f)) | ~(np.abs(f) > 0) & ~(res > 0)

        active = ~residual_ok(res, f)

        def confirm(c, P=P, f=f, res=res, active=active, hn=hn):
            """Recompute start c's product exactly (it was last iterated with the rough one)."""
            P[:, c] = deflated(pool[:, c:c + 1])[:, 0]
            f[c] = pool[:, c] @ P[:, c]
            res[c] = np.linalg.norm(P[:, c] - f[c] * pool[:, c])
            exact[c] = True
            active[c] = not residual_ok(res[c], f[c])
            if f[c] < 0:
                pool[:, c] *= -1.0
                f[c] *= -1.0
            hn[c] = 0
            return 1

        for it in range(max_iter):
            neg = f < 0
            pool[:, neg] *= -1.0                                   # T(-u,-u,-u) = -T(u,u,u)
            f[neg] *= -1.0
            if m and neg.any():
                hn[neg] = 0
            lead = int(np.argmax(f))
            while not exact[lead] and (it >= SELECTION_ITERATIONS or not active[lead]):
                n_products += confirm(lead)                        # lead with exact products
                lead = int(np.argmax(f))
            if not active[lead]:                                   # the leading start converged
                break
            if m and it >= SELECTION_ITERATIONS + NEWTON_AFTER:   # still climbing: Newton
                u, g, lam, r, steps, nh = _trust_region(
                    deflated, hessian_j, pool[:, lead], P[:, lead], f[lead],
                    tol=tol, budget=max_iter - it)
                pool[:, lead], P[:, lead], f[lead], res[lead] = u, g, lam, r
                iters[lead] += steps
                n_products += steps + (0 if hessian is not None else 2 * dim * nh)
                n_hessians += nh
                active[lead] = not residual_ok(np.array([r]), np.array([lam]))[0]
                break
            idx = np.flatnonzero(active) if it < SELECTION_ITERATIONS else np.array([lead])
            U, Pi = pool[:, idx], P[:, idx]
            new = Pi + alpha[idx] * U
            norms = np.linalg.norm(new, axis=0)
            dead = ~(norms > 0.0)                                  # nothing left to follow
            new[:, dead] = U[:, dead]
            new[:, ~dead] /= norms[~dead]
            extra = np.zeros(idx.size, dtype=bool)
            if m and it >= SELECTION_ITERATIONS:                  # the chosen start, alone
                near = ~dead & (res[idx] <= ANDERSON_START * f[idx])
                hn[idx[~near]] = 0
                if near.any():
                    c = idx[near]
                    hx[c, :-1] = hx[c, 1:]
                    hr[c, :-1] = hr[c, 1:]
                    hx[c, -1] = U[:, near].T
                    hr[c, -1] = (new[:, near] - U[:, near]).T
                    hn[c] = np.minimum(hn[c] + 1, m + 1)
                    ext = hn[c] >= 2
                    if ext.any():
                        y = _anderson(hx[c[ext]], hr[c[ext]], hn[c[ext]]).T
                        ny = np.linalg.norm(y, axis=0)
                        fine = np.isfinite(ny) & (ny > 0)
                        cols = np.flatnonzero(near)[ext][fine]
                        new[:, cols] = y[:, fine] / ny[fine]
                        extra[cols] = True
            selecting = it < SELECTION_ITERATIONS
            Pn = deflated(new, rough=selecting)
            n_products += idx.size
            fn = np.einsum("ij,ij->j", new, Pn)
            iters[idx] += 1
            if adaptive_shift:
                ok = fn >= f[idx] - eps * np.abs(f[idx])
                grow = np.maximum(2.0 * alpha[idx], np.abs(f[idx]))
                alpha[idx] = np.where(ok, np.maximum(float(shift), 0.5 * alpha[idx]),
                                      np.where(extra, alpha[idx], grow))
                if m:
                    hn[idx[~ok]] = 0                               # restart the secant model
            else:
                ok = np.ones(idx.size, dtype=bool)
            acc = idx[ok]
            resn = np.linalg.norm(Pn[:, ok] - new[:, ok] * fn[ok], axis=0)
            pool[:, acc], P[:, acc], f[acc], res[acc] = new[:, ok], Pn[:, ok], fn[ok], resn
            exact[acc] = not (selecting and rough_selection)
            done = residual_ok(resn, fn[ok]) | dead[ok]
            active[acc[done]] = False
        neg = f < 0
        pool[:, neg] *= -1.0
        f[neg] *= -1.0
        best = int(np.argmax(f))
        while not exact[best]:                                     # max_iter ran out rough
            n_products += confirm(best)
            best = int(np.argmax(f))
        lams[j] = f[best]
        V[:, j] = pool[:, best]
        n_iter[j] = iters[best]
        converged[j] = not active[best]
        pool[:, best] = _unit_columns(rng, dim, 1)[:, 0]
        fresh = best
    return PowerResult(eigenvalues=lams, eigenvectors=V, n_iter=n_iter, converged=converged,
                       n_products=n_products, n_hessians=n_hessians)


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
        self._single = None

    @property
    def dim(self) -> int:
        return self.W.shape[1]

    def products(self, U: np.ndarray) -> np.ndarray:
        """``T(I, u, u)`` for every column ``u`` of ``U`` (shape ``(K, r)``)."""
        return self._products(U, self.A, self.W, self.B, self.f)

    def single_products(self, U: np.ndarray) -> np.ndarray:
        """:meth:`products` in single precision (float32 copies of ``A``, ``W``, ``B``, made on
        first use; relative error about ``1e-7``), returned as float64: about 2.5 times faster
        (half the memory traffic). :func:`tensor_power_method` uses it to rank its starts
        only; every eigenpair it returns is iterated and tested with :meth:`products`."""
        if self._single is None:
            self._single = tuple(None if a is None else a.astype(np.float32)
                                 for a in (self.A, self.W, self.B, self.f))
        return self._products(U.astype(np.float32), *self._single).astype(np.float64)

    def _products(self, U, A, W, B, f):
        S = A @ U
        out = A.T @ (S * S)
        if B is not None:
            WU = W @ U
            BU = B @ U
            out -= W.T @ (WU * (2.0 * BU - 2.0 * f[:, None] * WU))
            out -= B.T @ (WU * WU)
        out *= out.dtype.type(self.scale)
        return out

    def hessian(self, u: np.ndarray) -> np.ndarray:
        """``T(I, I, u)``, the ``(K, K)`` matrix of ``v -> T(I, u, v)`` (``O(n K^2)``)::

            H Z = A' diag(A u) A - S - S' - W' diag(B u - 2 f (W u)) W,   S = W' diag(W u) B

        (the terms after the first for ``moments="unbiased"`` only).
        """
        H = self.A.T @ (self.A * (self.A @ u)[:, None])
        if self.B is not None:
            Wu = self.W @ u
            S = self.W.T @ (self.B * Wu[:, None])
            H -= S + S.T
            H -= self.W.T @ (self.W * (self.B @ u - 2.0 * self.f * Wu)[:, None])
        H *= self.scale
        return H

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
        Starts of the tensor power method per eigenpair (the authors' code: 1). Fewer are not
        faster: the starts not chosen carry over to the next deflation step, where they
        give its chosen start a head start (bibtex, K = 150, fit on 80% of the training
        rows: 10 starts 5.0-5.6 s CPU, 3 starts 7.2-7.5 s, 1 start 7.3-7.9 s, with a
        validation AUC 0.003-0.005 lower).
    max_iter : int >= 1, default=300
        Cap on the iterations of a deflation step (the authors' code: 1000); a power step,
        an extrapolated step or a Newton step (``anderson``) each counts as one.
    tol : float > 0, default=1e-6
        Convergence test on the relative eigen-residual,
        ``||T_j(I, u, u) - lambda u|| <= tol * lambda`` (see :func:`tensor_power_method`).
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
        at most 52, every eigenpair converged, fit 4.6-5.7 s; with ``anderson=0``, the
        unaccelerated method: median 49, 4 of 150 stopped at 300, fit 6.9-7.3 s). See
        :func:`tensor_power_method`.
    selection_precision : {"double", "single"}, default="double"
        Precision of the products that rank the ``n_restarts`` starts in each deflation step
        (:data:`SELECTION_ITERATIONS` iterations each, most of the power method's work).
        ``"single"``: float32 copies of the whitened data, about 2.5 times faster per
        product (bibtex, K = 150: fit 3.8-4.5 s instead of 4.6-5.7 s); the chosen start is
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
    :data:`DENSE_EIG_MAX` features and the ``K^3`` tensor never (module docstring: it is
    not faster where it fits). BLAS runs on one thread during ``fit``.

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
        "anderson": [Interval(Integral, 0, None, closed="left")],
        "selection_precision": [StrOptions({"double", "single"})],
        "binarize": [BOOL],
        "random_state": [None, Integral],
    }

    def __init__(self, *, rank: int = 10, moments: str = "paper", prediction: str = "paper",
                 eta: float = 0.001, smoothing: float = 0.001, n_restarts: int = 10,
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
        n, d = context.n_samples, context.n_features
        if n > 0 and d > 0 and isinstance(self.rank, Integral) and self.rank > min(n, d):
            raise InvalidParameterError("rank", _rank_message(self.rank, n, d))

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
        a loaded machine, slow down many times (bibtex, K = 150, 2 threads next to other
        jobs: whitening 1.2 s to 6 s); the fitted numbers then do not depend on the
        caller's thread setting either.
        """
        self._validate_params()
        with threadpool_limits(limits=1):
            return self._fit_moments(X, Y, observed)

    def _fit_moments(self, X, Y, observed):
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
            raise ValueError(f"MoM: X has {X.shape[1]} features, but MoM is expecting "
                             f"{self.n_features_in_} features as input (it was fitted with "
                             f"{self.n_features_in_})")
        X = self._features(X)
        ll = np.asarray(X @ self._log_words)
        if self.prediction == "paper":
            ll += self._log_prior + self._absent_total
            ll -= np.asarray(pattern(X) @ self._absent)
        ll -= ll.max(axis=1, keepdims=True) if ll.shape[0] else 0.0
        post = np.exp(ll)
        post /= post.sum(axis=1, keepdims=True)
        return post

    def _decision_function(self, X) -> np.ndarray:
        """Scores ``P[l|d] = sum_k P[l|h=k] P[h=k|d]``, shape (n_rows, n_labels)."""
        check_is_fitted(self, "label_probs_")
        return self.posterior(X) @ self.label_probs_.T


def _rank_message(rank: int, n: int, d: int) -> str:
    return (f"rank={rank} is larger than the data allow: MoM whitens with {rank} eigenvectors of "
            f"the {d} x {d} word co-occurrence matrix, whose rank is at most "
            f"min(n_samples, n_features) = min({n}, {d}); valid: 1 <= rank <= {min(n, d)}")
