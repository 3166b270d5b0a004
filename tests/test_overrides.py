"""Command-line overrides ``key.path=value`` on run, validate and table."""

import json
import textwrap

import pytest
import yaml
from click.testing import CliRunner

from mlx.cli import cli
from mlx.overrides import apply_overrides, parse_override

CONFIG = """
name: ovtest
dataset:
  synthetic: {n_samples: 120, n_features: 12, n_labels: 6, rank: 2, seed: 0}
methods:
  - name: br
    params: {loss: squared_hinge}
  - name: leml
    params: {l2_reg: 0.1, max_iter: 2}
sweep: {rank_ratio: [0.5]}
metrics: [p@1, auc]
"""


def invoke(*args):
    return CliRunner().invoke(cli, list(args), obj={})


@pytest.fixture
def config(tmp_path):
    p = tmp_path / "c.yaml"
    p.write_text(textwrap.dedent(CONFIG))
    return p


def test_parse_key_paths_and_yaml_values():
    ov = parse_override("methods[1].params.l2_reg=1")
    assert ov.steps == ("methods", 1, "params", "l2_reg") and ov.value == 1
    assert parse_override("sweep.rank_ratio=[0.2, 0.4]").value == [0.2, 0.4]
    assert parse_override("metrics=[p@1,ndcg@3]").value == ["p@1", "ndcg@3"]
    assert parse_override("output=null").value is None
    assert parse_override("name=a=b").value == "a=b"
    # read as the same text in a config file would be
    assert parse_override("C=1.0e-2").value == yaml.safe_load("C: 1.0e-2")["C"] == 0.01


def test_apply_creates_mappings_and_leaves_input_alone():
    raw = {"methods": [{"name": "br"}]}
    out = apply_overrides(raw, ["sweep.repetitions=3", "methods[0].params.C=2"], "c.yaml")
    assert out == {"methods": [{"name": "br", "params": {"C": 2}}], "sweep": {"repetitions": 3}}
    assert raw == {"methods": [{"name": "br"}]}


def test_validate_with_overrides_counts_cells(config):
    r = invoke("validate", str(config), "sweep.repetitions=3", "methods[1].params.l2_reg=1")
    assert r.exit_code == 0, r.output
    assert r.output.strip() == f"{config}: ok, 6 cells"


@pytest.mark.parametrize("override, message", [
    ("sweep.rank_ratios=[0.2]",
     "unknown key 'sweep.rank_ratios'. Did you mean 'sweep.rank_ratio'? Valid keys under "
     "'sweep': labelled_ratio, observed_ratio, rank, rank_ratio, repetitions"),
    ("methods[1].params.l2_reg=-1",
     "methods[1].params.l2_reg: The 'l2_reg' parameter of LEML must be"),
    ("methods[2].params.l2_reg=1",
     "methods[2]: index out of range in override 'methods[2].params.l2_reg=1': methods has 2 "
     "entries (indices from 0)"),
    ("name.x=1", "name: is of type str, not a mapping; override 'name.x=1' cannot set 'x' in it"),
    ("methods.x=1", "methods: is of type list, not a mapping; override 'methods.x=1' cannot "
                    "set 'x' in it"),
    ("seed=-3", "seed: must be an int >= 0"),
])
def test_override_errors_are_the_config_messages(config, override, message):
    r = invoke("validate", str(config), override)
    assert r.exit_code == 2
    assert r.output.startswith(f"Error: {config}: {message}"), r.output
    assert len(r.output.splitlines()) == 1


@pytest.mark.parametrize("arg, message", [
    ("seed", "Error: unexpected argument 'seed': after the config, give overrides as "
             "key.path=value (e.g. seed=3 or methods[1].params.l2_reg=1)"),
    ("a..b=1", "Error: override 'a..b=1': 'a..b' is not a key path (dotted keys with [i] list "
               "indices; e.g. seed=3 or methods[1].params.l2_reg=1)"),
    ("seed=[1", "Error: override 'seed=[1': the value is not valid YAML: "),
])
def test_malformed_overrides(config, tmp_path, arg, message):
    r = invoke("run", "-q", "-o", str(tmp_path / "out"), str(config), arg)
    assert r.exit_code == 2
    assert message in r.output, r.output
    assert not (tmp_path / "out").exists()


def test_run_records_overrides(config, tmp_path):
    out = tmp_path / "out"
    r = invoke("run", "-q", "-j", "1", "-o", str(out), str(config), "seed=3",
               "methods[1].params.l2_reg=1", "--only", "leml")
    assert r.exit_code == 0, r.output
    text = (out / "config.resolved.yaml").read_text()
    assert text.startswith("# override: seed=3\n# override: methods[1].params.l2_reg=1\n")
    resolved = yaml.safe_load(text)
    assert resolved["seed"] == 3 and resolved["methods"][1]["params"]["l2_reg"] == 1
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["overrides"] == ["seed=3", "methods[1].params.l2_reg=1"]
    # The override is what ran: same rows as a file that says so.
    edited = tmp_path / "edited.yaml"
    edited.write_text(textwrap.dedent(CONFIG).replace("l2_reg: 0.1", "l2_reg: 1")
                      .replace("name: ovtest", "name: ovtest\nseed: 3"))
    r2 = invoke("run", "-q", "-j", "1", "-o", str(tmp_path / "out2"), str(edited),
                "--only", "leml")
    assert r2.exit_code == 0, r2.output
    import pandas as pd
    cols = ["cell_id", "metric", "value"]
    a = pd.read_csv(out / "results.csv")[cols]
    b = pd.read_csv(tmp_path / "out2" / "results.csv")[cols]
    pd.testing.assert_frame_equal(a, b)


def test_table_spec_overrides(monkeypatch):
    from pathlib import Path

    monkeypatch.chdir(Path(__file__).parents[1])
    spec = "configs/tables/leml-table3.yaml"
    r = invoke("table", spec, "--list-configs", "configs=[configs/leml-bibtex-full.yaml]")
    assert r.exit_code == 0, r.output
    assert r.output == "configs/leml-bibtex-full.yaml\n"
    r = invoke("table", spec, "--list-configs", "metricz.auc.tolerance=1")
    assert r.exit_code == 2
    assert r.output.startswith(f"Error: {spec}: unknown key 'metricz'. Did you mean 'metrics'?")


def test_table_overrides_refused_on_results(tmp_path):
    r = invoke("table", str(tmp_path), "seed=1")
    assert r.exit_code == 2
    assert "Error: KEY.PATH=VALUE overrides apply to a table spec (a .yaml file), not to " \
           "results" in r.output
