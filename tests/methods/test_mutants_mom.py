"""MoM: properties the older tests left open (found by mutation testing): truthful status of
the power method in the order of the eigenvalues, the one-state fallback, the timings, stored
zeros and the errors of scoring."""

import numpy as np
import pytest
import scipy.sparse as sp

from mlx.data.synthetic import sample_corpus
from mlx.methods import mom as mom_module
from mlx.methods.mom import MoM


# ----------------------------------------------------------------------------- status
def test_status_is_the_power_methods_in_the_order_of_the_eigenvalues(monkeypatch):
    """``n_iter_``, ``component_converged_`` and ``eigenvalues_`` are per eigenpair, sorted by
    decreasing eigenvalue; ``converged_`` says whether every eigenpair met the test. On this
    corpus the deflation finds the eigenpairs out of order, unconverged ones included."""
    found = []
    power = mom_module.tensor_power_method

    def spy(*args, **kwargs):
        found.append(power(*args, **kwargs))
        return found[-1]

    monkeypatch.setattr(mom_module, "tensor_power_method", spy)
    X, Y, _ = sample_corpus(1000, 20, 5, 3, doc_length=12.0, seed=6)
    for max_iter in (1, 4, 300):
        m = MoM(rank=3, max_iter=max_iter, smoothing=0.001, random_state=1).fit(X, Y)
        res = found[-1]
        order = np.argsort(-res.eigenvalues)
        assert not np.array_equal(order, [0, 1, 2])
        np.testing.assert_array_equal(m.eigenvalues_, res.eigenvalues[order])
        np.testing.assert_array_equal(m.n_iter_, res.n_iter[order])
        np.testing.assert_array_equal(m.component_converged_, res.converged[order])
        assert m.converged_ is bool(res.converged.all())
        assert np.all(m.n_iter_ <= max_iter) and np.all(np.diff(m.eigenvalues_) <= 0)
    assert [len(set(r.converged)) for r in found] == [1, 2, 1]   # none, some, all converged
    assert not found[0].converged.any() and found[2].converged.all()


def test_timings_are_the_three_passes_and_their_total():
    X, Y, _ = sample_corpus(400, 10, 5, 2, doc_length=8.0, seed=1)
    m = MoM(rank=2, random_state=0).fit(X, Y)
    t = m.timings_
    assert set(t) == {"whiten", "power", "labels", "total"}
    assert all(v >= 0 for v in t.values())
    assert t["whiten"] + t["power"] + t["labels"] == pytest.approx(t["total"], rel=1e-9)


# ----------------------------------------------------------------------------- one state
def test_without_co_occurrence_one_state_holds_the_marginal_frequencies():
    """One word per document: ``M2`` has no off-diagonal mass and, with unbiased moments, no
    positive eigenvalue; the model is one state with the marginal word and label
    frequencies, and its status says there was nothing to iterate."""
    X = sp.csr_matrix(np.eye(4)[[0, 0, 0, 1, 3, 3]])
    Y = sp.csr_matrix(np.array([[1, 0, 1], [1, 0, 0], [0, 1, 0], [1, 0, 0], [0, 1, 1],
                                [0, 0, 1]], dtype=float))
    m = MoM(rank=2, moments="unbiased", random_state=0).fit(X, Y)
    assert m.rank_ == 1
    np.testing.assert_array_equal(m.prior_, [1.0])
    np.testing.assert_allclose(m.word_probs_[:, 0], [3 / 6, 1 / 6, 0.0, 2 / 6], rtol=1e-15)
    np.testing.assert_allclose(m.label_probs_[:, 0], [3 / 8, 2 / 8, 3 / 8], rtol=1e-15)
    np.testing.assert_array_equal(m.eigenvalues_, [0.0])
    np.testing.assert_array_equal(m.m2_eigenvalues_, [0.0])
    np.testing.assert_array_equal(m.n_iter_, [0])
    np.testing.assert_array_equal(m.component_converged_, [True])
    assert m.n_iter_.dtype.kind == "i" and m.component_converged_.dtype == bool
    assert m.converged_ is True and m.n_features_in_ == 4
    t = m.timings_
    assert t["power"] == 0.0 and t["labels"] == 0.0 and t["total"] == t["whiten"] >= 0.0
    # every document gets the label marginals
    np.testing.assert_allclose(m.decision_function(X), np.tile([3 / 8, 2 / 8, 3 / 8], (6, 1)),
                               rtol=1e-12)


