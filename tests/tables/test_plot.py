"""Figures: files are written (PNG and PDF), published values overlaid, errors are one line;
the axes rank, labelled_ratio and param:NAME, figures per --by value, mean and sd per point."""

import json

import pandas as pd
import pytest
from click.testing import CliRunner

from mlx.cli import cli
from mlx.errors import ConfigError, MlxError
from mlx.runner.results import COLUMNS
from mlx.tables import cli as cli_tables
from mlx.tables.plot import figure_data, line_points, plot_results, plot_spec, use_log_x, x_label
from mlx.tables.spec import load_spec

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
    ("{x: K, metric: p@1}", "figures[0].x: must be one of 'rank_ratio', 'observed_ratio', "
                            "'labelled_ratio', 'rank' or 'param:NAME' (a parameter, e.g. "
                            "'param:theta'). Got 'K' instead."),
    ("{x: 'param:', metric: p@1}", "figures[0].x: must be one of 'rank_ratio', "
                                   "'observed_ratio', 'labelled_ratio', 'rank' or 'param:NAME' "
                                   "(a parameter, e.g. 'param:theta'). Got 'param:' instead."),
    ("{x: rank, metric: p@1, at: 0.2}", "figures[0].at: must be a mapping such as "
                                        "{observed: 0.2} or {similarity: sigmoid}. Got 0.2 "
                                        "instead."),
    ("{x: rank, metric: p@1, at: {observed: all}}", "figures[0].at.observed: must be a number. "
                                                    "Got 'all' instead."),
    ("{x: rank, metric: p@1, by: [{a: 1}]}", "figures[0].by[0]: must be a string. Got "
                                             "{'a': 1} instead."),
    ("{x: rank_ratio, metric: p@3}", "figures[0].metric: metric 'p@3' is not in 'metrics'"),
    ("{x: rank_ratio}", "figures[0]: missing required key 'metric' (one of 'metrics': p@1)"),
])
def test_bad_figure_entry(tmp_path, bad, message):
    spec = tmp_path / "fig.yaml"
    spec.write_text(f"paper: leml\nresults: [{tmp_path}]\nseries: [LEML-SQ]\n"
                    f"metrics: [p@1]\nfigures:\n  - {bad}\n")
    r = CliRunner().invoke(cli, ["table", str(spec)], obj={})
    assert r.exit_code == 2
    assert r.output == f"Error: {spec}: {message}\n"


# ------------------------------------------------------------------ other horizontal axes
def _frame(records):
    """A results frame from short records (defaults: one test row, status ok)."""
    rows = []
    for n, r in enumerate(records):
        params = r.get("params", {})
        selected = r.get("selected")
        rows.append(dict(
            run_id="r", cell_id=r.get("cell", f"c{n}"), experiment="t",
            dataset=r.get("dataset", "d1"), method=r.get("method", r["label"].lower()),
            label=r["label"], params=json.dumps(params),
            selected=json.dumps(selected) if selected else "",
            rank_ratio=r.get("rank_ratio"), rank=r.get("rank"),
            observed_ratio=r.get("observed_ratio", 1.0),
            labelled_ratio=r.get("labelled_ratio", 1.0), repetition=r.get("rep", 0),
            split="test", metric=r["metric"], value=r["value"], status="ok", fit_seconds=1.0))
    return pd.DataFrame(rows, columns=COLUMNS)


def _mom_rows():
    """MoM Figure 2: AUC against the absolute rank K, two repetitions, two datasets."""
    recs = []
    for dataset in ("bibtex", "delicious"):
        for label in ("MoM", "LEML"):
            for k in (25, 50, 100):
                for rep in (0, 1):
                    recs.append(dict(dataset=dataset, label=label, rank=k, rep=rep,
                                     metric="auc", value=0.8 + k / 1000 + 0.01 * rep
                                     + (0.05 if label == "LEML" else 0.0)))
    return _frame(recs)


