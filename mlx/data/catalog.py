"""Dataset catalog: the registry, the data search path, dataset specs from configs, and
cached loading.

Search path
-----------
A registered file ``bibtex/bibtex-train.arff.gz`` is looked up, in order, in

1. every directory of ``MLX_DATA_PATH`` (separated by ``os.pathsep``),
2. ``./datasets``,
3. the user data directory ``$MLX_HOME/datasets`` (default ``~/.cache/mlx/datasets``), where
   :func:`mlx.data.fetch.fetch` writes.

``<dir>/<relpath>`` is found when it exists; the same name without or with ``.gz`` is accepted
too (the readers detect gzip by its magic bytes).

Caches (all under ``$MLX_HOME/cache``, default ``~/.cache/mlx/cache``)
--------------------------------------------------------------------
* ``sha256-index.json``: content checksums keyed by (absolute path, size, mtime), so a file is
  hashed once, not on every load.
* ``parsed/<key>.npz``: parsed matrices, keyed by the content checksums of the files, the
  format, its options and :data:`PARSER_VERSION`. Written atomically (temporary file, then
  ``os.replace``), so concurrent loaders never see a partial file; a damaged cache file is
  ignored and rewritten.
* In each process, the last few loaded splits are kept in memory (:func:`clear_memo`). They
  are shared: do not modify their matrices in place.
"""

from __future__ import annotations

import copy
import functools
import hashlib
import importlib.resources
import json
import logging
import numbers
import os
import tempfile
import time
import zipfile
from collections import OrderedDict
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import scipy.sparse as sp
import yaml

from mlx.data.dataset import Dataset, Split
from mlx.errors import (
    ConfigError,
    DataFormatError,
    DataNotFoundError,
    UnknownNameError,
    suggest,
)

__all__ = [
    "PARSER_VERSION",
    "FORMATS",
    "DatasetSpec",
    "registry",
    "list_datasets",
    "dataset_info",
    "get_entry",
    "mlx_home",
    "user_data_dir",
    "cache_dir",
    "search_path",
    "describe_search_path",
    "find_file",
    "find_files",
    "content_sha256",
    "resolve_dataset",
    "load_split",
    "load_full",
    "clear_memo",
]

log = logging.getLogger(__name__)

#: Bump when a reader changes what it returns, to invalidate cached parses.
PARSER_VERSION = 1

#: Explicit-file formats and the task each one yields.
FORMATS = {
    "arff": "multilabel",
    "arff-regression": "regression",
    "libsvm-multilabel": "multilabel",
    "libsvm-multiclass": "multiclass",
    "xc": "multilabel",
}

_MEMO_SIZE = 4
_memo: OrderedDict = OrderedDict()


# ----------------------------------------------------------------------------- locations
def mlx_home() -> Path:
    """``$MLX_HOME``, default ``~/.cache/mlx``."""
    return Path(os.environ.get("MLX_HOME") or "~/.cache/mlx").expanduser()


def user_data_dir() -> Path:
    """Where fetched datasets go: ``$MLX_HOME/datasets``."""
    return mlx_home() / "datasets"


def cache_dir() -> Path:
    """Checksum index and parsed-data cache: ``$MLX_HOME/cache``."""
    return mlx_home() / "cache"


def _env_data_path() -> list[Path]:
    value = os.environ.get("MLX_DATA_PATH", "")
    return [Path(p).expanduser() for p in value.split(os.pathsep) if p]


def search_path() -> list[Path]:
    """Directories searched for dataset files, in order (see the module docstring)."""
    return _env_data_path() + [Path.cwd() / "datasets", user_data_dir()]


def _tilde(path: Path) -> str:
    home = Path.home()
    try:
        return "~/" + str(path.relative_to(home))
    except ValueError:
        return str(path)


def describe_search_path() -> str:
    """``MLX_DATA_PATH=..., ./datasets, ~/.cache/mlx/datasets``, for messages."""
    env = os.environ.get("MLX_DATA_PATH") or "unset"
    return f"MLX_DATA_PATH={env}, ./datasets, {_tilde(user_data_dir())}"


def _variants(relpath: str) -> list[str]:
    if relpath.endswith(".gz"):
        return [relpath, relpath[:-3]]
    return [relpath, relpath + ".gz"]


