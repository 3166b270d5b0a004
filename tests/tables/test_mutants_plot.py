"""mlx plot: what each figure draws (series, points, error bars, reference lines, published
overlays, axes, ticks, titles, legends, file names) and which rows go into which figure,
read from the matplotlib Axes at save time; the one-line errors of bad requests."""

import json
from pathlib import Path

import pandas as pd
import pytest
from matplotlib.colors import to_hex
from matplotlib.figure import Figure

from mlx.errors import ConfigError, MlxError
from mlx.tables.plot import figure_data, line_points, plot_results, plot_spec, use_log_x
from mlx.tables.spec import Series, load_spec
from tests.tables.test_plot import _frame, _kar_jain_rows, _lsvv_rows, _mom_rows, _rows


def _record(fig, name):
    """What one figure shows: axes texts, ticks, plain lines, error-bar series, legend."""
    ax = fig.axes[0]
    in_bars = set()
    bars = []
    for c in ax.containers:
        data, caps, cols = c.lines
        in_bars.update(map(id, (data, *caps)))
        half = [round((s[1][1] - s[0][1]) / 2, 6) for s in cols[0].get_segments()]
        bars.append((c.get_label(), _r(data.get_xdata()), _r(data.get_ydata()), half,
                     data.get_marker(), to_hex(data.get_color())))
    lines = [(ln.get_label(), _r(ln.get_xdata()), _r(ln.get_ydata()), ln.get_linestyle(),
              ln.get_marker(), ln.get_markerfacecolor() == "none", to_hex(ln.get_color()))
             for ln in ax.get_lines() if id(ln) not in in_bars]
    legend = ax.get_legend()
    return dict(name=name, title=ax.get_title(), xlabel=ax.get_xlabel(),
                minor=type(ax.xaxis.get_minor_formatter()).__name__,
                ylabel=ax.get_ylabel(), xscale=ax.get_xscale(), xticks=_r(ax.get_xticks()),
                xticklabels=[t.get_text() for t in ax.get_xticklabels()], lines=lines,
                bars=bars, legend=[t.get_text() for t in legend.get_texts()] if legend else None)


def _r(values):
    return [round(float(v), 6) for v in values]


@pytest.fixture
def drawn(monkeypatch):
    """Each figure plot_results saves, as a record (at its PNG); the files are written empty
    instead of rendered and the layout is not tightened, which keeps these tests fast."""
    seen = []

    def spy(fig, path, *args, **kwargs):
        path = Path(path)
        if path.suffix == ".png":
            seen.append(_record(fig, path.name))
        seen[-1].setdefault("saved", {})[path.suffix] = (args, kwargs)
        path.write_bytes(b"")

    monkeypatch.setattr(Figure, "savefig", spy)
    monkeypatch.setattr(Figure, "tight_layout", lambda fig, *args, **kwargs: None)
    return seen


def _cycle():
    import matplotlib.pyplot as plt

    return [to_hex(c) for c in plt.rcParams["axes.prop_cycle"].by_key()["color"]]


# ------------------------------------------------------------------- the LEML k/L figure
def test_leml_k_figure_draws_ours_solid_the_paper_dashed_and_br_flat(tmp_path, drawn):
    paths = plot_results(_rows(), x="rank_ratio", metric="p@1", out_dir=tmp_path)
    assert [p.name for p in paths] == ["bibtex-p1-vs-k-obs20.png", "bibtex-p1-vs-k-obs20.pdf",
                                       "bibtex-p1-vs-k-obs40.png", "bibtex-p1-vs-k-obs40.pdf"]
    assert all(p.parent == tmp_path and p.exists() for p in paths)
    assert [d["saved"] for d in drawn] == [{".png": ((), {"dpi": 150, "bbox_inches": "tight"}),
                                            ".pdf": ((), {"dpi": None, "bbox_inches": "tight"})}
                                           ] * 2
    blue, orange = _cycle()[:2]
    first = drawn[0]
    assert first["title"] == "bibtex: top-1 accuracy vs k/L (observed = 20%)"
    assert (first["xlabel"], first["ylabel"], first["xscale"]) == (
        "k/L (%)", "top-1 accuracy (%)", "linear")
    assert first["xticks"] == [20.0, 40.0, 60.0] and first["xticklabels"] == ["20", "40", "60"]
    # ours: 0.5 + 0.1 * k/L * 0.2, in percent; the paper: LEML Table 11 at 20% observed
    assert first["lines"] == [
        ("LEML-SQ", [20.0, 40.0, 60.0], [50.4, 50.8, 51.2], "-", "o", False, blue),
        ("LEML-SQ (paper only)", [20.0, 40.0, 60.0], [48.35, 51.97, 53.52], "--", "o", True,
         blue),
        ("BR-LR (no rank)", [0.0, 1.0], [51.0, 51.0], "-", "None", False, orange),
        ("BR-LR (paper only)", [20.0, 40.0, 60.0], [55.94] * 3, "--", "s", True, orange)]
    assert first["bars"] == []
    assert first["legend"] == ["LEML-SQ", "BR-LR (no rank)", "ours (solid)",
                               "published, LEML (dashed)"]
    second = drawn[1]
    assert second["title"] == "bibtex: top-1 accuracy vs k/L (observed = 40%)"
    assert [ln[2] for ln in second["lines"]] == [[50.8, 51.6, 52.4], [52.37, 56.38, 57.18],
                                                [52.0, 52.0], [58.57] * 3]


