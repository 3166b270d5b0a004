"""The packaged registry is read with libyaml's parser when PyYAML has it: the same data as
the pure-Python parser gives."""

from __future__ import annotations

import importlib.resources

import yaml

from mlx.data.registry import registry


def test_registry_reads_as_the_pure_python_parser_does():
    text = importlib.resources.files("mlx.data").joinpath("registry.yaml").read_text("utf-8")
    expected = yaml.load(text, Loader=yaml.SafeLoader)["datasets"]
    got = registry()
    assert got == expected
    assert repr(got) == repr(expected)      # same types too (floats, ints, strings, None)
