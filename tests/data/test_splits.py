"""Row splits: disjoint, complete, stratified within one row per class, nested, seeded."""

import numpy as np
import pytest

from mlx.data.splits import class_counts, holdout, kfold, labelled_rows, random_split


def rng(seed=0):
    return np.random.default_rng(seed)


@pytest.mark.parametrize("n, frac", [(10, 0.3), (101, 0.3), (7, 0.5), (2, 0.9), (1000, 0.01)])
def test_random_split_is_disjoint_complete_and_sized(n, frac):
    train, test = random_split(n, frac, rng())
    assert np.array_equal(np.sort(np.concatenate([train, test])), np.arange(n))
    assert len(np.intersect1d(train, test)) == 0
    assert len(test) == min(n - 1, max(1, round(frac * n)))
    assert np.all(np.diff(train) > 0) and np.all(np.diff(test) > 0)


def test_random_split_depends_only_on_the_generator():
    a = random_split(50, 0.3, rng(4))
    b = random_split(50, 0.3, rng(4))
    c = random_split(50, 0.3, rng(5))
    assert all(np.array_equal(x, y) for x, y in zip(a, b))
    assert not np.array_equal(a[1], c[1])


@pytest.mark.parametrize("seed", range(5))
@pytest.mark.parametrize("frac", [0.3, 0.1, 0.5])
def test_stratified_split_keeps_every_class_proportion_within_one_row(seed, frac):
    g = rng(seed)
    classes = np.repeat([0, 1, 2, 3, 7], [40, 3, 17, 2, 101])
    classes = g.permutation(classes)
    train, test = random_split(classes.size, frac, g, classes=classes)
    assert len(test) == round(frac * classes.size)
    for c, n_c in class_counts(classes).items():
        in_test = int(np.sum(classes[test] == c))
        assert abs(in_test - frac * n_c) < 1, (c, in_test, n_c)


def test_stratified_split_refuses_a_class_with_one_row():
    with pytest.raises(ValueError, match="a stratified split needs at least 2 rows of every "
                                         "class; class 5 has 1"):
        random_split(6, 0.3, rng(), classes=np.array([0, 0, 0, 1, 1, 5]))


def test_bad_fractions_and_sizes():
    with pytest.raises(ValueError, match=r"test_fraction must be a float in the range \(0, 1\)"):
        random_split(10, 1.0, rng())
    with pytest.raises(ValueError, match="cannot split 1 row"):
        random_split(1, 0.5, rng())
    with pytest.raises(ValueError, match="classes must have shape"):
        random_split(4, 0.5, rng(), classes=[0, 1])


def test_holdout_matches_the_documented_permutation_rule():
    fit, val = holdout(20, 0.2, rng(3))
    perm = rng(3).permutation(20)
    assert np.array_equal(val, np.sort(perm[:4])) and np.array_equal(fit, np.sort(perm[4:]))


@pytest.mark.parametrize("n, k", [(10, 2), (11, 3), (100, 5), (5, 5)])
def test_kfold_validation_parts_partition_the_rows(n, k):
    folds = kfold(n, k, rng(1))
    assert len(folds) == k
    val = np.concatenate([v for _, v in folds])
    assert np.array_equal(np.sort(val), np.arange(n))
    sizes = [len(v) for _, v in folds]
    assert max(sizes) - min(sizes) <= 1
    for fit, v in folds:
        assert np.array_equal(np.sort(np.concatenate([fit, v])), np.arange(n))


def test_stratified_kfold_deals_each_class_evenly():
    g = rng(2)
    classes = g.permutation(np.repeat([0, 1, 2], [23, 5, 12]))
    folds = kfold(classes.size, 5, g, classes=classes)
    for c, n_c in class_counts(classes).items():
        per_fold = [int(np.sum(classes[v] == c)) for _, v in folds]
        assert max(per_fold) - min(per_fold) <= 1 and sum(per_fold) == n_c
    sizes = [len(v) for _, v in folds]
    assert max(sizes) - min(sizes) <= 1


def test_kfold_refuses_more_folds_than_the_smallest_class():
    classes = np.repeat([0, 1], [10, 3])
    with pytest.raises(ValueError, match="stratified 4-fold cross-validation needs at least 4 "
                                         "rows of every class; class 1 has 3; use at most 3"):
        kfold(13, 4, rng(), classes=classes)
    with pytest.raises(ValueError, match="the number of folds must be an int >= 2"):
        kfold(13, 1, rng())
    with pytest.raises(ValueError, match="cannot make 14 folds of 13 rows"):
        kfold(13, 14, rng())


def test_labelled_rows_are_nested_across_ratios():
    small = labelled_rows(200, 0.1, 7)
    large = labelled_rows(200, 0.3, 7)
    assert len(small) == 20 and len(large) == 60
    assert np.isin(small, large).all()
    assert np.array_equal(labelled_rows(200, 1.0, 7), np.arange(200))
    assert len(labelled_rows(5, 0.01, 7)) == 1
    assert not np.array_equal(labelled_rows(200, 0.1, 8), small)