def test_observed_figure_per_k_draws_the_chosen_tables_at_that_k(tmp_path, drawn):
    plot_results(_rows(), x="observed_ratio", metric="p@1", out_dir=tmp_path, paper="leml",
                 tables=["11"], percent=False, at={"k_over_L": 0.4})
    blue, orange = _cycle()[:2]
    assert [d["name"] for d in drawn] == ["bibtex-p1-vs-observed-k40.png"]
    d = drawn[0]
    assert d["title"] == "bibtex: top-1 accuracy vs observed entries |Ω|/(nL) (k/L = 40%)"
    assert (d["xlabel"], d["ylabel"]) == ("observed entries |Ω|/(nL) (%)", "top-1 accuracy")
    # BR has no k/L: its rows are in every k/L figure, drawn along the observed ratio
    assert d["lines"] == [
        ("LEML-SQ", [20.0, 40.0], [0.508, 0.516], "-", "o", False, blue),
        ("LEML-SQ (paper only)", [5.0, 10.0, 20.0, 40.0], [0.3435, 0.4211, 0.5197, 0.5638],
         "--", "o", True, blue),
        ("BR-LR", [20.0, 40.0], [0.51, 0.52], "-", "s", False, orange),
        ("BR-LR (paper only)", [5.0, 10.0, 20.0, 40.0], [0.4668, 0.5109, 0.5594, 0.5857],
         "--", "s", True, orange)]
    assert d["xticks"] == [5.0, 10.0, 20.0, 40.0]     # the paper's settings get ticks too
    assert d["xticklabels"] == ["5", "10", "20", "40"]
    drawn.clear()
    plot_results(_rows(), x="observed_ratio", metric="p@1", out_dir=tmp_path, paper="leml",
                 tables=["6"], percent=False, at={"k_over_L": 0.4})
    (d,) = drawn
    assert [ln[:3] for ln in d["lines"]] == [
        ("LEML-SQ", [20.0, 40.0], [0.508, 0.516]),
        ("LEML-SQ (paper only)", [100.0], [0.6099]),        # Table 6: all entries observed
        ("BR-LR", [20.0, 40.0], [0.51, 0.52])]
    assert d["xticklabels"] == ["20", "40", "100"]
    drawn.clear()                                     # a table given as a number: the same
    plot_results(_rows(), x="observed_ratio", metric="p@1", out_dir=tmp_path, paper="leml",
                 tables=[6], percent=False, at={"k_over_L": 0.4})
    assert [ln[:3] for ln in drawn[0]["lines"]] == [ln[:3] for ln in d["lines"]]


def test_an_other_leml_setting_no_row_has_draws_no_figure(tmp_path, drawn):
    """At observed = 30% with results at 20% and 40% only, nothing is drawn: the rows of
    the other ratios are not pooled into a figure titled 30%."""
    panels = figure_data(_rows(), x="rank_ratio", metric="p@1", at={"observed": 0.3})
    assert [p.suffix() for p in panels] == ["-obs30"]
    assert [(ln.name, len(ln.points), ln.flat) for ln in panels[0].lines] == [
        ("LEML-SQ", 0, None), ("BR-LR", 0, None)]
    assert plot_results(_rows(), x="rank_ratio", metric="p@1", out_dir=tmp_path, paper="none",
                        at={"observed": 0.3}) == []
    assert drawn == []


# ------------------------------------------------- error bars, reference lines, paper only
def test_repetitions_draw_error_bars_of_one_sd_in_the_metric_unit(tmp_path, drawn):
    paths = plot_results(_mom_rows(), x="rank", metric="auc", out_dir=tmp_path, paper="none",
                         percent=True)
    assert [p.name for p in paths][::2] == ["bibtex-auc-vs-rank.png",
                                           "delicious-auc-vs-rank.png"]
    blue, orange = _cycle()[:2]
    d = drawn[0]
    sd = round(100 * 0.01 / 2 ** 0.5, 6)       # two repetitions 0.01 apart, in percent
    assert d["bars"] == [("MoM", [25.0, 50.0, 100.0], [83.0, 85.5, 90.5], [sd] * 3, "o", blue),
                         ("LEML", [25.0, 50.0, 100.0], [88.0, 90.5, 95.5], [sd] * 3, "s",
                          orange)]
    assert d["lines"] == [] and d["legend"] == ["MoM", "LEML"]
    # the colour is the series' own, whatever was drawn before
    drawn.clear()
    series = [Series("Ghost", {}, {"label": "Ghost"}), Series("MoM", {}, {"label": "MoM"})]
    plot_results(_mom_rows(), x="rank", metric="auc", out_dir=tmp_path, paper="none",
                 series=series, datasets=["bibtex"])
    assert [(b[0], b[5]) for b in drawn[0]["bars"]] == [("MoM", orange)]
    assert (d["title"], d["xlabel"], d["ylabel"]) == (
        "bibtex: average AUC vs rank K", "rank K", "average AUC (%)")
    assert (d["xscale"], d["xticks"], d["xticklabels"]) == (
        "linear", [25.0, 50.0, 100.0], ["25", "50", "100"])


def test_a_series_without_x_values_is_a_point_or_a_reference_line(tmp_path, drawn):
    br = _rows()
    br = br[br["label"] == "BR-LR"]
    # nothing else on the axis: one point at 0
    plot_results(br, x="rank_ratio", metric="p@1", out_dir=tmp_path, paper="none",
                 at={"observed": 0.2})
    (d,) = drawn
    assert d["lines"] == [("BR-LR", [0.0], [51.0], "None", "o", False, _cycle()[0])]
    assert d["legend"] == ["BR-LR"] and d["xticklabels"] != []
    drawn.clear()
    plot_results(br, x="rank_ratio", metric="p@1", out_dir=tmp_path, paper="none",
                 at={"observed": 0.2}, series=[Series("Ghost", {}, {"label": "Ghost"}),
                                               Series("BR-LR", {}, {"label": "BR-LR"})])
    assert drawn[0]["lines"] == [("BR-LR", [0.0], [51.0], "None", "s", False, _cycle()[1])]
    # the paper has the series along k/L: a reference line beside the dashed paper line
    drawn.clear()
    plot_results(br, x="rank_ratio", metric="p@1", out_dir=tmp_path, paper="leml",
                 at={"observed": 0.2})
    (d,) = drawn
    assert [ln[:4] for ln in d["lines"]] == [
        ("BR-LR (no rank)", [0.0, 1.0], [51.0, 51.0], "-"),
        ("BR-LR (paper only)", [20.0, 40.0, 60.0], [55.94] * 3, "--")]
    assert d["legend"] == ["BR-LR (no rank)", "ours (solid)", "published, LEML (dashed)"]
    assert d["xticks"] == [20.0, 40.0, 60.0]


