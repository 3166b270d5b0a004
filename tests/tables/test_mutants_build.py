"""Paper tables: properties the older tests left open (found by mutation testing)."""

import json
import os
import textwrap

import pandas as pd
import pytest

from mlx.errors import ConfigError
from mlx.runner.results import COLUMNS
from mlx.tables.build import build_table, config_output, read_sources
from mlx.tables.render import render_markdown
from mlx.tables.spec import load_spec


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


def _spec(tmp_path, rows, text):
    """The table spec ``text`` reading ``rows`` (written as a results directory)."""
    res = tmp_path / "res"
    res.mkdir()
    pd.DataFrame(rows, columns=COLUMNS).to_csv(res / "results.csv", index=False)
    spec = tmp_path / "s.yaml"
    spec.write_text(f"results: [{res}]\n" + text)
    return load_spec(spec)


def _cells(tmp_path, rows, spec_body):
    s = _spec(tmp_path, rows, "title: T\n" + textwrap.dedent(spec_body))
    md = render_markdown(build_table(s, read_sources(s)))
    line = next(ln for ln in md.splitlines() if ln.startswith("| abalone"))
    return [c.strip() for c in line.strip("|").split("|")][1:]


def _row(label, params, value, rep):
    return dict(run_id="r1", cell_id=f"{label}-{json.dumps(params)}-{rep}", experiment="t",
                dataset="abalone", method="landmark", label=label,
                params=json.dumps(params, separators=(",", ":")), repetition=rep,
                split="test", metric="mse", value=value, status="ok", fit_seconds=1.0)


SPEC = """
    paper: similarity
    tables: ["1"]
    series: [RegLand-Sp]
    axes: {dataset: [abalone]}
    layout: {blocks: [metric], rows: [dataset], columns: [variant, series]}
    metrics:
      mse: {tolerance: null, format: ".2e"}
    """


def test_variants_given_by_parameters_select_their_rows(tmp_path):
    # The rows' parameter values do not name the variants: only the mapping tells them apart.
    rows = [_row("RegLand-Sp", {"model": "regland_sp", "kernel": k}, v, r)
            for k, v in (("s", 0.0061), ("m", 0.0069)) for r in (0, 1)]
    cells = _cells(tmp_path, rows, SPEC + "variants: {sigmoid: {params: {kernel: s}}, "
                                          "manhattan: {params: {kernel: m}}}\n")
    assert cells[0].startswith("6.10e-03 (0.00e+00) / 6.20e-03")        # sigmoid
    assert cells[1].startswith("6.90e-03 (0.00e+00) / 6.00e-03")        # manhattan


def test_variants_given_by_label_select_their_rows(tmp_path):
    rows = [_row(label, {"model": "regland_sp"}, v, r)
            for label, v in (("RegLand-Sp", 0.0061), ("RegLand-Sp-M", 0.0069)) for r in (0, 1)]
    body = SPEC.replace("series: [RegLand-Sp]",
                        "series: [{name: RegLand-Sp, ours: {method: landmark}}]")
    cells = _cells(tmp_path, rows, body + "variants: {sigmoid: {label: RegLand-Sp}, "
                                          "manhattan: {label: RegLand-Sp-M}}\n")
    assert cells[0].startswith("6.10e-03 (0.00e+00) / 6.20e-03")
    assert cells[1].startswith("6.90e-03 (0.00e+00) / 6.00e-03")


def _leml_spec(tmp_path, rows, body):
    """A spec of the LEML paper (``body`` after its paper and results) over ``rows``."""
    return _spec(tmp_path, rows, "paper: leml\n" + textwrap.dedent(body))


def test_counts_add_up_every_cell_of_each_kind(tmp_path):
    # Published LEML-SQ bibtex P@1 (Table 6): 58.33, 60.99, 61.99, 63.38, 63.94 at
    # k/L = 20%..100%; LEML-LR at 20%: 46.20. Hamming loss without a tolerance: compared.
    def lrow(label, loss, rr, metric, value):
        return dict(run_id="r1", cell_id=f"{label}-{rr}", experiment="t", dataset="bibtex",
                    method="leml", label=label, params=json.dumps({"loss": loss}),
                    rank_ratio=rr, observed_ratio=1.0, repetition=0, split="test",
                    metric=metric, value=value, status="ok", fit_seconds=1.0)

    rows = [lrow("LEML-SQ", "squared", rr, "p@1", v) for rr, v in (
        (0.2, 0.585), (0.4, 0.605), (0.6, 0.64), (0.8, 0.65), (1.0, 0.62))]
    rows += [lrow("LEML-LR", "logistic", 0.2, "p@1", 0.40)]
    rows += [lrow("LEML-SQ", "squared", rr, "hamming", 0.013) for rr in (0.2, 0.4)]
    rows += [{**lrow("LEML-LR", "logistic", rr, "", None), "status": "failed", "split": ""}
             for rr in (0.4, 0.6)]                # one status cell per metric and k/L
    s = _leml_spec(tmp_path, rows, """\
        tables: ["6", "9"]
        series: [LEML-SQ, LEML-LR]
        axes: {dataset: [bibtex], k_over_L: [0.2, 0.4, 0.6, 0.8, 1.0], observed: [1.0]}
        layout: {blocks: [metric], rows: [dataset, k_over_L], columns: [series]}
        metrics:
          p@1: {tolerance: 1.0}
          hamming: {tolerance: null}
        """)
    table = build_table(s, read_sources(s))
    assert table.counts() == {"within": 2, "better": 2, "worse": 2, "compared": 2, "np": 0,
                              "not_run": 8, "status": 4}


def test_a_series_matching_two_labels_is_an_error_naming_them(tmp_path):
    rows = [dict(run_id="r1", cell_id=f"{label}-{rep}", experiment="t", dataset="bibtex",
                 method="leml", label=label, params=json.dumps({"loss": "squared"}),
                 rank_ratio=0.2, observed_ratio=1.0, repetition=rep, split="test",
                 metric="p@1", value=v, status="ok", fit_seconds=1.0)
            for rep in (0, 1) for label, v in (("LEML-b", 0.58), ("LEML-a", 0.59))]
    s = _leml_spec(tmp_path, rows, """\
        tables: ["6"]
        series: [{name: LEML-SQ, ours: {method: leml}}]
        axes: {dataset: [bibtex], k_over_L: [0.2], observed: [1.0]}
        layout: {blocks: [metric], rows: [dataset], columns: [series]}
        metrics: [p@1]
        """)
    spec = s.source
    with pytest.raises(ConfigError) as exc:
        build_table(s, read_sources(s))
    assert str(exc.value) == (f"{spec}: layout: series 'LEML-SQ' would pool results of 2 method "
                              f"values (LEML-a, LEML-b) at k/L=20%, observed=100%, "
                              f"dataset=bibtex, method=LEML-SQ; select one with 'ours: "
                              f"{{label: ...}}' in the series")