def find_file(relpath: str, dirs=None) -> Path | None:
    """First ``<dir>/<relpath>`` (or the name without/with ``.gz``) that exists, or None."""
    for d in (search_path() if dirs is None else dirs):
        for name in _variants(relpath):
            candidate = Path(d) / name
            if candidate.is_file():
                return candidate
    return None


# ----------------------------------------------------------------------------- registry
@functools.lru_cache(maxsize=1)
def registry() -> dict:
    """The packaged dataset registry (``mlx/data/registry.yaml``): name -> entry.

    The same dict is returned on every call.
    """
    text = importlib.resources.files("mlx.data").joinpath("registry.yaml").read_text("utf-8")
    return yaml.safe_load(text)["datasets"]


def list_datasets() -> list[str]:
    """Names of the registered datasets, sorted."""
    return sorted(registry())


def get_entry(name: str, *, source: str | None = None, key_path: str | None = None) -> dict:
    """The registry entry of ``name``; raises :class:`~mlx.errors.UnknownNameError`."""
    reg = registry()
    if not isinstance(name, str) or name not in reg:
        raise UnknownNameError("dataset", str(name), reg, source=source, key_path=key_path)
    return reg[name]


def dataset_info(name: str) -> dict:
    """A copy of the registry entry of ``name``, plus ``name`` and a summary ``source``
    (``repository`` and ``commit``; comma-joined when the files come from several)."""
    entry = copy.deepcopy(get_entry(name))
    entry["name"] = name
    repos, commits = [], []
    for f in entry.get("files", {}).values():
        src = f.get("source") or {}
        if src.get("repository") and src["repository"] not in repos:
            repos.append(src["repository"])
        if src.get("commit") and src["commit"] not in commits:
            commits.append(src["commit"])
    entry["source"] = {"repository": ", ".join(repos), "commit": ", ".join(commits)}
    return entry


