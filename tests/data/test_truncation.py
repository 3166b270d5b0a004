"""A last line without a newline is no fault by itself (many tools write files so, among them
the canonical Mulan files); a last line that ends inside a value was cut short and is an
error naming the file and the line, unless the file's checksum was verified against the
published one."""

import logging

import pytest

from mlx.data.lineparse import checksum_verified
from mlx.errors import DataFormatError


def _reader(fmt):
    from mlx.data.arff import read_arff_regression, read_mulan_arff
    from mlx.data.delimited import read_delimited_files
    from mlx.data.libsvm import read_libsvm_multiclass, read_libsvm_multilabel
    from mlx.data.xc_repo import read_xc

    return {"libsvm": read_libsvm_multiclass,
            "libsvm-ml": read_libsvm_multilabel,
            "xc": read_xc,
            "arff": read_arff_regression,
            "mulan": lambda p: read_mulan_arff(p, n_labels=2),
            "csv": lambda p: read_delimited_files([p])}[fmt]


INTACT = [
    ("libsvm", "1 1:0.5 2:0.25\n0 1:1 2:0.5"),
    ("libsvm", "1 1:0.5 2:0.25\n0 1:1 2:5e-3"),
    ("libsvm-ml", "1,2 1:0.5\n3"),
    ("libsvm", "1 1:0.5 2:0.25\n# a comment."),
    ("xc", "2 3 2\n0 0:1 2:0.5\n1 1:2"),
    ("arff", "@relation r\n@attribute a numeric\n@attribute y numeric\n@data\n1,2\n3,4"),
    ("mulan", "@relation r\n@attribute a numeric\n@attribute l1 {0,1}\n@attribute l2 {0,1}\n"
              "@data\n{0 1,1 1}\n{0 2,2 1}"),
    ("csv", "a,y\n1,2\n3,4"),
    ("csv", "a,y\n1,2\n3,4e5"),
]

CUT = [
    ("libsvm", "1 1:0.5 2:0.25\n0 1:1 2:0.", 2, "2:0."),
    ("libsvm", "1 1:0.5 2:0.25\n0 1:1 2:1e", 2, "2:1e"),
    ("libsvm-ml", "1,2 1:0.5\n3,", 2, "3,"),
    ("xc", "2 3 2\n0 0:1 2:0.5\n1 1:2.5e-", 3, "1:2.5e-"),
    ("arff", "@relation r\n@attribute a numeric\n@attribute y numeric\n@data\n1,2\n3,4.", 6,
     "3,4."),
    ("csv", "a,y\n1,2\n3,-", 3, "3,-"),
    ("csv", "a,y\n1,2\n3,4.0E", 3, "3,4.0E"),
]


@pytest.mark.parametrize("fmt, text", INTACT)
def test_an_intact_last_line_without_newline_is_read_silently(tmp_path, caplog, fmt, text):
    path = tmp_path / f"f.{fmt}"
    path.write_text(text)
    with caplog.at_level(logging.INFO, logger="mlx"):
        _reader(fmt)(path)
    assert not [r for r in caplog.records if "newline" in r.getMessage()
                or "truncated" in r.getMessage()]


@pytest.mark.parametrize("fmt, text, line, token", CUT)
def test_a_last_line_cut_inside_a_value_is_an_error(tmp_path, fmt, text, line, token):
    path = tmp_path / f"f.{fmt}"
    path.write_text(text)
    with pytest.raises(DataFormatError) as info:
        _reader(fmt)(path)
    assert str(info.value) == (
        f"{path}:{line}: the last line ends inside a value ('{token}') without a newline: the "
        "file was cut short; get a complete copy (compare its size or checksum with the "
        "source)")
    with checksum_verified():                       # as published: read as it is
        try:
            _reader(fmt)(path)
        except DataFormatError as exc:              # only for another reason than the cut
            assert "cut short" not in str(exc)
    path.write_text(text + "5\n")                   # the value completed: fine
    _reader(fmt)(path)


def test_the_mulan_bibtex_files_read_through_a_file_spec_give_no_alarm(tmp_path, caplog,
                                                                        staged):
    # The canonical files end without a newline; read as the user's own files (no registered
    # checksum) they once drew a "may be truncated" warning.
    from click.testing import CliRunner

    from mlx.cli import cli

    train = staged("bibtex/bibtex-train.arff.gz")
    config = tmp_path / "c.yaml"
    config.write_text(f"name: b\ndataset: {{format: arff, train: {train}, "
                      f"test: {train.parent / 'bibtex-test.arff.gz'}, "
                      f"xml: {train.parent / 'bibtex.xml'}}}\nmethods: [constant]\n")
    with caplog.at_level(logging.INFO, logger="mlx"):
        result = CliRunner().invoke(cli, ["validate", str(config)])
    assert result.exit_code == 0, result.output
    assert not [r for r in caplog.records if r.levelno >= logging.WARNING]
    assert not [r for r in caplog.records if "newline" in r.getMessage()]