def test_reference_lines_name_the_missing_axis(tmp_path, drawn):
    plot_results(_kar_jain_rows(), x="param:n_landmarks", metric="mse", out_dir=tmp_path,
                 paper="none", at={"similarity": "sigmoid"})
    (d,) = drawn
    assert d["bars"][0][:3] == ("KR", [10.0, 20.0, 50.0, 100.0],    # the sigmoid rows only
                                [0.1125, 0.0625, 0.0325, 0.0225])
    assert d["legend"][-1] == "constant (no n_landmarks)"
    assert d["lines"][-1][:4] == ("constant (no n_landmarks)", [0.0, 1.0], [0.055, 0.055], "-")
    assert d["title"] == "abalone: MSE vs n_landmarks (similarity = sigmoid)"   # its filter
    assert d["xlabel"] == "n_landmarks" and d["ylabel"] == "MSE"
    frame = _frame([dict(label="SS", labelled_ratio=lab, metric="error", value=0.2)
                    for lab in (0.1, 0.2)] + [dict(label="SVM", labelled_ratio=None,
                                                   metric="error", value=0.3)])
    drawn.clear()
    plot_results(frame, x="labelled_ratio", metric="error", out_dir=tmp_path, paper="none")
    (d,) = drawn
    assert d["legend"] == ["SS", "SVM (no labelled fraction)"]
    assert d["lines"][0][:3] == ("SS", [10.0, 20.0], [20.0, 20.0])    # percent on both axes
    assert d["title"] == "d1: test error vs labelled fraction"
    assert (d["xlabel"], d["ylabel"]) == ("labelled fraction (%)", "test error (%)")


def test_series_colours_follow_the_series_order_and_paper_only_series_are_labelled(
        tmp_path, drawn):
    series = [Series("Ghost", {}, {"label": "Ghost"}),         # no rows, no paper values
              Series("LEML-SQ", {"method": "LEML", "loss": "SQ"}, {"label": "LEML-SQ"}),
              Series("BCS", {"method": "BCS", "loss": "SQ"}, {"label": "BCS"})]
    plot_results(_rows(), x="rank_ratio", metric="p@1", out_dir=tmp_path, paper="leml",
                 series=series, at={"observed": 0.2})
    (d,) = drawn
    cycle = _cycle()
    assert [(ln[0], ln[3], ln[4], ln[6]) for ln in d["lines"]] == [
        ("LEML-SQ", "-", "s", cycle[1]), ("LEML-SQ (paper only)", "--", "s", cycle[1]),
        ("BCS (paper only)", "--", "^", cycle[2])]
    assert d["lines"][2][2] == [40.12, 45.49, 49.54]
    assert d["legend"] == ["LEML-SQ", "BCS (paper only)", "ours (solid)",
                           "published, LEML (dashed)"]
    # only the paper's values: no figure
    drawn.clear()
    assert plot_results(_rows(), x="rank_ratio", metric="p@1", out_dir=tmp_path,
                        paper="leml", series=series[2:], at={"observed": 0.2}) == []
    assert drawn == []


def test_more_markers_and_colours_than_series_cycle(tmp_path, drawn):
    recs = [dict(label=f"M{i}", rank=k, metric="mse", value=i + k / 100)
            for i in range(11) for k in (1, 2)]
    plot_results(_frame(recs), x="rank", metric="mse", out_dir=tmp_path, paper="none")
    (d,) = drawn
    cycle = _cycle()
    assert [ln[4] for ln in d["lines"]] == ["o", "s", "^", "D", "v", "P", "X", "<", ">", "*",
                                            "o"]
    assert [ln[6] for ln in d["lines"]] == [cycle[i % len(cycle)] for i in range(11)]
    assert d["lines"][10][2] == [10.01, 10.02]


# --------------------------------------------------------------------- the horizontal axis
def test_log_axis_for_a_wide_positive_parameter_with_a_tick_per_value(tmp_path, drawn):
    frame = _lsvv_rows()
    frame = frame[frame["params"] != json.dumps({"features": "rff"})]
    plot_results(frame, x="param:theta", metric="error", out_dir=tmp_path, paper="none")
    (d,) = drawn
    assert d["xscale"] == "log" and d["minor"] == "NullFormatter"   # no labels between
    assert d["xticks"] == [0.01, 0.1, 1.0, 10.0]
    assert d["xticklabels"] == ["0.01", "0.1", "1", "10"]
    assert d["lines"][0][:3] == ("LSVV", [0.01, 0.1, 1.0, 10.0], [10.01, 10.1, 11.0, 20.0])


@pytest.mark.parametrize("n, ours", [(15, True), (16, False)])
def test_a_tick_at_every_x_value_up_to_fifteen_values(tmp_path, drawn, n, ours):
    recs = [dict(label="A", params={"c": c}, metric="mse", value=c / 100)
            for c in range(1, n + 1)]
    plot_results(_frame(recs), x="param:c", metric="mse", out_dir=tmp_path, paper="none")
    (d,) = drawn
    assert d["xscale"] == "linear"                # a span of 15 or 16: linear
    assert (d["xticklabels"] == [str(c) for c in range(1, n + 1)]) is ours


def test_the_leml_axes_are_never_logarithmic_and_always_ticked(tmp_path, drawn):
    recs = [dict(label="A", observed_ratio=o, rank_ratio=0.5, metric="mse", value=o)
            for o in (0.01, 0.02, 0.03, 0.04, 0.05, 0.06, 0.07, 0.08, 0.09, 0.1, 0.2, 0.3, 0.4,
                      0.5, 0.6, 0.8, 1.0)]
    plot_results(_frame(recs), x="observed_ratio", metric="mse", out_dir=tmp_path,
                 paper="none")
    (d,) = drawn
    assert d["xscale"] == "linear"
    assert d["xticklabels"][:3] == ["1", "2", "3"] and len(d["xticklabels"]) == 17
    assert d["name"] == "d1-mse-vs-observed-k50.png"


def test_use_log_x_boundaries():
    assert not use_log_x([1, 20]) and use_log_x([1, 20.5])
    assert use_log_x([0.5, 100]) and not use_log_x([-1, 100]) and not use_log_x([0, 100])
    assert use_log_x(["0.5", "100"])                    # values as text


