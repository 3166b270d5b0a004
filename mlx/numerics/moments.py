"""The moments of the spectral latent-variable model, never formed as dense arrays.

The word co-occurrence moment ``M2`` and its top eigenpairs (:func:`second_moment_eigenpairs`,
the whitening), and the whitened third moment ``T = M3(W, W, W)`` with the label
cross-moment (:class:`WhitenedMoments`), all from products with the sparse document-word
matrix ``X``. Used by :class:`mlx.methods.mom.MoM`.

Why the tensor stays implicit even where it would fit in memory (bibtex, K = 150: 27 MB):
``T(I, u, u)`` costs ``2 n K`` from ``A = X W`` against ``K^3`` from the dense tensor, which
does not stay in cache, and forming the tensor costs ``n K^3 / 2``. Only the ``K x K``
Hessian ``T(I, I, u)`` is formed, for the few Newton steps of the tensor power method.
``benchmarks/bench_mom.py --tensor`` measures each of these costs, and how many Hessians
it would take to repay forming the tensor.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from mlx.numerics.eigen import top_eigenpairs

__all__ = ["EIG_RCOND", "WhitenedMoments", "second_moment_eigenpairs"]

EIG_RCOND = 1e-10
"""Eigenvalues of ``M2`` below ``EIG_RCOND * max`` (or not positive) are dropped before
whitening: their directions carry no second-moment mass to whiten."""



def second_moment_eigenpairs(X: sp.csr_matrix, rank: int, *, moments: str,
                             rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """Top-``rank`` eigenpairs of the word co-occurrence moment ``M2`` (Algorithm 1, step 2).

    ``moments="paper"``: ``M2 = X'X / sum_d m_d^2``; ``"unbiased"``: pairs of distinct tokens,
    ``M2 = (X'X - diag(X'1)) / sum_d m_d (m_d - 1)`` (``m_d = sum_v x_dv``). ``M2`` is used
    through products ``X'(X V)`` only (formed only up to
    :data:`~mlx.numerics.eigen.DENSE_EIG_MAX` features). Eigenvalues that are not positive,
    or below :data:`EIG_RCOND` times the largest, are dropped, so fewer than ``rank`` pairs
    can come back. The whitening matrix is
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
    keep = (evals > 0) & (evals > EIG_RCOND * (float(evals[0]) if evals.size else 0.0))
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
        first use; relative error about ``1e-7``), returned as float64: faster, with half the
        memory traffic (``benchmarks/bench_mom.py --tensor`` measures both).
        :func:`~mlx.numerics.tensor_power.tensor_power_method` uses it to rank its starts
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
