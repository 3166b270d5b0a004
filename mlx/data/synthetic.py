"""Tiny deterministic data generators for tests and smoke configs.

Every draw comes from ``np.random.default_rng(seed)``; no global random state is touched, and
the same arguments always give the same matrices.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from mlx.data.dataset import Dataset, Split, canonical_csr

__all__ = ["make_low_rank_multilabel", "make_multiclass", "memory_bytes", "sample_corpus"]


def memory_bytes(task: str, params: dict) -> int:
    """What generating ``params`` (the generator's keyword arguments) takes in memory, about:
    the generators draw dense ``(n, d)`` and ``(n, L)`` arrays (a few float copies of each)
    and return them as CSR, so 32 bytes per cell of each, rounded up."""
    n = int(params.get("n_samples", 200)) + int(params.get("n_test", 100))
    width = int(params.get("n_features", 50 if task == "multilabel" else 10))
    width += int(params.get("n_labels" if task == "multilabel" else "n_classes",
                            20 if task == "multilabel" else 4))
    return 32 * n * width


def _check_int(name: str, value, minimum: int) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < minimum:
        raise ValueError(f"{name} must be an int >= {minimum}, got {value!r}")
    return int(value)


def _check_float(name: str, value, low: float, high: float, *, low_open: bool,
                 high_open: bool) -> float:
    ok = isinstance(value, (int, float, np.floating)) and not isinstance(value, bool)
    if ok:
        value = float(value)
        ok = (value > low if low_open else value >= low) and \
             (value < high if high_open else value <= high)
    if not ok:
        lb, rb = "(" if low_open else "[", ")" if high_open else "]"
        raise ValueError(f"{name} must be a float in {lb}{low}, {high}{rb}, got {value!r}")
    return value


def make_low_rank_multilabel(n_samples: int = 200, n_features: int = 50, n_labels: int = 20,
                             rank: int = 5, *, n_test: int = 100, density: float = 0.2,
                             positive_fraction: float = 0.1, label_noise: float = 0.0,
                             seed: int = 0, name: str = "synthetic") -> Split:
    """A multi-label problem with a planted low-rank linear model.

    Model::

        X[i, j] ~ Uniform(0, 1] with probability ``density`` (else 0; every row gets at
                  least one non-zero feature)
        W* ~ N(0, 1)^(n_features x rank),  H* ~ N(0, 1)^(n_labels x rank)
        S  = X W* H*^T                                  (n_rows, n_labels)
        t_l = (1 - positive_fraction) quantile of S[:, l] over the training rows
        Y[i, l] = 1  if S[i, l] > t_l,  and also for l = argmax_l (S[i, l] - t_l)

    so every row has at least one label (the one whose score is furthest above, or least
    below, its threshold) and about ``positive_fraction`` of each label's training entries
    are positive. With ``label_noise`` > 0 each entry of Y is then flipped independently with
    that probability (rows left empty get their argmax label back).

    Parameters
    ----------
    n_samples : int
        Training rows.
    n_features, n_labels, rank : int
    n_test : int
        Test rows, drawn from the same model (thresholds come from the training rows).
    density : float in (0, 1]
    positive_fraction : float in (0, 1)
    label_noise : float in [0, 0.5)
    seed : int
    name : str

    Returns
    -------
    Split
        ``train`` with ``n_samples`` rows and ``test`` with ``n_test`` rows; ``X`` of shape
        (n_rows, n_features) and ``Y`` of shape (n_rows, n_labels), canonical CSR.
    """
    n_samples = _check_int("n_samples", n_samples, 1)
    n_features = _check_int("n_features", n_features, 1)
    n_labels = _check_int("n_labels", n_labels, 1)
    rank = _check_int("rank", rank, 1)
    n_test = _check_int("n_test", n_test, 0)
    density = _check_float("density", density, 0.0, 1.0, low_open=True, high_open=False)
    positive_fraction = _check_float("positive_fraction", positive_fraction, 0.0, 1.0,
                                     low_open=True, high_open=True)
    label_noise = _check_float("label_noise", label_noise, 0.0, 0.5, low_open=False,
                               high_open=True)
    seed = _check_int("seed", seed, 0)

    rng = np.random.default_rng(seed)
    n = n_samples + n_test
    rows = np.arange(n)
    # Draws happen in a fixed order whatever the options, so e.g. X does not depend on
    # label_noise.
    present = rng.random((n, n_features)) < density
    present[rows, rng.integers(n_features, size=n)] = True
    X = np.where(present, 1.0 - rng.random((n, n_features)), 0.0)
    W = rng.standard_normal((n_features, rank))
    H = rng.standard_normal((n_labels, rank))
    flips = rng.random((n, n_labels)) < label_noise

    S = X @ W @ H.T                                                  # (n, L)
    thresholds = np.quantile(S[:n_samples], 1.0 - positive_fraction, axis=0)
    margin = S - thresholds
    best = np.argmax(margin, axis=1)
    Y = margin > 0
    Y[rows, best] = True
    if label_noise > 0:
        Y ^= flips
        empty = ~Y.any(axis=1)
        Y[rows[empty], best[empty]] = True

    def part(sl):
        return Dataset(X=canonical_csr(X[sl]), Y=canonical_csr(Y[sl].astype(np.float64)),
                       name=name, task="multilabel")

    return Split(train=part(slice(0, n_samples)), test=part(slice(n_samples, n)), name=name)


def make_multiclass(n_samples: int = 200, n_features: int = 10, n_classes: int = 4, *,
                    n_test: int = 100, class_sep: float = 2.0, seed: int = 0,
                    name: str = "synthetic-multiclass") -> Split:
    """Gaussian blobs: class ``c`` has centre ``class_sep * m_c`` with ``m_c ~ N(0, I)``;
    rows are ``centre + N(0, I)``; classes are drawn uniformly.

    Returns
    -------
    Split with ``task="multiclass"``: dense ``X`` stored as CSR, (n_rows, n_features), and
    one-hot ``Y``, (n_rows, n_classes); ``label_names`` are ``"0".."K-1"``.
    """
    n_samples = _check_int("n_samples", n_samples, 1)
    n_features = _check_int("n_features", n_features, 1)
    n_classes = _check_int("n_classes", n_classes, 2)
    n_test = _check_int("n_test", n_test, 0)
    class_sep = _check_float("class_sep", class_sep, 0.0, np.inf, low_open=False,
                             high_open=True)
    seed = _check_int("seed", seed, 0)

    rng = np.random.default_rng(seed)
    n = n_samples + n_test
    centres = class_sep * rng.standard_normal((n_classes, n_features))
    y = rng.integers(n_classes, size=n)
    X = centres[y] + rng.standard_normal((n, n_features))
    Y = sp.csr_matrix((np.ones(n), y, np.arange(n + 1)), shape=(n, n_classes))
    names = tuple(str(c) for c in range(n_classes))

    def part(sl):
        return Dataset(X=canonical_csr(X[sl]), Y=canonical_csr(Y[sl]), name=name,
                       task="multiclass", label_names=names)

    return Split(train=part(slice(0, n_samples)), test=part(slice(n_samples, n)), name=name)


def sample_corpus(n_samples: int, n_features: int, n_labels: int, n_topics: int, *,
                  doc_length: float = 50.0, labels_per_doc: float = 3.0,
                  word_concentration: float = 0.1, label_concentration: float = 0.1,
                  prior=None, counts: bool = True, seed=None, truth=None):
    """Documents drawn from MoM's model (:class:`mlx.methods.mom.MoM`): ``h ~ pi``, word
    tokens i.i.d. from ``P[v|h]``.

    Each document draws ``h`` from ``pi`` (uniform unless ``prior`` is given), a length
    ``m ~ 3 + Poisson(doc_length - 3)`` and ``m`` word tokens i.i.d. from ``mu_h = P[v|h]``
    (topics drawn from a symmetric Dirichlet with ``word_concentration``); ``X`` holds the
    token counts (``counts=True``) or their occurrence pattern. Label ``l`` is present
    independently with probability ``r_hl = min(1, labels_per_doc * gamma_hl)`` (``gamma_h``
    from a symmetric Dirichlet with ``label_concentration``), so ``P[l|h] = r_h / sum(r_h)``
    exactly. Pass ``truth`` (a previous result's third element) to draw more documents from
    the same model.

    Returns
    -------
    X : csr_matrix of shape (n_samples, n_features)
    Y : csr_matrix of shape (n_samples, n_labels)
    truth : dict with ``pi`` (K,), ``words`` (n_features, K), ``labels`` (n_labels, K) and
        ``topic`` (n_samples,), the latent state of each document.
    """
    rng = np.random.default_rng(seed)
    K = n_topics
    if truth is None:
        pi = np.full(K, 1.0 / K) if prior is None else np.asarray(prior, dtype=float)
        mu = rng.dirichlet(np.full(n_features, word_concentration), size=K).T
        gamma = rng.dirichlet(np.full(n_labels, label_concentration), size=K).T
        r = np.minimum(1.0, labels_per_doc * gamma)
        truth = {"pi": pi / pi.sum(), "words": mu, "labels": r / r.sum(axis=0),
                 "presence": r}
    pi, mu, r = truth["pi"], truth["words"], truth["presence"]
    h = rng.choice(K, size=n_samples, p=pi)
    m = 3 + rng.poisson(max(doc_length - 3.0, 0.0), size=n_samples)
    rows, cols = [], []
    for k in range(K):
        docs = np.flatnonzero(h == k)
        if docs.size == 0:
            continue
        cdf = np.cumsum(mu[:, k])
        cdf /= cdf[-1]
        lengths = m[docs]
        tokens = np.searchsorted(cdf, rng.random(int(lengths.sum())), side="right")
        rows.append(np.repeat(docs, lengths))
        cols.append(np.minimum(tokens, n_features - 1))
    rows = np.concatenate(rows) if rows else np.zeros(0, dtype=np.int64)
    cols = np.concatenate(cols) if cols else np.zeros(0, dtype=np.int64)
    X = sp.csr_matrix((np.ones(rows.size), (rows, cols)), shape=(n_samples, n_features))
    X.sum_duplicates()
    if not counts:
        X.data[:] = 1.0
    Ybool = rng.random((n_samples, n_labels)) < r[:, h].T
    Y = sp.csr_matrix(Ybool.astype(np.float64))
    return X, Y, {**truth, "topic": h}
