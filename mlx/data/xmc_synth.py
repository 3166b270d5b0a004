"""Synthetic stand-ins for extreme multi-label (XMC) data: eurlex-, nus-wide- and wiki-shaped
problems with the published shape statistics of LEML Table 2, written in the Extreme
Classification Repository format that :func:`mlx.data.xc_repo.read_xc` reads.

``mlx datasets synth NAME --like eurlex --scale 1.0 --seed 0 -o DIR`` writes
``DIR/NAME-train.txt`` and ``DIR/NAME-test.txt``; :func:`generate` builds the same data in
memory (equal to what the reader reads back from the files, value for value).

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

Generative model (``r`` = planted rank)
---------------------------------------
1. Popularity ranks are assigned to feature and label ids by a random permutation; the
   weight of rank ``j`` is ``(j + 1) ** -exponent``. Topics ``t = 0..r-1`` have the prior
   ``(t + 1) ** -0.7`` (normalised); items are dealt to topics, heaviest first, each to the
   topic furthest below its prior mass, so that drawing a topic from the prior and then an
   item from the topic's own popularity weights draws items by their global popularity.
2. Row ``i`` picks ``1 + Binomial(2, 0.35)`` topics from the prior with Dirichlet(1)
   weights. Its number of sparse non-zeros is ``1 + NegativeBinomial`` with the published
   mean; it draws feature tokens (30% from the global popularity, 70% from its topics) until
   it has that many distinct features. Values are ``(1 + log count) * idf`` (``idf = 1 +
   log(w_max / w_f)``). Dense features (nus-wide) are ``base_f * exp(1.5 [feature's topic is
   one of the row's, weighted] + 0.5 N(0, 1))`` with log-normal ``base_f``. Each part of the
   row is scaled to norm ``1/sqrt(parts)``, so rows have unit norm, and values are rounded
   to 5 decimals (at least 1e-5).
3. Labels depend on ``X`` through a planted rank-``r`` map: ``z_i = x_i W*`` with
   ``W*[f, t] = [feature f belongs to topic t]`` (``d x r``, rank ``r``), topic preferences
   ``u_i ~ z_i ** 2`` (normalised), and label tokens drawn 15% from the global label
   popularity and 85% from topics ``t ~ u_i`` and then the topic's label distribution
   ``H*[:, t]``, until the row has ``1 + NegativeBinomial(2)`` distinct labels (published
   mean). So ``E[Y | X]`` is a function of ``X W*`` only, and LEML has a rank-``r`` structure
   to find (held-out P@1 of LEML-SQ, k = 250: about 0.6 on eurlex-shaped data, against 0.06
   for the most frequent label).

Generation is streamed in blocks of :data:`BLOCK_ROWS` rows: memory is bounded by the
model (``O(d + L)``) and one block, never ``n x L`` or ``d x d``. Every block draws from
its own ``SeedSequence(seed, spawn_key=(part, block))``, so the same seed gives the same
bytes. :func:`estimate` and :func:`check_resources` refuse up front a request that would
not fit in the machine's available memory (or the output's free disk).
"""

from __future__ import annotations

import csv
import math
import os
import shutil
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np
import scipy.sparse as sp
from numba import njit

from mlx.data.dataset import Dataset, Split
from mlx.data.lineparse import available_memory  # shared with the readers' memory bound
from mlx.errors import ConfigError

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

#: The shapes a synthetic problem can be made like.
LIKE = ("eurlex", "nus-wide", "wiki")

#: Rows generated (and written) per block; part of the output's definition.
BLOCK_ROWS = 2048

#: Values are multiples of 10 ** -VALUE_DECIMALS (at least one unit).
VALUE_DECIMALS = 5
_QUANT = 10 ** VALUE_DECIMALS

