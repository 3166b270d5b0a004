"""A data file whose last line has no newline may be cut short: say so, unless its checksum
was verified against the published one."""

import logging

import pytest

from mlx.data.lineparse import checksum_verified


@pytest.mark.parametrize("fmt, text", [
    ("libsvm", "1 1:0.5 2:0.25\n0 1:1 2:0."),
    ("arff", "@relation r\n@attribute a numeric\n@attribute y numeric\n@data\n1,2\n3,4"),
    ("csv", "a,y\n1,2\n3,4"),
])
def test_a_last_line_without_newline_is_warned_about(tmp_path, caplog, fmt, text):
    from mlx.data.arff import read_arff_regression
    from mlx.data.delimited import read_delimited_files
    from mlx.data.libsvm import read_libsvm_multiclass

    path = tmp_path / f"f.{fmt}"
    path.write_text(text)
    read = {"libsvm": lambda p: read_libsvm_multiclass(p),
            "arff": lambda p: read_arff_regression(p),
            "csv": lambda p: read_delimited_files([p])}[fmt]
    with caplog.at_level(logging.WARNING, logger="mlx"):
        read(path)
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert any(m.startswith(f"{path}:") and "does not end with a newline; the file may be "
               "truncated" in m for m in warnings), warnings
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger="mlx"), checksum_verified():
        read(path)
    assert not [r for r in caplog.records if "truncated" in r.getMessage()]
    caplog.clear()
    path.write_text(text + "\n")
    with caplog.at_level(logging.WARNING, logger="mlx"):
        read(path)
    assert not [r for r in caplog.records if "truncated" in r.getMessage()]