def _lsvv_rows():
    """LSVV Figures 2-3: error against the labelled rate, and against theta at 10%."""
    recs = []
    for label in ("LSVV", "SS-VV"):
        for lab in (0.05, 0.1, 0.2):
            for rep in range(3):
                recs.append(dict(dataset="iris", label=label, labelled_ratio=lab, rep=rep,
                                 params={"features": "rff"}, selected={"theta": 1.0},
                                 metric="error", value=0.3 - lab + 0.01 * rep))
        for theta in (0.01, 0.1, 1.0, 10.0):
            # theta fixed for LSVV (params), selected for SS-VV: both are found
            where = {"params": {"theta": theta}} if label == "LSVV" else \
                {"params": {}, "selected": {"theta": theta}}
            recs.append(dict(dataset="iris", label=label, labelled_ratio=0.1, rep=0,
                             metric="error", value=0.1 + theta / 100, **where))
    return _frame(recs)


def _kar_jain_rows():
    """Kar & Jain Figure 1: MSE against landmarks, per similarity, plus the constant."""
    recs = []
    for sim in ("sigmoid", "manhattan"):
        for label in ("KR", "RegLand", "RegLand-Sp", "ORLand"):
            for nl in (10, 20, 50, 100):
                for rep in (0, 1):
                    recs.append(dict(dataset="abalone", label=label, method="landmark",
                                     params={"n_landmarks": nl, "similarity": sim},
                                     rep=rep, metric="mse",
                                     value=0.01 + 1 / nl + (0.002 if sim == "sigmoid" else 0)
                                     + 0.001 * rep))
    for rep in (0, 1):
        recs.append(dict(dataset="abalone", label="constant", rep=rep, metric="mse",
                         value=0.05 + 0.01 * rep))
    return _frame(recs)


def _names(paths):
    return sorted(p.name for p in paths)


def test_line_points_mean_sd_count():
    rows = pd.DataFrame({"_x": [1.0, 1.0, 2.0, None], "value": [0.1, 0.3, 0.5, 9.0]})
    pts = line_points(rows)
    assert pts["x"].tolist() == [1.0, 2.0]
    assert pts["mean"].tolist() == pytest.approx([0.2, 0.5])
    assert pts["sd"].iloc[0] == pytest.approx(0.1414213562) and pd.isna(pts["sd"].iloc[1])
    assert pts["n"].tolist() == [2, 1]


def test_use_log_x_and_labels():
    assert not use_log_x([10, 20, 50, 100, 200])        # a factor of 20: linear
    assert use_log_x([0.01, 0.1, 1.0, 10.0])
    assert not use_log_x([0.0, 0.1, 10.0]) and not use_log_x([])
    assert [x_label(x) for x in ("rank", "labelled_ratio", "param:theta")] == [
        "rank K", "labelled fraction (%)", "theta"]


def test_rank_axis_mom_figure_2(tmp_path):
    panels = figure_data(_mom_rows(), x="rank", metric="auc")
    assert [(p.dataset, p.settings, p.by) for p in panels] == [("bibtex", [], {}),
                                                               ("delicious", [], {})]
    mom = panels[0].lines[0]
    assert mom.name == "MoM" and mom.flat is None
    assert mom.points["x"].tolist() == [25.0, 50.0, 100.0]
    assert mom.points["mean"].tolist() == pytest.approx([0.83, 0.855, 0.905])
    assert mom.points["sd"].tolist() == pytest.approx([0.01 / 2 ** 0.5] * 3)
    assert mom.points["n"].tolist() == [2, 2, 2]
    assert panels[0].lines[1].points["mean"].tolist() == pytest.approx([0.88, 0.905, 0.955])
    paths = plot_results(_mom_rows(), x="rank", metric="auc", out_dir=tmp_path, paper="none")
    assert _names(paths) == ["bibtex-auc-vs-rank.pdf", "bibtex-auc-vs-rank.png",
                             "delicious-auc-vs-rank.pdf", "delicious-auc-vs-rank.png"]
    _assert_figures(paths)


