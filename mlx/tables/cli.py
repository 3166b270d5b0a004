"""Commands for tables and figures: ``table``, ``compare``, ``plot``, ``results-doc``.

They are added to the ``mlx`` group in :mod:`mlx.cli`, which turns
:class:`~mlx.errors.MlxError` into one-line ``Error: ...`` messages.
"""

from __future__ import annotations

import shlex
from pathlib import Path

import click

from mlx.tables.units import units_option

__all__ = ["table", "compare", "plot", "results_doc", "report"]

DEFAULT_TABLES_DIR = "results/tables"


def _is_spec(target: str) -> bool:
    return Path(target).suffix.lower() in (".yaml", ".yml")


PAIRED_HELP = ("test method A against method B (result labels), paired by repetition "
               "on the test split: mean difference, paired t-test and Wilcoxon signed-rank "
               "p-values per dataset, metric and setting (every sweep axis); repetitions of one "
               "draw count once (n/a below 2); printed, and written to paired-A-vs-B.md/.csv")


def _paired(frame, pair: str | None, source: str):
    """The paired comparison asked for with --paired (None without it)."""
    if not pair:
        return None
    from mlx.tables.paired import paired_comparison, parse_pair

    return paired_comparison(frame, *parse_pair(pair), source=source)


def _echo_paired(comparison, out_dir) -> None:
    from mlx.tables.paired import write_paired

    written = write_paired(comparison, out_dir)
    click.echo(written["markdown"])
    click.echo(f"wrote {', '.join(str(p) for p in written['paths'].values())}", err=True)


def _command_line(*words) -> str:
    """The command as a user would type it (recorded with the rendered table)."""
    return " ".join(["mlx"] + [shlex.quote(str(w)) for w in words if w is not None])


@click.command()
@click.argument("target", type=click.Path())
@click.argument("overrides", nargs=-1, metavar="[KEY.PATH=VALUE]...")
@click.option("--split", default=None,
              help="Results mode: which split's wide table (default: all).")
@click.option("-o", "--output-dir", type=click.Path(file_okay=False), default=None,
              help=f"Spec mode: directory for <name>.md/.csv/.tex/.json "
                   f"(default: {DEFAULT_TABLES_DIR}).")
@click.option("--check", is_flag=True,
              help="Spec mode: only report what is missing (configs, methods, data) to produce "
                   "the table here; exit 0 when ready, 3 when something is missing.")
@click.option("--list-configs", is_flag=True,
              help="Spec mode: print the spec's config files, one per line, and exit.")
@click.option("--paired", metavar="A,B", default=None,
              help=f"Results mode: also {PAIRED_HELP} in the results directory.")
@units_option
@click.pass_context
def table(ctx, target, overrides, split, output_dir, check, list_configs, paired, percent):
    """Render a paper table from a spec, or re-render a run's own table.

    TARGET is a table spec (configs/tables/NAME.yaml): our results beside the
    published numbers, written to results/tables/NAME.{md,csv,tex} and printed as
    Markdown. Or TARGET is a results directory or results.csv: its wide tables are
    re-rendered (table.md, table.csv in that directory); with --paired A,B a paired
    test of method A against method B follows. KEY.PATH=VALUE arguments override keys of
    a spec, as for 'mlx run'.
    """
    if overrides and not _is_spec(target):
        raise click.UsageError("KEY.PATH=VALUE overrides apply to a table spec (a .yaml file), "
                               "not to results")
    from mlx.cli import _overrides

    overrides = _overrides(overrides)
    if _is_spec(target):
        if split:
            raise click.UsageError("--split applies to a results directory, not to a table spec")
        if paired:
            raise click.UsageError("--paired applies to a results directory (or 'mlx compare'), "
                                   "not to a table spec")
        if percent is not None:
            raise click.UsageError("--percent/--fraction apply to a results directory; a spec "
                                   "sets its units ('percent: true' or its metrics' 'unit')")
        _table_spec(ctx, target, output_dir, check, list_configs, overrides)
        return
    if output_dir or check or list_configs:
        raise click.UsageError("--output-dir, --check and --list-configs apply to a table spec "
                               "(a .yaml file)")
    from mlx.runner.results import read_results, render_tables

    frame = read_results(target)
    comparison = _paired(frame, paired, str(target))   # test rows, whatever --split says
    if split:
        frame = frame[frame["split"].isin([split]) | (frame["status"] != "ok")]
    out = Path(target) if Path(target).is_dir() else Path(target).parent
    title = str(frame["experiment"].iloc[0]) if len(frame) else ""
    from mlx.tables.units import run_units

    click.echo(render_tables(frame, out, title=title, percent=run_units(out, percent)))
    if comparison is not None:
        _echo_paired(comparison, out)


