"""``select: {rank_ratio: [...]}``: the rank chosen on the validation rows, like any parameter."""

import json
import textwrap

import pandas as pd
import pytest
from click.testing import CliRunner

from mlx.cli import cli
from mlx.config import load_config
from mlx.runner.experiment import run_experiment

CONFIG = """
name: selrank
seed: 3
dataset: {synthetic: {n_samples: 300, n_features: 20, n_labels: 10, rank: 4, seed: 4}}
methods:
  - name: leml
    params: {loss: squared}
    select: SELECT
sweep: {rank_ratio: [0.2], repetitions: 2}
metrics: [p@1, auc]
"""


def write(tmp_path, select, name="c.yaml"):
    p = tmp_path / name
    p.write_text(textwrap.dedent(CONFIG).replace("SELECT", select))
    return p


def run(path, out):
    summary = run_experiment(load_config(path), jobs=1, output=str(out), quiet=True,
                             progress=False)
    return pd.read_csv(summary.output / "results.csv")


def test_selected_rank_ratio_is_the_best_validation_candidate_and_sets_the_rank(tmp_path):
    frame = run(write(tmp_path, "{l2_reg: [0.1, 10.0], rank_ratio: [0.2, 0.6]}"),
                tmp_path / "o")
    for _, cell in frame.groupby("cell_id"):
        val = cell[cell["split"] == "validation"]
        assert len(val) == 4
        best = json.loads(val.loc[val["value"].idxmax(), "candidate"])   # first of ties
        first_best = json.loads(val[val["value"] == val["value"].max()].iloc[0]["candidate"])
        assert best == first_best
        selected = json.loads(cell["selected"].iloc[0])
        assert selected == first_best
        assert (cell["rank"] == round(selected["rank_ratio"] * 10)).all()


def test_a_single_rank_ratio_candidate_fits_as_the_sweep_would(tmp_path):
    chosen = run(write(tmp_path, "{l2_reg: [1.0], rank_ratio: [0.6]}"), tmp_path / "a")
    plain = tmp_path / "plain.yaml"
    plain.write_text(textwrap.dedent(CONFIG).replace("select: SELECT", "select: {l2_reg: [1.0]}")
                     .replace("rank_ratio: [0.2]", "rank_ratio: [0.6]"))
    swept = run(plain, tmp_path / "b")
    a, b = (f[f["split"] == "test"].reset_index(drop=True) for f in (chosen, swept))
    assert (a["rank"] == 6).all() and (b["rank"] == 6).all()
    pd.testing.assert_series_equal(a["value"], b["value"])


@pytest.mark.parametrize("select, where, what", [
    ("{rank_ratio: [0.2, 1.5]}", "methods[0].select.rank_ratio[1]",
     "must be a float in the range (0, 1]. Got 1.5 instead."),
    ("{rank_ratio: [0]}", "methods[0].select.rank_ratio[0]",
     "must be a float in the range (0, 1]. Got 0 instead."),
])
def test_bad_rank_ratio_candidates_are_config_errors(tmp_path, select, where, what):
    p = write(tmp_path, select)
    r = CliRunner().invoke(cli, ["validate", str(p)], obj={})
    assert r.exit_code == 2
    assert r.output.strip() == f"Error: {p}: {where}: {what}"


def test_a_method_without_a_rank_has_none_to_select(tmp_path):
    p = tmp_path / "br.yaml"
    p.write_text(textwrap.dedent(CONFIG).replace("name: leml", "name: br")
                 .replace("SELECT", "{rank_ratio: [0.2]}"))
    r = CliRunner().invoke(cli, ["validate", str(p)], obj={})
    assert r.exit_code == 2
    assert r.output.strip() == (f"Error: {p}: methods[0].select.rank_ratio: br has no rank to "
                                "select; remove it")