def test_labelled_ratio_axis_lsvv_figure_2(tmp_path):
    frame = _lsvv_rows()
    frame = frame[frame["params"] == json.dumps({"features": "rff"})]
    panels = figure_data(frame, x="labelled_ratio", metric="error")
    assert len(panels) == 1 and [ln.name for ln in panels[0].lines] == ["LSVV", "SS-VV"]
    pts = panels[0].lines[0].points
    assert pts["x"].tolist() == [0.05, 0.1, 0.2]
    assert pts["mean"].tolist() == pytest.approx([0.26, 0.21, 0.11])
    assert pts["sd"].tolist() == pytest.approx([0.01] * 3) and pts["n"].tolist() == [3, 3, 3]
    paths = plot_results(frame, x="labelled_ratio", metric="error", out_dir=tmp_path,
                         paper="none")
    assert _names(paths) == ["iris-error-vs-labelled.pdf", "iris-error-vs-labelled.png"]
    _assert_figures(paths)


def test_labelled_ratio_splits_figures_by_a_varying_other_setting(tmp_path):
    frame = _lsvv_rows()
    frame = frame[frame["params"] == json.dumps({"features": "rff"})].copy()
    frame["observed_ratio"] = [0.5 if i % 2 else 1.0 for i in range(len(frame))]
    panels = figure_data(frame, x="labelled_ratio", metric="error")
    assert [p.suffix() for p in panels] == ["-obs50", "-obs100"]
    assert [p.at_text() for p in panels] == [" (observed = 50%)", " (observed = 100%)"]
    one = figure_data(frame, x="labelled_ratio", metric="error", at={"observed": 0.5})
    assert len(one) == 1 and one[0].suffix() == ""
    assert one[0].lines[0].points["n"].sum() + one[0].lines[1].points["n"].sum() == 9


def test_param_axis_lsvv_figure_3_reads_params_then_selected(tmp_path):
    frame = _lsvv_rows()
    frame = frame[frame["params"] != json.dumps({"features": "rff"})]
    panels = figure_data(frame, x="param:theta", metric="error")
    assert len(panels) == 1
    for line in panels[0].lines:    # LSVV from params, SS-VV from selected
        assert line.points["x"].tolist() == [0.01, 0.1, 1.0, 10.0]
        assert line.points["mean"].tolist() == pytest.approx([0.1001, 0.101, 0.11, 0.2])
        assert line.points["sd"].isna().all()
    paths = plot_results(frame, x="param:theta", metric="error", out_dir=tmp_path,
                         paper="none")
    assert _names(paths) == ["iris-error-vs-theta.pdf", "iris-error-vs-theta.png"]
    _assert_figures(paths)


def test_param_axis_by_parameter_kar_jain_figure_1(tmp_path):
    panels = figure_data(_kar_jain_rows(), x="param:n_landmarks", metric="mse",
                         by=["similarity"])
    assert [p.by for p in panels] == [{"similarity": "manhattan"}, {"similarity": "sigmoid"}]
    assert [p.suffix() for p in panels] == ["-similarity=manhattan", "-similarity=sigmoid"]
    assert panels[1].at_text() == " (similarity = sigmoid)"
    names = [ln.name for ln in panels[0].lines]
    assert names == ["KR", "RegLand", "RegLand-Sp", "ORLand", "constant"]
    kr_sig = panels[1].lines[0].points
    assert kr_sig["x"].tolist() == [10.0, 20.0, 50.0, 100.0]
    assert kr_sig["mean"].tolist() == pytest.approx([0.1125, 0.0625, 0.0325, 0.0225])
    assert kr_sig["sd"].tolist() == pytest.approx([0.001 / 2 ** 0.5] * 4)
    # the constant has no landmarks: a flat line in every figure
    for p in panels:
        const = p.lines[-1]
        assert const.points.empty
        assert const.flat == pytest.approx((0.055, 0.01 / 2 ** 0.5, 2))
    paths = plot_results(_kar_jain_rows(), x="param:n_landmarks", metric="mse", by="similarity",
                         out_dir=tmp_path, paper="none")
    assert _names(paths) == [
        "abalone-mse-vs-n_landmarks-similarity=manhattan.pdf",
        "abalone-mse-vs-n_landmarks-similarity=manhattan.png",
        "abalone-mse-vs-n_landmarks-similarity=sigmoid.pdf",
        "abalone-mse-vs-n_landmarks-similarity=sigmoid.png"]
    _assert_figures(paths)
    # a parameter filter instead of a split
    one = figure_data(_kar_jain_rows(), x="param:n_landmarks", metric="mse",
                      at={"similarity": "sigmoid"})
    assert len(one) == 1 and one[0].lines[0].points["mean"].tolist() == kr_sig["mean"].tolist()
    # the filter names its figure: two filters write two files, the second not over the first
    assert one[0].suffix() == "-similarity=sigmoid"
    assert one[0].at_text() == " (similarity = sigmoid)"
    written = [_names(plot_results(_kar_jain_rows(), x="param:n_landmarks", metric="mse",
                                   out_dir=tmp_path / "at", paper="none", at={"similarity": s}))
               for s in ("sigmoid", "manhattan")]
    assert written == [["abalone-mse-vs-n_landmarks-similarity=sigmoid.pdf",
                        "abalone-mse-vs-n_landmarks-similarity=sigmoid.png"],
                       ["abalone-mse-vs-n_landmarks-similarity=manhattan.pdf",
                        "abalone-mse-vs-n_landmarks-similarity=manhattan.png"]]