# ----------------------------------------------------------------------------- scoring
def test_stored_zeros_are_absent_words():
    X, Y, _ = sample_corpus(400, 10, 5, 2, doc_length=8.0, seed=1)
    m = MoM(rank=2, eta=0.05, random_state=0).fit(X, Y)
    rows = sp.csr_matrix(np.array([[3, 0, 2, 0, 0, 0, 0, 1, 0, 0],
                                   [0, 4, 0, 0, 2, 0, 5, 0, 0, 3]], dtype=float))
    stored = rows.copy()
    stored.data[0] = 0.0                                    # an explicit zero for word 0
    plain = rows.copy()
    plain[0, 0] = 0.0
    plain.eliminate_zeros()
    assert stored.nnz == plain.nnz + 1
    for rule in ("paper", "code"):
        m.prediction = rule
        np.testing.assert_allclose(m.decision_function(stored), m.decision_function(plain),
                                   rtol=1e-12)
    # and in fit
    Xs = X.copy()
    Xs.data[::7] = 0.0
    Xp = Xs.copy()
    Xp.eliminate_zeros()
    for moments in ("paper", "unbiased"):
        a = MoM(rank=2, moments=moments, random_state=0).fit(Xs, Y)
        b = MoM(rank=2, moments=moments, random_state=0).fit(Xp, Y)
        np.testing.assert_allclose(a.word_probs_, b.word_probs_, rtol=1e-10, atol=1e-14)
        np.testing.assert_allclose(a.label_probs_, b.label_probs_, rtol=1e-10, atol=1e-14)


def test_scoring_errors_and_empty_input():
    X, Y, _ = sample_corpus(400, 10, 5, 2, doc_length=8.0, seed=1)
    m = MoM(rank=2, random_state=0).fit(X, Y)
    with pytest.raises(ValueError) as info:
        m.decision_function(X[:, :9])
    assert str(info.value) == ("MoM: X has 9 features, but MoM is expecting 10 features as "
                               "input (it was fitted with 10)")
    bad = X[:3].toarray()
    bad[1, 4] = np.nan
    with pytest.raises(ValueError) as info:
        m.decision_function(bad)
    assert str(info.value) == ("MoM: X contains NaN or infinity; remove or impute those "
                               "entries before fitting")
    assert m.posterior(X[:0]).shape == (0, 2)
    assert m.decision_function(X[:0]).shape == (0, 5)


@pytest.mark.filterwarnings("error::RuntimeWarning")
def test_a_word_of_probability_one_and_labels_never_seen():
    """Every document is the same single word, no label is ever present, no smoothing: the
    one state has ``P[v|h] = 1`` for that word (its absent-word term stays finite) and a
    label column with nothing positive is uniform."""
    X = sp.csr_matrix(np.eye(4)[[0, 0, 0, 0, 0, 0]])
    Y = sp.csr_matrix((6, 3))
    m = MoM(rank=1, moments="unbiased", smoothing=0.0, random_state=0).fit(X, Y)
    np.testing.assert_array_equal(m.word_probs_[:, 0], [1.0, 0.0, 0.0, 0.0])
    np.testing.assert_allclose(m.label_probs_[:, 0], [1 / 3] * 3, rtol=1e-15)
    for rule in ("paper", "code"):
        m.prediction = rule
        np.testing.assert_allclose(m.decision_function(sp.csr_matrix(np.eye(4))),
                                   np.full((4, 3), 1 / 3), rtol=1e-12)


