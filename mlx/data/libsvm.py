"""LIBSVM-format readers (multi-label and multi-class).

Formats
-------
Multi-label (as in the LIBSVM multi-label collection)::

    l1,l2,... idx:val idx:val ...

Label indices are 0-based integers; feature indices are **1-based** and strictly increasing
within a line. An empty label field is legal (the line starts with a feature, or with
whitespace): the instance has no labels.

Multi-class::

    label idx:val idx:val ...

``label`` is any number. The sorted distinct class values of all files read together (train
and test) are mapped to ``0..K-1``, so the mapping is the same for both; ``Y`` is one-hot and
``label_names`` holds the original values.

Blank lines and lines starting with ``#`` are skipped. Files may be gzip-compressed (detected
by their magic bytes); CRLF line endings are accepted. Explicit zero values are dropped (the
matrices are canonical CSR, see :func:`mlx.data.dataset.canonical_csr`).

Every malformed line raises :class:`~mlx.errors.DataFormatError` with the file and line number,
what is wrong and what would be valid. The lines are parsed by
:class:`mlx.data.lineparse.SparseLineParser`.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import scipy.sparse as sp

from mlx.data.dataset import Dataset, canonical_csr
from mlx.data.lineparse import (
    RawRows,
    SparseLineParser,
    build_multilabel_Y,
    build_X,
    log_rows_without_labels,
    reading,
)

__all__ = [
    "read_libsvm_multilabel",
    "read_libsvm_multiclass",
    "read_libsvm_files",
]


def _class_name(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else repr(float(value))


def parse_libsvm(path, *, label_mode: str, n_features: int | None = None,
                 n_labels: int | None = None) -> RawRows:
    """Parse one LIBSVM file into :class:`RawRows` (0-based feature indices)."""
    parser = SparseLineParser(path, index_base=1, label_mode=label_mode)
    with reading(path) as fh:
        parser.feed(fh)
    return parser.finish(n_features=n_features,
                         n_labels=n_labels if label_mode == "multilabel" else None)


def read_libsvm_files(paths: Sequence, *, task: str = "multilabel",
                      n_features: int | None = None, n_labels: int | None = None,
                      name: str = "") -> list[Dataset]:
    """Read several LIBSVM files (e.g. train and test) with a common width.

    Parameters
    ----------
    paths : sequence of path-like
    task : {"multilabel", "multiclass"}
    n_features : int, optional
        Number of features. Default: the largest index over all files.
    n_labels : int, optional
        Multi-label only: number of labels. Default: the largest label index + 1 over all files.
    name : str

    Returns
    -------
    list of Dataset, one per path, all with the same ``n_features`` and ``n_labels``.
    Multi-class: the sorted distinct class values of all files become labels ``0..K-1``.
    """
    if task not in ("multilabel", "multiclass"):
        raise ValueError(f"task must be 'multilabel' or 'multiclass', got {task!r}")
    raws = [parse_libsvm(p, label_mode=task, n_features=n_features, n_labels=n_labels)
            for p in paths]
    d = n_features if n_features is not None else max((r.max_feature() + 1 for r in raws),
                                                       default=0)
    out = []
    if task == "multilabel":
        L = n_labels if n_labels is not None else max((r.max_label() + 1 for r in raws),
                                                      default=0)
        for r in raws:
            Y = build_multilabel_Y(r, L)
            log_rows_without_labels(Y, r.path)
            out.append(Dataset(X=build_X(r, d), Y=Y, name=name, task="multilabel"))
        return out
    classes = np.unique(np.concatenate([r.labels for r in raws])) if raws else np.array([])
    names = tuple(_class_name(c) for c in classes)
    for r in raws:
        codes = np.searchsorted(classes, r.labels)
        Y = sp.csr_matrix((np.ones(r.n_rows), codes, np.arange(r.n_rows + 1)),
                          shape=(r.n_rows, len(classes)))
        out.append(Dataset(X=build_X(r, d), Y=canonical_csr(Y), name=name, task="multiclass",
                           label_names=names))
    return out


def read_libsvm_multilabel(path, *, n_features: int | None = None,
                           n_labels: int | None = None, name: str = "") -> Dataset:
    """Read one multi-label LIBSVM file (``l1,l2 idx:val ...``; 1-based features, 0-based
    labels). See :func:`read_libsvm_files`."""
    return read_libsvm_files([path], task="multilabel", n_features=n_features,
                             n_labels=n_labels, name=name)[0]


def read_libsvm_multiclass(path, *, n_features: int | None = None, name: str = "") -> Dataset:
    """Read one multi-class LIBSVM file (``label idx:val ...``). See :func:`read_libsvm_files`."""
    return read_libsvm_files([path], task="multiclass", n_features=n_features, name=name)[0]
