"""The registry of data formats (mlx.data.formats): what it holds, that spec validation,
loading and the command line read it, and that a new format is one module."""

import os
import subprocess
import sys
import textwrap

import pytest

from mlx.data import spec as spec_module
from mlx.data.formats import formats, get_format, writers
from mlx.data.spec import FORMAT_OPTIONS, FORMAT_TASKS, FORMATS

TASKS = {"multilabel", "multiclass", "regression", "ordinal"}


def test_formats_in_the_order_messages_list_them():
    assert [f.name for f in formats()] == ["arff", "arff-regression", "libsvm-multilabel",
                                           "libsvm-multiclass", "xc", "csv", "mldr"]
    assert [w.name for w in writers()] == ["xc", "libsvm"]
    assert list(FORMATS) == list(FORMAT_TASKS) == list(FORMAT_OPTIONS) == [
        f.name for f in formats()]
    # a file spec without a name is named by its train file, these endings dropped in order
    assert spec_module._SUFFIXES == (".gz", ".arff", ".svm", ".txt", ".libsvm", ".scale",
                                     ".csv", ".rda")


@pytest.mark.parametrize("fmt", formats(), ids=lambda f: f.name)
def test_each_format_is_complete(fmt):
    assert get_format(fmt.name) is fmt
    assert fmt.tasks and set(fmt.tasks) <= TASKS and FORMATS[fmt.name] == fmt.tasks[0]
    # the options a format takes are keys spec validation knows, with their checks
    assert set(fmt.options) <= set(spec_module._OPTION_WHAT)
    assert set(fmt.options) - {"n_labels", "n_features", "xml"} <= set(
        spec_module._OPTION_CHECKS)
    assert callable(fmt.read) and fmt.description
    if fmt.writer is not None:
        assert callable(fmt.writer.write) and fmt.writer.extension


def test_names_and_orders_are_unique():
    from dataclasses import replace

    from mlx.data.formats import check_unique

    xc, csv = get_format("xc"), get_format("csv")
    check_unique(formats())
    with pytest.raises(RuntimeError, match="^data formats: more than one format with name "
                                           "'xc' "):
        check_unique([xc, replace(csv, name="xc")])
    with pytest.raises(RuntimeError, match="more than one format with order 5 "):
        check_unique([xc, replace(csv, order=5)])
    with pytest.raises(RuntimeError, match="more than one writer with name 'xc' "):
        check_unique([xc, replace(csv, writer=replace(xc.writer, order=9))])


def test_unknown_format_message_lists_the_registry():
    from mlx.errors import ConfigError

    with pytest.raises(ConfigError) as exc:
        spec_module.resolve_dataset({"format": "libsvm", "train": "x"}, source="c.yaml")
    assert str(exc.value) == (
        "c.yaml: dataset.format: must be one of 'arff', 'arff-regression', "
        "'libsvm-multilabel', 'libsvm-multiclass', 'xc', 'csv', 'mldr'. Got 'libsvm' "
        "instead. Did you mean 'libsvm-multilabel' or 'libsvm-multiclass'?")


TOY = '''
"""format: toy -- one row per line: the class, then every feature value (dense)."""

from mlx.data.formats import Format, Option, Writer


def _check_scale(value, path, source):
    from mlx.validation import as_float

    return as_float(value, path, source, low=0, low_open=True)


def _read(spec, paths, options, xml, xml_beside):
    import numpy as np
    import scipy.sparse as sp

    from mlx.data.dataset import Dataset, canonical_csr

    out = []
    for path in paths.values():
        rows = np.loadtxt(path, ndmin=2)
        y = rows[:, 0].astype(int)
        Y = sp.csr_matrix((np.ones(y.size), (np.arange(y.size), y)), shape=(y.size, 3))
        X = rows[:, 1:] * options.get("scale", 1.0)
        out.append(Dataset(X=canonical_csr(X), Y=canonical_csr(Y), name=spec.name,
                           task=spec.task))
    return out


def _write(dataset, path):
    import numpy as np

    rows = np.column_stack([dataset.Y.toarray().argmax(1), dataset.X.toarray()])
    np.savetxt(path, rows, fmt="%g")
    return path


FORMAT = Format(name="toy", description="dense text", order=100, tasks=("multiclass",),
                suffixes=(".toy",), read=_read, options=("scale",),
                new_options=(Option("scale", "a factor of every feature value", _check_scale),),
                writer=Writer(name="toy", extension="toy", write=_write,
                              description="dense text", order=100))
'''


