"""Delimited-text reader (format ``csv``): one row per line, one number per field, one column
the target and the others the features.

Format
------
* ``sep``: the field separator, one character (default ``,``; the UCI wine-quality files use
  ``;``). ``" "`` splits on any run of blanks (spaces and tabs) and ignores blanks at the
  ends of a line, as in the UCI Statlog files.
* ``header`` (default true): the first non-blank line names the columns. Names may be quoted
  with ``"`` or ``'`` (``"fixed acidity";"volatile acidity";...``). Without a header the
  columns are known by their number, 1-based.
* ``target``: the target column, by header name or by 1-based column number; default the last
  column. Every other column is a feature, in file order.
* Every other field is a number, possibly quoted. Every row has as many fields as the header
  (or, without a header, as the first row).
* Line endings may be LF, CRLF or CR alone (old Mac files such as ``bodyfat.csv``); blank
  lines are skipped; files may be gzip-compressed. A file is read into memory whole.
* Missing values: an empty field, ``?``, ``NA``, ``N/A`` or ``nan`` (any case). With
  ``missing="error"`` (the default) each one is an error naming the file, line and column;
  with ``missing="nan"`` a missing **feature** value is read as NaN, stored explicitly in the
  CSR ``X`` (impute it with the ``impute_mean`` preprocessing step: methods refuse NaN). A
  missing target is always an error.

Tasks
-----
* ``regression``: ``Y`` is the ``(n, 1)`` target column (zeros implicit), ``label_names`` the
  target's name (``"column K"`` without a header).
* ``ordinal``: the same; the targets must be integer levels.
* ``multiclass``: the sorted distinct target values of all files read together (train and
  test) become classes ``0..K-1``; ``Y`` is one-hot and ``label_names`` holds the values.

Files read together must have the same columns. Every malformed line raises
:class:`~mlx.errors.DataFormatError` with the file and line number, what is wrong and what
would be valid.
"""

from __future__ import annotations

import csv
import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from mlx.data.dataset import Dataset, canonical_csr
from mlx.data.lineparse import (
    DENSE_BYTES_PER_BYTE,
    MAGNITUDE_RULE,
    MAX_MAGNITUDE,
    MISSING_HINT,
    build_levels_Y,
    build_multiclass_Ys,
    check_unterminated,
    first_failure,
    log_missing_features,
    reading,
    token_text,
)
from mlx.errors import DataFormatError, suggest

__all__ = ["read_delimited_files", "read_delimited", "MISSING_MARKERS"]

#: Fields read as missing values (compared stripped and lower-cased).
MISSING_MARKERS = (b"", b"?", b"na", b"n/a", b"nan")
_TASKS = ("regression", "ordinal", "multiclass")


def _unquote(text):
    if len(text) >= 2 and text[:1] in ("'", '"', b"'", b'"') and text[-1:] == text[:1]:
        return text[1:-1]
    return text


def _cell(token: bytes) -> float:
    """A field's value: NaN for a missing-value marker; ``ValueError`` if not a number."""
    t = _unquote(token.strip()).strip()
    if t.lower() in MISSING_MARKERS:
        return math.nan
    return float(t)


@dataclass
class _Table:
    path: str
    names: list        # column names for messages: "'quality'" or "column 3"
    header: tuple      # the header's names, () without one
    header_line: int | None
    values: np.ndarray  # (n, m); NaN where a value is missing
    tokens: list       # the n * m fields, for messages
    lines: np.ndarray  # line number of each row


def _describe_sep(sep: str) -> str:
    return "blank-separated" if sep == " " else f"{sep!r}-separated"


def _split_header(text: str, sep: str) -> list[str]:
    if sep == " ":
        fields = text.split()
    else:
        fields = next(csv.reader([text], delimiter=sep))
    return [_unquote(f.strip()).strip() for f in fields]


