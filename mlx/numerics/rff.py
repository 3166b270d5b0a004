"""Random Fourier features for the Gaussian kernel (Rahimi and Recht, NIPS 2007).

``phi(x) = sqrt(2 / D) cos(Omega' x + b)`` with the columns of ``Omega`` (d x D) drawn i.i.d.
from ``N(0, bandwidth^-2 I)`` and ``b`` uniform on ``[0, 2 pi)``, so that
``E[phi(x)' phi(y)] = exp(-||x - y||^2 / (2 bandwidth^2))`` (LSVV paper, eq. (18) and
section 5.4).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

__all__ = ["RandomFourierFeatures", "draw_rff", "median_distance"]


@dataclass(frozen=True)
class RandomFourierFeatures:
    """A drawn feature map.

    Attributes
    ----------
    omega : ndarray of shape (n_features, n_components)
        Frequencies, ``N(0, bandwidth^-2)`` entries.
    offset : ndarray of shape (n_components,)
        Phases, uniform on ``[0, 2 pi)``.
    bandwidth : float
        The Gaussian kernel's ``sigma``.
    """

    omega: np.ndarray
    offset: np.ndarray
    bandwidth: float

    @property
    def n_components(self) -> int:
        return self.omega.shape[1]

    def transform(self, X) -> np.ndarray:
        """``phi(X)``: dense (n_rows, n_components) float64; each row depends on its own row
        of ``X`` only."""
        proj = X @ self.omega                                        # (n, D)
        proj = np.asarray(proj.toarray() if sp.issparse(proj) else proj, dtype=np.float64)
        proj += self.offset
        np.cos(proj, out=proj)
        proj *= np.sqrt(2.0 / self.n_components)
        return proj


def draw_rff(rng: np.random.Generator, n_features: int, n_components: int,
             bandwidth: float) -> RandomFourierFeatures:
    """Draw ``Omega`` then ``b`` from ``rng`` (in that order) for the Gaussian kernel
    ``exp(-||x - y||^2 / (2 bandwidth^2))``."""
    if not (np.isfinite(bandwidth) and bandwidth > 0):
        raise ValueError(f"draw_rff: bandwidth must be a finite number > 0; got {bandwidth!r}")
    omega = rng.standard_normal((n_features, n_components)) / bandwidth
    offset = rng.uniform(0.0, 2.0 * np.pi, size=n_components)
    return RandomFourierFeatures(omega=omega, offset=offset, bandwidth=float(bandwidth))


def median_distance(X, rng: np.random.Generator, *, max_rows: int = 500) -> float:
    """Median Euclidean distance between distinct rows of ``X`` (the "median heuristic").

    At most ``max_rows`` rows, drawn without replacement from ``rng`` (no draw when ``X`` has
    that many rows or fewer), enter the computation. Returns 1.0 when every distance is 0 (or
    there are fewer than two rows), so that the bandwidth stays positive.
    """
    n = X.shape[0]
    rows = np.arange(n) if n <= max_rows else np.sort(rng.choice(n, max_rows, replace=False))
    A = X[rows]
    A = A.toarray() if sp.issparse(A) else np.asarray(A, dtype=np.float64)
    sq = np.einsum("ij,ij->i", A, A)
    d2 = sq[:, None] + sq[None, :] - 2.0 * (A @ A.T)
    iu = np.triu_indices(A.shape[0], k=1)
    dist = np.sqrt(np.maximum(d2[iu], 0.0))
    med = float(np.median(dist)) if dist.size else 0.0
    return med if med > 0 else 1.0
