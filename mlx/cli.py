"""The ``mlx`` command line. The only place where errors become exit codes.

Exit status: 0 success, 1 a failed run (bad data, a cell that errored),
2 bad usage or configuration. Errors print one line ``Error: ...``; ``--debug``
shows the traceback instead.
"""

from __future__ import annotations

import logging
import os
import re
import sys

import click

from mlx.errors import Interrupted, MlxError
from mlx.namecheck import clash_message, own_version

log = logging.getLogger("mlx")


# Control characters and line separators in a message (from a file's bytes, a path or a
# config value) would break the one-line error or the terminal: shown escaped.
_CONTROL = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029]")


class _UserError(click.ClickException):
    def __init__(self, message: str, exit_code: int):
        super().__init__(_CONTROL.sub(
            lambda m: m.group().encode("unicode_escape").decode("ascii"), message))
        self.exit_code = exit_code


class MlxGroup(click.Group):
    """A click group that turns :class:`~mlx.errors.MlxError` into one-line errors."""

    def invoke(self, ctx):
        try:
            return super().invoke(ctx)
        except MlxError as exc:
            if ctx.obj and ctx.obj.get("debug"):
                raise
            raise _UserError(str(exc), exc.exit_code) from None
        except (click.ClickException, click.exceptions.Exit, click.exceptions.Abort):
            raise
        except BrokenPipeError:
            # The reader went away (`mlx methods | head -3`): stop quietly, as `cat` would.
            _silence_stdout()
            ctx.exit(141)
        except Exception as exc:  # a bug: still one line for users, the traceback with --debug
            if ctx.obj and ctx.obj.get("debug"):
                raise
            first = (str(exc).splitlines() or [""])[0]
            raise _UserError(f"internal error: {type(exc).__name__}: {first} "
                             f"(run with --debug for the traceback)", 1) from None
        except Interrupted as exc:
            if ctx.obj and ctx.obj.get("debug"):
                raise
            click.echo(f"mlx: {exc}", err=True)
            ctx.exit(exc.exit_code)
        except KeyboardInterrupt:
            if ctx.obj and ctx.obj.get("debug"):
                raise
            click.echo("mlx: interrupted", err=True)
            ctx.exit(130)


