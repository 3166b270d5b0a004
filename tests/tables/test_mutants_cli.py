"""The table, compare, plot and results-doc commands: properties the older tests left open
(found by mutation testing): which options go with a spec or with results, what --check and
--list-configs print, and the command line recorded beside a table."""

import io
import json

import pytest
from click.testing import CliRunner

from mlx.cli import cli
from tests.tables.test_own_tables import _write
from tests.tables.test_paper_tables import COMPARE_ROWS, SMALL_ROWS, SPEC, write_results


def invoke(*args):
    return CliRunner().invoke(cli, [str(a) for a in args], obj={})


def _own(tmp_path, extra=""):
    a = _write(tmp_path / "a", "scene")
    spec = tmp_path / "own.YAML"                  # the suffix in any case
    spec.write_text(f"title: T\nresults: [{a}, {tmp_path / 'missing'}]\nseries: [BR]\n"
                    f"metrics: [p@1]\n{extra}")
    return spec, a


@pytest.mark.parametrize("args, message", [
    (["--split", "test"], "--split applies to a results directory, not to a table spec"),
    (["--paired", "A,B"], "--paired applies to a results directory (or 'mlx compare'), not to "
                          "a table spec"),
    (["--percent"], "--percent/--fraction apply to a results directory; a spec sets its units "
                    "('percent: true' or its metrics' 'unit')"),
    (["--fraction"], "--percent/--fraction apply to a results directory; a spec sets its units "
                     "('percent: true' or its metrics' 'unit')"),
])
def test_results_options_are_refused_for_a_spec(tmp_path, args, message):
    spec, _ = _own(tmp_path)
    r = invoke("table", spec, *args)
    assert r.exit_code == 2
    assert r.output.splitlines()[-1] == f"Error: {message}"


@pytest.mark.parametrize("args", [["-o", "out"], ["--check"], ["--list-configs"]])
def test_spec_options_are_refused_for_results(tmp_path, args):
    res = write_results(tmp_path / "res", SMALL_ROWS)
    r = invoke("table", res, *args)
    assert r.exit_code == 2
    assert r.output.splitlines()[-1] == ("Error: --output-dir, --check and --list-configs apply "
                                         "to a table spec (a .yaml file)")
    r = invoke("table", res, "title=x")
    assert r.exit_code == 2
    assert r.output.splitlines()[-1] == ("Error: KEY.PATH=VALUE overrides apply to a table spec "
                                         "(a .yaml file), not to results")


def test_check_and_list_configs_of_an_own_spec(tmp_path):
    cfg = tmp_path / "c.yaml"
    cfg.write_text(f"name: c\noutput: {tmp_path / 'a'}\n")
    spec, a = _own(tmp_path, extra=f"configs: [{cfg}]\n")
    r = invoke("table", spec, "--list-configs")
    assert (r.exit_code, r.output) == (0, f"{cfg}\n")
    r = invoke("table", spec, "--check")
    assert r.exit_code == 3
    assert r.output == (f"own: cannot be produced here yet:\n  - {tmp_path / 'missing'}: not "
                        f"run yet (no {tmp_path / 'missing'}/results.csv)\n")
    spec.write_text(f"title: T\nresults: [{a}]\nmetrics: [p@1]\n")
    r = invoke("table", spec, "--check")
    assert (r.exit_code, r.output) == (0, f"{spec}: ready (1 source)\n")
    spec.write_text(f"title: T\nresults: [{a}, {a}]\nmetrics: [p@1]\n")
    assert invoke("table", spec, "--check").output == f"{spec}: ready (2 sources)\n"


def test_check_of_a_paper_spec_counts_its_configs(tmp_path):
    res = write_results(tmp_path / "res", SMALL_ROWS)
    spec = tmp_path / "s.yml"
    spec.write_text(SPEC.format(results=res))
    r = invoke("table", spec, "--check")
    assert (r.exit_code, r.output) == (0, f"{spec}: ready (0 configs)\n")
    cfg = tmp_path / "c.yaml"
    cfg.write_text(f"name: c\noutput: {res}\ndataset: bibtex\nmethods: [leml]\n")
    spec.write_text(SPEC.format(results=res).replace(f"results: [{res}]", f"configs: [{cfg}]"))
    r = invoke("table", spec, "--list-configs")
    assert (r.exit_code, r.output) == (0, f"{cfg}\n")