# ------------------------------------------------------------ which rows go into a figure
def test_only_finished_test_rows_of_the_metric_and_the_chosen_datasets(tmp_path):
    recs = [dict(dataset=ds, label="A", rank=k, metric=m, value=v, cell=f"{ds}{k}{m}")
            for ds in ("d1", "d2") for k in (1, 2)
            for m, v in (("mse", k / 10), ("mae", 9.0))]
    frame = _frame(recs + [dict(dataset="d1", label="A", rank=1, metric="mse", value=99.0)])
    frame.loc[frame.index[-1], "status"] = "failed"
    extra = _frame([dict(dataset="d1", label="A", rank=2, metric="mse", value=99.0)])
    extra["split"] = "validation"
    frame = pd.concat([frame, extra], ignore_index=True)
    panels = figure_data(frame, x="rank", metric="mse", datasets=["d2"])
    assert [p.dataset for p in panels] == ["d2"]
    panels = figure_data(frame, x="rank", metric="MSE")
    assert [p.dataset for p in panels] == ["d1", "d2"]
    pts = panels[0].lines[0].points
    assert pts["x"].tolist() == [1.0, 2.0] and pts["mean"].tolist() == [0.1, 0.2]
    assert pts["n"].tolist() == [1, 1]
    with pytest.raises(MlxError) as exc:
        figure_data(frame, x="rank", metric="mse", datasets=["d3", "d4"], source="res")
    assert str(exc.value) == "res: no finished results for metric 'mse' on d3, d4"
    with pytest.raises(MlxError) as exc:
        figure_data(frame, x="rank", metric="p@1", source="res")
    assert str(exc.value) == "res: no finished results for metric 'p@1'"


def test_training_time_counts_each_cell_once(tmp_path, drawn):
    recs = [dict(label="A", rank=k, rep=r, metric=m, value=0.5, cell=f"c{k}{r}")
            for k in (1, 2) for r in (0, 1) for m in ("mse", "mae")]
    frame = _frame(recs)
    frame["fit_seconds"] = [1.0 * k + 2.0 * r for k in (1, 2) for r in (0, 1) for _ in (0, 1)]
    (panel,) = figure_data(frame, x="rank", metric="fit_seconds")
    pts = panel.lines[0].points
    assert pts["mean"].tolist() == [2.0, 3.0] and pts["n"].tolist() == [2, 2]
    plot_results(frame, x="rank", metric="fit_seconds", out_dir=tmp_path, paper="none")
    assert drawn[0]["name"] == "d1-fit_seconds-vs-rank.png"
    assert drawn[0]["ylabel"] == "training time (s)"
    assert drawn[0]["bars"][0][2] == [2.0, 3.0]


def test_results_without_selected_or_with_parsed_parameters(tmp_path):
    frame = _kar_jain_rows().drop(columns=["selected"])
    panels = figure_data(frame, x="param:n_landmarks", metric="mse", by="similarity")
    assert [p.by for p in panels] == [{"similarity": "manhattan"}, {"similarity": "sigmoid"}]
    frame = _kar_jain_rows()
    frame["_params"] = [{"n_landmarks": 7} for _ in range(len(frame))]   # already parsed
    (panel,) = figure_data(frame, x="param:n_landmarks", metric="mse")
    assert panel.lines[0].points["x"].tolist() == [7.0]


def test_missing_columns_and_text_values_are_read_as_numbers(tmp_path):
    frame = _frame([dict(label="A", rank=k, metric="mse", value=k) for k in (1, 2)])
    frame["value"] = ["0.5", "0.25"]
    frame["rank"] = ["1", "2"]
    frame = frame.drop(columns=["labelled_ratio"])
    frame.loc[0, "label"] = None
    frame.loc[0, "dataset"] = None
    failed = _frame([dict(label="A", metric="mse", value=0.0)]).assign(value="n/a", rank="-",
                                                                       status="failed")
    frame = pd.concat([frame, failed], ignore_index=True)   # text that is no number
    panels = figure_data(frame, x="rank", metric="mse")
    assert [(p.dataset, [ln.name for ln in p.lines]) for p in panels] == [("", ["", "A"]),
                                                                          ("d1", ["", "A"])]
    assert panels[0].lines[0].points["mean"].tolist() == [0.5]
    assert panels[1].lines[1].points[["x", "mean"]].values.tolist() == [[2.0, 0.25]]
    assert [p.xs for p in panels] == [[1.0], [2.0]]
    # every sweep column and the training time, as read from text
    frame = _frame([dict(label="A", rank_ratio=r, observed_ratio=o, labelled_ratio=lab,
                         metric="mse", value=1.0, cell=f"c{r}{o}{lab}")
                    for r in (0.2, 0.4) for o in (0.5, 1.0) for lab in (0.1, 0.3)])
    frame["fit_seconds"] = [float(i) for i in range(len(frame))]
    for col in ("rank_ratio", "observed_ratio", "labelled_ratio", "fit_seconds"):
        frame[col] = frame[col].map(str)
    panels = figure_data(frame, x="labelled_ratio", metric="fit_seconds")
    assert [p.suffix() for p in panels] == ["-k20-obs50", "-k20-obs100", "-k40-obs50",
                                            "-k40-obs100"]
    assert [p.lines[0].points["mean"].tolist() for p in panels] == [[0.0, 1.0], [2.0, 3.0],
                                                                    [4.0, 5.0], [6.0, 7.0]]
    panels = figure_data(frame, x="rank_ratio", metric="mse")
    assert [p.lines[0].points["x"].tolist() for p in panels] == [[0.2, 0.4]] * 4


def test_x_values_equal_to_nine_digits_are_one_point():
    rows = pd.DataFrame({"_x": [0.2, 0.2 + 1e-10, 0.3], "value": [1.0, 3.0, 5.0]})
    pts = line_points(rows)
    assert pts["x"].tolist() == [0.2, 0.3] and pts["n"].tolist() == [2, 1]
    assert pts["mean"].tolist() == [2.0, 5.0]


def test_no_value_on_the_axis_names_the_axes_that_have_values():
    frame = _frame([dict(label="A", metric="mse", value=1.0, observed_ratio=None,
                         labelled_ratio=None)])
    with pytest.raises(MlxError) as exc:
        figure_data(frame, x="rank", metric="mse", source="res")
    assert str(exc.value) == "res: no result for metric 'mse' has a rank value (or param:NAME)"
    # the LEML axes draw rows without a value as reference lines instead
    (panel,) = figure_data(frame, x="rank_ratio", metric="mse")
    assert panel.lines[0].flat == (1.0, pytest.approx(float("nan"), nan_ok=True), 1)
    assert panel.suffix() == "" and panel.at_text() == ""


