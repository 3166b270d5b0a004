"""MoM (spectral latent-variable model): recovery of the generative model, prediction rules
and the documented input rules (its numerical parts are tested in tests/numerics:
test_moments.py, test_tensor_power.py, test_eigen.py).

The shared contract battery (tests/methods/test_common.py) covers parameters, batching,
determinism, degenerate data and input errors.
"""

from __future__ import annotations

import textwrap

import numpy as np
import pytest
import scipy.sparse as sp
from click.testing import CliRunner
from scipy.optimize import linear_sum_assignment

from mlx.data.synthetic import sample_corpus
from mlx.methods.base import FitContext, InvalidParameterError
from mlx.methods.mom import MoM


def _counts(seed=0, n=60, d=12, density=0.4, high=4):
    rng = np.random.default_rng(seed)
    X = sp.random(n, d, density=density, format="csr", random_state=rng,
                  data_rvs=lambda k: rng.integers(1, high, size=k).astype(float))
    return X


def test_single_precision_selection_fits_the_same_model_on_a_planted_corpus():
    X, Y, _ = sample_corpus(3000, 40, 6, 4, doc_length=15.0, seed=4)
    fits = [MoM(rank=4, moments="unbiased", selection_precision=p, random_state=0).fit(X, Y)
            for p in ("double", "single")]
    assert all(m.converged_ for m in fits)
    np.testing.assert_allclose(np.sort(fits[0].eigenvalues_), np.sort(fits[1].eigenvalues_),
                               rtol=1e-6)
    np.testing.assert_allclose(np.sort(fits[0].prior_), np.sort(fits[1].prior_), atol=1e-6)


# ----------------------------------------------------------------------------- recovery
def _errors(model, truth):
    """Max errors of pi, P[v|h] (L1 per state) and P[l|h] after matching the states."""
    cost = np.abs(model.word_probs_[:, :, None] - truth["words"][:, None, :]).sum(axis=0)
    found, true = linear_sum_assignment(cost)
    pi = np.max(np.abs(model.prior_[found] - truth["pi"][true]))
    words = np.max(cost[found, true])
    labels = np.max(np.abs(model.label_probs_[:, found] - truth["labels"][:, true]).sum(axis=0))
    return np.array([pi, words, labels])


def test_recovers_the_generative_model_at_the_sqrt_n_rate():
    """Documents from the model (Section 2): errors fall like 1/sqrt(n), 16x data -> 1/4."""
    kwargs = dict(n_features=30, n_labels=8, n_topics=3, doc_length=20.0, labels_per_doc=2.0,
                  prior=[0.5, 0.3, 0.2], word_concentration=0.3)
    _, _, truth = sample_corpus(10, seed=0, **kwargs)
    errs = {}
    for n in (2000, 32000):
        runs = []
        for rep in range(3):
            X, Y, _ = sample_corpus(n, seed=100 * rep + n, truth=truth, **kwargs)
            model = MoM(rank=3, moments="unbiased", tol=1e-10, random_state=rep).fit(X, Y)
            assert model.converged_
            runs.append(_errors(model, truth))
        errs[n] = np.mean(runs, axis=0)
    small, large = errs[2000], errs[32000]
    assert np.all(small <= [0.03, 0.08, 0.08]), small              # measured 0.014 0.037 0.034
    assert np.all(large <= small / 2.0), (small, large)           # sqrt(16) = 4, with slack
    assert np.all(large <= [0.01, 0.025, 0.025]), large            # measured 0.005 0.010 0.012


def test_paper_moments_are_biased_on_the_same_model():
    """The paper's moments keep a word paired with itself: pi does not converge to the truth
    (which is why ``moments="unbiased"`` exists)."""
    kwargs = dict(n_features=30, n_labels=8, n_topics=3, doc_length=20.0, labels_per_doc=2.0,
                  prior=[0.5, 0.3, 0.2], word_concentration=0.3)
    X, Y, truth = sample_corpus(32000, seed=7, **kwargs)
    paper = _errors(MoM(rank=3, moments="paper", random_state=0).fit(X, Y), truth)
    unbiased = _errors(MoM(rank=3, moments="unbiased", random_state=0).fit(X, Y), truth)
    assert paper[1] > 3 * unbiased[1]


