"""ARFF readers: Mulan multi-label files and plain Weka regression files.

Mulan multi-label ARFF
----------------------
A Weka ARFF file whose **last L attributes are the labels** (nominal ``{0,1}``); the other
attributes are the features. L comes from the caller (the dataset registry or the config's
``n_labels``) or from the Mulan XML label list. Label names are taken from the ARFF attribute
names, in ARFF order; the XML, when given, must name exactly the label attributes, as a set
(yeast's XML lists them in a different order).

MEKA files say where their labels are in the relation name, ``@relation 'name: -C 53'``: with
``-C C``, C > 0, the labels are the **first** C attributes; C < 0, the last ``-C``. This option
is read whenever present, and ``n_labels`` (if given) must agree with it.

Without an XML file or ``-C``, a header whose label attributes are recognisable is checked:
Mulan labels are nominal ``{0,1}``, so ``n_labels`` reaching past the trailing ``{0,1}``
attributes (into a numeric feature, say) is an error, and ``n_labels`` stopping short of them
when the features before them are not ``{0,1}`` is logged as a warning. A bag-of-words file
whose features are ``{0,1}`` too cannot be checked this way.

Both row styles are read:

* sparse, ``{index value, index value, ...}`` with 0-based attribute indices, strictly
  increasing within a row (bibtex, delicious, corel5k);
* dense, one comma-separated value per attribute (scene, yeast).

A file must use one style for all its rows. Feature values must be numbers (a nominal feature
whose values are numbers, such as ``{0,1}``, is read as that number). Label values must be 0
or 1.

Weka regression ARFF
--------------------
Dense rows; the **last attribute is the target** and must be numeric (with ``n_targets=T``,
as in Mulan multi-target regression files such as rf1, the last T attributes are the targets
and ``Y`` has T columns). Nominal feature attributes are encoded, by default, as the codes
``1..k`` of their values in declaration order (one column per attribute, so abalone keeps its
8 features: ``{M, F, I}`` -> 1, 2, 3); ``nominal="onehot"`` gives one 0/1 column per value
instead. A single trailing comma at the
end of a row is ignored (the Delve bank files have one).

Common rules
------------
``%`` comments and blank lines are skipped anywhere; ``@relation``, ``@attribute`` and
``@data`` are case-insensitive; attribute names and nominal values may be quoted with ``'`` or
``"`` (backslash escapes). Missing values (``?``) are **not** supported: they raise
:class:`~mlx.errors.DataFormatError` naming the file, line and attribute (remove or impute
those rows first). In a regression file read with ``missing="nan"``, a missing *feature* value
is read as NaN, stored explicitly in the CSR ``X`` (impute it with the ``impute_mean``
preprocessing step: methods refuse NaN); a missing target is always an error. Files may be
gzip-compressed. ``string``, ``date`` and ``relational`` attributes are rejected.
"""

from __future__ import annotations

import logging
import math
import xml.etree.ElementTree as ET
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import scipy.sparse as sp

from mlx.data.dataset import Dataset, canonical_csr
from mlx.data.lineparse import (
    DENSE_BYTES_PER_BYTE,
    MAGNITUDE_RULE,
    MAX_MAGNITUDE,
    MISSING_HINT,
    check_unterminated,
    first_failure,
    int64,
    log_missing_features,
    log_rows_without_labels,
    reading,
    token_text,
)
from mlx.errors import DataFormatError

__all__ = [
    "Attribute",
    "ArffHeader",
    "read_arff_header",
    "meka_labels",
    "find_mulan_xml",
    "read_mulan_arff",
    "read_mulan_files",
    "read_mulan_xml",
    "read_arff_regression",
    "read_regression_files",
]

log = logging.getLogger(__name__)

_NUMERIC = ("numeric", "real", "integer")
# Every byte except b" " and b","; deleting them from a sparse row leaves its separators.
_NOT_SEP = bytes(i for i in range(256) if i not in b" ,")


@dataclass(frozen=True)
class Attribute:
    """One ``@attribute`` declaration: ``kind`` is numeric, nominal, string, date or
    relational; ``values`` lists a nominal attribute's values."""

    name: str
    kind: str
    values: tuple = ()

    def describe(self) -> str:
        if self.kind == "nominal":
            return f"'{self.name}' {{{', '.join(self.values)}}}"
        return f"'{self.name}' {self.kind}"


@dataclass(frozen=True)
class ArffHeader:
    relation: str
    attributes: tuple
    data_line: int  # line number of the @data line
    relation_line: int | None = None  # line number of the @relation line


