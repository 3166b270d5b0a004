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
``label_names`` holds the original values. Read as an ordinal task (``task="ordinal"``), the
labels must be integer levels and ``Y`` is the ``(n, 1)`` column of levels.

Blank lines and lines starting with ``#`` are skipped. Files may be gzip-compressed (detected
by their magic bytes); CRLF line endings are accepted. Explicit zero values are dropped (the
matrices are canonical CSR, see :func:`mlx.data.dataset.canonical_csr`).

Every malformed line raises :class:`~mlx.errors.DataFormatError` with the file and line number,
what is wrong and what would be valid. The lines are parsed by
:class:`mlx.data.lineparse.SparseLineParser`.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence

import numpy as np

from mlx.data.dataset import Dataset
from mlx.data.lineparse import (
    RawRows,
    SparseLineParser,
    build_levels_Y,
    build_multiclass_Ys,
    build_multilabel_Y,
    build_X,
    log_rows_without_labels,
    reading,
)

log = logging.getLogger(__name__)

__all__ = [
    "looks_multiclass",
    "read_libsvm_multilabel",
    "read_libsvm_multiclass",
    "read_libsvm_files",
    "warn_if_multiclass",
]


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
    task : {"multilabel", "multiclass", "ordinal"}
    n_features : int, optional
        Number of features. Default: the largest index over all files.
    n_labels : int, optional
        Multi-label only: number of labels. Default: the largest label index + 1 over all files.
    name : str

    Returns
    -------
    list of Dataset, one per path, all with the same ``n_features`` and ``n_labels``.
    Multi-class: the sorted distinct class values of all files become labels ``0..K-1``.
    Ordinal: ``Y`` is the ``(n, 1)`` column of the class values, which must be integers.
    """
    if task not in ("multilabel", "multiclass", "ordinal"):
        raise ValueError(f"task must be 'multilabel', 'multiclass' or 'ordinal', got {task!r}")
    mode = "multilabel" if task == "multilabel" else "multiclass"
    raws = [parse_libsvm(p, label_mode=mode, n_features=n_features, n_labels=n_labels)
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
    if task == "ordinal":
        return [Dataset(X=build_X(r, d), name=name, task="ordinal",
                        Y=build_levels_Y(r.labels, r.lines, r.path, "class label",
                                         "an ordinal task needs integer levels; read the file "
                                         "as multiclass"))
                for r in raws]
    names, Ys = build_multiclass_Ys([r.labels for r in raws])
    for r, Y in zip(raws, Ys):
        out.append(Dataset(X=build_X(r, d), Y=Y, name=name, task="multiclass",
                           label_names=names))
    return out


def looks_multiclass(parts: Sequence[Dataset]) -> bool:
    """Whether multi-label ``parts`` read from LIBSVM files look like a multi-class file: every
    row of every part has exactly one label and label 0 occurs in none. Such a file almost
    always numbers its classes from 1, and reading it as multi-label adds a label 0 that no
    row has (a phantom column that every ranking metric then scores)."""
    if not parts or any(ds.Y.shape[0] == 0 for ds in parts):
        return False
    for ds in parts:
        Y = ds.Y.tocsr()
        if not (np.diff(Y.indptr) == 1).all() or Y.shape[1] == 0 or (Y.indices == 0).any():
            return False
    return True


def warn_if_multiclass(parts: Sequence[Dataset], path) -> None:
    """Log a warning naming ``libsvm-multiclass`` when :func:`looks_multiclass` holds."""
    if looks_multiclass(parts):
        L = parts[0].Y.shape[1]
        log.warning("%s: every row has exactly one label and label 0 occurs in no row: this "
                    "looks like a multi-class file with classes numbered from 1, read as "
                    "multi-label with %d labels of which label 0 is a phantom; use "
                    "format: libsvm-multiclass", path, L)


def read_libsvm_multilabel(path, *, n_features: int | None = None,
                           n_labels: int | None = None, name: str = "") -> Dataset:
    """Read one multi-label LIBSVM file (``l1,l2 idx:val ...``; 1-based features, 0-based
    labels). See :func:`read_libsvm_files`."""
    return read_libsvm_files([path], task="multilabel", n_features=n_features,
                             n_labels=n_labels, name=name)[0]


def read_libsvm_multiclass(path, *, n_features: int | None = None, name: str = "") -> Dataset:
    """Read one multi-class LIBSVM file (``label idx:val ...``). See :func:`read_libsvm_files`."""
    return read_libsvm_files([path], task="multiclass", n_features=n_features, name=name)[0]