# ----------------------------------------------------------------------------- prediction
def _tiny_model(prediction, eta=0.001, smoothing=0.0):
    X, Y, _ = sample_corpus(400, 10, 5, 2, doc_length=8.0, seed=1)
    return MoM(rank=2, prediction=prediction, eta=eta, smoothing=smoothing,
               random_state=0).fit(X, Y)


def test_code_rule_is_uniform_prior_and_present_words():
    model = _tiny_model("code", smoothing=0.01)
    P = (model.word_probs_ + 0.01 / 10) / 1.01
    X = sp.csr_matrix(np.array([[1, 0, 2, 0, 0, 0, 0, 1, 0, 0], [0] * 10], dtype=float))
    logp = X.toarray() @ np.log(P)
    post = np.exp(logp - logp.max(axis=1, keepdims=True))
    post /= post.sum(axis=1, keepdims=True)
    np.testing.assert_allclose(model.posterior(X), post, rtol=1e-12)
    np.testing.assert_allclose(model.posterior(X)[1], [0.5, 0.5])   # empty document: uniform
    np.testing.assert_allclose(model.decision_function(X), post @ model.label_probs_.T,
                               rtol=1e-12)


def test_paper_rule_uses_the_prior_and_absent_words_above_eta():
    eta = 0.05
    model = _tiny_model("paper", eta=eta, smoothing=0.001)
    P = (model.word_probs_ + 0.001 / 10) / 1.001
    x = np.array([1, 0, 1, 0, 0, 0, 0, 1, 0, 0], dtype=float)
    logp = np.log(model.prior_) + x @ np.log(P)
    absent = (x == 0)[:, None] & (P > eta)
    logp = logp + np.where(absent, np.log1p(-P), 0.0).sum(axis=0)
    post = np.exp(logp - logp.max())
    post /= post.sum()
    np.testing.assert_allclose(model.posterior(sp.csr_matrix(x)), post[None, :], rtol=1e-10)


def test_paper_rule_on_counts_reads_absent_words_from_the_presence_pattern():
    """Counts are repeated tokens in the present-word sum (``x_v log P``), but "v not in d" is
    about presence: a word seen 3 times is as present as one seen once. A rule that used the
    counts in the absent-word term would pass every 0/1 test."""
    eta = 0.05
    model = _tiny_model("paper", eta=eta, smoothing=0.001)
    P = (model.word_probs_ + 0.001 / 10) / 1.001
    assert (P > eta).sum() >= 4                          # entries that take part in the term
    X = np.array([[3, 0, 2, 0, 0, 0, 0, 1, 0, 0],
                  [0, 4, 0, 0, 2, 0, 5, 0, 0, 3],
                  [2, 2, 2, 2, 2, 2, 2, 2, 2, 2]], dtype=float)
    logp = np.log(model.prior_) + X @ np.log(P)
    logp = logp + np.array([np.where(((x == 0)[:, None]) & (P > eta), np.log1p(-P), 0.0)
                            .sum(axis=0) for x in X])
    post = np.exp(logp - logp.max(axis=1, keepdims=True))
    post /= post.sum(axis=1, keepdims=True)
    np.testing.assert_allclose(model.posterior(sp.csr_matrix(X)), post, rtol=1e-10)


def test_long_documents_do_not_underflow():
    rng = np.random.default_rng(0)
    X, Y, _ = sample_corpus(2000, 3000, 20, 4, doc_length=200.0, seed=2)
    model = MoM(rank=4, random_state=0).fit(X, Y)
    long_doc = sp.csr_matrix(rng.integers(0, 3, size=(2, 3000)).astype(float))  # ~3000 words
    for rule in ("paper", "code"):
        model.prediction = rule
        post = model.posterior(long_doc)
        assert np.isfinite(post).all() and np.allclose(post.sum(axis=1), 1.0)
        assert post.max() == 1.0 or post.max() > 0.5                 # a clear winner, no NaN