# ----------------------------------------------------------------------------- specs
@dataclass(frozen=True)
class DatasetSpec:
    """What a config's ``dataset:`` resolves to.

    ``kind`` is ``"registry"``, ``"files"`` or ``"synthetic"``. ``files`` holds
    ``(role, path)`` pairs (roles ``train``, ``test``, ``data``): relative paths on the data
    search path for registry datasets, paths as written in the config for explicit files.
    ``checksums`` holds the registry's ``(role, sha256)`` pairs; ``params`` the synthetic
    generator's arguments. ``source`` and ``key_path`` only serve messages.
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

    def key(self) -> str:
        """Canonical JSON identifying the data (name, format, files, checksums, options,
        generator parameters, parser version); equal keys mean equal data."""
        return json.dumps({
            "name": self.name, "kind": self.kind, "format": self.format, "task": self.task,
            "files": [list(p) for p in self.files], "checksums": [list(c) for c in self.checksums],
            "n_labels": self.n_labels, "n_features": self.n_features, "xml": self.xml,
            "params": [list(p) for p in self.params], "parser": PARSER_VERSION,
        }, sort_keys=True, separators=(",", ":"))


_FILE_KEYS = ("name", "format", "train", "test", "n_labels", "n_features", "xml")
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


def _unknown_keys(node: dict, valid, path: str, source) -> None:
    for key in node:
        if key not in valid:
            hint = suggest(str(key), valid)
            msg = f"unknown key '{path}.{key}'."
            if hint:
                msg += f" Did you mean '{path}.{hint}'?"
            msg += f" Valid keys under '{path}': {', '.join(sorted(valid))}"
            raise ConfigError(source, None, msg)


def _check_int(value, path, source, minimum: int) -> int:
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < minimum:
        raise ConfigError(source, path, f"must be an int >= {minimum}. Got {value!r} instead.")
    return int(value)


def _check_float(value, path, source, low, high, low_open, high_open) -> float:
    ok = isinstance(value, numbers.Real) and not isinstance(value, bool)
    if ok:
        v = float(value)
        ok = (v > low if low_open else v >= low) and (v < high if high_open else v <= high)
    if not ok:
        rng = f"{'(' if low_open else '['}{low:g}, {high:g}{')' if high_open else ']'}"
        raise ConfigError(source, path, f"must be a float in the range {rng}. "
                                        f"Got {value!r} instead.")
    return float(value)


def _check_str(value, path, source) -> str:
    if not isinstance(value, str) or not value.strip():
        raise ConfigError(source, path, f"must be a non-empty string. Got {value!r} instead.")
    return value


def _from_registry(name: str, source, key_path) -> DatasetSpec:
    entry = get_entry(name, source=source, key_path=key_path)
    roles = [r for r in ("train", "test", "data") if r in entry["files"]]
    return DatasetSpec(
        name=name, kind="registry", format=entry["format"],
        task=entry.get("task", FORMATS[entry["format"]]),
        files=tuple((r, entry["files"][r]["path"]) for r in roles),
        checksums=tuple((r, entry["files"][r]["sha256"]) for r in roles),
        n_labels=entry.get("n_labels"), n_features=entry.get("n_features"),
        source=source, key_path=key_path)


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
    allowed = {
        "arff": {"n_labels", "xml"},
        "libsvm-multilabel": {"n_labels", "n_features"},
        "libsvm-multiclass": {"n_features"},
        "arff-regression": set(),
        "xc": set(),
    }[fmt]
    why = {"n_labels": "the number of labels", "n_features": "the number of features",
           "xml": "a Mulan XML label list"}
    for opt in ("n_labels", "n_features", "xml"):
        if opt in node and opt not in allowed:
            raise ConfigError(source, f"{kp}.{opt}", f"is not used with format {fmt!r} "
                                                     f"({why[opt]} is only set for "
                                                     f"{_formats_with(opt)})")
    n_labels = _check_int(node["n_labels"], f"{kp}.n_labels", source, 1) \
        if "n_labels" in node else None
    n_features = _check_int(node["n_features"], f"{kp}.n_features", source, 1) \
        if "n_features" in node else None
    xml = _check_str(node["xml"], f"{kp}.xml", source) if "xml" in node else None
    if fmt == "arff" and n_labels is None and xml is None:
        raise ConfigError(source, kp, "format 'arff' needs 'n_labels' (the last n_labels "
                                      "attributes are the labels) or 'xml' (the Mulan label "
                                      "list)")
    name = _check_str(node["name"], f"{kp}.name", source) if "name" in node \
        else _default_name(train)
    files = (("train", train),) + ((("test", test),) if test else ())
    return DatasetSpec(name=name, kind="files", format=fmt, task=FORMATS[fmt], files=files,
                       n_labels=n_labels, n_features=n_features, xml=xml, source=source,
                       key_path=key_path)


def _formats_with(opt: str) -> str:
    return {"n_labels": "'arff' and 'libsvm-multilabel'",
            "n_features": "'libsvm-multilabel' and 'libsvm-multiclass'",
            "xml": "'arff'"}[opt]


def _default_name(train: str) -> str:
    """``data/bibtex-train.arff.gz`` -> ``bibtex``; ``bibtex/train.svm`` -> ``bibtex``."""
    path = Path(train)
    name = path.name
    for suffix in (".gz", ".arff", ".svm", ".txt", ".libsvm", ".scale"):
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
    task = params.get("task", "multilabel")
    if task not in _SYNTH_KEYS:
        raise ConfigError(source, f"{kp}.task", f"must be 'multilabel' or 'multiclass'. "
                                                f"Got {task!r} instead.")
    _unknown_keys(params, _SYNTH_KEYS[task], kp, source)
    values = dict(_SYNTH_DEFAULTS[task])
    for key, value in params.items():
        if key == "task":
            continue
        if key in _INT_MIN:
            values[key] = _check_int(value, f"{kp}.{key}", source, _INT_MIN[key])
        else:
            values[key] = _check_float(value, f"{kp}.{key}", source, *_FLOAT_RANGE[key])
    default_name = "synthetic" if task == "multilabel" else "synthetic-multiclass"
    name = _check_str(node["name"], f"{key_path}.name", source) if "name" in node \
        else default_name
    return DatasetSpec(name=name, kind="synthetic", format=None, task=task,
                       params=(("task", task),) + tuple(sorted(values.items())),
                       source=source, key_path=key_path)


def resolve_dataset(node, *, source: str | None = None, key_path: str = "dataset") -> DatasetSpec:
    """Validate a config's ``dataset:`` value and turn it into a :class:`DatasetSpec`.

    Accepted forms::

        bibtex                                     # a registered name
        {name: bibtex}                             # the same
        {format: arff, train: PATH, test: PATH, n_labels: 159, xml: PATH, name: NAME}
        {format: libsvm-multilabel, train: ..., test: ..., n_features: D, n_labels: L}
        {format: libsvm-multiclass, train: ..., test: ..., n_features: D}
        {format: xc, train: ..., test: ...}        # widths from the header
        {format: arff-regression, train: ...}
        {synthetic: {n_samples, n_test, n_features, n_labels, rank, density,
                     positive_fraction, label_noise, seed}, name: NAME}
        {synthetic: {task: multiclass, n_samples, n_test, n_features, n_classes, class_sep,
                     seed}}

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
    _unknown_keys(node, _ALL_KEYS, key_path, source)
    if "synthetic" in node:
        extra = sorted(set(node) - {"synthetic", "name"})
        if extra:
            raise ConfigError(source, f"{key_path}.{extra[0]}",
                              "cannot be combined with 'synthetic' (a synthetic dataset takes "
                              "only 'synthetic' and 'name')")
        return _from_synthetic(node, source, key_path)
    if set(node) == {"name"}:
        name = node["name"]
        if not isinstance(name, str):
            raise ConfigError(source, f"{key_path}.name", f"must be a registered dataset name. "
                                                          f"Got {name!r} instead.")
        return _from_registry(name, source, f"{key_path}.name")
    if not node:
        raise ConfigError(source, key_path, "is empty; give a registered dataset name, a file "
                                            "spec {format, train, test, ...} or "
                                            "{synthetic: {...}}")
    return _from_files(node, source, key_path)


