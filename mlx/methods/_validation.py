"""Input checks shared by every method's ``fit`` and ``decision_function``.

The messages name the method, the argument and what is valid, e.g.
``LEML: X contains NaN or infinity; remove or impute those entries before fitting``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

__all__ = ["as_float_csr", "pattern", "FitData", "check_fit_data", "check_n_features"]


def as_float_csr(M, name: str, owner: str) -> sp.csr_matrix:
    """float64 CSR with sorted indices and no duplicates, all values finite.

    No copy when ``M`` already is one. ``owner`` (e.g. ``"LEML"``) starts the messages.
    """
    if (M.dtype if sp.issparse(M) else np.asarray(M).dtype).kind == "c":
        raise ValueError(f"{owner}: {name} holds complex numbers (Complex data not "
                         f"supported); give real values")
    if sp.issparse(M):
        M = sp.csr_matrix(M, dtype=np.float64)
        if not M.has_canonical_format:
            M = M.copy()
            M.sum_duplicates()
    else:
        arr = np.asarray(M, dtype=np.float64)
        if arr.ndim != 2:
            raise ValueError(f"{owner}: {name} must be a 2-D matrix; got shape {arr.shape} "
                             f"(Reshape your data: X.reshape(1, -1) for a single row)")
        M = sp.csr_matrix(arr)
    if not np.isfinite(M.data).all():
        raise ValueError(f"{owner}: {name} contains NaN or infinity; remove or impute those "
                         f"entries before fitting")
    return M


def pattern(M) -> sp.csr_matrix:
    """A fresh canonical CSR matrix of ones at the non-zero entries of ``M``."""
    P = sp.csr_matrix(M, dtype=np.float64, copy=True)
    P.sum_duplicates()
    P.data = (P.data != 0).astype(np.float64)
    P.eliminate_zeros()
    P.sort_indices()
    return P


@dataclass(frozen=True)
class FitData:
    """Checked training data.

    X : csr (n_samples, n_features), float64, finite, canonical.
    positives : csr (n_samples, n_labels) of ones: the positives inside Omega.
    observed : csr of ones marking Omega, or None when every entry is observed (a mask that
        stores every entry is reported as None too).
    """

    X: sp.csr_matrix
    positives: sp.csr_matrix
    observed: sp.csr_matrix | None

    @property
    def n_samples(self) -> int:
        return self.X.shape[0]

    @property
    def n_features(self) -> int:
        return self.X.shape[1]

    @property
    def n_labels(self) -> int:
        return self.positives.shape[1]


def check_fit_data(owner: str, X, Y, observed=None) -> FitData:
    """Validate and canonicalise ``fit`` arguments (see :mod:`mlx.methods.base`).

    ``Y`` holds 0/1 labels (booleans are fine); any other value is refused rather than read as
    a positive, because real-valued targets (a regression task) binarised in silence give
    plausible-looking nonsense. With ``observed`` given, positives outside the observed
    entries are dropped (they are unknown, not positive).
    """
    X = as_float_csr(X, "X", owner)
    if not sp.issparse(Y):
        Y = np.asarray(Y)
    if Y.ndim != 2 or Y.shape[0] != X.shape[0]:
        raise ValueError(f"{owner}: X has {X.shape[0]} rows but Y has shape {Y.shape}; Y must "
                         f"be (n_samples, n_labels)")
    if X.shape[1] == 0 and X.shape[0] > 0:
        raise ValueError(f"{owner}: X has 0 feature(s) (shape={X.shape}) while a minimum of 1 is "
                         f"required.")
    if X.shape[0] == 0 or X.shape[1] == 0 or Y.shape[1] == 0:
        raise ValueError(f"{owner}: empty input (X {X.shape}, Y {Y.shape})")
    values = sp.csr_matrix(Y).data
    if values.size and not np.isfinite(values).all():
        raise ValueError(f"{owner}: Y contains NaN or infinity")
    bad = values[(values != 0) & (values != 1)]
    if bad.size:
        raise ValueError(f"{owner}: Y holds values other than 0 and 1 (e.g. {bad[0]:g}); labels "
                         f"must be 0/1 (real-valued targets are a regression task)")
    pos = pattern(Y)
    obs = None
    if observed is not None:
        if observed.shape != Y.shape:
            raise ValueError(f"{owner}: observed has shape {observed.shape} but Y has shape "
                             f"{Y.shape}")
        obs = sp.csr_matrix(observed, dtype=np.float64, copy=True)
        obs.sum_duplicates()
        obs.data[:] = 1.0  # stored entries are observed, stored zeros included
        obs.sort_indices()
        if obs.nnz == Y.shape[0] * Y.shape[1]:
            obs = None
        else:
            pos = pattern(pos.multiply(obs))
    return FitData(X=X, positives=pos, observed=obs)


def check_n_features(owner: str, X, n_features: int) -> sp.csr_matrix:
    """``X`` for scoring: canonical CSR with the number of features seen in ``fit``."""
    X = as_float_csr(X, "X", owner)
    if X.shape[1] != n_features:
        raise ValueError(f"{owner}: X has {X.shape[1]} features, but {owner} is expecting "
                         f"{n_features} features as input (it was fitted with {n_features})")
    return X
