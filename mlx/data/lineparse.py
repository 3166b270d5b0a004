"""What the text-format readers share: gzip-transparent file access, a bulk parser for
sparse ``[labels] index:value ...`` lines, and assembling its rows into CSR matrices.

The LIBSVM reader (:mod:`mlx.data.libsvm`) and the Extreme Classification Repository reader
(:mod:`mlx.data.xc_repo`) parse their lines with :class:`SparseLineParser`; the ARFF readers
(:mod:`mlx.data.arff`) use the file access and message helpers. :func:`reading` also serves
the content checksums of :mod:`mlx.data.cache`.

Common rules
------------
Files may be gzip-compressed (detected by their magic bytes, not their name); CRLF line
endings are accepted. :class:`SparseLineParser` skips lines starting with ``#`` and, unless
told otherwise, blank lines. Every malformed line raises :class:`~mlx.errors.DataFormatError`
with the file and line number, what is wrong and what would be valid.

Implementation: each line is split with ``bytes`` methods; the tokens of the whole file are
converted to numbers in bulk at the end, and all range and order checks are vectorised. Only
when a check fails is the offending line located (:func:`first_failure`), so well-formed files
pay for no per-token Python work beyond one ``int()`` / ``float()`` call.
"""

from __future__ import annotations

import contextlib
import contextvars
import gzip
import logging
import zlib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import BinaryIO

import numpy as np
import scipy.sparse as sp

from mlx.data.dataset import canonical_csr
from mlx.errors import DataFormatError

__all__ = [
    "GZIP_MAGIC",
    "open_binary",
    "reading",
    "token_text",
    "RawRows",
    "SparseLineParser",
    "first_failure",
    "build_X",
    "build_multilabel_Y",
    "build_multiclass_Ys",
    "build_levels_Y",
    "log_rows_without_labels",
    "log_missing_features",
    "MISSING_HINT",
]

log = logging.getLogger(__name__)

#: How to read a file with missing feature values (the end of the readers' messages).
MISSING_HINT = ("set missing: nan to read a missing feature value as NaN and add the "
                "impute_mean preprocessing step, or remove the rows that have them")

#: The first two bytes of a gzip stream.
GZIP_MAGIC = b"\x1f\x8b"

# Every byte except b" " and b":"; deleting them from a feature field leaves its separators.
_NOT_SEP = bytes(i for i in range(256) if i not in b" :")


# ----------------------------------------------------------------------------- file access
def open_binary(path) -> BinaryIO:
    """Open ``path`` for reading bytes, decompressing gzip transparently.

    gzip is recognised by its magic bytes ``1f 8b``, so a compressed file is read correctly
    whatever its name (and a plain file named ``*.gz`` is read as plain text).
    """
    with open(path, "rb") as fh:
        magic = fh.read(2)
    return gzip.open(path, "rb") if magic == GZIP_MAGIC else open(path, "rb")


@contextlib.contextmanager
def reading(path):
    """Context manager around :func:`open_binary` that reports a corrupt or truncated gzip
    stream as :class:`~mlx.errors.DataFormatError`."""
    fh = open_binary(path)
    try:
        yield fh
    except (EOFError, gzip.BadGzipFile, zlib.error) as exc:
        raise DataFormatError(path, None, f"corrupt or truncated gzip data ({exc}); the file "
                                          "must be plain text or a complete gzip stream") from None
    finally:
        fh.close()


def token_text(token: bytes) -> str:
    """A token as text, for messages (undecodable bytes become U+FFFD)."""
    return token.decode("utf-8", "replace")


# ----------------------------------------------------------------------------- raw rows
@dataclass
class RawRows:
    """What one file holds, before the widths of train and test are aligned.

    ``indices`` are 0-based feature indices; ``labels`` are 0-based label indices
    (multi-label) or raw class values (multi-class, float64); ``lines`` is the line number of
    each row, for messages.
    """

    path: str
    indptr: np.ndarray
    indices: np.ndarray
    data: np.ndarray
    label_indptr: np.ndarray
    labels: np.ndarray
    lines: np.ndarray

    @property
    def n_rows(self) -> int:
        return len(self.indptr) - 1

    def max_feature(self) -> int:
        """Largest 0-based feature index, or -1."""
        return int(self.indices.max()) if self.indices.size else -1

    def max_label(self) -> int:
        return int(self.labels.max()) if self.labels.size else -1


_SEP_PATTERNS: dict[int, bytes] = {}


def _sep_pattern(k: int) -> bytes:
    pat = _SEP_PATTERNS.get(k)
    if pat is None:
        pat = _SEP_PATTERNS[k] = b" ".join([b":"] * k)
    return pat


