"""BCS: properties the older tests left open (found by mutation testing): prediction is
``predict_iter`` rounds of dense per-row posterior updates; ``weight_precision="auto"`` is the
GCV choice for the compressed labels, checked against dense hat matrices; the label-precision
terms of the bound with digamma; the stopping rule; the divergence error; the label-precision
update of decoding for any Gamma shape; the kernel's memory bound per chunk of rows and its
silence on observed entries; the fall-back of "auto" chosen on the observed entries."""

from dataclasses import replace

import numpy as np
import pytest
from scipy.special import digamma, gammaln

from mlx.errors import DivergenceError
from mlx.methods import _auto
from mlx.methods import bcs as bcs_module
from mlx.methods._auto import PRIOR
from mlx.methods.bcs import BCS, infer_labels, label_posterior
from tests.conftest import exact_tolerance, random_multilabel


def _problem(seed=0, n=30, d=5, L=7, mask=None):
    return random_multilabel(seed, n, d, L, mask=mask)


def _dense_inference(Phi, Z, *, noise_mean, noise_cov, a, b, n_iter):
    """Per row and with dense inverses: the Gaussian posterior of y given ``z = Phi y + e``
    under the prior precisions ``E[alpha]``, then ``E[alpha] = (a + 1/2) / (b + E[y^2] / 2)``,
    ``n_iter`` times from ``E[alpha] = a / b``; the last posterior mean (tests only)."""
    k, L = Phi.shape
    out = np.empty((Z.shape[0], L))
    for i, z in enumerate(Z):
        e_alpha = np.full(L, a / b)
        for it in range(n_iter):
            prec = np.diag(e_alpha)
            mean = np.linalg.solve(prec + Phi.T @ Phi / noise_mean, Phi.T @ z / noise_mean)
            cov = np.linalg.inv(prec + Phi.T @ Phi / noise_cov)
            e_alpha = (a + 0.5) / (b + 0.5 * (mean ** 2 + np.diag(cov)))
        out[i] = mean
    return out


