"""What a config's ``dataset:`` names: :func:`resolve_dataset` checks the value (keys, types,
ranges, known names and formats) and turns it into a :class:`DatasetSpec`.

Nothing is read from disk here: registry datasets are looked up in the registry
(:mod:`mlx.data.registry`); whether files exist is checked when loading
(:mod:`mlx.data.catalog`).
"""

from __future__ import annotations

import hashlib
import json
import numbers
from dataclasses import dataclass, field
from pathlib import Path

from mlx.data.cache import PARSER_VERSION
from mlx.data.formats import formats
from mlx.data.registry import get_entry
from mlx.errors import ConfigError, suggest
from mlx.validation import as_bool, as_float, as_int, as_str, check_keys, shown

__all__ = ["FORMATS", "FORMAT_TASKS", "FORMAT_OPTIONS", "DatasetSpec", "resolve_dataset"]

#: Explicit-file formats and the task each one yields by default (from the format registry,
#: :mod:`mlx.data.formats`, like the two tables below).
FORMATS = {f.name: f.default_task for f in formats()}

#: The tasks a format can be read as (``task:`` of a file spec or registry entry); the first
#: is the default. A multi-class LIBSVM file whose classes are integer levels can be read as an
#: ordinal task.
FORMAT_TASKS = {f.name: f.tasks for f in formats()}

#: The options each format takes (file-spec keys, and keys of a registry entry).
#: ``n_labels``, ``n_features`` and ``xml`` have fields of their own in :class:`DatasetSpec`;
#: the others are kept in ``DatasetSpec.options``.
FORMAT_OPTIONS = {f.name: f.options for f in formats()}

#: Every option a format may take, with what it sets (for messages); a format's module names
#: the ones it takes, and declares those that are new (``Format.new_options``).
_OPTION_WHAT = {"n_labels": "the number of labels", "n_features": "the number of features",
                "xml": "a Mulan XML label list", "n_targets": "the number of targets",
                "missing": "the handling of missing values", "sep": "the separator",
                "header": "whether there is a header line", "target": "the target column",
                "bins": "equal-frequency binning of a real target into ordinal levels"}
_OPTION_WHAT.update({o.name: o.what for f in formats() for o in f.new_options
                     if o.name not in _OPTION_WHAT})


