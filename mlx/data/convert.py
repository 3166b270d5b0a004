"""Writers for the Extreme Classification Repository and LIBSVM multi-label formats.

Both round-trip with their readers (:func:`mlx.data.xc_repo.read_xc`,
:func:`mlx.data.libsvm.read_libsvm_multilabel`): values are written with ``repr`` (the
shortest text that reads back to the same float64), indices in increasing order. A path
ending in ``.gz`` is written gzip-compressed. The file appears atomically (written to a
temporary file in the same directory, then renamed), so a failed write leaves nothing behind.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from mlx.data.dataset import Dataset, canonical_csr
from mlx.io import atomic_write_bytes

__all__ = ["write_xc", "write_libsvm"]


def _lines(dataset: Dataset, index_base: int, empty_row: str):
    X = canonical_csr(dataset.X)
    Y = canonical_csr(dataset.Y)
    for i in range(X.shape[0]):
        lo, hi = X.indptr[i], X.indptr[i + 1]
        feats = " ".join(f"{j + index_base}:{v!r}"
                         for j, v in zip(X.indices[lo:hi].tolist(), X.data[lo:hi].tolist()))
        labels = ",".join(map(str, Y.indices[Y.indptr[i]:Y.indptr[i + 1]].tolist()))
        if not feats and not labels:
            yield empty_row
        elif not labels:
            yield " " + feats + "\n"  # leading blank: empty label field
        else:
            yield f"{labels} {feats}\n" if feats else labels + "\n"


def _write_atomic(path, header: str | None, lines) -> Path:
    def write(out):
        if header is not None:
            out.write(header.encode())
        buf = []
        for line in lines:
            buf.append(line)
            if len(buf) >= 4096:
                out.write("".join(buf).encode())
                buf.clear()
        out.write("".join(buf).encode())

    path = Path(path)
    return atomic_write_bytes(path, write, compress=path.suffix == ".gz")


def write_xc(dataset: Dataset, path) -> Path:
    """Write ``dataset`` in the Extreme Classification Repository format.

    Header ``n_samples n_features n_labels``, then one line per row, ``l1,l2 f:v ...`` with
    0-based features and labels. A row with neither labels nor features is a blank line.
    """
    n, d = dataset.X.shape
    header = f"{n} {d} {dataset.Y.shape[1]}\n"
    return _write_atomic(path, header, _lines(dataset, 0, "\n"))


def write_libsvm(dataset: Dataset, path) -> Path:
    """Write ``dataset`` in the multi-label LIBSVM format (``l1,l2 idx:val ...``, 1-based
    features, 0-based labels).

    The format has no header, so trailing all-zero feature columns and labels that never
    occur are not recorded; read the file back with explicit ``n_features`` / ``n_labels``.
    A row with neither labels nor features is written as `` 1:0.0`` (an explicit zero, which
    the reader drops), because a blank line would be skipped.
    """
    if dataset.X.shape[1] == 0 and (np.diff(dataset.Y.indptr) == 0).any():
        raise ValueError("cannot write a row with no labels and no features when "
                         "n_features is 0")
    return _write_atomic(path, None, _lines(dataset, 1, " 1:0.0\n"))
