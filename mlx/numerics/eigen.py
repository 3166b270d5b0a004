"""The top eigenpairs of a symmetric operator known by its products.

Dense ``eigh`` for small operators, ARPACK's Lanczos method (``eigsh``) from block products
otherwise, with a deterministic start and a fixed sign of every eigenvector, so that equal
inputs give equal outputs whatever the solver's sign convention.
"""

from __future__ import annotations

import numpy as np
import scipy.linalg as sla
from scipy.sparse.linalg import LinearOperator, eigsh

__all__ = ["DENSE_EIG_MAX", "top_eigenpairs"]

DENSE_EIG_MAX = 64
"""Up to this dimension :func:`top_eigenpairs` forms the matrix and decomposes it densely
(``eigh``); past it the sparse Lanczos solver (``eigsh``) sees it through products only."""


def top_eigenpairs(matmat, dim: int, k: int, *, rng: np.random.Generator, dense=None,
                   tol: float = 0.0,
                   dense_max: int = DENSE_EIG_MAX) -> tuple[np.ndarray, np.ndarray]:
    """The ``k`` algebraically largest eigenpairs of a symmetric ``dim x dim`` operator.

    ``matmat(V)`` returns the product with a ``(dim, r)`` block. Past ``dense_max``
    (:data:`DENSE_EIG_MAX`; and when ``k < dim - 1``) ARPACK's Lanczos method
    (``scipy.sparse.linalg.eigsh``) works from products alone, started from a vector drawn
    from ``rng`` so the result is deterministic; otherwise the matrix is formed (from
    ``dense()`` if given, else from ``matmat`` on the identity) and ``scipy.linalg.eigh``
    computes the top ``k`` directly.
    ``tol`` is ``eigsh``'s relative accuracy of the eigenvalues (0: machine precision).

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
    if dim <= dense_max or k >= dim - 1:
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

