"""Reader of R data files (``.rda``, ``save()`` images) holding an ``mldr`` multi-label object.

The mldr collection (the R package ``mldr.datasets``) ships each data set as an R list of
class ``mldr`` whose ``dataset`` element is a *dense* data frame: the 3.9 MB rcv1sub1 file
expands to 6000 x 47,339 doubles (2.3 GB). This module decodes the R serialisation format
(version 2 or 3, XDR binary, inside xz, gzip, bzip2 or no compression) as a stream and keeps
only the non-zero entries of each numeric column, so rcv1sub1 loads in a few seconds at about
150 MB instead of the ~6.5 GB that building the data frame first takes.

The decoder is strict: it understands the R types a saved list of data frames and vectors
is made of (NULL, symbols, pairlists, logical, integer, double and character vectors, lists,
references to symbols, and the compact sequences and wrappers R >= 3.5 may write) and stops with a
one-line :class:`~mlx.errors.DataFormatError`
naming the file, the type and the byte offset in the decompressed stream on anything else.

How an ``mldr`` object becomes a :class:`~mlx.data.dataset.Dataset`
(:func:`read_mldr`):

* the features are the data-frame columns listed in ``attributesIndexes`` (1-based), in that
  order; the labels are the columns of ``labels$index`` (the first columns in ohsumed and
  reutersk500, the last ones elsewhere), named by the row names of ``labels``;
* the columns ``.labelcount`` and ``.SCUMBLE`` that the mldr package adds are derived from
  the labels and never become features (an object listing them as features is an error);
  ``.labelcount``, when present, must equal each row's number of labels;
* feature columns may be double, integer, logical or character vectors of numbers (some
  sets store 0/1 as the strings ``"0"``/``"1"``); a missing value (``NA``) is an error;
  label columns must hold only 0 and 1;
* strings without an encoding mark are decoded as latin-1 (R writes the native encoding of
  the machine that saved the file, and the mldr files are latin-1);
* rows without any label and labels without any positive row are kept.
"""

from __future__ import annotations

import bz2
import gzip
import lzma
import struct
import zlib
from dataclasses import dataclass, field

import numpy as np
import scipy.sparse as sp

from mlx.data.dataset import Dataset
from mlx.errors import DataFormatError

__all__ = ["Column", "Strings", "RList", "read_rds_object", "read_mldr", "read_mldr_files"]

# R SEXP type codes (src/include/Rinternals.h) and the pseudo-types of serialize.c
_NILSXP, _SYMSXP, _LISTSXP, _CHARSXP = 0, 1, 2, 9
_LGLSXP, _INTSXP, _REALSXP, _STRSXP, _VECSXP = 10, 13, 14, 16, 19
_REFSXP, _NILVALUE_SXP, _ALTREP_SXP = 255, 254, 238
_TYPE_NAMES = {
    0: "NULL", 1: "symbol", 2: "pairlist", 3: "closure", 4: "environment", 5: "promise",
    6: "language", 7: "special", 8: "builtin", 9: "CHARSXP", 10: "logical", 13: "integer",
    14: "double", 15: "complex", 16: "character", 17: "...", 18: "any", 19: "list",
    20: "expression", 21: "bytecode", 22: "external pointer", 23: "weak reference",
    24: "raw", 25: "S4 object", 238: "ALTREP object", 239: "attributed pairlist",
    240: "attributed language object", 241: "base environment", 242: "empty environment",
    247: "persistent reference", 248: "package environment", 249: "namespace",
    250: "base namespace", 251: "missing argument", 252: "unbound value",
    253: "global environment",
}
_NA_INT = -(2 ** 31)
_UTF8_MASK, _LATIN1_MASK, _BYTES_MASK, _ASCII_MASK = 1 << 3, 1 << 2, 1 << 1, 1 << 6
_MAGIC = {b"RDX2\n": 2, b"RDX3\n": 3}


# ----------------------------------------------------------------------------- R values
@dataclass
class Column:
    """A logical, integer or double vector, stored sparsely: ``rows`` (int64) hold the
    positions of the non-zero entries (NA included) and ``values`` their values (int64 for
    logical and integer vectors, float64 for doubles); ``na`` counts the missing values."""

    kind: str
    n: int
    rows: np.ndarray
    values: np.ndarray
    na: int
    attrs: dict = field(default_factory=dict)

    def dense(self) -> np.ndarray:
        out = np.zeros(self.n, dtype=self.values.dtype)
        out[self.rows] = self.values
        return out


