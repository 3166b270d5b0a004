"""What a cell's method sees: the split, target scaling, observed labels, labelled rows and
the selection folds, each a pure function of the cell and the loaded data.

The protocols, in the order they apply:

1. **train/test split**: the dataset's official split, or ``split: {test_fraction,
   stratify}`` random splits drawn per repetition from ``(seed, dataset, repetition)``;
2. **target scaling** (regression): ``target: minmax`` maps each target column to [0, 1]
   with the training part's minimum and maximum (applied to both parts, recorded);
3. **observed labels** (multi-label): the nested entry-wise mask of ``observed_ratio``;
4. **labelled rows**: the nested ``labelled_ratio`` subset of training rows; the other
   training rows reach a semi-supervised method as unlabelled features only;
5. **selection folds**: one hold-out split (``validation_fraction``) or ``cv`` folds of the
   labelled training rows, stratified where the task has classes or levels.

Every random draw is seeded by names (:mod:`mlx.seeding`), never by the method, so every
method of a config sees the same rows and entries for a repetition.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from mlx import seeding
from mlx.data.dataset import Dataset, canonical_csr
from mlx.errors import ConfigError

__all__ = ["CellData", "fingerprint", "load_data", "cell_data", "selection_folds",
           "clear_memo"]

_DATA_MEMO: dict = {}


def fingerprint(*arrays) -> str:
    """A short content hash of integer index arrays (which entries or rows a cell used).

    Two cells with the same fingerprint saw the same entries (or rows); it is written to
    results.csv so a reader can check that without rerunning anything.
    """
    h = hashlib.sha256()
    for a in arrays:
        a = np.ascontiguousarray(a, dtype=np.int64)
        h.update(str(a.shape).encode())
        h.update(a.tobytes())
    return h.hexdigest()[:12]


def _mask_fingerprint(mask) -> str:
    m = mask.tocsr()
    m.sort_indices()
    return fingerprint(np.asarray(m.shape), m.indptr, m.indices)


@dataclass
class CellData:
    """The data of one cell.

    ``train`` and ``test`` are the split (targets scaled); ``Y_fit`` the training targets as
    the method may see them (masked, labelled rows only) with ``mask`` (or None) and
    ``labelled`` (row indices into ``train``, or None for all rows).
    """

    train: Dataset
    test: Dataset
    Y_fit: sp.csr_matrix
    mask: sp.csr_matrix | None
    labelled: np.ndarray | None
    split_fingerprint: str
    label_fingerprint: str

    @property
    def X_fit_rows(self) -> np.ndarray:
        return np.arange(self.train.n_samples) if self.labelled is None else self.labelled

    @property
    def unlabelled(self) -> np.ndarray:
        if self.labelled is None:
            return np.empty(0, dtype=np.int64)
        return np.setdiff1d(np.arange(self.train.n_samples), self.labelled, assume_unique=True)


def clear_memo() -> None:
    _DATA_MEMO.clear()


def load_data(dataset_spec, *, whole: bool):
    """The loaded dataset, memoised per process (one dataset at a time keeps memory bounded).

    ``whole``: all rows as one :class:`Dataset` (for random splits), else the official
    :class:`~mlx.data.dataset.Split`.
    """
    from mlx.data.catalog import load_full, load_split

    key = (dataset_spec.key(), whole)
    if key not in _DATA_MEMO:
        _DATA_MEMO.clear()
        _DATA_MEMO[key] = load_full(dataset_spec) if whole else load_split(dataset_spec)
    return _DATA_MEMO[key]


def prime_data(dataset_spec, *, whole: bool, value) -> None:
    """Make :func:`load_data` return ``value`` for ``dataset_spec`` in this process (data
    shipped to a cluster worker instead of read from its disk)."""
    key = (dataset_spec.key(), whole)
    if key not in _DATA_MEMO:
        _DATA_MEMO.clear()
        _DATA_MEMO[key] = value


def _rows(ds: Dataset, rows: np.ndarray) -> Dataset:
    return Dataset(X=ds.X[rows], Y=ds.Y[rows], name=ds.name, task=ds.task,
                   label_names=ds.label_names)


def split_rows(cell, full: Dataset, task) -> tuple[np.ndarray, np.ndarray]:
    """Train and test rows of ``full`` for the cell's random split protocol."""
    from mlx.data.splits import random_split

    classes = task.classes(full.Y) if cell.split.stratify else None
    rng = seeding.split_rng(cell.seed, cell.dataset.identity, cell.repetition)
    try:
        return random_split(full.n_samples, cell.split.test_fraction, rng, classes=classes)
    except ValueError as exc:
        raise ConfigError(cell.dataset.source, "split", f"{cell.dataset.name}: {exc}") from None


