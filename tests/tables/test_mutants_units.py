"""One unit convention: properties the older tests left open (found by mutation testing)."""

import dataclasses

import click
import pytest
from click.testing import CliRunner

from mlx.tables.spec import metric_style
from mlx.tables.units import PERCENT_FAMILIES, in_unit, run_units, unit_factor, units_option

ZERO_ONE = ("p@1", "p@5", "ndcg@3", "auc", "hamming", "error", "f1", "micro_f1", "macro_f1")


@pytest.mark.parametrize("metric", ZERO_ONE)
def test_every_zero_one_metric_takes_the_choice(metric):
    assert unit_factor(metric, True) == 100.0
    assert unit_factor(metric, False) == 1.0
    assert unit_factor(metric, None) is None


@pytest.mark.parametrize("metric", ["mse", "rmse", "mae", "fit_seconds", "speedup", "p@",
                                    "nonsense"])
def test_other_metrics_and_unknown_names_never_change(metric):
    assert unit_factor(metric, True) is None and unit_factor(metric, False) is None


def test_the_families_are_the_metrics_in_zero_one():
    assert PERCENT_FAMILIES == ("p@<k>", "ndcg@<k>", "auc", "hamming", "error", "f1",
                                "micro_f1", "macro_f1")


def test_in_unit_keeps_a_chosen_format_in_its_own_unit_and_converts_the_tolerance():
    pct = metric_style("p@1", {"format": ".1f", "tolerance": 2.0})
    assert (pct.unit, pct.fmt) == ("%", ".1f")
    same = in_unit(pct, True)
    assert (same.unit, same.fmt, same.tolerance) == ("%", ".1f", 2.0)
    frac = in_unit(pct, False)
    assert (frac.unit, frac.fmt, frac.tolerance) == ("fraction", ".4f", pytest.approx(0.02))
    assert (frac.name, frac.title, frac.higher_is_better) == (pct.name, pct.title,
                                                             pct.higher_is_better)
    back = in_unit(frac, True)
    assert (back.unit, back.fmt, back.tolerance) == ("%", ".2f", pytest.approx(2.0))
    ham = metric_style("hamming")                       # a fraction in the papers
    assert (ham.unit, ham.higher_is_better) == ("fraction", False)
    ham = dataclasses.replace(ham, tolerance=0.005, fmt=".3f")
    assert (in_unit(ham, False).fmt, in_unit(ham, False).tolerance) == (".3f", 0.005)
    ham_pct = in_unit(ham, True)
    assert (ham_pct.unit, ham_pct.fmt, ham_pct.tolerance, ham_pct.higher_is_better) == (
        "%", ".2f", pytest.approx(0.5), False)
    none = dataclasses.replace(ham, tolerance=None)
    assert in_unit(none, True).tolerance is None and in_unit(none, False).tolerance is None


def _units_command():
    @click.command()
    @units_option
    def show(percent):
        click.echo(repr(percent))

    return show


@pytest.mark.parametrize("args, shown", [([], "None"), (["--percent"], "True"),
                                         (["--fraction"], "False")])
def test_units_option_gives_true_false_or_none(args, shown):
    r = CliRunner().invoke(_units_command(), args)
    assert r.exit_code == 0 and r.output == shown + "\n"


def test_units_option_help_names_every_zero_one_metric():
    r = CliRunner().invoke(_units_command(), ["--help"])
    assert " ".join(r.output.split()).endswith(
        "Options: --percent / --fraction Every [0, 1] metric (top-k accuracy, nDCG, AUC, "
        "Hamming loss, F1, error) in percent, or as a fraction; the same choice for table, "
        "compare, plot and report (default: each command's own, see the README). --help Show "
        "this message and exit.")


@pytest.mark.parametrize("text, expected", [
    ("units: percent\n", True), ("units: fraction\n", False), ("units: percents\n", None),
    ("name: x\n", None), ("", None), ("- units: percent\n", None), ("units: [unclosed\n", None),
    ("name: café\nunits: percent\n", True)])
def test_run_units_reads_the_runs_resolved_config(tmp_path, text, expected):
    (tmp_path / "config.resolved.yaml").write_text(text, encoding="utf-8")
    assert run_units(tmp_path) is expected
    assert run_units(str(tmp_path)) is expected
    assert run_units(tmp_path, True) is True and run_units(tmp_path, False) is False


def test_run_units_without_a_resolved_config_is_none(tmp_path):
    assert run_units(tmp_path / "missing") is None
    assert run_units(tmp_path / "missing", False) is False