@pytest.mark.parametrize("predict_iter", [1, 2, 4])
def test_prediction_is_predict_iter_rounds_of_dense_posterior_updates(predict_iter):
    X, Y, observed = _problem(1, mask=0.6)
    params = dict(sigma=0.5, chi=0.4, gamma_shape=0.5, gamma_rate=0.2)
    model = BCS(rank=3, weight_precision=0.7, predict_iter=predict_iter, random_state=0,
                **params).fit(X, Y, observed=observed)
    Xt, _, _ = _problem(2, n=6)
    expected = _dense_inference(model.Phi_, Xt.toarray() @ model.W_, noise_mean=0.25 + 0.16,
                                noise_cov=0.16, a=0.5, b=0.2, n_iter=predict_iter)
    np.testing.assert_allclose(model._decision_function(Xt), expected, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(model.decision_function(Xt), expected, rtol=1e-9, atol=1e-12)


def test_infer_labels_in_pair_blocks_equals_one_block(monkeypatch):
    rng = np.random.default_rng(3)
    Phi, Z = rng.normal(size=(4, 9)), rng.normal(size=(5, 4))
    kw = dict(noise_mean=0.3, noise_cov=0.1, gamma_shape=0.5, gamma_rate=0.2, n_iter=3)
    whole = infer_labels(Phi, Z, **kw)
    expected = _dense_inference(Phi, Z, noise_mean=0.3, noise_cov=0.1, a=0.5, b=0.2, n_iter=3)
    np.testing.assert_allclose(whole, expected, rtol=1e-9, atol=1e-12)
    monkeypatch.setattr(bcs_module, "_WORK_ENTRIES", 18)          # two pairs of rows a block
    pairs = bcs_module._PairProducts(Phi)
    assert len(pairs.blocks) == 5 and pairs._stored is None       # the 10 pairs a <= b of 4
    np.testing.assert_allclose(infer_labels(Phi, Z, **kw), whole, rtol=1e-12, atol=1e-14)


def _dense_gcv(X, T, lam):
    X = X.toarray()
    n, d = X.shape
    H = X @ np.linalg.solve(X.T @ X + lam * np.eye(d), X.T)
    return np.sum((T - H @ T) ** 2) / (1 - np.trace(H) / n) ** 2


@pytest.mark.parametrize("mask", [None, 0.6])
def test_auto_weight_precision_is_the_lowest_gcv_for_the_compressed_labels(mask):
    X, Y, observed = _problem(4, n=40, mask=mask)
    model = BCS(rank=3, random_state=1).fit(X, Y, observed=observed)
    choice = model.auto_["weight_precision"]
    assert list(model.auto_)[0] == "weight_precision" and choice.procedure == "gcv"
    tau2 = 0.3 ** 2 + 0.3 ** 2
    seen = Y.toarray() * (1 if observed is None else observed.toarray() != 0)
    T = seen @ model.Phi_.T                                       # Phi y_i, observed positives
    penalties = np.array(choice.grid) * tau2
    s_max = np.linalg.eigvalsh(X.toarray().T @ X.toarray())[-1]
    assert len(penalties) == 34
    assert penalties[0] == pytest.approx(1e-10 * s_max, rel=1e-9)
    assert penalties[-1] == pytest.approx(10 * s_max, rel=1e-9)
    reference = [_dense_gcv(X, T, lam) for lam in penalties]
    np.testing.assert_allclose(choice.scores, reference, rtol=1e-7)
    assert choice.value == choice.grid[int(np.argmin(reference))]
    explicit = BCS(rank=3, weight_precision=choice.value, random_state=1).fit(
        X, Y, observed=observed)
    assert explicit.auto_ == {}
    np.testing.assert_allclose(model.W_, explicit.W_, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(model.elbo_, explicit.elbo_, rtol=1e-12)
    assert PRIOR in model.auto_ and PRIOR not in explicit.auto_  # the fall-back was chosen


def test_the_stopping_rule_is_the_first_change_at_most_tol_of_the_bound():
    X, Y, observed = _problem(5, n=40, mask=0.5)
    params = dict(rank=3, weight_precision=0.5, random_state=0)
    e = BCS(max_iter=30, tol=0, **params).fit(X, Y, observed=observed).elbo_
    changes = [abs(e[i] - e[i - 1]) / abs(e[i]) for i in range(1, len(e))]
    for tol in (changes[0] * 1.01, changes[0] * 0.99, changes[4], changes[-1] / 2):
        model = BCS(max_iter=30, tol=tol, **params).fit(X, Y, observed=observed)
        stop = next((i + 1 for i in range(1, len(e))
                     if abs(e[i] - e[i - 1]) <= tol * abs(e[i])), None)
        n = stop if stop is not None else 30
        assert model.elbo_ == e[:n] and model.n_iter_ == n
        assert model.converged_ is (stop is not None)


def test_equal_change_counts_as_converged():
    params = dict(rank=3, weight_precision=0.5, random_state=0)
    for seed in range(6, 26):          # a problem whose change some tolerance meets exactly
        X, Y, observed = _problem(seed, mask=0.5)
        e = BCS(max_iter=2, tol=0, **params).fit(X, Y, observed=observed).elbo_
        tol = exact_tolerance(abs(e[1] - e[0]), abs(e[1]))
        if tol is not None:
            break
    assert tol is not None
    model = BCS(max_iter=5, tol=tol, **params).fit(X, Y, observed=observed)
    assert model.converged_ and model.n_iter_ == 2


def test_a_non_finite_bound_raises_a_divergence_error(monkeypatch):
    X, Y, _ = _problem(7)
    monkeypatch.setattr(BCS, "_elbo", staticmethod(lambda *args, **kwargs: float("nan")))
    with pytest.raises(DivergenceError, match=r"^BCS: the variational bound became non-finite "
                                              r"at iteration 1; try larger sigma, chi or "
                                              r"weight_precision, or larger gamma_rate$"):
        BCS(rank=3, weight_precision=0.5).fit(X, Y)


def test_projection_entries_have_variance_one_over_rank():
    X, Y, _ = _problem(9)
    model = BCS(rank=4, weight_precision=0.5, random_state=3).fit(X, Y)
    expected = np.random.default_rng(3).standard_normal((4, 7)) / 2.0
    np.testing.assert_array_equal(model.Phi_, expected)


def test_the_change_is_measured_against_the_newest_bound():
    X, Y, observed = _problem(6, mask=0.5)
    params = dict(rank=3, weight_precision=0.5, random_state=0)
    e = BCS(max_iter=2, tol=0, **params).fit(X, Y, observed=observed).elbo_
    change = abs(e[1] - e[0])
    assert abs(e[0]) > abs(e[1])                                  # a negative bound rises
    tol = np.sqrt(change / abs(e[0]) * change / abs(e[1]))      # between the two readings
    assert tol * abs(e[1]) < change < tol * abs(e[0])
    model = BCS(max_iter=5, tol=tol, **params).fit(X, Y, observed=observed)
    assert model.n_iter_ > 2 and model.elbo_[:2] == e


@pytest.mark.parametrize("a,b", [(0.5, 0.2), (2.0, 0.7), (1e-6, 1e-6)])
def test_label_precision_terms_of_the_bound(a, b):
    """``E_q[log N(y; 0, 1/alpha) + log Gamma(alpha; a, b)] + H[q(alpha)]`` with
    ``q(alpha) = Gamma(a + 1/2, b + E[y^2] / 2)``, term by term with digamma."""
    e_y2 = np.array([0.0, 0.3, 1.0, 4.0])
    a_hat, b_hat = a + 0.5, b + 0.5 * e_y2
    e_alpha, e_log_alpha = a_hat / b_hat, digamma(a_hat) - np.log(b_hat)
    expected = (-0.5 * np.log(2 * np.pi) + 0.5 * e_log_alpha - 0.5 * e_alpha * e_y2
                + a * np.log(b) - gammaln(a) + (a - 1) * e_log_alpha - b * e_alpha
                + a_hat - np.log(b_hat) + gammaln(a_hat) + (1 - a_hat) * digamma(a_hat))
    np.testing.assert_allclose(bcs_module._alpha_bound(e_y2, a, b), expected, rtol=1e-10)


def test_label_posterior_without_covariance_returns_the_mean_only():
    rng = np.random.default_rng(4)
    Phi, resid = rng.normal(size=(3, 6)), rng.normal(size=(4, 3))
    inv_alpha = rng.uniform(0.1, 2.0, size=(4, 6))
    full = label_posterior(Phi, resid, inv_alpha, noise_mean=0.4, noise_cov=0.2)
    mean, var, logdet, trace = label_posterior(Phi, resid, inv_alpha, noise_mean=0.4,
                                               noise_cov=0.2, with_cov=False)
    assert var is None and logdet is None and trace is None
    np.testing.assert_array_equal(mean, full[0])


@pytest.mark.parametrize("a,b", [(2.0, 0.7), (1e-3, 0.05)])
def test_decoding_updates_label_precisions_with_the_gamma_posterior(a, b):
    """``E[alpha] = (a + 1/2) / (b + E[y^2] / 2)`` between rounds, for shapes other than 1/2
    (where dividing by ``a + 1/2`` and multiplying by it agree)."""
    rng = np.random.default_rng(11)
    Phi, Z = rng.normal(size=(3, 7)), rng.normal(size=(4, 3))
    for n_iter in (1, 2, 3):
        got = infer_labels(Phi, Z, noise_mean=0.3, noise_cov=0.1, gamma_shape=a, gamma_rate=b,
                           n_iter=n_iter)
        expected = _dense_inference(Phi, Z, noise_mean=0.3, noise_cov=0.1, a=a, b=b,
                                    n_iter=n_iter)
        np.testing.assert_allclose(got, expected, rtol=1e-9, atol=1e-12)


def test_the_first_decoding_round_shares_one_factorisation_across_rows():
    """With every entry at the prior variance c, the posterior is label_posterior's with
    inv_alpha = c everywhere (one rank x rank system for all rows)."""
    from mlx.methods.bcs import _uniform_posterior

    rng = np.random.default_rng(13)
    Phi, Z = rng.normal(size=(4, 9)), rng.normal(size=(6, 4))
    for c in (0.05, 3.0):
        mean, var, _, _ = label_posterior(Phi, Z, np.full((6, 9), c), noise_mean=0.4,
                                          noise_cov=0.2)
        got_mean, got_var = _uniform_posterior(Phi, Z, c, noise_mean=0.4, noise_cov=0.2,
                                               with_cov=True)
        np.testing.assert_allclose(got_mean, mean, rtol=1e-11, atol=1e-13)
        np.testing.assert_allclose(got_var, var, rtol=1e-11, atol=1e-13)
        only, none = _uniform_posterior(Phi, Z, c, noise_mean=0.4, noise_cov=0.2,
                                        with_cov=False)
        assert none is None
        np.testing.assert_array_equal(only, got_mean)


@pytest.mark.parametrize("with_cov", [True, False])
def test_label_posterior_work_arrays_stay_within_the_chunk_budget(monkeypatch, with_cov):
    """Rows are processed in chunks of ``_WORK_ENTRIES`` entries: beyond its outputs the
    kernel allocates a few chunks' worth, never an array over every row (one of shape
    (n_rows, rank) alone would take n_rows * rank * 8 = 64 kB here)."""
    import tracemalloc

    monkeypatch.setattr(bcs_module, "_WORK_ENTRIES", 64)          # 4 rows per chunk
    rng = np.random.default_rng(12)
    k, L, n = 4, 8, 2000
    Phi, resid = rng.normal(size=(k, L)), rng.normal(size=(n, k))
    inv_alpha = rng.uniform(0.1, 2.0, size=(n, L))
    tracemalloc.start()
    try:
        out = label_posterior(Phi, resid, inv_alpha, noise_mean=0.4, noise_cov=0.2,
                              with_cov=with_cov)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    outputs = sum(o.nbytes for o in out if o is not None)
    assert peak - outputs < 32_000
    expected = label_posterior(Phi, resid[-3:], inv_alpha[-3:], noise_mean=0.4,
                               noise_cov=0.2, with_cov=with_cov)
    for got, ref in zip(out, expected):
        if ref is not None:
            np.testing.assert_allclose(got[-3:], ref, rtol=1e-12, atol=1e-14)


def test_label_posterior_of_rows_with_observed_entries_warns_nothing():
    """The log of a prior variance of 0 (an observed entry) is never taken into a warning."""
    import warnings

    rng = np.random.default_rng(13)
    Phi, resid = rng.normal(size=(3, 6)), rng.normal(size=(4, 3))
    inv_alpha = rng.uniform(0.1, 2.0, size=(4, 6)) * (rng.random((4, 6)) < 0.5)
    inv_alpha[0] = 0.0
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        _, _, logdet, _ = label_posterior(Phi, resid, inv_alpha, noise_mean=0.4, noise_cov=0.2)
    assert np.all(np.isfinite(logdet)) and logdet[0] == pytest.approx(0.0, abs=1e-12)


def test_auto_with_missing_labels_chooses_the_fallback_on_observed_entries():
    """With missing labels the fallback to the label frequencies is chosen by a fit at the
    chosen ``weight_precision`` on the hold-out split's fit rows with their mask, scored on
    the observed held-out entries; read without the mask, the same data choose otherwise."""
    X, Y, observed = _problem(2, n=60, d=5, L=6, mask=0.5)
    model = BCS(rank=3, random_state=0).fit(X, Y, observed=observed)
    lam = model.auto_["weight_precision"].value

    def reference(mask):
        ref = BCS(rank=3, weight_precision=lam, random_state=0).fit(X, Y, observed=observed)
        ref.auto_ = {}
        fit, val = _auto.holdout_split(ref, X.shape[0])
        cand = BCS(rank=3, weight_precision=lam, random_state=0).fit(
            X[fit], Y[fit], observed=None if mask is None else mask[fit])
        _auto.choose_prior_weight(ref, cand, X, Y, mask, "multilabel", (fit, val))
        return ref

    masked, unmasked = reference(observed), reference(None)
    assert list(model.auto_) == ["weight_precision", *masked.auto_]
    for name, choice in masked.auto_.items():
        got = model.auto_[name]
        assert replace(got, scores=()) == replace(choice, scores=())
        np.testing.assert_array_equal(got.scores, choice.scores)     # NaN: not scored
    np.testing.assert_array_equal(model.prior_offset_[1], masked.prior_offset_[1])
    # ... which matters here (the model's own ranking, against the frequencies unmasked)
    assert unmasked.auto_[PRIOR].value != model.auto_[PRIOR].value


@pytest.mark.parametrize("work", [1 << 22, 7 * 4, 7, 1])
def test_pair_products_are_every_row_pair_by_brute_force(monkeypatch, work):
    """``P[p, l] = Phi[a_p, l] Phi[b_p, l]`` over the 15 pairs ``a_p <= b_p`` of 5 rows, each
    once, with weight 1 on the diagonal and 2 off it, in blocks of at most ``_WORK_ENTRIES /
    n_labels`` pairs: stored as one block when it fits the work budget, built on demand
    otherwise."""
    monkeypatch.setattr(bcs_module, "_WORK_ENTRIES", work)
    Phi = np.random.default_rng(14).normal(size=(5, 7))
    pairs = bcs_module._PairProducts(Phi)
    got = {}
    for a, b, w, P in pairs:
        assert P.shape == (a.size, 7) and a.size <= max(1, work // 7)
        for i in range(a.size):
            assert (int(a[i]), int(b[i])) not in got
            got[int(a[i]), int(b[i])] = (w[i], P[i])
    assert sorted(got) == [(a, b) for a in range(5) for b in range(a, 5)]
    for (a, b), (w, row) in got.items():
        assert w == (1.0 if a == b else 2.0)
        np.testing.assert_array_equal(row, [Phi[a, c] * Phi[b, c] for c in range(7)])
    assert (pairs._stored is not None) == (len(pairs.blocks) == 1)