# ----------------------------------------------------------------------------- header
def _scan_quoted(text: str, path, line_no) -> tuple[str, str]:
    """``'a b' rest`` -> ``("a b", " rest")``; backslash escapes the next character."""
    quote, buf, i = text[0], [], 1
    while i < len(text):
        c = text[i]
        if c == "\\" and i + 1 < len(text):
            buf.append(text[i + 1])
            i += 2
            continue
        if c == quote:
            return "".join(buf), text[i + 1:]
        buf.append(c)
        i += 1
    raise DataFormatError(path, line_no, f"unterminated {quote} quote in {text.strip()} "
                                         "(a quoted name or value must end with the same "
                                         "quote)")


def _split_name(text: str, path, line_no) -> tuple[str, str]:
    text = text.strip()
    if text[:1] in ("'", '"'):
        return _scan_quoted(text, path, line_no)
    parts = text.split(None, 1)
    return parts[0], (parts[1] if len(parts) > 1 else "")


def _split_values(text: str, path, line_no) -> list[str]:
    """Split a comma-separated list whose items may be quoted; items are unquoted."""
    out, rest = [], text.strip()
    while True:
        rest = rest.lstrip()
        if rest[:1] in ("'", '"'):
            item, rest = _scan_quoted(rest, path, line_no)
            rest = rest.lstrip()
        else:
            item, comma, after = rest.partition(",")
            item = item.strip()
            rest = comma + after
        out.append(item)
        if not rest:
            return out
        if rest[0] != ",":
            raise DataFormatError(path, line_no, f"malformed value list '{text.strip()}' "
                                                 "(expected comma-separated values)")
        rest = rest[1:]


def _parse_attribute(text: str, path, line_no) -> Attribute:
    body = text.strip()[len("@attribute"):]
    if not body.strip():
        raise DataFormatError(path, line_no, "attribute declaration without a name "
                                             "(expected '@attribute <name> <type>')")
    name, rest = _split_name(body, path, line_no)
    type_ = rest.strip()
    low = type_.lower()
    if low in _NUMERIC:
        return Attribute(name, "numeric")
    if type_.startswith("{"):
        if not type_.endswith("}"):
            raise DataFormatError(path, line_no, f"malformed nominal type '{type_}' of "
                                                 f"attribute '{name}' (expected {{v1,v2,...}})")
        return Attribute(name, "nominal", tuple(_split_values(type_[1:-1], path, line_no)))
    for kind in ("string", "date", "relational"):
        if low.startswith(kind):
            return Attribute(name, kind)
    raise DataFormatError(path, line_no, f"unknown type '{type_}' of attribute '{name}' "
                                         "(expected numeric, real, integer, string, date or "
                                         "{v1,v2,...})")


def _read_header(lines: Iterator, path) -> ArffHeader:
    relation, relation_line, attributes = "", None, []
    for line_no, raw in lines:
        s = raw.strip()
        if not s or s[:1] == b"%":
            continue
        text = s.decode("utf-8", "replace")
        keyword = text.split(None, 1)[0].lower()
        if keyword == "@relation":
            relation_line = line_no
            rest = text[len("@relation"):].strip()
            # Unquoted, the whole rest of the line (a MEKA name 'x: -C 3' left unquoted).
            relation = _split_name(rest, path, line_no)[0] if rest[:1] in ("'", '"') else rest
        elif keyword == "@attribute":
            attributes.append(_parse_attribute(text, path, line_no))
        elif keyword == "@data":
            if not attributes:
                raise DataFormatError(path, line_no, "@data before any @attribute (an ARFF "
                                                     "file declares its attributes first)")
            return ArffHeader(relation, tuple(attributes), line_no, relation_line)
        else:
            raise DataFormatError(path, line_no, f"unexpected line '{text[:60]}' in the header "
                                                 "(expected @relation, @attribute, @data or a "
                                                 "% comment)")
    raise DataFormatError(path, None, "no @data line (an ARFF file needs @attribute "
                                      "declarations followed by @data and the rows)")


def read_arff_header(path) -> ArffHeader:
    """The relation name and attribute declarations of an ARFF file."""
    with reading(path, bytes_per_byte=DENSE_BYTES_PER_BYTE) as fh:
        return _read_header(enumerate(fh, 1), path)