# ----------------------------------------------------------------------------- bad input
def test_non_count_features_are_refused_with_the_parameter_to_binarise_them():
    X = _counts(seed=1, n=30, d=8)
    X.data = X.data * 0.5                                            # 0.5, 1.0, 1.5
    Y = sp.csr_matrix((np.random.default_rng(0).random((30, 3)) < 0.5).astype(float))
    with pytest.raises(ValueError) as info:
        MoM(rank=2, random_state=0).fit(X, Y)
    message = str(info.value)
    assert "\n" not in message and "binarize=True" in message and "0.5" in message
    binarised = MoM(rank=2, binarize=True, random_state=0).fit(X, Y)
    pattern = X.copy()
    pattern.data[:] = 1.0
    same = MoM(rank=2, random_state=0).fit(pattern, Y)
    np.testing.assert_array_equal(binarised.decision_function(X), same.decision_function(pattern))
    with pytest.raises(ValueError, match="binarize=True"):
        same.decision_function(X)                                    # scoring checks it too


def test_counts_are_read_as_repeated_tokens():
    X = _counts(seed=2, n=80, d=9, high=5)
    Y = sp.csr_matrix((np.random.default_rng(1).random((80, 3)) < 0.5).astype(float))
    counts = MoM(rank=2, random_state=0).fit(X, Y)
    binary = MoM(rank=2, binarize=True, random_state=0).fit(X, Y)
    assert not np.allclose(counts.word_probs_, binary.word_probs_)


@pytest.mark.parametrize("rank,n,d", [(13, 100, 12), (6, 5, 12)])
def test_rank_above_the_data_is_an_error_with_the_valid_range(rank, n, d):
    X = _counts(seed=0, n=n, d=d, density=0.6)
    Y = sp.csr_matrix(np.ones((n, 2)))
    limit = min(n, d)
    with pytest.raises(ValueError, match=f"valid: 1 <= rank <= {limit}$"):
        MoM(rank=rank).fit(X, Y)
    context = FitContext(n_samples=n, n_features=d, n_labels=2)
    with pytest.raises(InvalidParameterError) as info:
        MoM(rank=rank).check_context(context)
    assert info.value.param == "rank" and f"1 <= rank <= {limit}" in str(info.value)
    MoM(rank=limit).check_context(context)
    MoM(rank=rank).check_context(FitContext())                       # sizes unknown: no verdict


def test_rank_error_at_validate_time(tmp_path):
    from mlx.cli import cli

    config = tmp_path / "c.yaml"
    config.write_text(textwrap.dedent("""
        name: momrank
        dataset:
          synthetic: {n_samples: 80, n_features: 12, n_labels: 5, rank: 2, seed: 0}
        methods:
          - name: mom
            params: {binarize: true}
        sweep:
          rank: [5, 40]
        metrics: [auc]
    """))
    r = CliRunner().invoke(cli, ["validate", str(config)], obj={})
    assert r.exit_code == 2, r.output
    assert "sweep.rank" in r.output and "1 <= rank <= 12" in r.output
    assert len(r.output.strip().splitlines()) == 1


@pytest.mark.filterwarnings("error::RuntimeWarning")
@pytest.mark.parametrize("moments", ["paper", "unbiased"])
@pytest.mark.parametrize("smoothing", [0.0, 0.001])
def test_empty_documents_and_unused_words_give_no_nan(moments, smoothing):
    X, Y, _ = sample_corpus(300, 12, 4, 2, doc_length=6.0, seed=3)
    X = X.tolil()
    X[0, :] = 0                                                      # an empty document
    X[:, 5] = 0                                                      # a word that never occurs
    X = sp.csr_matrix(X)
    X.eliminate_zeros()
    for rule in ("paper", "code"):
        model = MoM(rank=2, moments=moments, prediction=rule, smoothing=smoothing,
                    random_state=0).fit(X, Y)
        assert np.isfinite(model.word_probs_).all() and np.isfinite(model.prior_).all()
        scores = model.decision_function(X)
        assert np.isfinite(scores).all()
        only_unused = sp.csr_matrix(np.eye(1, 12, 5))                # only the unused word
        assert np.isfinite(model.decision_function(only_unused)).all()


def test_no_co_occurrence_falls_back_to_the_marginals():
    X = sp.csr_matrix(np.eye(6, 4))                                  # one word per document
    Y = sp.csr_matrix(np.eye(6, 3))
    model = MoM(rank=2, moments="unbiased", random_state=0).fit(X, Y)
    assert model.rank_ == 1
    assert np.isfinite(model.decision_function(X)).all()