@pytest.mark.parametrize("kwargs, key, hint", [({}, "--x", "--by flag"),
                                               ({"key_prefix": "figures[2]."}, "figures[2].x",
                                                "'by: flag'")])
def test_a_flag_parameter_is_not_numeric(kwargs, key, hint):
    frame = _frame([dict(label="A", params={"flag": f}, metric="mse", value=1.0)
                    for f in (True, False)] + [dict(label="B", metric="mse", value=1.0)])
    with pytest.raises(ConfigError) as exc:
        figure_data(frame, x="param:flag", metric="mse", source="res", **kwargs)
    assert str(exc.value) == (f"res: {key}: parameter 'flag' is not numeric (values: false, "
                              f"true); draw one figure per value with {hint} instead")


def test_a_parameter_nobody_has_when_there_are_no_parameters():
    frame = _frame([dict(label="A", metric="mse", value=1.0)])
    with pytest.raises(ConfigError) as exc:
        figure_data(frame, x="param:theta", metric="mse", source="res")
    assert str(exc.value) == ("res: --x: no result has parameter 'theta'. The results have no "
                              "parameters")
    frame = _frame([dict(label="A", params={"a": 1}, selected={"theta": 2.0}, metric="mse",
                         value=1.0)])
    with pytest.raises(ConfigError) as exc:
        figure_data(frame, x="param:beta", metric="mse", source="res", by=["a"])
    assert str(exc.value) == ("res: --x: no result has parameter 'beta'. Did you mean "
                              "'theta'? Parameters in the results: a, theta")


# ---------------------------------------------------------------- which figures are drawn
def _lab_rows(**cols):
    """Two labelled ratios per value of the given columns (lists), one series."""
    import itertools

    keys = list(cols)
    return _frame([dict(label="A", labelled_ratio=lab, metric="error", value=lab,
                        **dict(zip(keys, combo)))
                   for combo in itertools.product(*cols.values()) for lab in (0.1, 0.2)])


def test_figures_per_rank_or_per_k_over_l_when_they_vary():
    panels = figure_data(_lab_rows(rank=[5, 10]), x="labelled_ratio", metric="error")
    assert [(p.suffix(), p.at_text()) for p in panels] == [("-rank5", " (K = 5)"),
                                                           ("-rank10", " (K = 10)")]
    # each figure's rows and series, as the report draws them
    assert [p.rows["rank"].tolist() for p in panels] == [[5.0, 5.0], [10.0, 10.0]]
    assert panels[0].lines[0].series == Series("A", {}, {"label": "A"})
    assert [p.lines[0].points["n"].tolist() for p in panels] == [[1, 1], [1, 1]]
    # with k/L values the rank follows from them: figures per k/L only
    panels = figure_data(_lab_rows(rank_ratio=[0.2, 0.4], rank=[5, 10]), x="labelled_ratio",
                         metric="error")
    assert [(p.suffix(), p.at_text()) for p in panels] == [("-k20", " (k/L = 20%)"),
                                                           ("-k40", " (k/L = 40%)")]
    assert [p.lines[0].points["n"].tolist() for p in panels] == [[2, 2], [2, 2]]
    # one value: no split; `at` restricts instead of splitting
    assert [p.suffix() for p in figure_data(_lab_rows(rank=[5]), x="labelled_ratio",
                                            metric="error")] == [""]
    (panel,) = figure_data(_lab_rows(rank=[5, 10]), x="labelled_ratio", metric="error",
                           at={"k": 10})
    assert panel.suffix() == "" and panel.lines[0].points["n"].tolist() == [1, 1]
    panels = figure_data(_lab_rows(rank=[5, 10], observed_ratio=[0.5, 1.0]),
                         x="labelled_ratio", metric="error")
    assert [p.suffix() for p in panels] == ["-rank5-obs50", "-rank5-obs100",
                                            "-rank10-obs50", "-rank10-obs100"]
    assert panels[1].at_text() == " (K = 5, observed = 100%)"


def test_figures_per_labelled_ratio_on_the_rank_axis():
    frame = _frame([dict(label="A", rank=k, labelled_ratio=lab, metric="mse", value=k)
                    for k in (1, 2) for lab in (0.25, 0.5)])
    panels = figure_data(frame, x="rank", metric="mse")
    assert [(p.suffix(), p.at_text()) for p in panels] == [
        ("-lab25", " (labelled = 25%)"), ("-lab50", " (labelled = 50%)")]


def test_the_leml_axes_split_by_the_other_ratio_even_with_one_value():
    rows = _rows()
    one = rows[rows["observed_ratio"] == 0.4]
    panels = figure_data(one, x="rank_ratio", metric="p@1")
    assert [(p.suffix(), p.at_text()) for p in panels] == [("-obs40", " (observed = 40%)")]
    assert panels[0].pub_filters == {"observed": 0.4}
    panels = figure_data(rows, x="observed_ratio", metric="p@1", at={"k_over_L": 0.6})
    assert [(p.suffix(), p.pub_filters) for p in panels] == [("-k60", {"k_over_L": 0.6})]
    assert panels[0].lines[0].points["mean"].tolist() == pytest.approx([0.512, 0.524])
    # the axis's own settings and the rank are not filters on it
    panels = figure_data(rows, x="rank_ratio", metric="p@1", at={"k_over_L": 0.2, "k": 9})
    assert [p.suffix() for p in panels] == ["-obs20", "-obs40"]
    assert panels[0].lines[0].points["x"].tolist() == [0.2, 0.4, 0.6]


def test_at_keeps_rows_without_the_setting_or_parameter():
    frame = _frame([dict(label="A", metric="mae", value=0.0)]      # not drawn: rows from 1
                   + [dict(label="A", rank=k, params={"c": c}, labelled_ratio=lab,
                           metric="mse", value=c)
                      for k in (5, 10) for c in (1, 2) for lab in (0.1, 0.2)]
                   + [dict(label="B", metric="mse", value=7.0, labelled_ratio=0.1)])
    (panel,) = figure_data(frame, x="labelled_ratio", metric="mse", at={"k": 5.0, "c": 2})
    a, b = panel.lines
    assert a.points["mean"].tolist() == [2.0, 2.0] and a.points["n"].tolist() == [1, 1]
    assert b.points["mean"].tolist() == [7.0]
    for c in ("2", "2.0", 2.0000000001):         # the same number, written otherwise
        (panel,) = figure_data(frame, x="labelled_ratio", metric="mse", at={"k": 5, "c": c})
        assert panel.lines[0].points["n"].tolist() == [1, 1]
    # the axis's own parameter is not a filter
    (panel,) = figure_data(frame, x="param:c", metric="mse",
                           at={"c": 1, "k": 10, "labelled": 0.1})
    assert panel.lines[0].points["x"].tolist() == [1.0, 2.0]
    assert panel.lines[0].points["n"].tolist() == [1, 1]
    with pytest.raises(ConfigError) as exc:
        figure_data(frame, x="labelled_ratio", metric="mse", at={"k": "five"})
    assert str(exc.value) == "at.k: must be a number. Got 'five' instead."


