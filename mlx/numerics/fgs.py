"""Fully corrective Forward Greedy Selection with the squared loss.

Minimises ``R(w) = ||A w - y||^2 / (2 n)`` over vectors ``w`` with at most ``k`` non-zeros
(Shalev-Shwartz, Srebro and Zhang 2010, the fully corrective variant of their Forward Greedy
Selection; Kar and Jain 2012, Appendix D, Algorithm 2 and section 4). Starting from
``w = 0`` and an empty support ``F``, each step

1. takes the gradient ``theta = A'(A w - y) / n``;
2. adds the coordinate ``j = argmax_{j not in F} |theta_j|`` to ``F`` (the first on ties);
3. re-fits *all* coefficients on ``F``: ``w_F = argmin ||A_F w_F - y||^2`` (fully corrective),
   ``w = 0`` outside ``F``.

With the squared loss this is orthogonal matching pursuit without column normalisation. The
re-fit keeps a thin QR factorisation of ``A_F`` up to date (modified Gram-Schmidt, applied
twice for stability), so a whole run costs ``O(n d k)`` and never forms ``A'A``, whose
condition number is the square of ``A``'s.

Selection stops early, with fewer than ``k`` coordinates, when every remaining gradient
entry is at most ``tol * max_j |theta_j(0)|`` (the residual is orthogonal to every column
left: nothing more to gain), or when every remaining column lies (numerically) in the span of
the chosen ones.

References
----------
S. Shalev-Shwartz, N. Srebro and T. Zhang, "Trading accuracy for sparsity in optimization
problems with sparsity constraints", SIAM J. Optim. 20(6), 2010 (Forward Greedy Selection,
fully corrective variant). P. Kar and P. Jain, "Supervised learning with similarity
functions", NIPS 2012, Appendix D (Algorithm 2) and section 4 (RegLand-Sp).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.linalg as sla

__all__ = ["FGSResult", "forward_greedy_selection"]


@dataclass(frozen=True)
class FGSResult:
    """Outcome of :func:`forward_greedy_selection`.

    Attributes
    ----------
    coef : ndarray of shape (d,)
        The fitted ``w``: least squares on the support, 0 elsewhere.
    support : ndarray of int, shape (n_selected,)
        The chosen coordinates, in the order they were added.
    objective : ndarray of shape (n_selected + 1,)
        ``R(w)`` before the first step and after each step (non-increasing).
    stopped_early : bool
        Fewer than ``k`` coordinates were chosen because the gradient vanished or the
        remaining columns are in the span of the chosen ones.
    """

    coef: np.ndarray
    support: np.ndarray
    objective: np.ndarray
    stopped_early: bool


def forward_greedy_selection(A: np.ndarray, y: np.ndarray, k: int, *,
                             tol: float = 1e-10) -> FGSResult:
    """Fully corrective Forward Greedy Selection of at most ``k`` columns of ``A``.

    Parameters
    ----------
    A : ndarray of shape (n, d)
        Design (here: the landmarked features).
    y : ndarray of shape (n,)
        Targets.
    k : int >= 0
        Sparsity level: the largest support allowed (``k > d`` is treated as ``d``).
    tol : float
        Relative gradient and rank tolerance (see the module docstring).

    Returns
    -------
    FGSResult
    """
    A = np.asarray(A, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64).ravel()
    n, d = A.shape
    if y.size != n:
        raise ValueError(f"y has {y.size} entries but A has {n} rows")
    k = min(int(k), d)
    col_norms = np.linalg.norm(A, axis=0)
    Q = np.empty((n, k))
    R = np.zeros((k, k))
    qty = np.empty(k)                                  # Q' y
    r = y.copy()                                       # residual y - A w
    objective = [float(r @ r) / (2 * n)]
    theta0 = None
    usable = col_norms > 0
    support: list[int] = []
    stopped_early = False
    while len(support) < k:
        grad = A.T @ r                                 # -n theta = A'(y - A w)
        if theta0 is None:
            theta0 = float(np.max(np.abs(grad), initial=0.0))
        score = np.abs(grad)
        score[~usable] = -1.0
        score[support] = -1.0
        j = int(np.argmax(score))
        if score[j] <= tol * theta0:                   # nothing left to gain
            stopped_early = True
            break
        m = len(support)
        v = A[:, j].copy()
        coeffs = np.zeros(m)
        for _ in range(2):                             # Gram-Schmidt, twice ("twice is enough")
            c = Q[:, :m].T @ v
            v -= Q[:, :m] @ c
            coeffs += c
        norm = float(np.linalg.norm(v))
        if norm <= tol * col_norms[j] * max(1.0, np.sqrt(d)):    # in the span already
            usable[j] = False
            continue
        Q[:, m] = v / norm
        R[:m, m] = coeffs
        R[m, m] = norm
        qty[m] = Q[:, m] @ y
        support.append(j)
        r -= qty[m] * Q[:, m]                          # y - Q Q' y, updated one column at a time
        objective.append(float(r @ r) / (2 * n))
    m = len(support)
    if m < k and not stopped_early:
        stopped_early = True
    coef = np.zeros(d)
    if m:
        coef[support] = sla.solve_triangular(R[:m, :m], qty[:m])   # R w_F = Q' y
    return FGSResult(coef=coef, support=np.asarray(support, dtype=np.int64),
                     objective=np.asarray(objective), stopped_early=stopped_early)
