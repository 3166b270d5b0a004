"""mlx report: one self-contained page whose tables equal the run's own table, whose figures
hold every repetition as a point and the means over them, with skipped cells and reasons, and
the paper table of a spec; a headless browser renders it without console errors."""

import json
import os
import re
import shutil
import subprocess
import textwrap
from html.parser import HTMLParser

import pytest
from click.testing import CliRunner

from mlx.cli import cli
from mlx.config import load_config
from mlx.runner.experiment import run_experiment
from mlx.runner.results import read_results, wide_table

CONFIG = """
name: rep
dataset:
  synthetic: {n_samples: 160, n_features: 12, n_labels: 6, rank: 2, seed: 3}
methods:
  - name: constant
  - name: leml
    label: LEML-SQ
    params: {loss: squared, max_iter: 3}
  - name: cplst
    label: CPLST
  - name: br
    label: BR
    params: {loss: squared}
    grid: {l2_reg: [0.1, 10.0]}
  - name: br
    label: BR-all
    params: {loss: squared}
    threshold: -100.0      # every label predicted: a Hamming loss worse than the constant's
sweep:
  rank_ratio: [0.3, 0.6]
  observed_ratio: [1.0, 0.5]
  repetitions: 2
metrics: [p@1, auc, hamming]
"""


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("report")
    cfg = tmp / "rep.yaml"
    cfg.write_text(textwrap.dedent(CONFIG))
    out = tmp / "run"
    run_experiment(load_config(cfg), jobs=1, output=str(out), quiet=True, progress=False)
    return out


def invoke(*args):
    return CliRunner().invoke(cli, [str(a) for a in args], obj={})


class _Page(HTMLParser):
    """Tables (as lists of rows of cell texts, with their class) and figure payloads."""

    def __init__(self):
        super().__init__()
        self.tables, self.figures, self.external = [], {}, []
        self._cell = self._fig = None

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag in ("script", "link", "img", "iframe") and (a.get("src") or a.get("href")):
            self.external.append((tag, a.get("src") or a.get("href")))
        if tag == "table":
            self.tables.append({"class": a.get("class", ""), "rows": []})
        elif tag == "tr" and self.tables:
            self.tables[-1]["rows"].append([])
        elif tag in ("td", "th") and self.tables:
            self._cell = []
        elif tag == "script" and a.get("data-figure"):
            self._fig = (a["data-figure"], [])

    def handle_endtag(self, tag):
        if tag in ("td", "th") and self._cell is not None:
            self.tables[-1]["rows"][-1].append("".join(self._cell).strip())
            self._cell = None
        elif tag == "script" and self._fig:
            self.figures[self._fig[0]] = json.loads("".join(self._fig[1]))
            self._fig = None

    def handle_data(self, data):
        if self._cell is not None:
            self._cell.append(data)
        if self._fig is not None:
            self._fig[1].append(data)


def _page(path):
    p = _Page()
    p.feed(path.read_text(encoding="utf-8"))
    return p


def test_report_of_a_run_is_self_contained_and_holds_its_table(run_dir, tmp_path):
    out = tmp_path / "r.html"
    result = invoke("report", run_dir, "-o", out)
    assert result.exit_code == 0, result.output
    assert re.fullmatch(rf"wrote {re.escape(str(out))} \(\d+\.\d MB: 0 table\(s\), 1 run\(s\), "
                        r"\d+ figure\(s\), 0 paper comparison\(s\)\)\n", result.output)
    page = _page(out)
    assert page.external == []                         # nothing fetched from anywhere
    text = out.read_text(encoding="utf-8")
    assert "Plotly.newPlot" in text and text.count("<script") == len(page.figures) + 2
    frame = read_results(run_dir)
    expected = wide_table(frame, split="test")
    results = [t for t in page.tables if "results" in t["class"]]
    assert results[0]["rows"][0] == [str(c) for c in expected.columns]
    assert results[0]["rows"][1:] == [[str(v) for v in r] for r in expected.values.tolist()]
    assert any("▽" in cell for row in results[0]["rows"] for cell in row)  # worse than constant
    failed = next(t for t in page.tables if "failed" in t["class"])
    assert failed["rows"][0] == ["method", "setting", "rep", "status", "message"]
    assert {tuple(r[3:]) for r in failed["rows"][1:]} == {
        ("skipped", "cplst does not support missing labels")}
    assert len(failed["rows"]) - 1 == frame[frame["status"] == "skipped"]["cell_id"].nunique()
    assert "config.resolved.yaml" in text and "rank_ratio:" in text    # the configuration