@dataclass(frozen=True)
class DatasetSpec:
    """What a config's ``dataset:`` resolves to.

    ``kind`` is ``"registry"``, ``"files"`` or ``"synthetic"``. ``files`` holds
    ``(role, path)`` pairs (roles ``train``, ``test``, ``data``): relative paths on the data
    search path for registry datasets, paths as written in the config for explicit files.
    ``checksums`` holds ``(role, sha256)`` pairs of the content: the registry's, or for explicit
    files those :func:`mlx.data.catalog.identify` computed (with role ``xml`` for an ARFF
    file's Mulan label list); ``named`` says whether ``name`` was given (a file spec's default
    name is its file name, which does not identify the data); ``params`` the synthetic
    generator's arguments; ``options`` the sorted ``(key, value)`` pairs of the format's other
    options (``sep``, ``header``, ``target``, ``missing``, ``n_targets``; see
    :data:`FORMAT_OPTIONS`). ``source`` and ``key_path`` only serve messages.
    """

    name: str
    kind: str
    format: str | None = None
    task: str = "multilabel"
    files: tuple = ()
    checksums: tuple = ()
    n_labels: int | None = None
    n_features: int | None = None
    xml: str | None = None
    params: tuple = ()
    options: tuple = ()
    named: bool = True
    source: str | None = field(default=None, compare=False)
    key_path: str = field(default="dataset", compare=False)

    def file(self, role: str) -> str | None:
        return dict(self.files).get(role)

    @property
    def roles(self) -> tuple:
        return tuple(r for r, _ in self.files)

    @property
    def has_split(self) -> bool:
        """Whether there are train and test files (always true for synthetic data)."""
        return self.kind == "synthetic" or {"train", "test"} <= set(self.roles)

    @property
    def identified(self) -> bool:
        """Whether every file's content checksum is known (always for registry and synthetic
        data; for explicit files once :func:`mlx.data.catalog.identify` has read them)."""
        return self.kind != "files" or set(self.roles) <= {r for r, _ in self.checksums}

    @property
    def identity(self) -> str:
        """What the data's random draws are seeded by: the registered name, the explicit
        ``name`` of a file spec, or else the content checksums of its files, never their
        location or file names (the same bytes anywhere, gzipped or not, draw the same)."""
        if self.kind != "files" or self.named:
            return self.name
        if not self.identified:
            raise RuntimeError(f"dataset {self.name!r}: content checksums not computed yet "
                               "(mlx.data.catalog.identify)")
        shas = dict(self.checksums)
        text = "|".join(f"{r}={shas[r]}" for r in self.roles)
        return "sha256:" + hashlib.sha256(text.encode()).hexdigest()[:16]

    def checksum_text(self) -> str:
        """``role=sha256`` of each file, ``;``-separated (empty for synthetic data)."""
        return ";".join(f"{r}={s}" for r, s in self.checksums)

    def key(self) -> str:
        """Canonical JSON identifying the data (name, format, checksums, options, generator
        parameters, parser version); equal keys mean equal data.

        Once the content checksums are known the files' paths are left out, and so is a file
        spec's default name: the same bytes read the same way give the same key wherever they
        lie and whatever their files are called.
        """
        identified = self.identified and self.kind != "synthetic"
        files = [r for r in self.roles] if identified else [list(p) for p in self.files]
        return json.dumps({
            "name": self.name if self.named or not identified else None,
            "kind": self.kind, "format": self.format, "task": self.task,
            "files": files, "checksums": [list(c) for c in self.checksums],
            "n_labels": self.n_labels, "n_features": self.n_features,
            "xml": self.xml if not identified else self.xml is not None,
            "params": [list(p) for p in self.params],
            "options": [list(p) for p in self.options], "parser": PARSER_VERSION,
        }, sort_keys=True, separators=(",", ":"))


_FILE_KEYS = ("name", "format", "task", "train", "test", *_OPTION_WHAT)
#: Keys that may accompany ``name`` of a registered dataset: its task and target binning.
_REGISTRY_OVERRIDES = ("task", "bins")
_ALL_KEYS = tuple(sorted(set(_FILE_KEYS) | {"synthetic"}))
_SYNTH_KEYS = {
    "multilabel": ("task", "n_samples", "n_test", "n_features", "n_labels", "rank", "density",
                   "positive_fraction", "label_noise", "seed"),
    "multiclass": ("task", "n_samples", "n_test", "n_features", "n_classes", "class_sep",
                   "seed"),
}
_SYNTH_DEFAULTS = {
    "multilabel": {"n_samples": 200, "n_test": 100, "n_features": 50, "n_labels": 20,
                   "rank": 5, "density": 0.2, "positive_fraction": 0.1, "label_noise": 0.0,
                   "seed": 0},
    "multiclass": {"n_samples": 200, "n_test": 100, "n_features": 10, "n_classes": 4,
                   "class_sep": 2.0, "seed": 0},
}
_INT_MIN = {"n_samples": 1, "n_test": 1, "n_features": 1, "n_labels": 1, "rank": 1,
            "seed": 0, "n_classes": 2}
# name -> (low, high, low_open, high_open)
_FLOAT_RANGE = {"density": (0.0, 1.0, True, False), "positive_fraction": (0.0, 1.0, True, True),
                "label_noise": (0.0, 0.5, False, True),
                "class_sep": (0.0, float("inf"), False, True)}


def _check_float(value, path, source, low, high, low_open, high_open) -> float:
    return as_float(value, path, source, low=low, high=None if high == float("inf") else high,
                    low_open=low_open, high_open=high_open)


def _check_str(value, path, source) -> str:
    if isinstance(value, str) and not value.strip():
        value = ""
    return as_str(value, path, source)


_SEP_NOT = "\"'\r\n.+-"