def _read_table(path, *, sep: str, header: bool) -> _Table:
    with reading(path, bytes_per_byte=DENSE_BYTES_PER_BYTE) as fh:
        content = fh.read()
    lines = [(no, line) for no, line in enumerate(content.splitlines(), 1) if line.strip()]
    if lines and not content.endswith((b"\n", b"\r")):
        check_unterminated(path, lines[-1][0], lines[-1][1])
    path = str(path)
    names: tuple = ()
    header_line = None
    if header:
        if not lines:
            raise DataFormatError(path, None, "empty file (expected a header line naming the "
                                              "columns, then the rows)")
        header_line, raw = lines.pop(0)
        names = tuple(_split_header(raw.decode("utf-8", "replace").lstrip("\ufeff"), sep))
    if not lines:
        raise DataFormatError(path, header_line, "no data rows" + (" after the header"
                                                                   if header else ""))
    m = len(names) if header else None
    sepb = sep.encode()
    tokens, row_lines = [], []
    for line_no, raw in lines:
        fields = raw.split() if sep == " " else raw.split(sepb)
        if m is None:
            m = len(fields)
        elif len(fields) != m:
            first = "the header names" if header else "the first row has"
            raise DataFormatError(path, line_no, f"row has {len(fields)} values but {first} {m} "
                                                 f"columns (one {_describe_sep(sep)} value per "
                                                 "column)")
        tokens += fields
        row_lines.append(line_no)
    shown = [f"column '{x}'" for x in names] if header else [f"column {c + 1}" for c in range(m)]
    if m < 2:
        raise DataFormatError(path, header_line or row_lines[0],
                              f"found 1 column with separator {sep!r}; a csv file needs at "
                              "least one feature column and a target column (is the separator "
                              "right?)")
    try:
        values = np.fromiter(map(float, tokens), dtype=np.float64, count=len(tokens))
    except ValueError:
        try:
            values = np.fromiter(map(_cell, tokens), dtype=np.float64, count=len(tokens))
        except ValueError:
            j = first_failure(tokens, _cell)
            raise DataFormatError(path, row_lines[j // m],
                                  f"malformed value '{token_text(tokens[j].strip())}' in "
                                  f"{shown[j % m]} (expected a number, or an empty field, ?, NA "
                                  "or nan for a missing value)") from None
    return _Table(path, shown, names, header_line, values.reshape(-1, m), tokens,
                  np.asarray(row_lines, dtype=np.int64))


def _target_index(table: _Table, target) -> int:
    m = table.values.shape[1]
    if target is None:
        return m - 1
    if isinstance(target, str):
        if not table.header:
            raise ValueError("a target column name needs a header (header=True)")
        hits = [c for c, x in enumerate(table.header) if x == target]
        if len(hits) == 1:
            return hits[0]
        if hits:
            raise DataFormatError(table.path, table.header_line,
                                  f"the header names {len(hits)} columns {target!r}; the target "
                                  "column must be named once")
        hint = suggest(target, table.header)
        raise DataFormatError(table.path, table.header_line,
                              f"no column named {target!r} in the header"
                              + (f" (did you mean {hint!r}?)" if hint else "")
                              + "; columns: " + ", ".join(repr(x) for x in table.header))
    if not 1 <= target <= m:
        raise DataFormatError(table.path, table.header_line or int(table.lines[0]),
                              f"target column {target} out of range (the file has {m} columns, "
                              "numbered from 1)")
    return target - 1


def _field_error(table: _Table, j: int, what: str, why: str) -> DataFormatError:
    """``<what> '<field j>' in <column> (<why>)`` at the line of field ``j``."""
    m = table.values.shape[1]
    return DataFormatError(table.path, int(table.lines[j // m]),
                           f"{what} '{token_text(table.tokens[j].strip())}' in "
                           f"{table.names[j % m]} ({why})")


def _check_values(table: _Table, t: int, missing: str) -> None:
    """Infinite values, missing targets and (unless ``missing == "nan"``) missing features."""
    values, m = table.values, table.values.shape[1]
    bad = np.flatnonzero(np.isinf(values).ravel())
    if bad.size:
        raise _field_error(table, int(bad[0]), "non-finite value",
                           "values must be finite numbers")
    bad = np.flatnonzero((np.abs(values) > MAX_MAGNITUDE).ravel())
    if bad.size:
        raise _field_error(table, int(bad[0]), "value too large", MAGNITUDE_RULE)
    nan = np.isnan(values)
    bad = np.flatnonzero(nan[:, t])
    if bad.size:
        raise _field_error(table, int(bad[0]) * m + t, "missing target value",
                           "every row needs its target; remove the rows that have none")
    bad = np.flatnonzero(nan.ravel())
    if missing != "nan" and bad.size:
        raise _field_error(table, int(bad[0]), "missing value",
                           f"missing values are not read by default; {MISSING_HINT}")


def read_delimited_files(paths: Sequence, *, task: str = "regression", sep: str = ",",
                         header: bool = True, target=None, missing: str = "error",
                         name: str = "") -> list[Dataset]:
    """Read delimited-text files (e.g. train and test) that have the same columns.

    Parameters
    ----------
    paths : sequence of path-like
    task : {"regression", "ordinal", "multiclass"}
    sep : str
        One separator character; ``" "`` means any run of blanks.
    header : bool
        Whether the first non-blank line names the columns.
    target : str or int, optional
        The target column: a header name, or a 1-based column number. Default: the last column.
    missing : {"error", "nan"}
        Whether a missing feature value is an error or read as NaN.
    name : str

    Returns
    -------
    list of Dataset, one per path: ``X`` (n, d) with the other columns in file order, and
    ``Y`` as described in the module docstring.
    """
    if task not in _TASKS:
        raise ValueError(f"task must be one of {', '.join(_TASKS)}, got {task!r}")
    if missing not in ("error", "nan"):
        raise ValueError(f"missing must be 'error' or 'nan', got {missing!r}")
    tables = [_read_table(p, sep=sep, header=header) for p in paths]
    first = tables[0] if tables else None
    for table in tables[1:]:
        if table.header != first.header:
            raise DataFormatError(table.path, table.header_line,
                                  f"names the columns {', '.join(map(repr, table.header))} but "
                                  f"{first.path} names {', '.join(map(repr, first.header))}; "
                                  "files read together must have the same columns")
        if table.values.shape[1] != first.values.shape[1]:
            raise DataFormatError(table.path, table.header_line or int(table.lines[0]),
                                  f"has {table.values.shape[1]} columns but {first.path} has "
                                  f"{first.values.shape[1]}; files read together must have the "
                                  "same columns")
    ts = [_target_index(table, target) for table in tables]
    for table, t in zip(tables, ts):
        _check_values(table, t, missing)
    Xs = [canonical_csr(np.delete(table.values, t, axis=1)) for table, t in zip(tables, ts)]
    ys = [table.values[:, t].copy() for table, t in zip(tables, ts)]
    for table, X in zip(tables, Xs):
        log_missing_features(X, table.path)
    if task == "multiclass":
        names, Ys = build_multiclass_Ys(ys)
        return [Dataset(X=X, Y=Y, name=name, task=task, label_names=names)
                for X, Y in zip(Xs, Ys)]
    out = []
    for table, t, X, y in zip(tables, ts, Xs, ys):
        target_name = table.header[t] if table.header else f"column {t + 1}"
        if task == "ordinal":
            Y = build_levels_Y(y, table.lines, table.path, f"target {table.names[t]}",
                               "an ordinal task needs integer levels; use task regression")
        else:
            Y = canonical_csr(y[:, None])
        out.append(Dataset(X=X, Y=Y, name=name, task=task, label_names=(target_name,)))
    return out


def read_delimited(path, **options) -> Dataset:
    """Read one delimited-text file; see :func:`read_delimited_files`."""
    return read_delimited_files([path], **options)[0]
