"""Experiment configuration: YAML -> validated, frozen dataclasses.

Every problem is reported as a :class:`~mlx.errors.ConfigError` naming the file
and the dotted key path, what was wrong and what would be valid. Method
parameters are checked here, by instantiating each method and running its own
parameter validation, so a typo fails in a second rather than hours into a sweep.

See the README's "Config reference" for every key.
"""

from __future__ import annotations

import copy
import json
import os
from dataclasses import dataclass, field
from typing import Any

from mlx.errors import ConfigError, MlxError, suggest
from mlx.validation import (
    as_bool,
    as_float,
    as_int,
    as_list,
    as_ratio,
    as_str,
    check_keys,
    read_yaml,
    shown,
    type_name,
)

__all__ = ["Config", "EvaluationSpec", "MethodSpec", "SelectionSpec", "SplitSpec",
           "load_config", "parse_config"]

TOP_KEYS = ("name", "seed", "dataset", "split", "target", "preprocess", "methods", "sweep",
            "metrics", "evaluation", "selection", "runner", "output", "description", "units")
METHOD_KEYS = ("name", "label", "params", "grid", "select", "preprocess", "threshold", "budget")
SWEEP_KEYS = ("rank_ratio", "rank", "observed_ratio", "labelled_ratio", "repetitions")
SPLIT_KEYS = ("test_fraction", "stratify", "repetitions", "pool")
EVAL_KEYS = ("auc_degenerate", "batch_size", "splits", "store_top_k")
SELECTION_KEYS = ("metric", "validation_fraction", "cv", "stratify")
RUNNER_KEYS = ("jobs", "backend", "scheduler", "ship_data")
BACKENDS = ("local", "dask")
TARGET_SCALINGS = ("none", "minmax")
DEFAULT_PREPROCESS = ["bias"]
DEFAULT_RANK_RATIO = 0.2
DEFAULT_RANK_FLOOR = 10    # without a rank axis in the config: at least min(L, 10) dimensions
RESERVED_PARAMS = ("rank", "random_state", "task")   # set by the runner, never in a config


@dataclass(frozen=True)
class MethodSpec:
    """One method entry of a config.

    ``params`` are fixed parameters; ``grid`` maps parameters to lists whose
    cartesian product becomes separate cells; ``select`` maps parameters to
    candidate lists chosen per cell on a validation split of the training data
    (the special key ``preprocess`` selects among lists of preprocessing steps, and
    ``rank_ratio`` among ranks as fractions k/L of the label count, for methods with a rank).
    """

    name: str
    label: str
    params: dict
    grid: dict
    select: dict
    preprocess: list | None
    threshold: float | None
    index: int
    budget: float | None = None
    """``budget``: wall-clock seconds one cell of this entry may take (data, selection, fit and
    scoring); a cell still running then is stopped and recorded ``over_budget``. None: no
    limit."""


@dataclass(frozen=True)
class SplitSpec:
    """A random train/test split protocol (``split:`` in a config).

    ``repetitions`` random splits (one per repetition of the sweep), each with
    ``test_fraction`` of the rows in the test part, stratified by class (multi-class) or
    level (ordinal) when ``stratify``.
    """

    test_fraction: float
    stratify: bool
    pool: bool = False          # the data's own train and test files are pooled first

    def key(self) -> str:
        return json.dumps({"test_fraction": self.test_fraction, "stratify": self.stratify},
                          sort_keys=True, separators=(",", ":"))