def _split_features(rest: bytes, path, line_no: int, index_rule: str) -> list:
    """``b"3:0.5 7:1"`` -> ``[b"3", b"0.5", b"7", b"1"]``; checks the token structure only."""
    if not rest:
        return []
    sep = rest.translate(None, _NOT_SEP)
    k = (len(sep) + 1) // 2
    if sep == _sep_pattern(k):
        parts = rest.replace(b":", b" ").split()
        if len(parts) == 2 * k:
            return parts
    # Unusual spacing (tabs, several blanks) or a malformed token: check token by token.
    parts = []
    for tok in rest.split():
        idx, colon, val = tok.partition(b":")
        if not colon or not idx or not val or b":" in val:
            raise DataFormatError(path, line_no, f"malformed feature '{token_text(tok)}' "
                                                 f"(expected <index>:<value> {index_rule})")
        parts += (idx, val)
    return parts


class SparseLineParser:
    """Accumulates ``[labels] idx:val ...`` lines and converts them in bulk.

    Parameters
    ----------
    path : str
        For messages.
    index_base : {0, 1}
        Feature index base (LIBSVM: 1, Extreme Classification Repository: 0).
    label_mode : {"multilabel", "multiclass"}
    keep_blank : bool
        Whether a blank line is a row (with no labels and no features) or skipped.
    """

    def __init__(self, path, *, index_base: int, label_mode: str, keep_blank: bool = False):
        self.path = str(path)
        self.index_base = index_base
        self.label_mode = label_mode
        self.keep_blank = keep_blank
        self.index_rule = f"with an integer index >= {index_base}"
        self._feat: list = []
        self._feat_counts: list[int] = []
        self._labels: list = []
        self._label_counts: list[int] = []
        self._lines: list[int] = []

    def feed(self, lines: Iterable[bytes], first_line_no: int = 1) -> None:
        feat, labels = self._feat, self._labels
        feat_counts, label_counts, row_lines = self._feat_counts, self._label_counts, self._lines
        multiclass = self.label_mode == "multiclass"
        path, rule = self.path, self.index_rule
        line = b"\n"
        line_no = first_line_no - 1
        for line_no, line in enumerate(lines, first_line_no):
            s = line.strip()
            if not s:
                if not self.keep_blank:
                    continue
                feat_counts.append(0)
                label_counts.append(0)
                row_lines.append(line_no)
                continue
            if s[0] == 35:  # b"#": comment
                continue
            head, *tail = s.split(None, 1)
            rest = tail[0] if tail else b""
            if b":" in head:  # no label field
                if multiclass:
                    raise DataFormatError(path, line_no, f"missing class label before "
                                                         f"'{token_text(head)}' (expected "
                                                         "<label> <index>:<value> ...)")
                rest = s
                lab = ()
            elif multiclass:
                lab = (head,)
            else:
                lab = head.split(b",")
            parts = _split_features(rest.strip(), path, line_no, rule)
            feat += parts
            feat_counts.append(len(parts) >> 1)
            labels += lab
            label_counts.append(len(lab))
            row_lines.append(line_no)
        if line.strip() and not line.endswith(b"\n"):
            warn_unterminated(path, line_no)

    # ------------------------------------------------------------------ bulk conversion
    def _row_of(self, indptr: np.ndarray, j: int) -> int:
        return int(np.searchsorted(indptr, j, side="right") - 1)

    def _line_of(self, indptr, j) -> int:
        return int(self._lines[self._row_of(indptr, j)])

    def finish(self, *, n_features: int | None = None, n_labels: int | None = None,
               header_names: bool = False) -> RawRows:
        """Convert, validate and return the rows.

        ``n_features`` / ``n_labels`` bound the indices (0-based widths); with
        ``header_names`` the messages speak of the file's header (repository format).
        """
        path, base = self.path, self.index_base
        indptr = np.zeros(len(self._feat_counts) + 1, dtype=np.int64)
        np.cumsum(self._feat_counts, out=indptr[1:])
        label_indptr = np.zeros(len(self._label_counts) + 1, dtype=np.int64)
        np.cumsum(self._label_counts, out=label_indptr[1:])
        idx_tok = self._feat[0::2]
        val_tok = self._feat[1::2]
        nnz = len(idx_tok)

        def feature(j):
            return f"{token_text(idx_tok[j])}:{token_text(val_tok[j])}"

        try:
            indices = np.fromiter(map(int, idx_tok), dtype=np.int64, count=nnz)
        except (ValueError, OverflowError):     # overflow: an index beyond int64
            j = first_failure(idx_tok, int64)
            raise DataFormatError(
                path, self._line_of(indptr, j),
                f"malformed feature '{feature(j)}' "
                f"(expected <index>:<value> {self.index_rule})") from None
        try:
            data = np.fromiter(map(float, val_tok), dtype=np.float64, count=nnz)
        except ValueError:
            j = first_failure(val_tok, float)
            raise DataFormatError(
                path, self._line_of(indptr, j),
                f"malformed feature '{feature(j)}' (expected <index>:<value> with a numeric "
                "value)") from None

        bad = np.flatnonzero(indices < base)
        if bad.size:
            j = int(bad[0])
            raise DataFormatError(path, self._line_of(indptr, j),
                                  f"malformed feature '{feature(j)}' "
                                  f"(expected <index>:<value> {self.index_rule})")
        indices -= base
        if nnz > 1:
            same_row = np.ones(nnz - 1, dtype=bool)
            starts = indptr[1:-1]
            starts = starts[(starts > 0) & (starts < nnz)]
            same_row[starts - 1] = False
            bad = np.flatnonzero(same_row & (indices[1:] <= indices[:-1]))
            if bad.size:
                j = int(bad[0])
                raise DataFormatError(
                    path, self._line_of(indptr, j + 1),
                    f"feature index {indices[j + 1] + base} follows {indices[j] + base}; "
                    "indices must be strictly increasing within a line")
        if n_features is not None:
            bad = np.flatnonzero(indices >= n_features)
            if bad.size:
                j = int(bad[0])
                what = (f"header 'n_features={n_features}'" if header_names
                        else f"n_features={n_features}")
                word = "features are" if header_names else "indices are"
                raise DataFormatError(
                    path, self._line_of(indptr, j),
                    f"feature index {indices[j] + base} out of range for {what} "
                    f"({word} {base}-based)")
        bad = np.flatnonzero(~np.isfinite(data))
        if bad.size:
            j = int(bad[0])
            raise DataFormatError(path, self._line_of(indptr, j),
                                  f"non-finite value in feature '{feature(j)}' "
                                  "(values must be finite numbers)")

        labels = self._convert_labels(label_indptr, n_labels, header_names)
        return RawRows(path=path, indptr=indptr, indices=indices, data=data,
                       label_indptr=label_indptr, labels=labels,
                       lines=np.asarray(self._lines, dtype=np.int64))

    def _convert_labels(self, label_indptr, n_labels, header_names) -> np.ndarray:
        path, toks = self.path, self._labels
        if self.label_mode == "multiclass":
            try:
                values = np.fromiter(map(float, toks), dtype=np.float64, count=len(toks))
            except ValueError:
                j = first_failure(toks, float)
                raise DataFormatError(path, self._line_of(label_indptr, j),
                                      f"malformed class label '{token_text(toks[j])}' "
                                      "(expected a number)") from None
            bad = np.flatnonzero(~np.isfinite(values))
            if bad.size:
                j = int(bad[0])
                raise DataFormatError(path, self._line_of(label_indptr, j),
                                      f"non-finite class label '{token_text(toks[j])}' "
                                      "(expected a finite number)")
            return values

        def field(j):
            row = self._row_of(label_indptr, j)
            return token_text(b",".join(toks[label_indptr[row]:label_indptr[row + 1]]))

        try:
            labels = np.fromiter(map(int, toks), dtype=np.int64, count=len(toks))
        except (ValueError, OverflowError):
            j = first_failure(toks, int64)
            raise DataFormatError(path, self._line_of(label_indptr, j),
                                  f"malformed label field '{field(j)}' (expected "
                                  "comma-separated integer label indices >= 0)") from None
        bad = np.flatnonzero(labels < 0)
        if bad.size:
            j = int(bad[0])
            raise DataFormatError(path, self._line_of(label_indptr, j),
                                  f"malformed label field '{field(j)}' (expected "
                                  "comma-separated integer label indices >= 0)")
        if n_labels is not None:
            bad = np.flatnonzero(labels >= n_labels)
            if bad.size:
                j = int(bad[0])
                what = (f"header 'n_labels={n_labels}'" if header_names
                        else f"n_labels={n_labels}")
                raise DataFormatError(path, self._line_of(label_indptr, j),
                                      f"label index {labels[j]} out of range for {what} "
                                      "(labels are 0-based)")
        return labels