def _check_sep(value, path, source) -> str:
    if not (isinstance(value, str) and len(value) == 1 and not value.isalnum()
            and value not in _SEP_NOT):
        raise ConfigError(source, path, "must be one separator character such as ',', ';', "
                                        "'\\t' or ' ' (any run of blanks), not a letter, digit, "
                                        f"'.', '+', '-' or quote. Got {shown(value)} instead.")
    return value


def _check_missing(value, path, source) -> str:
    if value not in ("error", "nan"):
        raise ConfigError(source, path, "must be 'error' (a missing value is an error) or 'nan' "
                                        "(a missing feature value is read as NaN; add the "
                                        "impute_mean preprocessing step). "
                                        f"Got {shown(value)} instead.")
    return value


def _check_target(value, path, source):
    if isinstance(value, str) and value.strip():
        return value
    if isinstance(value, numbers.Integral) and not isinstance(value, bool) and value >= 1:
        return int(value)
    raise ConfigError(source, path, "must be a column name from the header or a column number "
                                    f"(1-based). Got {shown(value)} instead.")


_OPTION_CHECKS = {
    "n_targets": lambda v, path, source: as_int(v, path, source, minimum=1),
    "missing": _check_missing,
    "bins": lambda v, path, source: as_int(v, path, source, minimum=2, maximum=1000),
    "sep": _check_sep,
    "header": as_bool,
    "target": _check_target,
}
_OPTION_CHECKS.update({o.name: o.check for f in formats() for o in f.new_options
                       if o.name not in _OPTION_CHECKS})


def _check_task(value, fmt: str, path, source) -> str:
    tasks = FORMAT_TASKS[fmt]
    if not isinstance(value, str) or value not in tasks:
        if len(tasks) == 1:
            msg = f"must be {tasks[0]!r} for format {fmt!r} (the only task it can be read as)."
        else:
            msg = (f"must be {', '.join(repr(t) for t in tasks[:-1])} or {tasks[-1]!r} for "
                   f"format {fmt!r}.")
        raise ConfigError(source, path, f"{msg} Got {shown(value)} instead.")
    return value


def _format_options(node: dict, fmt: str, source, kp) -> tuple:
    """Check that ``node`` sets only the options of ``fmt`` and validate the ones kept in
    ``DatasetSpec.options``; returns their sorted ``(key, value)`` pairs."""
    allowed = FORMAT_OPTIONS[fmt]
    for opt in _OPTION_WHAT:
        if opt in node and opt not in allowed:
            raise ConfigError(source, f"{kp}.{opt}", f"is not used with format {fmt!r} "
                                                     f"({_OPTION_WHAT[opt]} is only set for "
                                                     f"{_formats_with(opt)})")
    options = {opt: check(node[opt], f"{kp}.{opt}", source)
               for opt, check in _OPTION_CHECKS.items() if opt in node}
    if options.get("header") is False and isinstance(options.get("target"), str):
        raise ConfigError(source, f"{kp}.target", f"names the column {options['target']!r}, but "
                                                  "header is false; give the column number "
                                                  "(1-based) instead")
    return tuple(sorted(options.items()))


def _check_bins(task: str, options: tuple, source, kp) -> None:
    """``bins`` turns a real target into ordinal levels: it needs ``task: ordinal``."""
    if dict(options).get("bins") is not None and task != "ordinal":
        raise ConfigError(source, f"{kp}.bins", f"bins cut a real target into ordinal levels, "
                                                f"so it needs task 'ordinal' (the task here is "
                                                f"{task!r}); add 'task: ordinal' or remove bins")