@dataclass(frozen=True)
class EvaluationSpec:
    """What is computed from each fitted model, and on which parts (``metrics:`` and
    ``evaluation:`` in a config); shared by a :class:`Config` and each of its cells."""

    metrics: tuple
    """``metrics``: canonical metric names (``p@3``) in the config's order; the task's
    defaults when the config lists none."""
    auc_degenerate: str = "skip"
    """``evaluation.auc_degenerate``: rows without a positive or without a negative label are
    left out of ``auc`` (``skip``) or count 0 (``zero``)."""
    batch_size: int | None = None
    """``evaluation.batch_size``: rows scored at once (None: a batch of scores stays under
    about 64 MB)."""
    splits: tuple = ("test",)
    """``evaluation.splits``: the parts evaluated, ``test`` and/or ``train``."""
    store_top_k: int = 20
    """``evaluation.store_top_k``: depth of the label ranking stored with each cell, from which
    ``p@k`` and ``ndcg@k`` of a later config are computed without a refit."""


@dataclass(frozen=True)
class SelectionSpec:
    """How a method's ``select`` candidates are compared (``selection:`` in a config), on
    the labelled training rows only; shared by a :class:`Config` and each of its cells."""

    metric: str
    """``selection.metric``: the metric compared (default: the first of ``metrics``)."""
    validation_fraction: float = 0.2
    """``selection.validation_fraction``: the hold-out part of the training rows, in (0, 0.5]."""
    cv: int | None = None
    """``selection.cv``: k-fold cross-validation instead of one hold-out split."""
    stratify: bool = False
    """``selection.stratify``: hold-out part and folds keep the class (or level) proportions."""


@dataclass(frozen=True)
class Config:
    """A validated experiment config: every key after defaults (:func:`load_config`).

    Each field documents the config key it comes from; :meth:`resolved` gives the config
    back as plain data (``config.resolved.yaml``).
    """

    name: str
    """``name``: the experiment's plain name (the default output is ``results/<name>``)."""
    seed: int
    """``seed``: the base seed; every random draw is seeded from it by name
    (:mod:`mlx.seeding`)."""
    dataset: Any  # mlx.data.catalog.DatasetSpec
    """``dataset``, resolved to a :class:`~mlx.data.spec.DatasetSpec` (registered, files or
    synthetic)."""
    dataset_node: Any
    """``dataset`` as the config gave it (written back by :meth:`resolved`)."""
    preprocess: list
    """``preprocess``: the feature steps of every method entry without its own (default
    ``[bias]``)."""
    methods: tuple
    """``methods``: one :class:`MethodSpec` per entry, in order, each with its label."""
    rank_ratio: tuple
    """``sweep.rank_ratio``: the ranks of methods with a rank, as k/L (unused with ``rank``)."""
    observed_ratio: tuple
    """``sweep.observed_ratio``: fractions of the training label entries observed."""
    repetitions: int
    """``sweep.repetitions`` (or ``split.repetitions``): draws of every setting."""
    evaluation: EvaluationSpec
    """``metrics`` and ``evaluation``: what is computed on which parts."""
    selection: SelectionSpec
    """``selection``: how ``select`` candidates are compared."""
    jobs: int | None
    """``runner.jobs``: cells run at once (``mlx run -j`` overrides it; None: one per CPU
    this process may use)."""
    output: str
    """``output``: the results directory (default ``results/<name>``)."""
    source: str | None
    """The config file's path, for messages (None for a mapping given in code)."""
    raw: dict = field(repr=False, default_factory=dict)
    """The parsed YAML mapping, overrides applied, before defaults."""
    task: str = "multilabel"
    """The dataset's task (``multilabel``, ``multiclass``, ``regression``, ``ordinal``)."""
    split: SplitSpec | None = None
    """``split``: the random train/test split protocol (None: the data's own split)."""
    target: str = "none"
    """``target``: target scaling of regression data, ``none`` or ``minmax``."""
    rank: tuple | None = None
    """``sweep.rank``: absolute ranks (None: the ranks come from ``rank_ratio``)."""
    labelled_ratio: tuple = (1.0,)
    """``sweep.labelled_ratio``: fractions of the training rows that keep their labels."""
    rank_floor: int = 0
    """The rank is at least ``min(L, rank_floor)``: 10 without a rank axis in the config, else 0."""
    backend: str = "local"
    """``runner.backend``: ``local`` (a process pool) or ``dask``."""
    scheduler: str | None = None
    """``runner.scheduler``: a Dask scheduler address (None: a local Dask cluster)."""
    ship_data: bool = False
    """``runner.ship_data``: scatter the loaded data to the Dask workers instead of each
    reading its files."""
    units: str | None = None
    """``units``: how tables, plots and reports show [0, 1] metrics, ``percent`` or
    ``fraction`` (None: each command's default)."""
    overrides: tuple = ()
    """The command line's ``key.path=value`` texts, as given (:mod:`mlx.overrides`)."""

    def resolved(self) -> dict:
        """The config after defaults, as plain data (written with the results)."""
        ev, sel = self.evaluation, self.selection
        out = {
            "name": self.name,
            "seed": self.seed,
            "dataset": self.dataset_node,
            "task": self.task,
            "split": None if self.split is None else {
                "test_fraction": self.split.test_fraction, "stratify": self.split.stratify,
                "repetitions": self.repetitions, **({"pool": True} if self.split.pool else {})},
            "target": self.target,
            "preprocess": self.preprocess,
            "methods": [
                {"name": m.name, "label": m.label, "params": m.params, "grid": m.grid,
                 "select": m.select, "preprocess": m.preprocess, "threshold": m.threshold,
                 **({"budget": m.budget} if m.budget is not None else {})}
                for m in self.methods
            ],
            "sweep": {"rank_ratio": list(self.rank_ratio), "rank_floor": self.rank_floor,
                      "rank": None if self.rank is None else list(self.rank),
                      "observed_ratio": list(self.observed_ratio),
                      "labelled_ratio": list(self.labelled_ratio),
                      "repetitions": self.repetitions},
            "metrics": list(ev.metrics),
            "evaluation": {"auc_degenerate": ev.auc_degenerate, "batch_size": ev.batch_size,
                           "splits": list(ev.splits), "store_top_k": ev.store_top_k},
            "selection": {"metric": sel.metric, "validation_fraction": sel.validation_fraction,
                          "cv": sel.cv, "stratify": sel.stratify},
            "runner": {"jobs": self.jobs, "backend": self.backend,
                       "scheduler": self.scheduler, "ship_data": self.ship_data},
            "output": self.output,
        }
        if self.units is not None:
            out["units"] = self.units
        return out