def _scale_targets(train: Dataset, test: Dataset) -> tuple[Dataset, Dataset]:
    """Min-max scaling of each target column to [0, 1] on the training part."""
    Ytr, Yte = train.Y.toarray(), test.Y.toarray()
    lo, hi = Ytr.min(axis=0), Ytr.max(axis=0)
    span = np.where(hi > lo, hi - lo, 1.0)

    def scaled(ds, Y):
        return Dataset(X=ds.X, Y=canonical_csr((Y - lo) / span), name=ds.name, task=ds.task,
                       label_names=ds.label_names)

    return scaled(train, Ytr), scaled(test, Yte)


def cell_data(cell) -> CellData:
    """Apply the cell's protocols (module docstring) to its dataset."""
    from mlx.data.splits import labelled_rows
    from mlx.masks import MaskSampler, apply_mask
    from mlx.tasks import get_task

    task = get_task(cell.task)
    if cell.split is None:
        split = load_data(cell.dataset, whole=False)
        train, test = split.train, split.test
        split_fp = "official"
    else:
        full = load_data(cell.dataset, whole=True)
        tr, te = split_rows(cell, full, task)
        train, test = _rows(full, tr), _rows(full, te)
        split_fp = fingerprint(te)
    if cell.target == "minmax":
        train, test = _scale_targets(train, test)

    Y, mask = train.Y, None
    if cell.observed_ratio < 1.0:
        sampler = MaskSampler(Y.shape, seeding.mask_seed(cell.seed, cell.dataset.identity,
                                                         cell.repetition))
        mask = sampler.mask(cell.observed_ratio)
        Y = apply_mask(Y, mask)
    labelled = None
    if cell.labelled_ratio < 1.0:
        labelled = labelled_rows(train.n_samples, cell.labelled_ratio,
                                 seeding.labelled_seed(cell.seed, cell.dataset.identity,
                                                       cell.repetition))
        Y = Y[labelled]
        mask = None if mask is None else mask[labelled]
    parts = []
    if mask is not None:
        parts.append(_mask_fingerprint(mask))
    if labelled is not None:
        parts.append(fingerprint(labelled))
    label_fp = "all" if not parts else "-".join(parts)
    return CellData(train=train, test=test, Y_fit=sp.csr_matrix(Y), mask=mask,
                    labelled=labelled, split_fingerprint=split_fp, label_fingerprint=label_fp)


def selection_folds(cell, Y_fit, task) -> tuple[list, str]:
    """``[(fit_rows, validation_rows), ...]`` over the rows of ``Y_fit`` and their fingerprint.

    One hold-out split of ``validation_fraction`` (the default) or ``cv`` folds, stratified
    by class or level when the config asks for it.
    """
    from mlx.data.splits import holdout, kfold

    n, sel = Y_fit.shape[0], cell.selection
    classes = task.classes(Y_fit) if sel.stratify else None
    try:
        if sel.cv:
            folds = kfold(n, sel.cv, seeding.cv_rng(cell.seed, cell.dataset.identity,
                                                    cell.repetition), classes=classes)
        else:
            folds = [holdout(n, sel.validation_fraction,
                             seeding.validation_rng(cell.seed, cell.dataset.identity,
                                                    cell.repetition), classes=classes)]
    except ValueError as exc:
        key = "selection.cv" if sel.cv else "selection.validation_fraction"
        raise ConfigError(cell.dataset.source, key,
                          f"{cell.dataset.name}, repetition {cell.repetition}: {exc}") from None
    return folds, fingerprint(*[v for _, v in folds])
