"""Writers of the sparse-line text formats: the Extreme Classification Repository's (``xc``,
header ``n d L``, 0-based features) and LIBSVM multi-label (no header, 1-based features).

One line assembler (:func:`sparse_lines`) writes both, from CSR arrays and the text of each
value: :func:`float_text` for any float64 (``repr``, the shortest text that reads back to the
same value, so :func:`write_xc` and :func:`write_libsvm` round-trip with their readers
:func:`mlx.data.xc_repo.read_xc` and :func:`mlx.data.libsvm.read_libsvm_multilabel`), or
:func:`fixed_text` for integer multiples of ``10 ** -decimals`` written exactly (the files of
``mlx datasets synth``, :mod:`mlx.data.xmc_synth`). A line is ``l1,l2 f:v f:v`` with labels
and features in increasing order; a row without labels starts with a blank (an empty label
field); a row with neither labels nor features is a blank line in the XC format and
`` 1:0.0`` (an explicit zero, which the reader drops) in LIBSVM, where a blank line would be
skipped.

:func:`write_text` writes a header and blocks of lines as one file: a path ending in ``.gz``
is written gzip-compressed, and the file appears atomically (written to a temporary file in
the same directory, then renamed), so a failed write leaves nothing behind.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

import numpy as np
from numba import njit

from mlx.data.dataset import Dataset, canonical_csr
from mlx.io import atomic_write_bytes

__all__ = ["write_xc", "write_libsvm", "write_text", "sparse_lines", "float_text",
           "fixed_text", "xc_header"]

#: Rows formatted at a time by :func:`write_xc` and :func:`write_libsvm`.
_BLOCK_ROWS = 4096

#: What a row with neither labels nor features is written as.
XC_EMPTY_ROW = b"\n"
LIBSVM_EMPTY_ROW = b" 1:0.0\n"


# ----------------------------------------------------------------------------- values
def float_text(values) -> tuple[np.ndarray, np.ndarray]:
    """``(text, offsets)``: the ``repr`` of each float64 of ``values`` (the shortest text that
    reads back to the same value), concatenated as ASCII bytes, value ``j`` at
    ``text[offsets[j]:offsets[j + 1]]``."""
    strs = list(map(repr, np.asarray(values, dtype=np.float64).tolist()))
    offsets = np.zeros(len(strs) + 1, dtype=np.int64)
    np.cumsum(np.fromiter(map(len, strs), dtype=np.int64, count=len(strs)), out=offsets[1:])
    return np.frombuffer("".join(strs).encode("ascii"), dtype=np.uint8), offsets


def fixed_text(q, decimals: int) -> tuple[np.ndarray, np.ndarray]:
    """``(text, offsets)`` as :func:`float_text`, of the values ``q / 10 ** decimals`` for
    non-negative integers ``q``, written exactly: ``0.01234``, ``2.5``, ``1.0`` (at most
    ``decimals`` decimals, trailing zeros dropped, at least one)."""
    return _fixed_text(np.asarray(q, dtype=np.int64), decimals)


@njit(cache=True)
def _n_digits(v):
    n = 1
    while v >= 10:
        v //= 10
        n += 1
    return n


@njit(cache=True)
def _put_int(buf, at, v):
    n = _n_digits(v)
    for k in range(n - 1, -1, -1):
        buf[at + k] = 48 + v % 10
        v //= 10
    return at + n


@njit(cache=True)
def _value_len(q, unit, decimals):
    whole, frac = q // unit, q % unit
    if frac == 0:
        return _n_digits(whole) + 2
    k = decimals
    while frac % 10 == 0:
        frac //= 10
        k -= 1
    return _n_digits(whole) + 1 + k


@njit(cache=True)
def _put_value(buf, at, q, unit, decimals):
    whole, frac = q // unit, q % unit
    at = _put_int(buf, at, whole)
    buf[at] = 46                                  # '.'
    at += 1
    if frac == 0:
        buf[at] = 48
        return at + 1
    k = decimals
    while frac % 10 == 0:
        frac //= 10
        k -= 1
    for j in range(k - 1, -1, -1):
        buf[at + j] = 48 + frac % 10
        frac //= 10
    return at + k


@njit(cache=True)
def _fixed_text(q, decimals):
    unit = 1
    for _ in range(decimals):
        unit *= 10
    offsets = np.zeros(q.size + 1, dtype=np.int64)
    for j in range(q.size):
        offsets[j + 1] = offsets[j] + _value_len(q[j], unit, decimals)
    text = np.empty(offsets[-1], dtype=np.uint8)
    for j in range(q.size):
        _put_value(text, offsets[j], q[j], unit, decimals)
    return text, offsets


# ----------------------------------------------------------------------------- lines
def sparse_lines(indptr, indices, values, label_indptr, labels, *, index_base: int,
                 empty_row: bytes) -> bytes:
    """The lines of rows given as CSR arrays: features ``indices`` (``indptr``) with the text
    of their values (``values``, from :func:`float_text` or :func:`fixed_text`), labels
    ``labels`` (``label_indptr``), each sorted within its row. Feature indices are written
    plus ``index_base``, labels as they are; ``empty_row`` is the line of a row with neither
    labels nor features."""
    text, offsets = values
    return _sparse_lines(np.asarray(indptr, np.int64), np.asarray(indices, np.int64),
                         text, offsets, np.asarray(label_indptr, np.int64),
                         np.asarray(labels, np.int64), index_base,
                         np.frombuffer(empty_row, dtype=np.uint8)).tobytes()


@njit(cache=True)
def _sparse_lines(xp, xi, text, offsets, yp, yi, index_base, empty_row):
    n = xp.size - 1
    size = 0
    for i in range(n):
        if xp[i] == xp[i + 1] and yp[i] == yp[i + 1]:
            size += empty_row.size
            continue
        if yp[i] == yp[i + 1]:
            size += 1                             # leading blank: no labels
        for j in range(yp[i], yp[i + 1]):
            size += _n_digits(yi[j]) + 1           # label and ',' (or what follows the last)
        for j in range(xp[i], xp[i + 1]):
            size += _n_digits(xi[j] + index_base) + 2 + offsets[j + 1] - offsets[j]
    buf = np.empty(size, dtype=np.uint8)
    at = 0
    for i in range(n):
        no_features = xp[i] == xp[i + 1]
        if no_features and yp[i] == yp[i + 1]:
            buf[at:at + empty_row.size] = empty_row
            at += empty_row.size
            continue
        if yp[i] == yp[i + 1]:
            buf[at] = 32
            at += 1
        for j in range(yp[i], yp[i + 1]):
            at = _put_int(buf, at, yi[j])
            # ',' between labels, then ' ' before the features or the end of the line
            buf[at] = 44 if j + 1 < yp[i + 1] else (10 if no_features else 32)
            at += 1
        for j in range(xp[i], xp[i + 1]):
            at = _put_int(buf, at, xi[j] + index_base)
            buf[at] = 58                          # ':'
            at += 1
            k = offsets[j + 1] - offsets[j]
            buf[at:at + k] = text[offsets[j]:offsets[j + 1]]
            at += k
            buf[at] = 32 if j + 1 < xp[i + 1] else 10
            at += 1
    return buf


# ----------------------------------------------------------------------------- files
def xc_header(n_samples: int, n_features: int, n_labels: int) -> str:
    """The first line of a file in the XC format."""
    return f"{n_samples} {n_features} {n_labels}\n"


def write_text(path, header: str | None, blocks: Iterable[bytes]) -> Path:
    """Write ``header`` and then each block of lines to ``path``, atomically (gzip when the
    path ends in ``.gz``); one block is in memory at a time."""
    def write(out):
        if header is not None:
            out.write(header.encode())
        for block in blocks:
            out.write(block)

    path = Path(path)
    return atomic_write_bytes(path, write, compress=path.suffix == ".gz")


def _dataset_blocks(dataset: Dataset, index_base: int, empty_row: bytes):
    X = canonical_csr(dataset.X)
    Y = canonical_csr(dataset.Y)
    for lo in range(0, X.shape[0], _BLOCK_ROWS):
        hi = min(lo + _BLOCK_ROWS, X.shape[0])
        xa, xb, ya, yb = X.indptr[lo], X.indptr[hi], Y.indptr[lo], Y.indptr[hi]
        yield sparse_lines(X.indptr[lo:hi + 1] - xa, X.indices[xa:xb],
                           float_text(X.data[xa:xb]), Y.indptr[lo:hi + 1] - ya,
                           Y.indices[ya:yb], index_base=index_base, empty_row=empty_row)


def write_xc(dataset: Dataset, path) -> Path:
    """Write ``dataset`` in the Extreme Classification Repository format.

    Header ``n_samples n_features n_labels``, then one line per row, ``l1,l2 f:v ...`` with
    0-based features and labels. A row with neither labels nor features is a blank line.
    """
    n, d = dataset.X.shape
    return write_text(path, xc_header(n, d, dataset.Y.shape[1]),
                      _dataset_blocks(dataset, 0, XC_EMPTY_ROW))


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
    return write_text(path, None, _dataset_blocks(dataset, 1, LIBSVM_EMPTY_ROW))