_FEATURE_BACKGROUND = 0.3     # share of feature tokens drawn from the global popularity
_LABEL_BACKGROUND = 0.15      # share of label tokens drawn from the global popularity
_TOPIC_SHARPNESS = 2.0        # u_i ~ z_i ** sharpness
_TOPIC_EXPONENT = 0.7         # topic prior ~ (t + 1) ** -0.7
_DENSE_SIGNAL = 1.5
_DENSE_NOISE = 0.5
_LABEL_DISPERSION = 2.0       # negative-binomial shape of (labels per row - 1)
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

# Reading the files back with mlx's XC reader holds every token of a file as a Python bytes
# object before converting (mlx.data.lineparse): about this many bytes per non-zero feature
# (two tokens) and per label on top of the CSR result; measured 136 + 12 (CSR) bytes per
# non-zero on eurlex-shaped files (CPython 3.11), rounded up.
_READ_BYTES_PER_NNZ = 140
_READ_BYTES_PER_LABEL = 80


class SynthTooLargeError(ConfigError):
    """A synthetic request that would not fit in memory (or on disk); exit status 2."""

    def __init__(self, message: str):
        super().__init__(None, None, message)


# ----------------------------------------------------------------------------- the spec
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
    path = Path(__file__).resolve().parent.parent / "reference" / "datasets.csv"
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
        avg_features_train=dense + sparse_avg("train"), avg_features_test=dense + sparse_avg("test"),
        avg_labels_train=label_avg("train"), avg_labels_test=label_avg("test"),
        feature_exponent=a["feature_exponent"], label_exponent=a["label_exponent"], rank=rank,
        feature_dispersion=a["feature_dispersion"])


# ----------------------------------------------------------------------------- resources
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
        key = lambda e: e.read_bytes
    else:
        need, what = est.memory_bytes, "to hold X and Y (train and test) in memory"
        key = lambda e: e.memory_bytes
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


# ----------------------------------------------------------------------------- the model
@njit(cache=True)
def _deal(weight, target):
    """Topic of each item (``weight`` in decreasing order): the ``r`` heaviest items one per
    topic (heaviest to the largest ``target``), then each item to the topic furthest below
    its target mass. Topic masses then follow ``target`` closely."""
    r = target.size
    out = np.empty(weight.size, dtype=np.int64)
    mass = np.zeros(r)
    for j in range(weight.size):
        if j < r:
            t = j
        else:
            t = 0
            best = target[0] - mass[0]
            for s in range(1, r):
                gap = target[s] - mass[s]
                if gap > best:
                    best = gap
                    t = s
        out[j] = t
        mass[t] += weight[j]
    return out


class _Catalogue:
    """Items (features or labels) with Zipf popularity dealt to ``r`` topics whose masses
    follow the topic prior (so that drawing a topic from the prior, then an item from the
    topic, draws items by their popularity).

    ``seg_cdf`` concatenates ``r + 1`` segments, topic ``t`` spanning ``(t, t + 1]`` with the
    cumulative normalised weights of its items, and segment ``r`` (the background) all items
    by global popularity; ``seg_items`` are the matching item ids. Drawing ``t + U(0, 1)``
    and looking it up draws an item from topic ``t`` (or the background for ``t = r``).
    """

    def __init__(self, rng, n_items: int, exponent: float, prior: np.ndarray, offset: int = 0):
        r = prior.size
        weight = (np.arange(n_items, dtype=np.float64) + 1.0) ** -exponent  # by rank
        ids = rng.permutation(n_items) + offset                          # rank -> item id
        topic_of_rank = _deal(weight / weight.sum(), prior)
        self.topic = np.empty(n_items, dtype=np.int64)
        self.topic[ids - offset] = topic_of_rank
        self.weight = np.empty(n_items)
        self.weight[ids - offset] = weight
        order = np.lexsort((np.arange(n_items), topic_of_rank))          # by topic, then rank
        t_sorted = topic_of_rank[order]
        w_sorted = weight[order]
        cum = np.cumsum(w_sorted)
        starts = np.searchsorted(t_sorted, np.arange(r))
        ends = np.append(starts[1:], n_items)
        base = np.where(starts > 0, cum[np.maximum(starts - 1, 0)], 0.0)
        total = cum[ends - 1] - base
        local = (cum - np.repeat(base, ends - starts)) / np.repeat(total, ends - starts)
        local[ends - 1] = 1.0
        bg = np.cumsum(weight) / weight.sum()
        bg[-1] = 1.0
        self.seg_cdf = np.concatenate([t_sorted + local, r + bg])
        self.seg_items = np.concatenate([ids[order], ids]).astype(np.int64)
        self.seg_start = np.append(np.append(starts, n_items), 2 * n_items).astype(np.int64)
        self.n_items, self.r, self.offset = n_items, r, offset


