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
import numbers
import os
from dataclasses import dataclass, field
from typing import Any

import yaml

from mlx.errors import ConfigError, MlxError, suggest

__all__ = ["Config", "MethodSpec", "load_config", "parse_config"]

TOP_KEYS = ("name", "seed", "dataset", "preprocess", "methods", "sweep", "metrics",
            "evaluation", "selection", "runner", "output", "description")
METHOD_KEYS = ("name", "label", "params", "grid", "select", "preprocess", "threshold")
SWEEP_KEYS = ("rank_ratio", "observed_ratio", "repetitions")
EVAL_KEYS = ("auc_degenerate", "batch_size", "splits")
SELECTION_KEYS = ("metric", "validation_fraction")
RUNNER_KEYS = ("jobs",)
DEFAULT_METRICS = ["p@1", "p@3", "p@5", "hamming", "auc"]


@dataclass(frozen=True)
class MethodSpec:
    """One method entry of a config.

    ``params`` are fixed parameters; ``grid`` maps parameters to lists whose
    cartesian product becomes separate cells; ``select`` maps parameters to
    candidate lists chosen per cell on a validation split of the training data
    (the special key ``preprocess`` selects among lists of preprocessing steps).
    """

    name: str
    label: str
    params: dict
    grid: dict
    select: dict
    preprocess: list | None
    threshold: float | None
    index: int


@dataclass(frozen=True)
class Config:
    name: str
    seed: int
    dataset: Any  # mlx.data.catalog.DatasetSpec
    dataset_node: Any
    preprocess: list
    methods: tuple
    rank_ratio: tuple
    observed_ratio: tuple
    repetitions: int
    metrics: tuple
    auc_degenerate: str
    batch_size: int | None
    eval_splits: tuple
    selection_metric: str
    validation_fraction: float
    jobs: int | None
    output: str
    source: str | None
    raw: dict = field(repr=False, default_factory=dict)

    def resolved(self) -> dict:
        """The config after defaults, as plain data (written with the results)."""
        return {
            "name": self.name,
            "seed": self.seed,
            "dataset": self.dataset_node,
            "preprocess": self.preprocess,
            "methods": [
                {"name": m.name, "label": m.label, "params": m.params, "grid": m.grid,
                 "select": m.select, "preprocess": m.preprocess, "threshold": m.threshold}
                for m in self.methods
            ],
            "sweep": {"rank_ratio": list(self.rank_ratio),
                      "observed_ratio": list(self.observed_ratio),
                      "repetitions": self.repetitions},
            "metrics": list(self.metrics),
            "evaluation": {"auc_degenerate": self.auc_degenerate, "batch_size": self.batch_size,
                           "splits": list(self.eval_splits)},
            "selection": {"metric": self.selection_metric,
                          "validation_fraction": self.validation_fraction},
            "runner": {"jobs": self.jobs},
            "output": self.output,
        }


# ----------------------------------------------------------------------------- helpers
def _type_name(value) -> str:
    return type(value).__name__ if value is not None else "null"


def _check_keys(node, valid, path: str, source) -> None:
    if not isinstance(node, dict):
        where = path or "top level"
        raise ConfigError(source, path or None,
                          f"must be a mapping, got {_type_name(node)}" if path else
                          f"{where} must be a mapping, got {_type_name(node)}")
    for key in node:
        if key not in valid:
            full = f"{path}.{key}" if path else str(key)
            hint = suggest(str(key), valid)
            msg = f"unknown key {full!r}."
            if hint:
                msg += f" Did you mean {(path + '.' + hint) if path else hint!r}?"
            under = f"under {path!r}" if path else "at the top level"
            msg += f" Valid keys {under}: {', '.join(sorted(valid))}"
            raise ConfigError(source, None, msg)


def _int(value, path, source, *, minimum=None) -> int:
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise ConfigError(source, path, f"must be an int. Got {value!r} instead.")
    if minimum is not None and value < minimum:
        raise ConfigError(source, path, f"must be an int >= {minimum}. Got {value!r} instead.")
    return int(value)


def _ratio(value, path, source, *, low_open=True) -> float:
    ok = isinstance(value, numbers.Real) and not isinstance(value, bool)
    if ok:
        value = float(value)
        ok = (0.0 < value <= 1.0) if low_open else (0.0 <= value <= 1.0)
    if not ok:
        rng = "(0, 1]" if low_open else "[0, 1]"
        raise ConfigError(source, path, f"must be a float in the range {rng}. Got {value!r} instead.")
    return value


def _list(value, path, source) -> list:
    if isinstance(value, (list, tuple)):
        if not value:
            raise ConfigError(source, path, "must be a non-empty list")
        return list(value)
    return [value]


def _str(value, path, source) -> str:
    if not isinstance(value, str) or not value:
        raise ConfigError(source, path, f"must be a non-empty string. Got {value!r} instead.")
    return value