def _silence_stdout() -> None:
    """Point stdout at /dev/null so that flushing it at exit cannot fail again."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):  # pragma: no cover - stdout without a file descriptor
        pass


def _setup_logging(verbose: int) -> None:
    level = logging.WARNING if verbose == 0 else logging.INFO if verbose == 1 else logging.DEBUG
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("%(levelname)s %(name)s: %(message)s"))
    root = logging.getLogger("mlx")
    root.handlers[:] = [handler]
    root.setLevel(level)


@click.group(cls=MlxGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(own_version(), prog_name="mlx")
@click.option("--debug", is_flag=True, help="Show full tracebacks instead of one-line errors.")
@click.option("-v", "--verbose", count=True, help="More log output (-vv for debug).")
@click.option("--max-line-bytes", metavar="SIZE", default=None,
              help="Longest line a data file may have, e.g. 64M (default 16M; also "
                   "MLX_MAX_LINE_BYTES).")
@click.option("--max-read-memory", metavar="SIZE", default=None,
              help="Memory one data file's read may take, e.g. 8G (default: 80% of the "
                   "available memory; also MLX_MAX_READ_MEMORY).")
@click.pass_context
def cli(ctx, debug, verbose, max_line_bytes, max_read_memory):
    """mlx: reproducible multi-label and vector-valued learning experiments.

    Typical use: `mlx validate configs/bibtex.yaml`, then `mlx run configs/bibtex.yaml`.
    """
    ctx.ensure_object(dict)
    ctx.obj["debug"] = debug
    _setup_logging(2 if debug else verbose)
    for option, value, var in (("--max-line-bytes", max_line_bytes, "MLX_MAX_LINE_BYTES"),
                               ("--max-read-memory", max_read_memory, "MLX_MAX_READ_MEMORY")):
        if value is not None:
            from mlx.data.lineparse import parse_size  # numpy and scipy: only when given

            try:
                parse_size(value)
            except ValueError:
                raise click.BadParameter(f"{value!r} is not a size; give bytes with an "
                                         f"optional K, M, G or T suffix, e.g. 64M",
                                         param_hint=option) from None
            os.environ[var] = value      # read by the readers, here and in worker processes


# ----------------------------------------------------------------------------- run / validate
def _overrides(args) -> tuple:
    """Check command-line ``key.path=value`` overrides (parsed again when applied)."""
    from mlx.overrides import EXAMPLE, is_override, parse_override

    for arg in args:
        if not is_override(arg):
            raise click.UsageError(f"unexpected argument {arg!r}: after the config, give "
                                   f"overrides as key.path=value ({EXAMPLE})")
        parse_override(arg)
    return tuple(args)


@cli.command()
@click.argument("config", type=click.Path(dir_okay=False))
@click.argument("overrides", nargs=-1, metavar="[KEY.PATH=VALUE]...")
@click.option("-j", "--jobs", type=click.IntRange(min=1), default=None,
              help="Worker processes (default: runner.jobs, else the number of CPU cores).")
@click.option("--force", is_flag=True, help="Recompute cells that already finished.")
@click.option("-o", "--output", type=click.Path(), default=None,
              help="Output directory (default: the config's 'output', else results/<name>).")
@click.option("--only", default=None, metavar="METHOD",
              help="Run only the cells of this method name or label.")
@click.option("-q", "--quiet", is_flag=True, help="No per-cell lines or progress bar.")
@click.option("--wait", is_flag=True,
              help="If another run holds the output directory, wait for it instead of failing.")
@click.option("--backend", type=click.Choice(["local", "dask"]), default=None,
              help="Where cells run: 'local' processes (default) or a Dask cluster "
                   "(default: the config's runner.backend).")
@click.option("--scheduler", default=None, metavar="ADDRESS",
              help="Dask scheduler, e.g. tcp://host:8786 (default: runner.scheduler; none: a "
                   "local Dask cluster of --jobs workers).")
@click.option("--ship-data/--no-ship-data", default=None,
              help="Send the data to the Dask workers once instead of having them read it "
                   "from their own data path (default: runner.ship_data, else no).")
@click.option("--scheduler-timeout", type=click.FloatRange(min=0.1), default=10.0,
              show_default=True, help="Seconds to wait for the Dask scheduler to answer.")
@click.option("--save-models", is_flag=True,
              help="Keep each cell's fitted model in <output>/models/<cell_id>.joblib "
                   "(mlx.load_model(RESULTS, cell_id)); cells finished without one rerun.")
def run(config, overrides, jobs, force, output, only, quiet, wait, backend, scheduler,
        ship_data, scheduler_timeout, save_models):
    """Run every cell of CONFIG and write results under results/<name>/.

    Finished cells are cached: a killed run resumes where it stopped. KEY.PATH=VALUE
    arguments override config keys (values are YAML), e.g. `seed=3` or
    `methods[1].params.l2_reg=1`; they are checked as the file is.
    """
    from mlx.config import load_config
    from mlx.runner.experiment import run_experiment

    cfg = load_config(config, _overrides(overrides))
    summary = run_experiment(cfg, jobs=jobs, force=force, output=output, only=only,
                             quiet=quiet, progress=not quiet and sys.stderr.isatty(), wait=wait,
                             backend=backend, scheduler=scheduler, ship_data=ship_data,
                             scheduler_timeout=scheduler_timeout, save_models=save_models)
    click.echo(summary.table_md)
    counts = ", ".join(f"{n} {s}" for s, n in sorted(summary.counts.items()))
    click.echo(f"{summary.n_cells} cells ({counts}); results in {summary.output}/", err=True)
    if summary.errors:
        cell, rec = summary.errors[0]
        raise MlxError(f"{len(summary.errors)} cell(s) failed; first: {cell.describe()}: "
                       f"{rec['message']}")


@cli.command()
@click.argument("configs", nargs=-1, required=True, metavar="CONFIGS... [KEY.PATH=VALUE]...")
def validate(configs):
    """Check CONFIGS (keys, types, ranges, names, parameters) and count their cells.

    KEY.PATH=VALUE arguments override keys of every config, as for 'mlx run'.
    """
    from mlx.config import load_config
    from mlx.data.catalog import find_files
    from mlx.overrides import is_override
    from mlx.runner.preflight import preflight, skipped_entries
    from mlx.runner.sweep import expand

    overrides = _overrides([a for a in configs if is_override(a) and not os.path.isfile(a)])
    configs = [a for a in configs if a not in overrides]
    if not configs:
        raise click.UsageError("give at least one config file")
    for path in configs:
        cfg = load_config(path, overrides)
        note = ""
        missing = find_files(cfg.dataset)
        # A registered dataset can still be fetched; a user's own file cannot: a missing one
        # fails here exactly as `mlx run` would.
        if missing and cfg.dataset.kind == "registry":
            note = f"; data not found yet: {', '.join(missing)} (run 'mlx datasets fetch " \
                   f"{cfg.dataset.name}' or set MLX_DATA_PATH); data checks not run"
        else:  # cells keyed and seeded by the files' content, as `mlx run` does
            from dataclasses import replace

            from mlx.data.catalog import identify

            cfg = replace(cfg, dataset=identify(cfg.dataset))
        cells = expand(cfg)
        preflight(cfg, cells, load=not note)
        click.echo(f"{path}: ok, {len(cells)} cells{note}")
        for label, reason in skipped_entries(cells):
            click.echo(f"{path}: {label} will be skipped: {reason}")


@cli.command()
@click.argument("results", type=click.Path())
@click.option("--metrics", "metrics", required=True, metavar="NAMES",
              help="Comma-separated metric names, e.g. ndcg@3,auc (see 'mlx metrics').")
def evaluate(results, metrics):
    """Add metrics to a finished run from its stored scores, without refitting.

    RESULTS is a results directory (or its results.csv). Each finished cell's stored score
    summary gives the rows of NAMES exactly as a run would; results.csv and the tables are
    rewritten.
    """
    from mlx.runner.evaluate import evaluate_results

    done = evaluate_results(results, metrics)
    click.echo(done["table_md"])
    click.echo(f"{', '.join(done['metrics'])}: {done['rows']} rows from the stored scores of "
               f"{done['cells']} cells; results in {done['output']}/", err=True)


# ----------------------------------------------------------------------------- listings
@cli.command("methods")
@click.argument("name", required=False)
def methods_cmd(name):
    """List the available methods and their parameters, or describe method NAME.

    With NAME: its tasks, whether it uses a rank and supports missing labels, and for each
    parameter its default, constraint and meaning.
    """
    from mlx.methods import METHODS

    if name is not None:
        _describe_method(METHODS.get(name))
        return
    for key in METHODS.names():
        cls = METHODS.get(key)
        doc = (cls.__doc__ or "").strip().splitlines()[0] if cls.__doc__ else ""
        params = ", ".join(p for p in cls._param_names() if p not in ("random_state", "task"))
        click.echo(f"{key:10s} {doc}")
        click.echo(f"{'':10s} tasks: {', '.join(cls.tasks)}")
        click.echo(f"{'':10s} parameters: {params or '(none)'}")


_RUNNER_SETS = {"rank": "from sweep.rank_ratio or sweep.rank",
                "random_state": "from the config's seed", "task": "from the dataset's task"}


def _describe_method(cls) -> None:
    import inspect

    from mlx.docstrings import parameter_meanings
    from mlx.methods.base import _describe

    def yes(flag):
        return "yes" if flag else "no"

    doc = (cls.__doc__ or "").strip().splitlines()
    click.echo(f"{cls.name}: {doc[0] if doc else ''}".rstrip())
    click.echo(f"tasks: {', '.join(cls.tasks)}")
    click.echo(f"uses_rank: {yes(cls.uses_rank)}")
    click.echo(f"supports_missing_labels: {yes(cls.supports_missing_labels)}")
    meanings = parameter_meanings(cls.__doc__)
    params = [p for p in inspect.signature(cls.__init__).parameters.values()
              if p.name != "self" and p.kind not in (p.VAR_KEYWORD, p.VAR_POSITIONAL)]
    click.echo("parameters:" if params else "parameters: (none)")
    for p in params:
        constraint = " or ".join(_describe(c) for c in cls._parameter_constraints.get(p.name, ()))
        if p.name in _RUNNER_SETS and (p.name != "rank" or cls.uses_rank):
            default = f"set by the runner ({_RUNNER_SETS[p.name]})"
        elif p.default is p.empty:
            default = "required"
        else:
            default = f"default {p.default!r}"
        click.echo(f"  {p.name}: {'; '.join(x for x in (default, constraint) if x)}")
        if meanings.get(p.name):
            click.echo(f"      {meanings[p.name]}")
    if "multilabel" in cls.tasks and any(
            p.default == "auto" and "range" in _describe(c)
            for p in params for c in cls._parameter_constraints.get(p.name, ())):
        from mlx.methods._auto import FALLBACK_NOTE

        click.echo(FALLBACK_NOTE)


@cli.command("metrics")
def metrics_cmd():
    """List the metric names a config may use."""
    from mlx.metrics import metric_names, parse_metric

    for name in metric_names():
        tasks = ", ".join(sorted(parse_metric(name.replace("<k>", "1")).family.tasks))
        click.echo(f"{name:10s} {tasks}")


@cli.group(cls=MlxGroup)
def datasets():
    """List, describe, fetch and convert benchmark datasets."""


@datasets.command("list")
def datasets_list():
    """List the registered datasets and whether their files are present."""
    from mlx.data.catalog import dataset_info, find_files, list_datasets, resolve_dataset

    rows = [("name", "task", "format", "files")]
    for name in list_datasets():
        entry = dataset_info(name)
        missing = find_files(resolve_dataset(name, source=None))
        state = "present" if not missing else "not present (mlx datasets fetch " + name + ")"
        rows.append((name, entry.get("task", ""), entry.get("format", ""), state))
    widths = [max(len(r[i]) for r in rows) for i in range(3)]   # columns as wide as the longest
    for row in rows:
        click.echo("  ".join(f"{t:{w}s}" for t, w in zip(row, widths)) + "  " + row[3])


_FILE_OPTIONS = {"test": "--test", "n_labels": "--n-labels", "n_features": "--n-features",
                 "xml": "--xml", "task": "--task", "format": "--format", "train": "PATH"}


def _format_help() -> str:
    from mlx.data.formats import formats

    return ", ".join(f"{f.name} ({f.description})" for f in formats())


def _spec_options(command):
    """The options of ``datasets info`` and ``convert`` that describe the data: a registered
    NAME, a data file PATH with --format and its options, or --config."""
    options = [
        click.argument("target", metavar="[NAME|PATH]", required=False),
        click.option("--config", "config", type=click.Path(dir_okay=False), default=None,
                     help="Use the 'dataset:' of this experiment config."),
        click.option("--format", "fmt", metavar="FORMAT", default=None,
                     help="PATH is a data file in this format, read as a config's file spec "
                          f"would be: {_format_help()}."),
        click.option("--test", metavar="PATH", default=None, help="With --format: the test file."),
        click.option("--n-labels", type=int, metavar="N", default=None,
                     help="With --format: the number of labels (arff: the last N attributes; "
                          "libsvm-multilabel)."),
        click.option("--n-features", type=int, metavar="N", default=None,
                     help="With --format: the number of features (libsvm)."),
        click.option("--xml", metavar="PATH", default=None,
                     help="With --format arff: the Mulan XML label list."),
        click.option("--task", metavar="TASK", default=None,
                     help="With --format: the task to read the file as (e.g. ordinal)."),
    ]
    for option in reversed(options):
        command = option(command)
    return command


def _load_target(target, config, fmt, test, n_labels, n_features, xml, task):
    """``(DatasetSpec, [(part, Dataset), ...])`` of ``datasets info`` / ``convert``'s target."""
    from mlx.data.catalog import resolve_dataset
    from mlx.data.registry import list_datasets
    from mlx.errors import ConfigError, UnknownNameError
    from mlx.validation import read_yaml

    file_options = {"test": test, "n_labels": n_labels, "n_features": n_features, "xml": xml,
                    "task": task}
    given = [_FILE_OPTIONS[k] for k, v in file_options.items() if v is not None]
    if config is not None:
        if target is not None or fmt is not None or given:
            raise click.UsageError("--config takes the dataset from the config; give no NAME, "
                                   "PATH or file options with it")
        raw = read_yaml(config, empty_hint="a config needs at least 'name', 'dataset' and "
                                           "'methods'")
        if not isinstance(raw, dict) or "dataset" not in raw:
            raise ConfigError(str(config), None, "missing required key 'dataset'")
        spec = resolve_dataset(raw["dataset"], source=str(config), key_path="dataset")
        return spec, _parts(spec)
    if target is None:
        raise click.UsageError("give a registered dataset NAME, a data file PATH with --format, "
                               "or --config CONFIG")
    if fmt is None:
        if given:
            verb = "describes" if len(given) == 1 else "describe"
            raise click.UsageError(f"{', '.join(given)} {verb} a data file: give its --format "
                                   "too")
        if target not in list_datasets() and os.path.exists(target):
            raise ConfigError(None, None, f"{target} is a file, not a registered dataset; give "
                                          "its --format (and e.g. --n-labels), as in 'mlx "
                                          f"datasets info --format arff --n-labels L {target}'")
        spec = resolve_dataset(target, source=None)
        return spec, _parts(spec)
    node = {"format": fmt, "train": target}
    node.update({k: v for k, v in file_options.items() if v is not None})
    try:
        spec = resolve_dataset(node, source=None, key_path="dataset")
        return spec, _parts(spec)
    except ConfigError as exc:
        # Name the command-line options, not config keys ("--n-labels: must be ...").
        if exc.source is not None or isinstance(exc, UnknownNameError) \
                or not (exc.key_path or "").startswith("dataset"):
            raise
        key = exc.key_path.partition(".")[2]
        raise ConfigError(None, _FILE_OPTIONS.get(key), exc.message) from None