def test_by_on_the_leml_axis_adds_to_the_name(tmp_path):
    paths = plot_results(_rows(), x="rank_ratio", metric="p@1", out_dir=tmp_path, by=["loss"],
                         paper="none", at={"observed": 0.2})
    assert _names(paths) == ["bibtex-p1-vs-k-obs20-loss=logistic.pdf",
                             "bibtex-p1-vs-k-obs20-loss=logistic.png",
                             "bibtex-p1-vs-k-obs20-loss=squared.pdf",
                             "bibtex-p1-vs-k-obs20-loss=squared.png"]


@pytest.mark.parametrize("kwargs, error, message", [
    (dict(x="K"), ConfigError,
     "--x: must be one of 'rank_ratio', 'observed_ratio', 'labelled_ratio', 'rank' or "
     "'param:NAME' (a parameter, e.g. 'param:theta'). Got 'K' instead."),
    (dict(x="param:landmarks"), ConfigError,
     "res: --x: no result has parameter 'landmarks'. Did you mean 'n_landmarks'? Parameters "
     "in the results: n_landmarks, similarity"),
    (dict(x="param:similarity"), ConfigError,
     "res: --x: parameter 'similarity' is not numeric (values: manhattan, sigmoid); draw one "
     "figure per value with --by similarity instead"),
    (dict(x="param:n_landmarks", by=["kernel"]), ConfigError,
     "res: --by: no result has parameter 'kernel'. Parameters in the results: n_landmarks, "
     "similarity"),
    (dict(x="labelled_ratio"), MlxError,
     "res: no result for metric 'mse' has a labelled_ratio value; axes with values: "
     "observed_ratio (or param:NAME)"),
])
def test_axis_errors_are_one_line(tmp_path, kwargs, error, message):
    frame = _kar_jain_rows()
    frame["labelled_ratio"] = None
    with pytest.raises(error) as exc:
        plot_results(frame, metric="mse", out_dir=tmp_path, source="res", **kwargs)
    assert str(exc.value) == message


def test_plot_command_new_axes_end_to_end(tmp_path):
    res = tmp_path / "res"
    res.mkdir()
    _kar_jain_rows().to_csv(res / "results.csv", index=False)
    r = CliRunner().invoke(cli, ["plot", str(res), "--x", "param:n_landmarks", "--metric", "mse",
                                 "--by", "similarity", "--paper", "none"], obj={})
    assert r.exit_code == 0, r.output
    out = res / "figures"
    assert r.output.splitlines() == [
        str(out / f"abalone-mse-vs-n_landmarks-similarity={s}.{e}")
        for s in ("manhattan", "sigmoid") for e in ("png", "pdf")]
    r = CliRunner().invoke(cli, ["plot", str(res), "--x", "rank", "--metric", "mse"], obj={})
    assert r.exit_code == 1
    assert r.output == (f"Error: {res}: no result for metric 'mse' has a rank value; axes with "
                        f"values: observed_ratio, labelled_ratio (or param:NAME)\n")
    r = CliRunner().invoke(cli, ["plot", str(res), "--x", "theta", "--metric", "mse"], obj={})
    assert r.exit_code == 2
    assert r.output == ("Error: --x: must be one of 'rank_ratio', 'observed_ratio', "
                        "'labelled_ratio', 'rank' or 'param:NAME' (a parameter, e.g. "
                        "'param:theta'). Got 'theta' instead.\n")
    r = CliRunner().invoke(cli, ["plot", str(res), "--x", "param:n_landmarks", "--metric", "mse",
                                 "--by", "simlarity"], obj={})
    assert r.exit_code == 2
    assert r.output == (f"Error: {res}: --by: no result has parameter 'simlarity'. Did you mean "
                        f"'similarity'? Parameters in the results: n_landmarks, similarity\n")