@dataclass
class Strings:
    """A character vector, stored as codes into its distinct values (``None`` is NA)."""

    codes: np.ndarray
    levels: list
    attrs: dict = field(default_factory=dict)

    @property
    def n(self) -> int:
        return int(self.codes.size)

    def tolist(self) -> list:
        return [self.levels[c] for c in self.codes]


@dataclass
class RList:
    """A generic vector (R ``list``; data frames are lists too) with its attributes."""

    items: list
    attrs: dict = field(default_factory=dict)

    def names(self) -> list | None:
        names = self.attrs.get("names")
        return names.tolist() if isinstance(names, Strings) else None

    def classes(self) -> list:
        cls = self.attrs.get("class")
        return cls.tolist() if isinstance(cls, Strings) else []


class _Symbol(str):
    """An R symbol (a name)."""


def _column(kind: int, a: np.ndarray) -> Column:
    """The sparse :class:`Column` of a dense vector of R type ``kind``."""
    rows = np.flatnonzero(a)  # NaN (NA) is non-zero
    if kind == _REALSXP:
        values = a[rows].astype(np.float64)
        return Column("double", a.size, rows, values, int(np.count_nonzero(np.isnan(values))))
    values = a[rows].astype(np.int64)
    na = int(np.count_nonzero(values == _NA_INT))
    return Column("integer" if kind == _INTSXP else "logical", a.size, rows, values, na)


# ----------------------------------------------------------------------------- decoder
def _open_stream(path):
    with open(path, "rb") as fh:
        head = fh.read(6)
    if head.startswith(b"\xfd7zXZ\x00"):
        return lzma.open(path, "rb")
    if head.startswith(b"\x1f\x8b"):
        return gzip.open(path, "rb")
    if head.startswith(b"BZh"):
        return bz2.open(path, "rb")
    return open(path, "rb")