_VERIFIED = contextvars.ContextVar("mlx_checksum_verified", default=False)


@contextlib.contextmanager
def checksum_verified(verified: bool = True):
    """Within this block, files being read were verified against a published checksum, so
    :func:`warn_unterminated` stays silent for them."""
    token = _VERIFIED.set(verified)
    try:
        yield
    finally:
        _VERIFIED.reset(token)


def warn_unterminated(path, line_no: int) -> None:
    """Log that the last line of ``path`` has no newline: the file may have been cut short
    (a download or copy that stopped on a token boundary still parses). Silent for files
    whose checksum was verified (:func:`checksum_verified`)."""
    if _VERIFIED.get():
        return
    log.warning("%s:%d: the last line does not end with a newline; the file may be truncated "
                "(compare its size or checksum with the source)", path, line_no)


def int64(token) -> int:
    """``int(token)``, refusing values outside int64 with a ValueError (not OverflowError)."""
    value = int(token)
    if not -(1 << 63) <= value < (1 << 63):
        raise ValueError(f"{value} does not fit in 64 bits")
    return value


def first_failure(tokens: Sequence, convert) -> int:
    """Index of the first token that ``convert`` (e.g. ``int64``, ``float``) rejects with a
    ``ValueError``; for locating the offending line after a bulk conversion failed."""
    for j, tok in enumerate(tokens):
        try:
            convert(tok)
        except (ValueError, OverflowError):
            return j
    return 0  # pragma: no cover - only called after a conversion failed


