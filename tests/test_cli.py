"""End-to-end CLI behaviour: exit codes and the exact one-line errors users see."""

import textwrap

import pytest
from click.testing import CliRunner

from mlx.cli import cli

CONFIG = """
name: clitest
dataset:
  synthetic: {n_samples: 120, n_features: 12, n_labels: 6, rank: 2, seed: 0}
methods:
  - name: br
    params: {loss: squared_hinge}
metrics: [p@1, auc]
"""


def invoke(*args):
    return CliRunner().invoke(cli, list(args), obj={})


def write(tmp_path, text):
    p = tmp_path / "c.yaml"
    p.write_text(textwrap.dedent(text))
    return p


def test_validate_ok_counts_cells(tmp_path):
    p = write(tmp_path, CONFIG)
    r = invoke("validate", str(p))
    assert r.exit_code == 0, r.output
    assert r.output.strip() == f"{p}: ok, 1 cells"


def test_config_error_is_one_line_exit_2(tmp_path):
    p = write(tmp_path, CONFIG.replace("squared_hinge", "hinge"))
    r = invoke("validate", str(p))
    assert r.exit_code == 2
    assert r.output == (f"Error: {p}: methods[0].params.loss: The 'loss' parameter of BR must be a "
                        "str among {'logistic', 'squared', 'squared_hinge'}. Got 'hinge' instead.\n")
    assert "Traceback" not in r.output


def test_debug_shows_traceback(tmp_path):
    p = write(tmp_path, CONFIG.replace("squared_hinge", "hinge"))
    r = invoke("--debug", "validate", str(p))
    assert r.exit_code != 0
    assert r.exception is not None and type(r.exception).__name__ == "ConfigError"


def test_run_writes_results_and_prints_table(tmp_path):
    p = write(tmp_path, CONFIG)
    out = tmp_path / "out"
    r = invoke("run", "-q", "-j", "1", "-o", str(out), str(p))
    assert r.exit_code == 0, r.output
    assert "| method |" in r.output and "p@1" in r.output
    assert (out / "results.csv").exists()
    r2 = invoke("table", str(out))
    assert r2.exit_code == 0 and "| method |" in r2.output


def test_run_missing_config_exits_2(tmp_path):
    r = invoke("run", str(tmp_path / "nope.yaml"))
    assert r.exit_code == 2
    assert r.output == f"Error: {tmp_path / 'nope.yaml'}: file not found\n"


def test_missing_dataset_is_one_line_exit_1_nothing_written(tmp_path, monkeypatch):
    monkeypatch.setenv("MLX_DATA_PATH", str(tmp_path / "empty"))
    monkeypatch.chdir(tmp_path)
    p = write(tmp_path, CONFIG.replace(
        "dataset:\n  synthetic: {n_samples: 120, n_features: 12, n_labels: 6, rank: 2, seed: 0}",
        "dataset: scene"))
    out = tmp_path / "out"
    r = invoke("run", "-q", "-j", "1", "-o", str(out), str(p))
    assert r.exit_code == 1
    lines = r.output.strip().splitlines()
    assert lines[-1].startswith("Error: dataset 'scene': file ")
    assert "mlx datasets fetch scene" in lines[-1]
    assert not out.exists()


def test_malformed_data_line_is_one_line_exit_1(tmp_path):
    train = tmp_path / "train.svm"
    train.write_text("0,1 1:1.0 3:2.0\n1 2:abc\n")
    test = tmp_path / "test.svm"
    test.write_text("0 1:1.0\n")
    p = write(tmp_path, CONFIG.replace(
        "dataset:\n  synthetic: {n_samples: 120, n_features: 12, n_labels: 6, rank: 2, seed: 0}",
        f"dataset: {{format: libsvm-multilabel, train: {train}, test: {test}}}"))
    out = tmp_path / "out"
    r = invoke("run", "-q", "-j", "1", "-o", str(out), str(p))
    assert r.exit_code == 1
    assert r.output.startswith(f"Error: {train}:2: ")
    assert len(r.output.strip().splitlines()) == 1
    assert not out.exists()


def test_table_on_missing_results(tmp_path):
    r = invoke("table", str(tmp_path))
    assert r.exit_code == 1
    assert r.output == f"Error: {tmp_path / 'results.csv'}: file not found; run 'mlx run CONFIG' first\n"


def test_bad_option_is_usage_error():
    r = invoke("run", "--jobs", "0", "x.yaml")
    assert r.exit_code == 2


@pytest.mark.parametrize("cmd", [[], ["run"], ["validate"], ["table"], ["datasets"],
                                 ["datasets", "fetch"], ["datasets", "info"], ["datasets", "convert"],
                                 ["methods"], ["metrics"]])
def test_every_command_has_help(cmd):
    r = invoke(*cmd, "--help")
    assert r.exit_code == 0 and "Usage:" in r.output
    assert len(r.output.splitlines()) > 3


def test_methods_and_metrics_listings():
    r = invoke("methods")
    assert r.exit_code == 0 and "br" in r.output
    r = invoke("metrics")
    assert r.exit_code == 0 and "auc" in r.output