# ----------------------------------------------------------------------------- loading
def load_config(path: str | os.PathLike, overrides=()) -> Config:
    """Read and validate a YAML experiment config.

    ``overrides`` are command-line ``key.path=value`` texts (see :mod:`mlx.overrides`), set in
    the parsed YAML before it is validated; the config records them.
    """
    raw = read_yaml(path, empty_hint="a config needs at least 'name', 'dataset' and 'methods'")
    if not overrides:
        return parse_config(raw, source=str(path))
    from dataclasses import replace

    from mlx.overrides import apply_overrides

    raw = apply_overrides(raw, overrides, str(path))
    return replace(parse_config(raw, source=str(path)), overrides=tuple(overrides))


def parse_config(raw: dict, *, source: str | None = None) -> Config:
    """Validate a config mapping (already parsed from YAML), one section after another."""
    raw = copy.deepcopy(raw)
    check_keys(raw, TOP_KEYS, "", source)
    for required in ("name", "dataset", "methods"):
        if required not in raw:
            raise ConfigError(source, None, f"missing required key {required!r}")
    name, seed = _parse_name(raw, source), as_int(raw.get("seed", 0), "seed", source, minimum=0)
    dataset, task = _parse_dataset(raw, source)
    preprocess = _parse_preprocess(raw, source)
    target = _parse_target(raw, dataset, task, source)
    evaluation = _parse_evaluation(raw, task, source)
    selection = _parse_selection(raw, evaluation.metrics[0], task, source)
    sweep = _parse_sweep(raw, dataset, task, source)
    split, repetitions = _parse_split(raw, sweep.pop("repetitions"), dataset, task, source)
    methods = _parse_methods(raw, dataset, task, source)
    runner = _parse_runner(raw, source)
    output = raw.get("output", os.path.join("results", name))
    as_str(output, "output", source)
    return Config(name=name, seed=seed, dataset=dataset, dataset_node=raw["dataset"],
                  preprocess=preprocess, methods=methods, repetitions=repetitions,
                  evaluation=evaluation, selection=selection, output=output, source=source,
                  raw=raw, task=task.name, split=split, target=target,
                  units=_parse_units(raw, source), **sweep, **runner)