class _Model:
    def __init__(self, spec: SynthSpec):
        rng = np.random.default_rng(np.random.SeedSequence(spec.seed, spawn_key=(0,)))
        r = spec.rank
        self.spec = spec
        prior = (np.arange(r) + 1.0) ** -_TOPIC_EXPONENT
        self.topic_cdf = np.cumsum(prior / prior.sum())
        self.topic_cdf[-1] = 1.0
        prior = prior / prior.sum()
        self.features = _Catalogue(rng, spec.sparse_features, spec.feature_exponent, prior,
                                   offset=spec.dense_features)
        self.labels = _Catalogue(rng, spec.n_labels, spec.label_exponent, prior)
        w = self.features.weight
        self.idf = 1.0 + np.log(w.max() / w)
        nd = spec.dense_features
        self.dense_topic = rng.integers(0, r, nd)
        self.dense_base = np.exp(0.5 * rng.standard_normal(nd))
        # W*: feature -> topic (d x r, one non-zero per row)
        self.topic_of_feature = np.concatenate([self.dense_topic, self.features.topic])


# ----------------------------------------------------------------------------- kernels
_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_MIX1 = np.uint64(0xBF58476D1CE4E5B9)
_MIX2 = np.uint64(0x94D049BB133111EB)
_S30, _S27, _S31, _S11 = np.uint64(30), np.uint64(27), np.uint64(31), np.uint64(11)
_TO_UNIT = 1.0 / 9007199254740992.0          # 2 ** -53


@njit(cache=True)
def _uniform(state):
    """SplitMix64 step: ``(new state, uniform in [0, 1) with 53 random bits)``."""
    state = state + _GOLDEN
    z = state
    z = (z ^ (z >> _S30)) * _MIX1
    z = (z ^ (z >> _S27)) * _MIX2
    z = z ^ (z >> _S31)
    return state, np.float64(z >> _S11) * _TO_UNIT


@njit(cache=True)
def _search_right(a, lo, hi, v):
    """First position in ``a[lo:hi]`` whose value is ``> v`` (``hi - 1`` if none)."""
    while lo < hi:
        mid = (lo + hi) >> 1
        if a[mid] > v:
            hi = mid
        else:
            lo = mid + 1
    return lo