def test_by_values_in_numeric_order_and_combined():
    frame = _frame([dict(label="A", rank=k, params={"c": c, "kind": kind}, metric="mse",
                         value=c)
                    for k in (1, 2) for c in (100, 2, 10) for kind in ("b", "a")]
                   + [dict(label="B", rank=1, params={"flag": True}, metric="mse", value=0.0),
                      dict(label="B", rank=1, params={"flag": False}, metric="mse", value=1.0)])
    panels = figure_data(frame, x="rank", metric="mse", by=["c", "kind"])
    assert [p.suffix() for p in panels] == [f"-c={c}-kind={k}" for c in (2, 10, 100)
                                            for k in ("a", "b")]
    assert panels[2].at_text() == " (c = 10, kind = a)"
    # rows without a `by` parameter are in every figure
    assert all(p.lines[1].points["n"].tolist() == [2] for p in panels)
    assert panels[2].lines[0].points["mean"].tolist() == [10.0, 10.0]
    panels = figure_data(frame, x="rank", metric="mse", by="flag")
    assert [p.by for p in panels] == [{"flag": "false"}, {"flag": "true"}]
    assert [p.lines[0].points["n"].tolist() for p in panels] == [[6, 6], [6, 6]]
    assert [p.lines[1].points["mean"].tolist() for p in panels] == [[1.0], [0.0]]


def test_by_a_parameter_one_dataset_lacks_gives_it_one_figure():
    frame = _frame([dict(dataset="d1", label="A", rank=1, params={"s": s}, metric="mse",
                         value=1.0) for s in ("x", "y")]
                   + [dict(dataset="d2", label="A", rank=1, metric="mse", value=2.0)])
    panels = figure_data(frame, x="rank", metric="mse", by=["s"])
    assert [(p.dataset, p.by) for p in panels] == [("d1", {"s": "x"}), ("d1", {"s": "y"}),
                                                   ("d2", {})]
    # the next parameter still splits the dataset that lacks the first
    frame = pd.concat([frame, _frame([dict(dataset="d2", label="A", rank=1, params={"t": t},
                                           metric="mse", value=t) for t in (3, 4)])],
                      ignore_index=True)
    panels = figure_data(frame, x="rank", metric="mse", by=["s", "t"])
    assert [(p.dataset, p.by) for p in panels] == [("d1", {"s": "x"}), ("d1", {"s": "y"}),
                                                   ("d2", {"t": "3"}), ("d2", {"t": "4"})]
    assert [p.lines[0].points["mean"].tolist() for p in panels[2:]] == [[2.5], [3.0]]


def test_file_names_keep_letters_digits_dots_and_dashes(tmp_path, drawn):
    frame = _frame([dict(dataset="nus wide/2", label="A", params={"sim": "rbf (γ=1)"},
                         rank=k, metric="ndcg@3", value=0.5) for k in (1, 2)])
    paths = plot_results(frame, x="rank", metric="nDCG@3", out_dir=tmp_path / "new" / "dir",
                         paper="none", by=["sim"], prefix="t-")
    assert [p.name for p in paths] == ["t-nuswide2-ndcg3-vs-rank-sim=rbf1.png",
                                       "t-nuswide2-ndcg3-vs-rank-sim=rbf1.pdf"]
    assert drawn[0]["title"] == "nus wide/2: nDCG@3 vs rank K (sim = rbf (γ=1))"
    frame = _frame([dict(label="A", params={"l2 reg": c}, metric="mse", value=c)
                    for c in (1, 2)])
    paths = plot_results(frame, x="param: l2 reg", metric="mse", out_dir=tmp_path,
                         paper="none")
    assert paths[0].name == "d1-mse-vs-l2reg.png"
    assert drawn[-1]["xlabel"] == "l2 reg" and drawn[-1]["title"] == "d1: MSE vs l2 reg"


# ------------------------------------------------------------------- the published values
def test_auto_paper_is_the_one_with_most_matching_points_first_on_a_tie(tmp_path, drawn):
    """Training times of LEML-SQ: the LEML paper has two at absolute ranks on eurlex, the
    MoM paper one each on bibtex and delicious (no rank): a tie, the first paper wins."""
    recs = [dict(dataset=ds, label="LEML-SQ", method="leml", params={"loss": "squared"},
                 rank=k, metric="p@1", value=0.5, cell=f"{ds}{k}")
            for ds in ("eurlex", "bibtex", "delicious") for k in (250, 500)]
    frame = _frame(recs)
    frame["fit_seconds"] = 100.0
    plot_results(frame, x="rank", metric="fit_seconds", out_dir=tmp_path)
    eurlex = drawn[0]
    assert eurlex["name"] == "eurlex-fit_seconds-vs-rank.png"
    assert eurlex["lines"][1][:3] == ("LEML-SQ (paper only)", [250.0, 500.0], [175.0, 487.0])
    assert eurlex["legend"][-1] == "published, LEML (dashed)"
    # a metric no paper has for these datasets: nothing overlaid
    drawn.clear()
    plot_results(frame[frame["dataset"] == "bibtex"], x="rank", metric="p@1", out_dir=tmp_path)
    assert drawn[0]["legend"] == ["LEML-SQ"]