def _table_spec(ctx, path, output_dir, check, list_configs, overrides=()):
    from mlx.tables.build import build_table, read_sources
    from mlx.tables.own import is_own_spec
    from mlx.tables.render import write_table
    from mlx.tables.spec import check_spec, load_spec
    from mlx.validation import read_yaml

    raw = read_yaml(path, empty_hint="a table spec needs at least 'paper', 'series' and "
                                     "'metrics'")
    if overrides:
        from mlx.overrides import apply_overrides

        raw = apply_overrides(raw, overrides, str(path))
    if is_own_spec(raw):
        _own_table(ctx, path, raw, output_dir, check, list_configs)
        return
    if list_configs:
        for c in load_spec(path, require_configs=False, overrides=overrides).configs:
            click.echo(c)
        return
    if check:
        spec = load_spec(path, require_configs=False, overrides=overrides)
        missing = check_spec(spec)
        n = len(spec.configs)
        _check_result(ctx, spec.name, missing, f"{path}: ready ({n} config{'s' if n != 1 else ''})")
        return
    spec = load_spec(path, overrides=overrides)
    rendered = build_table(spec, read_sources(spec))
    cmd = _command_line("table", *(("-o", output_dir) if output_dir else ()), path, *overrides)
    result = write_table(rendered, output_dir or DEFAULT_TABLES_DIR, command=cmd)
    click.echo(result["markdown"])
    click.echo(f"wrote {', '.join(str(p) for k, p in result['paths'].items() if k != 'json')}",
               err=True)


def _check_result(ctx, name: str, missing: list, ready: str) -> None:
    """``--check``: the ready line (exit 0), or what is missing (exit 3)."""
    if not missing:
        click.echo(ready)
        return
    click.echo(f"{name}: cannot be produced here yet:", err=True)
    for line in missing:
        click.echo(f"  - {line}", err=True)
    ctx.exit(3)


def _own_table(ctx, path, raw, output_dir, check, list_configs):
    """A spec without a paper: one's own runs side by side (mlx.tables.own)."""
    from mlx.tables.own import build_own, load_own_spec, read_own_sources, write_own

    spec = load_own_spec(path, raw)
    if list_configs:
        for c in spec.configs:
            click.echo(c)
        return
    sources = read_own_sources(spec)
    if check:
        missing = [f"{s.given}: not run yet (no {s.results}/results.csv)" for s in sources
                   if s.frame is None]
        n = len(sources)
        _check_result(ctx, spec.name, missing, f"{path}: ready ({n} source{'s' if n != 1 else ''})")
        return
    cmd = _command_line("table", *(("-o", output_dir) if output_dir else ()), path)
    result = write_own(build_own(spec, sources), output_dir or DEFAULT_TABLES_DIR, command=cmd)
    click.echo(result["markdown"])
    click.echo(f"wrote {', '.join(str(p) for k, p in result['paths'].items() if k != 'json')}",
               err=True)


@click.command()
@click.argument("results", type=click.Path())
@click.option("--paper", required=True, help="Paper to compare with: leml, mom, lsvv, similarity.")
@click.option("--table", "tables", multiple=True,
              help="Only these published tables (repeatable), e.g. --table 6.")
@click.option("--metric", "metrics", multiple=True, help="Only these metrics (repeatable).")
@click.option("-o", "--output-dir", type=click.Path(file_okay=False), default=None,
              help="Also write compare-PAPER.md/.csv/.tex/.json to this directory.")
@click.option("--paired", metavar="A,B", default=None,
              help=f"Also {PAIRED_HELP} in --output-dir, else in the results directory.")
@units_option
def compare(results, paper, tables, metrics, output_dir, paired, percent):
    """Compare any results directory (or results.csv) with a paper's published numbers.

    Rows are matched automatically by dataset, method (result label such as LEML-SQ,
    else method and its loss parameter), metric, k/L or k, observed and labelled ratio (an
    axis with several values becomes a row axis).
    """
    from mlx.runner.results import read_results
    from mlx.tables.build import Source, build_table
    from mlx.tables.compare import compare_spec
    from mlx.tables.render import render_markdown, write_table

    frame = read_results(results)
    comparison = _paired(frame, paired, str(results))
    spec, notes = compare_spec(frame, paper, tables=list(tables) or None,
                               metrics=list(metrics) or None, source=str(results))
    run_dir = Path(results) if Path(results).is_dir() else Path(results).parent
    from mlx.tables.units import run_units

    percent = run_units(run_dir, percent)
    if percent is not None:
        import dataclasses

        from mlx.tables.units import in_unit

        spec = dataclasses.replace(spec, metrics=tuple(in_unit(m, percent) for m in spec.metrics))
    src = Source(str(results), "results", run_dir, frame, _manifest(run_dir))
    rendered = build_table(spec, [src])
    if output_dir:
        words = ["compare", results, "--paper", paper]
        for t in tables:
            words += ["--table", t]
        for m in metrics:
            words += ["--metric", m]
        if percent is not None:
            words.append("--percent" if percent else "--fraction")
        md = write_table(rendered, output_dir, command=_command_line(*words, "-o", output_dir)
                         )["markdown"]
    else:
        md = render_markdown(rendered)
    click.echo(md)
    if comparison is not None:
        _echo_paired(comparison, output_dir or run_dir)
    for note in notes:
        click.echo(f"Note: {note}", err=True)