@njit(cache=True)
def _draw_distinct_kernel(target, comp_seg, comp_cum, seg_cdf, seg_start, seg_items, n_items,
                          seed):
    """Per row ``i``: draw tokens -- a component ``c`` with cumulative weights
    ``comp_cum[i]``, then an item of segment ``comp_seg[i, c]`` -- until ``target[i]``
    distinct items came up (at most ``50 * target[i] + 100`` draws). Returns CSR arrays
    ``(indptr, items sorted within rows, counts of draws)``."""
    B, C = comp_cum.shape
    total = 0
    for i in range(B):
        total += target[i]
    items = np.empty(total, dtype=np.int64)
    counts = np.empty(total, dtype=np.int64)
    indptr = np.zeros(B + 1, dtype=np.int64)
    owner = np.full(n_items, -1, dtype=np.int64)
    slot = np.zeros(n_items, dtype=np.int64)
    state = np.uint64(seed)
    at = 0
    for i in range(B):
        start = at
        budget = 50 * target[i] + 100
        while at - start < target[i] and budget > 0:
            budget -= 1
            state, u1 = _uniform(state)
            state, u2 = _uniform(state)
            c = _search_right(comp_cum[i], 0, C - 1, u1)
            seg = comp_seg[i, c]
            lo, hi = seg_start[seg], seg_start[seg + 1]
            pos = _search_right(seg_cdf, lo, hi - 1, seg + u2)
            item = seg_items[pos]
            if owner[item] != i:
                owner[item] = i
                slot[item] = at
                items[at] = item
                counts[at] = 1
                at += 1
            else:
                counts[slot[item]] += 1
        order = np.argsort(items[start:at])
        items[start:at] = items[start:at][order]
        counts[start:at] = counts[start:at][order]
        indptr[i + 1] = at
    return indptr, items[:at], counts[:at]


def _draw_distinct(rng, cat: _Catalogue, target, comp_seg, comp_cum):
    """Draw each row's distinct items (see :func:`_draw_distinct_kernel`); the kernel's
    random stream starts from a seed drawn from ``rng``."""
    seed = int(rng.integers(0, 2**63, dtype=np.int64))
    return _draw_distinct_kernel(np.ascontiguousarray(target, dtype=np.int64),
                                 np.ascontiguousarray(comp_seg, dtype=np.int64),
                                 np.ascontiguousarray(comp_cum, dtype=np.float64),
                                 cat.seg_cdf, cat.seg_start, cat.seg_items,
                                 cat.offset + cat.n_items, seed)


def _quantise(values: np.ndarray) -> np.ndarray:
    """Integer multiples of 10 ** -VALUE_DECIMALS, at least one."""
    return np.maximum(np.rint(values * _QUANT), 1).astype(np.int64)