# ----------------------------------------------------------------------------- loading
def read_yaml(path: str | os.PathLike, *, empty_hint: str):
    """Parse a YAML file; every problem is a one-line ConfigError naming the file.

    ``empty_hint`` completes the message for an empty file ("a config needs ...").
    """
    source = str(path)
    try:
        with open(path, encoding="utf-8") as fh:
            text = fh.read()
    except FileNotFoundError:
        raise ConfigError(source, None, "file not found") from None
    except OSError as exc:
        raise ConfigError(source, None, f"cannot read: {exc.strerror}") from None
    try:
        raw = yaml.safe_load(text)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark
        where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark else ""
        raise ConfigError(source, None, f"invalid YAML{where}: {exc.problem}") from None
    except yaml.YAMLError as exc:
        raise ConfigError(source, None, f"invalid YAML: {exc}") from None
    if raw is None:
        raise ConfigError(source, None, f"the file is empty; {empty_hint}")
    return raw


def load_config(path: str | os.PathLike) -> Config:
    """Read and validate a YAML experiment config."""
    raw = read_yaml(path, empty_hint="a config needs at least 'name', 'dataset' and 'methods'")
    return parse_config(raw, source=str(path))


def parse_config(raw: dict, *, source: str | None = None) -> Config:
    """Validate a config mapping (already parsed from YAML)."""
    from mlx.data.catalog import resolve_dataset
    from mlx.metrics import parse_metric
    from mlx.preprocess import parse_steps

    raw = copy.deepcopy(raw)
    _check_keys(raw, TOP_KEYS, "", source)
    for required in ("name", "dataset", "methods"):
        if required not in raw:
            raise ConfigError(source, None, f"missing required key {required!r}")
    name = _str(raw["name"], "name", source)
    if any(c in name for c in "/\\") or name.startswith("."):
        raise ConfigError(source, "name", f"must be a plain name (no '/' or leading '.'). "
                                          f"Got {name!r} instead.")
    seed = _int(raw.get("seed", 0), "seed", source, minimum=0)

    dataset_node = raw["dataset"]
    dataset = resolve_dataset(dataset_node, source=source, key_path="dataset")

    preprocess_node = raw.get("preprocess", []) or []
    parse_steps(preprocess_node, source=source, key_path="preprocess")

    # metrics
    metrics_node = raw.get("metrics", DEFAULT_METRICS)
    metrics = []
    for i, m in enumerate(_list(metrics_node, "metrics", source)):
        path = f"metrics[{i}]"
        _str(m, path, source)
        metrics.append(_wrap(lambda: parse_metric(m), source, path).name)
    if len(set(metrics)) != len(metrics):
        raise ConfigError(source, "metrics", "lists a metric twice")

    # evaluation
    ev = raw.get("evaluation", {}) or {}
    _check_keys(ev, EVAL_KEYS, "evaluation", source)
    auc_degenerate = ev.get("auc_degenerate", "skip")
    if auc_degenerate not in ("skip", "zero"):
        raise ConfigError(source, "evaluation.auc_degenerate",
                          f"must be 'skip' or 'zero'. Got {auc_degenerate!r} instead.")
    batch_size = ev.get("batch_size")
    if batch_size is not None:
        batch_size = _int(batch_size, "evaluation.batch_size", source, minimum=1)
    splits = tuple(_list(ev.get("splits", ["test"]), "evaluation.splits", source))
    for i, s in enumerate(splits):
        if s not in ("test", "train"):
            raise ConfigError(source, f"evaluation.splits[{i}]",
                              f"must be 'test' or 'train'. Got {s!r} instead.")

    # selection
    sel = raw.get("selection", {}) or {}
    _check_keys(sel, SELECTION_KEYS, "selection", source)
    selection_metric = _str(sel.get("metric", metrics[0]), "selection.metric", source)
    selection_metric = _wrap(lambda: parse_metric(selection_metric), source,
                             "selection.metric").name
    validation_fraction = _ratio(sel.get("validation_fraction", 0.2),
                                 "selection.validation_fraction", source)
    if validation_fraction >= 1.0:
        raise ConfigError(source, "selection.validation_fraction",
                          f"must be a float in the range (0, 1). Got {validation_fraction!r} instead.")

    # sweep
    sw = raw.get("sweep", {}) or {}
    _check_keys(sw, SWEEP_KEYS, "sweep", source)
    rank_ratio = tuple(_ratio(v, f"sweep.rank_ratio[{i}]", source)
                       for i, v in enumerate(_list(sw.get("rank_ratio", [0.2]),
                                                   "sweep.rank_ratio", source)))
    observed_ratio = tuple(_ratio(v, f"sweep.observed_ratio[{i}]", source)
                           for i, v in enumerate(_list(sw.get("observed_ratio", [1.0]),
                                                       "sweep.observed_ratio", source)))
    for axis, values in (("rank_ratio", rank_ratio), ("observed_ratio", observed_ratio)):
        if len(set(values)) != len(values):
            raise ConfigError(source, f"sweep.{axis}", "lists a value twice")
    repetitions = _int(sw.get("repetitions", 1), "sweep.repetitions", source, minimum=1)

    # methods
    methods_node = raw["methods"]
    if not isinstance(methods_node, list) or not methods_node:
        raise ConfigError(source, "methods", "must be a non-empty list of methods, "
                                             "e.g. [{name: br, params: {loss: logistic}}]")
    specs = [_parse_method(node, i, source) for i, node in enumerate(methods_node)]
    specs = _assign_labels(specs, source)

    # runner / output
    rn = raw.get("runner", {}) or {}
    _check_keys(rn, RUNNER_KEYS, "runner", source)
    jobs = rn.get("jobs")
    if jobs is not None:
        jobs = _int(jobs, "runner.jobs", source, minimum=1)
    output = raw.get("output", os.path.join("results", name))
    _str(output, "output", source)

    return Config(
        name=name, seed=seed, dataset=dataset, dataset_node=dataset_node,
        preprocess=list(preprocess_node), methods=tuple(specs), rank_ratio=rank_ratio,
        observed_ratio=observed_ratio, repetitions=repetitions, metrics=tuple(metrics),
        auc_degenerate=auc_degenerate, batch_size=batch_size, eval_splits=splits,
        selection_metric=selection_metric, validation_fraction=validation_fraction,
        jobs=jobs, output=output, source=source, raw=raw,
    )


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
    from mlx.methods.base import InvalidParameterError

    valid = cls._param_names()
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
    from mlx.methods import METHODS
    from mlx.preprocess import parse_steps

    path = f"methods[{i}]"
    if isinstance(node, str):
        node = {"name": node}
    _check_keys(node, METHOD_KEYS, path, source)
    if "name" not in node:
        raise ConfigError(source, path, "missing required key 'name'")
    name = node["name"]
    cls = METHODS.get(name, source=source, key_path=f"{path}.name")
    params = node.get("params", {}) or {}
    if not isinstance(params, dict):
        raise ConfigError(source, f"{path}.params", f"must be a mapping, got {_type_name(params)}")
    for reserved in ("rank", "random_state"):
        if reserved in params and (reserved != "rank" or cls.uses_rank):
            raise ConfigError(source, f"{path}.params.{reserved}",
                              f"is set by the runner (rank from sweep.rank_ratio, random_state "
                              f"from seed); remove it")
    base = dict(params)
    if cls.uses_rank:
        base.setdefault("rank", 1)
    _check_method_params(cls, base, path, source)

    axes = {}
    for section in ("grid", "select"):
        sec = node.get(section, {}) or {}
        if not isinstance(sec, dict):
            raise ConfigError(source, f"{path}.{section}",
                              f"must be a mapping of parameter -> list of values, got {_type_name(sec)}")
        out = {}
        for key, values in sec.items():
            values = _list(values, f"{path}.{section}.{key}", source)
            if section == "select" and key == "preprocess":
                for j, v in enumerate(values):
                    parse_steps(v or [], source=source, key_path=f"{path}.select.preprocess[{j}]")
                out[key] = [list(v or []) for v in values]
                continue
            if key in params:
                raise ConfigError(source, f"{path}.{section}.{key}",
                                  f"is also fixed in {path}.params; give it in one place")
            for j, v in enumerate(values):
                try:
                    _check_method_params(cls, {**base, key: v}, path, source, label=section)
                except ConfigError as exc:
                    msg = exc.message
                    raise ConfigError(source, f"{path}.{section}.{key}[{j}]", msg) from None
            out[key] = values
        axes[section] = out
    overlap = set(axes["grid"]) & set(axes["select"])
    if overlap:
        key = sorted(overlap)[0]
        raise ConfigError(source, f"{path}.select.{key}",
                          f"is also in {path}.grid; a parameter is either swept or selected")
    mprep = node.get("preprocess")
    if mprep is not None:
        parse_steps(mprep, source=source, key_path=f"{path}.preprocess")
        mprep = list(mprep)
        if "preprocess" in axes["select"]:
            raise ConfigError(source, f"{path}.preprocess",
                              f"is also in {path}.select; give it in one place")
    threshold = node.get("threshold")
    if threshold is not None:
        if isinstance(threshold, bool) or not isinstance(threshold, numbers.Real):
            raise ConfigError(source, f"{path}.threshold",
                              f"must be a float. Got {threshold!r} instead.")
        threshold = float(threshold)
    label = node.get("label")
    if label is not None:
        _str(label, f"{path}.label", source)
    return MethodSpec(name=name, label=label or "", params=params, grid=axes["grid"],
                      select=axes["select"], preprocess=mprep, threshold=threshold, index=i)


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