# ----------------------------------------------------------------------------- checksums
def _atomic_write_bytes(path: Path, write) -> None:
    """Call ``write(fileobj)`` on a temporary file next to ``path``, then rename it."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as fh:
            write(fh)
        os.chmod(tmp, 0o644)  # mkstemp creates 0600
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def _sha_index_path() -> Path:
    return cache_dir() / "sha256-index.json"


def _read_sha_index() -> dict:
    try:
        with open(_sha_index_path(), encoding="utf-8") as fh:
            index = json.load(fh)
        return index if isinstance(index, dict) else {}
    except (OSError, ValueError):
        return {}


def content_sha256(path) -> str:
    """sha256 of the file's content, decompressed if it is gzip.

    Remembered in ``$MLX_HOME/cache/sha256-index.json`` by (absolute path, size, mtime), so
    an unchanged file is hashed once.
    """
    from mlx.data.libsvm import reading

    path = Path(path).resolve()
    st = path.stat()
    stamp = [st.st_size, st.st_mtime_ns]
    index = _read_sha_index()
    hit = index.get(str(path))
    if isinstance(hit, list) and len(hit) == 3 and hit[:2] == stamp:
        return hit[2]
    h = hashlib.sha256()
    with reading(path) as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            h.update(chunk)
    digest = h.hexdigest()
    index = _read_sha_index()  # re-read: another process may have added entries
    index[str(path)] = stamp + [digest]
    try:
        _atomic_write_bytes(_sha_index_path(),
                            lambda fh: fh.write(json.dumps(index, indent=0).encode()))
    except OSError as exc:
        log.debug("cannot update the checksum index: %s", exc)
    return digest


# ----------------------------------------------------------------------------- locating
def _locate_registry(spec: DatasetSpec, roles) -> dict:
    out = {}
    for role in roles:
        rel = spec.file(role)
        path = find_file(rel)
        if path is None:
            raise DataNotFoundError(
                f"dataset '{spec.name}': file {rel} not found on the data path "
                f"({describe_search_path()}); run 'mlx datasets fetch {spec.name}' or set "
                "MLX_DATA_PATH")
        out[role] = path
    return out


def _locate_user_file(given: str, spec: DatasetSpec, what: str) -> Path:
    p = Path(given).expanduser()
    if p.is_absolute():
        if p.is_file():
            return p
    else:
        if p.is_file():
            return p
        found = find_file(given)
        if found is not None:
            return found
    where = f"config key {spec.key_path}.{what}"
    if spec.source:
        where += f" in {spec.source}"
    looked = "" if p.is_absolute() else (f"; also looked on the data path "
                                         f"({describe_search_path()})")
    raise DataNotFoundError(f"{given}: file not found ({where}){looked}")


def find_files(spec: DatasetSpec) -> list[str]:
    """The files of ``spec`` that cannot be found (empty when all are present).

    Registry datasets: relative paths of missing train/test/data files; explicit files: the
    paths as given; synthetic data: always empty.
    """
    if spec.kind == "synthetic":
        return []
    missing = []
    for role, rel in spec.files:
        if spec.kind == "registry":
            if find_file(rel) is None:
                missing.append(rel)
        else:
            try:
                _locate_user_file(rel, spec, role)
            except DataNotFoundError:
                missing.append(rel)
    if spec.xml:
        try:
            _locate_user_file(spec.xml, spec, "xml")
        except DataNotFoundError:
            missing.append(spec.xml)
    return missing


# ----------------------------------------------------------------------------- parsing
def _parse(spec: DatasetSpec, paths: dict, xml: Path | None) -> dict:
    from mlx.data import arff, libsvm, xc_repo

    roles = list(paths)
    files = [paths[r] for r in roles]
    fmt = spec.format
    if fmt == "arff":
        parts = arff.read_mulan_files(files, n_labels=spec.n_labels, xml=xml, name=spec.name)
    elif fmt == "arff-regression":
        parts = arff.read_regression_files(files, name=spec.name)
    elif fmt in ("libsvm-multilabel", "libsvm-multiclass"):
        parts = libsvm.read_libsvm_files(files, task=FORMATS[fmt], n_features=spec.n_features,
                                         n_labels=spec.n_labels, name=spec.name)
    elif fmt == "xc":
        parts = xc_repo.read_xc_files(files, name=spec.name)
    else:  # pragma: no cover - resolve_dataset validates formats
        raise ValueError(f"unknown format {fmt!r}")
    return dict(zip(roles, parts))


def _save_npz(path: Path, parts: dict) -> None:
    arrays = {}
    meta = {"roles": list(parts), "parts": {}}
    for role, ds in parts.items():
        for mat_name in ("X", "Y"):
            M = getattr(ds, mat_name)
            arrays[f"{role}.{mat_name}.data"] = M.data
            arrays[f"{role}.{mat_name}.indices"] = M.indices
            arrays[f"{role}.{mat_name}.indptr"] = M.indptr
            arrays[f"{role}.{mat_name}.shape"] = np.asarray(M.shape, dtype=np.int64)
        meta["parts"][role] = {"name": ds.name, "task": ds.task,
                               "label_names": list(ds.label_names)
                               if ds.label_names is not None else None}
    arrays["meta"] = np.array(json.dumps(meta))
    _atomic_write_bytes(path, lambda fh: np.savez(fh, **arrays))


def _load_npz(path: Path) -> dict:
    with np.load(path, allow_pickle=False) as z:
        meta = json.loads(str(z["meta"]))
        parts = {}
        for role in meta["roles"]:
            mats = {}
            for mat_name in ("X", "Y"):
                shape = tuple(int(s) for s in z[f"{role}.{mat_name}.shape"])
                mats[mat_name] = sp.csr_matrix((z[f"{role}.{mat_name}.data"],
                                                z[f"{role}.{mat_name}.indices"],
                                                z[f"{role}.{mat_name}.indptr"]), shape=shape)
            m = meta["parts"][role]
            names = tuple(m["label_names"]) if m["label_names"] is not None else None
            parts[role] = Dataset(X=mats["X"], Y=mats["Y"], name=m["name"], task=m["task"],
                                  label_names=names)
    return parts


def clear_memo() -> None:
    """Forget the splits kept in memory by this process."""
    _memo.clear()


def _memo_get(key):
    if key in _memo:
        _memo.move_to_end(key)
        return _memo[key]
    return None


def _memo_put(key, value) -> None:
    _memo[key] = value
    _memo.move_to_end(key)
    while len(_memo) > _MEMO_SIZE:
        _memo.popitem(last=False)


def _load_parts(spec: DatasetSpec, roles, *, cache: bool) -> dict:
    """Locate, verify, parse (or fetch from the caches) the files of ``roles``."""
    if spec.kind == "registry":
        paths = _locate_registry(spec, roles)
        xml = None
    else:
        paths = {r: _locate_user_file(spec.file(r), spec, r) for r in roles}
        xml = _locate_user_file(spec.xml, spec, "xml") if spec.xml else None

    shas = {}
    expected = dict(spec.checksums)
    for role, path in paths.items():
        shas[role] = content_sha256(path)
        if role in expected and shas[role] != expected[role]:
            raise DataFormatError(
                path, None, f"content sha256 {shas[role][:16]}... does not match the "
                            f"registry's {expected[role][:16]}... (dataset '{spec.name}', "
                            f"{role} file); the file is damaged or a different version: "
                            f"delete it and run 'mlx datasets fetch {spec.name}'")
    key_doc = json.dumps({"parser": PARSER_VERSION, "format": spec.format, "name": spec.name,
                          "n_labels": spec.n_labels, "n_features": spec.n_features,
                          "files": [[r, shas[r]] for r in roles],
                          "xml": content_sha256(xml) if xml else None}, sort_keys=True)
    key = hashlib.sha256(key_doc.encode()).hexdigest()[:32]

    parts = _memo_get(key) if cache else None
    if parts is not None:
        return parts
    npz = cache_dir() / "parsed" / f"{key}.npz"
    if cache and npz.is_file():
        try:
            parts = _load_npz(npz)
            log.debug("dataset '%s': loaded the parsed cache %s", spec.name, npz)
        except (OSError, ValueError, KeyError, zipfile.BadZipFile) as exc:
            log.debug("ignoring the damaged cache file %s: %s", npz, exc)
            parts = None
    if parts is None:
        t0 = time.perf_counter()
        parts = _parse(spec, paths, xml)
        log.debug("dataset '%s': parsed %s in %.2f s", spec.name,
                  ", ".join(str(p) for p in paths.values()), time.perf_counter() - t0)
        if cache:
            try:
                _save_npz(npz, parts)
            except OSError as exc:
                log.warning("cannot write the parsed-data cache %s: %s", npz, exc)
    if cache:
        _memo_put(key, parts)
    return parts


def _synthetic(spec: DatasetSpec) -> Split:
    from mlx.data.synthetic import make_low_rank_multilabel, make_multiclass

    params = dict(spec.params)
    task = params.pop("task")
    make = make_low_rank_multilabel if task == "multilabel" else make_multiclass
    return make(**params, name=spec.name)


def load_split(spec: DatasetSpec, *, cache: bool = True) -> Split:
    """Load the train/test split described by ``spec``.

    Files are found on the search path, registry files are checked against their sha256,
    and the parsed result is cached on disk and in memory (see the module docstring);
    ``cache=False`` parses afresh and writes no cache.

    Raises
    ------
    DataNotFoundError
        A file is missing (the message says how to get it).
    DataFormatError
        A file is malformed (file:line) or does not match its registered checksum.
    ConfigError
        The dataset has no official train/test split (use :func:`load_full`).
    """
    if spec.kind == "synthetic":
        key = spec.key()
        split = _memo_get(key) if cache else None
        if split is None:
            split = _synthetic(spec)
            if cache:
                _memo_put(key, split)
        return split
    if not spec.has_split:
        only = ", ".join(p for _, p in spec.files)
        raise ConfigError(spec.source, spec.key_path,
                          f"'{spec.name}' has no train/test split (only {only}); "
                          "choose a dataset with train and test files")
    parts = _load_parts(spec, ("train", "test"), cache=cache)
    return Split(train=parts["train"], test=parts["test"], name=spec.name)


def load_full(spec: DatasetSpec, *, cache: bool = True) -> Dataset:
    """All the rows of ``spec`` as one Dataset: the ``data`` file, or train followed by test
    (or train alone when there is no test file)."""
    if spec.kind == "synthetic":
        split = load_split(spec, cache=cache)
        parts = {"train": split.train, "test": split.test}
    else:
        roles = ("data",) if "data" in spec.roles else tuple(
            r for r in ("train", "test") if r in spec.roles)
        parts = _load_parts(spec, roles, cache=cache)
    if len(parts) == 1:
        return next(iter(parts.values()))
    first = next(iter(parts.values()))
    return Dataset(X=sp.vstack([p.X for p in parts.values()], format="csr"),
                   Y=sp.vstack([p.Y for p in parts.values()], format="csr"),
                   name=first.name, task=first.task, label_names=first.label_names)
