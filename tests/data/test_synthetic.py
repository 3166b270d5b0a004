import numpy as np
import pytest

from mlx.data.synthetic import make_low_rank_multilabel, make_multiclass, sample_corpus


def same(a, b):
    return a.shape == b.shape and (a != b).nnz == 0


def test_low_rank_shapes_and_canonical_form():
    split = make_low_rank_multilabel(60, 15, 8, 3, n_test=25, seed=1)
    assert split.train.X.shape == (60, 15) and split.test.X.shape == (25, 15)
    assert split.train.Y.shape == (60, 8) and split.test.Y.shape == (25, 8)
    for ds in (split.train, split.test):
        assert ds.task == "multilabel" and ds.name == "synthetic"
        assert ds.X.dtype == np.float64 and ds.X.has_sorted_indices
        assert np.all(ds.Y.data == 1.0)
        assert np.all(np.diff(ds.X.indptr) >= 1)  # every row has a feature
        assert np.all(np.diff(ds.Y.indptr) >= 1)  # every row has a label
        assert np.all((ds.X.data > 0) & (ds.X.data <= 1))


def test_low_rank_is_deterministic_and_uses_no_global_state():
    state = np.random.get_state()[1].copy()
    a = make_low_rank_multilabel(40, 10, 6, 2, n_test=10, seed=7)
    b = make_low_rank_multilabel(40, 10, 6, 2, n_test=10, seed=7)
    c = make_low_rank_multilabel(40, 10, 6, 2, n_test=10, seed=8)
    assert np.array_equal(np.random.get_state()[1], state)
    assert same(a.train.X, b.train.X) and same(a.train.Y, b.train.Y)
    assert same(a.test.Y, b.test.Y)
    assert not same(a.train.X, c.train.X)


def test_positive_fraction_per_label_on_train():
    split = make_low_rank_multilabel(400, 30, 10, 4, n_test=10, positive_fraction=0.2, seed=0)
    frac = np.asarray(split.train.Y.mean(axis=0)).ravel()
    # the quantile threshold makes ~20% positive; the at-least-one-label rule only adds
    assert np.all(frac >= 0.2 - 1e-9) and np.all(frac <= 0.35)


def test_labels_follow_the_planted_scores_without_noise():
    # Re-derive the model from the same seed and check Y = 1[S > t] (plus each row's argmax).
    n, d, L, r, seed = 50, 12, 6, 2, 4
    split = make_low_rank_multilabel(n, d, L, r, n_test=0 + 1, seed=seed)
    rng = np.random.default_rng(seed)
    rows = np.arange(n + 1)
    present = rng.random((n + 1, d)) < 0.2
    present[rows, rng.integers(d, size=n + 1)] = True
    X = np.where(present, 1.0 - rng.random((n + 1, d)), 0.0)
    W, H = rng.standard_normal((d, r)), rng.standard_normal((L, r))
    S = X @ W @ H.T
    t = np.quantile(S[:n], 0.9, axis=0)
    Y = S > t
    Y[rows, np.argmax(S - t, axis=1)] = True
    np.testing.assert_array_equal(split.train.X.toarray(), X[:n])
    np.testing.assert_array_equal(split.train.Y.toarray(), Y[:n])
    np.testing.assert_array_equal(split.test.Y.toarray(), Y[n:])


def test_label_noise_changes_labels_not_features():
    clean = make_low_rank_multilabel(80, 10, 8, 2, n_test=5, seed=2)
    noisy = make_low_rank_multilabel(80, 10, 8, 2, n_test=5, seed=2, label_noise=0.1)
    assert same(clean.train.X, noisy.train.X)
    assert not same(clean.train.Y, noisy.train.Y)
    assert np.all(np.diff(noisy.train.Y.indptr) >= 1)


@pytest.mark.parametrize("kwargs, message", [
    ({"n_samples": 0}, "n_samples must be an int >= 1, got 0"),
    ({"rank": 1.5}, "rank must be an int >= 1, got 1.5"),
    ({"density": 0.0}, "density must be a float in (0.0, 1.0], got 0.0"),
    ({"label_noise": 0.5}, "label_noise must be a float in [0.0, 0.5), got 0.5"),
])
def test_low_rank_rejects_bad_arguments(kwargs, message):
    with pytest.raises(ValueError) as exc:
        make_low_rank_multilabel(**kwargs)
    assert str(exc.value) == message


def test_multiclass():
    split = make_multiclass(50, 4, 3, n_test=20, seed=0)
    again = make_multiclass(50, 4, 3, n_test=20, seed=0)
    assert split.train.task == "multiclass" and split.train.label_names == ("0", "1", "2")
    assert split.train.Y.shape == (50, 3) and split.test.X.shape == (20, 4)
    assert np.all(np.diff(split.train.Y.indptr) == 1)
    assert same(split.train.X, again.train.X) and same(split.test.Y, again.test.Y)


def test_sample_corpus_draws_from_the_model():
    X, Y, truth = sample_corpus(20000, 15, 6, 2, doc_length=10.0, labels_per_doc=2.0,
                                prior=[0.7, 0.3], seed=0)
    h = truth["topic"]
    assert abs(np.mean(h == 0) - 0.7) < 0.02
    words = np.asarray(X[h == 1].sum(axis=0)).ravel()
    np.testing.assert_allclose(words / words.sum(), truth["words"][:, 1], atol=0.01)
    labels = np.asarray(Y[h == 0].mean(axis=0)).ravel()
    np.testing.assert_allclose(labels, truth["presence"][:, 0], atol=0.02)
    np.testing.assert_allclose(truth["labels"].sum(axis=0), 1.0)
