"""Partial singular value thresholding: the proximal step of a tail (or head) sum of
singular values.

For ``Q`` of shape (d, K) with singular values ``s_1 >= s_2 >= ... >= s_r`` (``r = min(d, K)``)
and singular vectors ``u_j, v_j``,

* ``shrink="tail"``: ``W = sum_{j <= theta} s_j u_j v_j' + sum_{j > theta} (s_j - tau)_+ u_j v_j'``,
  the exact minimiser of ``1/2 ||W - Q||_F^2 + tau sum_{j > theta} s_j(W)`` (Oh et al., partial
  sum minimisation of singular values, Theorem 1; LSVV paper, Appendix D for the objective).
  ``theta = 0`` is the trace-norm proximal step (singular value thresholding); ``theta >= r``
  leaves ``Q`` unchanged.
* ``shrink="head"``: the ``theta`` largest singular values are soft-thresholded and the others
  kept, ``(s_j - tau)_+`` for ``j <= theta``: the update written in the LSVV paper's
  Algorithm 1, eqs. (13) and (16). It is not the proximal step of the tail sum of (11).

:func:`partial_svt` never forms a full SVD. It diagonalises the Gram matrix of the smaller
side (``Q'Q``, K x K, when ``d >= K``, else ``QQ'``) with a symmetric eigensolver and applies
the shrinkage through that orthogonal basis: for ``d >= K``, with ``Q'Q = V diag(lam) V'``,
the columns ``Q v_j = s_j u_j`` are orthogonal with norms ``s_j``, and
``W = Q - sum_{j shrunk} min(s_j, tau) u_j v_j'`` needs them for the shrunk directions only
(the kept ones are not touched). Cost: ``d K^2`` (Gram) + an ``r x r`` symmetric eigensolver
+ ``4 d K (number shrunk)`` flops, against ``O(d^2 K)`` for the full SVD (``U`` of size
d x d) of the naive route.

Accuracy of small singular values: ``sqrt(lam_j)`` carries an absolute error of about
``sqrt(eps) * s_1`` (the eigenvalues of ``Q'Q`` are accurate to ``eps * s_1^2`` only), so a
singular value below ``1e-8 s_1`` cannot be read from it. The values used for the shrinkage
are instead the column norms ``||Q v_j||``: their error comes from the eigenvector errors
only, which mix ``v_j`` with ``v_k`` by an angle of about ``eps s_1^2 / |s_j^2 - s_k^2|`` and
so cost about ``eps s_1^2 / s_k`` (largest for ``s_k`` just above the ``sqrt(eps) s_1`` noise
level; components that ``Q`` maps to tiny vectors mix harmlessly). On a graded spectrum
``1 .. 1e-14`` the shrunk singular values agree with the SVD route to ``1e-12`` absolute,
against ``1e-8`` through ``sqrt(lam)`` (``tests/numerics/test_svt.py``); for the proximal
step of a stochastic gradient method that is ample, and an SVD (:func:`partial_svt_svd`)
remains available where ``eps * s_1`` accuracy is needed. Which
values are the ``theta`` largest is read from ``lam``.
"""

from __future__ import annotations

import numpy as np
import scipy.linalg

__all__ = ["partial_svt", "partial_svt_svd", "shrink_values", "shrunk_sum"]

_SHRINK = ("tail", "head")


def _check(Q, tau, theta, shrink):
    Q = np.asarray(Q, dtype=np.float64)
    if Q.ndim != 2:
        raise ValueError(f"partial_svt: Q must be 2-D; got shape {Q.shape}")
    if not (np.isfinite(tau) and tau >= 0):
        raise ValueError(f"partial_svt: tau must be a finite number >= 0; got {tau!r}")
    if int(theta) != theta or theta < 0:
        raise ValueError(f"partial_svt: theta must be an int >= 0; got {theta!r}")
    if shrink not in _SHRINK:
        raise ValueError(f"partial_svt: shrink must be 'tail' or 'head'; got {shrink!r}")
    return Q, float(tau), int(theta)