def _manifest(run_dir: Path):
    import json

    try:
        return json.loads((run_dir / "manifest.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


@click.command()
@click.argument("target", type=click.Path())
@click.option("--x", "x", default=None, metavar="AXIS",
              help="Horizontal axis (required for results): rank_ratio (k/L), observed_ratio, "
                   "labelled_ratio, rank (K) or param:NAME (parameter NAME of the params or "
                   "selected column). Logarithmic when positive values span more than 20x "
                   "(never for rank_ratio and observed_ratio).")
@click.option("--metric", default=None, help="Metric on the vertical axis, e.g. p@1 "
                                              "(required for results).")
@click.option("--by", "by", multiple=True, metavar="PARAM",
              help="One figure per value of parameter PARAM, e.g. --by similarity "
                   "(repeatable; rows without PARAM appear in every figure).")
@click.option("--paper", default="auto", show_default=True,
              help="Published values to overlay (dashed): a paper name, 'auto' (the paper "
                   "matching most points) or 'none'.")
@click.option("--dataset", "datasets", multiple=True, help="Only these datasets (repeatable).")
@click.option("-o", "--output-dir", type=click.Path(file_okay=False), default=None,
              help="Directory for the PNG and PDF files (default: <results>/figures, or "
                   f"{DEFAULT_TABLES_DIR} for a spec).")
@units_option
def plot(target, x, metric, by, paper, datasets, output_dir, percent):
    """Plot a metric against k/L, a ratio, the rank K or a parameter, one line per label.

    TARGET is a results directory or results.csv (then --x and --metric are needed), or a
    table spec, whose 'figures' are drawn from its results. Each line is the mean over
    repetitions, with ±1 sd error bars from two repetitions on. Published values, where
    the paper has that axis, are drawn as dashed lines with open markers in the method's
    colour.
    """
    from mlx.tables.plot import plot_results, plot_spec

    if _is_spec(target):
        if x or metric or by:
            raise click.UsageError("--x, --metric and --by apply to results; a spec lists its "
                                   "figures")
        from mlx.tables.spec import load_spec

        paths, notes = plot_spec(load_spec(target), output_dir or DEFAULT_TABLES_DIR,
                                 percent=percent)
        for note in notes:
            click.echo(f"Note: {note}", err=True)
    else:
        if not x or not metric:
            raise click.UsageError("plotting results needs --x and --metric")
        from mlx.runner.results import read_results
        from mlx.tables.units import run_units

        frame = read_results(target)
        run_dir = Path(target) if Path(target).is_dir() else Path(target).parent
        percent = run_units(run_dir, percent)
        paths = plot_results(frame, x=x, metric=metric, out_dir=output_dir or run_dir / "figures",
                             paper=paper, datasets=list(datasets) or None, by=by,
                             source=str(target), percent=percent)
    for p in paths:
        click.echo(str(p))


@click.command("results-doc")
@click.option("--tables-dir", type=click.Path(file_okay=False), default=DEFAULT_TABLES_DIR,
              show_default=True, help="Where 'mlx table SPEC' wrote the rendered tables.")
@click.option("-o", "--output", type=click.Path(dir_okay=False), default="docs/RESULTS.md",
              show_default=True, help="The document to write.")
def results_doc(tables_dir, output):
    """Write docs/RESULTS.md from the rendered paper tables and their runs' manifests."""
    from mlx.tables.results_doc import write_results_doc

    path, n = write_results_doc(tables_dir, output)
    click.echo(f"wrote {path} ({n} table{'s' if n != 1 else ''})")


@click.command()
@click.argument("targets", nargs=-1, required=True, type=click.Path())
@click.option("-o", "--output", type=click.Path(dir_okay=False), default=None,
              help="The HTML file to write (default: report.html in the first results "
                   f"directory, or {DEFAULT_TABLES_DIR}/report.html for table specs).")
@click.option("--title", default=None, help="The page title (default: from the targets).")
@units_option
def report(targets, output, title, percent):
    """Write one self-contained HTML page for runs and paper tables.

    TARGETS are results directories (or results.csv files) and table specs
    (configs/tables/NAME.yaml). The page holds each run's configuration and manifest,
    sortable and filterable result tables, interactive figures (every metric against
    k/L or K, the observed and labelled ratios and grid parameters, each repetition as a
    point), the comparison with a paper where it applies, and the skipped and failed
    cells with their reasons. It needs no network: the scripts are written into it.
    """
    from mlx.report import write_report

    if output is None:
        first = Path(targets[0])
        output = (Path(DEFAULT_TABLES_DIR) / "report.html" if _is_spec(targets[0])
                  else (first if first.is_dir() else first.parent) / "report.html")
    stats = write_report(list(targets), output, title=title, percent=percent)
    click.echo(f"wrote {stats['path']} ({stats['bytes'] / 1e6:.1f} MB: {stats['specs']} "
               f"table(s), {stats['runs']} run(s), {stats['figures']} figure(s), "
               f"{stats['comparisons']} paper comparison(s))")