def _parts(spec):
    """(part, Dataset) pairs of a dataset: train and test, or all for unsplit sets."""
    from mlx.data.catalog import load_full, load_split

    if spec.has_split:
        split = load_split(spec)
        return [("train", split.train), ("test", split.test)]
    return [("all", load_full(spec))]


def _describe_spec(spec) -> str:
    if spec.kind == "synthetic":
        params = ", ".join(f"{k}={v}" for k, v in spec.params if k != "task")
        return f"{spec.name}: synthetic {spec.task} data ({params})"
    files = ", ".join(f"{role} {path}" for role, path in spec.files)
    return f"{spec.name}: {spec.format} files ({spec.task}): {files}"


@datasets.command("info")
@_spec_options
def datasets_info(target, config, fmt, test, n_labels, n_features, xml, task):
    """Statistics of a dataset (n, d, L, average features and labels per row).

    The dataset is a registered NAME, a data file PATH read as --format says (e.g. 'mlx
    datasets info --format arff --n-labels 6 scene-train.arff --test scene-test.arff'), or
    the dataset of --config CONFIG.
    """
    from mlx.data.catalog import dataset_info

    spec, parts = _load_target(target, config, fmt, test, n_labels, n_features, xml, task)
    entry = dataset_info(spec.name) if spec.kind == "registry" else {}
    if spec.kind == "registry":
        click.echo(f"{spec.name}: {entry.get('description', '')}".rstrip())
    else:
        click.echo(_describe_spec(spec))
    click.echo(f"{'split':6s} {'n':>8s} {'d':>8s} {'L':>6s} {'avg feats':>10s} {'avg labels':>10s}")
    for part, ds in parts:
        s = ds.stats()
        click.echo(f"{part:6s} {s['n']:8d} {s['d']:8d} {s['L']:6d} "
                   f"{s['avg_features']:10.2f} {s['avg_labels']:10.3f}")
    src = entry.get("source") or {}
    if src:
        click.echo(f"source: {src.get('repository', '')} @ {src.get('commit', '')}; "
                   f"licence: {entry.get('licence', 'not stated')}")


