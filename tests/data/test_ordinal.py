"""Equal-frequency binning of a real target into ordinal levels (dataset option ``bins``)."""

import numpy as np
import pytest

from mlx.data.catalog import load_full, load_split, resolve_dataset
from mlx.data.ordinal import equal_frequency_edges
from mlx.errors import ConfigError, DataFormatError
from tests.conftest import data_available


def _levels(y, bins):
    return 1 + np.searchsorted(equal_frequency_edges(y, bins), y, side="left")


@pytest.mark.parametrize("n, bins", [(1000, 10), (997, 5), (50, 7)])
def test_distinct_values_fill_equal_frequency_levels(n, bins):
    y = np.random.default_rng(n).normal(size=n)
    counts = np.bincount(_levels(y, bins))[1:]
    assert counts.size == bins
    assert counts.max() - counts.min() <= 1


def test_levels_follow_the_target_order_and_ties_stay_together():
    y = np.array([5.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0, 2.0, 3.0, 4.0])
    lv = _levels(y, 5)
    order = np.argsort(y, kind="stable")
    assert np.all(np.diff(lv[order]) >= 0)                # monotone in the target
    assert len(set(lv[y == 0.0])) == 1                    # a tie never straddles a level
    assert np.unique(lv).size < 5                         # heavy ties: fewer levels


def _csv(tmp_path, name, values):
    path = tmp_path / name
    rows = [f"{i % 7},{v}" for i, v in enumerate(values)]
    path.write_text("x,y\n" + "\n".join(rows) + "\n")
    return str(path)


def test_train_and_test_files_are_binned_with_the_same_pooled_edges(tmp_path):
    train = _csv(tmp_path, "tr.csv", np.arange(0, 80, dtype=float))
    test = _csv(tmp_path, "te.csv", np.arange(80, 100, dtype=float))
    spec = resolve_dataset({"format": "csv", "train": train, "test": test, "task": "ordinal",
                            "bins": 5})
    split = load_split(spec, cache=False)
    assert split.train.task == split.test.task == "ordinal"
    tr = split.train.Y.toarray().ravel()
    te = split.test.Y.toarray().ravel()
    # pooled quantiles of 0..99: 20 values per level; the test part is the top level only
    assert np.array_equal(np.bincount(tr.astype(int))[1:], [20, 20, 20, 20])
    assert set(te) == {5.0}


def test_a_constant_target_cannot_be_binned(tmp_path):
    path = _csv(tmp_path, "c.csv", np.ones(10))
    spec = resolve_dataset({"format": "csv", "train": path, "task": "ordinal", "bins": 3})
    with pytest.raises(DataFormatError) as e:
        load_full(spec, cache=False)
    assert str(e.value) == (f"{path}: the target takes a single value: binning it gives one "
                            f"ordinal level, and ordinal regression needs at least two")


@pytest.mark.parametrize("node, key, message", [
    ({"format": "csv", "train": "a.csv", "bins": 4}, "dataset.bins",
     "bins cut a real target into ordinal levels, so it needs task 'ordinal' (the task here is "
     "'regression'); add 'task: ordinal' or remove bins"),
    ({"format": "csv", "train": "a.csv", "task": "ordinal", "bins": 1}, "dataset.bins",
     "must be an int in the range [2, 1000]. Got 1 instead."),
    ({"format": "libsvm-multiclass", "train": "a.svm", "task": "ordinal", "bins": 4},
     "dataset.bins", "is not used with format 'libsvm-multiclass' (equal-frequency binning of "
                     "a real target into ordinal levels is only set for 'arff-regression' and "
                     "'csv')"),
    ({"name": "bank-8fm", "bins": 10}, "dataset.bins",
     "bins cut a real target into ordinal levels, so it needs task 'ordinal' (the task here is "
     "'regression'); add 'task: ordinal' or remove bins"),
    ({"name": "bibtex", "task": "ordinal"}, "dataset.task",
     "must be 'multilabel' for format 'arff' (the only task it can be read as). Got 'ordinal' "
     "instead."),
])
def test_bad_bins_settings_are_config_errors_naming_the_key(node, key, message):
    with pytest.raises(ConfigError) as e:
        resolve_dataset(node, source="c.yaml")
    assert e.value.key_path == key
    assert message in str(e.value)


def test_a_registered_regression_set_can_be_read_as_binned_ordinal():
    spec = resolve_dataset({"name": "bank-8fm", "task": "ordinal", "bins": 10})
    assert spec.task == "ordinal" and dict(spec.options)["bins"] == 10
    assert spec.key() != resolve_dataset("bank-8fm").key()     # a distinct cache entry


@pytest.mark.skipif(not data_available("bank/bank8FM.arff.gz"),
                    reason="bank/bank8FM.arff.gz not on MLX_DATA_PATH")
def test_bank_8fm_in_ten_levels_of_819_or_820_rows():
    full = load_full(resolve_dataset({"name": "bank-8fm", "task": "ordinal", "bins": 10}))
    counts = np.bincount(full.Y.toarray().ravel().astype(int))[1:]
    assert counts.size == 10 and counts.sum() == 8192
    assert counts.min() >= 819 and counts.max() <= 820
