"""Comparing methods over several data sets: average ranks, the Friedman test and the
Nemenyi critical difference (Demšar, "Statistical comparisons of classifiers over multiple
data sets", JMLR 7, 2006), and the critical-difference diagram.

Inputs are a complete ``(n_datasets, n_methods)`` table of one metric (a data set where a
method has no result cannot be ranked and must be left out by the caller, saying so).
Within a data set, rank 1 is the best method; tied methods share the mean of their ranks.

* **Friedman.** With average ranks ``R_j`` over ``N`` data sets and ``k`` methods,
  ``chi2_F = 12 N / (k (k+1)) * (sum_j R_j^2 - k (k+1)^2 / 4)`` with ``k - 1`` degrees of
  freedom, and Iman and Davenport's ``F_F = (N-1) chi2_F / (N (k-1) - chi2_F)`` with
  ``(k-1, (k-1)(N-1))`` degrees of freedom, which Demšar recommends (chi2_F is conservative).
  Without ties ``chi2_F`` equals :func:`scipy.stats.friedmanchisquare`; with ties SciPy
  applies a tie correction and Demšar's formula, used here, does not.
* **Nemenyi.** Two methods differ significantly when their average ranks differ by at least
  ``CD = q_alpha * sqrt(k (k+1) / (6 N))``, where ``q_alpha`` is the studentized range
  statistic for ``k`` groups and infinite degrees of freedom divided by ``sqrt(2)``
  (:func:`scipy.stats.studentized_range`; Demšar's Table 5 lists 1.960, 2.343, 2.569, ...
  for ``alpha = 0.05``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

__all__ = ["average_ranks", "Friedman", "friedman", "nemenyi_q", "critical_difference",
           "cliques", "plot_cd_diagram"]


def _table(scores) -> np.ndarray:
    a = np.asarray(scores, dtype=np.float64)
    if a.ndim != 2 or a.shape[0] < 1 or a.shape[1] < 2:
        raise ValueError(f"scores must be (n_datasets >= 1, n_methods >= 2); got {a.shape}")
    if not np.isfinite(a).all():
        raise ValueError("scores must be finite: leave out the data sets where a method has "
                         "no result")
    return a


def average_ranks(scores, *, higher_is_better: bool = True) -> np.ndarray:
    """Mean rank of each method (columns) over the data sets (rows); 1 is best."""
    from scipy.stats import rankdata

    a = _table(scores)
    ranks = rankdata(-a if higher_is_better else a, method="average", axis=1)
    return ranks.mean(axis=0)


@dataclass(frozen=True)
class Friedman:
    """The Friedman statistic and Iman-Davenport's F with their p-values."""

    chi2: float
    chi2_p: float
    f: float
    f_p: float
    n_datasets: int
    n_methods: int


def friedman(scores, *, higher_is_better: bool = True) -> Friedman:
    """The Friedman test on a complete (n_datasets, n_methods) table (module docstring)."""
    from scipy.stats import chi2 as chi2_dist
    from scipy.stats import f as f_dist

    a = _table(scores)
    n, k = a.shape
    r = average_ranks(a, higher_is_better=higher_is_better)
    chi2 = 12.0 * n / (k * (k + 1)) * (float(np.sum(r ** 2)) - k * (k + 1) ** 2 / 4.0)
    chi2 = max(chi2, 0.0)
    chi2_p = float(chi2_dist.sf(chi2, k - 1))
    denom = n * (k - 1) - chi2
    if n < 2 or denom <= 0:  # one data set, or every data set ranks the methods alike
        f, f_p = (math.inf, 0.0) if denom <= 0 and n >= 2 else (math.nan, math.nan)
    else:
        f = (n - 1) * chi2 / denom
        f_p = float(f_dist.sf(f, k - 1, (k - 1) * (n - 1)))
    return Friedman(chi2=chi2, chi2_p=chi2_p, f=f, f_p=f_p, n_datasets=n, n_methods=k)


def nemenyi_q(k: int, alpha: float = 0.05) -> float:
    """Critical value q_alpha of the Nemenyi test for ``k`` methods."""
    from scipy.stats import studentized_range

    if k < 2:
        raise ValueError(f"the Nemenyi test needs at least 2 methods; got {k}")
    return float(studentized_range.ppf(1.0 - alpha, k, np.inf) / math.sqrt(2.0))


def critical_difference(k: int, n_datasets: int, alpha: float = 0.05) -> float:
    """Nemenyi critical difference of average ranks for ``k`` methods on ``n_datasets``."""
    if n_datasets < 1:
        raise ValueError(f"need at least one data set; got {n_datasets}")
    return nemenyi_q(k, alpha) * math.sqrt(k * (k + 1) / (6.0 * n_datasets))


def cliques(ranks, cd: float) -> list[tuple[int, int]]:
    """Maximal runs ``(first, last)`` of methods, in order of average rank, whose ranks
    differ by less than ``cd`` (the bars of a CD diagram); indices are into the sorted
    order, runs of one method are left out."""
    r = np.sort(np.asarray(ranks, dtype=np.float64))
    runs = []
    for i in range(r.size):
        j = i
        while j + 1 < r.size and r[j + 1] - r[i] < cd:
            j += 1
        if j > i and not any(a <= i and j <= b for a, b in runs):
            runs.append((i, j))
    return runs


def plot_cd_diagram(names, ranks, cd: float, path, *, title: str = "") -> None:
    """Draw the critical-difference diagram (Demšar's Figure 1 style) to ``path``."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    order = np.argsort(ranks, kind="stable")
    r = np.asarray(ranks, dtype=np.float64)[order]
    labels = [names[i] for i in order]
    k = len(labels)
    half = (k + 1) // 2
    runs = cliques(r, cd)
    base = 0.3 + 0.12 * len(runs)  # labels start below the clique bars
    step = 0.35
    fig, ax = plt.subplots(figsize=(7, 1.0 + 0.6 * (base + half * step)))
    lo, hi = 1, max(k, 2)
    ax.set_xlim(lo - 0.5, hi + 0.5)
    ax.set_ylim(-(base + half * step + 0.1), 1.2)
    ax.hlines(0, lo, hi, color="black")
    for t in range(lo, hi + 1):
        ax.vlines(t, 0, 0.15, color="black")
        ax.text(t, 0.25, str(t), ha="center", va="bottom", fontsize=8)
    for i, (name, rank) in enumerate(zip(labels, r)):
        if i < half:
            y, x_text, ha = -(base + i * step), lo - 0.4, "left"
        else:
            y, x_text, ha = -(base + (k - 1 - i) * step), hi + 0.4, "right"
        ax.plot([rank, rank, x_text], [0, y, y], color="black", lw=0.8)
        ax.text(x_text, y + 0.03, f"{name} ({rank:.2f})", ha=ha, va="bottom", fontsize=8)
    for n, (a, b) in enumerate(runs):
        y = -0.12 - 0.12 * n
        ax.hlines(y, r[a] - 0.03, r[b] + 0.03, color="tab:red", lw=2.5)
    ax.hlines(0.85, lo, lo + cd, color="black", lw=1.5)
    ax.text(lo + cd / 2, 0.9, f"CD = {cd:.2f}", ha="center", va="bottom", fontsize=8)
    if title:
        ax.set_title(title, fontsize=9)
    ax.axis("off")
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)
