"""Figures: files are written (PNG and PDF), published values overlaid, errors are one line."""

import json

import pandas as pd
import pytest
from click.testing import CliRunner

from mlx.cli import cli
from mlx.tables import cli as cli_tables
from mlx.tables.plot import plot_results, plot_spec
from mlx.tables.spec import load_spec
from mlx.runner.results import COLUMNS

for _cmd in (cli_tables.table, cli_tables.compare, cli_tables.plot, cli_tables.results_doc):
    cli.add_command(_cmd)


def _rows():
    rows = []
    for label, method, loss in (("LEML-SQ", "leml", "squared"), ("BR-LR", "br", "logistic")):
        ranks = [None] if method == "br" else [0.2, 0.4, 0.6]
        for rr in ranks:
            for obs in (0.2, 0.4):
                for metric, base in (("p@1", 0.5), ("auc", 0.85)):
                    rows.append(dict(
                        run_id="r", cell_id=f"{label}-{rr}-{obs}", experiment="t",
                        dataset="bibtex", method=method, label=label,
                        params=json.dumps({"loss": loss}), rank_ratio=rr, observed_ratio=obs,
                        repetition=0, split="test", metric=metric,
                        value=base + 0.1 * (rr or 0.5) * obs, status="ok", fit_seconds=1.0))
    return pd.DataFrame(rows, columns=COLUMNS)


def _assert_figures(paths):
    assert paths
    for p in paths:
        data = p.read_bytes()
        assert len(data) > 1000
        assert data[:8] == b"\x89PNG\r\n\x1a\n" if p.suffix == ".png" else data[:5] == b"%PDF-"


def test_plot_rank_ratio_writes_png_and_pdf_per_observed_ratio(tmp_path):
    paths = plot_results(_rows(), x="rank_ratio", metric="p@1", out_dir=tmp_path)
    assert sorted(p.name for p in paths) == [
        "bibtex-p1-vs-k-obs20.pdf", "bibtex-p1-vs-k-obs20.png",
        "bibtex-p1-vs-k-obs40.pdf", "bibtex-p1-vs-k-obs40.png"]
    _assert_figures(paths)


def test_plot_observed_ratio_without_paper(tmp_path):
    paths = plot_results(_rows(), x="observed_ratio", metric="auc", out_dir=tmp_path,
                         paper="none", at={"k_over_L": 0.4})
    assert [p.name for p in paths] == ["bibtex-auc-vs-observed-k40.png",
                                       "bibtex-auc-vs-observed-k40.pdf"]
    _assert_figures(paths)


def test_plot_command_and_missing_metric_error(tmp_path):
    res = tmp_path / "res"
    res.mkdir()
    _rows().to_csv(res / "results.csv", index=False)
    r = CliRunner().invoke(cli, ["plot", str(res), "--x", "rank_ratio", "--metric", "p@1"],
                           obj={})
    assert r.exit_code == 0, r.output
    assert (res / "figures" / "bibtex-p1-vs-k-obs20.png").exists()
    r = CliRunner().invoke(cli, ["plot", str(res), "--x", "rank_ratio", "--metric", "p@5"],
                           obj={})
    assert r.exit_code == 1
    assert r.output == f"Error: {res}: no finished results for metric 'p@5'\n"
    r = CliRunner().invoke(cli, ["plot", str(res), "--metric", "p@1"], obj={})
    assert r.exit_code == 2 and "plotting results needs --x and --metric" in r.output


def test_plot_spec_figures(tmp_path):
    res = tmp_path / "res"
    res.mkdir()
    _rows().to_csv(res / "results.csv", index=False)
    spec = tmp_path / "fig.yaml"
    spec.write_text(f"""
paper: leml
tables: [11, 15]
results: [{res}]
series: [LEML-SQ, BR-LR]
axes: {{dataset: [bibtex], k_over_L: [0.2, 0.4, 0.6], observed: [0.2, 0.4]}}
layout: {{blocks: [metric], rows: [dataset, k_over_L, observed], columns: [series]}}
metrics: [p@1, auc]
figures:
  - {{x: observed_ratio, metric: p@1, at: {{k_over_L: 0.4}}}}
""")
    paths, notes = plot_spec(load_spec(spec), tmp_path / "out")
    assert not notes
    assert [p.name for p in paths] == ["fig-bibtex-p1-vs-observed-k40.png",
                                       "fig-bibtex-p1-vs-observed-k40.pdf"]
    _assert_figures(paths)


@pytest.mark.parametrize("bad, message", [
    ("{x: rank, metric: p@1}", "figures[0].x: must be 'rank_ratio' or 'observed_ratio'. "
                               "Got 'rank' instead."),
    ("{x: rank_ratio, metric: p@3}", "figures[0].metric: metric 'p@3' is not in 'metrics'"),
])
def test_bad_figure_entry(tmp_path, bad, message):
    spec = tmp_path / "fig.yaml"
    spec.write_text(f"paper: leml\nresults: [{tmp_path}]\nseries: [LEML-SQ]\n"
                    f"metrics: [p@1]\nfigures:\n  - {bad}\n")
    r = CliRunner().invoke(cli, ["table", str(spec)], obj={})
    assert r.exit_code == 2
    assert r.output == f"Error: {spec}: {message}\n"