def _mlx(tmp_path, *args):
    """``mlx ARGS`` in a fresh interpreter whose format registry also searches ``plugins/``
    (as if toy.py were a module of mlx/data/formats)."""
    code = ("import sys, mlx.data.formats as f; f.__path__.append(sys.argv[1]); "
            "from mlx.cli import main; main(sys.argv[2:])")
    env = {**os.environ, "MLX_HOME": str(tmp_path / "home")}
    return subprocess.run([sys.executable, "-c", code, str(tmp_path / "plugins"), *args],
                          cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)


def test_a_new_format_is_one_module(tmp_path):
    (tmp_path / "plugins").mkdir()
    (tmp_path / "plugins" / "toy.py").write_text(TOY)
    (tmp_path / "a.toy").write_text("0 1 0 2\n2 0 3 0\n1 0 0 1\n")
    (tmp_path / "b.toy").write_text("1 5 0 0\n")
    r = _mlx(tmp_path, "datasets", "info", "--format", "toy", "a.toy", "--test", "b.toy")
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines()[0] == "a: toy files (multiclass): train a.toy, test b.toy"
    assert r.stdout.splitlines()[2].split() == ["train", "3", "3", "3", "1.33", "1.000"]
    r = _mlx(tmp_path, "datasets", "info", "--format", "toy", "a.toy", "--task", "ordinal")
    assert r.returncode == 2
    assert r.stderr == ("Error: --task: must be 'multiclass' for format 'toy' (the only task "
                        "it can be read as). Got 'ordinal' instead.\n")
    r = _mlx(tmp_path, "datasets", "convert", "--format", "toy", "a.toy", "--test", "b.toy",
             "--to", "toy", "-o", "out")
    assert r.returncode == 0, r.stderr
    assert (tmp_path / "out" / "a-train.toy").read_text() == "0 1 0 2\n2 0 3 0\n1 0 0 1\n"
    r = _mlx(tmp_path, "datasets", "convert", "--help")
    assert "[xc|libsvm|toy]" in r.stdout
    assert "mldr (an R mldr object, .rda), toy (dense text)." in " ".join(
        _mlx(tmp_path, "datasets", "info", "--help").stdout.split())
    config = textwrap.dedent("""\
        name: c
        dataset: {format: toy, train: a.toy, test: b.toy, scale: SCALE}
        methods: [{name: constant}]
        """)
    (tmp_path / "c.yaml").write_text(config.replace("toy,", "toys,").replace("SCALE", "2"))
    r = _mlx(tmp_path, "validate", "c.yaml")
    assert r.returncode == 2
    assert r.stderr == ("Error: c.yaml: dataset.format: must be one of 'arff', "
                        "'arff-regression', 'libsvm-multilabel', 'libsvm-multiclass', 'xc', "
                        "'csv', 'mldr', 'toy'. Got 'toys' instead. Did you mean 'toy'?\n")
    # an option of its own, checked as a config is validated and given to the reader
    (tmp_path / "c.yaml").write_text(config.replace("SCALE", "-1"))
    r = _mlx(tmp_path, "validate", "c.yaml")
    assert r.returncode == 2
    assert r.stderr == ("Error: c.yaml: dataset.scale: must be a float in the range (0, inf). "
                        "Got -1 instead.\n")
    (tmp_path / "c.yaml").write_text(config.replace("SCALE", "2"))
    r = _mlx(tmp_path, "datasets", "convert", "--config", "c.yaml", "--to", "toy", "-o", "o2")
    assert r.returncode == 0, r.stderr
    assert (tmp_path / "o2" / "a-test.toy").read_text() == "1 10 0 0\n"
    (tmp_path / "c.yaml").write_text(config.replace("SCALE", "2").replace("format: toy",
                                                                         "format: xc"))
    r = _mlx(tmp_path, "validate", "c.yaml")
    assert r.returncode == 2
    assert r.stderr == ("Error: c.yaml: dataset.scale: is not used with format 'xc' (a factor "
                        "of every feature value is only set for 'toy')\n")