# ----------------------------------------------------------------------------- rows
@dataclass
class _Rows:
    sparse: bool
    tokens: list  # sparse: alternating index/value tokens; dense: n * m value tokens
    counts: list  # sparse: entries per row
    lines: list   # line number of each row


def _split_dense(s: bytes, m: int, path, line_no) -> list:
    if b"'" in s or b'"' in s:
        toks = [v.encode() for v in _split_values(s.decode("utf-8", "replace"), path, line_no)]
    else:
        toks = s.split(b",")
    if len(toks) == m + 1 and not toks[-1].strip():
        toks.pop()  # one trailing comma
    if len(toks) != m:
        raise DataFormatError(path, line_no, f"row has {len(toks)} values but the header "
                                             f"declares {m} attributes (one comma-separated "
                                             "value per attribute)")
    return toks


def _split_sparse(s: bytes, path, line_no) -> list:
    if not s.endswith(b"}"):
        raise DataFormatError(path, line_no, "malformed sparse row (expected "
                                             "'{<index> <value>, ...}' ending with '}')")
    body = s[1:-1].strip()
    if not body:
        return []
    sep = body.translate(None, _NOT_SEP)
    k = (len(sep) + 1) // 2
    if sep == b" ," * (k - 1) + b" ":
        parts = body.replace(b",", b" ").split()
        if len(parts) == 2 * k:
            return parts
    parts = []
    for piece in body.split(b","):
        pair = piece.split()
        if len(pair) != 2:
            raise DataFormatError(path, line_no, f"malformed sparse entry "
                                                 f"'{token_text(piece.strip())}' (expected "
                                                 "'<index> <value>' with a 0-based attribute "
                                                 "index)")
        parts += pair
    return parts


def _read_rows(lines: Iterator, m: int, path) -> _Rows:
    tokens, counts, row_lines = [], [], []
    style = None
    line_no, raw = 0, b"\n"
    for line_no, raw in lines:
        s = raw.strip()
        if not s or s[:1] == b"%":
            continue
        sparse = s[:1] == b"{"
        if style is None:
            style = sparse
        elif sparse != style:
            kinds = ("sparse", "dense") if sparse else ("dense", "sparse")
            raise DataFormatError(path, line_no, f"{kinds[0]} row after {kinds[1]} rows "
                                                 "(every row of a file must use the same style)")
        if sparse:
            parts = _split_sparse(s, path, line_no)
            counts.append(len(parts) >> 1)
        else:
            parts = _split_dense(s, m, path, line_no)
        tokens += parts
        row_lines.append(line_no)
    if raw.strip() and not raw.endswith(b"\n"):
        check_unterminated(path, line_no, raw)
    return _Rows(bool(style), tokens, counts, row_lines)


_NO_MISSING = "missing values are not supported; remove or impute the rows that have them"


def _value_error(path, line_no, attr: Attribute, tok: bytes,
                 missing_hint: str = _NO_MISSING) -> DataFormatError:
    text = token_text(tok.strip())
    if text == "?":
        return DataFormatError(path, line_no, f"missing value '?' for attribute '{attr.name}' "
                                              f"({missing_hint})")
    return DataFormatError(path, line_no, f"malformed value '{text}' for attribute "
                                          f"'{attr.name}' (expected a number)")


def _check_finite(values, path, lines, attrs, cols, toks, row_of) -> None:
    bad = np.flatnonzero(~np.isfinite(values))
    if bad.size:
        j = int(bad[0])
        raise DataFormatError(path, lines[row_of(j)], f"non-finite value "
                                                      f"'{token_text(toks[j].strip())}' "
                                                      f"for attribute '{attrs[cols[j]].name}' "
                                                      "(values must be finite numbers)")
    bad = np.flatnonzero(np.abs(values) > MAX_MAGNITUDE)
    if bad.size:
        j = int(bad[0])
        raise DataFormatError(path, lines[row_of(j)], f"value too large "
                                                      f"'{token_text(toks[j].strip())}' "
                                                      f"for attribute '{attrs[cols[j]].name}' "
                                                      f"({MAGNITUDE_RULE})")