def _parse_name(raw: dict, source) -> str:
    name = as_str(raw["name"], "name", source)
    if any(c in name for c in "/\\") or name.startswith("."):
        raise ConfigError(source, "name", f"must be a plain name (no '/' or leading '.'). "
                                          f"Got {shown(name)} instead.")
    return name


def _parse_dataset(raw: dict, source):
    """``(DatasetSpec, Task)`` of the ``dataset`` section."""
    from mlx.data.catalog import resolve_dataset
    from mlx.tasks import get_task

    dataset = resolve_dataset(raw["dataset"], source=source, key_path="dataset")
    return dataset, get_task(dataset.task, source=source, key_path="dataset")


def _parse_preprocess(raw: dict, source) -> list:
    """The ``preprocess`` steps. Default: an intercept for every method (a constant feature);
    ``preprocess: []`` turns it off, as the reproduction configs do where a paper had none."""
    from mlx.preprocess import parse_steps

    node = raw.get("preprocess", DEFAULT_PREPROCESS)
    node = [] if node is None else node
    parse_steps(node, source=source, key_path="preprocess")
    return list(node)


def _parse_target(raw: dict, dataset, task, source) -> str:
    """``target``: the scaling of regression targets."""
    target = raw.get("target", "none")
    target = "none" if target is None else target
    if target not in TARGET_SCALINGS:
        raise ConfigError(source, "target", f"must be one of {', '.join(TARGET_SCALINGS)}. "
                                            f"Got {shown(target)} instead.")
    if target != "none" and not task.scaled_targets:
        raise ConfigError(source, "target", f"scales regression targets; the dataset "
                                            f"'{dataset.name}' is {task.phrase}")
    return target


def _parse_metric_name(name, path: str, task, source) -> str:
    """A metric name of the config, canonical, checked against the task."""
    from mlx.metrics import parse_metric

    name = _wrap(lambda: parse_metric(name), source, path).name
    task.check_metric(name, source=source, key_path=path)
    return name


def _parse_evaluation(raw: dict, task, source) -> EvaluationSpec:
    """The ``metrics`` and ``evaluation`` sections."""
    metrics = []
    for i, m in enumerate(as_list(raw.get("metrics", task.default_metrics()), "metrics",
                                  source)):
        as_str(m, f"metrics[{i}]", source)
        metrics.append(_parse_metric_name(m, f"metrics[{i}]", task, source))
    if len(set(metrics)) != len(metrics):
        raise ConfigError(source, "metrics", "lists a metric twice")
    ev = raw.get("evaluation", {}) or {}
    check_keys(ev, EVAL_KEYS, "evaluation", source)
    auc_degenerate = ev.get("auc_degenerate", "skip")
    if auc_degenerate not in ("skip", "zero"):
        raise ConfigError(source, "evaluation.auc_degenerate",
                          f"must be 'skip' or 'zero'. Got {shown(auc_degenerate)} instead.")
    batch_size = ev.get("batch_size")
    if batch_size is not None:
        batch_size = as_int(batch_size, "evaluation.batch_size", source, minimum=1)
    store_top_k = as_int(ev.get("store_top_k", 20), "evaluation.store_top_k", source, minimum=1)
    splits = tuple(as_list(ev.get("splits", ["test"]), "evaluation.splits", source))
    for i, s_ in enumerate(splits):
        if s_ not in ("test", "train"):
            raise ConfigError(source, f"evaluation.splits[{i}]",
                              f"must be 'test' or 'train'. Got {shown(s_)} instead.")
    return EvaluationSpec(metrics=tuple(metrics), auc_degenerate=auc_degenerate,
                          batch_size=batch_size, splits=splits, store_top_k=store_top_k)