def test_figures_hold_every_repetition_and_their_means(run_dir, tmp_path):
    out = tmp_path / "r.html"
    assert invoke("report", run_dir, "-o", out).exit_code == 0
    figures = _page(out).figures
    titles = [f["layout"]["title"]["text"] for f in figures.values()]
    assert any("vs k/L" in t for t in titles) and any("vs observed" in t for t in titles)
    assert any("vs l2_reg" in t for t in titles)            # a grid parameter
    frame = read_results(run_dir)
    test = frame[(frame["split"] == "test") & (frame["status"] == "ok")]
    # k/L figure at observed = 100%: p@1 (the first metric, shown first) of LEML-SQ
    fig = next(f for f in figures.values() if "vs k/L" in f["layout"]["title"]["text"]
               and "observed = 100%" in f["layout"]["title"]["text"])
    menu = [b["label"] for b in fig["layout"]["updatemenus"][0]["buttons"]]
    assert menu == ["p@1", "auc", "hamming"]
    leml = test[(test["label"] == "LEML-SQ") & (test["metric"] == "p@1")
                & (test["observed_ratio"] == 1.0)]
    mean = next(t for t in fig["data"] if t["name"] == "LEML-SQ" and t["visible"])
    want = leml.groupby("rank_ratio")["value"].mean() * 100
    assert mean["x"] == [30.0, 60.0]
    assert mean["y"] == pytest.approx(list(want), rel=1e-5)
    points = next(t for t in fig["data"] if t["name"] == "LEML-SQ runs" and t["visible"])
    assert sorted(c[0] for c in points["customdata"]) == sorted(leml["cell_id"])
    assert sorted(points["y"]) == pytest.approx(sorted(leml["value"] * 100), rel=1e-5)
    assert all("rep=" in c[1] for c in points["customdata"])
    names = [t["name"] for t in fig["data"] if t["visible"]]
    assert "BR (l2_reg=0.1) (no k/L)" in names and "BR (l2_reg=10.0) (no k/L)" in names
    flat = next(t for t in fig["data"] if t["name"] == "BR (l2_reg=10.0) (no k/L)"
                and t["visible"])
    br = test[(test["label"] == "BR") & (test["metric"] == "p@1")
              & (test["observed_ratio"] == 1.0) & test["params"].str.contains('"l2_reg":10.0')]
    assert len(br) == 2
    assert flat["x"] == [30.0, 60.0] and flat["y"] == pytest.approx([br["value"].mean() * 100] * 2)
    along = next(f for f in figures.values() if "vs l2_reg" in f["layout"]["title"]["text"])
    names = [t["name"] for t in along["data"]]
    assert "constant (no l2_reg)" in names           # no l2_reg at all
    assert "LEML-SQ" in names                        # its auto l2_reg, chosen per cell


def test_report_of_a_spec_shows_the_paper_table_and_its_run(tmp_path):
    from tests.tables.test_paper_tables import SMALL_ROWS, SPEC, write_results

    res = write_results(tmp_path / "res", SMALL_ROWS)
    spec = tmp_path / "small.yaml"
    spec.write_text(SPEC.format(results=res))
    out = tmp_path / "r.html"
    result = invoke("report", spec, "-o", out)
    assert result.exit_code == 0, result.output
    assert "1 table(s), 1 run(s)" in result.output
    page = _page(out)
    table = page.tables[0]["rows"]
    assert table[0] == ["dataset", "k/L", "LEML-SQ", "BCS", "CPLST", "BR-LR"]
    assert table[2] == ["", "40%", "58.00 / 60.99 (-2.99) ▼", "— / 54.63", "— / 58.73",
                        "55.00 / n/p"]
    text = out.read_text(encoding="utf-8")
    assert 'class="num state-worse" data-ours="58" data-published="60.99"' in text
    assert ("2 compared cells: 0 within ±tolerance, 1 better than the paper beyond it ▲, "
            "1 worse beyond it ▼") in text
    assert 'class="num state-better" data-ours="60" data-published="58.33"' in text
    assert '<a href="#run1">its section</a>' in text and 'id="run1"' in text