class _Decoder:
    def __init__(self, path, fh):
        self.path = path
        self.fh = fh
        self.pos = 0
        self.refs: list = []

    # -- primitives
    def fail(self, what: str, at: int | None = None):
        at = self.pos if at is None else at
        raise DataFormatError(self.path, None, f"{what} at byte {at} of the decompressed R "
                                               "serialisation; an mldr .rda file holds a "
                                               "list of data frames and vectors")

    def read(self, n: int) -> bytes:
        buf = self.fh.read(n)
        if len(buf) != n:
            self.fail(f"the file ends early (wanted {n} bytes, got {len(buf)})")
        self.pos += n
        return buf

    def int(self) -> int:
        return struct.unpack(">i", self.read(4))[0]

    def length(self) -> int:
        n = self.int()
        if n == -1:  # long vector: two more words
            hi, lo = struct.unpack(">II", self.read(8))
            n = (hi << 32) + lo
        elif n < 0:
            self.fail(f"negative vector length {n}", self.pos - 4)
        return n

    # -- items
    def item(self):
        at = self.pos
        flags = self.int()
        kind = flags & 0xFF
        has_attr, has_tag = bool(flags & (1 << 9)), bool(flags & (1 << 10))
        if kind == _NILVALUE_SXP:
            return None
        if kind == _REFSXP:
            index = flags >> 8
            if index == 0:
                index = self.int()
            if not 1 <= index <= len(self.refs):
                self.fail(f"reference {index} to an unknown object", at)
            return self.refs[index - 1]
        if kind == _SYMSXP:
            name = self.item()
            if not isinstance(name, str):
                self.fail("a symbol without a name", at)
            sym = _Symbol(name)
            self.refs.append(sym)
            return sym
        if kind == _CHARSXP:
            return self.charsxp(flags)
        if kind == _LISTSXP:
            return self.pairlist(has_attr, has_tag)
        if kind == _ALTREP_SXP:
            return self.altrep(at)
        if kind in (_LGLSXP, _INTSXP, _REALSXP):
            value = self.numeric(kind)
        elif kind == _STRSXP:
            value = self.strings()
        elif kind == _VECSXP:
            value = RList([self.item() for _ in range(self.length())])
        else:
            name = _TYPE_NAMES.get(kind, "unknown")
            self.fail(f"unexpected R object of type {name} (code {kind})", at)
        if has_attr:
            value.attrs = self.attributes()
        return value

    def altrep(self, at: int):
        """A compact vector of R >= 3.5 (serialisation version 3): ``1:n`` sequences and
        wrappers around an ordinary vector; any other ALTREP class is an error."""
        info = self.item()
        if not (isinstance(info, list) and info and isinstance(info[0][1], _Symbol)):
            self.fail("an ALTREP object without a class", at)
        cls = str(info[0][1])
        state = self.item()
        attrs = self.item()
        if cls in ("compact_intseq", "compact_realseq") and isinstance(state, Column) \
                and state.n == 3 and not state.na:
            n, start, step = state.dense()
            kind = _INTSXP if cls == "compact_intseq" else _REALSXP
            value = _column(kind, start + step * np.arange(int(n), dtype=np.float64))
        elif cls.startswith("wrap_") and isinstance(state, RList) and state.items \
                and isinstance(state.items[0], (Column, Strings)):
            value = state.items[0]
        else:
            self.fail(f"an ALTREP object of class {cls}, which this reader does not expand "
                      "(it expands compact sequences and wrappers)", at)
        if attrs is not None:
            if not isinstance(attrs, list):
                self.fail("attributes that are not a pairlist", at)
            value.attrs = {str(tag): v for tag, v in attrs}
        return value

    def attributes(self) -> dict:
        at = self.pos
        pairs = self.item()
        if not isinstance(pairs, list):
            self.fail("attributes that are not a pairlist", at)
        return {str(tag): value for tag, value in pairs}

    def pairlist(self, has_attr: bool, has_tag: bool) -> list:
        out = []
        while True:
            if has_attr:
                self.attributes()  # attributes of a pairlist cell carry no data here
            tag = self.item() if has_tag else None
            out.append((tag, self.item()))
            at = self.pos
            flags = self.int()
            kind = flags & 0xFF
            if kind == _NILVALUE_SXP:
                return out
            if kind != _LISTSXP:
                self.fail(f"a pairlist continued by an R object of type "
                          f"{_TYPE_NAMES.get(kind, 'unknown')} (code {kind})", at)
            has_attr, has_tag = bool(flags & (1 << 9)), bool(flags & (1 << 10))

    def charsxp(self, flags: int) -> str | None:
        n = self.int()
        if n == -1:
            return None
        if n < 0:
            self.fail(f"negative string length {n}", self.pos - 4)
        raw = self.read(n)
        levels = flags >> 12
        if levels & _UTF8_MASK:
            try:
                return raw.decode("utf-8")
            except UnicodeDecodeError:
                self.fail("a string marked UTF-8 that is not valid UTF-8", self.pos - n)
        return raw.decode("latin-1")  # latin-1, ASCII, bytes or unmarked (native)

    def numeric(self, kind: int) -> Column:
        n = self.length()
        if kind == _REALSXP:
            return _column(kind, np.frombuffer(self.read(8 * n), dtype=">f8"))
        return _column(kind, np.frombuffer(self.read(4 * n), dtype=">i4"))

    def strings(self) -> Strings:
        n = self.length()
        codes = np.empty(n, dtype=np.int32)
        index: dict = {}
        levels: list = []
        for i in range(n):
            at = self.pos
            flags = self.int()
            if flags & 0xFF != _CHARSXP:
                kind = flags & 0xFF
                self.fail(f"a character vector holding an R object of type "
                          f"{_TYPE_NAMES.get(kind, 'unknown')} (code {kind})", at)
            s = self.charsxp(flags)
            code = index.get(s)
            if code is None:
                code = index[s] = len(levels)
                levels.append(s)
            codes[i] = code
        return Strings(codes, levels)


