"""Matrix-free operations on partially observed bilinear scores.

LEML scores an (instance, label) pair by ``s_ij = r_i . q_j``, the dot product of
a row of ``R = X W`` (or of ``R = A`` with ``A = X W`` fixed, when the labels'
factor ``H`` is the unknown) and a row of the other factor ``Q``. Everything
LEML needs is a sum over the observed set ``Omega`` of functions of ``s_ij``:
the loss, and the sparse matrices ``D_ij = l'(y_ij, s_ij)`` and
``U_ij = l''(y_ij, s_ij) t_ij`` that enter the gradient ``D Q`` and the
Hessian-vector product ``U Q`` (Yu et al. 2014, Algorithm 1). The classes here
compute these without ever holding the ``(n_samples, n_labels)`` score matrix:

* :class:`SparseTargets` stores ``Omega`` as a CSR pattern and evaluates scores
  only at its entries, in chunks (cost ``O(|Omega| k)``, memory ``O(|Omega|)``);
* :class:`FullTargets` is the fully observed case (``|Omega| = n L``): it keeps the
  sparse 0/1 label matrix and works through row blocks of the score matrix
  whose size is bounded by a constant, recomputing scores when curvature is
  needed instead of storing an ``n x L`` array.

:class:`FactorProblem` turns either into the convex subproblem in one factor,

    g(F) = sum_{(i,j) in Omega} l(y_ij, (P F)_i . Q_j) + l2_reg/2 ||F||_F^2,

with ``P = X`` for the instance factor ``W`` and ``P = I`` for the label factor
``H`` (then the targets are the transposed view). Its ``fun_grad`` / ``hessp``
feed :func:`mlx.numerics.tron.tron` and :func:`mlx.numerics.cg.cg` directly.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from mlx.numerics.losses import Loss
from mlx.numerics.ridge import psd_solve
from mlx.numerics.spmm import SparseProducts, get_threads

__all__ = [
    "CHUNK_ENTRIES",
    "CURVATURE_CACHE_ENTRIES",
    "DENSE_SCORE_DENSITY",
    "FactorProblem",
    "FullTargets",
    "SparseTargets",
    "PINV_RCOND",
    "build_targets",
    "over_blocks",
    "ridge_rows",
]

PINV_RCOND = 1e-12
"""Relative eigenvalue cut-off of LEML's ``k x k`` ridge solves when they are singular."""

CHUNK_ENTRIES = 1 << 20
"""Entries of any temporary ``(chunk, k)`` or ``(chunk, L)`` block (8 MB of float64)."""

DENSE_SCORE_DENSITY = 0.01
"""Observed fraction above which scores on ``Omega`` come from dense row blocks of ``R Q'``.

Gathering rows of ``R`` and ``Q`` for every observed entry costs about as much per entry as
a dense block product costs for 100 entries (BLAS against memory-bound gathers), so above
1% density the block product is faster; both use bounded memory.
"""


def _row_blocks(indptr, max_entries):
    """Consecutive row ranges ``(a, b)`` holding about ``max_entries`` stored entries each."""
    m = indptr.size - 1
    a = 0
    while a < m:
        b = int(np.searchsorted(indptr, indptr[a] + max_entries, side="right")) - 1
        b = min(max(b, a + 1), m)
        yield a, b
        a = b