@datasets.command("fetch")
@click.argument("names", nargs=-1, required=True)
@click.option("--dest", type=click.Path(file_okay=False), default=None,
              help="Directory to store the files (default: the user data directory).")
def datasets_fetch(names, dest):
    """Download registered datasets, verifying their checksums."""
    from mlx.data.fetch import fetch

    for name in names:
        paths = fetch(name, dest_dir=dest)
        for p in paths:
            click.echo(f"{name}: {p}")


def _writers():
    from mlx.data.formats import writers

    return writers()


@datasets.command("convert")
@_spec_options
@click.option("--to", "to", type=click.Choice([w.name for w in _writers()]), required=True,
              help="Target format: " + " or ".join(w.description for w in _writers()) + ".")
@click.option("-o", "--out", "out_dir", type=click.Path(), required=True,
              help="Directory for <name>-train.* and <name>-test.*.")
def datasets_convert(target, config, fmt, test, n_labels, n_features, xml, task, to, out_dir):
    """Write a dataset's train and test files in another format.

    The dataset is given as for 'mlx datasets info': a registered NAME, a data file PATH with
    --format and its options, or --config CONFIG.
    """
    from pathlib import Path

    from mlx.runner.output import probe_output, remove_created

    created = probe_output(out_dir)      # before any data are read: fail fast, leave nothing
    try:
        spec, parts = _load_target(target, config, fmt, test, n_labels, n_features, xml, task)
    except BaseException:
        remove_created(created)
        raise
    writer = next(w for w in _writers() if w.name == to)
    for part, ds in parts:
        path = Path(out_dir) / f"{spec.name}-{part}.{writer.extension}"
        writer.write(ds, path)
        click.echo(str(path))