def _from_registry(name: str, source, key_path, overrides: dict | None = None) -> DatasetSpec:
    """A registered dataset; ``overrides`` (from ``{name: NAME, task: ..., bins: ...}``) may
    set its task and bin its target into ordinal levels."""
    entry = get_entry(name, source=source, key_path=key_path)
    roles = [r for r in ("train", "test", "data") if r in entry["files"]]
    fmt = entry["format"]
    where, kp = "mlx/data/registry.yaml", f"datasets.{name}"
    task = _check_task(entry.get("task", FORMATS[fmt]), fmt, f"{kp}.task", where)
    options = _format_options(entry, fmt, where, kp)
    if overrides:
        okp = key_path.rsplit(".", 1)[0] if key_path.endswith(".name") else key_path
        if "task" in overrides:
            task = _check_task(overrides["task"], fmt, f"{okp}.task", source)
        if "bins" in overrides:
            options = tuple(sorted({**dict(options), **dict(_format_options(
                {"bins": overrides["bins"]}, fmt, source, okp))}.items()))
        _check_bins(task, options, source, okp)
    return DatasetSpec(
        name=name, kind="registry", format=fmt, task=task,
        files=tuple((r, entry["files"][r]["path"]) for r in roles),
        checksums=tuple((r, entry["files"][r]["sha256"]) for r in roles),
        n_labels=entry.get("n_labels"), n_features=entry.get("n_features"),
        options=options, source=source, key_path=key_path)


def _from_files(node: dict, source, key_path) -> DatasetSpec:
    kp = key_path
    if "format" not in node:
        raise ConfigError(source, kp, f"a file spec needs 'format' (one of "
                                      f"{', '.join(FORMATS)}) and 'train'")
    fmt = node["format"]
    if fmt not in FORMATS:
        hint = suggest(str(fmt), FORMATS)
        hints = [hint] if hint else [f for f in FORMATS if str(fmt) and f.startswith(str(fmt))]
        msg = f"must be one of {', '.join(repr(f) for f in FORMATS)}. Got {fmt!r} instead."
        if hints:
            msg += f" Did you mean {' or '.join(repr(h) for h in hints)}?"
        raise ConfigError(source, f"{kp}.format", msg)
    if "train" not in node:
        raise ConfigError(source, kp, "a file spec needs 'train' (the training file; "
                                      "'test' is optional)")
    train = _check_str(node["train"], f"{kp}.train", source)
    test = _check_str(node["test"], f"{kp}.test", source) if "test" in node else None
    task = _check_task(node["task"], fmt, f"{kp}.task", source) if "task" in node \
        else FORMATS[fmt]
    options = _format_options(node, fmt, source, kp)
    _check_bins(task, options, source, kp)
    n_labels = as_int(node["n_labels"], f"{kp}.n_labels", source, minimum=1) \
        if "n_labels" in node else None
    n_features = as_int(node["n_features"], f"{kp}.n_features", source, minimum=1) \
        if "n_features" in node else None
    xml = _check_str(node["xml"], f"{kp}.xml", source) if "xml" in node else None
    name = _check_str(node["name"], f"{kp}.name", source) if "name" in node \
        else _default_name(train)
    files = (("train", train),) + ((("test", test),) if test else ())
    return DatasetSpec(name=name, kind="files", format=fmt, task=task, files=files,
                       n_labels=n_labels, n_features=n_features, xml=xml, options=options,
                       named="name" in node, source=source, key_path=key_path)


def _formats_with(opt: str) -> str:
    names = [repr(f) for f, opts in FORMAT_OPTIONS.items() if opt in opts]
    return names[0] if len(names) == 1 else f"{', '.join(names[:-1])} and {names[-1]}"


#: File-name endings dropped, in this order, from a train file's name to name a file spec.
_SUFFIXES = (".gz", *dict.fromkeys(s for f in formats() for s in f.suffixes))


def _default_name(train: str) -> str:
    """``data/bibtex-train.arff.gz`` -> ``bibtex``; ``bibtex/train.svm`` -> ``bibtex``."""
    path = Path(train)
    name = path.name
    for suffix in _SUFFIXES:
        if name.endswith(suffix):
            name = name[: -len(suffix)]
    for sep in ("-", "_", "."):
        if name.lower().endswith(sep + "train"):
            name = name[: -len(sep + "train")]
    if name.lower() in ("", "train"):
        name = path.parent.name
    return name or "data"