def _scores_on_pattern(R, Q, indptr, indices, density):
    """``s_t = R[i_t] . Q[j_t]`` for the CSR pattern ``(indptr, indices)``, chunked."""
    m2, k = Q.shape[0], R.shape[1]
    out = np.empty(indices.size, dtype=np.float64)
    if density >= DENSE_SCORE_DENSITY:
        step = max(1, CHUNK_ENTRIES // max(m2, 1))
        for a in range(0, R.shape[0], step):
            b = min(R.shape[0], a + step)
            lo, hi = indptr[a], indptr[b]
            if lo == hi:
                continue
            S = R[a:b] @ Q.T                                      # dense block of scores
            local = np.repeat(np.arange(b - a, dtype=np.int64), np.diff(indptr[a:b + 1]))
            np.take(S.ravel(), local * m2 + indices[lo:hi], out=out[lo:hi])
        return out
    counts = np.diff(indptr)
    for a, b in _row_blocks(indptr, max(1, CHUNK_ENTRIES // max(k, 1))):
        lo, hi = indptr[a], indptr[b]
        if lo == hi:
            continue
        Rr = np.repeat(R[a:b], counts[a:b], axis=0)               # r_i for each entry of row i
        np.einsum("ij,ij->i", Rr, np.take(Q, indices[lo:hi], axis=0), out=out[lo:hi])
    return out


class SparseTargets:
    """Targets on an explicit observed set ``Omega`` of an ``(m, m2)`` matrix.

    Parameters
    ----------
    shape : (int, int)
    indptr, indices : ndarray
        CSR structure of ``Omega`` (sorted, no duplicates).
    y : ndarray of shape (|Omega|,)
        The loss's targets at the stored entries, in CSR order.
    """

    full = False

    def __init__(self, shape, indptr, indices, y):
        self.shape = (int(shape[0]), int(shape[1]))
        self.indptr = indptr
        self.indices = indices
        self.y = np.asarray(y, dtype=np.float64)
        self.density = self.y.size / max(self.shape[0] * self.shape[1], 1)

    @property
    def n_observed(self) -> int:
        return int(self.y.size)

    def counts(self) -> np.ndarray:
        """Observed entries per row, shape ``(m,)``."""
        return np.diff(self.indptr)

    def _csr(self, data):
        return sp.csr_matrix((data, self.indices, self.indptr), shape=self.shape, copy=False)

    def scores(self, R, Q):
        """``s_t = R[i_t] . Q[j_t]`` for every observed ``(i_t, j_t)``, shape ``(|Omega|,)``."""
        return _scores_on_pattern(R, Q, self.indptr, self.indices, self.density)

    def loss_value(self, loss: Loss, R, Q) -> float:
        """``sum_Omega l(y_ij, R_i . Q_j)``."""
        return float(loss.value(self.y, self.scores(R, Q)).sum())

    def loss_grad(self, loss: Loss, R, Q):
        """Loss, ``D Q`` with ``D_ij = l'(y_ij, s_ij)`` on ``Omega``, and a curvature handle.

        Returns ``(f, DQ, curv)``; ``DQ`` has shape ``(m, k)``; ``curv`` is passed back
        to :meth:`hess_prod`.
        """
        s = self.scores(R, Q)
        f = float(loss.value(self.y, s).sum())
        DQ = self._csr(loss.derivative(self.y, s)) @ Q            # D Q, D sparse on Omega
        curv = None if loss.constant_curvature is not None else loss.second_derivative(self.y, s)
        return f, np.asarray(DQ), curv

    def hess_prod(self, loss: Loss, curv, R, Q, T):
        """``U Q`` with ``U_ij = l''(y_ij, s_ij) (T_i . Q_j)`` on ``Omega``; shape ``(m, k)``."""
        u = self.scores(T, Q)                                     # t_ij = T_i . Q_j
        if curv is None:
            u *= loss.constant_curvature
        else:
            u *= curv
        return np.asarray(self._csr(u) @ Q)

    def target_product(self, Q):
        """``Y_Omega Q``: the targets (zero off ``Omega``) times ``Q``; shape ``(m, k)``."""
        return np.asarray(self._csr(self.y) @ Q)

    def transpose(self) -> SparseTargets:
        """The same targets seen as an ``(m2, m)`` matrix."""
        order = sp.csr_matrix(
            (np.arange(1, self.n_observed + 1, dtype=np.int64), self.indices, self.indptr),
            shape=self.shape).T.tocsr()
        perm = order.data - 1
        return SparseTargets(self.shape[::-1], order.indptr, order.indices, self.y[perm])


CURVATURE_CACHE_ENTRIES = 1 << 24
"""Fully observed problems up to this many entries keep ``l''`` at every entry (128 MB)."""


class FullTargets:
    """Fully observed targets from a sparse 0/1 label matrix of shape ``(m, m2)``.

    Work is done on row blocks of the score matrix ``R Q'`` holding at most
    :data:`CHUNK_ENTRIES` entries, several blocks at once on :func:`over_blocks`'s threads
    (the same results for any thread count). The curvature ``l''`` at every entry (Algorithm 1's
    ``U`` needs it at all ``|Omega| = m m2`` entries) is kept when ``m m2`` is at most
    :data:`CURVATURE_CACHE_ENTRIES`, and otherwise recomputed from ``R`` block by block,
    so memory stays ``O((m + m2) k + threads * CHUNK_ENTRIES)`` beyond the inputs.
    """

    full = True

    def __init__(self, labels: sp.csr_matrix, loss: Loss):
        self.labels = labels
        self.shape = labels.shape
        self._loss = loss

    @property
    def n_observed(self) -> int:
        return self.shape[0] * self.shape[1]

    def counts(self) -> np.ndarray:
        return np.full(self.shape[0], self.shape[1], dtype=np.int64)

    def _ranges(self):
        step = max(1, CHUNK_ENTRIES // max(self.shape[1], 1))
        return [(a, min(self.shape[0], a + step)) for a in range(0, self.shape[0], step)]

    def _y(self, a, b):
        return self._loss.encode(self.labels[a:b].toarray())

    def loss_value(self, loss: Loss, R, Q) -> float:
        def block(a, b):
            return float(loss.value(self._y(a, b), R[a:b] @ Q.T).sum())

        f = 0.0
        for part in over_blocks(block, self._ranges()):
            f += part
        return f

    def loss_grad(self, loss: Loss, R, Q):
        DQ = np.empty((self.shape[0], Q.shape[1]))
        keep = (loss.constant_curvature is None
                and self.shape[0] * self.shape[1] <= CURVATURE_CACHE_ENTRIES)
        curv = np.empty(self.shape) if keep else None

        def block(a, b):
            y = self._y(a, b)
            s = R[a:b] @ Q.T                                      # block of scores
            DQ[a:b] = loss.derivative(y, s) @ Q
            if keep:
                curv[a:b] = loss.second_derivative(y, s)
            return float(loss.value(y, s).sum())

        f = 0.0
        for part in over_blocks(block, self._ranges()):
            f += part
        return f, DQ, curv

    def hess_prod(self, loss: Loss, curv, R, Q, T):
        out = np.empty((self.shape[0], Q.shape[1]))

        def block(a, b):
            u = T[a:b] @ Q.T                                      # t_ij = T_i . Q_j
            if loss.constant_curvature is not None:
                u *= loss.constant_curvature
            elif curv is not None:
                u *= curv[a:b]
            else:
                u *= loss.second_derivative(self._y(a, b), R[a:b] @ Q.T)
            out[a:b] = u @ Q

        over_blocks(block, self._ranges())
        return out

    def target_product(self, Q):
        YQ = np.asarray(self.labels @ Q)
        if self._loss.target == "plus_minus_one":
            YQ = 2.0 * YQ - Q.sum(axis=0)                         # (2Y - 1) Q
        return YQ

    def transpose(self) -> FullTargets:
        return FullTargets(self.labels.T.tocsr(), self._loss)


def over_blocks(fn, ranges):
    """``[fn(a, b) for (a, b) in ranges]``, on :func:`~mlx.numerics.spmm.get_threads` threads.

    Each call works on its own row block (and writes only those rows of any output), so the
    results, returned in the order of ``ranges``, are the same for any thread count: sums
    over blocks are taken by the caller in that order. BLAS stays on the thread it was given
    (one in a cell), and numpy releases the GIL in the block products.
    """
    n = min(get_threads(), len(ranges))
    if n <= 1:
        return [fn(a, b) for a, b in ranges]
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(max_workers=n, thread_name_prefix="mlx-blocks") as pool:
        return list(pool.map(lambda r: fn(*r), ranges))


def build_targets(Y: sp.csr_matrix, observed: sp.spmatrix | None, loss: Loss):
    """Targets for ``Y`` (0/1, sparse) observed on ``observed`` (None: everywhere).

    Returns ``(by_instance, by_label)``, the ``(n, L)`` and ``(L, n)`` views.
    Positives of ``Y`` outside ``observed`` are ignored.
    """
    positive = sp.csr_matrix(Y, dtype=np.float64, copy=True)
    positive.data = (positive.data != 0).astype(np.float64)
    positive.eliminate_zeros()
    if observed is None:
        by_instance = FullTargets(positive, loss)
        return by_instance, by_instance.transpose()
    omega = sp.csr_matrix(observed, copy=True)
    omega.sum_duplicates()
    omega.data = np.ones_like(omega.data, dtype=np.float64)
    # 1 on observed negatives, 2 on observed positives; same structure as omega
    code = (omega + positive.multiply(omega)).tocsr()
    code.sum_duplicates()
    code.sort_indices()
    y = loss.encode(code.data - 1.0)
    by_instance = SparseTargets(code.shape, code.indptr, code.indices, y)
    return by_instance, by_instance.transpose()


class FactorProblem:
    """The convex subproblem in one factor ``F`` of shape ``(p, k)``.

        g(F) = sum_{(i,j) in Omega} l(y_ij, (P F)_i . Q_j) + l2_reg/2 ||F||_F^2

    Gradient ``P'(D Q) + l2_reg F`` (Yu et al. 2014, eq. 10) and Hessian-vector
    product ``P'(U Q) + l2_reg V`` with ``U_ij = l''_ij ((P V)_i . Q_j)`` (eq. 11).
    For the instance factor, ``P = X`` and ``F = W``, ``Q = H``; for the label
    factor, ``P = None`` (identity), ``F = H``, ``Q = X W`` and the targets are the
    ``(L, n)`` view.

    Parameters
    ----------
    targets : SparseTargets or FullTargets
        Targets of shape ``(m, m2)``.
    Q : ndarray of shape (m2, k)
        The fixed factor.
    loss : Loss
    l2_reg : float
    P : sparse matrix, ndarray or SparseProducts of shape (m, p), optional
        Left design; identity when None. Pass a :class:`~mlx.numerics.spmm.SparseProducts`
        to keep its copy of ``P'`` across subproblems.
    """

    def __init__(self, targets, Q, loss: Loss, l2_reg: float, P=None):
        self.targets = targets
        self.Q = np.ascontiguousarray(Q, dtype=np.float64)
        self.loss = loss
        self.l2_reg = float(l2_reg)
        if P is not None and not isinstance(P, SparseProducts):
            P = SparseProducts(P)
        self.P = P
        p = targets.shape[0] if P is None else P.shape[1]
        self.shape = (p, self.Q.shape[1])
        self._cache: list[tuple[np.ndarray, np.ndarray, object]] = []

    def _left(self, F):
        return F if self.P is None else self.P.dot(F)

    def _left_t(self, G):
        return G if self.P is None else self.P.tdot(G)

    def objective(self, F) -> float:
        """``g(F)``."""
        F = np.asarray(F, dtype=np.float64).reshape(self.shape)
        return (self.targets.loss_value(self.loss, self._left(F), self.Q)
                + 0.5 * self.l2_reg * float(np.vdot(F, F)))

    def fun_grad(self, F):
        """``(g(F), grad g(F))``; the gradient has ``F``'s shape."""
        F = np.asarray(F, dtype=np.float64)
        Fm = F.reshape(self.shape)
        R = self._left(Fm)                                        # R = P F
        f, DQ, curv = self.targets.loss_grad(self.loss, R, self.Q)
        f += 0.5 * self.l2_reg * float(np.vdot(Fm, Fm))
        grad = self._left_t(DQ) + self.l2_reg * Fm                # P'(D Q) + lambda F
        # keep the curvature of the last two points: TRON asks for the Hessian at the
        # current iterate after evaluating a (possibly rejected) trial point
        self._cache = [(F.copy(), R, curv)] + self._cache[:1]
        return f, grad.reshape(F.shape)

    def _curvature(self, F):
        for key, R, curv in self._cache:
            if key.shape == F.shape and np.array_equal(key, F):
                return R, curv
        Fm = np.asarray(F, dtype=np.float64).reshape(self.shape)
        R = self._left(Fm)
        if self.loss.constant_curvature is not None or self.targets.full:
            return R, None
        s = self.targets.scores(R, self.Q)
        return R, self.loss.second_derivative(self.targets.y, s)

    def hessp(self, F, V):
        """Hessian of ``g`` at ``F`` times ``V`` (``V`` of ``F``'s shape)."""
        V = np.asarray(V, dtype=np.float64)
        Vm = V.reshape(self.shape)
        if self.loss.constant_curvature is not None:
            R, curv = None, None                                  # Hessian does not depend on F
        else:
            R, curv = self._curvature(np.asarray(F, dtype=np.float64))
        T = self._left(Vm)                                        # T = P V
        UQ = self.targets.hess_prod(self.loss, curv, R, self.Q, T)
        return (self._left_t(UQ) + self.l2_reg * Vm).reshape(V.shape)

    def rhs(self):
        """For a quadratic loss with zero-one targets: ``b`` with ``grad g(F) = A F - b``."""
        return self._left_t(self.targets.target_product(self.Q))


def ridge_rows(targets: SparseTargets, A, l2_reg: float):
    """Per-row regularised least squares on the observed entries.

    For every row ``j`` of ``targets`` (a label, in the ``(L, n)`` view) solve

        h_j = argmin_h  sum_{i in Omega_j} (y_ij - a_i . h)^2 / 2 + l2_reg/2 ||h||^2
            = (A_j' A_j + l2_reg I)^+ A_j' y_j,

    with ``A_j`` the rows of ``A`` observed for ``j``. Rows with no observed entry get
    ``h_j = 0``. Returns an array of shape ``(m, k)``.
    """
    m = targets.shape[0]
    k = A.shape[1]
    H = np.zeros((m, k))
    indptr, indices, y = targets.indptr, targets.indices, targets.y
    nonempty = np.flatnonzero(np.diff(indptr))
    batch = max(1, CHUNK_ENTRIES // max(k * k, 1))
    for a in range(0, nonempty.size, batch):
        labels = nonempty[a:a + batch]
        G = np.empty((labels.size, k, k))
        rhs = np.empty((labels.size, k))
        for t, j in enumerate(labels):
            lo, hi = indptr[j], indptr[j + 1]
            Aj = A[indices[lo:hi]]
            np.matmul(Aj.T, Aj, out=G[t])                         # A_j' A_j
            np.matmul(y[lo:hi], Aj, out=rhs[t])                   # A_j' y_j
        H[labels] = psd_solve(G, rhs, l2_reg, rcond=PINV_RCOND)
    return H
