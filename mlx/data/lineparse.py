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

Bounded reads
-------------
No file can make a read take unbounded memory (a small ``.gz`` can hold gigabytes of rows,
or one line of gigabytes). :func:`reading` hands the readers a :class:`BoundedReader`, which

* refuses a line longer than :func:`max_line_bytes` (default 16 MiB; raise it with
  ``mlx --max-line-bytes SIZE`` or ``MLX_MAX_LINE_BYTES``) before holding more of it, and
* estimates, as lines arrive, what the parsed rows will occupy
  (:data:`BYTES_PER_BYTE` per byte of text, :data:`DENSE_BYTES_PER_BYTE` for dense text,
  plus :data:`BYTES_PER_LINE` per line: upper bounds for the readers' token lists and arrays) and
  refuses the read once that passes
  :func:`max_read_memory` (default 80% of the memory available when the read starts; set it
  with ``mlx --max-read-memory SIZE`` or ``MLX_MAX_READ_MEMORY``).

Both errors name the file, the line and the limit. Streaming reads with a size
(``read(1 << 20)``, as the checksums do) hold nothing and are not bounded.

Implementation: each line is split with ``bytes`` methods; the tokens of the whole file are
converted to numbers in bulk at the end, and all range and order checks are vectorised. Only
when a check fails is the offending line located (:func:`first_failure`), so well-formed files
pay for no per-token Python work beyond one ``int()`` / ``float()`` call.
"""

from __future__ import annotations

import contextlib
import contextvars
import gzip
import io
import logging
import os
import re
import zlib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import BinaryIO

from mlx.data.dataset import canonical_csr
from mlx.errors import DataFormatError
from mlx.lazy import lazy_module

np = lazy_module("numpy")
sp = lazy_module("scipy.sparse")

__all__ = [
    "GZIP_MAGIC",
    "open_binary",
    "reading",
    "BoundedReader",
    "max_line_bytes",
    "max_read_memory",
    "available_memory",
    "parse_size",
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
    "MAX_MAGNITUDE",
    "MAGNITUDE_RULE",
]

log = logging.getLogger(__name__)

#: How to read a file with missing feature values (the end of the readers' messages).
MISSING_HINT = ("set missing: nan to read a missing feature value as NaN and add the "
                "impute_mean preprocessing step, or remove the rows that have them")

#: The largest magnitude a value read may have. Squares, sums of squares and differences of
#: larger values can overflow float64 (a target of 1e308 scaled by min-max becomes NaN); at
#: 1e100 a sum of squares stays finite over 1e100 terms.
MAX_MAGNITUDE = 1e100
MAGNITUDE_RULE = ("values must be at most 1e100 in magnitude, beyond which squares and sums "
                  "of squares can overflow; rescale the column")

#: The first two bytes of a gzip stream.
GZIP_MAGIC = b"\x1f\x8b"

# Every byte except b" " and b":"; deleting them from a feature field leaves its separators.
_NOT_SEP = bytes(i for i in range(256) if i not in b" :")


# ----------------------------------------------------------------------------- file access
#: Memory estimate of a read: bytes per byte of text and per line, upper bounds measured on
#: LIBSVM files of one-feature rows ``1 1:1`` (300 MB for 12 MB of text in 2M lines; estimate
#: 640 MB) and of 30-feature rows (470 MB for 36 MB; estimate 575 MB). Dense delimited and
#: ARFF text of one-digit values costs more per byte (257 MB for 10 MB): those readers use
#: :data:`DENSE_BYTES_PER_BYTE` (estimate 290 MB).
BYTES_PER_BYTE = 16
DENSE_BYTES_PER_BYTE = 28
BYTES_PER_LINE = 240
_DEFAULT_LINE_BYTES = 16 << 20
_UNITS = {"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40}


def parse_size(text: str) -> int:
    """``"16M"`` -> 16777216: an integer with an optional K, M, G or T suffix (powers of
    1024, optionally followed by ``B`` or ``iB``); ValueError for anything else."""
    t = str(text).strip().upper().removesuffix("IB").removesuffix("B")
    unit = t[-1:] if t[-1:] in _UNITS and t[-1:] else ""
    number = t[:-1] if unit else t
    value = float(number) * _UNITS[unit]
    if not number or not (value >= 1) or value != value or value > 1 << 62:
        raise ValueError(f"not a size: {text!r}")
    return int(value)


def size_text(n: int) -> str:
    """``16777216`` -> ``"16 MiB"`` (for messages)."""
    for unit in ("TiB", "GiB", "MiB", "KiB"):
        scale = _UNITS[unit[0]]
        if n >= scale:
            return f"{n / scale:.3g} {unit}"
    return f"{n} bytes"


def _env_size(var: str) -> int | None:
    text = os.environ.get(var)
    if not text:
        return None
    try:
        return parse_size(text)
    except ValueError:
        from mlx.errors import ConfigError
        raise ConfigError(None, None, f"{var}={text!r} is not a size; give bytes with an "
                                      f"optional K, M, G or T suffix, e.g. 64M") from None


def max_line_bytes() -> int:
    """The longest line a reader accepts (``MLX_MAX_LINE_BYTES``, default 16 MiB)."""
    return _env_size("MLX_MAX_LINE_BYTES") or _DEFAULT_LINE_BYTES


def available_memory() -> tuple[int, str]:
    """``(bytes, where from)``: ``MemAvailable`` of ``/proc/meminfo``, else the free physical
    pages (``os.sysconf``)."""
    try:
        with open("/proc/meminfo", encoding="ascii") as fh:
            for line in fh:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024, "MemAvailable in /proc/meminfo"
    except (OSError, ValueError, IndexError):
        pass
    try:
        pages = os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
        return int(pages), "free physical pages (os.sysconf)"
    except (ValueError, OSError, AttributeError):  # pragma: no cover - not POSIX
        return 2**62, "unknown"


def max_read_memory() -> tuple[int, str]:
    """``(bytes, what it is)``: the memory one read may take (``MLX_MAX_READ_MEMORY``,
    default 80% of the available memory now)."""
    limit = _env_size("MLX_MAX_READ_MEMORY")
    if limit:
        return limit, "MLX_MAX_READ_MEMORY"
    avail, where = available_memory()
    return int(0.8 * avail), f"80% of the available memory, {where}"


_LINE_HINT = "raise the limit with mlx --max-line-bytes SIZE (or MLX_MAX_LINE_BYTES)"
_MEMORY_HINT = ("free memory, read a smaller file or, if the estimate is too cautious, raise "
                "the limit with mlx --max-read-memory SIZE (or MLX_MAX_READ_MEMORY)")


class BoundedReader:
    """A binary file whose lines and whole reads are bounded (see the module docstring).

    Iterating, :meth:`readline` and :meth:`read` without a size are bounded; ``read(n)``
    streams unbounded. ``line_no`` is the number of lines handed out so far.
    """

    _CHECK_EVERY = 1 << 14

    def __init__(self, fh, path, bytes_per_byte: int = BYTES_PER_BYTE):
        self._fh = fh
        self.path = str(path)
        self.bytes_per_byte = bytes_per_byte
        self.line_limit = max_line_bytes()
        self._memory = None               # (limit, source), looked up at the first check
        self.line_no = 0
        self._bytes = 0
        self._next_check = 1 << 22        # check every 4 MiB of text or 16384 lines

    def _check_memory(self, coming: int = 0) -> None:
        """Refuse the read if what it holds, with ``coming`` more lines, passes the limit."""
        if self._memory is None:
            self._memory = max_read_memory()
        limit, source = self._memory
        need = self.bytes_per_byte * self._bytes + BYTES_PER_LINE * (self.line_no + coming)
        self._next_check = self._bytes + (1 << 22)
        if need > limit:
            raise DataFormatError(self.path, self.line_no + coming or None,
                                  f"reading this file would take more than "
                                  f"{size_text(limit)} of memory ({source}; "
                                  f"{size_text(self._bytes)} of text read so far); "
                                  + _MEMORY_HINT)

    def _too_long(self, line_no: int) -> DataFormatError:
        return DataFormatError(self.path, line_no,
                               f"line longer than {size_text(self.line_limit)}, the limit for "
                               f"a line of a data file; if the file is right, " + _LINE_HINT)

    def readline(self, size: int = -1) -> bytes:
        line = self._fh.readline(self.line_limit + 2)
        if len(line) > self.line_limit and len(line.rstrip(b"\r\n")) > self.line_limit:
            raise self._too_long(self.line_no + 1)
        if line:
            self.line_no += 1
            self._bytes += len(line)
            if self._bytes >= self._next_check or not self.line_no % self._CHECK_EVERY:
                self._check_memory()
        return line

    def __iter__(self):
        # Whole chunks of lines, split at C speed; a chunk is at most one line limit long,
        # so only a line that started in an earlier chunk can be longer than the limit.
        read, limit = self._fh.read, self.line_limit
        size = min(1 << 22, limit + 1)
        carry = b""
        while True:
            chunk = read(size)
            if not chunk:
                if carry:
                    self.line_no += 1
                    yield carry
                return
            self._bytes += len(chunk)
            buf = carry + chunk if carry else chunk
            cut = buf.rfind(b"\n") + 1
            first = buf.find(b"\n") if carry else -1
            if len(buf) - cut > limit + 1 or first > limit + 1:
                raise self._too_long(self.line_no + 1 if first > limit + 1 or not cut
                                     else self.line_no + buf.count(b"\n", 0, cut) + 1)
            carry = buf[cut:]
            if cut:
                lines = io.BytesIO(buf[:cut] if carry else buf).readlines()
                self._check_memory(len(lines))
                for line in lines:
                    self.line_no += 1
                    yield line

    def read(self, size: int = -1) -> bytes:
        if size is not None and size >= 0:
            return self._fh.read(size)
        chunks, since_newline = [], 0
        while True:
            chunk = self._fh.read(1 << 20)
            if not chunk:
                break
            chunks.append(chunk)
            self._bytes += len(chunk)
            newlines = chunk.count(b"\n")
            last = chunk.rfind(b"\n")
            since_newline = len(chunk) - last - 1 if last >= 0 else since_newline + len(chunk)
            self.line_no += newlines
            if since_newline > self.line_limit + 1:
                raise self._too_long(self.line_no + 1)
            self._check_memory()
        return b"".join(chunks)

    def __getattr__(self, name):
        return getattr(self._fh, name)


def open_binary(path) -> BinaryIO:
    """Open ``path`` for reading bytes, decompressing gzip transparently.

    gzip is recognised by its magic bytes ``1f 8b``, so a compressed file is read correctly
    whatever its name (and a plain file named ``*.gz`` is read as plain text).
    """
    with open(path, "rb") as fh:
        magic = fh.read(2)
    return gzip.open(path, "rb") if magic == GZIP_MAGIC else open(path, "rb")


@contextlib.contextmanager
def reading(path, *, bytes_per_byte: int = BYTES_PER_BYTE):
    """Context manager around :func:`open_binary` that yields a :class:`BoundedReader`
    (estimating ``bytes_per_byte`` of memory per byte of text read) and
    reports a corrupt or truncated gzip stream, a file that cannot be read (permissions, an
    I/O error) and running out of memory as :class:`~mlx.errors.DataFormatError`."""
    try:
        fh = open_binary(path)
    except OSError as exc:
        raise DataFormatError(path, None, _cannot_read(exc)) from None
    reader = BoundedReader(fh, path, bytes_per_byte)
    try:
        yield reader
    except (EOFError, gzip.BadGzipFile, zlib.error) as exc:
        raise DataFormatError(path, None, f"corrupt or truncated gzip data ({exc}); the file "
                                          "must be plain text or a complete gzip stream") from None
    except OSError as exc:
        raise DataFormatError(path, reader.line_no or None, _cannot_read(exc)) from None
    except MemoryError:
        raise DataFormatError(path, reader.line_no or None,
                              "ran out of memory reading this file; " + _MEMORY_HINT) from None
    finally:
        fh.close()


def _cannot_read(exc: OSError) -> str:
    import errno

    reason = exc.strerror or type(exc).__name__
    if exc.errno in (errno.EACCES, errno.EPERM):
        return f"cannot read the file: {reason}; make it readable (chmod +r) or copy it"
    return f"cannot read the file: {reason}; check the file and the device it is on"


#: The most characters of a token a message shows.
MAX_TOKEN_SHOWN = 80
# Control characters (and line separators) would break a one-line message or the terminal.
_CONTROL = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029]")


def token_text(token: bytes) -> str:
    """A token as text, for messages: undecodable bytes become U+FFFD, control characters
    escapes (``\\x1b``), and a token longer than :data:`MAX_TOKEN_SHOWN` characters is cut,
    with its full length noted."""
    text = token.decode("utf-8", "replace")
    cut = len(text) > MAX_TOKEN_SHOWN
    shown = text[:MAX_TOKEN_SHOWN] if cut else text
    shown = _CONTROL.sub(lambda m: m.group().encode("unicode_escape").decode("ascii"), shown)
    return f"{shown}... ({len(text)} characters)" if cut else shown


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
            check_unterminated(path, line_no, line, numeric=True)

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
        bad = np.flatnonzero(np.abs(data) > MAX_MAGNITUDE)
        if bad.size:
            j = int(bad[0])
            raise DataFormatError(path, self._line_of(indptr, j),
                                  f"value too large in feature '{feature(j)}' ({MAGNITUDE_RULE})")

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
            bad = np.flatnonzero(np.abs(values) > MAX_MAGNITUDE)
            if bad.size:
                j = int(bad[0])
                raise DataFormatError(path, self._line_of(label_indptr, j),
                                      f"value too large in the target or class label "
                                      f"'{token_text(toks[j])}' ({MAGNITUDE_RULE})")
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
    :func:`check_unterminated` lets them pass."""
    token = _VERIFIED.set(verified)
    try:
        yield
    finally:
        _VERIFIED.reset(token)


#: The end of a line cut inside a value: a sign, a dot, a separator, an exponent marker after
#: a digit. ``numeric`` formats (LIBSVM, XC) must end a line with a digit.
_CUT = re.compile(rb"(?:[.+\-:,{]|[0-9.][eE])$")


def check_unterminated(path, line_no: int, line: bytes, *, numeric: bool = False) -> None:
    """The last line of ``path`` (``line``) has no newline. That alone is no fault (many
    tools write files so), but a line that ends inside a value was cut short: raise
    :class:`~mlx.errors.DataFormatError`. Files whose checksum was verified
    (:func:`checksum_verified`) are as published and pass."""
    if _VERIFIED.get():
        return
    s = line.strip()
    if not s or s[:1] in (b"#", b"%"):                  # a comment
        return
    cut = not s[-1:].isdigit() if numeric else _CUT.search(s) is not None
    if cut:
        last = token_text(s.rsplit(None, 1)[-1][-40:])
        raise DataFormatError(path, line_no, f"the last line ends inside a value ('{last}') "
                                             f"without a newline: the file was cut short; get "
                                             f"a complete copy (compare its size or checksum "
                                             f"with the source)")


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
