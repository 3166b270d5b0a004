"""What the ``auto`` walks share between their fits: the results are those of cold fits."""

import numpy as np
import scipy.sparse as sp

from mlx.methods import _auto
from mlx.methods.leml import LEML


def _data(seed=0, n=150, d=8, L=6):
    rng = np.random.default_rng(seed)
    X = sp.csr_matrix(rng.random((n, d)))
    S = X @ rng.standard_normal((d, L)) + 0.5 * rng.standard_normal((n, L))
    return X, sp.csr_matrix((S > np.quantile(S, 0.7, axis=0)).astype(float))


def test_leml_walk_starts_each_fit_from_one_init_per_row_set_and_equals_cold_fits(monkeypatch):
    X, Y = _data()
    calls = []
    real = LEML._init_H
    monkeypatch.setattr(LEML, "_init_H", lambda self, *a: calls.append(1) or real(self, *a))
    m = LEML(rank=3, random_state=0).fit(X, Y)
    assert len(calls) == 2                      # the walk's fit rows, then all rows
    choice = m.auto_["l2_reg"]
    fit, val = _auto.holdout_split(m, X.shape[0])
    scored = [(v, s) for v, s in zip(choice.grid, choice.scores) if np.isfinite(s)]
    assert len(scored) >= 3
    monkeypatch.setattr(LEML, "_init_H", real)
    for value, score in scored:
        cold = LEML(rank=3, random_state=0, l2_reg=value)._fit(X[fit], Y[fit])
        assert _auto.validation_score(cold, X[val], Y[val], "multilabel") == score
    cold = LEML(rank=3, random_state=0, l2_reg=choice.value).fit(X, Y)
    np.testing.assert_array_equal(m._decision_function(X), cold._decision_function(X))


def test_the_walk_scores_candidates_on_at_most_prior_cells_held_out_scores(monkeypatch):
    X, Y = _data()
    monkeypatch.setattr(_auto, "PRIOR_CELLS", 60)                  # 10 rows of 6 labels
    rows = []
    real = _auto.validation_score
    monkeypatch.setattr(_auto, "validation_score",
                        lambda cand, Xv, Yv, task: rows.append(Xv.shape[0]) or real(cand, Xv, Yv,
                                                                                    task))
    m = LEML(rank=3, random_state=0).fit(X, Y)
    fit, val = _auto.holdout_split(m, X.shape[0])
    assert len(val) == 30 and rows and set(rows) == {10}
