"""Reader for the Extreme Classification Repository format.

Format::

    n_samples n_features n_labels          <- header, line 1
    l1,l2,... f:v f:v ...                  <- one line per instance

Features **and** labels are 0-based. Every line after the header is an instance; an empty
label field (the line starts with a feature, or with whitespace) means no labels, and a blank
line is an instance with neither labels nor features. The number of instances must equal the
header's ``n_samples``, and every index must lie inside the header's widths. The file may be
gzip-compressed.
"""

from __future__ import annotations

from collections.abc import Sequence

from mlx.data.dataset import Dataset
from mlx.data.lineparse import (
    SparseLineParser,
    build_multilabel_Y,
    build_X,
    log_rows_without_labels,
    max_read_memory,
    reading,
    size_text,
    token_text,
)
from mlx.errors import DataFormatError

__all__ = ["read_xc", "read_xc_files", "read_xc_header"]

_HEADER_RULE = ("expected '<n_samples> <n_features> <n_labels>' as three non-negative "
                "integers")


def _parse_header(line: bytes, path) -> tuple[int, int, int]:
    try:
        n, d, L = (int(p) for p in line.split())
    except ValueError:  # not three integers
        n = d = L = -1
    if min(n, d, L) < 0:
        raise DataFormatError(path, 1, f"malformed header '{token_text(line.strip())}' "
                                       f"({_HEADER_RULE})")
    _check_declared(n, d, L, path)
    return n, d, L


def _check_declared(n: int, d: int, L: int, path) -> None:
    """Refuse a header whose shape could not be held: even one 8-byte number per row (X's
    and Y's row pointers), feature and label must fit in what a read may take."""
    limit, source = max_read_memory()
    need = 16 * n + 8 * (d + L)
    if need > limit:
        raise DataFormatError(path, 1, f"the header declares n_samples={n}, n_features={d}, "
                                       f"n_labels={L}: even one number per row, feature and "
                                       f"label would take {size_text(need)}, more than the "
                                       f"{size_text(limit)} a read may take ({source}); check "
                                       f"the header")


def read_xc_header(path) -> tuple[int, int, int]:
    """``(n_samples, n_features, n_labels)`` from the first line of ``path``."""
    with reading(path) as fh:
        return _parse_header(fh.readline(), path)


def read_xc(path, *, name: str = "") -> Dataset:
    """Read one file in the Extreme Classification Repository format.

    Returns
    -------
    Dataset
        ``X`` of shape (n_samples, n_features) and ``Y`` of shape (n_samples, n_labels), as
        declared by the header.
    """
    with reading(path) as fh:
        n, d, L = _parse_header(fh.readline(), path)
        parser = SparseLineParser(path, index_base=0, label_mode="multilabel", keep_blank=True)
        parser.feed(fh, first_line_no=2)
    raw = parser.finish(n_features=d, n_labels=L, header_names=True)
    if raw.n_rows != n:
        raise DataFormatError(path, None, f"the header declares n_samples={n} but the file has "
                                          f"{raw.n_rows} instance lines; the header must match "
                                          "the number of lines after it")
    Y = build_multilabel_Y(raw, L)
    log_rows_without_labels(Y, path)
    return Dataset(X=build_X(raw, d), Y=Y, name=name, task="multilabel")


def read_xc_files(paths: Sequence, *, name: str = "") -> list[Dataset]:
    """Read several repository-format files (e.g. train and test); their headers must agree
    on ``n_features`` and ``n_labels``."""
    out = [read_xc(p, name=name) for p in paths]
    for p, ds in zip(paths[1:], out[1:]):
        first = out[0]
        if (ds.n_features, ds.n_labels) != (first.n_features, first.n_labels):
            raise DataFormatError(p, 1, f"header declares n_features={ds.n_features}, "
                                        f"n_labels={ds.n_labels} but {paths[0]} declares "
                                        f"n_features={first.n_features}, "
                                        f"n_labels={first.n_labels}; train and test must agree")
    return out