def _is_identity(r: int, tau: float, theta: int, shrink: str) -> bool:
    """Whether the step leaves every singular value unchanged."""
    if tau == 0.0 or r == 0:
        return True
    return theta >= r if shrink == "tail" else theta == 0


def shrink_values(s: np.ndarray, tau: float, theta: int, shrink: str = "tail") -> np.ndarray:
    """New singular values for ``s`` sorted in decreasing order (see the module docstring)."""
    s = np.asarray(s, dtype=np.float64)
    out = s.copy()
    part = slice(theta, None) if shrink == "tail" else slice(0, theta)
    out[part] = np.maximum(s[part] - tau, 0.0)
    return out


def shrunk_sum(s: np.ndarray, theta: int, shrink: str = "tail") -> float:
    """The sum the step shrinks: ``sum_{j > theta} s_j`` (tail) or ``sum_{j <= theta} s_j``
    (head), for ``s`` sorted in decreasing order."""
    s = np.asarray(s, dtype=np.float64)
    return float(s[theta:].sum() if shrink == "tail" else s[:theta].sum())


def partial_svt(Q, tau: float, theta: int, *, shrink: str = "tail") -> np.ndarray:
    """Partial singular value thresholding of ``Q`` through the Gram matrix of its smaller side.

    Parameters
    ----------
    Q : ndarray of shape (d, K)
    tau : float >= 0
        Threshold subtracted from the shrunk singular values (clipped at 0).
    theta : int >= 0
        Number of leading singular values kept (``"tail"``) or shrunk (``"head"``).
    shrink : {"tail", "head"}, default="tail"

    Returns
    -------
    W : ndarray of shape (d, K)
        A new array (``Q`` is not modified); ``Q`` itself, unchanged, when the step shrinks
        nothing (``tau = 0``; ``theta >= min(d, K)`` for tail; ``theta = 0`` for head).
    """
    Q, tau, theta = _check(Q, tau, theta, shrink)
    d, K = Q.shape
    r = min(d, K)
    if _is_identity(r, tau, theta, shrink):
        return Q
    tall = d >= K
    gram = Q.T @ Q if tall else Q @ Q.T                           # (r, r), symmetric PSD
    _, B = scipy.linalg.eigh(gram, overwrite_a=True, check_finite=False, driver="evd")
    order = np.arange(r - 1, -1, -1)                              # by decreasing eigenvalue
    idx = order[theta:] if shrink == "tail" else order[:theta]
    Bs = B[:, idx]                                                # the directions to shrink
    # tall: columns Q v_j = s_j u_j; wide: rows u_j' Q = s_j v_j'
    Ps = Q @ Bs if tall else Bs.T @ Q
    s = np.sqrt(np.einsum("ij,ij->j", Ps, Ps) if tall else np.einsum("ij,ij->i", Ps, Ps))
    cut = np.minimum(s, tau)                                      # s_j - (s_j - tau)_+
    frac = np.divide(cut, s, out=np.ones_like(s), where=s > 0)
    # W = Q - sum_{j shrunk} min(s_j, tau) u_j v_j'; the kept directions are left untouched.
    if tall:
        return Q - (Ps * frac) @ Bs.T
    return Q - Bs @ (Ps * frac[:, None])


def partial_svt_svd(Q, tau: float, theta: int, *, shrink: str = "tail",
                    full_matrices: bool = False) -> np.ndarray:
    """The same step computed from an SVD of ``Q`` (the reference; ``full_matrices=True`` is
    the full SVD the authors' code takes at every mini-batch)."""
    Q, tau, theta = _check(Q, tau, theta, shrink)
    r = min(Q.shape)
    if _is_identity(r, tau, theta, shrink):
        return Q
    U, s, Vt = np.linalg.svd(Q, full_matrices=full_matrices)
    new = shrink_values(s, tau, theta, shrink)
    return (U[:, :r] * new) @ Vt[:r]