@pytest.mark.parametrize("ratio", [0, -0.1, 1.5, True])
def test_labelled_ratio_out_of_range(ratio):
    with pytest.raises(ValueError, match=r"labelled_ratio must be a float in the range \(0, 1\]"):
        labelled_rows(10, ratio, 0)


def _fold_of(folds, n):
    out = np.empty(n, dtype=np.int64)
    for f, (_, val) in enumerate(folds):
        out[val] = f
    return out


@pytest.mark.parametrize("stratified", [False, True])
def test_different_seeds_give_different_folds(stratified):
    classes = np.repeat([0, 1, 2], [12, 9, 15])
    n = classes.size
    seen = {tuple(_fold_of(kfold(n, 3, rng(s), classes=classes if stratified else None), n))
            for s in range(8)}
    assert len(seen) == 8


def test_stratified_kfold_shuffles_within_each_class():
    """Over many seeds every row of a class lands in every fold about equally often (a
    deal in index order would pin each row to one fold, whatever the seed)."""
    classes = np.tile([0, 1], 12)                        # classes interleaved by index
    n, k, trials = classes.size, 3, 300
    counts = np.zeros((n, k))
    for s in range(trials):
        counts[np.arange(n), _fold_of(kfold(n, k, rng(s), classes=classes), n)] += 1
    assert counts.min() > trials / k * 0.6 and counts.max() < trials / k * 1.4
    for s in range(5):                                   # and every fold stays stratified
        for _, val in kfold(n, k, rng(s), classes=classes):
            assert sorted(class_counts(classes[val]).values()) == [4, 4]


@pytest.mark.parametrize("counts, frac", [([3, 3], 0.5), ([5, 2, 4], 0.3), ([2, 2, 2], 0.5)])
def test_stratified_split_is_a_partition_whatever_the_remainders(counts, frac):
    """Largest remainders: the one row left after the floors (or the several) still goes to
    some class, so the test part has exactly round(frac * n) rows; train is the rest."""
    classes = np.repeat(np.arange(len(counts)), counts)
    n = classes.size
    for s in range(4):
        train, test = random_split(n, frac, rng(s), classes=classes)
        assert len(test) == round(frac * n)
        assert np.array_equal(np.sort(np.concatenate([train, test])), np.arange(n))
        assert np.array_equal(train, np.sort(train)) and np.array_equal(test, np.sort(test))


@pytest.mark.parametrize("k, message", [
    (2.5, "the number of folds must be an int >= 2; got 2.5"),
    (True, "the number of folds must be an int >= 2; got True"),
    ("3", "the number of folds must be an int >= 2; got '3'"),
])
def test_kfold_refuses_folds_that_are_not_ints(k, message):
    with pytest.raises(ValueError) as info:
        kfold(10, k, rng())
    assert str(info.value) == message


@pytest.mark.parametrize("counts, k, hint", [
    ([10, 2], 3, "use at most 2 folds or "),             # 2 rows: 2 folds would still work
    ([10, 1], 2, ""),                                    # 1 row: no number of folds works
])
def test_stratified_kfold_error_suggests_fewer_folds_only_when_that_can_work(counts, k, hint):
    classes = np.repeat([0, 1], counts)
    with pytest.raises(ValueError) as info:
        kfold(classes.size, k, rng(), classes=classes)
    assert str(info.value) == (f"stratified {k}-fold cross-validation needs at least {k} rows "
                               f"of every class; class 1 has {counts[1]}; {hint}set "
                               f"selection.stratify: false")


def test_stratified_holdout_is_the_stratified_random_split():
    classes = np.repeat([0, 1, 2], [7, 4, 9])
    fit, val = holdout(20, 0.3, rng(5), classes=classes)
    train, test = random_split(20, 0.3, rng(5), classes=classes)
    assert np.array_equal(fit, train) and np.array_equal(val, test)


@pytest.mark.parametrize("call, message", [
    (lambda: random_split(-1, 0.5, rng()), "the number of rows must be a non-negative int; got -1"),
    (lambda: random_split(True, 0.5, rng()),
     "the number of rows must be a non-negative int; got True"),
    (lambda: random_split(2.0, 0.5, rng()),
     "the number of rows must be a non-negative int; got 2.0"),
    (lambda: random_split(0, 0.5, rng()), "cannot split 0 row(s) into two non-empty parts"),
    (lambda: random_split(10, 0.0, rng()),
     "test_fraction must be a float in the range (0, 1); got 0.0"),
    (lambda: holdout(10, 1.5, rng()),
     "validation_fraction must be a float in the range (0, 1); got 1.5"),
])
def test_split_argument_errors_are_exact(call, message):
    with pytest.raises(ValueError) as info:
        call()
    assert str(info.value) == message


def test_a_tiny_fraction_still_gives_one_row():
    train, test = random_split(10, 0.01, rng())
    assert len(test) == 1 and len(train) == 9