def test_absent_words_count_only_above_eta_not_at_it():
    """The paper's rule: absent words with ``P[v|h] > eta`` (strictly) enter the posterior."""
    X, Y, _ = sample_corpus(400, 10, 5, 2, doc_length=8.0, seed=1)
    first = MoM(rank=2, smoothing=0.001, random_state=0).fit(X, Y)
    P = (first.word_probs_ + 0.001 / 10) / 1.001
    eta = float(np.sort(P.ravel())[-3])                         # the third largest exactly
    m = MoM(rank=2, smoothing=0.001, eta=eta, random_state=0).fit(X, Y)
    x = np.zeros(10)
    x[np.argmin(P.max(axis=1))] = 1.0                            # a word below eta everywhere
    logp = np.log(m.prior_) + x @ np.log(P)
    logp = logp + np.where((x == 0)[:, None] & (P > eta), np.log1p(-P), 0.0).sum(axis=0)
    post = np.exp(logp - logp.max())
    np.testing.assert_allclose(m.posterior(sp.csr_matrix(x)), [post / post.sum()], rtol=1e-12)


def test_negative_counts_are_refused_and_stored_zeros_are_not():
    X = sp.csr_matrix(np.array([[1.0, 0, 2], [0, 3, 1], [1, 1, 0], [2, 0, 1]]))
    Y = sp.csr_matrix(np.eye(4, 2))
    bad = X.copy()
    bad.data[2] = -1.0
    with pytest.raises(ValueError) as info:
        MoM(rank=2, random_state=0).fit(bad, Y)
    assert str(info.value) == ("MoM: X holds values that are not word counts (e.g. -1); the "
                               "model reads word occurrences or counts: set binarize=True to use "
                               "the occurrence pattern X != 0")
    zero = X.copy()
    zero.data[2] = 0.0                                           # a stored zero is a count
    MoM(rank=2, random_state=0).fit(zero, Y)


def test_a_partial_label_mask_is_refused():
    X, Y, _ = sample_corpus(60, 10, 3, 2, doc_length=8.0, seed=2)
    observed = sp.csr_matrix(np.ones(Y.shape))
    observed[0, 1] = 0.0
    observed.eliminate_zeros()
    with pytest.raises(ValueError) as info:
        MoM(rank=2, random_state=0).fit(X, Y, observed=observed)
    assert str(info.value) == ("MoM does not support missing labels: observed must be None or "
                               "mark every entry of Y")
    full = MoM(rank=2, random_state=0).fit(X, Y, observed=sp.csr_matrix(np.ones(Y.shape)))
    np.testing.assert_array_equal(full.label_probs_,
                                  MoM(rank=2, random_state=0).fit(X, Y).label_probs_)


def test_rank_may_equal_the_smaller_dimension():
    X, Y, _ = sample_corpus(300, 4, 3, 2, doc_length=8.0, seed=3)   # min(n, d) = 4
    m = MoM(rank=4, random_state=0).fit(X, Y)
    assert 1 <= m.rank_ <= 4
    with pytest.raises(ValueError, match="valid: 1 <= rank <= 4$"):
        MoM(rank=5, random_state=0).fit(X, Y)


def test_the_rank_error_names_the_rank_and_the_sizes():
    X, Y, _ = sample_corpus(300, 4, 3, 2, doc_length=8.0, seed=3)
    with pytest.raises(ValueError) as info:
        MoM(rank=6, random_state=0).fit(X, Y)
    assert str(info.value) == (
        "MoM: rank=6 is larger than the data allow: MoM whitens with 6 eigenvectors of the "
        "4 x 4 word co-occurrence matrix, whose rank is at most min(n_samples, n_features) = "
        "min(300, 4); valid: 1 <= rank <= 4")