def test_paper_points_of_the_series_method_and_loss_once_per_setting(tmp_path, drawn):
    """Without an observed ratio in the results every published one matches: each k/L is
    drawn once (the first published row), for the series' own loss."""
    frame = _rows()
    frame = frame[frame["observed_ratio"] == 0.2].assign(observed_ratio=None)
    frame.loc[frame["label"] == "LEML-SQ", "label"] = "LEML-LR"
    plot_results(frame, x="rank_ratio", metric="p@1", out_dir=tmp_path, paper="leml")
    (d,) = drawn
    assert d["name"] == "bibtex-p1-vs-k.png" and d["title"] == "bibtex: top-1 accuracy vs k/L"
    assert d["lines"][1][:3] == ("LEML-LR (paper only)", [20.0, 40.0, 60.0, 80.0, 100.0],
                                 [46.2, 50.78, 51.37, 52.64, 53.76])
    assert d["xticklabels"] == ["20", "40", "60", "80", "100"]


def test_published_values_of_other_datasets_are_not_drawn(tmp_path, drawn):
    frame = _rows().assign(dataset="delicious")
    plot_results(frame, x="rank_ratio", metric="p@1", out_dir=tmp_path, paper="leml",
                 at={"observed": 0.2})
    (d,) = drawn      # the paper's Table 11 has bibtex's values at 20% observed, not these
    assert [ln[0] for ln in d["lines"]] == ["LEML-SQ", "BR-LR (no rank)"]
    assert d["legend"] == ["LEML-SQ", "BR-LR (no rank)"]


# ------------------------------------------------------------------- figures of a table spec
def _spec(tmp_path, figures, axes="{dataset: [bibtex], observed: [0.2]}", extra=""):
    res = tmp_path / "res"
    res.mkdir(exist_ok=True)
    other = _rows().assign(dataset="delicious", cell_id=lambda d: "d-" + d["cell_id"])
    pd.concat([_rows(), other]).to_csv(res / "results.csv", index=False)
    spec = tmp_path / "fig.yaml"
    spec.write_text(f"paper: leml\nresults: [{res}]\nseries: [LEML-SQ]\naxes: {axes}\n"
                    f"metrics: [p@1]\n{extra}figures:\n"
                    + "".join(f"  - {f}\n" for f in figures))
    return load_spec(spec)


def test_spec_figures_take_the_spec_setting_dataset_series_and_tables(tmp_path, drawn):
    spec = _spec(tmp_path, ["{x: rank_ratio, metric: p@1}",
                            "{x: rank_ratio, metric: p@1, at: {observed: 0.4}, "
                            "datasets: [delicious]}",
                            "{x: observed_ratio, metric: p@1, at: {k_over_L: 0.4}}"],
                 extra="tables: ['11']\n")
    paths, notes = plot_spec(spec, tmp_path / "out", percent=False)
    assert notes == []
    assert [p.name for p in paths][::2] == ["fig-bibtex-p1-vs-k-obs20.png",
                                           "fig-delicious-p1-vs-k-obs40.png",
                                           "fig-bibtex-p1-vs-observed-k40.png"]
    assert all(p.parent == tmp_path / "out" for p in paths)
    first, _, third = drawn
    assert first["ylabel"] == "top-1 accuracy"                   # percent=False
    assert [ln[:3] for ln in first["lines"]] == [
        ("LEML-SQ", [20.0, 40.0, 60.0], [0.504, 0.508, 0.512]),
        ("LEML-SQ (paper only)", [20.0, 40.0, 60.0], [0.4835, 0.5197, 0.5352])]
    assert [ln[:3] for ln in third["lines"]] == [
        ("LEML-SQ", [20.0, 40.0], [0.508, 0.516]),
        ("LEML-SQ (paper only)", [5.0, 10.0, 20.0, 40.0], [0.3435, 0.4211, 0.5197, 0.5638])]


def test_spec_with_several_settings_draws_each_and_notes_what_it_skips(tmp_path, drawn):
    spec = _spec(tmp_path, ["{x: rank_ratio, metric: p@1}", "{x: rank, metric: p@1}",
                            "{x: observed_ratio, metric: p@1}"],
                 axes="{observed: [0.2, 0.4], k_over_L: [0.4]}",
                 extra="layout: {rows: [dataset, k_over_L, observed], columns: [series]}\n"
                       "dataset_aliases: {delicious: Delicious}\n")
    paths, notes = plot_spec(spec, tmp_path / "out")
    assert [p.name for p in paths][::2] == ["fig-bibtex-p1-vs-k-obs20.png",
                                           "fig-bibtex-p1-vs-k-obs40.png",
                                           "fig-Delicious-p1-vs-k-obs20.png",
                                           "fig-Delicious-p1-vs-k-obs40.png",
                                           "fig-bibtex-p1-vs-observed-k40.png",
                                           "fig-Delicious-p1-vs-observed-k40.png"]
    assert drawn[0]["ylabel"] == "top-1 accuracy (%)"
    assert notes == [f"figure p@1 vs rank skipped: {spec.source}: no result for metric 'p@1' "
                     f"has a rank value; axes with values: rank_ratio, observed_ratio (or "
                     f"param:NAME)"]


def test_spec_without_figures_says_so(tmp_path):
    spec = _spec(tmp_path, [])
    assert plot_spec(spec, tmp_path / "out") == ([], [f"{spec.source}: the spec lists no "
                                                      f"figures"])


def test_errors_name_the_results_by_default(tmp_path):
    for draw in (figure_data, lambda *a, **k: plot_results(*a, out_dir=tmp_path, **k)):
        with pytest.raises(MlxError) as exc:
            draw(_rows(), x="rank_ratio", metric="p@5")
        assert str(exc.value) == "results: no finished results for metric 'p@5'"


def test_the_papers_unit_of_the_metric_unless_told(tmp_path, drawn):
    """LSVV publishes the Hamming loss in percent: the figure follows it unless told."""
    frame = _frame([dict(label="LSVV", labelled_ratio=lab, metric="hamming", value=0.25)
                    for lab in (0.1, 0.2)])
    for paper, percent in (("lsvv", None), ("none", None), ("lsvv", False)):
        plot_results(frame, x="labelled_ratio", metric="hamming", out_dir=tmp_path,
                     paper=paper, percent=percent)
    assert [(d["ylabel"], d["lines"][0][2]) for d in drawn] == [
        ("Hamming loss (%)", [25.0, 25.0]), ("Hamming loss", [0.25, 0.25]),
        ("Hamming loss", [0.25, 0.25])]
    # chosen automatically: the LSVV paper has the method (no loss) on scene
    drawn.clear()
    plot_results(frame.assign(dataset="scene"), x="labelled_ratio", metric="hamming",
                 out_dir=tmp_path)
    plot_results(frame.assign(dataset="iris"), x="labelled_ratio", metric="hamming",
                 out_dir=tmp_path)
    assert [d["ylabel"] for d in drawn] == ["Hamming loss (%)", "Hamming loss"]