def test_report_errors_are_one_line(tmp_path):
    result = invoke("report", tmp_path / "nothing")
    assert result.exit_code == 1
    assert result.output == f"Error: {tmp_path / 'nothing'}: file not found; " \
                            "run 'mlx run CONFIG' first\n"
    assert invoke("report").exit_code == 2


CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")

# Records uncaught errors and console.error calls in an attribute the dumped DOM shows.
PROBE = """<script>(function(){var errs=[];function note(m){errs.push(String(m));
document.documentElement.setAttribute('data-errors', JSON.stringify(errs));}
window.addEventListener('error',function(e){note(e.message);});
var orig=console.error;console.error=function(){note([].join.call(arguments,' '));
orig.apply(console,arguments);};})();</script>"""


def _chromium(*args, timeout=120):
    cmd = [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
           "--virtual-time-budget=10000", *args]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout,
                          env={**os.environ, "HOME": os.environ.get("HOME", "/tmp")})


@pytest.mark.browser
@pytest.mark.skipif(CHROMIUM is None, reason="no chromium on PATH (make test-browser "
                                              "installs Debian's chromium)")
def test_report_renders_in_a_headless_browser(run_dir, tmp_path):
    out = tmp_path / "report.html"
    assert invoke("report", run_dir, "-o", out).exit_code == 0
    probed = tmp_path / "probed.html"
    probed.write_text(out.read_text(encoding="utf-8").replace("<head>", "<head>" + PROBE, 1),
                      encoding="utf-8")
    dom = _chromium("--dump-dom", probed.as_uri()).stdout
    n_figures = len(_page(out).figures)
    assert n_figures >= 3
    assert 'data-errors=' not in dom, re.search(r'data-errors="[^"]*"', dom).group(0)
    assert dom.count('class="figure js-plotly-plot"') == n_figures     # Plotly drew each
    assert dom.count('class="main-svg"') >= 2 * n_figures
    assert re.search(r'<span class="shown">\d+ of \d+ rows</span>', dom)   # the script ran
    shot = tmp_path / "report.png"
    done = _chromium("--window-size=1280,1600", f"--screenshot={shot}", out.as_uri())
    assert shot.exists() and shot.stat().st_size > 20000, done.stderr[-2000:]
    keep = os.environ.get("MLX_SCREENSHOT")
    if keep:
        shutil.copy(shot, keep)


def test_report_of_a_spec_without_a_paper(tmp_path):
    from tests.tables.test_own_tables import _spec

    spec = _spec(tmp_path)
    out = tmp_path / "r.html"
    result = invoke("report", spec, "-o", out)
    assert result.exit_code == 0, result.output
    assert "1 table(s), 2 run(s)" in result.output
    rows = _page(out).tables[0]["rows"]
    assert rows[0] == ["method", "scene", "yeast"]
    assert rows[3] == ["NEW", "77.67 ± 2.52 ↑", "70.00 ± 1.00 ↓"]
    text = out.read_text(encoding="utf-8")
    assert "<strong>77.67 ± 2.52</strong> ↑" in text


def test_lead_sections_come_first_and_are_in_the_contents(run_dir, tmp_path):
    from mlx.report import write_report

    lead = [("Across data sets", "<p>ranks <b>here</b></p>"), ("Second", "<p>two</p>")]
    stats = write_report([run_dir], tmp_path / "r.html", title="T", lead=lead)
    text = (tmp_path / "r.html").read_text(encoding="utf-8")
    assert stats["runs"] == 1
    first = text.index('<section class="lead-section" id="lead1"><h2>Across data sets</h2>\n'
                       '<p>ranks <b>here</b></p></section>')
    assert first < text.index('<section class="lead-section" id="lead2"><h2>Second</h2>')
    assert text.index('id="lead2"') < text.index('id="run1"')
    assert ('<nav><ul><li><a href="#lead1">Across data sets</a></li><li><a href="#lead2">'
            'Second</a></li><li><a href="#run1">') in text