def _numeric_matrix(rows: _Rows, header: ArffHeader, path):
    """All values as floats: (indptr, cols, values) in CSR layout, rows in file order."""
    attrs, m = header.attributes, len(header.attributes)
    if rows.sparse:
        idx_tok, val_tok = rows.tokens[0::2], rows.tokens[1::2]
        indptr = np.zeros(len(rows.counts) + 1, dtype=np.int64)
        np.cumsum(rows.counts, out=indptr[1:])

        def row_of(j):
            return int(np.searchsorted(indptr, j, side="right") - 1)

        try:
            cols = np.fromiter(map(int, idx_tok), dtype=np.int64, count=len(idx_tok))
        except (ValueError, OverflowError):     # overflow: an index beyond int64
            j = first_failure(idx_tok, int64)
            raise DataFormatError(path, rows.lines[row_of(j)],
                                  f"malformed sparse entry '{token_text(idx_tok[j])} "
                                  f"{token_text(val_tok[j])}' (expected '<index> <value>' with "
                                  "a 0-based attribute index)") from None
        bad = np.flatnonzero((cols < 0) | (cols >= m))
        if bad.size:
            j = int(bad[0])
            raise DataFormatError(path, rows.lines[row_of(j)],
                                  f"attribute index {cols[j]} out of range (the header declares "
                                  f"{m} attributes, indexed from 0)")
        nnz = cols.size
        if nnz > 1:
            same_row = np.ones(nnz - 1, dtype=bool)
            starts = indptr[1:-1]
            starts = starts[(starts > 0) & (starts < nnz)]
            same_row[starts - 1] = False
            bad = np.flatnonzero(same_row & (cols[1:] <= cols[:-1]))
            if bad.size:
                j = int(bad[0])
                raise DataFormatError(path, rows.lines[row_of(j + 1)],
                                      f"attribute index {cols[j + 1]} follows {cols[j]}; indices "
                                      "must be strictly increasing within a sparse row")
        try:
            values = np.fromiter(map(float, val_tok), dtype=np.float64, count=nnz)
        except ValueError:
            j = first_failure(val_tok, float)
            raise _value_error(path, rows.lines[row_of(j)], attrs[cols[j]], val_tok[j]) from None
        _check_finite(values, path, rows.lines, attrs, cols, val_tok, row_of)
        return indptr, cols, values

    n = len(rows.lines)
    toks = rows.tokens
    try:
        values = np.fromiter(map(float, toks), dtype=np.float64, count=len(toks))
    except ValueError:
        j = first_failure(toks, float)
        raise _value_error(path, rows.lines[j // m], attrs[j % m], toks[j]) from None
    cols = np.tile(np.arange(m, dtype=np.int64), n)
    _check_finite(values, path, rows.lines, attrs, cols, toks, lambda j: j // m)
    indptr = np.arange(0, n * m + 1, m, dtype=np.int64)
    return indptr, cols, values


# ----------------------------------------------------------------------------- Mulan
def read_mulan_xml(path) -> list[str]:
    """Label names listed in a Mulan XML file (``<label name="...">``, any nesting)."""
    try:
        with reading(path, bytes_per_byte=DENSE_BYTES_PER_BYTE) as fh:
            root = ET.parse(fh).getroot()
    except ET.ParseError as exc:
        line = exc.position[0] if getattr(exc, "position", None) else None
        raise DataFormatError(path, line, f"invalid XML ({exc}); expected a Mulan label list "
                                          "<labels><label name=\"...\"/>...</labels>") from None
    names = []
    for el in root.iter():
        if el.tag.rsplit("}", 1)[-1] == "label":
            name = el.get("name")
            if name is None:
                raise DataFormatError(path, None, "a <label> element has no 'name' attribute "
                                                  "(expected <label name=\"...\">)")
            names.append(name)
    if not names:
        raise DataFormatError(path, None, "no <label name=\"...\"> elements (expected a Mulan "
                                          "label list)")
    return names


def meka_labels(header: ArffHeader, path) -> int | None:
    """MEKA's ``-C`` option in the relation name (``'name: -C 53'``), or None without one.

    ``C > 0``: the labels are the first C attributes; ``C < 0``: the last ``-C``. As in MEKA,
    the options are the words after the first ``:`` of the relation name.
    """
    _, colon, options = header.relation.partition(":")
    if not colon:
        return None
    words = options.split()
    if "-C" not in words:
        return None
    i = words.index("-C")
    value = words[i + 1] if i + 1 < len(words) else ""
    try:
        C = int(value)
    except ValueError:
        C = 0
    m = len(header.attributes)
    where = f"the relation name '{header.relation}' has MEKA option"
    if C == 0:
        got = f"'-C {value}'" if value else "'-C' without a number"
        raise DataFormatError(path, header.relation_line,
                              f"{where} {got}; expected -C and a non-zero integer C (C > 0: "
                              "the first C attributes are the labels; C < 0: the last -C)")
    if abs(C) >= m:
        raise DataFormatError(path, header.relation_line,
                              f"{where} -C {C}, which does not fit the {m} declared attributes "
                              f"(need 1 <= |C| < {m}: features and labels are attributes)")
    return C


def find_mulan_xml(path) -> Path | None:
    """The Mulan label list beside a data file: ``<name>.xml`` in the same directory.

    ``<name>`` is the file name without ``.gz`` and ``.arff``, then with trailing ``-part``,
    ``_part`` or ``.part`` pieces cut one at a time (``Corel5k-train-sparse.arff.gz`` tries
    ``Corel5k-train-sparse.xml``, ``Corel5k-train.xml``, ``Corel5k.xml``); the longest name
    that exists wins.
    """
    path = Path(path)
    stem = path.name
    for suffix in (".gz", ".arff"):
        if stem.lower().endswith(suffix):
            stem = stem[: -len(suffix)]
    while stem:
        candidate = path.parent / f"{stem}.xml"
        if candidate.is_file():
            return candidate
        cut = max(stem.rfind(sep) for sep in "-_.")
        if cut <= 0:
            return None
        stem = stem[:cut]
    return None


def _is_binary(a: Attribute) -> bool:
    return a.kind == "nominal" and len(a.values) == 2 and set(a.values) == {"0", "1"}


def _check_label_types(header: ArffHeader, path, L: int) -> None:
    """Mulan labels are nominal ``{0,1}``: compare ``L`` with the trailing ``{0,1}`` run."""
    attrs = header.attributes
    m = len(attrs)
    run = 0
    while run < m and _is_binary(attrs[m - 1 - run]):
        run += 1
    if run == 0:
        return  # no {0,1} attribute at the end: the labels are not recognisable
    if L > run:
        k = m - run  # 1-based number of the last attribute that is not {0,1}
        raise DataFormatError(path, None, f"n_labels={L} makes attribute "
                                          f"{attrs[k - 1].describe()} ({k} of {m}) a label, but "
                                          "Mulan labels are nominal {0,1} and only the last "
                                          f"{run} attributes are; check n_labels, or give the "
                                          "Mulan XML label list (xml)")
    if L < run < m:
        k = m - L
        log.warning("%s: n_labels=%d, but the last %d attributes are nominal {0,1} and the one "
                    "before them is not; attribute %s (%d of %d) will be read as a feature: "
                    "check n_labels, or give the Mulan XML label list (xml)", path, L, run,
                    attrs[k - 1].describe(), k, m)


def _check_xml(header: ArffHeader, path, xml, names: list, start: int, L: int, given: str,
               beside: bool) -> None:
    """The XML's labels must be exactly attributes ``start .. start+L-1`` of ``header``."""
    attrs = header.attributes
    declared = {a.name for a in attrs}
    listed = set()
    for name in names:
        if name in listed:
            raise DataFormatError(xml, None, f"label '{name}' is listed twice (a Mulan label "
                                             "list names each label once)")
        if name not in declared:
            raise DataFormatError(xml, None, f"label '{name}' is not an attribute of {path} "
                                             "(a Mulan label list names label attributes of "
                                             "the ARFF file)")
        listed.add(name)
    which = "first" if start == 0 else "last"
    for k, a in enumerate(attrs):
        as_label = start <= k < start + L
        if as_label == (a.name in listed):
            continue
        where = f"{xml} (found beside the data file)" if beside else str(xml)
        what = (f"is among the {which} {L} attributes but not in that list" if as_label
                else f"is in that list but not among the {which} {L} attributes")
        if given:
            head = (f"{given} does not match the label list {where}, which names "
                    f"{len(names)} labels")
        else:
            head = (f"the label list {where} names {len(names)} labels but not the {which} "
                    f"{L} attributes (Mulan labels are the last attributes)")
        raise DataFormatError(path, None, f"{head}: attribute '{a.name}' ({k + 1} of "
                                          f"{len(attrs)}) {what}")


def _label_layout(paths: Sequence, headers: Sequence[ArffHeader], n_labels, xml,
                  beside: bool) -> tuple[int, int]:
    """``(start, L)``: the labels are attributes ``start .. start+L-1`` (0-based)."""
    path, header = paths[0], headers[0]
    m = len(header.attributes)
    C, C_path, C_line = None, None, None
    for p, h in zip(paths, headers):
        c = meka_labels(h, p)
        if c is None:
            continue
        if C is None:
            C, C_path, C_line = c, p, h.relation_line
        elif c != C:
            raise DataFormatError(p, h.relation_line, f"the relation name has MEKA option "
                                                      f"-C {c} but {C_path} has -C {C}; train "
                                                      "and test files must have the same labels")
    names = read_mulan_xml(xml) if xml is not None else None
    if C is not None:
        L = abs(C)
        start = 0 if C > 0 else m - L
        meka = f"MEKA option -C {C} in the relation name"
        if n_labels is not None and n_labels != L:
            which = "first" if C > 0 else "last"
            raise DataFormatError(C_path, C_line, f"n_labels={n_labels} disagrees with the "
                                                  f"{meka} (the {which} {L} attributes are the "
                                                  f"labels); set n_labels to {L} or leave it out")
        given = meka
    else:
        if n_labels is None and names is None:
            raise DataFormatError(path, None, "the labels are not known: give n_labels (the "
                                              "last n_labels attributes are the labels) or a "
                                              "Mulan XML label list, or name them in the "
                                              "relation with MEKA's -C option")
        L = n_labels if n_labels is not None else len(names)
        if not 1 <= L < m:
            raise DataFormatError(path, None, f"n_labels={L} does not fit the {m} declared "
                                              "attributes (labels are the last L attributes; "
                                              f"need 1 <= L < {m})")
        start = m - L
        given = f"n_labels={L}" if n_labels is not None else ""
    if names is not None:
        _check_xml(header, path, xml, names, start, L, given, beside)
    elif C is None:
        _check_label_types(header, path, L)
    return start, L


def _mulan_dataset(path, header: ArffHeader, rows: _Rows, start: int, L: int,
                   name: str) -> Dataset:
    attrs = header.attributes
    for a in attrs:
        if a.kind not in ("numeric", "nominal"):
            raise DataFormatError(path, None, f"attribute {a.describe()} is not supported "
                                              "(multi-label ARFF attributes must be numeric or "
                                              "nominal with numeric values)")
    m = len(attrs)
    d = m - L
    label_col = np.zeros(m, dtype=bool)
    label_col[start:start + L] = True
    new_col = np.empty(m, dtype=np.int64)    # column in X for features, in Y for labels
    new_col[~label_col] = np.arange(d)
    new_col[label_col] = np.arange(L)
    indptr, cols, values = _numeric_matrix(rows, header, path)
    n = len(rows.lines)
    is_label = label_col[cols]
    bad = np.flatnonzero(is_label & (values != 0.0) & (values != 1.0))
    if bad.size:
        j = int(bad[0])
        row = int(np.searchsorted(indptr, j, side="right") - 1)
        raise DataFormatError(path, rows.lines[row], f"label attribute '{attrs[cols[j]].name}' has "
                                                     f"value {values[j]:g} (expected 0 or 1)")
    row_ids = np.repeat(np.arange(n), np.diff(indptr))
    counts_x = np.bincount(row_ids[~is_label], minlength=n)
    counts_y = np.bincount(row_ids[is_label], minlength=n)
    X_indptr = np.concatenate([[0], np.cumsum(counts_x)])
    Y_indptr = np.concatenate([[0], np.cumsum(counts_y)])
    X = sp.csr_matrix((values[~is_label], new_col[cols[~is_label]], X_indptr), shape=(n, d))
    Y = sp.csr_matrix((values[is_label], new_col[cols[is_label]], Y_indptr), shape=(n, L))
    Y = canonical_csr(Y)
    log_rows_without_labels(Y, path)
    return Dataset(X=canonical_csr(X), Y=Y, name=name, task="multilabel",
                   label_names=tuple(a.name for a in attrs[start:start + L]))


def _read(path):
    with reading(path, bytes_per_byte=DENSE_BYTES_PER_BYTE) as fh:
        lines = enumerate(fh, 1)
        header = _read_header(lines, path)
        rows = _read_rows(lines, len(header.attributes), path)
    return header, rows


def _check_same_header(paths: Sequence, headers: Sequence[ArffHeader]) -> None:
    first = headers[0].attributes
    for p, h in zip(paths[1:], headers[1:]):
        attrs = h.attributes
        if len(attrs) != len(first):
            raise DataFormatError(p, None, f"declares {len(attrs)} attributes but {paths[0]} "
                                           f"declares {len(first)}; train and test files must "
                                           "declare the same attributes")
        for i, (a, b) in enumerate(zip(attrs, first)):
            if a != b:
                raise DataFormatError(p, None, f"attribute {i} is {a.describe()} but in "
                                               f"{paths[0]} it is {b.describe()}; train and test "
                                               "files must declare the same attributes")


def read_mulan_files(paths: Sequence, *, n_labels: int | None = None, xml=None,
                     xml_beside=None, name: str = "") -> list[Dataset]:
    """Read Mulan (or MEKA) ARFF files, e.g. train and test, that declare the same attributes.

    Parameters
    ----------
    paths : sequence of path-like
    n_labels : int, optional
        L: the last L attributes are the labels. Needed unless ``xml`` (or ``xml_beside``) is
        given or the relation name has MEKA's ``-C`` option, which it must then agree with.
    xml : path-like, optional
        Mulan XML label list; gives L when ``n_labels`` is None and must name exactly the label
        attributes (in any order).
    xml_beside : path-like, optional
        Used like ``xml`` when ``xml`` is None: a label list found beside the data
        (:func:`find_mulan_xml`); messages say so.
    name : str

    Returns
    -------
    list of Dataset, one per path: ``X`` (n, d) and ``Y`` (n, L), canonical float64 CSR,
    ``label_names`` from the ARFF attribute names, features and labels each in file order.
    """
    parsed = [_read(p) for p in paths]
    headers = [h for h, _ in parsed]
    _check_same_header(paths, headers)
    beside = xml is None and xml_beside is not None
    start, L = _label_layout(paths, headers, n_labels, xml if xml is not None else xml_beside,
                             beside)
    return [_mulan_dataset(p, h, r, start, L, name) for p, (h, r) in zip(paths, parsed)]


def read_mulan_arff(path, *, n_labels: int | None = None, xml=None, name: str = "") -> Dataset:
    """Read one Mulan (or MEKA) multi-label ARFF file; see :func:`read_mulan_files`."""
    return read_mulan_files([path], n_labels=n_labels, xml=xml, name=name)[0]


# ----------------------------------------------------------------------------- regression
def _missing_cell(token: bytes) -> float:
    """A numeric ARFF value, NaN for ``?``; ``ValueError`` if not a number."""
    return math.nan if token.strip() == b"?" else float(token)


def _numeric_column(path, rows: _Rows, a: Attribute, col: list, nan_ok: bool,
                    hint: str) -> np.ndarray:
    """One numeric attribute's values; ``?`` is NaN when ``nan_ok``, else an error."""
    n = len(col)
    missing = np.zeros(n, dtype=bool)
    try:
        v = np.fromiter(map(float, col), dtype=np.float64, count=n)
    except ValueError:
        convert = _missing_cell if nan_ok else float
        try:
            v = np.fromiter(map(convert, col), dtype=np.float64, count=n)
        except ValueError:
            i = first_failure(col, convert)
            raise _value_error(path, rows.lines[i], a, col[i], hint) from None
        missing = np.fromiter((t.strip() == b"?" for t in col), dtype=bool, count=n)
    bad = np.flatnonzero(~np.isfinite(v) & ~missing)
    if bad.size:
        i = int(bad[0])
        raise DataFormatError(path, rows.lines[i],
                              f"non-finite value '{token_text(col[i].strip())}' for "
                              f"attribute '{a.name}' (values must be finite)")
    bad = np.flatnonzero(np.abs(np.where(missing, 0.0, v)) > MAX_MAGNITUDE)
    if bad.size:
        i = int(bad[0])
        raise DataFormatError(path, rows.lines[i],
                              f"value too large '{token_text(col[i].strip())}' for "
                              f"attribute '{a.name}' ({MAGNITUDE_RULE})")
    return v


def _nominal_codes(path, rows: _Rows, a: Attribute, col: list, nan_ok: bool,
                   hint: str) -> np.ndarray:
    """A nominal attribute's value positions ``0..k-1`` (float; NaN for ``?`` when
    ``nan_ok``)."""
    code = {v: k for k, v in enumerate(a.values)}
    codes = np.empty(len(col), dtype=np.float64)
    for i, tok in enumerate(col):
        key = token_text(tok.strip())
        if key[:1] in ("'", '"') and len(key) > 1 and key[-1] == key[0]:
            key = key[1:-1]
        k = code.get(key)
        if k is None:
            if key == "?":
                if nan_ok:
                    codes[i] = math.nan
                    continue
                raise _value_error(path, rows.lines[i], a, tok, hint)
            raise DataFormatError(path, rows.lines[i], f"value '{key}' of attribute "
                                                       f"'{a.name}' is not one of its "
                                                       f"declared values "
                                                       f"{{{', '.join(a.values)}}}")
        codes[i] = k
    return codes


def _regression_dataset(path, header: ArffHeader, rows: _Rows, nominal: str, name: str,
                        n_targets: int, missing: str) -> Dataset:
    attrs = header.attributes
    m, T = len(attrs), n_targets
    if m < 2:
        raise DataFormatError(path, None, "a regression ARFF file needs at least one feature "
                                          "and a target (the last attribute)")
    if not 1 <= T < m:
        raise DataFormatError(path, None, f"n_targets={T} does not fit the {m} declared "
                                          "attributes (the targets are the last n_targets "
                                          f"attributes; need 1 <= n_targets < {m})")
    for a in attrs:
        if a.kind not in ("numeric", "nominal"):
            raise DataFormatError(path, None, f"attribute {a.describe()} is not supported "
                                              "(regression ARFF attributes must be numeric or "
                                              "nominal)")
    for a in attrs[m - T:]:
        if a.kind != "numeric":
            which = "(last attribute)" if T == 1 else f"(one of the last {T} attributes)"
            raise DataFormatError(path, None, f"the target {which} {a.describe()} is not "
                                              "numeric; a regression target must be numeric")
    if rows.sparse:
        raise DataFormatError(path, rows.lines[0] if rows.lines else None,
                              "sparse rows are not supported in regression ARFF files "
                              "(expected dense comma-separated rows)")
    n = len(rows.lines)
    toks = rows.tokens
    feature_hint = f"missing values are not read by default; {MISSING_HINT}"
    target_hint = "every row needs its targets; remove the rows that have none"
    columns = []
    for c, a in enumerate(attrs):
        is_target = c >= m - T
        nan_ok = missing == "nan" and not is_target
        hint = target_hint if is_target else feature_hint
        col = toks[c::m]
        if a.kind == "numeric":
            columns.append(_numeric_column(path, rows, a, col, nan_ok, hint)[:, None])
            continue
        codes = _nominal_codes(path, rows, a, col, nan_ok, hint)
        if nominal == "onehot":
            onehot = np.zeros((n, len(a.values)))
            known = ~np.isnan(codes)
            onehot[np.flatnonzero(known), codes[known].astype(np.int64)] = 1.0
            onehot[~known] = math.nan
            columns.append(onehot)
        else:
            columns.append((codes + 1.0)[:, None])
    features, targets = columns[:m - T], columns[m - T:]
    X = np.hstack(features) if n else np.zeros((0, sum(c.shape[1] for c in features)))
    X = canonical_csr(X)
    log_missing_features(X, path)
    return Dataset(X=X, Y=canonical_csr(np.hstack(targets)), name=name, task="regression",
                   label_names=tuple(a.name for a in attrs[m - T:]))


def read_regression_files(paths: Sequence, *, nominal: str = "codes", n_targets: int = 1,
                          missing: str = "error", name: str = "") -> list[Dataset]:
    """Read Weka regression ARFF files that declare the same attributes.

    Parameters
    ----------
    paths : sequence of path-like
    nominal : {"codes", "onehot"}
        Encoding of nominal features: their value's position ``1..k`` in the declaration, or
        one 0/1 column per value.
    n_targets : int
        The last ``n_targets`` attributes are the targets (Mulan multi-target files).
    missing : {"error", "nan"}
        Whether a missing feature value ``?`` is an error or read as NaN (a missing target is
        always an error).
    name : str

    Returns
    -------
    list of Dataset with ``task="regression"``: ``X`` (n, d) and ``Y`` the (n, n_targets)
    targets stored as CSR (``Y.toarray()[:, 0]`` is the first target; zeros are implicit).
    """
    if nominal not in ("codes", "onehot"):
        raise ValueError(f"nominal must be 'codes' or 'onehot', got {nominal!r}")
    if missing not in ("error", "nan"):
        raise ValueError(f"missing must be 'error' or 'nan', got {missing!r}")
    parsed = [_read(p) for p in paths]
    _check_same_header(paths, [h for h, _ in parsed])
    return [_regression_dataset(p, h, r, nominal, name, n_targets, missing)
            for p, (h, r) in zip(paths, parsed)]


def read_arff_regression(path, **options) -> Dataset:
    """Read one Weka regression ARFF file; see :func:`read_regression_files`."""
    return read_regression_files([path], **options)[0]
