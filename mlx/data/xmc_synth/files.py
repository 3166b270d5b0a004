"""Writing a synthetic XMC problem to files in the Extreme Classification Repository format,
through :mod:`mlx.data.convert`'s line writer: values are the generator's multiples of
``10 ** -VALUE_DECIMALS``, written exactly."""

from __future__ import annotations

from pathlib import Path

from mlx.data.convert import XC_EMPTY_ROW, fixed_text, sparse_lines, write_text, xc_header
from mlx.data.xmc_synth.model import _iter_raw, _Model
from mlx.data.xmc_synth.resources import check_resources
from mlx.data.xmc_synth.shape import VALUE_DECIMALS, SynthSpec

__all__ = ["format_xc_block", "write_synth"]


def format_xc_block(x, y) -> bytes:
    """The lines of one raw block in the repository format: ``l1,l2 f:v f:v\\n`` with values
    ``q / 10**VALUE_DECIMALS`` written exactly (``0.01234``; trailing zeros dropped)."""
    (xp, xi, q), (yp, yi) = x, y
    return sparse_lines(xp, xi, fixed_text(q, VALUE_DECIMALS), yp, yi, index_base=0,
                        empty_row=XC_EMPTY_ROW)


def write_synth(spec: SynthSpec, out_dir, name: str, *, check: bool = True) -> dict:
    """Write ``out_dir/<name>-train.txt`` and ``<name>-test.txt``; return their paths and
    statistics (``{"train": {"path", "n", "avg_features", "avg_labels"}, "test": ...}``).

    Streamed: one block of rows is in memory at a time. Each file appears atomically. With
    ``check``, refuses up front (:class:`SynthTooLargeError`) what would not fit on disk or
    could not be read back in the available memory.
    """
    if check:
        check_resources(spec, purpose="files", out_dir=out_dir)
    model = _Model(spec)
    out = {}
    for part in ("train", "test"):
        stats = {"nnz": 0, "labels": 0}
        path = Path(out_dir) / f"{name}-{part}.txt"

        def blocks(part=part, stats=stats):
            for x, y in _iter_raw(spec, part, model):
                stats["nnz"] += x[1].size
                stats["labels"] += y[1].size
                yield format_xc_block(x, y)

        write_text(path, xc_header(spec.rows(part), spec.n_features, spec.n_labels), blocks())
        n = spec.rows(part)
        out[part] = {"path": path, "n": n, "avg_features": stats["nnz"] / n,
                     "avg_labels": stats["labels"] / n}
    return out