def _parse_selection(raw: dict, first_metric: str, task, source) -> SelectionSpec:
    """The ``selection`` section (the metric defaults to the config's first)."""
    sel = raw.get("selection", {}) or {}
    check_keys(sel, SELECTION_KEYS, "selection", source)
    metric = as_str(sel.get("metric", first_metric), "selection.metric", source)
    metric = _parse_metric_name(metric, "selection.metric", task, source)
    # A validation part larger than the part the candidates are fitted on would choose
    # parameters for a different amount of data than the final fit sees.
    validation_fraction = as_float(sel.get("validation_fraction", 0.2),
                                   "selection.validation_fraction", source, low=0.0, high=0.5,
                                   low_open=True)
    cv = sel.get("cv")
    if cv is not None:
        cv = as_int(cv, "selection.cv", source, minimum=2)
        if "validation_fraction" in sel:
            raise ConfigError(source, "selection.cv",
                              "is an alternative to selection.validation_fraction; give one")
    stratify = _parse_stratify(sel, "selection.stratify", task, source)
    return SelectionSpec(metric=metric, validation_fraction=validation_fraction, cv=cv,
                         stratify=stratify)


def _parse_stratify(node: dict, path: str, task, source) -> bool:
    """``stratify`` of ``selection`` or ``split``: by default where the task allows it."""
    stratify = as_bool(node.get("stratify", task.stratified), path, source)
    if stratify and not task.stratified:
        raise ConfigError(source, path, f"stratification needs classes or levels; "
                                        f"{task.phrase} has neither")
    return stratify


def _parse_ratios(sw: dict, axis: str, default: list, source) -> tuple:
    values = as_list(sw.get(axis, default), f"sweep.{axis}", source)
    return tuple(as_ratio(v, f"sweep.{axis}[{i}]", source) for i, v in enumerate(values))


def _parse_sweep(raw: dict, dataset, task, source) -> dict:
    """The ``sweep`` section, as the :class:`Config` fields it sets."""
    sw = raw.get("sweep", {}) or {}
    check_keys(sw, SWEEP_KEYS, "sweep", source)
    rank_ratio = _parse_ratios(sw, "rank_ratio", [DEFAULT_RANK_RATIO], source)
    # k/L = 0.2 (the LEML paper's smallest ratio) gives rank 1 on a 6-label set: without a
    # rank axis in the config, the rank is at least min(L, 10).
    rank_floor = 0 if ("rank_ratio" in sw or sw.get("rank") is not None) else DEFAULT_RANK_FLOOR
    rank = None
    if sw.get("rank") is not None:
        if "rank_ratio" in sw:
            raise ConfigError(source, "sweep.rank", "is an alternative to sweep.rank_ratio "
                                                    "(absolute ranks vs k/L); give one")
        rank = tuple(as_int(v, f"sweep.rank[{i}]", source, minimum=1)
                     for i, v in enumerate(as_list(sw["rank"], "sweep.rank", source)))
    observed_ratio = _parse_ratios(sw, "observed_ratio", [1.0], source)
    if any(r < 1.0 for r in observed_ratio) and not task.entry_masks:
        raise ConfigError(source, "sweep.observed_ratio",
                          f"masks label entries of multi-label data; the dataset "
                          f"'{dataset.name}' is {task.phrase} (use sweep.labelled_ratio "
                          f"for labelled rows)")
    labelled_ratio = _parse_ratios(sw, "labelled_ratio", [1.0], source)
    for axis, values in (("rank_ratio", rank_ratio), ("rank", rank or ()),
                         ("observed_ratio", observed_ratio), ("labelled_ratio", labelled_ratio)):
        if len(set(values)) != len(values):
            raise ConfigError(source, f"sweep.{axis}", "lists a value twice")
    repetitions = as_int(sw.get("repetitions", 1), "sweep.repetitions", source, minimum=1)
    return {"rank_ratio": rank_ratio, "rank_floor": rank_floor, "rank": rank,
            "observed_ratio": observed_ratio, "labelled_ratio": labelled_ratio,
            "repetitions": repetitions}