def _block(model: _Model, part: str, block: int, n_rows: int):
    """``(X quantised as int64 CSR, Y)`` of one block of rows."""
    spec = model.spec
    r, B = spec.rank, n_rows
    rng = np.random.default_rng(np.random.SeedSequence(
        spec.seed, spawn_key=(1 if part == "train" else 2, block)))
    # topics of each row
    n_topics = 1 + rng.binomial(2, 0.35, B)
    topics = np.searchsorted(model.topic_cdf, rng.random((B, 3)), side="right")
    topics = np.minimum(topics, r - 1)
    theta = rng.gamma(1.0, size=(B, 3)) * (np.arange(3) < n_topics[:, None])
    theta /= theta.sum(axis=1, keepdims=True)
    # sparse features
    nd, d_sp = spec.dense_features, spec.sparse_features
    mean = spec.avg_features(part) - nd - 1.0
    shape = spec.feature_dispersion
    nf = 1 + (rng.negative_binomial(shape, shape / (shape + mean), B) if mean > 0
              else np.zeros(B, dtype=np.int64))
    nf = np.minimum(nf, d_sp)
    comp_seg = np.concatenate([np.full((B, 1), r), topics], axis=1)
    comp_w = np.concatenate([np.full((B, 1), _FEATURE_BACKGROUND),
                             (1 - _FEATURE_BACKGROUND) * theta], axis=1)
    comp_cum = np.cumsum(comp_w, axis=1)
    comp_cum[:, -1] = 1.0
    x_indptr, feats, counts = _draw_distinct(rng, model.features, nf, comp_seg, comp_cum)
    rows = np.repeat(np.arange(B), np.diff(x_indptr))
    vals = (1.0 + np.log(counts)) * model.idf[feats - nd]
    norms = np.sqrt(np.bincount(rows, weights=vals * vals, minlength=B))
    parts = 2.0 if nd else 1.0
    vals = vals / (norms[rows] * math.sqrt(parts))
    if nd:
        boost = np.zeros((B, nd))
        for j in range(3):
            boost += theta[:, j:j + 1] * (model.dense_topic[None, :] == topics[:, j:j + 1])
        dense = model.dense_base * np.exp(_DENSE_SIGNAL * boost
                                          + _DENSE_NOISE * rng.standard_normal((B, nd)))
        dense /= np.linalg.norm(dense, axis=1, keepdims=True) * math.sqrt(parts)
        # dense features 0..nd-1 first in each row, then the row's sparse ones (ids >= nd)
        sp_len = np.diff(x_indptr)
        new_ptr = x_indptr + nd * np.arange(B + 1)
        is_dense = np.zeros(new_ptr[-1], dtype=bool)
        is_dense[(new_ptr[:-1, None] + np.arange(nd)).ravel()] = True
        merged_f = np.empty(new_ptr[-1], dtype=np.int64)
        merged_v = np.empty(new_ptr[-1])
        merged_f[is_dense] = np.tile(np.arange(nd), B)
        merged_v[is_dense] = dense.ravel()
        merged_f[~is_dense] = feats
        merged_v[~is_dense] = vals
        feats, vals = merged_f, merged_v
        rows = np.repeat(np.arange(B), sp_len + nd)
    q = _quantise(vals)
    x_indptr = np.zeros(B + 1, dtype=np.int64)
    np.cumsum(np.bincount(rows, minlength=B), out=x_indptr[1:])
    # labels from z = X W*
    x = q / _QUANT
    z = np.bincount(rows * r + model.topic_of_feature[feats], weights=x,
                    minlength=B * r).reshape(B, r)
    pref = z ** _TOPIC_SHARPNESS
    pref /= pref.sum(axis=1, keepdims=True)
    lab_seg = np.concatenate([np.full((B, 1), r), np.broadcast_to(np.arange(r), (B, r))],
                             axis=1)
    lab_cum = np.cumsum(np.concatenate([np.full((B, 1), _LABEL_BACKGROUND),
                                        (1 - _LABEL_BACKGROUND) * pref], axis=1), axis=1)
    lab_cum[:, -1] = 1.0
    lmean = spec.avg_labels(part) - 1.0
    nl = 1 + rng.negative_binomial(_LABEL_DISPERSION,
                                   _LABEL_DISPERSION / (_LABEL_DISPERSION + lmean), B)
    nl = np.minimum(nl, max(1, int(_MAX_FILL * spec.n_labels)) if lmean > 0 else 1)
    y_indptr, labs, _ = _draw_distinct(rng, model.labels, nl, lab_seg, lab_cum)
    return (x_indptr, feats.astype(np.int64), q), (y_indptr, labs.astype(np.int64))


def iter_blocks(spec: SynthSpec, part: str, model: _Model | None = None):
    """Yield ``(X, Y)`` CSR blocks of :data:`BLOCK_ROWS` rows of ``part`` (``"train"`` or
    ``"test"``), in order. ``X`` values are the exact float64 values the files hold."""
    for x, y in _iter_raw(spec, part, model):
        yield _to_csr(spec, x, y)


def _iter_raw(spec: SynthSpec, part: str, model: _Model | None = None):
    if part not in ("train", "test"):
        raise ValueError(f"part must be 'train' or 'test', not {part!r}")
    model = model or _Model(spec)
    n = spec.rows(part)
    for b, start in enumerate(range(0, n, BLOCK_ROWS)):
        yield _block(model, part, b, min(BLOCK_ROWS, n - start))


def _to_csr(spec, x, y):
    (xp, xi, q), (yp, yi) = x, y
    B = xp.size - 1
    X = sp.csr_matrix((q / _QUANT, xi, xp), shape=(B, spec.n_features))
    Y = sp.csr_matrix((np.ones(yi.size), yi, yp), shape=(B, spec.n_labels))
    return X, Y