def read_rds_object(path) -> dict:
    """The objects of an R ``save()`` image: ``{name: value}`` with values made of
    :class:`RList`, :class:`Column`, :class:`Strings`, ``str`` and ``None``.

    Raises :class:`~mlx.errors.DataFormatError` on anything that is not an R data file
    of serialisation format 2 or 3 in XDR form, and on R types outside those listed in the
    module docstring.
    """
    try:
        fh = _open_stream(path)
    except OSError as exc:
        raise DataFormatError(path, None, f"cannot read the file ({exc.strerror or exc})") \
            from None
    with fh:
        dec = _Decoder(path, fh)
        try:
            magic = dec.read(5)
            if magic not in _MAGIC:
                raise DataFormatError(path, None, f"not an R data file: it starts with "
                                                  f"{magic!r}, expected b'RDX2\\n' or "
                                                  "b'RDX3\\n' (a file written by save())")
            if dec.read(2) != b"X\n":
                raise DataFormatError(path, None, "only the XDR (binary) R serialisation is "
                                                  "read; this file uses the ASCII or native "
                                                  "form (save(..., ascii = FALSE) writes XDR)")
            version = dec.int()
            if version != _MAGIC[magic]:
                dec.fail(f"serialisation version {version} in a {magic[:4].decode()} file",
                         dec.pos - 4)
            dec.int(), dec.int()  # R version that wrote it, oldest R that reads it
            if version == 3:
                dec.read(dec.int())  # native encoding name
            at = dec.pos
            top = dec.item()
        except (EOFError, OSError, lzma.LZMAError, zlib.error) as exc:
            raise DataFormatError(path, None, f"corrupt or truncated compressed data "
                                              f"({exc})") from None
        if not isinstance(top, list):
            dec.fail("a top level that is not a pairlist of named objects", at)
        return {str(tag): value for tag, value in top}


# ----------------------------------------------------------------------------- mldr objects
def _element(obj: RList, name: str, path):
    names = obj.names() or []
    if name not in names:
        raise DataFormatError(path, None, f"the mldr object has no '{name}' element (it has "
                                          f"{', '.join(str(n) for n in names) or 'none'})")
    return obj.items[names.index(name)]


def _indices(value, what: str, n_cols: int, path) -> np.ndarray:
    if not isinstance(value, Column) or value.kind not in ("integer", "double") or value.na:
        raise DataFormatError(path, None, f"{what} must be a vector of column numbers "
                                          "without NA")
    idx = value.dense()
    if value.kind == "double":
        if np.any(idx != np.round(idx)):
            raise DataFormatError(path, None, f"{what} holds non-integer column numbers")
    idx = idx.astype(np.int64)
    if idx.size and (idx.min() < 1 or idx.max() > n_cols):
        raise DataFormatError(path, None, f"{what} holds column numbers outside 1..{n_cols}")
    if np.unique(idx).size != idx.size:
        raise DataFormatError(path, None, f"{what} lists a column twice")
    return idx - 1


def _numeric_column(col, name: str, n: int, path) -> tuple[np.ndarray, np.ndarray]:
    """(rows, values) of a feature column: numbers, or strings holding numbers."""
    if isinstance(col, Column):
        if col.na:
            raise DataFormatError(path, None, f"feature column '{name}' has {col.na} missing "
                                              "value(s) (NA); features must be complete")
        return col.rows, col.values.astype(np.float64)
    if isinstance(col, Strings):
        table = np.empty(len(col.levels), dtype=np.float64)
        for i, s in enumerate(col.levels):
            try:
                table[i] = float(s) if s is not None else np.nan
            except ValueError:
                raise DataFormatError(path, None, f"feature column '{name}' holds the string "
                                                  f"{s!r}; character features must hold "
                                                  "numbers such as '0' and '1'") from None
            if s is None or not np.isfinite(table[i]):
                raise DataFormatError(path, None, f"feature column '{name}' holds "
                                                  f"{'NA' if s is None else repr(s)}; "
                                                  "features must be finite numbers")
        values = table[col.codes]
        rows = np.flatnonzero(values)
        return rows, values[rows]
    what = type(col).__name__ if col is not None else "NULL"
    raise DataFormatError(path, None, f"feature column '{name}' is a {what}, not a numeric "
                                      "or character vector")


def _columns_to_csr(cols: list, n: int) -> sp.csr_matrix:
    rows = [r for r, _ in cols]
    counts = np.array([r.size for r in rows], dtype=np.int64)
    indptr = np.concatenate(([0], np.cumsum(counts)))
    indices = np.concatenate(rows).astype(np.int32) if rows else np.empty(0, np.int32)
    data = np.concatenate([v for _, v in cols]) if cols else np.empty(0)
    csc = sp.csc_matrix((data, indices, indptr), shape=(n, len(cols)))
    out = csc.tocsr()
    out.sort_indices()
    return out


