"""One unit convention: --percent / --fraction mean the same in table, compare, plot and
report; without them each command keeps its default."""

from matplotlib.figure import Figure

from mlx.tables.spec import metric_style
from mlx.tables.units import in_unit
from tests.tables.test_paper_tables import COMPARE_ROWS, SMALL_ROWS, invoke, write_results


def test_in_unit_converts_value_format_and_tolerance():
    p1 = metric_style("p@1")                                # the papers' unit: percent
    assert (p1.unit, p1.fmt, p1.tolerance) == ("%", ".2f", 1.0)
    frac = in_unit(p1, False)
    assert (frac.unit, frac.fmt, frac.tolerance, frac.factor) == ("fraction", ".4f", 0.01, 1.0)
    assert in_unit(p1, None) is p1
    auc = in_unit(metric_style("auc"), True)
    assert (auc.unit, auc.factor, auc.tolerance) == ("%", 100.0, 1.0)
    mse = metric_style("mse")
    assert in_unit(mse, True) is mse and in_unit(mse, False) is mse


def test_table_compare_and_plot_follow_the_same_choice(tmp_path, monkeypatch):
    res = write_results(tmp_path / "res", COMPARE_ROWS)
    default = invoke("table", res)
    assert default.exit_code == 0 and "0.6000" in default.stdout
    assert invoke("table", res, "--fraction").stdout == default.stdout
    pct = invoke("table", res, "--percent")
    assert pct.exit_code == 0, pct.output
    assert "p@1 (%)" in pct.stdout and "60.00" in pct.stdout and "0.6000" not in pct.stdout

    r = invoke("compare", res, "--paper", "leml", "--fraction")
    assert r.exit_code == 0, r.output
    assert "| bibtex | 20% | 0.6000 / 0.5833 (+0.0167) ▲ |" in r.stdout
    r = invoke("compare", res, "--paper", "leml", "--percent")
    assert "| bibtex | 20% | 60.00 / 58.33 (+1.67) ▲ |" in r.stdout

    seen = []
    save = Figure.savefig
    monkeypatch.setattr(Figure, "savefig", lambda fig, path, *a, **k: (
        seen.append((str(path), fig.axes[0].get_ylabel(),
                     [tuple(ln.get_ydata()) for ln in fig.axes[0].get_lines()[:1]])),
        save(fig, path, *a, **k))[1])
    for flag in ("--fraction", "--percent"):
        r = invoke("plot", res, "--x", "rank_ratio", "--metric", "p@1", "--paper", "none",
                   "-o", tmp_path / flag, flag)
        assert r.exit_code == 0, r.output
    labels = {p.split("/")[-2]: y for p, y, _ in seen if p.endswith(".png")}
    assert labels == {"--fraction": "top-1 accuracy", "--percent": "top-1 accuracy (%)"}


def test_units_option_is_refused_for_a_spec(tmp_path):
    res = write_results(tmp_path / "res", SMALL_ROWS)
    spec = tmp_path / "s.yaml"
    spec.write_text(f"title: T\npaper: leml\ntables: [6]\nresults: [{res}]\nseries: [LEML-SQ]\n"
                    "metrics: [p@1]\naxes: {dataset: [bibtex], observed: [1.0]}\n")
    r = invoke("table", spec, "--percent")
    assert r.exit_code == 2
    assert "--percent/--fraction apply to a results directory" in r.output


def test_the_run_config_chooses_once_for_run_table_compare_plot_and_report(tmp_path,
                                                                          monkeypatch):
    import textwrap

    from mlx.config import load_config
    from mlx.runner.experiment import run_experiment

    cfg = tmp_path / "c.yaml"
    cfg.write_text(textwrap.dedent("""
        name: u
        dataset:
          synthetic: {n_samples: 80, n_features: 10, n_labels: 5, rank: 2, seed: 4}
        methods:
          - {name: br, label: BR, params: {loss: squared}}
        metrics: [p@1, hamming]
        units: percent
        """))
    out = tmp_path / "run"
    summary = run_experiment(load_config(cfg), jobs=1, output=str(out), quiet=True,
                             progress=False)
    assert "| method | p@1 (%) | hamming (%) |" in summary.table_md
    assert "units: percent" in (out / "config.resolved.yaml").read_text()
    assert "p@1 (%)" in invoke("table", out).stdout           # re-rendered the same way
    assert "p@1 (%)" not in invoke("table", out, "--fraction").stdout   # the option wins
    seen = []
    save = Figure.savefig
    monkeypatch.setattr(Figure, "savefig", lambda fig, path, *a, **k: (
        seen.append(fig.axes[0].get_ylabel()), save(fig, path, *a, **k))[1])
    r = invoke("plot", out, "--x", "observed_ratio", "--metric", "hamming", "--paper", "none")
    assert r.exit_code == 0, r.output
    assert seen[0] == "Hamming loss (%)"                     # the papers' unit is a fraction
    page = tmp_path / "r.html"
    assert invoke("report", out, "-o", page).exit_code == 0
    assert "p@1 (%)" in page.read_text(encoding="utf-8")


def test_bad_units_key_is_one_line(tmp_path):
    cfg = tmp_path / "c.yaml"
    cfg.write_text("name: u\ndataset: {synthetic: {n_samples: 50, n_features: 5, n_labels: 3, "
                   "rank: 1}}\nmethods: [{name: br}]\nunits: percents\n")
    r = invoke("validate", cfg)
    assert r.exit_code == 2
    assert r.output == (f"Error: {cfg}: units: must be 'percent' or 'fraction' (how tables, "
                        "compare, plot and report show [0, 1] metrics). Got 'percents' "
                        "instead.\n")