def test_the_recorded_command_is_the_one_typed(tmp_path):
    res = write_results(tmp_path / "res", SMALL_ROWS)
    spec = tmp_path / "my spec.yaml"
    spec.write_text(SPEC.format(results=res))
    out = tmp_path / "out dir"
    r = invoke("table", "-o", out, spec, "title=New title")
    assert r.exit_code == 0, r.output
    meta = json.loads((out / "my spec.json").read_text())
    assert meta["command"] == f"mlx table -o '{out}' '{spec}' 'title=New title'"
    assert meta["title"] == "New title"
    assert r.output.startswith("# New title\n")
    own, _ = _own(tmp_path)
    r = invoke("table", own, "-o", out)
    assert r.exit_code == 0, r.output
    assert r.output.endswith(f"wrote {out / 'own.md'}, {out / 'own.csv'}, {out / 'own.tex'}\n")


def test_compare_records_its_options(tmp_path):
    res = write_results(tmp_path / "res", COMPARE_ROWS)
    out = tmp_path / "cmp"
    r = invoke("compare", res, "--paper", "leml", "--table", "6", "--metric", "p@1",
               "--fraction", "-o", out)
    assert r.exit_code == 0, r.output
    meta = json.loads((out / "compare-leml.json").read_text())
    assert meta["command"] == (f"mlx compare {res} --paper leml --table 6 --metric p@1 "
                               f"--fraction -o {out}")
    r = invoke("compare", res, "--paper", "leml", "--percent", "-o", out)
    meta = json.loads((out / "compare-leml.json").read_text())
    assert meta["command"] == f"mlx compare {res} --paper leml --percent -o {out}"
    assert "| bibtex | 20% | 60.00 / 58.33 (+1.67) ▲ |" in r.output
    r = invoke("compare", res, "--paper", "leml", "-o", out)
    meta = json.loads((out / "compare-leml.json").read_text())
    assert meta["command"] == f"mlx compare {res} --paper leml -o {out}"


def test_plot_options_for_a_spec_or_results(tmp_path):
    res = write_results(tmp_path / "res", SMALL_ROWS)
    r = invoke("plot", res, "--x", "rank_ratio")
    assert r.exit_code == 2
    assert r.output.splitlines()[-1] == "Error: plotting results needs --x and --metric"
    r = invoke("plot", res, "--metric", "p@1")
    assert r.output.splitlines()[-1] == "Error: plotting results needs --x and --metric"
    spec = tmp_path / "s.yaml"
    spec.write_text(SPEC.format(results=res))
    for args in (["--x", "rank_ratio"], ["--metric", "p@1"], ["--by", "loss"]):
        r = invoke("plot", spec, *args)
        assert r.exit_code == 2
        assert r.output.splitlines()[-1] == ("Error: --x, --metric and --by apply to results; "
                                             "a spec lists its figures")


def test_results_doc_says_how_many_tables_it_wrote(tmp_path):
    doc = tmp_path / "R.md"
    r = invoke("results-doc", "--tables-dir", tmp_path / "none", "-o", doc)
    assert (r.exit_code, r.output) == (0, f"wrote {doc} (0 tables)\n")
    tdir = tmp_path / "tables"
    tdir.mkdir()
    (tdir / "t.json").write_text(json.dumps({"name": "t", "title": "T", "spec": "t.yaml"}))
    (tdir / "t.md").write_text("# T\n")
    r = invoke("results-doc", "--tables-dir", tdir, "-o", doc)
    assert (r.exit_code, r.output) == (0, f"wrote {doc} (1 table)\n")


