"""Dataset containers shared by every loader, method and the runner."""

from __future__ import annotations

from dataclasses import dataclass

from mlx.lazy import lazy_module

np = lazy_module("numpy")
sp = lazy_module("scipy.sparse")


__all__ = ["Dataset", "Split"]


@dataclass(frozen=True)
class Dataset:
    """One labelled sample.

    Attributes
    ----------
    X : scipy.sparse.csr_matrix of shape (n_samples, n_features)
        float64, sorted indices, no explicit zeros.
    Y : scipy.sparse.csr_matrix of shape (n_samples, n_labels)
        float64 with stored entries equal to 1: the support is the label set.
        For multi-class data each row has exactly one label; for regression
        data ``Y`` holds the real-valued targets (n, T), for ordinal data the
        integer levels (n, 1), zeros implicit (see ``task``). Missing feature
        values, where a reader was asked to keep them, are stored NaN entries.
    name : str
    task : str
        ``"multilabel"``, ``"multiclass"``, ``"regression"`` or ``"ordinal"``.
    label_names : tuple of str or None
    """

    X: sp.csr_matrix
    Y: sp.csr_matrix
    name: str = ""
    task: str = "multilabel"
    label_names: tuple | None = None

    @property
    def n_samples(self) -> int:
        return self.X.shape[0]

    @property
    def n_features(self) -> int:
        return self.X.shape[1]

    @property
    def n_labels(self) -> int:
        return self.Y.shape[1]

    def stats(self) -> dict:
        """n, d, L, average non-zero features and labels per row."""
        n = max(self.n_samples, 1)
        return {
            "n": self.n_samples,
            "d": self.n_features,
            "L": self.n_labels,
            "avg_features": float(self.X.nnz) / n,
            "avg_labels": float(self.Y.nnz) / n,
        }


@dataclass(frozen=True)
class Split:
    """A train/test pair with the same ``n_features`` and ``n_labels``."""

    train: Dataset
    test: Dataset
    name: str = ""

    def __post_init__(self):
        if self.train.n_features != self.test.n_features:
            raise ValueError("train and test must have the same number of features")
        if self.train.n_labels != self.test.n_labels:
            raise ValueError("train and test must have the same number of labels")


def canonical_csr(M) -> sp.csr_matrix:
    """float64 CSR with sorted indices, duplicates summed and explicit zeros removed."""
    M = sp.csr_matrix(M, dtype=np.float64)
    M.sum_duplicates()
    M.eliminate_zeros()
    M.sort_indices()
    return M
