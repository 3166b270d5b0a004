"""Row splits: properties the older tests left open (found by mutation testing): what a seed
draws when nothing needs a tie broken, and stratification over a single class."""

import numpy as np

from mlx.data.splits import kfold, random_split


def test_stratified_split_with_exact_shares_draws_only_the_class_permutations():
    """Every class's share is a whole number of rows: no remainder, so no tie-breaking draw;
    the test rows of each class are the first of a permutation of its rows, classes in order
    (the rule a seed's split has always followed)."""
    classes = np.repeat([2, 0, 1], [10, 20, 30])[np.random.default_rng(9).permutation(60)]
    for seed in range(3):
        train, test = random_split(60, 0.3, np.random.default_rng(seed), classes=classes)
        g = np.random.default_rng(seed)
        expected = np.sort(np.concatenate([
            g.permutation(np.flatnonzero(classes == c))[:share]
            for c, share in ((0, 6), (1, 9), (2, 3))]))
        assert np.array_equal(test, expected), seed
        assert np.array_equal(train, np.setdiff1d(np.arange(60), expected))


def test_stratified_kfold_of_a_single_class_is_the_plain_kfold():
    for n, k, seed in ((10, 3, 0), (17, 4, 1), (9, 2, 5)):
        plain = kfold(n, k, np.random.default_rng(seed))
        strat = kfold(n, k, np.random.default_rng(seed), classes=np.zeros(n, dtype=int))
        assert all(np.array_equal(a, c) and np.array_equal(b, d)
                   for (a, b), (c, d) in zip(plain, strat)), (n, k, seed)