def _parse_split(raw: dict, repetitions: int, dataset, task, source):
    """``(SplitSpec or None, repetitions)`` of the ``split`` section; ``split.repetitions``
    may give the number of repetitions instead of ``sweep.repetitions``."""
    node = raw.get("split")
    if node is None:
        if not dataset.has_split:
            raise ConfigError(source, "dataset",
                              f"'{dataset.name}' has no official train/test split; add a "
                              f"random split protocol, e.g. split: {{test_fraction: 0.3, "
                              f"repetitions: 5}}")
        return None, repetitions
    check_keys(node, SPLIT_KEYS, "split", source)
    fraction = as_ratio(node.get("test_fraction", 0.3), "split.test_fraction", source)
    if fraction >= 1.0:
        raise ConfigError(source, "split.test_fraction",
                          f"must be a float in the range (0, 1). Got {shown(fraction)} instead.")
    stratify = _parse_stratify(node, "split.stratify", task, source)
    if "repetitions" in node:
        reps = as_int(node["repetitions"], "split.repetitions", source, minimum=1)
        if "repetitions" in (raw.get("sweep", {}) or {}) and reps != repetitions:
            raise ConfigError(source, "split.repetitions",
                              f"is {reps} but sweep.repetitions is {repetitions}; each "
                              f"repetition draws one split, give the number once")
        repetitions = reps
    pool = as_bool(node.get("pool", False), "split.pool", source)
    if dataset.has_split and not pool:
        raise ConfigError(source, "split",
                          f"'{dataset.name}' has its own test file, and a random split "
                          f"would pool it with the training file and split the rows "
                          f"afresh; say so with split.pool: true, or remove split to "
                          f"train and test on the files as given")
    return SplitSpec(test_fraction=fraction, stratify=stratify, pool=pool), repetitions


def _parse_methods(raw: dict, dataset, task, source) -> tuple:
    """The ``methods`` list: one :class:`MethodSpec` per entry, labelled, each for the task."""
    from mlx.methods.table import method_table

    node = raw["methods"]
    if not isinstance(node, list) or not node:
        raise ConfigError(source, "methods", "must be a non-empty list of methods, "
                                             "e.g. [{name: br, params: {loss: logistic}}]")
    specs = _assign_labels([_parse_method(entry, i, source) for i, entry in enumerate(node)],
                           source)
    for spec in specs:
        cls = method_table(spec.name)
        if task.name not in cls.tasks:
            raise ConfigError(source, f"methods[{spec.index}].name",
                              f"method {spec.name!r} does not handle {task.name} tasks (it "
                              f"handles: {', '.join(cls.tasks)}); the dataset "
                              f"'{dataset.name}' is {task.phrase}")
    return tuple(specs)


