"""A whole ridge regularisation path from one eigendecomposition, scored by generalised
cross-validation (GCV).

For the multi-output ridge problem ``min_W ||T - X W||_F^2 + lam ||W||_F^2`` with
``X = U diag(sqrt(s)) V'`` (``s``: the eigenvalues of ``X'X``, equivalently of ``XX'``), the
fitted values are ``U diag(s / (s + lam)) U'T``, so with ``q_i = ||U_i'T||^2`` and
``t = ||T||_F^2``

    RSS(lam) = t - sum_i q_i + sum_i q_i (lam / (s_i + lam))^2
    df(lam)  = sum_i s_i / (s_i + lam) = len(s) - sum_i lam / (s_i + lam)
    GCV(lam) = RSS(lam) / (1 - df(lam) / n)^2            (up to the constant 1 / (n m))

(Golub, Heath and Wahba 1979). Given ``s`` and ``q`` every point of the path costs
``O(len(s))``: the whole path costs about what one fit does. ``q`` comes from the primal
eigendecomposition (``U_i'T = V_i'X'T / sqrt(s_i)``) or the dual one of ``XX'``, whichever is
smaller (:func:`spectrum`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.linalg
import scipy.sparse as sp

__all__ = ["GCVChoice", "RidgePath", "choose_gcv", "gcv_scores", "leave_one_out", "leverage",
           "path_grid", "spectrum"]

PATH_DECADES = (-10.0, 1.0)
"""The path runs from ``1e-10`` to ``10`` times the largest eigenvalue of ``X'X``: from
least squares to a model shrunk almost to zero."""

PATH_STEPS_PER_DECADE = 3

LEVERAGE_BLOCK = 1 << 20
"""Entries of one dense block of rows in :func:`leverage` (8 MB)."""
LEVERAGE_SPARSE_DENSITY = 0.1
"""Rows of :func:`leverage` with at most this fraction of stored entries are multiplied as
sparse rows (fewer operations by 1 / density, against BLAS's speed on dense blocks)."""


@dataclass(frozen=True)
class GCVChoice:
    """The penalty GCV chose on a path.

    Attributes
    ----------
    value : float
        The chosen penalty (the first of equal scores, from the smallest penalty up).
    grid : ndarray
        The penalties of the path, ascending.
    scores : ndarray
        GCV at each penalty (``inf`` where the fit interpolates: ``df >= n``).
    edge : bool
        Whether ``value`` is the smallest or largest penalty of the path.
    """

    value: float
    grid: np.ndarray
    scores: np.ndarray
    edge: bool


def path_grid(s_max: float) -> np.ndarray:
    """Penalties from ``1e-10 s_max`` to ``10 s_max``, three per decade (34 values)."""
    lo, hi = PATH_DECADES
    n = int(round((hi - lo) * PATH_STEPS_PER_DECADE)) + 1
    return max(float(s_max), np.finfo(float).tiny) * np.logspace(lo, hi, n)


def spectrum(X):
    """Eigenvalues ``s`` (ascending) and eigenvectors of the smaller Gram matrix of ``X``.

    Returns ``(s, vecs, primal)``: ``primal`` is True for ``X'X`` (``n_features <= n``),
    False for ``XX'``. Rounding noise below ``1e-12 max(s)`` is set to 0.
    """
    n, d = X.shape
    primal = d <= n
    G = X.T @ X if primal else X @ X.T
    G = G.toarray() if sp.issparse(G) else np.asarray(G, dtype=np.float64)
    s, vecs = scipy.linalg.eigh(G, overwrite_a=True, check_finite=False, driver="evd")
    top = float(s[-1]) if s.size else 0.0
    s = np.where(s > 1e-12 * max(top, 0.0), s, 0.0)
    return s, vecs, primal


class RidgePath:
    """The ridge path of targets ``T`` on ``X`` from one eigendecomposition.

    ``RidgePath(X, T)`` computes :func:`spectrum` of ``X`` (or takes ``eig = (s, vecs,
    primal)`` already computed) and ``P = vecs' X'T`` (primal) or ``P = vecs' T`` (dual), so
    that :meth:`choose` scores every penalty by GCV in ``O(len(s))`` and :meth:`coef` gives
    the ridge weights at any penalty in ``O(d m min(n, d))`` without another factorisation.
    With a primal ``eig``, ``T`` may be None when ``XtT = X'T`` and ``t_sq = ||T||^2`` are
    given (e.g. centred targets that are never formed).
    """

    def __init__(self, X, T, *, eig=None, t_sq: float | None = None, XtT=None):
        self.s, self.vecs, self.primal = spectrum(X) if eig is None else eig
        self.X = X
        if XtT is None:
            XtT = X.T @ T if self.primal else T
        XtT = XtT.toarray() if sp.issparse(XtT) else np.asarray(XtT, dtype=np.float64)
        self.P = self.vecs.T @ XtT
        q = np.einsum("ij,ij->i", self.P, self.P)
        if self.primal:                        # U_i'T = V_i'X'T / sqrt(s_i)
            q = np.divide(q, self.s, out=np.zeros_like(q), where=self.s > 0)
        self.q = q
        if t_sq is None:
            t_sq = float(T.multiply(T).sum()) if sp.issparse(T) else float(np.vdot(T, T))
        self.t_sq = float(t_sq)
        self.n = X.shape[0]

    def choose(self, grid=None) -> GCVChoice:
        """:func:`choose_gcv` on this path."""
        return choose_gcv(self.s, self.q, self.t_sq, self.n, grid)

    def coef(self, lam: float) -> np.ndarray:
        """Ridge weights ``(X'X + lam I)^-1 X'T`` (``lam > 0``), shape (n_features, m)."""
        scaled = self.P / (self.s + float(lam))[:, None]
        if self.primal:
            return self.vecs @ scaled
        return np.asarray(self.X.T @ (self.vecs @ scaled))

    def leverage(self, lam: float, rows) -> np.ndarray:
        """Diagonal entries ``h_ii = x_i'(X'X + lam I)^-1 x_i`` of the hat matrix at ``rows``,
        from the same eigendecomposition: ``sum_j (x_i'v_j)^2 / (s_j + lam)`` (primal) or
        ``sum_j u_ij^2 s_j / (s_j + lam)`` (dual); ``O(len(rows) nnz_row len(s))``."""
        return leverage(self.s, self.vecs, self.primal, self.X, lam, rows)


def leverage(s, vecs, primal: bool, X, lam: float, rows) -> np.ndarray:
    """:meth:`RidgePath.leverage` for a spectrum ``(s, vecs, primal)`` of ``X``
    (:func:`spectrum`). Primal: the rows, in blocks of at most :data:`LEVERAGE_BLOCK`
    entries, are multiplied by ``V diag(s + lam)^-1/2``: as sparse rows when at most
    :data:`LEVERAGE_SPARSE_DENSITY` of their entries are stored (2-5x faster than the dense
    product at the 1.6-4% densities of the text sets), else made dense for one BLAS product
    each."""
    s = np.asarray(s, dtype=np.float64)
    rows = np.asarray(rows)
    if not primal:
        U = np.asarray(vecs[rows], dtype=np.float64)
        return np.einsum("ij,ij->i", U * (s / (s + float(lam))), U)
    scaled = vecs * (1.0 / np.sqrt(s + float(lam)))
    h = np.empty(rows.size)
    step = max(1, LEVERAGE_BLOCK // max(1, X.shape[1]))
    for a in range(0, rows.size, step):
        block = X[rows[a:a + step]]
        if sp.issparse(block) and block.nnz <= LEVERAGE_SPARSE_DENSITY * np.prod(block.shape):
            Z = np.asarray(block @ scaled)
        else:
            Z = (block.toarray() if sp.issparse(block) else np.asarray(block)) @ scaled
        h[a:a + step] = np.einsum("ij,ij->i", Z, Z)
    return h


def leave_one_out(fitted, targets, h) -> np.ndarray:
    """Leave-one-out predictions of a linear smoother from its fitted values on all rows:
    ``(fitted_i - h_ii t_i) / (1 - h_ii)`` per row ``i`` (exact for ridge regression, whose
    prediction of row ``i`` from the other rows is ``t_i - e_i / (1 - h_ii)``, ``e_i`` the
    residual; Allen 1974). ``fitted`` and ``targets`` have one row per entry of ``h``."""
    h = np.asarray(h, dtype=np.float64)[:, None]
    targets = targets.toarray() if sp.issparse(targets) else np.asarray(targets)
    return (np.asarray(fitted, dtype=np.float64) - h * targets) / np.maximum(1.0 - h, 1e-12)


def gcv_scores(s, q, t_sq: float, n: int, grid) -> np.ndarray:
    """GCV (up to a constant factor) at every penalty of ``grid``; see the module docstring."""
    s = np.asarray(s, dtype=np.float64)[:, None]
    q = np.asarray(q, dtype=np.float64)[:, None]
    lam = np.asarray(grid, dtype=np.float64)[None, :]
    shrink = lam / (s + lam)                                   # 1 - s / (s + lam)
    # Both terms are formed without cancellation, so that GCV stays exact near the
    # least-squares end, where RSS and n - df both vanish like lam^2 and lam when n <= d:
    # RSS = (part of T outside the column space of X) + sum_i q_i shrink_i^2,
    # n - df = (n - len(s)) + sum_i shrink_i.
    outside = float(t_sq) - float(q.sum())
    outside = outside if outside > 1e-12 * float(t_sq) else 0.0
    rss = outside + (q * shrink ** 2).sum(axis=0)
    resid_df = (n - s.shape[0]) + shrink.sum(axis=0)
    with np.errstate(divide="ignore", invalid="ignore"):
        scores = np.where(resid_df > 0, rss / (resid_df / n) ** 2, np.inf)
    return scores


def choose_gcv(s, q, t_sq: float, n: int, grid=None) -> GCVChoice:
    """The penalty of lowest GCV on ``grid`` (default :func:`path_grid` of ``max(s)``)."""
    s = np.asarray(s, dtype=np.float64)
    grid = path_grid(float(s.max()) if s.size else 0.0) if grid is None else np.sort(
        np.asarray(grid, dtype=np.float64))
    scores = gcv_scores(s, q, t_sq, n, grid)
    i = int(np.argmin(scores))
    return GCVChoice(float(grid[i]), grid, scores, i in (0, len(grid) - 1))
