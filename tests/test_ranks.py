"""Average ranks, Friedman and Nemenyi against Demšar (2006) and SciPy."""

import math

import numpy as np
import pytest
from scipy.stats import friedmanchisquare

from mlx.ranks import (
    average_ranks,
    cliques,
    critical_difference,
    friedman,
    nemenyi_q,
    plot_cd_diagram,
)


def test_average_ranks_with_ties_and_direction():
    scores = [[0.9, 0.8, 0.8], [0.5, 0.7, 0.6]]
    np.testing.assert_allclose(average_ranks(scores), [(1 + 3) / 2, (2.5 + 1) / 2,
                                                       (2.5 + 2) / 2])
    np.testing.assert_allclose(average_ranks(scores, higher_is_better=False),
                               [(3 + 1) / 2, (1.5 + 3) / 2, (1.5 + 2) / 2])


def test_nemenyi_q_matches_demsar_table_5():
    # Demšar (2006), Table 5(a): q_0.05 for k = 2..10
    table = [1.960, 2.343, 2.569, 2.728, 2.850, 2.949, 3.031, 3.102, 3.164]
    for k, q in zip(range(2, 11), table):
        assert nemenyi_q(k) == pytest.approx(q, abs=2e-3), k
    # Table 5(a), alpha = 0.10: k = 2, 5, 10
    for k, q in ((2, 1.645), (5, 2.459), (10, 2.920)):
        assert nemenyi_q(k, alpha=0.10) == pytest.approx(q, abs=2e-3), k


def test_critical_difference_formula():
    assert critical_difference(4, 14) == pytest.approx(2.569 * math.sqrt(4 * 5 / (6 * 14)),
                                                       abs=1e-3)


def test_friedman_equals_scipy_without_ties():
    rng = np.random.default_rng(0)
    scores = rng.random((12, 5))
    result = friedman(scores)
    ref = friedmanchisquare(*scores.T)
    assert result.chi2 == pytest.approx(ref.statistic, rel=1e-12)
    assert result.chi2_p == pytest.approx(ref.pvalue, rel=1e-9)
    n, k = scores.shape
    assert result.f == pytest.approx((n - 1) * result.chi2 / (n * (k - 1) - result.chi2))


def test_friedman_iman_davenport_with_ties():
    """Demšar's formulas (no tie correction) on a table with tied ranks; SciPy's tie-corrected
    statistic is larger."""
    rows = [[4, 2, 3, 1]] * 7 + [[3, 2, 4, 1]] * 3 + [[2.5, 1, 2.5, 4]] * 2 + [[4, 3, 1, 2]] * 2
    table = -np.array(rows, dtype=float)  # higher is better: rank 1 = highest score
    n, k = table.shape
    r = np.array(rows).mean(axis=0)
    np.testing.assert_allclose(average_ranks(table), r)
    res = friedman(table)
    expected = 12 * n / (k * (k + 1)) * (np.sum(r ** 2) - k * (k + 1) ** 2 / 4)
    assert res.chi2 == pytest.approx(expected)
    assert res.f == pytest.approx((n - 1) * expected / (n * (k - 1) - expected))
    assert friedmanchisquare(*table.T).statistic > res.chi2


def test_cliques_are_maximal_runs_within_cd():
    assert cliques([1.0, 1.5, 2.4, 3.0, 4.5], 1.0) == [(0, 1), (1, 2), (2, 3)]
    assert cliques([1.0, 1.2, 1.4], 1.0) == [(0, 2)]
    assert cliques([1.0, 3.0], 1.0) == []


def test_incomplete_tables_are_refused_and_the_diagram_is_drawn(tmp_path):
    with pytest.raises(ValueError, match="scores must be finite"):
        friedman([[0.1, np.nan], [0.2, 0.3]])
    with pytest.raises(ValueError, match=r"scores must be \(n_datasets >= 1, n_methods >= 2\)"):
        average_ranks([[0.1], [0.2]])
    path = tmp_path / "cd.svg"
    plot_cd_diagram(["a", "b", "c"], [1.2, 2.0, 2.8], 1.0, path, title="t")
    assert path.read_text().lstrip().startswith("<?xml")
