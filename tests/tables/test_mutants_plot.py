"""mlx plot: what each figure draws (series, points, error bars, reference lines, published
overlays, axes, ticks, titles, legends, file names) and which rows go into which figure,
read from the matplotlib Axes at save time; the one-line errors of bad requests."""

from pathlib import Path

import pytest
from matplotlib.colors import to_hex
from matplotlib.figure import Figure

from mlx.errors import ConfigError, MlxError
from mlx.tables.plot import figure_data, plot_results, plot_spec
from mlx.tables.spec import Series, load_spec
from tests.tables.test_plot import _frame, _kar_jain_rows, _rows


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
                ylabel=ax.get_ylabel(), xscale=ax.get_xscale(), xticks=_r(ax.get_xticks()),
                xticklabels=[t.get_text() for t in ax.get_xticklabels()], lines=lines,
                bars=bars, legend=[t.get_text() for t in legend.get_texts()] if legend else None)


def _r(values):
    return [round(float(v), 6) for v in values]


@pytest.fixture
def drawn(monkeypatch):
    """Each figure plot_results saves, as a record (at its PNG); the files are written empty
    instead of rendered, which keeps these tests fast."""
    seen = []

    def spy(fig, path, *args, **kwargs):
        path = Path(path)
        if path.suffix == ".png":
            seen.append(_record(fig, path.name))
        path.write_bytes(b"")

    monkeypatch.setattr(Figure, "savefig", spy)
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
