"""The shapes of the synthetic XMC problems and :func:`synth_spec`.

Shape (from ``mlx/reference/datasets.csv``, LEML Table 2)
---------------------------------------------------------
``n_train``, ``n_test``, ``d``, ``L`` and the average numbers of non-zero features and of
labels per row, separately for train and test. ``scale`` multiplies the numbers of rows;
``dims_scale`` multiplies ``d`` and ``L`` (default 1: the published widths). Rows keep their
published number of non-zero features and labels, except that a sparse row never fills more
than a quarter of the (scaled) features or labels; nus-wide's bag-of-words part keeps its
density instead.

Assumptions beyond Table 2 (:data:`ASSUMPTIONS`)
------------------------------------------------
* eurlex: sparse tf-idf rows (236.69 non-zeros of 5000 in train); feature and label tokens
  Zipf with exponents 1.0 and 0.8; planted rank 100.
* nus-wide: 634 dense low-level image features present in every row (64 colour histogram +
  144 colour correlogram + 73 edge direction + 128 wavelet texture + 225 block-wise colour
  moments) and a 500-word SIFT bag of words holding the remaining 862.70 - 634 = 228.70
  non-zeros per row, Zipf 0.5; labels (1000 tags) Zipf 0.7; planted rank 40 (LEML ran
  k = 50 and 100 there).
* wiki: sparse tf-idf rows (146.78 of 366,932); features Zipf 1.0, labels Zipf 0.9; planted
  rank 200.

The exponents are those of the token distributions. Rows hold distinct features and labels,
which saturates the most popular ones, so the sorted document frequencies are straight on
log-log axes with a slope somewhat below the exponent (eurlex-shaped at scale 1: labels
-0.69 over ranks 5-300, features -0.79 over ranks 30-3000).
"""

from __future__ import annotations

import csv
import math
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from mlx.errors import ConfigError

__all__ = ["ASSUMPTIONS", "BLOCK_ROWS", "LIKE", "VALUE_DECIMALS", "SynthSpec", "synth_spec"]

#: The shapes a synthetic problem can be made like.
LIKE = ("eurlex", "nus-wide", "wiki")

#: Rows generated (and written) per block; part of the output's definition.
BLOCK_ROWS = 2048

#: Values are multiples of 10 ** -VALUE_DECIMALS (at least one unit).
VALUE_DECIMALS = 5

_MAX_FILL = 0.25              # a sparse row fills at most this share of the features / labels

#: Assumptions beyond LEML Table 2, per shape (see the module docstring).
ASSUMPTIONS = {
    "eurlex": {"dense_features": 0, "feature_exponent": 1.0, "label_exponent": 0.8,
               "rank": 100, "feature_dispersion": 4.0},
    "nus-wide": {"dense_features": 634, "feature_exponent": 0.5, "label_exponent": 0.7,
                 "rank": 40, "feature_dispersion": 25.0},
    "wiki": {"dense_features": 0, "feature_exponent": 1.0, "label_exponent": 0.9,
             "rank": 200, "feature_dispersion": 3.0},
}



@dataclass(frozen=True)
class SynthSpec:
    """Everything that defines a synthetic XMC problem (equal specs give equal data)."""

    like: str
    scale: float
    dims_scale: float
    seed: int
    n_train: int
    n_test: int
    n_features: int
    n_labels: int
    dense_features: int
    avg_features_train: float
    avg_features_test: float
    avg_labels_train: float
    avg_labels_test: float
    feature_exponent: float
    label_exponent: float
    rank: int
    feature_dispersion: float

    @property
    def sparse_features(self) -> int:
        return self.n_features - self.dense_features

    def rows(self, part: str) -> int:
        return self.n_train if part == "train" else self.n_test

    def avg_features(self, part: str) -> float:
        return self.avg_features_train if part == "train" else self.avg_features_test

    def avg_labels(self, part: str) -> float:
        return self.avg_labels_train if part == "train" else self.avg_labels_test

    def describe(self) -> str:
        return (f"{self.like}-shaped (scale {self.scale:g}, dims_scale {self.dims_scale:g}, "
                f"seed {self.seed}): n_train={self.n_train}, n_test={self.n_test}, "
                f"d={self.n_features}, L={self.n_labels}, "
                f"{self.avg_features_train:.2f} features and {self.avg_labels_train:.2f} labels "
                f"per training row, planted rank {self.rank}")