def _parse_runner(raw: dict, source) -> dict:
    """The ``runner`` section, as the :class:`Config` fields it sets."""
    rn = raw.get("runner", {}) or {}
    check_keys(rn, RUNNER_KEYS, "runner", source)
    jobs = rn.get("jobs")
    if jobs is not None:
        jobs = as_int(jobs, "runner.jobs", source, minimum=1)
    backend = rn.get("backend", "local")
    if backend not in BACKENDS:
        raise ConfigError(source, "runner.backend", f"must be 'local' (a process pool on this "
                                                    f"machine) or 'dask' (a Dask cluster). Got "
                                                    f"{shown(backend)} instead.")
    scheduler = rn.get("scheduler")
    if scheduler is not None:
        scheduler = as_str(scheduler, "runner.scheduler", source)
        from mlx.runner.dask_backend import check_scheduler_address

        check_scheduler_address(scheduler, source=source, key_path="runner.scheduler")
        if backend != "dask":
            raise ConfigError(source, "runner.scheduler", "is only used with backend 'dask'; "
                                                          "set runner.backend: dask")
    ship_data = as_bool(rn.get("ship_data", False), "runner.ship_data", source)
    return {"jobs": jobs, "backend": backend, "scheduler": scheduler, "ship_data": ship_data}


def _parse_units(raw: dict, source) -> str | None:
    units = raw.get("units")
    if units is not None and units not in ("percent", "fraction"):
        raise ConfigError(source, "units", f"must be 'percent' or 'fraction' (how tables, "
                                           f"compare, plot and report show [0, 1] metrics). Got "
                                           f"{shown(units)} instead.")
    return units


def _wrap(fn, source, path):
    """Call ``fn``; re-raise an MlxError/ValueError with the config location."""
    try:
        return fn()
    except ConfigError as exc:
        if exc.source is None and exc.key_path is None:
            raise ConfigError(source, path, exc.message) from None
        raise
    except (MlxError, ValueError) as exc:
        raise ConfigError(source, path, str(exc)) from None


def _check_method_params(cls, params: dict, path: str, source, *, label="params") -> None:
    from mlx.methods.constraints import InvalidParameterError

    valid = cls.param_names()
    for key in params:
        if key not in valid:
            hint = suggest(str(key), valid)
            msg = f"unknown parameter {key!r} for method {cls.name!r}."
            if hint:
                msg += f" Did you mean {hint!r}?"
            msg += f" Valid parameters: {', '.join(valid)}"
            raise ConfigError(source, f"{path}.{label}.{key}", msg)
    try:
        inst = cls(**params)
        inst._validate_params()
    except InvalidParameterError as exc:
        raise ConfigError(source, f"{path}.{label}.{exc.param}", str(exc)) from None


def _parse_method(node, i: int, source) -> MethodSpec:
    """One entry of ``methods``: its name, ``params``, ``grid``, ``select``, ``preprocess``,
    ``threshold`` and ``label``, each parameter checked by the method's own validation."""
    from mlx.methods.table import method_table
    from mlx.preprocess import parse_steps

    path = f"methods[{i}]"
    if isinstance(node, str):
        node = {"name": node}
    check_keys(node, METHOD_KEYS, path, source)
    if "name" not in node:
        raise ConfigError(source, path, "missing required key 'name'")
    name = node["name"]
    cls = method_table(name, source=source, key_path=f"{path}.name")
    params = _parse_method_params(node, cls, path, source)
    grid = _parse_method_axis(node, "grid", cls, params, path, source)
    select = _parse_method_axis(node, "select", cls, params, path, source)
    overlap = set(grid) & set(select)
    if overlap:
        key = sorted(overlap)[0]
        raise ConfigError(source, f"{path}.select.{key}",
                          f"is also in {path}.grid; a parameter is either swept or selected")
    mprep = node.get("preprocess")
    if mprep is not None:
        parse_steps(mprep, source=source, key_path=f"{path}.preprocess")
        mprep = list(mprep)
        if "preprocess" in select:
            raise ConfigError(source, f"{path}.preprocess",
                              f"is also in {path}.select; give it in one place")
    threshold = node.get("threshold")
    if threshold is not None:
        threshold = as_float(threshold, f"{path}.threshold", source)
    label = node.get("label")
    if label is not None:
        as_str(label, f"{path}.label", source)
    budget = node.get("budget")
    if budget is not None:
        budget = as_float(budget, f"{path}.budget", source, low=0, low_open=True)
    return MethodSpec(name=name, label=label or "", params=params, grid=grid, select=select,
                      preprocess=mprep, threshold=threshold, index=i, budget=budget)