def test_an_empty_spec_says_what_a_spec_needs(tmp_path):
    spec = tmp_path / "empty.yaml"
    spec.write_text("")
    r = invoke("table", spec)
    assert (r.exit_code, r.output) == (2, f"Error: {spec}: the file is empty; a table spec needs "
                                          "at least 'paper', 'series' and 'metrics'\n")


def test_without_output_dir_tables_go_to_results_tables(tmp_path, monkeypatch):
    res = write_results(tmp_path / "res", SMALL_ROWS)
    spec = tmp_path / "s.yaml"
    spec.write_text(SPEC.format(results=res))
    own, _ = _own(tmp_path)
    monkeypatch.chdir(tmp_path)
    r = invoke("table", spec)
    assert r.exit_code == 0, r.output
    assert r.stderr == ("wrote results/tables/s.md, results/tables/s.csv, "
                        "results/tables/s.tex\n")
    assert r.stdout.startswith("# Test table\n")
    meta = json.loads((tmp_path / "results/tables/s.json").read_text())
    assert meta["command"] == f"mlx table {spec}"
    r = invoke("table", own)
    assert r.exit_code == 0, r.output
    assert r.stderr == ("wrote results/tables/own.md, results/tables/own.csv, "
                        "results/tables/own.tex\n")
    assert r.stdout == (tmp_path / "results/tables/own.md").read_text() + "\n"


def test_compare_reads_the_runs_manifest_as_utf8(tmp_path, monkeypatch):
    res = write_results(tmp_path / "res", COMPARE_ROWS)
    (res / "manifest.json").write_text('{"run_id": "from-manifest", "host": "café"}',
                                       encoding="utf-8")   # as written by hand, not escaped
    r = invoke("compare", res, "--paper", "leml")
    assert r.exit_code == 0, r.output
    assert r.stdout.endswith(f"Results:\n\n- `{res}`: 4 cells, run from-manifest\n\n")
    # in a locale that is not UTF-8, the manifest is still read as UTF-8
    monkeypatch.setattr(io, "text_encoding", lambda encoding, *a: encoding or "ascii")
    r = invoke("compare", res, "--paper", "leml")
    assert r.stdout.endswith(f"Results:\n\n- `{res}`: 4 cells, run from-manifest\n\n")


def test_overrides_apply_to_an_own_spec(tmp_path):
    spec, _ = _own(tmp_path)
    r = invoke("table", spec, "title=Overridden", "-o", tmp_path / "out")
    assert r.exit_code == 0, r.output
    assert r.stdout.startswith("# Overridden\n")


def test_an_override_that_cannot_apply_names_the_spec(tmp_path):
    spec, _ = _own(tmp_path)
    r = invoke("table", spec, "metrics.p@1.unit=fraction")
    assert r.exit_code == 2
    assert r.output == (f"Error: {spec}: metrics: is of type list, not a mapping; override "
                        "'metrics.p@1.unit=fraction' cannot set 'p@1' in it\n")


def test_check_of_a_paper_spec_follows_the_overrides(tmp_path):
    spec = tmp_path / "s.yaml"
    spec.write_text(SPEC.format(results=tmp_path).replace(f"results: [{tmp_path}]",
                                                          "configs: [absent.yaml]"))
    r = invoke("table", spec, "--check", "name=renamed")
    assert r.exit_code == 3
    assert r.stderr.splitlines()[0] == "renamed: cannot be produced here yet:"


def test_check_of_a_paper_spec_with_one_ready_config(tmp_path):
    cfg = tmp_path / "c.yaml"
    cfg.write_text("name: c\ndataset: {synthetic: {n_samples: 50, n_features: 5, n_labels: 4, "
                   "rank: 2, seed: 0}}\nmethods: [br]\n")
    spec = tmp_path / "s.yaml"
    spec.write_text(SPEC.format(results=tmp_path).replace(f"results: [{tmp_path}]",
                                                          f"configs: [{cfg}]"))
    r = invoke("table", spec, "--check")
    assert (r.exit_code, r.output) == (0, f"{spec}: ready (1 config)\n")