def _published() -> dict:
    """LEML Table 2 rows of ``mlx/reference/datasets.csv`` for :data:`LIKE`."""
    path = Path(__file__).resolve().parents[2] / "reference" / "datasets.csv"
    out = {}
    with open(path, newline="", encoding="utf-8") as fh:
        for row in csv.DictReader(fh):
            if row["paper"] == "leml" and row["table"] == "2" and row["dataset"] in LIKE:
                out[row["dataset"]] = row
    return out


def _check_positive(name: str, value, *, integer: bool = False, minimum=None):
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)) \
            or not math.isfinite(value) or (integer and int(value) != value):
        kind = "an integer" if integer else "a finite number"
        raise ConfigError(None, name, f"must be {kind}. Got {value!r} instead.")
    if minimum is not None and value < minimum:
        raise ConfigError(None, name, f"must be >= {minimum}. Got {value!r} instead.")
    if minimum is None and value <= 0:
        raise ConfigError(None, name, f"must be > 0. Got {value!r} instead.")
    return int(value) if integer else float(value)


def synth_spec(like: str, scale: float = 1.0, seed: int = 0, *, dims_scale: float = 1.0,
               n_train: int | None = None, n_test: int | None = None,
               n_features: int | None = None, n_labels: int | None = None,
               rank: int | None = None) -> SynthSpec:
    """The :class:`SynthSpec` of a problem shaped like ``like`` (one of :data:`LIKE`).

    ``scale`` multiplies the published numbers of train and test rows, ``dims_scale`` the
    numbers of features and labels (nus-wide's dense and bag-of-words parts alike); the
    explicit ``n_*`` and ``rank`` arguments override the scaled values.

    Raises
    ------
    ConfigError
        An unknown shape or a value out of range (exit status 2 on the command line).
    """
    if like not in LIKE:
        from mlx.errors import UnknownNameError
        raise UnknownNameError("shape", str(like), LIKE, key_path="--like")
    scale = _check_positive("scale", scale)
    dims_scale = _check_positive("dims_scale", dims_scale)
    seed = _check_positive("seed", seed, integer=True, minimum=0)
    row = _published()[like]
    a = ASSUMPTIONS[like]
    d0, L0 = int(row["d"]), int(row["L"])
    dense0 = a["dense_features"]
    if n_features is None:
        n_features = max(2, round(d0 * dims_scale))
    n_features = _check_positive("n_features", n_features, integer=True, minimum=2)
    dense = min(round(dense0 * n_features / d0), n_features - 1) if dense0 else 0
    d_sp = n_features - dense
    if n_labels is None:
        n_labels = max(2, round(L0 * dims_scale))
    n_labels = _check_positive("n_labels", n_labels, integer=True, minimum=2)
    n_train = max(1, round(int(row["n_train"]) * scale)) if n_train is None else n_train
    n_test = max(1, round(int(row["n_test"]) * scale)) if n_test is None else n_test
    n_train = _check_positive("n_train", n_train, integer=True, minimum=1)
    n_test = _check_positive("n_test", n_test, integer=True, minimum=1)

    def sparse_avg(part):
        avg = float(row[f"avg_features_{part}"]) - dense0
        density = avg / (d0 - dense0)
        cap = d_sp * max(density, _MAX_FILL)
        return max(1.0, min(avg, cap))

    def label_avg(part):
        return max(1.0, min(float(row[f"avg_labels_{part}"]), _MAX_FILL * n_labels))

    rank = a["rank"] if rank is None else rank
    rank = _check_positive("rank", rank, integer=True, minimum=1)
    rank = min(rank, d_sp, n_labels)
    return SynthSpec(
        like=like, scale=scale, dims_scale=dims_scale, seed=seed, n_train=n_train,
        n_test=n_test, n_features=n_features, n_labels=n_labels, dense_features=dense,
        avg_features_train=dense + sparse_avg("train"),
        avg_features_test=dense + sparse_avg("test"),
        avg_labels_train=label_avg("train"), avg_labels_test=label_avg("test"),
        feature_exponent=a["feature_exponent"], label_exponent=a["label_exponent"], rank=rank,
        feature_dispersion=a["feature_dispersion"])