_DERIVED = (".labelcount", ".SCUMBLE")


def read_mldr(path, *, name: str = "") -> Dataset:
    """Read the ``mldr`` object of an R data file into a multi-label
    :class:`~mlx.data.dataset.Dataset` (see the module docstring for the rules)."""
    objects = read_rds_object(path)
    if len(objects) != 1:
        raise DataFormatError(path, None, f"holds {len(objects)} R objects "
                                          f"({', '.join(objects)}); an mldr file holds one")
    (obj_name, obj), = objects.items()
    if not isinstance(obj, RList) or "mldr" not in obj.classes():
        classes = ", ".join(getattr(obj, "classes", list)()) or "none"
        raise DataFormatError(path, None, f"the object '{obj_name}' is not of class 'mldr' "
                                          f"(class: {classes})")
    frame = _element(obj, "dataset", path)
    if not isinstance(frame, RList) or "data.frame" not in frame.classes():
        raise DataFormatError(path, None, "the 'dataset' element is not a data frame")
    col_names = frame.names()
    if col_names is None or len(col_names) != len(frame.items):
        raise DataFormatError(path, None, "the 'dataset' data frame has no column names")
    lengths = {getattr(c, "n", None) for c in frame.items}
    if len(lengths) != 1 or None in lengths:
        raise DataFormatError(path, None, "the columns of the 'dataset' data frame differ in "
                                          "length or are not vectors")
    n = lengths.pop()
    n_cols = len(frame.items)

    feat = _indices(_element(obj, "attributesIndexes", path), "attributesIndexes", n_cols, path)
    labels = _element(obj, "labels", path)
    if not isinstance(labels, RList) or "index" not in (labels.names() or []):
        raise DataFormatError(path, None, "the 'labels' element is not a data frame with an "
                                          "'index' column")
    lab = _indices(_element(labels, "index", path), "labels$index", n_cols, path)
    both = np.intersect1d(feat, lab)
    if both.size:
        raise DataFormatError(path, None, f"column '{col_names[both[0]]}' is listed both as a "
                                          "feature (attributesIndexes) and as a label")
    for j in feat:
        if col_names[j] in _DERIVED:
            raise DataFormatError(path, None, f"attributesIndexes lists '{col_names[j]}', "
                                              "which the mldr package derives from the labels; "
                                              "it cannot be a feature")
    row_names = labels.attrs.get("row.names")
    label_names = [col_names[j] for j in lab]
    if isinstance(row_names, Strings) and row_names.tolist() != label_names:
        raise DataFormatError(path, None, "the row names of 'labels' differ from the names of "
                                          "the columns listed in labels$index")

    X = _columns_to_csr([_numeric_column(frame.items[j], col_names[j], n, path) for j in feat], n)
    ycols = []
    for j in lab:
        col = frame.items[j]
        if not isinstance(col, Column) or col.na or np.any(col.values != 1):
            raise DataFormatError(path, None, f"label column '{col_names[j]}' must hold only "
                                              "0 and 1")
        ycols.append((col.rows, np.ones(col.rows.size)))
    Y = _columns_to_csr(ycols, n)
    if ".labelcount" in col_names:
        count = frame.items[col_names.index(".labelcount")]
        per_row = np.diff(Y.indptr)
        if not isinstance(count, Column) or not np.array_equal(count.dense(), per_row):
            raise DataFormatError(path, None, "the '.labelcount' column differs from the "
                                              "number of labels of each row; labels$index does "
                                              "not name the label columns")
    return Dataset(X=X, Y=Y, name=name or obj_name, task="multilabel",
                   label_names=tuple(label_names))


def read_mldr_files(paths, *, name: str = "") -> list[Dataset]:
    """Read several mldr files (e.g. train and test); their widths and labels must agree."""
    out = [read_mldr(p, name=name) for p in paths]
    for p, ds in zip(paths[1:], out[1:]):
        first = out[0]
        if ds.n_features != first.n_features or ds.label_names != first.label_names:
            raise DataFormatError(p, None, f"has {ds.n_features} features and labels "
                                           f"{', '.join(ds.label_names[:3])}... but {paths[0]} "
                                           f"has {first.n_features} and "
                                           f"{', '.join(first.label_names[:3])}...; train and "
                                           "test must agree")
    return out
