"""Row splits: random train/test splits, hold-out and k-fold selection splits, labelled rows.

Pure functions of ``(n, fraction or k, rng, classes)`` returning sorted row indices; the
runner derives every generator from names (:mod:`mlx.seeding`), so all methods of a config
see the same rows for a repetition. ``classes`` (an int array of length ``n``, e.g. the
class of each row of a multi-class set) asks for stratification, as scikit-learn's
``StratifiedShuffleSplit`` and ``StratifiedKFold`` do: every class is split in the same
proportion, to within one row.

Errors are :class:`ValueError` with a message that names what is wrong and what is valid;
the config layer adds the key path.
"""

from __future__ import annotations

import numbers

import numpy as np

__all__ = ["random_split", "holdout", "kfold", "labelled_rows", "class_counts"]


def _check_n(n) -> int:
    if isinstance(n, bool) or not isinstance(n, numbers.Integral) or n < 0:
        raise ValueError(f"the number of rows must be a non-negative int; got {n!r}")
    return int(n)


def _check_classes(classes, n: int) -> np.ndarray | None:
    if classes is None:
        return None
    classes = np.asarray(classes)
    if classes.shape != (n,):
        raise ValueError(f"classes must have shape ({n},); got {classes.shape}")
    return classes


def class_counts(classes) -> dict:
    """``{class: number of rows}`` in sorted class order."""
    values, counts = np.unique(np.asarray(classes), return_counts=True)
    return {v.item(): int(c) for v, c in zip(values, counts)}


def _n_part(n: int, fraction: float, what: str) -> int:
    """``round(fraction * n)``, at least 1 and at most ``n - 1``."""
    if not 0.0 < fraction < 1.0:
        raise ValueError(f"{what} must be a float in the range (0, 1); got {fraction!r}")
    if n < 2:
        raise ValueError(f"cannot split {n} row(s) into two non-empty parts")
    return min(n - 1, max(1, int(round(fraction * n))))


def _allocate(counts: np.ndarray, total: int, rng: np.random.Generator) -> np.ndarray:
    """Split ``total`` over classes in proportion to ``counts`` (largest remainders).

    Each class gets ``floor`` or ``ceil`` of its exact share; ties among remainders are
    broken at random, so no class is favoured by its index.
    """
    exact = counts * (total / counts.sum())
    out = np.floor(exact).astype(np.int64)
    short = total - int(out.sum())
    if short > 0:
        remainder = exact - out
        order = np.lexsort((rng.random(counts.size), -remainder))
        out[order[:short]] += 1
    return out


def random_split(n: int, test_fraction: float, rng: np.random.Generator, *,
                 classes=None) -> tuple[np.ndarray, np.ndarray]:
    """A random train/test split of ``n`` rows.

    The test part has ``round(test_fraction * n)`` rows (at least 1, at most ``n - 1``).
    With ``classes``, each class ``c`` of ``n_c`` rows puts ``floor`` or ``ceil`` of
    ``test_fraction * n_c`` rows in the test part (the totals still add up), so every class
    has its proportion within one row; a class with a single row cannot be split and is an
    error.

    Returns
    -------
    train, test : sorted int64 arrays, disjoint, together ``range(n)``
    """
    n = _check_n(n)
    n_test = _n_part(n, test_fraction, "test_fraction")
    classes = _check_classes(classes, n)
    if classes is None:
        perm = rng.permutation(n)
        return np.sort(perm[n_test:]), np.sort(perm[:n_test])
    values, inverse, counts = np.unique(classes, return_inverse=True, return_counts=True)
    if counts.min() < 2:
        lone = values[np.flatnonzero(counts < 2)[0]].item()
        raise ValueError(f"a stratified split needs at least 2 rows of every class; class "
                         f"{lone!r} has 1")
    per_class = _allocate(counts, n_test, rng)
    test = []
    for c in range(values.size):
        rows = np.flatnonzero(inverse == c)
        test.append(rng.permutation(rows)[:per_class[c]])
    test = np.sort(np.concatenate(test))
    train = np.setdiff1d(np.arange(n), test, assume_unique=True)
    return train, test


def holdout(n: int, fraction: float, rng: np.random.Generator, *,
            classes=None) -> tuple[np.ndarray, np.ndarray]:
    """Hold out ``round(fraction * n)`` rows (at least 1) for validation.

    Returns ``(fit_rows, validation_rows)``, sorted. Unstratified: the first rows of
    ``rng.permutation(n)`` are held out. Stratified as :func:`random_split`.
    """
    n = _check_n(n)
    if classes is not None:
        return random_split(n, fraction, rng, classes=classes)
    n_val = _n_part(n, fraction, "validation_fraction")
    perm = rng.permutation(n)
    return np.sort(perm[n_val:]), np.sort(perm[:n_val])


def kfold(n: int, k: int, rng: np.random.Generator, *,
          classes=None) -> list[tuple[np.ndarray, np.ndarray]]:
    """``k`` folds of ``n`` shuffled rows: ``[(fit_rows, validation_rows), ...]``.

    Every row is in exactly one validation part; fold sizes differ by at most one. With
    ``classes``, each class is dealt round-robin over the folds (after shuffling its rows,
    starting where the previous class stopped), so each fold holds ``floor`` or ``ceil`` of
    ``n_c / k`` rows of class ``c``; ``k`` above the smallest class count is an error.
    """
    n = _check_n(n)
    if isinstance(k, bool) or not isinstance(k, numbers.Integral) or k < 2:
        raise ValueError(f"the number of folds must be an int >= 2; got {k!r}")
    if k > n:
        raise ValueError(f"cannot make {k} folds of {n} rows; use at most {n} folds")
    classes = _check_classes(classes, n)
    fold = np.empty(n, dtype=np.int64)
    if classes is None:
        fold[rng.permutation(n)] = np.arange(n) % k
    else:
        values, inverse, counts = np.unique(classes, return_inverse=True, return_counts=True)
        if counts.min() < k:
            small = values[int(np.argmin(counts))].item()
            least = int(counts.min())
            fewer = f"use at most {least} folds or " if least >= 2 else ""
            raise ValueError(f"stratified {k}-fold cross-validation needs at least {k} rows of "
                             f"every class; class {small!r} has {least}; {fewer}set "
                             f"selection.stratify: false")
        offset = 0
        for c in range(values.size):
            rows = rng.permutation(np.flatnonzero(inverse == c))
            fold[rows] = (offset + np.arange(rows.size)) % k
            offset += rows.size
    all_rows = np.arange(n)
    return [(all_rows[fold != f], all_rows[fold == f]) for f in range(k)]


def labelled_rows(n: int, ratio: float, seed: int) -> np.ndarray:
    """The labelled rows of a training part: ``round(ratio * n)`` rows (at least 1), sorted.

    Nested across ratios for one ``seed``: the rows labelled at 10% are among those labelled
    at 20%, because both are prefixes of one permutation drawn from ``seed``.
    """
    n = _check_n(n)
    if isinstance(ratio, bool) or not isinstance(ratio, numbers.Real) or not 0.0 < ratio <= 1.0:
        raise ValueError(f"labelled_ratio must be a float in the range (0, 1]; got {ratio!r}")
    if ratio >= 1.0:
        return np.arange(n)
    m = min(n, max(1, int(round(ratio * n))))
    perm = np.random.default_rng(seed).permutation(n)
    return np.sort(perm[:m])