def generate(spec: SynthSpec, *, check: bool = True, name: str = "") -> Split:
    """The train/test :class:`~mlx.data.dataset.Split` of ``spec`` in memory (canonical CSR,
    the same values :func:`write_synth`'s files read back to). With ``check``, refuses up
    front (:class:`SynthTooLargeError`) what would not fit in the available memory.

    Blocks are copied into preallocated CSR arrays as they come (float64 values, int32
    indices where they fit), so the peak is about the size of the result."""
    if check:
        check_resources(spec, purpose="memory")
    model = _Model(spec)
    name = name or f"{spec.like}-synth"
    parts = []
    for part in ("train", "test"):
        X, Y = _collect(spec, part, model)
        parts.append(Dataset(X=X, Y=Y, name=name, task="multilabel"))
    return Split(train=parts[0], test=parts[1], name=name)


class _Buffer:
    """A growable 1-D array (capacity from the expected size, grown by 25% when short)."""

    def __init__(self, capacity: int, dtype):
        self.a = np.empty(max(int(capacity), 16), dtype=dtype)
        self.n = 0

    def extend(self, values) -> None:
        need = self.n + values.size
        if need > self.a.size:
            self.a.resize(max(need, int(self.a.size * 1.25)), refcheck=False)
        self.a[self.n:need] = values
        self.n = need

    def done(self) -> np.ndarray:
        self.a.resize(self.n, refcheck=False)
        return self.a


def _collect(spec: SynthSpec, part: str, model: _Model):
    n = spec.rows(part)
    exp_x = n * spec.avg_features(part)
    exp_y = n * spec.avg_labels(part)
    wide = max(exp_x, exp_y) * 1.5 >= 2**31 - 1
    idx = np.int64 if wide else np.int32
    data = _Buffer(exp_x * 1.05 + 4096, np.float64)
    xind = _Buffer(exp_x * 1.05 + 4096, idx)
    yind = _Buffer(exp_y * 1.05 + 4096, idx)
    xptr = np.zeros(n + 1, dtype=np.int64)
    yptr = np.zeros(n + 1, dtype=np.int64)
    row = 0
    for (bxp, bxi, q), (byp, byi) in _iter_raw(spec, part, model):
        b = bxp.size - 1
        xptr[row + 1:row + b + 1] = bxp[1:] + data.n
        yptr[row + 1:row + b + 1] = byp[1:] + yind.n
        data.extend(q / _QUANT)
        xind.extend(bxi)
        yind.extend(byi)
        row += b
    if not wide and max(xptr[-1], yptr[-1]) >= 2**31:      # pragma: no cover - 1.5x above
        raise OverflowError("more non-zeros than int32 indices hold; raise the estimate")
    X = sp.csr_matrix((data.done(), xind.done(), xptr.astype(idx)), shape=(n, spec.n_features))
    yi = yind.done()
    Y = sp.csr_matrix((np.ones(yi.size), yi, yptr.astype(idx)), shape=(n, spec.n_labels))
    return X, Y


# ----------------------------------------------------------------------------- writing
def format_xc_block(x, y) -> bytes:
    """The lines of one raw block in the repository format: ``l1,l2 f:v f:v\\n`` with values
    ``q / 10**VALUE_DECIMALS`` written exactly (``0.01234``; trailing zeros dropped)."""
    (xp, xi, q), (yp, yi) = x, y
    return _format(np.asarray(xp, np.int64), np.asarray(xi, np.int64), np.asarray(q, np.int64),
                   np.asarray(yp, np.int64), np.asarray(yi, np.int64)).tobytes()


def _format(xp, xi, q, yp, yi):
    return _format_lines(xp, xi, q, yp, yi, VALUE_DECIMALS)


@njit(cache=True)
def _n_digits(v):
    n = 1
    while v >= 10:
        v //= 10
        n += 1
    return n