def _from_synthetic(node: dict, source, key_path) -> DatasetSpec:
    kp = f"{key_path}.synthetic"
    params = node["synthetic"]
    if params is None:
        params = {}
    if not isinstance(params, dict):
        raise ConfigError(source, kp, f"must be a mapping of generator parameters. "
                                      f"Got {params!r} instead.")
    if "like" in params:
        return _from_xmc_synthetic(node, params, source, key_path)
    task = params.get("task", "multilabel")
    if task not in _SYNTH_KEYS:
        raise ConfigError(source, f"{kp}.task", f"must be 'multilabel' or 'multiclass'. "
                                                f"Got {task!r} instead.")
    check_keys(params, _SYNTH_KEYS[task], kp, source)
    values = dict(_SYNTH_DEFAULTS[task])
    for key, value in params.items():
        if key == "task":
            continue
        if key in _INT_MIN:
            values[key] = as_int(value, f"{kp}.{key}", source, minimum=_INT_MIN[key])
        else:
            values[key] = _check_float(value, f"{kp}.{key}", source, *_FLOAT_RANGE[key])
    _check_synthetic_size(task, values, source, kp)
    default_name = "synthetic" if task == "multilabel" else "synthetic-multiclass"
    name = _check_str(node["name"], f"{key_path}.name", source) if "name" in node \
        else default_name
    return DatasetSpec(name=name, kind="synthetic", format=None, task=task,
                       params=(("task", task),) + tuple(sorted(values.items())),
                       source=source, key_path=key_path)


def _check_synthetic_size(task: str, values: dict, source, kp) -> None:
    """Refuse up front generator parameters whose data would not fit in memory."""
    from mlx.data.lineparse import available_memory
    from mlx.data.synthetic import memory_bytes

    need = memory_bytes(task, values)
    avail, where = available_memory()
    if need > avail:
        per_row = max(1, memory_bytes(task, {**values, "n_samples": 1, "n_test": 0}))
        hint = (f"use at most {avail // per_row} rows (n_samples + n_test)"
                if avail >= 2 * per_row else "use fewer features and labels (or classes)")
        raise ConfigError(source, kp, f"{values['n_samples'] + values['n_test']} rows would "
                                      f"need about {_bytes(need)} of memory to generate, more "
                                      f"than the {_bytes(avail)} available ({where}); {hint}")


def _bytes(n: float) -> str:
    for unit in ("B", "kB", "MB", "GB", "TB", "PB"):
        if n < 1000 or unit == "PB":
            return f"{n:.1f} {unit}" if unit != "B" else f"{int(n)} B"
        n /= 1000
    return ""  # pragma: no cover


_XMC_KEYS = ("like", "scale", "dims_scale", "seed")


def _from_xmc_synthetic(node: dict, params: dict, source, key_path) -> DatasetSpec:
    """``{synthetic: {like: eurlex, scale, dims_scale, seed}}``: an XMC-shaped problem of
    :mod:`mlx.data.xmc_synth`, generated in memory (the same data ``mlx datasets synth``
    writes to files)."""
    from mlx.data.xmc_synth import SynthTooLargeError, check_resources, synth_spec

    kp = f"{key_path}.synthetic"
    check_keys(params, _XMC_KEYS, kp, source)
    try:
        spec = synth_spec(params["like"], params.get("scale", 1.0), params.get("seed", 0),
                          dims_scale=params.get("dims_scale", 1.0))
        check_resources(spec, purpose="memory")
    except SynthTooLargeError as exc:
        raise ConfigError(source, kp, exc.message) from None
    except ConfigError as exc:
        key = "like" if exc.key_path == "--like" else exc.key_path
        raise ConfigError(source, f"{kp}.{key}", exc.message) from None
    name = _check_str(node["name"], f"{key_path}.name", source) if "name" in node \
        else f"{spec.like}-synth"
    values = (("like", spec.like), ("scale", spec.scale), ("dims_scale", spec.dims_scale),
              ("seed", spec.seed))
    return DatasetSpec(name=name, kind="synthetic", format="xmc", task="multilabel",
                       params=(("task", "multilabel"),) + values, source=source,
                       key_path=key_path)


