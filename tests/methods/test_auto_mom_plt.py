"""``auto`` for MoM's smoothing and PLT's ``c``: chosen on a hold-out split of the training
rows like every other method's scale, so that both can fall back towards the constant
predictor; MoM re-scores one fit for every smoothing instead of fitting again."""

import numpy as np
import pytest
import scipy.sparse as sp

from mlx.data.synthetic import sample_corpus
from mlx.errors import DivergenceError
from mlx.methods import _auto
from mlx.methods import mom as mom_module
from mlx.methods.mom import MoM


def _corpus(seed=3):
    X, Y, _ = sample_corpus(400, 30, 5, 3, doc_length=15.0, seed=seed)
    return X, Y


def test_mom_auto_fits_the_hold_out_rows_once_and_every_row_once(monkeypatch):
    calls = []
    original = MoM._fit_moments

    def spy(self, data, t0):
        calls.append(data.X.shape[0])
        return original(self, data, t0)

    monkeypatch.setattr(MoM, "_fit_moments", spy)
    X, Y = _corpus()
    m = MoM(rank=3, random_state=0).fit(X, Y)
    choice = m.auto_["smoothing"]
    assert calls == [320, 400]                         # the 80% fit rows, then every row
    assert choice.grid == tuple(_auto.log_grid(1e-3))
    assert sum(np.isfinite(choice.scores)) >= 3        # several values scored on one fit
    assert m.smoothing == "auto" and m.smoothing_ == choice.value


def test_mom_rescored_copy_scores_as_a_fit_at_that_smoothing():
    X, Y = _corpus(seed=4)
    base = MoM(rank=3, smoothing=1e-3, random_state=0).fit(X, Y)
    for beta in (0.0, 1e-5, 0.1, 10.0):
        again = mom_module._smoothed(base, beta)
        fresh = MoM(rank=3, smoothing=beta, random_state=0).fit(X, Y)
        assert again.smoothing_ == beta and base.smoothing_ == 1e-3     # the base is intact
        for rule in ("paper", "code"):
            again.prediction = fresh.prediction = rule
            np.testing.assert_allclose(again.decision_function(X), fresh.decision_function(X),
                                       rtol=1e-12, atol=0)


def test_mom_auto_scores_as_the_final_fit_at_the_chosen_value_plus_the_fallback():
    X, Y = _corpus(seed=5)
    m = MoM(rank=3, random_state=0).fit(X, Y)
    fixed = MoM(rank=3, smoothing=m.smoothing_, random_state=0).fit(X, Y)
    scale, offset = m.prior_offset_
    np.testing.assert_allclose(m.decision_function(X),
                               scale * fixed.decision_function(X) + offset, rtol=1e-12)


def test_mom_auto_checks_the_rank_on_every_row_and_refuses_masks():
    X, Y = _corpus()
    with pytest.raises(ValueError, match=r"valid: 1 <= rank <= 30$"):
        MoM(rank=31).fit(X, Y)
    observed = sp.csr_matrix(np.ones(Y.shape))
    observed[0, 0] = 0
    observed.eliminate_zeros()
    with pytest.raises(ValueError, match="MoM does not support missing labels"):
        MoM(rank=3).fit(X, Y, observed=observed)


def test_mom_and_plt_rank_as_the_constant_on_noise():
    # Features unrelated to the labels: with auto, both rank fresh rows as the constant does
    # (the most frequent label first) and predict almost nothing; PLT at napkinXC's c = 10
    # does neither.
    pytest.importorskip("napkinxc")
    from mlx.methods.xmc import PLT

    rng = np.random.default_rng(7)
    n, L = 500, 5
    X = sp.csr_matrix(rng.poisson(1.0, size=(n, 40)).astype(float))
    Y = sp.csr_matrix((rng.random((n, L)) < np.array([0.5, 0.35, 0.25, 0.15, 0.1])).astype(float))
    fresh = X[300:]

    def top_is_frequent_and_predicted(model):
        model.fit(X[:300], Y[:300])
        scores = model.decision_function(fresh)
        return (scores.argmax(axis=1) == 0).mean(), (scores > model.threshold).mean()

    for model in (MoM(rank=3, random_state=0), PLT(random_state=0)):
        top, predicted = top_is_frequent_and_predicted(model)
        assert top >= 0.95 and predicted <= 0.01, (type(model).__name__, top, predicted)
        assert _auto.PRIOR in model.auto_
    top, predicted = top_is_frequent_and_predicted(PLT(c=10.0, random_state=0))
    assert top < 0.9 and predicted > 0.05


def test_plt_auto_records_c_and_scores_as_a_fit_at_it():
    pytest.importorskip("napkinxc")
    from mlx.methods.xmc import PLT

    rng = np.random.default_rng(8)
    n, d, L = 200, 12, 4
    X = sp.csr_matrix(rng.random((n, d)))
    Y = sp.csr_matrix((X @ rng.standard_normal((d, L)) > 0.5).astype(float))
    m = PLT(random_state=0).fit(X, Y)
    choice = m.auto_["c"]
    assert choice.grid == tuple(_auto.log_grid(10.0)) and m.c_ == choice.value
    fixed = PLT(c=m.c_, random_state=0).fit(X, Y)
    scale, offset = m.prior_offset_
    np.testing.assert_allclose(m.decision_function(X),
                               scale * fixed.decision_function(X) + offset, rtol=1e-12)


def test_plt_model_napkinxc_cannot_read_back_is_a_divergence(monkeypatch):
    pytest.importorskip("napkinxc")
    from mlx.methods.xmc import PLT

    def unreadable(self, path):
        raise ValueError("Unknown loss function type")

    monkeypatch.setattr(PLT, "_load", unreadable)
    X, Y = _corpus()
    m = PLT(c=0.01, random_state=0)
    with pytest.raises(DivergenceError, match=r"^PLT: napkinXC could not read back the model it "
                       r"trained with c=0\.01 \(Unknown loss function type\); set c to another "
                       r"value$"):
        m.fit(X, Y)
    assert not hasattr(m, "model_files_")


def test_mom_auto_with_a_rank_only_every_row_allows_uses_the_grid_middle_and_says_so():
    X, Y, _ = sample_corpus(10, 30, 3, 2, doc_length=15.0, seed=9)
    m = MoM(rank=9, random_state=0).fit(X, Y)             # the 8 fit rows allow rank 8 at most
    choice = m.auto_["smoothing"]
    assert choice.value == 1e-3 and m.smoothing_ == 1e-3
    assert choice.procedure.startswith("unvalidated (the middle of 1e-07..10): the 80% fit rows "
                                       "of a hold-out split are too few (MoM: rank=9 is larger")