# ----------------------------------------------------------------------------- parameters
@pytest.mark.parametrize("moments, precision", [("unbiased", "single"), ("paper", "double")])
def test_every_power_method_parameter_reaches_the_solver(monkeypatch, moments, precision):
    """The parameters are passed on as documented: the moments to the whitened moments, the
    starts, cap, tolerance, shift, acceleration, Newton steps (the Hessian products) and the
    selection precision to the tensor power method."""
    calls = {}
    power, whitened = mom_module.tensor_power_method, mom_module.WhitenedMoments

    def power_spy(*args, **kwargs):
        calls["power"] = kwargs
        return power(*args, **kwargs)

    def whitened_spy(*args, **kwargs):
        calls["moments"] = kwargs
        calls["object"] = whitened(*args, **kwargs)
        return calls["object"]

    monkeypatch.setattr(mom_module, "tensor_power_method", power_spy)
    monkeypatch.setattr(mom_module, "WhitenedMoments", whitened_spy)
    X, Y, _ = sample_corpus(300, 10, 3, 2, doc_length=8.0, seed=4)
    MoM(rank=2, moments=moments, n_restarts=3, max_iter=17, tol=1e-5, shift=0.25,
        adaptive_shift=precision == "single", anderson=2, selection_precision=precision,
        random_state=0).fit(X, Y)
    assert calls["moments"] == {"moments": moments}
    got = calls["power"]
    assert {k: got[k] for k in ("n_restarts", "max_iter", "tol", "shift", "adaptive_shift",
                                "anderson")} == dict(n_restarts=3, max_iter=17, tol=1e-5,
                                                     shift=0.25,
                                                     adaptive_shift=precision == "single",
                                                     anderson=2)
    obj = calls["object"]
    assert got["hessian"] == obj.hessian
    assert got["selection_products"] == (obj.single_products if precision == "single" else None)


@pytest.mark.parametrize("eigenvalues, prior", [
    ([1.0, 2.0, 1e-90], [0.8, 0.2, 0.0]),      # 1/lambda^2 = 1, 1/4; below tiny^(1/4): none
    ([1.0, np.finfo(np.float64).tiny ** 0.25, 2.0], [0.8, 0.0, 0.2]),   # at the bound: none
    ([0.0, 1e-80, 0.0], [1 / 3, 1 / 3, 1 / 3]),  # nothing usable: uniform
])
def test_degenerate_tensor_eigenvalues_get_no_prior_mass(monkeypatch, eigenvalues, prior):
    """``pi_k = lambda_k^-2``, normalised; an eigenvalue at 0 or so small that its square
    under- or overflows (at most ``tiny^(1/4)``, about 1.2e-77) carries none, and with none
    usable the prior is uniform. The states come sorted by decreasing eigenvalue."""
    power = mom_module.tensor_power_method

    def degenerate(*args, **kwargs):
        res = power(*args, **kwargs)
        res.eigenvalues[:] = eigenvalues
        return res

    monkeypatch.setattr(mom_module, "tensor_power_method", degenerate)
    X, Y, _ = sample_corpus(300, 10, 3, 3, doc_length=8.0, seed=5)
    m = MoM(rank=3, random_state=0).fit(X, Y)
    order = np.argsort(-np.asarray(eigenvalues), kind="stable")
    np.testing.assert_allclose(m.prior_, np.asarray(prior)[order], rtol=1e-12)
    np.testing.assert_array_equal(m.eigenvalues_, np.asarray(eigenvalues)[order])


def test_m2_eigenvalues_are_the_top_eigenvalues_of_the_paper_second_moment():
    """``M2 = X'X / sum_d m_d^2`` (moments="paper"), formed densely here."""
    X, Y, _ = sample_corpus(400, 10, 5, 3, doc_length=8.0, seed=6)
    m = MoM(rank=3, random_state=0).fit(X, Y)
    A = X.toarray()
    M2 = A.T @ A / np.sum(A.sum(axis=1) ** 2)
    np.testing.assert_allclose(m.m2_eigenvalues_, np.linalg.eigvalsh(M2)[::-1][:3], rtol=1e-8)


def test_defaults_are_the_documented_ones():
    assert MoM().get_params() == dict(
        rank=10, moments="paper", prediction="paper", eta=0.001, smoothing="auto",
        n_restarts=10, max_iter=300, tol=1e-6, shift=0.0, adaptive_shift=True, anderson=5,
        selection_precision="double", binarize=False, random_state=None)
    params = dict(rank=3, moments="unbiased", prediction="code", eta=0.01, smoothing=0.1,
                  n_restarts=2, max_iter=50, tol=1e-4, shift=0.5, adaptive_shift=False,
                  anderson=0, selection_precision="single", binarize=True, random_state=7)
    assert MoM(**params).get_params() == params