# ----------------------------------------------------------------------------- assembling
def build_X(raw: RawRows, n_features: int) -> sp.csr_matrix:
    """The canonical CSR feature matrix of ``raw``, ``n_features`` columns wide."""
    X = sp.csr_matrix((raw.data, raw.indices, raw.indptr), shape=(raw.n_rows, n_features))
    return canonical_csr(X)


def build_multilabel_Y(raw: RawRows, n_labels: int) -> sp.csr_matrix:
    """The canonical CSR label matrix of multi-label ``raw``, ``n_labels`` columns wide:
    stored entries 1; a label repeated on a line counts once."""
    Y = sp.csr_matrix((np.ones(raw.labels.size), raw.labels, raw.label_indptr),
                      shape=(raw.n_rows, n_labels))
    Y = canonical_csr(Y)
    Y.data[:] = 1.0
    return Y


def _class_name(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else repr(float(value))


def build_multiclass_Ys(values: Sequence[np.ndarray]) -> tuple[tuple, list]:
    """One-hot label matrices of several files' class values (float arrays, one per file).

    The sorted distinct values of all files together become classes ``0..K-1``, so train and
    test share the mapping. Returns ``(class names, [Y per file])``; a name is the value as
    written for integers (``"3"``), else its ``repr``.
    """
    classes = np.unique(np.concatenate(values)) if len(values) else np.array([])
    names = tuple(_class_name(c) for c in classes)
    out = []
    for v in values:
        codes = np.searchsorted(classes, v)
        Y = sp.csr_matrix((np.ones(v.size), codes, np.arange(v.size + 1)),
                          shape=(v.size, len(classes)))
        out.append(canonical_csr(Y))
    return names, out


def build_levels_Y(values: np.ndarray, lines: np.ndarray, path, what: str,
                   hint: str) -> sp.csr_matrix:
    """The ``(n, 1)`` target column of an ordinal task (zeros implicit). Every value must be
    an integer level; otherwise :class:`~mlx.errors.DataFormatError` names the line of the
    first one that is not, as ``<what> <value> is not an integer level (<hint>)``."""
    bad = np.flatnonzero(values != np.round(values))
    if bad.size:
        j = int(bad[0])
        raise DataFormatError(path, int(lines[j]), f"{what} {values[j]:g} is not an integer "
                                                   f"level ({hint})")
    return canonical_csr(values[:, None])


def log_rows_without_labels(Y: sp.csr_matrix, path) -> None:
    """Log (at INFO) how many rows of ``Y`` have no labels; they are kept, not dropped."""
    empty = int(np.sum(np.diff(Y.indptr) == 0))
    if empty:
        log.info("%s: keep %d of %d instances that have no labels", path, empty, Y.shape[0],
                 extra={"collect": True})


def log_missing_features(X: sp.csr_matrix, path) -> None:
    """Log (at INFO) how many feature values of ``X`` are missing (NaN) and in how many rows."""
    nan = np.isnan(X.data)
    if nan.any():
        rows = np.repeat(np.arange(X.shape[0]), np.diff(X.indptr))[nan]
        log.info("%s: read %d missing feature values (in %d of %d rows) as NaN", path,
                 int(nan.sum()), np.unique(rows).size, X.shape[0], extra={"collect": True})