@njit(cache=True)
def _put_int(buf, at, v):
    n = _n_digits(v)
    for k in range(n - 1, -1, -1):
        buf[at + k] = 48 + v % 10
        v //= 10
    return at + n


@njit(cache=True)
def _value_len(q, unit, decimals):
    whole, frac = q // unit, q % unit
    if frac == 0:
        return _n_digits(whole) + 2
    k = decimals
    while frac % 10 == 0:
        frac //= 10
        k -= 1
    return _n_digits(whole) + 1 + k


@njit(cache=True)
def _put_value(buf, at, q, unit, decimals):
    whole, frac = q // unit, q % unit
    at = _put_int(buf, at, whole)
    buf[at] = 46                                  # '.'
    at += 1
    if frac == 0:
        buf[at] = 48
        return at + 1
    k = decimals
    while frac % 10 == 0:
        frac //= 10
        k -= 1
    for j in range(k - 1, -1, -1):
        buf[at + j] = 48 + frac % 10
        frac //= 10
    return at + k


@njit(cache=True)
def _format_lines(xp, xi, q, yp, yi, decimals):
    unit = 1
    for _ in range(decimals):
        unit *= 10
    n = xp.size - 1
    size = 0
    for i in range(n):
        for j in range(yp[i], yp[i + 1]):
            size += _n_digits(yi[j]) + 1           # label and ',' (or the blank after)
        if yp[i] == yp[i + 1]:
            size += 1                             # leading blank: no labels
        for j in range(xp[i], xp[i + 1]):
            size += _n_digits(xi[j]) + 2 + _value_len(q[j], unit, decimals)
        size += 1
    buf = np.empty(size, dtype=np.uint8)
    at = 0
    for i in range(n):
        if yp[i] == yp[i + 1]:
            buf[at] = 32
            at += 1
        for j in range(yp[i], yp[i + 1]):
            at = _put_int(buf, at, yi[j])
            buf[at] = 44 if j + 1 < yp[i + 1] else 32   # ',' between labels, then ' '
            at += 1
        for j in range(xp[i], xp[i + 1]):
            at = _put_int(buf, at, xi[j])
            buf[at] = 58                          # ':'
            at = _put_value(buf, at + 1, q[j], unit, decimals)
            buf[at] = 32 if j + 1 < xp[i + 1] else 10
            at += 1
        if xp[i] == xp[i + 1]:
            if at > 0 and buf[at - 1] == 32:
                at -= 1
            buf[at] = 10
            at += 1
    return buf[:at]


def write_synth(spec: SynthSpec, out_dir, name: str, *, check: bool = True) -> dict:
    """Write ``out_dir/<name>-train.txt`` and ``<name>-test.txt``; return their paths and
    statistics (``{"train": {"path", "n", "avg_features", "avg_labels"}, "test": ...}``).

    Streamed: one block of rows is in memory at a time. Each file appears atomically. With
    ``check``, refuses up front (:class:`SynthTooLargeError`) what would not fit on disk or
    could not be read back in the available memory.
    """
    from mlx.io import atomic_write_bytes

    if check:
        check_resources(spec, purpose="files", out_dir=out_dir)
    model = _Model(spec)
    out = {}
    for part in ("train", "test"):
        stats = {"nnz": 0, "labels": 0}
        path = Path(out_dir) / f"{name}-{part}.txt"

        def write(fh, part=part, stats=stats):
            fh.write(f"{spec.rows(part)} {spec.n_features} {spec.n_labels}\n".encode())
            for x, y in _iter_raw(spec, part, model):
                stats["nnz"] += x[1].size
                stats["labels"] += y[1].size
                fh.write(format_xc_block(x, y))

        atomic_write_bytes(path, write)
        n = spec.rows(part)
        out[part] = {"path": path, "n": n, "avg_features": stats["nnz"] / n,
                     "avg_labels": stats["labels"] / n}
    return out