def resolve_dataset(node, *, source: str | None = None, key_path: str = "dataset") -> DatasetSpec:
    """Validate a config's ``dataset:`` value and turn it into a :class:`DatasetSpec`.

    Accepted forms::

        bibtex                                     # a registered name
        {name: bibtex}                             # the same
        {name: bank-8fm, task: ordinal, bins: 10}  # a registered regression set, binned
        {format: arff, train: PATH, test: PATH, n_labels: 159, xml: PATH, name: NAME}
        {format: libsvm-multilabel, train: ..., test: ..., n_features: D, n_labels: L}
        {format: libsvm-multiclass, train: ..., test: ..., n_features: D}
        {format: xc, train: ..., test: ...}        # widths from the header
        {format: mldr, train: PATH.rda}            # an R mldr object (mlx.data.rda)
        {format: arff-regression, train: ..., n_targets: T, missing: error|nan}
        {format: csv, train: ..., test: ..., sep: ',', header: true, target: NAME|COLUMN,
         missing: error|nan, task: regression|ordinal|multiclass}
        {synthetic: {n_samples, n_test, n_features, n_labels, rank, density,
                     positive_fraction, label_noise, seed}, name: NAME}
        {synthetic: {task: multiclass, n_samples, n_test, n_features, n_classes, class_sep,
                     seed}}
        {synthetic: {like: eurlex|nus-wide|wiki, scale, dims_scale, seed}}   # XMC-shaped

    A file spec may set ``task`` to any task its format can be read as (:data:`FORMAT_TASKS`);
    the format's options are listed in :data:`FORMAT_OPTIONS` (``csv``: ``sep``, one character,
    ``' '`` meaning any run of blanks, default ``','``; ``header``, default true; ``target``, a
    header name or a 1-based column number, default the last column; ``missing``, default
    ``error``; ``arff-regression``: ``n_targets``, the last ``n_targets`` attributes are the
    targets, default 1, and ``missing``; both formats: ``bins``, which with ``task: ordinal``
    cuts the single real target into that many equal-frequency levels 1..bins, edges at the
    quantiles of the target over all rows of the dataset, before any split, the way the
    ordinal versions of the Delve and StatLib sets are defined). A registry entry sets the same
    keys; a registered name may take ``task`` and ``bins`` beside it. ``arff`` needs
    ``n_labels`` or ``xml`` unless, when loading, the file's relation name has MEKA's ``-C``
    option or a Mulan ``<name>.xml`` sits beside the train file (:mod:`mlx.data.arff`).

    Explicit file paths are taken as given when absolute; relative ones are looked up in the
    current directory, then on the data search path. File existence is checked when loading,
    not here.

    Raises
    ------
    ConfigError
        Unknown keys (with a suggestion and the valid keys), wrong types or ranges (naming the
        dotted key path), unknown dataset names (:class:`~mlx.errors.UnknownNameError`).
    """
    if isinstance(node, str):
        return _from_registry(node, source, key_path)
    if not isinstance(node, dict):
        raise ConfigError(source, key_path, "must be a registered dataset name, {name: NAME}, "
                                            "a file spec {format, train, test, ...} or "
                                            f"{{synthetic: {{...}}}}. Got {node!r} instead.")
    check_keys(node, _ALL_KEYS, key_path, source)
    if "synthetic" in node:
        extra = sorted(set(node) - {"synthetic", "name"})
        if extra:
            raise ConfigError(source, f"{key_path}.{extra[0]}",
                              "cannot be combined with 'synthetic' (a synthetic dataset takes "
                              "only 'synthetic' and 'name')")
        return _from_synthetic(node, source, key_path)
    if "name" in node and "format" not in node and set(node) <= {"name",
                                                                   *_REGISTRY_OVERRIDES}:
        name = node["name"]
        if not isinstance(name, str):
            raise ConfigError(source, f"{key_path}.name", f"must be a registered dataset name. "
                                                          f"Got {name!r} instead.")
        overrides = {k: v for k, v in node.items() if k != "name"}
        return _from_registry(name, source, f"{key_path}.name", overrides)
    if not node:
        raise ConfigError(source, key_path, "is empty; give a registered dataset name, a file "
                                            "spec {format, train, test, ...} or "
                                            "{synthetic: {...}}")
    return _from_files(node, source, key_path)
