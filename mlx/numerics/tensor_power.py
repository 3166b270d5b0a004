"""The robust tensor power method with deflation, and its accelerations.

Eigenpairs ``T(I, v, v) = lambda v`` of a symmetric ``dim x dim x dim`` tensor known only by
its products ``T(I, u, u)``: :func:`tensor_power_method` (Anandkumar et al. 2014, Algorithm
1) with SS-HOPM's adaptive shift (Kolda and Mayo 2011), Anderson extrapolation of the
chosen start and, for starts still climbing, trust-region Newton steps on the sphere
(:func:`trust_region_ascent`; Absil, Mahony and Sepulchre 2008).

References
----------
A. Anandkumar, R. Ge, D. Hsu, S. M. Kakade and M. Telgarsky, "Tensor decompositions for
learning latent variable models", JMLR 15, 2014.
T. G. Kolda and J. R. Mayo, "Shifted power method for computing tensor eigenpairs",
SIAM J. Matrix Anal. Appl. 32(4), 2011.
P.-A. Absil, R. Mahony and R. Sepulchre, "Optimization algorithms on matrix manifolds",
Princeton University Press, 2008, chapter 7.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = [
    "ANDERSON_START",
    "NEWTON_AFTER",
    "SELECTION_ITERATIONS",
    "PowerResult",
    "TrustRegionResult",
    "polarised_hessian",
    "tensor_power_method",
    "trust_region_ascent",
]


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
        method's cost: each is one pass over ``A`` in
        :meth:`mlx.numerics.moments.WhitenedMoments.products`).
    n_hessians : int
        ``T(I, I, u)`` matrices formed for trust-region Newton steps (each costs about 40
        products with :meth:`mlx.numerics.moments.WhitenedMoments.hessian`).
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


ANDERSON_RIDGE = 1e-12
"""Ridge of the Anderson least-squares problem, relative to the trace of its Gram matrix."""


def _unit_columns(rng, dim: int, r: int) -> np.ndarray:
    U = rng.standard_normal((dim, r))
    return U / np.linalg.norm(U, axis=0)


def _anderson(hx: np.ndarray, hr: np.ndarray, hn: np.ndarray) -> np.ndarray:
    """Anderson (type II) extrapolation of fixed-point iterations, one per row.

    ``hx[c]`` and ``hr[c]`` hold the last ``hn[c]`` iterates ``u`` and their steps
    ``g(u) - u`` (oldest first, right-aligned in a buffer of ``m + 1``). Returns
    ``u + r - (dX + dR) gamma`` with ``gamma`` minimising ``||r - dR gamma||``, the secant
    (multi-secant Broyden) step; the differences of slots not yet filled are zero and get
    ``gamma = 0`` (a ridge of :data:`ANDERSON_RIDGE` of the Gram matrix's trace keeps the
    solve regular).
    """
    u, r = hx[:, -1], hr[:, -1]
    dX, dR = np.diff(hx, axis=1), np.diff(hr, axis=1)                # (c, m, dim)
    filled = np.arange(hx.shape[1] - 1)[None, :] >= hx.shape[1] - hn[:, None]
    dX *= filled[:, :, None]
    dR *= filled[:, :, None]
    gram = np.einsum("cmk,cnk->cmn", dR, dR)
    ridge = ANDERSON_RIDGE * np.einsum("cmm->c", gram) + np.finfo(np.float64).tiny
    gram += ridge[:, None, None] * np.eye(gram.shape[1])
    gamma = np.linalg.solve(gram, np.einsum("cmk,ck->cm", dR, r)[:, :, None])[:, :, 0]
    return u + r - np.einsum("cmk,cm->ck", dX + dR, gamma)


NEWTON_AFTER = 30
"""Iterations a chosen start runs alone (shifted and Anderson steps) before its deflation step
switches to the trust-region Newton ascent (:func:`trust_region_ascent`); on bibtex
(K = 150) most eigenpairs converge before, a few climb a ridge of ``T(u, u, u)`` for hundreds
more."""


def polarised_hessian(products, u: np.ndarray) -> np.ndarray:
    """``T(I, I, u)`` from products alone: ``T(I, u, e) = (T(I, u+e, u+e) - T(I, u-e, u-e)) / 4``
    (exact for a symmetric tensor; ``2 dim`` product columns)."""
    E = np.eye(u.size)
    out = products(np.hstack([u[:, None] + E, u[:, None] - E]))
    H = (out[:, :u.size] - out[:, u.size:]) / 4.0
    return 0.5 * (H + H.T)


@dataclass(frozen=True)
class TrustRegionResult:
    """Outcome of :func:`trust_region_ascent`.

    Attributes
    ----------
    u : ndarray of shape (dim,)
        The last accepted point, a unit vector.
    g : ndarray of shape (dim,)
        ``T_j(I, u, u)`` at ``u``.
    lam : float
        ``f(u) = T_j(u, u, u)``.
    residual : float
        ``||g - lam u||``, the eigen-residual at ``u``.
    n_steps : int
        Steps tried (accepted or not); each cost one product ``T_j(I, u, u)``.
    n_hessians : int
        Hessians ``T_j(I, I, u)`` formed.
    """

    u: np.ndarray
    g: np.ndarray
    lam: float
    residual: float
    n_steps: int
    n_hessians: int


ACCEPT_RATIO = 0.1
"""A trust-region step is kept when ``f`` rose by more than this fraction of the rise the
second-order model predicted (``rho > ACCEPT_RATIO``)."""

SHRINK_RATIO = 0.25
"""Below this ratio ``rho`` of actual to predicted rise the model served poorly: the radius
shrinks to :data:`SHRINK_FACTOR` times the step's length."""

