"""The generative model of the synthetic XMC problems, streamed in blocks of rows.

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

import math

import numpy as np
import scipy.sparse as sp
from numba import njit

from mlx.data.dataset import Dataset, Split
from mlx.data.xmc_synth.resources import check_resources
from mlx.data.xmc_synth.shape import _MAX_FILL, BLOCK_ROWS, VALUE_DECIMALS, SynthSpec

__all__ = ["generate", "iter_blocks"]

_QUANT = 10 ** VALUE_DECIMALS

_FEATURE_BACKGROUND = 0.3     # share of feature tokens drawn from the global popularity
_LABEL_BACKGROUND = 0.15      # share of label tokens drawn from the global popularity
_TOPIC_SHARPNESS = 2.0        # u_i ~ z_i ** sharpness
_TOPIC_EXPONENT = 0.7         # topic prior ~ (t + 1) ** -0.7
_DENSE_SIGNAL = 1.5
_DENSE_NOISE = 0.5
_LABEL_DISPERSION = 2.0       # negative-binomial shape of (labels per row - 1)


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

