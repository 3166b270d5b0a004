"""Feature scaling for methods that assume features in ``[-1, 1]``.

WSABIE's learning rate and norm bound and LSVV's step sizes are on the scale of features in
``[-1, 1]`` (binary bag-of-words, or ``preprocess: [minmax]``); on raw dense features (audio
descriptors in the hundreds) their steps overshoot and their rankings fall below the constant
predictor's. With ``scale_features="auto"`` such a method divides every feature by its largest
absolute training value when some training value lies outside ``[-1, 1]``, keeps the factors
and applies them to every row it scores, and says so in its ``message_``. Sparsity is kept and
features already in ``[-1, 1]`` (every paper config's) are left exactly as they are.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

__all__ = ["SCALE_OPTIONS", "apply_scale", "fit_scale"]

SCALE_OPTIONS = {"auto", "none"}


def fit_scale(X, option: str, name: str) -> tuple[np.ndarray | None, str]:
    """``(factors, note)``: per-feature factors (None: leave ``X`` as it is) and a note."""
    if option == "none" or X.shape[0] == 0:
        return None, ""
    if sp.issparse(X):
        top = np.asarray(abs(X).max(axis=0).todense()).ravel()
    else:
        top = np.abs(np.asarray(X)).max(axis=0)
    if top.size == 0 or float(top.max()) <= 1.0:
        return None, ""
    factors = np.where(top > 0, 1.0 / np.where(top > 0, top, 1.0), 1.0)
    note = (f"{name}: features scaled by their largest absolute training value (largest "
            f"{float(top.max()):.4g}; the method assumes features in [-1, 1]); set "
            f"preprocess: [minmax] to choose the scaling, or scale_features: none")
    return factors, note


def apply_scale(X, factors):
    """``X`` with every column multiplied by its factor (``X`` itself when None)."""
    if factors is None:
        return X
    if sp.issparse(X):
        return sp.csr_matrix(X @ sp.diags(factors))
    return np.asarray(X, dtype=np.float64) * factors
