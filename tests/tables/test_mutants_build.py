"""Paper tables: properties the older tests left open (found by mutation testing)."""

import os

import pytest

from mlx.errors import ConfigError
from mlx.tables.build import config_output


def test_a_config_without_output_writes_under_results_by_its_name(tmp_path):
    cfg = tmp_path / "c.yaml"
    cfg.write_text("name: bibtex-leml\nmethods: []\n", encoding="utf-8")
    assert config_output(str(cfg)) == ("bibtex-leml", os.path.join("results", "bibtex-leml"))
    cfg.write_text("name: 7\noutput: out/run\n", encoding="utf-8")
    assert config_output(str(cfg)) == ("7", "out/run")
    cfg.write_text("name: café\n", encoding="utf-8")           # read as UTF-8
    assert config_output(str(cfg))[0] == "café"


@pytest.mark.parametrize("text", ["- name: a\n", "output: x\n", ""])
def test_a_file_that_is_not_an_mlx_config_is_a_one_line_error(tmp_path, text):
    cfg = tmp_path / "c.yaml"
    cfg.write_text(text, encoding="utf-8")
    with pytest.raises(ConfigError) as exc:
        config_output(str(cfg))
    assert str(exc.value) == f"{cfg}: not an mlx config (no 'name')"


def test_an_unreadable_config_is_a_one_line_error(tmp_path):
    cfg = tmp_path / "c.yaml"
    cfg.write_text("name: [unclosed\n", encoding="utf-8")
    with pytest.raises(ConfigError) as exc:
        config_output(str(cfg))
    assert str(exc.value).startswith(f"{cfg}: cannot read config: ")
    with pytest.raises(ConfigError) as exc:
        config_output(str(tmp_path / "missing.yaml"))
    assert str(exc.value).startswith(f"{tmp_path / 'missing.yaml'}: cannot read config: ")
    assert "No such file" in str(exc.value)
