"""The label-frequency fallback of GCV-path methods on leave-one-out scores: each row's score
from the other rows, against refits without the row."""

import numpy as np
import pytest
import scipy.sparse as sp

from mlx.methods import _auto
from mlx.methods.bcs import BCS
from mlx.methods.br import BR
from mlx.methods.cplst import CPLST
from mlx.numerics.ridge import ridge


def _data(seed=0, n=60, d=6, L=4):
    rng = np.random.default_rng(seed)
    X = sp.csr_matrix(rng.random((n, d)))
    W = rng.standard_normal((d, L))
    S = X @ W + 0.5 * rng.standard_normal((n, L))
    Y = sp.csr_matrix((S > np.quantile(S, 0.7, axis=0)).astype(float))      # 30% positives
    return X, Y


def _captured(monkeypatch):
    """Run the fallback as the fit does and keep the rows and leave-one-out scores it saw."""
    seen = {}
    real = _auto.loo_prior_weight

    def spy(method, X, Y, loo_scores, **kw):
        def scores(rows):
            seen["rows"], seen["F"] = rows, loo_scores(rows)
            return seen["F"]
        return real(method, X, Y, scores, **kw)

    for module in ("mlx.methods.br", "mlx.methods.cplst", "mlx.methods.bcs"):
        monkeypatch.setattr(f"{module}.loo_prior_weight", spy)
    return seen


def test_br_squared_scores_each_row_as_a_fit_without_it(monkeypatch):
    seen = _captured(monkeypatch)
    X, Y = _data()
    br = BR(loss="squared").fit(X, Y)
    lam = br.auto_["l2_reg"].value
    fit, val = _auto.holdout_split(br, 60)
    np.testing.assert_array_equal(seen["rows"], val)        # the rows a hold-out split holds out
    assert br.auto_["prior_weight"].procedure == "holdout"
    for j, i in enumerate(seen["rows"][:4]):
        keep = np.arange(X.shape[0]) != i
        ref = BR(loss="squared", l2_reg=lam).fit(X[keep], Y[keep])
        np.testing.assert_allclose(seen["F"][j], ref._decision_function(X[i]).ravel(),
                                   rtol=1e-7, atol=1e-9)


def test_bcs_decodes_each_rows_compressed_prediction_from_the_other_rows(monkeypatch):
    seen = _captured(monkeypatch)
    X, Y = _data(1)
    bcs = BCS(rank=3, random_state=5).fit(X, Y)
    lam = bcs.auto_["weight_precision"].value
    for j, i in enumerate(seen["rows"][:3]):
        keep = np.arange(X.shape[0]) != i
        ref = BCS(rank=3, random_state=5, weight_precision=lam).fit(X[keep], Y[keep])
        np.testing.assert_allclose(seen["F"][j], ref._decision_function(X[i]).ravel(),
                                   rtol=1e-6, atol=1e-9)


def test_at_most_prior_cells_scores_are_kept_from_rows_at_random(monkeypatch):
    seen = _captured(monkeypatch)
    monkeypatch.setattr(_auto, "PRIOR_CELLS", 40)                  # 10 rows of 4 labels
    X, Y = _data(5)
    BR(loss="squared", random_state=3).fit(X, Y)
    rows = seen["rows"]
    want = np.sort(np.random.default_rng(3).permutation(60)[:10])
    np.testing.assert_array_equal(rows, want)
    assert seen["F"].shape == (10, 4)


def test_bcs_decodes_at_most_its_row_bound(monkeypatch):
    seen = _captured(monkeypatch)
    monkeypatch.setattr("mlx.methods.bcs.LOO_DECODE_ROWS", 5)
    X, Y = _data(2)
    BCS(rank=3).fit(X, Y)
    assert len(seen["rows"]) == 5 and len(set(seen["rows"])) == 5


@pytest.mark.parametrize("n, d", [(60, 6), (12, 30)], ids=["primal", "dual"])
def test_cplst_scores_each_row_by_the_ridge_without_it_and_the_projection_held(monkeypatch,
                                                                                n, d):
    seen = _captured(monkeypatch)
    X, Y = _data(3, n=n, d=d)
    cp = CPLST(rank=2).fit(X, Y)
    lam = cp.auto_["l2_reg"].value
    Yd = Y.toarray()
    T = (Yd - Yd.mean(axis=0)) @ cp.H_ @ cp.H_.T
    for j, i in enumerate(seen["rows"]):
        keep = np.arange(n) != i
        ref = (X[i] @ ridge(X[keep], T[keep], lam)).ravel() + Yd[keep].mean(axis=0)
        np.testing.assert_allclose(seen["F"][j], ref, rtol=1e-7, atol=1e-9)


def test_the_constant_is_scored_by_the_other_rows_frequencies(monkeypatch):
    X, Y = _data(4)
    got = {}
    monkeypatch.setattr(_auto, "_choose_weight",
                        lambda method, F, Yv, prior, full, threshold, spread:
                        got.update(prior=prior, Yv=Yv.toarray(), full=full))
    _auto.loo_prior_weight(BR(loss="squared"), X, Y, lambda rows: np.zeros((len(rows), 4)))
    n = X.shape[0]
    pos = np.asarray(Y.sum(axis=0)).ravel()
    np.testing.assert_allclose(got["prior"], np.log((pos - got["Yv"] + 1) / (n + 1)))
    np.testing.assert_allclose(got["full"], np.log((pos + 1) / (n + 2)))
