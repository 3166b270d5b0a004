"""Synthetic stand-ins for extreme multi-label (XMC) data: eurlex-, nus-wide- and wiki-shaped
problems with the published shape statistics of LEML Table 2, written in the Extreme
Classification Repository format that :func:`mlx.data.xc_repo.read_xc` reads.

``mlx datasets synth NAME --like eurlex --scale 1.0 --seed 0 -o DIR`` writes
``DIR/NAME-train.txt`` and ``DIR/NAME-test.txt``; :func:`generate` builds the same data in
memory (equal to what the reader reads back from the files, value for value).

The package holds one job per module:

* :mod:`~mlx.data.xmc_synth.shape`: the shapes (:data:`LIKE`, :data:`ASSUMPTIONS`) and
  :func:`synth_spec`, which turns a shape, ``scale`` and ``seed`` into a :class:`SynthSpec`;
* :mod:`~mlx.data.xmc_synth.resources`: :func:`estimate` and :func:`check_resources`, which
  refuse up front a request that would not fit in the machine's available memory (or the
  output's free disk);
* :mod:`~mlx.data.xmc_synth.model`: the generative model, streamed in blocks of rows
  (:func:`iter_blocks`), and :func:`generate`;
* :mod:`~mlx.data.xmc_synth.files`: :func:`write_synth`, through the one XC-format writer
  (:mod:`mlx.data.convert`).
"""

from __future__ import annotations

from mlx.data.lineparse import available_memory  # shared with the readers' memory bound
from mlx.data.xmc_synth.files import format_xc_block, write_synth
from mlx.data.xmc_synth.model import generate, iter_blocks
from mlx.data.xmc_synth.resources import (
    SynthEstimate,
    SynthTooLargeError,
    check_resources,
    estimate,
)
from mlx.data.xmc_synth.shape import ASSUMPTIONS, BLOCK_ROWS, LIKE, SynthSpec, synth_spec

__all__ = [
    "ASSUMPTIONS",
    "BLOCK_ROWS",
    "LIKE",
    "SynthEstimate",
    "SynthSpec",
    "SynthTooLargeError",
    "available_memory",
    "check_resources",
    "estimate",
    "format_xc_block",
    "generate",
    "iter_blocks",
    "synth_spec",
    "write_synth",
]