def test_series_follow_the_order_of_the_results_matched_or_not(tmp_path, drawn):
    frame = _rows()
    mine = frame[frame["label"] == "BR-LR"].assign(label="Mine", method="mine", params="{}")
    frame = pd.concat([mine, frame], ignore_index=True)
    plot_results(frame, x="rank_ratio", metric="p@1", out_dir=tmp_path, paper="leml",
                 at={"observed": 0.2})
    (d,) = drawn
    assert d["legend"] == ["Mine (no rank)", "LEML-SQ", "BR-LR (no rank)", "ours (solid)",
                           "published, LEML (dashed)"]


def test_settings_equal_to_nine_digits_are_one_figure_and_one_tick():
    frame = _frame([dict(label="A", rank_ratio=0.2 + e, observed_ratio=0.5 + e,
                         labelled_ratio=lab + e, metric="mse", value=1.0)
                    for e in (0.0, 1e-10) for lab in (0.1, 0.2)])
    (panel,) = figure_data(frame, x="labelled_ratio", metric="mse")
    assert panel.suffix() == "" and panel.xs == [0.1, 0.2]
    assert panel.lines[0].points["n"].tolist() == [2, 2]
    panels = figure_data(frame, x="rank_ratio", metric="mse")
    assert [(p.suffix(), p.xs) for p in panels] == [("-obs50-lab10", [0.2]),
                                                    ("-obs50-lab20", [0.2])]


def test_the_requested_other_ratio_of_results_without_one(tmp_path, drawn):
    """Results without an observed ratio (NaN) drawn at observed = 20%: every row is in the
    figure, and the paper's values are those at 20%."""
    frame = _rows()
    frame = frame[frame["observed_ratio"] == 0.2].assign(observed_ratio=None)
    panels = figure_data(frame, x="rank_ratio", metric="p@1", at={"observed": 0.2})
    assert [(p.suffix(), p.at_text(), p.pub_filters) for p in panels] == [
        ("-obs20", " (observed = 20%)", {"observed": 0.2})]
    assert panels[0].lines[0].points["n"].tolist() == [1, 1, 1]
    plot_results(frame, x="rank_ratio", metric="p@1", out_dir=tmp_path, paper="leml",
                 at={"observed": 0.2})
    (d,) = drawn
    assert d["name"] == "bibtex-p1-vs-k-obs20.png"
    assert d["lines"][1][:3] == ("LEML-SQ (paper only)", [20.0, 40.0, 60.0],
                                 [48.35, 51.97, 53.52])


def test_no_paper_draws_no_published_values_even_for_series_that_name_one(tmp_path, drawn):
    frame = _rows()
    frame = frame[(frame["observed_ratio"] == 0.2) & (frame["metric"] == "p@1")]
    frame = frame.assign(observed_ratio=1.0, metric="p@3")   # LEML Table 3 has this setting
    series = [Series("LEML-SQ", {"method": "LEML", "loss": "SQ"}, {"label": "LEML-SQ"})]
    plot_results(frame, x="rank_ratio", metric="p@3", out_dir=tmp_path, paper="none",
                 series=series)
    (d,) = drawn
    assert [ln[0] for ln in d["lines"]] == ["LEML-SQ"] and d["legend"] == ["LEML-SQ"]


def test_a_reference_line_on_the_rank_axis_says_no_rank(tmp_path, drawn):
    frame = _frame([dict(label="MoM", rank=k, metric="auc", value=0.8) for k in (5, 10)]
                   + [dict(label="BR", metric="auc", value=0.7)])
    plot_results(frame, x="rank", metric="auc", out_dir=tmp_path, paper="none")
    assert drawn[0]["legend"] == ["MoM", "BR (no rank)"]


def test_at_an_absolute_rank_filters_the_observed_ratio_figure():
    frame = _rows().assign(rank=lambda d: d["rank_ratio"] * 50)      # K = 10, 20, 30
    (panel,) = figure_data(frame, x="observed_ratio", metric="p@1",
                           at={"k_over_L": 0.4, "k": 20})
    assert panel.lines[0].points["n"].tolist() == [1, 1]             # LEML-SQ at K = 20
    assert panel.lines[1].points["n"].tolist() == [1, 1]             # BR has no rank
    (panel,) = figure_data(frame, x="observed_ratio", metric="p@1",
                           at={"k_over_L": 0.4, "k": 10})
    assert panel.lines[0].points.empty


def test_a_figure_with_nothing_to_draw_is_skipped_and_the_next_drawn(tmp_path, drawn):
    frame = _rows()
    frame = frame[(frame["label"] == "LEML-SQ") & (frame["observed_ratio"] == 0.4)
                  | (frame["label"] == "BR-LR")]
    series = [Series("LEML-SQ", {}, {"label": "LEML-SQ"})]
    paths = plot_results(frame, x="rank_ratio", metric="p@1", out_dir=tmp_path, paper="none",
                         series=series)
    assert [p.name for p in paths] == ["bibtex-p1-vs-k-obs40.png", "bibtex-p1-vs-k-obs40.pdf"]
    import matplotlib.pyplot as plt

    assert plt.get_fignums() == []              # every figure is closed, drawn or not


def test_by_a_mapping_parameter_names_it_with_sorted_keys():
    frame = _frame([dict(label="A", rank=1, params={"kern": {"b": 1, "a": v}}, metric="mse",
                         value=v) for v in (2, 3)])
    panels = figure_data(frame, x="rank", metric="mse", by="kern")
    assert [p.by for p in panels] == [{"kern": '{"a": 2, "b": 1}'}, {"kern": '{"a": 3, "b": 1}'}]
    assert [p.lines[0].points["mean"].tolist() for p in panels] == [[2.0], [3.0]]


def test_a_parameter_name_with_a_colon(tmp_path):
    frame = _frame([dict(label="A", params={"rbf:gamma": g}, metric="mse", value=g)
                    for g in (1, 2)])
    (panel,) = figure_data(frame, x="param:rbf:gamma", metric="mse")
    assert panel.lines[0].points["x"].tolist() == [1.0, 2.0]