SHRINK_FACTOR = 0.25
"""The radius after a poor prediction, as a fraction of the step's length."""

GROW_RATIO = 0.75
"""Above this ratio ``rho``, after a step on the boundary (:data:`AT_BOUNDARY`), the radius
grows by :data:`GROW_FACTOR` (up to :data:`MAX_RADIUS`)."""

GROW_FACTOR = 2.0
"""The growth of the radius after a good full-length step."""

AT_BOUNDARY = 0.99
"""A step at least this fraction of the radius long counts as a full-length step."""

MAX_RADIUS = 1.0
"""The largest trust-region radius (the steps are tangent to the unit sphere)."""

CHORD_RESIDUAL = 0.3
"""The Hessian is kept for the next step (a chord step) only when the accepted step cut the
eigen-residual to at most this fraction; otherwise it is formed again at the new point."""

CHORD_RATIO = 0.5
"""The Hessian is kept for the next step only when the accepted step had ``rho`` at least
this (the model still predicted well)."""

ROUNDING = 1e-12
"""Relative change of ``T(u, u, u)`` that counts as rounding: a power step that falls by less
is not a descent (:func:`tensor_power_method`), and a trust-region step that falls by less
while the residual shrinks is kept (:func:`trust_region_ascent`)."""

_BISECTION_RTOL = 1e-12
"""Relative width at which the bisection for the boundary multiplier ``mu`` stops."""


