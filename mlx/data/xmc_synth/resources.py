"""What a synthetic XMC problem needs (:func:`estimate`), and :func:`check_resources`, which
refuses up front a request that would not fit in the machine's available memory (or the
output's free disk): one line with the estimate, what is available and the largest ``scale``
that fits."""

from __future__ import annotations

import math
import shutil
from dataclasses import dataclass, replace
from operator import attrgetter
from pathlib import Path

from mlx.data.lineparse import available_memory
from mlx.data.xmc_synth.shape import BLOCK_ROWS, VALUE_DECIMALS, SynthSpec
from mlx.errors import ConfigError

__all__ = ["SynthEstimate", "SynthTooLargeError", "check_resources", "estimate"]

# object before converting (mlx.data.lineparse): about this many bytes per non-zero feature
# (two tokens) and per label on top of the CSR result; measured 136 + 12 (CSR) bytes per
# non-zero on eurlex-shaped files (CPython 3.11), rounded up.
_READ_BYTES_PER_NNZ = 140
_READ_BYTES_PER_LABEL = 80


class SynthTooLargeError(ConfigError):
    """A synthetic request that would not fit in memory (or on disk); exit status 2."""

    def __init__(self, message: str):
        super().__init__(None, None, message)


@dataclass(frozen=True)
class SynthEstimate:
    """Expected sizes of a synthetic problem (bytes; counts of non-zeros).

    ``memory_bytes``: X and Y of train and test as CSR plus the generator's model and one
    block -- what :func:`generate` needs. ``read_bytes``: the peak of reading the two files
    back with :func:`mlx.data.xc_repo.read_xc` (one file's tokens at a time, both parts' CSR).
    ``generator_bytes``: what :func:`write_synth` needs (the model and one block).
    """

    nnz_x: int
    nnz_y: int
    memory_bytes: int
    read_bytes: int
    generator_bytes: int
    file_bytes: int


def _csr_bytes(n: int, nnz: int) -> int:
    idx = 4 if nnz < 2**31 else 8
    return nnz * (8 + idx) + (n + 1) * idx


def estimate(spec: SynthSpec) -> SynthEstimate:
    """Sizes of ``spec``'s data, from its shape alone (nothing is generated)."""
    nnz = {p: spec.rows(p) * spec.avg_features(p) for p in ("train", "test")}
    lab = {p: spec.rows(p) * spec.avg_labels(p) for p in ("train", "test")}
    csr = sum(_csr_bytes(spec.rows(p), int(nnz[p])) + _csr_bytes(spec.rows(p), int(lab[p]))
              for p in ("train", "test"))
    csr = int(csr * 1.05) + 8 * (spec.n_train + spec.n_test)     # capacity slack, int64 rows
    d, L = spec.n_features, spec.n_labels
    model = 40 * (d + L) + 16 * spec.rank * (spec.dense_features + 1)
    block_rows = min(BLOCK_ROWS, max(spec.n_train, spec.n_test))
    per_row = max(spec.avg_features_train, spec.avg_features_test) * 3 * 48 \
        + max(spec.avg_labels_train, spec.avg_labels_test) * 3 * 48 + 24 * spec.rank \
        + 40 * spec.dense_features
    generator = int(model + block_rows * per_row) + 128 * 2**20  # + the interpreter, numba
    parse = max(nnz[p] * _READ_BYTES_PER_NNZ + lab[p] * _READ_BYTES_PER_LABEL
                for p in ("train", "test"))
    idx_chars = len(str(max(d - 1, 0))) + 1 + VALUE_DECIMALS + 3
    lab_chars = len(str(max(L - 1, 0))) + 1
    file_bytes = int(sum(nnz.values()) * idx_chars + sum(lab.values()) * lab_chars
                     + (spec.n_train + spec.n_test) * 2)
    return SynthEstimate(nnz_x=int(sum(nnz.values())), nnz_y=int(sum(lab.values())),
                         memory_bytes=int(csr + generator), read_bytes=int(parse + csr),
                         generator_bytes=generator, file_bytes=file_bytes)


def _gb(n: float) -> str:
    return f"{n / 1e9:.1f} GB" if n >= 1e9 else f"{max(n / 1e6, 1):.0f} MB"


def _largest_scale(spec: SynthSpec, fits) -> float | None:
    """The largest row ``scale`` (3 significant digits, rounded down) for which ``fits``."""
    def at(s):
        return replace(spec, scale=s,
                       n_train=max(1, round(spec.n_train / spec.scale * s)),
                       n_test=max(1, round(spec.n_test / spec.scale * s)))
    lo, hi = 0.0, spec.scale
    if not fits(at(1e-6)):
        return None
    for _ in range(60):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if fits(at(mid)) else (lo, mid)
    if lo <= 0:
        return None
    digits = 2 - math.floor(math.log10(lo))
    return math.floor(lo * 10**digits) / 10**digits


def check_resources(spec: SynthSpec, *, purpose: str = "files", out_dir=None,
                    memory: tuple[int, str] | None = None,
                    free_disk: int | None = None) -> SynthEstimate:
    """Refuse ``spec`` up front if it would not fit; return its :func:`estimate`.

    ``purpose="files"`` (:func:`write_synth`): the files must fit on ``out_dir``'s disk and
    reading them back must fit in memory; ``"memory"`` (:func:`generate`): the data must fit
    in memory. ``memory`` (``(bytes, source)``) and ``free_disk`` default to the machine's
    (:func:`available_memory`, :func:`shutil.disk_usage`).

    Raises
    ------
    SynthTooLargeError
        One line with the estimate, what is available and the largest ``scale`` that fits.
    """
    est = estimate(spec)
    avail, source = memory if memory is not None else available_memory()
    if purpose == "files":
        need, what = est.read_bytes, "to read the files back with mlx's XC reader"
        key = attrgetter("read_bytes")
    else:
        need, what = est.memory_bytes, "to hold X and Y (train and test) in memory"
        key = attrgetter("memory_bytes")
    label = f"synthetic {spec.like}-shaped data at scale {spec.scale:g}"
    if need > avail:
        best = _largest_scale(spec, lambda s: key(estimate(s)) <= avail)
        hint = f"; use scale {best:g} or less" if best else ""
        raise SynthTooLargeError(f"{label} would need about {_gb(need)} of memory {what}, "
                                 f"more than the {_gb(avail)} available ({source}){hint}")
    if purpose == "files":
        if free_disk is None:
            probe = Path(out_dir) if out_dir is not None else Path.cwd()
            while not probe.exists() and probe != probe.parent:
                probe = probe.parent
            free_disk = shutil.disk_usage(probe).free
        if est.file_bytes > free_disk:
            best = _largest_scale(spec, lambda s: estimate(s).file_bytes <= free_disk)
            hint = f"; use scale {best:g} or less" if best else ""
            raise SynthTooLargeError(f"{label} would need about {_gb(est.file_bytes)} of disk, "
                                     f"more than the {_gb(free_disk)} free at {out_dir}{hint}")
    return est
