import hashlib
import importlib.resources
import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import yaml

from mlx.data import catalog
from mlx.data.catalog import (
    FORMAT_TASKS,
    FORMATS,
    DatasetSpec,
    cache_dir,
    dataset_info,
    find_file,
    find_files,
    list_datasets,
    load_full,
    load_split,
    resolve_dataset,
    search_path,
)
from mlx.data.convert import write_xc
from mlx.data.fetch import file_url
from mlx.data.synthetic import make_low_rank_multilabel
from mlx.errors import ConfigError, DataFormatError, DataNotFoundError, UnknownNameError

REPO = Path(__file__).resolve().parents[2]
TRAIN_SVM = "0,2 1:0.5 3:2\n1 2:1\n"
TEST_SVM = "3 4:1\n"


def sha(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def same(a, b):
    return a.shape == b.shape and (a != b).nnz == 0


@pytest.fixture
def toy(monkeypatch):
    """Register a tiny LIBSVM dataset 'toy' (files not placed anywhere yet)."""
    entry = {
        "format": "libsvm-multilabel", "task": "multilabel", "n_features": 4, "n_labels": 4,
        "files": {"train": {"path": "toy/toy-train.svm.gz", "sha256": sha(TRAIN_SVM)},
                  "test": {"path": "toy/toy-test.svm", "sha256": sha(TEST_SVM)}},
    }
    monkeypatch.setitem(catalog.registry(), "toy", entry)
    return entry


# ----------------------------------------------------------------------------- registry
def test_registry_lists_the_benchmarks():
    names = list_datasets()
    assert names == sorted(names)
    for name in ("bibtex", "delicious", "scene", "yeast", "corel5k", "glass", "satimage",
                 "abalone", "cadata", "shuttle", "wine-quality-red", "wine-quality-white",
                 "bodyfat", "rf1-substitute"):
        assert name in names


@pytest.mark.parametrize("name", list_datasets())
def test_registry_entries_are_complete(name):
    entry = catalog.get_entry(name)
    assert entry["format"] in FORMATS and entry["task"] in FORMAT_TASKS[entry["format"]]
    assert FORMATS[entry["format"]] == FORMAT_TASKS[entry["format"]][0]
    assert entry["description"] and entry["licence"]
    resolve_dataset(name)  # its format options are valid
    roles = set(entry["files"])
    assert roles <= {"train", "test", "data", "xml"}
    assert ("data" in roles) != ("train" in roles)
    if entry["format"] == "arff":
        assert isinstance(entry["n_labels"], int) and "xml" in roles
    for f in entry["files"].values():
        assert not Path(f["path"]).is_absolute() and "/" in f["path"]
        assert re.fullmatch(r"[0-9a-f]{64}", f["sha256"])
        src = f["source"]
        assert re.fullmatch(r"[0-9a-f]{40}", src["commit"])
        assert f["url"] == (f"https://raw.githubusercontent.com/{src['repository']}/"
                            f"{src['commit']}/{src['path']}")
        assert file_url(f) == f["url"]


def test_dataset_info_is_a_copy_with_a_source_summary():
    info = dataset_info("bibtex")
    assert info["name"] == "bibtex" and info["n_labels"] == 159
    assert info["source"] == {"repository": "tsoumakas/mulan",
                              "commit": "43f6389095ad71984264db4387a8074b22bc7d4a"}
    info["files"].clear()
    assert catalog.get_entry("bibtex")["files"]
    assert dataset_info("satimage")["source"]["repository"] == \
        "duvenaud/warped-mixtures, peterwu19881230/CSCE633_ML_data"


# ----------------------------------------------------------------------------- search path
def test_search_path_order(monkeypatch, tmp_path):
    monkeypatch.setenv("MLX_DATA_PATH", os.pathsep.join(["/a", "", "/b"]))
    assert search_path() == [Path("/a"), Path("/b"), Path.cwd() / "datasets",
                             tmp_path / "mlx-home" / "datasets"]
    monkeypatch.delenv("MLX_HOME")
    assert search_path()[-1] == Path.home() / ".cache" / "mlx" / "datasets"


def test_find_file_accepts_the_name_with_or_without_gz(tmp_path):
    (tmp_path / "d1" / "x").mkdir(parents=True)
    (tmp_path / "d2" / "x").mkdir(parents=True)
    (tmp_path / "d2" / "x" / "a.arff").write_text("")
    (tmp_path / "d2" / "x" / "b.svm.gz").write_text("")
    dirs = [tmp_path / "d1", tmp_path / "d2"]
    assert find_file("x/a.arff.gz", dirs) == tmp_path / "d2" / "x" / "a.arff"
    assert find_file("x/b.svm", dirs) == tmp_path / "d2" / "x" / "b.svm.gz"
    assert find_file("x/c.svm", dirs) is None


# ----------------------------------------------------------------------------- specs
def test_registry_name_forms():
    spec = resolve_dataset("bibtex")
    assert spec == resolve_dataset({"name": "bibtex"})
    assert spec.key() == resolve_dataset({"name": "bibtex"}).key()
    assert (spec.kind, spec.format, spec.task, spec.n_labels) == ("registry", "arff",
                                                                   "multilabel", 159)
    assert spec.files == (("train", "bibtex/bibtex-train.arff.gz"),
                          ("test", "bibtex/bibtex-test.arff.gz"))
    assert dict(spec.checksums)["train"] == catalog.get_entry("bibtex")["files"]["train"]["sha256"]
    assert spec.has_split and not resolve_dataset("glass").has_split


def test_file_and_synthetic_forms():
    spec = resolve_dataset({"format": "libsvm-multilabel", "train": "d/train.svm",
                            "test": "d/test.svm", "n_features": 10})
    assert (spec.kind, spec.name, spec.task, spec.n_features) == ("files", "d", "multilabel",
                                                                   10)
    assert spec.files == (("train", "d/train.svm"), ("test", "d/test.svm"))
    arff = resolve_dataset({"format": "arff", "train": "a", "test": "b", "xml": "c.xml",
                            "name": "mine"})
    assert (arff.name, arff.xml, arff.n_labels) == ("mine", "c.xml", None)
    syn = resolve_dataset({"synthetic": {"n_samples": 30, "rank": 2, "seed": 3}})
    params = dict(syn.params)
    assert params["n_samples"] == 30 and params["rank"] == 2 and params["n_labels"] == 20
    assert syn.name == "synthetic" and syn.task == "multilabel"
    other = resolve_dataset({"synthetic": {"n_samples": 30, "rank": 2, "seed": 4}})
    assert syn.key() != other.key()
    mc = resolve_dataset({"synthetic": {"task": "multiclass", "n_classes": 3}})
    assert mc.task == "multiclass" and dict(mc.params)["n_classes"] == 3


def test_csv_file_spec_options_and_task():
    spec = resolve_dataset({"format": "csv", "train": "w/winequality-red.csv.gz", "sep": ";",
                            "target": "quality", "task": "ordinal"})
    assert (spec.name, spec.format, spec.task) == ("winequality-red", "csv", "ordinal")
    assert spec.options == (("sep", ";"), ("target", "quality"))
    assert dict(spec.options) == {"sep": ";", "target": "quality"}
    plain = resolve_dataset({"format": "csv", "train": "w/winequality-red.csv.gz"})
    assert plain.task == "regression" and plain.options == ()
    assert len({spec.key(), plain.key(),
                resolve_dataset({"format": "csv", "train": "w/winequality-red.csv.gz",
                                 "sep": ";", "target": "quality"}).key()}) == 3
    mtr = resolve_dataset({"format": "arff-regression", "train": "rf1.arff", "n_targets": 8,
                           "missing": "nan"})
    assert mtr.options == (("missing", "nan"), ("n_targets", 8))
    assert resolve_dataset({"format": "libsvm-multiclass", "train": "a.svm",
                            "task": "ordinal"}).task == "ordinal"
    assert resolve_dataset({"format": "csv", "train": "s.trn", "header": False, "sep": " ",
                            "target": 10}).options == (("header", False), ("sep", " "),
                                                       ("target", 10))


def test_registry_format_options_are_validated(monkeypatch):
    entry = {"format": "csv", "task": "ordinal", "sep": "ab",
             "files": {"data": {"path": "x/x.csv", "sha256": "0" * 64}}}
    monkeypatch.setitem(catalog.registry(), "bad", entry)
    with pytest.raises(ConfigError) as exc:
        resolve_dataset("bad", source="c.yaml")
    assert str(exc.value).startswith("mlx/data/registry.yaml: datasets.bad.sep: must be one "
                                     "separator character")
    monkeypatch.setitem(catalog.registry(), "bad", dict(entry, sep=";", task="multilabel"))
    with pytest.raises(ConfigError, match=r"datasets.bad.task: must be 'regression', 'ordinal'"):
        resolve_dataset("bad")


def test_csv_options_reach_the_reader_and_key_the_cache(write):
    path = write("w.csv", '"a";"q";"b"\n1;5;2\n3;6;0\n')
    node = {"format": "csv", "train": str(path), "sep": ";"}
    last = load_full(resolve_dataset(node))
    assert last.label_names == ("b",) and last.task == "regression"
    by_name = load_full(resolve_dataset(dict(node, target="q", task="ordinal")))
    assert by_name.label_names == ("q",) and by_name.task == "ordinal"
    np.testing.assert_array_equal(by_name.Y.toarray(), [[5], [6]])
    np.testing.assert_array_equal(by_name.X.toarray(), [[1, 2], [3, 0]])
    classes = load_full(resolve_dataset(dict(node, target=2, task="multiclass")))
    assert classes.label_names == ("5", "6") and classes.Y.shape == (2, 2)
    assert len(list((cache_dir() / "parsed").glob("*.npz"))) == 3
    catalog.clear_memo()
    again = load_full(resolve_dataset(dict(node, target="q", task="ordinal")))  # from .npz
    assert again.task == "ordinal" and same(again.Y, by_name.Y)


def test_libsvm_multiclass_spec_read_as_ordinal(write):
    path = write("o.svm", "3 1:1\n1 2:1\n")
    ds = load_full(resolve_dataset({"format": "libsvm-multiclass", "train": str(path),
                                    "task": "ordinal"}))
    assert ds.task == "ordinal"
    np.testing.assert_array_equal(ds.Y.toarray(), [[3], [1]])


def test_resolve_does_not_check_files():
    spec = resolve_dataset({"format": "xc", "train": "/nonexistent/a.txt",
                            "test": "/nonexistent/b.txt"}, source="c.yaml")
    with pytest.raises(DataNotFoundError) as exc:
        load_split(spec)
    assert str(exc.value) == "/nonexistent/a.txt: file not found (config key dataset.train " \
                             "in c.yaml)"
    assert find_files(spec) == ["/nonexistent/a.txt", "/nonexistent/b.txt"]


ALL_KEYS = ("bins, format, header, missing, n_features, n_labels, n_targets, name, sep, synthetic, "
            "target, task, test, train, xml")


@pytest.mark.parametrize("node, message", [
    ({"format": "xc", "train": "a", "tset": "b"},
     f"c.yaml: unknown key 'dataset.tset'. Did you mean 'dataset.test'? Valid keys under "
     f"'dataset': {ALL_KEYS}"),
    ({"synthetic": {"n_labels": 0}},
     "c.yaml: dataset.synthetic.n_labels: must be an int >= 1. Got 0 instead."),
    ({"synthetic": {"n_label": 5}},
     "c.yaml: unknown key 'dataset.synthetic.n_label'. Did you mean "
     "'dataset.synthetic.n_labels'? Valid keys under 'dataset.synthetic': density, "
     "label_noise, n_features, n_labels, n_samples, n_test, positive_fraction, rank, seed, task"),
    ({"synthetic": {"density": 2}},
     "c.yaml: dataset.synthetic.density: must be a float in the range (0, 1]. Got 2 instead."),
    ({"synthetic": {"seed": -1}},
     "c.yaml: dataset.synthetic.seed: must be an int >= 0. Got -1 instead."),
    ({"synthetic": {"task": "ranking"}},
     "c.yaml: dataset.synthetic.task: must be 'multilabel' or 'multiclass'. "
     "Got 'ranking' instead."),
    ({"synthetic": [1, 2]},
     "c.yaml: dataset.synthetic: must be a mapping of generator parameters. "
     "Got [1, 2] instead."),
    ({"synthetic": {}, "train": "x"},
     "c.yaml: dataset.train: cannot be combined with 'synthetic' (a synthetic dataset takes "
     "only 'synthetic' and 'name')"),
    ({"format": "libsvm", "train": "a"},
     "c.yaml: dataset.format: must be one of 'arff', 'arff-regression', 'libsvm-multilabel', "
     "'libsvm-multiclass', 'xc', 'csv', 'mldr'. Got 'libsvm' instead. "
     "Did you mean 'libsvm-multilabel' or "
     "'libsvm-multiclass'?"),
    ({"format": "arf", "train": "a"},
     "c.yaml: dataset.format: must be one of 'arff', 'arff-regression', 'libsvm-multilabel', "
     "'libsvm-multiclass', 'xc', 'csv', 'mldr'. Got 'arf' instead. Did you mean 'arff'?"),
    ({"format": "xc", "train": "a", "n_features": 5},
     "c.yaml: dataset.n_features: is not used with format 'xc' (the number of features is "
     "only set for 'libsvm-multilabel' and 'libsvm-multiclass')"),
    ({"format": "libsvm-multilabel", "train": "a", "n_labels": True},
     "c.yaml: dataset.n_labels: must be an int >= 1. Got True instead."),
    ({"format": "libsvm-multilabel", "train": ""},
     "c.yaml: dataset.train: must be a non-empty string. Got '' instead."),
    ({"format": "xc"},
     "c.yaml: dataset: a file spec needs 'train' (the training file; 'test' is optional)"),
    ({"train": "a"},
     "c.yaml: dataset: a file spec needs 'format' (one of arff, arff-regression, "
     "libsvm-multilabel, libsvm-multiclass, xc, csv, mldr) and 'train'"),
    ({"name": 5}, "c.yaml: dataset.name: must be a registered dataset name. Got 5 instead."),
    (42, "c.yaml: dataset: must be a registered dataset name, {name: NAME}, a file spec "
         "{format, train, test, ...} or {synthetic: {...}}. Got 42 instead."),
    ({"format": "csv", "train": "a", "sep": ";;"},
     "c.yaml: dataset.sep: must be one separator character such as ',', ';', '\\t' or ' ' (any "
     "run of blanks), not a letter, digit, '.', '+', '-' or quote. Got ';;' instead."),
    ({"format": "csv", "train": "a", "sep": "."},
     "c.yaml: dataset.sep: must be one separator character such as ',', ';', '\\t' or ' ' (any "
     "run of blanks), not a letter, digit, '.', '+', '-' or quote. Got '.' instead."),
    ({"format": "csv", "train": "a", "header": "yes"},
     "c.yaml: dataset.header: must be true or false. Got 'yes' instead."),
    ({"format": "csv", "train": "a", "target": 0},
     "c.yaml: dataset.target: must be a column name from the header or a column number "
     "(1-based). Got 0 instead."),
    ({"format": "csv", "train": "a", "target": "y", "header": False},
     "c.yaml: dataset.target: names the column 'y', but header is false; give the column "
     "number (1-based) instead"),
    ({"format": "csv", "train": "a", "missing": "drop"},
     "c.yaml: dataset.missing: must be 'error' (a missing value is an error) or 'nan' (a "
     "missing feature value is read as NaN; add the impute_mean preprocessing step). Got "
     "'drop' instead."),
    ({"format": "csv", "train": "a", "task": "multilabel"},
     "c.yaml: dataset.task: must be 'regression', 'ordinal' or 'multiclass' for format 'csv'. "
     "Got 'multilabel' instead."),
    ({"format": "arff", "train": "a", "n_labels": 2, "task": "regression"},
     "c.yaml: dataset.task: must be 'multilabel' for format 'arff' (the only task it can be "
     "read as). Got 'regression' instead."),
    ({"format": "libsvm-multiclass", "train": "a", "sep": ";"},
     "c.yaml: dataset.sep: is not used with format 'libsvm-multiclass' (the separator is only "
     "set for 'csv')"),
    ({"format": "csv", "train": "a", "n_targets": 2},
     "c.yaml: dataset.n_targets: is not used with format 'csv' (the number of targets is only "
     "set for 'arff-regression')"),
    ({"format": "xc", "train": "a", "missing": "nan"},
     "c.yaml: dataset.missing: is not used with format 'xc' (the handling of missing values is "
     "only set for 'arff-regression' and 'csv')"),
    ({"format": "arff-regression", "train": "a", "n_targets": 0},
     "c.yaml: dataset.n_targets: must be an int >= 1. Got 0 instead."),
])
def test_invalid_specs(node, message):
    with pytest.raises(ConfigError) as exc:
        resolve_dataset(node, source="c.yaml")
    assert str(exc.value) == message


def test_unknown_dataset_name_suggests():
    with pytest.raises(UnknownNameError) as exc:
        resolve_dataset("bibtx", source="c.yaml")
    assert str(exc.value).startswith("c.yaml: dataset: unknown dataset 'bibtx'. Did you mean "
                                     "'bibtex'? Available datasets: abalone, bank-32nh, ")
    with pytest.raises(UnknownNameError) as exc:
        resolve_dataset({"name": "yeats"}, source="c.yaml")
    assert str(exc.value).startswith("c.yaml: dataset.name: unknown dataset 'yeats'. "
                                     "Did you mean 'yeast'?")


# ----------------------------------------------------------------------------- loading
def test_registry_dataset_missing_file_message(toy, monkeypatch, tmp_path):
    monkeypatch.delenv("MLX_DATA_PATH", raising=False)
    spec = resolve_dataset("toy")
    assert find_files(spec) == ["toy/toy-train.svm.gz", "toy/toy-test.svm"]
    with pytest.raises(DataNotFoundError) as exc:
        load_split(spec)
    assert str(exc.value) == (
        "dataset 'toy': file toy/toy-train.svm.gz not found on the data path "
        f"(MLX_DATA_PATH=unset, ./datasets, {tmp_path / 'mlx-home' / 'datasets'}); "
        "run 'mlx datasets fetch toy' or set MLX_DATA_PATH")


def test_registry_dataset_loads_from_the_search_path_and_verifies(toy, monkeypatch, tmp_path,
                                                                 write):
    data = tmp_path / "data"
    monkeypatch.setenv("MLX_DATA_PATH", str(data))
    (Path("datasets") / "toy").mkdir(parents=True)
    (Path("datasets") / "toy" / "toy-train.svm").write_text(TRAIN_SVM)  # raw, not .gz
    (data / "toy").mkdir(parents=True)
    (data / "toy" / "toy-test.svm").write_text(TEST_SVM)
    spec = resolve_dataset("toy")
    assert find_files(spec) == []
    split = load_split(spec)
    assert split.train.X.shape == (2, 4) and split.test.Y.shape == (1, 4)
    np.testing.assert_array_equal(split.test.Y.toarray(), [[0, 0, 0, 1]])

    # a different file under the registered name is refused
    (data / "toy" / "toy-test.svm").write_text("1 1:1\n")
    catalog.clear_memo()
    with pytest.raises(DataFormatError) as exc:
        load_split(spec)
    assert str(exc.value).startswith(f"{data / 'toy' / 'toy-test.svm'}: content sha256 ")
    assert str(exc.value).endswith(f"does not match the registry's {sha(TEST_SVM)[:16]}... "
                                   "(dataset 'toy', test file); the file is damaged or a "
                                   "different version: delete it and run 'mlx datasets fetch "
                                   "toy'")


def test_explicit_files_relative_paths_and_widths(write, monkeypatch, tmp_path):
    write("d/train.svm", TRAIN_SVM)
    write("d/test.svm", "5 6:1\n")
    monkeypatch.setenv("MLX_DATA_PATH", str(tmp_path / "files"))
    spec = resolve_dataset({"format": "libsvm-multilabel", "train": "d/train.svm",
                            "test": "d/test.svm"})
    split = load_split(spec)
    assert split.train.X.shape == (2, 6) and split.test.X.shape == (1, 6)
    assert split.train.n_features == split.test.n_features == 6
    assert split.train.n_labels == split.test.n_labels == 6
    assert split.name == "d"
    name = resolve_dataset({"format": "arff", "train": "x/bibtex-train.arff.gz",
                            "n_labels": 3}).name
    assert name == "bibtex"


def test_second_load_uses_the_caches(write, monkeypatch):
    tr, te = write("train.svm", TRAIN_SVM), write("test.svm", TEST_SVM)
    spec = resolve_dataset({"format": "libsvm-multilabel", "train": str(tr), "test": str(te),
                            "name": "small"})
    calls = []
    real = catalog._parse
    monkeypatch.setattr(catalog, "_parse", lambda *a: calls.append(a) or real(*a))
    first = load_split(spec)
    assert len(calls) == 1
    assert load_split(spec).train is first.train  # in-process memo
    catalog.clear_memo()
    again = load_split(spec)  # from the .npz cache
    assert len(calls) == 1
    assert same(again.train.X, first.train.X) and same(again.test.Y, first.test.Y)
    assert again.train.name == "small" and again.train.task == "multilabel"
    assert len(list((cache_dir() / "parsed").glob("*.npz"))) == 1
    assert (cache_dir() / "sha256-index.json").is_file()

    load_split(spec, cache=False)
    assert len(calls) == 2

    # a damaged cache file is ignored and rewritten
    npz = next((cache_dir() / "parsed").glob("*.npz"))
    npz.write_bytes(b"not a zip file")
    catalog.clear_memo()
    assert same(load_split(spec).train.X, first.train.X)
    assert len(calls) == 3
    catalog.clear_memo()
    load_split(spec)
    assert len(calls) == 3

    # changed content -> new key -> parsed again
    tr.write_text(TRAIN_SVM + "1 1:1\n")
    catalog.clear_memo()
    assert load_split(spec).train.n_samples == 3
    assert len(calls) == 4


def test_concurrent_loaders_share_one_cache_file(tmp_path):
    split = make_low_rank_multilabel(3000, 200, 50, 5, n_test=500, density=0.05, seed=0)
    tr = write_xc(split.train, tmp_path / "tr.txt")
    te = write_xc(split.test, tmp_path / "te.txt")
    code = ("import sys; from mlx.data.catalog import resolve_dataset, load_split; "
            "s = load_split(resolve_dataset({'format': 'xc', 'train': sys.argv[1], "
            "'test': sys.argv[2]})); print(s.train.X.nnz, s.test.Y.nnz)")
    env = dict(os.environ, PYTHONPATH=str(REPO))
    procs = [subprocess.Popen([sys.executable, "-c", code, str(tr), str(te)], env=env,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for _ in range(3)]
    outs = [p.communicate(timeout=60) for p in procs]
    expected = f"{split.train.X.nnz} {split.test.Y.nnz}"
    for p, (out, err) in zip(procs, outs):
        assert p.returncode == 0, err
        assert out.strip() == expected
    files = sorted(p.name for p in (cache_dir() / "parsed").iterdir())
    assert len(files) == 1 and files[0].endswith(".npz")


def test_datasets_without_a_split(toy, monkeypatch, tmp_path, write):
    with pytest.raises(ConfigError) as exc:
        load_split(resolve_dataset("glass", source="c.yaml"))
    assert str(exc.value) == "c.yaml: dataset: 'glass' has no train/test split (only " \
                             "glass/glass.scale); choose a dataset with train and test files"
    entry = {"format": "libsvm-multiclass", "task": "multiclass",
             "files": {"data": {"path": "one/all.svm", "sha256": sha("2 1:1\n5 2:1\n")}}}
    monkeypatch.setitem(catalog.registry(), "one", entry)
    write("one/all.svm", "2 1:1\n5 2:1\n")
    monkeypatch.setenv("MLX_DATA_PATH", str(tmp_path / "files"))
    full = load_full(resolve_dataset("one"))
    assert full.label_names == ("2", "5") and full.X.shape == (2, 2)


def test_load_full_stacks_train_and_test(write):
    tr, te = write("train.svm", TRAIN_SVM), write("test.svm", TEST_SVM)
    full = load_full(resolve_dataset({"format": "libsvm-multilabel", "train": str(tr),
                                      "test": str(te)}))
    assert full.X.shape == (3, 4) and full.Y.shape == (3, 4)
    np.testing.assert_array_equal(full.Y.toarray()[2], [0, 0, 0, 1])


def test_synthetic_spec_loads_and_is_memoised():
    spec = resolve_dataset({"synthetic": {"n_samples": 30, "n_test": 10, "n_features": 8,
                                          "n_labels": 5, "rank": 2}, "name": "tiny"})
    split = load_split(spec)
    assert split.train.X.shape == (30, 8) and split.test.Y.shape == (10, 5)
    assert split.name == "tiny" and load_split(spec) is split
    assert find_files(spec) == []
    assert load_full(spec).n_samples == 40


def test_arff_spec_with_xml(write):
    head = ("@relation t\n@attribute a numeric\n@attribute b {0,1}\n@attribute c {0,1}\n"
            "@data\n")
    tr = write("t-train.arff", head + "{0 1,1 1}\n{2 1}\n")
    te = write("t-test.arff", head + "{0 2,1 1,2 1}\n")
    xml = write("t.xml", '<labels><label name="c"/><label name="b"/></labels>')
    split = load_split(resolve_dataset({"format": "arff", "train": str(tr), "test": str(te),
                                        "xml": str(xml)}))
    assert split.train.label_names == ("b", "c")
    np.testing.assert_array_equal(split.train.Y.toarray(), [[1, 0], [0, 1]])
    np.testing.assert_array_equal(split.test.X.toarray(), [[2]])


def test_spec_is_frozen_and_hashable():
    spec = resolve_dataset("yeast")
    with pytest.raises(AttributeError):
        spec.name = "x"
    assert {spec: 1}[resolve_dataset("yeast")] == 1
    assert isinstance(spec, DatasetSpec)


# ----------------------------------------------------------------------------- real data
def _raw_registry() -> dict:
    text = importlib.resources.files("mlx.data").joinpath("registry.yaml").read_text("utf-8")
    return yaml.load(text, Loader=yaml.BaseLoader)["datasets"]  # numbers stay as printed


_MANIFEST_KEYS = {"n": "n", "d": "d", "L": "L", "K": "L", "avg nnz feats": "avg_features",
                  "avg nnz": "avg_features", "avg labels": "avg_labels"}


def _manifest_stats(dirs) -> dict:
    """relative path -> {stat: printed value} from MANIFEST.md's file table, if present."""
    for d in dirs:
        path = d / "MANIFEST.md"
        if path.is_file():
            break
    else:
        return {}
    out = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) != 11 or not cells[1].startswith("`"):
            continue
        stats = {}
        for key, value in re.findall(r"(\bn|\bd|\bL|\bK|avg nnz feats|avg nnz|avg labels)="
                                     r"([0-9.]+)", cells[5]):
            stats[_MANIFEST_KEYS[key]] = value
        mean = re.search(r"mean ([-0-9.]+)", cells[5])
        if mean and "target" in cells[5]:
            stats["target_mean"] = mean.group(1)
        out[cells[1].strip("`")] = stats
    return out


def _close(actual: float, printed: str) -> bool:
    decimals = len(printed.split(".")[1]) if "." in printed else 0
    return abs(actual - float(printed)) <= 0.5 * 10.0 ** -decimals + 1e-9


# The rcv1 subsets decompress 2.3 GB each (10 s or more): one in the quick suite.
_SLOW_TO_READ = {f"rcv1sub{i}" for i in range(2, 6)}


@pytest.mark.data
@pytest.mark.parametrize("name", [pytest.param(n, marks=pytest.mark.slow) if n in _SLOW_TO_READ
                                  else n for n in list_datasets()])
def test_registered_statistics_match_the_data(name, data_dirs):
    entry = _raw_registry()[name]
    files = {role: f for role, f in entry["files"].items() if role != "xml"}
    missing = [f["path"] for f in files.values() if find_file(f["path"], data_dirs) is None]
    if not data_dirs or missing:
        pytest.skip(f"{', '.join(missing) or name} not on MLX_DATA_PATH")
    spec = resolve_dataset(name)
    if spec.has_split:
        split = load_split(spec)
        parts = {"train": split.train, "test": split.test}
    else:
        (role,) = files
        parts = {role: load_full(spec)}
    manifest = _manifest_stats(data_dirs)
    for role, ds in parts.items():
        expected = files[role]["stats"]
        actual = ds.stats()
        if ds.task in ("regression", "ordinal"):
            actual["target_mean"] = float(ds.Y.toarray().mean())
        for key, printed in expected.items():
            if key in ("n", "d", "L"):
                assert actual[key] == int(printed), (role, key)
            else:
                assert _close(actual[key], printed), (role, key, actual[key], printed)
        if files[role]["path"] in manifest:
            for key, printed in manifest[files[role]["path"]].items():
                assert expected.get(key) == printed, (role, key)


# ----------------------------------------------------------------------------- misread formats
MULTICLASS_SVM = "1 1:0.5\n3 2:1\n2 1:1 3:2\n5 3:1\n"     # classes 1..5, one per row


def _svm_spec(tmp_path, train, test, fmt="libsvm-multilabel"):
    (tmp_path / "tr.svm").write_text(train)
    (tmp_path / "te.svm").write_text(test)
    return resolve_dataset({"format": fmt, "train": str(tmp_path / "tr.svm"),
                            "test": str(tmp_path / "te.svm")})


def test_a_multiclass_file_read_as_multilabel_is_warned_about_on_every_load(tmp_path, caplog):
    spec = _svm_spec(tmp_path, MULTICLASS_SVM, "2 1:1\n4 2:1\n")
    for cache in (True, True, False):          # parsed, then from the on-disk cache, then afresh
        catalog.clear_memo()                           # as in a new process
        caplog.clear()
        with caplog.at_level("WARNING", logger="mlx.data"):
            split = load_split(spec, cache=cache)
        assert split.train.Y.shape[1] == 6               # labels 0..5: label 0 is the phantom
        assert [r.getMessage() for r in caplog.records] == [
            f"{tmp_path / 'tr.svm'}: every row has exactly one label and label 0 occurs in no "
            f"row: this looks like a multi-class file with classes numbered from 1, read as "
            f"multi-label with 6 labels of which label 0 is a phantom; use "
            f"format: libsvm-multiclass"]


@pytest.mark.parametrize("train, test", [
    ("1 1:0.5\n3 2:1\n", "0 1:1\n"),                   # label 0 occurs (in the test file)
    ("1 1:0.5\n3,2 2:1\n", "2 1:1\n"),                 # a row with two labels
    ("1 1:0.5\n 2:1\n", "2 1:1\n"),                    # a row with none
])
def test_genuine_multilabel_files_are_not_warned_about(tmp_path, caplog, train, test):
    spec = _svm_spec(tmp_path, train, test)
    with caplog.at_level("WARNING", logger="mlx.data"):
        load_split(spec, cache=False)
    assert not [r for r in caplog.records if "multi-class" in r.getMessage()]
