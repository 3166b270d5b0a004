"""Every random seed of a run, derived in one place from names (after benchopt).

A seed is ``sha256("|".join(base_seed, purpose, *names)) mod 2**32``: it depends on what a
draw is *for* and on the names that identify it, never on the order in which cells run or on
which process runs them. Two methods in one config therefore see the same random split,
the same observed-label mask and the same validation rows for a repetition, and a cell
computed alone (``--only``), in a worker process or on a cluster draws exactly the same
numbers.

The names are the dataset's *identity* (:attr:`mlx.data.spec.DatasetSpec.identity`: the
registered name, a file spec's explicit ``name``, or else the content checksum of its files,
never their location or file names), the repetition and, for the method's own draws, the
method's *name*. The purposes, and the names each depends on:

============  =========================================  ========================================
purpose       names                                      used for
============  =========================================  ========================================
``split``     dataset, repetition                        random train/test split (unsplit data)
``mask``      dataset, repetition                        observed-label entries (LEML protocol)
``labelled``  dataset, repetition                        labelled training rows (semi-supervised)
``validation`` dataset, repetition                       hold-out rows for ``select``
``cv``        dataset, repetition                        k-fold assignment for ``select``
``method``    dataset, repetition, method name           the method's ``random_state``
============  =========================================  ========================================

The method's seed does not depend on its hyper-parameters, rank, observed or labelled ratio,
label or preprocessing: every setting of one method in one repetition draws the same random
features, initialisations, mini-batch orders and landmarks (common random numbers), so a
comparison of two settings compares the settings, not two draws of the randomness.
"""

from __future__ import annotations

import hashlib

import numpy as np

__all__ = ["seed_for", "rng_for", "split_rng", "mask_seed", "labelled_seed", "validation_rng",
           "cv_rng", "method_seed"]


def seed_for(base_seed, *parts) -> int:
    """A 32-bit seed derived from names, not from the order of draws.

    ``int(sha256("|".join(map(str, (base_seed, *parts))))) mod 2**32``.

    Examples
    --------
    >>> seed_for(0, "mask", "bibtex", 3) == seed_for(0, "mask", "bibtex", 3)
    True
    """
    text = "|".join(str(p) for p in (base_seed, *parts))
    digest = hashlib.sha256(text.encode("utf-8")).digest()
    return int.from_bytes(digest, "big") % (1 << 32)


def rng_for(base_seed, *parts) -> np.random.Generator:
    """``np.random.default_rng(seed_for(base_seed, *parts))``."""
    return np.random.default_rng(seed_for(base_seed, *parts))


def split_rng(base_seed: int, dataset: str, repetition: int) -> np.random.Generator:
    """Generator of the random train/test split of ``dataset`` for ``repetition``."""
    return rng_for(base_seed, "split", dataset, repetition)


def mask_seed(base_seed: int, dataset: str, repetition: int) -> int:
    """Seed of the nested observed-label masks (:class:`mlx.masks.MaskSampler`)."""
    return seed_for(base_seed, "mask", dataset, repetition)


def labelled_seed(base_seed: int, dataset: str, repetition: int) -> int:
    """Seed of the nested labelled-row subsets (:func:`mlx.data.splits.labelled_rows`)."""
    return seed_for(base_seed, "labelled", dataset, repetition)


def validation_rng(base_seed: int, dataset: str, repetition: int) -> np.random.Generator:
    """Generator of the hold-out validation rows used by ``select``."""
    return rng_for(base_seed, "validation", dataset, repetition)


def cv_rng(base_seed: int, dataset: str, repetition: int) -> np.random.Generator:
    """Generator of the k-fold assignment used by ``select`` with ``selection.cv``."""
    return rng_for(base_seed, "cv", dataset, repetition)


def method_seed(base_seed: int, dataset: str, repetition: int, method: str) -> int:
    """``random_state`` of a method: the same for every setting of ``method`` on ``dataset``
    in ``repetition`` (common random numbers across hyper-parameters)."""
    return seed_for(base_seed, "method", dataset, repetition, method)
