"""``auto`` by a hold-out walk: the split, ties, unscored and diverged values (properties the
older tests left open, found by mutation testing). Through BR's ``C='auto'`` with a fixed
validation score, as tests/methods/test_auto.py does."""

import numpy as np
import pytest
import scipy.sparse as sp

from mlx.errors import DivergenceError
from mlx.methods import _auto
from mlx.methods.br import BR


def _data(seed=0, n=47, d=6, L=4):
    rng = np.random.default_rng(seed)
    X = sp.csr_matrix(rng.random((n, d)))
    Y = sp.csr_matrix((X @ rng.standard_normal((d, L)) > 0.3).astype(float))
    return X, Y


def test_a_flat_score_keeps_the_middle_and_leaves_the_untried_unscored(monkeypatch):
    seen = []

    def score(method, X, Y, task):
        seen.append((method.C, X.shape[0], Y.shape[0]))
        return 0.5

    monkeypatch.setattr(_auto, "validation_score", score)
    X, Y = _data()
    choice = BR().fit(X, Y).auto_["C"]
    mid = len(choice.grid) // 2
    assert choice.value == choice.grid[mid] and choice.procedure == "holdout"
    # Ties stay put: the middle and both neighbours are scored, on round(0.2 * 47) = 9 rows.
    assert seen == [(choice.grid[mid], 9, 9), (choice.grid[mid - 1], 9, 9),
                    (choice.grid[mid + 1], 9, 9)]
    assert [i for i, s in enumerate(choice.scores) if not np.isnan(s)] == [mid - 1, mid, mid + 1]
    assert choice.note() == ""


def test_the_holdout_rows_are_drawn_from_random_state(monkeypatch):
    rows = []

    def score(method, X, Y, task):
        rows.append(X.toarray()[:, 0].tolist())
        return 0.5

    monkeypatch.setattr(_auto, "validation_score", score)
    X, Y = _data()
    BR(random_state=3).fit(X, Y)
    BR(random_state=3).fit(X, Y)
    BR(random_state=4).fit(X, Y)
    BR().fit(X, Y)                                   # None draws as 0
    BR(random_state=0).fit(X, Y)
    assert rows[0] == rows[3] and rows[0] != rows[6]
    assert rows[9] == rows[12] and rows[9] != rows[0]
    perm = np.random.default_rng(3).permutation(47)
    assert rows[0] == X.toarray()[np.sort(perm[:9]), 0].tolist()


def test_a_diverged_value_scores_below_the_others_and_is_recorded_as_nan(monkeypatch):
    tried = []

    def score(method, X, Y, task):
        tried.append(method.C)
        if method.C > 1.5:
            raise DivergenceError("diverged")
        return -1.0 - abs(np.log10(method.C))         # best at the middle, 1

    monkeypatch.setattr(_auto, "validation_score", score)
    X, Y = _data()
    choice = BR().fit(X, Y).auto_["C"]
    mid = len(choice.grid) // 2
    assert tried == [1.0, 0.1, 10.0] and choice.value == choice.grid[mid] == 1.0
    assert choice.scores[mid - 1:mid + 2][:2] == (-2.0, -1.0)
    assert np.isnan(choice.scores[mid + 1])


def test_every_value_diverging_is_an_error_naming_the_grid(monkeypatch):
    def score(method, X, Y, task):
        raise DivergenceError("diverged")

    monkeypatch.setattr(_auto, "validation_score", score)
    X, Y = _data()
    with pytest.raises(DivergenceError) as exc:
        BR().fit(X, Y)
    assert str(exc.value) == ("BR: every C tried by auto (0.0001..10000) diverged; set C")


def test_a_single_row_cannot_be_split():
    X, Y = _data(n=2)
    with pytest.raises(ValueError) as exc:
        BR(loss="logistic").fit(X[:1], Y[:1])
    assert "needs at least 2 training rows for its hold-out split (n_samples = 1); set C" in \
        str(exc.value)