def test_plot_spec_param_figure_by_similarity(tmp_path):
    res = tmp_path / "res"
    res.mkdir()
    _kar_jain_rows().to_csv(res / "results.csv", index=False)
    spec = tmp_path / "sim.yaml"
    spec.write_text(f"""
paper: similarity
results: [{res}]
series: [KR, RegLand-Sp]
layout: {{rows: [dataset], columns: [series]}}
metrics: [mse]
figures:
  - {{x: 'param:n_landmarks', metric: mse, by: similarity}}
  - {{x: 'param:n_landmarks', metric: mse, at: {{similarity: manhattan}}}}
  - {{x: 'param:n_landmark', metric: mse}}
""")
    paths, notes = plot_spec(load_spec(spec), tmp_path / "out")
    # the filtered figure is the split's manhattan figure: same rows, title and file name
    assert [p.name for p in paths if p.suffix == ".png"] == [
        "sim-abalone-mse-vs-n_landmarks-similarity=manhattan.png",
        "sim-abalone-mse-vs-n_landmarks-similarity=sigmoid.png",
        "sim-abalone-mse-vs-n_landmarks-similarity=manhattan.png"]
    assert notes == [f"figure mse vs param:n_landmark skipped: {spec}: figures[2].x: no result "
                     f"has parameter 'n_landmark'. Did you mean 'n_landmarks'? Parameters in "
                     f"the results: n_landmarks, similarity"]
    _assert_figures(paths)


def test_rank_axis_overlays_published_k(tmp_path):
    """LEML Table 4 has values at absolute ranks (column k): drawn on the rank axis."""
    recs = [dict(dataset="eurlex", label="LEML-SQ", method="leml", params={"loss": "squared"},
                 rank=k, rep=r, metric="p@1", value=0.6 + r * 0.01)
            for k in (250, 500) for r in (0, 1)]
    paths = plot_results(_frame(recs), x="rank", metric="p@1", out_dir=tmp_path, paper="leml")
    assert _names(paths) == ["eurlex-p1-vs-rank.pdf", "eurlex-p1-vs-rank.png"]
    _assert_figures(paths)


def _legend_texts(monkeypatch):
    """Record the legend entries of every figure plot_results saves."""
    from matplotlib.figure import Figure

    seen, save = [], Figure.savefig

    def spy(fig, path, *args, **kwargs):
        if str(path).endswith(".png"):
            seen.append([t.get_text() for ax in fig.axes if ax.get_legend()
                         for t in ax.get_legend().get_texts()])
        return save(fig, path, *args, **kwargs)

    monkeypatch.setattr(Figure, "savefig", spy)
    return seen


def test_legend_says_ours_solid_only_beside_a_published_line(tmp_path, monkeypatch):
    seen = _legend_texts(monkeypatch)
    plot_results(_rows(), x="rank_ratio", metric="p@1", out_dir=tmp_path / "none", paper="none")
    assert seen and all(texts == ["LEML-SQ", "BR-LR (no rank)"] for texts in seen)
    seen.clear()
    plot_results(_rows(), x="rank_ratio", metric="p@1", out_dir=tmp_path / "leml", paper="leml")
    assert any("ours (solid)" in texts and "published, LEML (dashed)" in texts
               for texts in seen)