def _parse_method_params(node: dict, cls, path: str, source) -> dict:
    """A method entry's fixed ``params`` (none of them set by the runner)."""
    params = node.get("params", {}) or {}
    if not isinstance(params, dict):
        raise ConfigError(source, f"{path}.params", f"must be a mapping, got {type_name(params)}")
    for reserved in RESERVED_PARAMS:
        if reserved in params and (reserved != "rank" or cls.uses_rank):
            raise ConfigError(source, f"{path}.params.{reserved}",
                              "is set by the runner (rank from sweep.rank_ratio or sweep.rank, "
                              "random_state from seed, task from the dataset); remove it")
    _check_method_params(cls, _with_rank(cls, params), path, source)
    return params


def _with_rank(cls, params: dict) -> dict:
    """``params`` as the method is checked with: a placeholder rank where it takes one."""
    return {**params, "rank": 1} if cls.uses_rank else dict(params)


def _parse_method_axis(node: dict, section: str, cls, params: dict, path: str, source) -> dict:
    """A method entry's ``grid`` or ``select``: parameter -> list of values, each value
    checked with the fixed ``params`` (``select.preprocess``: lists of steps)."""
    from mlx.preprocess import parse_steps

    sec = node.get(section, {}) or {}
    if not isinstance(sec, dict):
        raise ConfigError(source, f"{path}.{section}",
                          f"must be a mapping of parameter -> list of values, got {type_name(sec)}")
    out = {}
    for key, values in sec.items():
        values = as_list(values, f"{path}.{section}.{key}", source)
        if section == "select" and key == "preprocess":
            for j, v in enumerate(values):
                parse_steps(v or [], source=source, key_path=f"{path}.select.preprocess[{j}]")
            out[key] = [list(v or []) for v in values]
            continue
        if section == "select" and key == "rank_ratio":
            if not cls.uses_rank:
                raise ConfigError(source, f"{path}.select.rank_ratio",
                                  f"{cls.name} has no rank to select; remove it")
            out[key] = [as_ratio(v, f"{path}.select.rank_ratio[{j}]", source)
                        for j, v in enumerate(values)]
            continue
        if key in params:
            raise ConfigError(source, f"{path}.{section}.{key}",
                              f"is also fixed in {path}.params; give it in one place")
        for j, v in enumerate(values):
            try:
                _check_method_params(cls, {**_with_rank(cls, params), key: v}, path, source,
                                     label=section)
            except ConfigError as exc:
                raise ConfigError(source, f"{path}.{section}.{key}[{j}]", exc.message) from None
        out[key] = values
    return out


def _assign_labels(specs: list[MethodSpec], source) -> list[MethodSpec]:
    """Default labels: the method name, plus the parameters that tell same-named entries apart."""
    out = []
    for spec in specs:
        if spec.label:
            out.append(spec)
            continue
        same = [s for s in specs if s.name == spec.name]
        label = spec.name
        if len(same) > 1:
            keys = sorted({k for s in same for k in s.params})
            differing = [k for k in keys if len({json.dumps(s.params.get(k), sort_keys=True)
                                                  for s in same}) > 1]
            if differing:
                label += "(" + ",".join(f"{k}={spec.params.get(k)}" for k in differing) + ")"
            else:
                label += f"#{spec.index}"
        out.append(MethodSpec(**{**spec.__dict__, "label": label}))
    labels = [s.label for s in out]
    for i, lab in enumerate(labels):
        if labels.index(lab) != i:
            raise ConfigError(source, f"methods[{i}].label",
                              f"label {lab!r} is used twice; give each method entry its own label")
    return out