_SYNTH_OPTIONS = {"scale": "--scale", "dims_scale": "--dims-scale", "seed": "--seed"}


def _config_path(path) -> str:
    """How a config names ``path``: relative to the data search path directory holding it
    (found from any config), else absolute."""
    from pathlib import Path

    from mlx.data.paths import search_path

    path = Path(path).resolve()
    for base in search_path():
        try:
            return path.relative_to(Path(base).resolve()).as_posix()
        except ValueError:
            continue
    return str(path)


@datasets.command("synth")
@click.argument("name")
@click.option("--like", type=click.Choice(["eurlex", "nus-wide", "wiki"]), required=True,
              help="Published shape (LEML Table 2) to imitate.")
@click.option("--scale", type=float, default=1.0, show_default=True,
              help="Multiplies the published numbers of train and test rows.")
@click.option("--dims-scale", type=float, default=1.0, show_default=True,
              help="Multiplies the published numbers of features and labels.")
@click.option("--seed", type=int, default=0, show_default=True,
              help="Random seed; the same seed writes the same bytes.")
@click.option("-o", "--out", "out_dir", type=click.Path(file_okay=False), required=True,
              help="Directory for NAME-train.txt and NAME-test.txt.")
def datasets_synth(name, like, scale, dims_scale, seed, out_dir):
    """Write a synthetic XMC-shaped dataset NAME (Extreme Classification Repository format).

    Rows follow the shape statistics of LEML Table 2 for --like (eurlex, nus-wide or wiki),
    with power-law feature and label frequencies and labels planted through a low-rank map
    of the features (mlx/data/xmc_synth/). Prints the 'dataset:' block for a config.
    A request that would not fit in memory or on disk is refused before anything is written.
    """
    from pathlib import Path

    import yaml

    from mlx.data.xmc_synth import check_resources, synth_spec, write_synth
    from mlx.errors import ConfigError
    from mlx.runner.output import probe_output, remove_created

    if not name or any(c in name for c in "/\\") or name.startswith(".") or name != name.strip():
        raise click.UsageError(f"NAME must be a plain file name prefix (no '/', no leading "
                               f"'.'); got {name!r}")
    try:
        spec = synth_spec(like, scale, seed, dims_scale=dims_scale)
    except ConfigError as exc:
        raise ConfigError(None, _SYNTH_OPTIONS.get(exc.key_path, exc.key_path),
                          exc.message) from None
    check_resources(spec, purpose="files", out_dir=out_dir)
    created = probe_output(out_dir)
    try:
        written = write_synth(spec, out_dir, name, check=False)
    except BaseException:
        remove_created(created)
        raise
    click.echo(f"{name}: {spec.describe()}")
    for info in written.values():
        click.echo(f"{info['path']}: {info['n']} rows, {info['avg_features']:.2f} features "
                   f"and {info['avg_labels']:.2f} labels per row")
    block = {"name": name, "format": "xc", "train": _config_path(written["train"]["path"]),
             "test": _config_path(written["test"]["path"])}
    flow = yaml.safe_dump(block, default_flow_style=True, sort_keys=False, width=10**6).strip()
    click.echo(f"dataset: {flow}")
    if not Path(block["train"]).is_absolute():
        click.echo("(paths relative to the data search path: MLX_DATA_PATH, ./datasets or "
                   "~/.cache/mlx/datasets)", err=True)


def _add_table_commands() -> None:
    from mlx.tables.cli import compare, plot, report, results_doc, table

    for command in (table, compare, plot, results_doc, report):
        cli.add_command(command)


_add_table_commands()


def main(argv=None):
    """Console-script entry point."""
    clash = clash_message()
    if clash:
        click.echo(f"Error: {clash}", err=True)
        sys.exit(2)
    cli.main(args=argv, prog_name="mlx", obj={})


if __name__ == "__main__":  # pragma: no cover
    main()