def trust_region_ascent(deflated, hessian, u, g, lam, *, tol: float, budget: int,
                        accept_ratio: float = ACCEPT_RATIO, shrink_ratio: float = SHRINK_RATIO,
                        shrink_factor: float = SHRINK_FACTOR, grow_ratio: float = GROW_RATIO,
                        grow_factor: float = GROW_FACTOR, at_boundary: float = AT_BOUNDARY,
                        max_radius: float = MAX_RADIUS, chord_residual: float = CHORD_RESIDUAL,
                        chord_ratio: float = CHORD_RATIO,
                        rounding: float = ROUNDING) -> TrustRegionResult:
    """Riemannian trust-region Newton ascent of ``f(u) = T_j(u, u, u)`` on the unit sphere.

    From ``u`` (with ``g = T_j(I, u, u)``, ``lam = f(u) > 0``) each step maximises the second
    order model ``f(u) + 3 [r's + s'(2 H - lam I) s / 2]`` (``r = g - lam u`` the residual,
    ``H = T_j(I, I, u)``) over tangent ``s`` with ``||s|| <= delta`` (exactly, from the
    eigendecomposition of the projected Hessian), retracts ``u <- (u + s) / ||u + s||``
    and keeps the step if ``f`` rose by more than ``accept_ratio`` times the model's
    prediction (or, within ``rounding``, did not fall while the residual shrank); ``delta``
    shrinks after poor predictions (``rho < shrink_ratio``) and grows after good
    full-length ones (``rho > grow_ratio``) (Absil, Mahony and Sepulchre, 2008, ch. 7).
    Every accepted step ascends, so the limit is a local maximum of ``f`` (where the
    projected ``2 H - lam I`` is negative semi-definite), and convergence near it is
    quadratic. The Hessian is kept for the next step while steps are accepted with
    ``rho >= chord_ratio`` and cut the residual to at most ``chord_residual`` times its value
    (chord steps: on bibtex, K = 150, 46 Hessians instead of 65 for the same eigenpairs).

    Parameters
    ----------
    deflated : callable
        ``deflated(U) -> T_j(I, u, u)`` for every column of a ``(dim, r)`` block.
    hessian : callable
        ``hessian(u) -> T_j(I, I, u)``, a symmetric ``(dim, dim)`` matrix.
    u, g : ndarray of shape (dim,)
        The start (a unit vector) and ``T_j(I, u, u)`` there.
    lam : float
        ``T_j(u, u, u)``.
    tol : float
        Stop when ``||T_j(I, u, u) - lam u|| <= tol |lam|``.
    budget : int
        The most steps (products) to try.
    accept_ratio, shrink_ratio, shrink_factor, grow_ratio, grow_factor, at_boundary, \
max_radius, chord_residual, chord_ratio, rounding : float
        The constants of the same names in upper case (each documented there).

    Returns
    -------
    TrustRegionResult
    """
    dim = u.size
    r = g - lam * u
    res = float(np.linalg.norm(r))
    delta = min(max_radius, max(10.0 * res / lam, 1e-3)) if lam > 0 else max_radius
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
                if hi - lo <= _BISECTION_RTOL * hi:
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
        if rho < shrink_ratio:
            delta = shrink_factor * norm_s
        elif rho > grow_ratio and norm_s >= at_boundary * delta:
            delta = min(grow_factor * delta, max_radius)
        if rho > accept_ratio or (fn >= lam - rounding * abs(lam) and resn < res):
            if resn > chord_residual * res or rho < chord_ratio:   # keep H while it serves
                B = None
            u, g, lam, r, res = new, gn, fn, rn, resn
    return TrustRegionResult(u=u, g=g, lam=lam, residual=res, n_steps=steps,
                             n_hessians=hessians)


# Complexity 21 (over 15): restarts, shifts, Anderson and trust-region steps share state.
def tensor_power_method(products, dim: int, n_components: int, *, n_restarts: int = 10,  # noqa: C901
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
    (:func:`trust_region_ascent`, from ``hessian(u) = T(I, I, u)``, or from ``2 dim`` products by
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
            H = hessian(u) if hessian is not None else polarised_hessian(products, u)
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
                tr = trust_region_ascent(deflated, hessian_j, pool[:, lead], P[:, lead],
                                         f[lead], tol=tol, budget=max_iter - it)
                pool[:, lead], P[:, lead], f[lead], res[lead] = tr.u, tr.g, tr.lam, tr.residual
                iters[lead] += tr.n_steps
                n_products += tr.n_steps + (0 if hessian is not None else 2 * dim * tr.n_hessians)
                n_hessians += tr.n_hessians
                active[lead] = not residual_ok(np.array([tr.residual]), np.array([tr.lam]))[0]
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
                ok = fn >= f[idx] - ROUNDING * np.abs(f[idx])
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
