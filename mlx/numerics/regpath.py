"""A whole ridge regularisation path from one factorisation, scored by generalised
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

:class:`RidgePath` need not compute the eigenvectors: where a cost model of the sizes predicts
it cheaper (:func:`tridiag_pays`), it reduces the Gram matrix to tridiagonal form (the first,
and cheapest, stage of an eigendecomposition) and evaluates ``RSS`` at each penalty by one
tridiagonal solve (see the class).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.linalg
import scipy.sparse as sp

from mlx.numerics.spmm import gram
from mlx.numerics.tridiag import gram_tridiag

__all__ = ["GCVChoice", "RidgePath", "choose_gcv", "gcv_scores", "leave_one_out", "leverage",
           "path_grid", "spectrum", "tridiag_pays"]

PATH_DECADES = (-10.0, 1.0)
"""The path runs from ``1e-10`` to ``10`` times the largest eigenvalue of ``X'X``: from
least squares to a model shrunk almost to zero."""

PATH_STEPS_PER_DECADE = 3

TRIDIAG_MIN_RSS = 1e-6
"""A primal tridiagonal path whose residual falls below this fraction of ``||T||^2`` is
recomputed from the eigendecomposition (:class:`RidgePath`): the relative rounding error of
``RSS`` stays below about ``1e-10`` above it."""

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
    G = gram(X, rows=not primal)
    s, vecs = scipy.linalg.eigh(G, overwrite_a=True, check_finite=False, driver="evd")
    top = float(s[-1]) if s.size else 0.0
    s = np.where(s > 1e-12 * max(top, 0.0), s, 0.0)
    return s, vecs, primal


class RidgePath:
    """The ridge path of targets ``T`` on ``X`` from one factorisation of the smaller Gram
    matrix (``X'X`` when ``n_features <= n``, else ``XX'``).

    With ``method="tridiag"`` the Gram matrix is reduced to tridiagonal form
    ``Q T Q'`` (:mod:`mlx.numerics.tridiag`: a third to a half of the cost of its
    eigendecomposition) and every penalty of the path costs one tridiagonal solve,
    ``O(d m)``: ``W = Q (T + lam I)^-1 Q'X'T`` and, with ``r = ||T||^2``,
    ``RSS = r - tr(T'X W) - lam ||W||^2`` (primal) or ``RSS = lam^2 ||(T + lam I)^-1 Q'T||^2``
    (dual, no cancellation); ``df`` comes from the eigenvalues of ``T``. Where the primal
    residual is so small at the least-squares end that rounding could decide (``RSS`` below
    :data:`TRIDIAG_MIN_RSS` of ``||T||^2``: targets almost in the column space of ``X``),
    the path is recomputed from the eigendecomposition, whose GCV has no cancellation.

    ``method="auto"`` (the default) takes whichever of the two :func:`tridiag_pays` predicts
    to be cheaper; they agree to rounding.

    ``method="eigh"``, or an ``eig = (s, vecs, primal)`` already computed
    (:func:`spectrum`), uses ``P = vecs' X'T`` (primal) or ``P = vecs' T`` (dual), so that
    :meth:`choose` scores every penalty by GCV in ``O(len(s))`` and :meth:`coef` gives the
    ridge weights at any penalty in ``O(d m min(n, d))`` without another factorisation.
    With a primal ``eig`` or ``tri`` (:func:`mlx.numerics.tridiag.gram_tridiag` of ``X``),
    ``T`` may be None when ``XtT = X'T`` and ``t_sq = ||T||^2`` are given (e.g. centred
    targets that are never formed).
    """

    def __init__(self, X, T, *, eig=None, tri=None, t_sq: float | None = None, XtT=None,
                 method: str = "auto", leverage_rows: int = 0):
        if method not in ("auto", "tridiag", "eigh"):
            raise ValueError(
                f"RidgePath: method must be 'auto', 'tridiag' or 'eigh'; got {method!r}")
        n, d = X.shape
        self.X = X
        self.n = n
        if t_sq is None:
            t_sq = float(T.multiply(T).sum()) if sp.issparse(T) else float(np.vdot(T, T))
        self.t_sq = float(t_sq)
        self.primal = d <= n if eig is None else bool(eig[2])
        if XtT is None:
            XtT = X.T @ T if self.primal else T
        self._XtT = XtT.toarray() if sp.issparse(XtT) else np.asarray(XtT, dtype=np.float64)
        self.tri = None
        if method == "auto":
            method = ("tridiag" if tridiag_pays(min(n, d), self._XtT.shape[1], leverage_rows)
                      else "eigh")
        if eig is None and (tri is not None or method == "tridiag"):
            if tri is None:
                tri = gram_tridiag(X if self.primal else sp.csr_matrix(X).T)
            self.tri, self.s, self.vecs = tri, tri.evals, None
            self.P = tri.rotate(self._XtT)
            return
        self._from_eig(spectrum(X) if eig is None else eig)

    def _from_eig(self, eig) -> None:
        self.s, self.vecs, self.primal = eig
        self.tri = None
        self.P = self.vecs.T @ self._XtT
        q = np.einsum("ij,ij->i", self.P, self.P)
        if self.primal:                        # U_i'T = V_i'X'T / sqrt(s_i)
            q = np.divide(q, self.s, out=np.zeros_like(q), where=self.s > 0)
        self.q = q

    def choose(self, grid=None) -> GCVChoice:
        """The penalty of lowest GCV on ``grid`` (default :func:`path_grid` of ``max(s)``),
        as :func:`choose_gcv`."""
        if self.tri is None:
            return choose_gcv(self.s, self.q, self.t_sq, self.n, grid)
        given, grid = grid, _grid(self.s, grid)
        rss = np.empty(grid.size)
        for i, lam in enumerate(grid):
            Z = self.tri.solve(self.P, float(lam))
            if self.primal:
                rss[i] = self.t_sq - float(np.vdot(self.P, Z)) - lam * float(np.vdot(Z, Z))
            else:
                rss[i] = lam * lam * float(np.vdot(Z, Z))
        if self.primal and rss.min() < TRIDIAG_MIN_RSS * self.t_sq:
            self._from_eig(spectrum(self.X))   # rounding could decide: the exact route
            return self.choose(given)
        shrink = grid[None, :] / (self.s[:, None] + grid[None, :])
        resid_df = (self.n - self.s.size) + shrink.sum(axis=0)
        return _choice(grid, _gcv(np.maximum(rss, 0.0), resid_df, self.n))

    def coef(self, lam: float) -> np.ndarray:
        """Ridge weights ``(X'X + lam I)^-1 X'T`` (``lam > 0``), shape (n_features, m)."""
        if self.tri is not None:
            Z = self.tri.unrotate(self.tri.solve(self.P, float(lam)))
            return Z if self.primal else np.asarray(self.X.T @ Z)
        scaled = self.P / (self.s + float(lam))[:, None]
        if self.primal:
            return self.vecs @ scaled
        return np.asarray(self.X.T @ (self.vecs @ scaled))

    def leverage(self, lam: float, rows) -> np.ndarray:
        """Diagonal entries ``h_ii = x_i'(X'X + lam I)^-1 x_i`` of the hat matrix at ``rows``,
        from the same factorisation: ``z_i'(T + lam I)^-1 z_i`` with ``z_i = Q'x_i``
        (primal; ``O(d^2)`` a row) or ``1 - lam e_i'(XX' + lam I)^-1 e_i`` (dual, ``O(n^2)``
        a row); from the eigendecomposition ``sum_j (x_i'v_j)^2 / (s_j + lam)`` (primal) or
        ``sum_j u_ij^2 s_j / (s_j + lam)`` (dual), ``O(nnz_row len(s))`` a row."""
        if self.tri is None:
            return leverage(self.s, self.vecs, self.primal, self.X, lam, rows)
        rows = np.asarray(rows)
        dim = self.tri.size
        h = np.empty(rows.size)
        step = max(1, LEVERAGE_BLOCK // max(1, dim))
        for a in range(0, rows.size, step):
            part = rows[a:a + step]
            if self.primal:
                block = self.X[part]
                Z = (block.toarray() if sp.issparse(block) else np.asarray(block)).T
            else:
                Z = np.zeros((dim, part.size))
                Z[part, np.arange(part.size)] = 1.0
            Z = self.tri.rotate(Z)
            quad = np.einsum("ij,ij->j", Z, self.tri.solve(Z, float(lam)))
            h[a:a + step] = quad if self.primal else 1.0 - float(lam) * quad
        return h


def tridiag_pays(dim: int, m: int, leverage_rows: int = 0) -> bool:
    """Whether the tridiagonal route of :class:`RidgePath` is predicted to cost less than
    the eigendecomposition, for a Gram matrix of order ``dim``, ``m`` targets and
    ``leverage_rows`` rows whose leverage will be asked for.

    Seconds on one core of a 2020s x86 machine (OpenBLAS; only the speed of a fit depends on
    them): the eigendecomposition ``1.4e-10 dim^3``, the tridiagonal reduction
    ``4.5e-11 dim^3`` (a third), a tridiagonal solve ``6e-9`` a right-hand side entry (one per
    penalty of :func:`path_grid`), a product with the eigenvectors or the reflectors ``1e-10 dim^2``
    a column (the tridiagonal route's leverage rotates each row: ``dim^2`` a row, where the
    eigenvectors take the sparse row as it is)."""
    d, m, r = float(dim), float(m), float(leverage_rows)
    eigh = 1.4e-10 * d ** 3 + 1e-10 * d * d * m
    tri = 4.5e-11 * d ** 3 + path_grid(1.0).size * 6e-9 * d * m + 1e-10 * d * d * (m + r)
    return tri < eigh


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


def _grid(s, grid) -> np.ndarray:
    s = np.asarray(s, dtype=np.float64)
    if grid is None:
        return path_grid(float(s.max()) if s.size else 0.0)
    return np.sort(np.asarray(grid, dtype=np.float64))


def _gcv(rss, resid_df, n: int) -> np.ndarray:
    """``RSS / (resid_df / n)^2``, ``inf`` where the fit interpolates (``resid_df <= 0``)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(resid_df > 0, rss / (resid_df / n) ** 2, np.inf)


def _choice(grid, scores) -> GCVChoice:
    i = int(np.argmin(scores))
    return GCVChoice(float(grid[i]), grid, scores, i in (0, len(grid) - 1))


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
    return _gcv(rss, resid_df, n)


def choose_gcv(s, q, t_sq: float, n: int, grid=None) -> GCVChoice:
    """The penalty of lowest GCV on ``grid`` (default :func:`path_grid` of ``max(s)``)."""
    grid = _grid(s, grid)
    return _choice(grid, gcv_scores(s, q, t_sq, n, grid))
