"""Ordinal levels from a real-valued target: equal-frequency binning.

The ordinal-regression benchmarks built from regression sets (the Delve and StatLib sets of
Chu and Keerthi, used by Kar and Jain 2012) cut the target into ``bins`` levels holding
about equally many rows, edges at the target's quantiles over the whole dataset.
:func:`bin_parts` does that for the parts of a dataset (train and test files, or one data
file) pooled, so every part gets the same edges.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import scipy.sparse as sp

from mlx.errors import DataFormatError

__all__ = ["equal_frequency_edges", "bin_parts"]


def equal_frequency_edges(y: np.ndarray, bins: int) -> np.ndarray:
    """The ``bins - 1`` inner edges: the ``j / bins`` quantiles of ``y`` (j = 1..bins-1),
    duplicates dropped (a value repeated across a quantile stays in one level, so heavy ties
    give fewer levels)."""
    q = np.quantile(np.asarray(y, dtype=np.float64), np.arange(1, bins) / bins)
    return np.unique(q)


def bin_parts(parts: dict, bins: int, *, where) -> dict:
    """Replace the single real target of every part by its level ``1 + #{edges < y}``.

    ``where`` names the data in the error raised when the target has several columns or
    fewer than two distinct values.
    """
    targets = {role: np.asarray(ds.Y.toarray(), dtype=np.float64) for role, ds in parts.items()}
    widths = {T.shape[1] for T in targets.values()}
    if widths != {1}:
        raise DataFormatError(where, None, f"bins needs one target column; the data has "
                                           f"{max(widths)}")
    pooled = np.concatenate([T[:, 0] for T in targets.values()])
    if np.unique(pooled).size < 2:
        raise DataFormatError(where, None, "the target takes a single value: binning it gives "
                                           "one ordinal level, and ordinal regression needs "
                                           "at least two")
    edges = equal_frequency_edges(pooled, bins)
    out = {}
    for role, ds in parts.items():
        levels = 1.0 + np.searchsorted(edges, targets[role][:, 0], side="left")
        out[role] = replace(ds, Y=sp.csr_matrix(levels[:, None]), task="ordinal")
    return out
