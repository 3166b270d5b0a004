"""Loading datasets: find a :class:`~mlx.data.spec.DatasetSpec`'s files, verify and parse
them, through the caches.

:func:`load_split` gives the train/test split, :func:`load_full` all the rows, and
:func:`find_files` lists the files that are missing. The pieces live in their own modules:

* :mod:`mlx.data.paths`: the data search path (``MLX_DATA_PATH``, ``./datasets``,
  ``$MLX_HOME/datasets``) and where the caches live;
* :mod:`mlx.data.registry`: the packaged dataset registry;
* :mod:`mlx.data.spec`: :func:`resolve_dataset`, from a config's ``dataset:`` to a
  :class:`DatasetSpec`;
* :mod:`mlx.data.cache`: content checksums, the parsed-data cache and the in-memory memo.
* :mod:`mlx.data.formats`: the data formats, each with its reader (and writer).

Their public names are importable from here too.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import time
import zipfile
from pathlib import Path

from mlx.data.cache import (
    PARSER_VERSION,
    clear_memo,
    content_sha256,
    load_parsed,
    memo_get,
    memo_put,
    parsed_path,
    save_parsed,
)
from mlx.data.dataset import Dataset, Split
from mlx.data.formats import get_format
from mlx.data.lineparse import checksum_verified
from mlx.data.paths import (
    cache_dir,
    describe_search_path,
    find_file,
    mlx_home,
    search_path,
    user_data_dir,
)
from mlx.data.registry import dataset_info, get_entry, list_datasets, registry
from mlx.data.spec import FORMAT_OPTIONS, FORMAT_TASKS, FORMATS, DatasetSpec, resolve_dataset
from mlx.errors import ConfigError, DataFormatError, DataNotFoundError
from mlx.lazy import lazy_module

sp = lazy_module("scipy.sparse")

__all__ = [
    # loading (this module)
    "load_split",
    "load_full",
    "find_files",
    # re-exported
    "PARSER_VERSION",
    "FORMATS",
    "FORMAT_TASKS",
    "FORMAT_OPTIONS",
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
    "content_sha256",
    "identify",
    "resolve_dataset",
    "clear_memo",
]

log = logging.getLogger(__name__)


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


def _base_dir(spec: DatasetSpec) -> Path:
    """Relative paths of a file spec are relative to the config file's directory (the
    current directory for a spec that comes from no file)."""
    return Path(spec.source).resolve().parent if spec.source else Path.cwd()


def _locate_user_file(given: str, spec: DatasetSpec, what: str) -> Path:
    p = Path(given).expanduser()
    if p.is_absolute():
        if p.is_file():
            return p
    else:
        here = _base_dir(spec) / p
        if here.is_file():
            return here
        found = find_file(given)
        if found is not None:
            return found
    if spec.source:
        where = f"config key {spec.key_path}.{what} in {spec.source}"
        base = "paths are relative to the config file"
    else:  # a spec from the command line or from code: relative to the current directory
        where = f"the {what} file"
        base = "the current directory"
    hint = ""
    if not p.is_absolute():
        hint = (f"; looked in {_base_dir(spec)} ({base}) and on the data path "
                f"({describe_search_path()})")
        if spec.source and p.is_file():
            hint += (f"; {given} exists relative to the current directory: write "
                     f"{os.path.relpath(p.resolve(), _base_dir(spec))} instead")
    raise DataNotFoundError(f"{given}: file not found ({where}){hint}")


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
def identify(spec: DatasetSpec) -> DatasetSpec:
    """``spec`` with the content checksums of its files (explicit files only; registered and
    synthetic data are identified already).

    The sha256 of each file's content (decompressed if gzip; remembered by path, size and
    mtime, :func:`content_sha256`) and of an ARFF file's Mulan label list (``xml``, given or
    found beside the train file). Cells are keyed and seeded by these, so an edited file
    recomputes and the same bytes anywhere give the same cells. A missing file raises
    :class:`DataNotFoundError` as loading would.
    """
    if spec.kind != "files":
        return spec
    from dataclasses import replace

    paths = {r: _locate_user_file(spec.file(r), spec, r) for r in spec.roles}
    xml = _locate_user_file(spec.xml, spec, "xml") if spec.xml else None
    xml = xml or _mulan_xml_beside(spec, paths, None)
    shas = [(r, content_sha256(p)) for r, p in paths.items()]
    if xml is not None:
        shas.append(("xml", content_sha256(xml)))
    return replace(spec, checksums=tuple(shas))


def _mulan_xml_beside(spec: DatasetSpec, paths: dict, xml: Path | None) -> Path | None:
    """For a file spec without ``xml``: the label list beside the train file, if its format
    has one (ARFF: the Mulan XML)."""
    if spec.kind != "files" or xml is not None:
        return None
    find = get_format(spec.format).find_beside
    if find is None:
        return None
    found = find(paths.get("train") or next(iter(paths.values())))
    if found is not None:
        log.info("dataset '%s': checking the labels against %s, found beside the data",
                 spec.name, found)
    return found


def _parse(spec: DatasetSpec, paths: dict, xml: Path | None, beside: Path | None) -> dict:
    """Read the files of ``paths`` (role -> path) with the spec's format's reader, then cut
    a real target into ordinal levels if ``bins`` says so."""
    options = dict(spec.options)
    bins = options.pop("bins", None)
    parts = get_format(spec.format).read(spec, paths, options, xml, beside)
    parts = dict(zip(paths, parts))
    if bins is not None:
        from mlx.data.ordinal import bin_parts

        parts = bin_parts(parts, bins, where=next(iter(paths.values())))
    return parts


def _load_parts(spec: DatasetSpec, roles, *, cache: bool) -> dict:
    """Locate, verify, parse (or fetch from the caches) the files of ``roles``."""
    if spec.kind == "registry":
        paths = _locate_registry(spec, roles)
        xml = None
    else:
        paths = {r: _locate_user_file(spec.file(r), spec, r) for r in roles}
        xml = _locate_user_file(spec.xml, spec, "xml") if spec.xml else None
    beside = _mulan_xml_beside(spec, paths, xml)

    shas = {}
    expected = dict(spec.checksums)
    for role, path in paths.items():
        shas[role] = content_sha256(path)
        if role in expected and shas[role] != expected[role]:
            if spec.kind == "files":  # identified at the start of the run
                raise DataFormatError(
                    path, None, f"content sha256 {shas[role][:16]}... is not the "
                                f"{expected[role][:16]}... it had when the run started; the "
                                f"file changed during the run: run again")
            raise DataFormatError(
                path, None, f"content sha256 {shas[role][:16]}... does not match the "
                            f"registry's {expected[role][:16]}... (dataset '{spec.name}', "
                            f"{role} file); the file is damaged or a different version: "
                            f"delete it and run 'mlx datasets fetch {spec.name}'")
    key_doc = json.dumps({"parser": PARSER_VERSION, "format": spec.format, "name": spec.name,
                          "task": spec.task, "options": [list(o) for o in spec.options],
                          "n_labels": spec.n_labels, "n_features": spec.n_features,
                          "files": [[r, shas[r]] for r in roles],
                          "xml": content_sha256(xml or beside) if xml or beside else None},
                         sort_keys=True)
    key = hashlib.sha256(key_doc.encode()).hexdigest()[:32]

    parts = memo_get(key) if cache else None
    if parts is not None:
        return parts
    npz = parsed_path(key)
    if cache and npz.is_file():
        try:
            parts = load_parsed(npz)
            log.debug("dataset '%s': loaded the parsed cache %s", spec.name, npz)
        except (OSError, ValueError, KeyError, zipfile.BadZipFile) as exc:
            log.debug("ignoring the damaged cache file %s: %s", npz, exc)
            parts = None
    if parts is None:
        t0 = time.perf_counter()
        # A registered file was just checked against its published checksum: a missing final
        # newline is then how the source ships it, not a sign of truncation.
        with checksum_verified(spec.kind == "registry"):
            parts = _parse(spec, paths, xml, beside)
        log.debug("dataset '%s': parsed %s in %.2f s", spec.name,
                  ", ".join(str(p) for p in paths.values()), time.perf_counter() - t0)
        if cache:
            try:
                save_parsed(npz, parts)
            except OSError as exc:
                log.warning("cannot write the parsed-data cache %s: %s", npz, exc)
    if cache:
        memo_put(key, parts)
    after_load = get_format(spec.format).after_load
    if after_load is not None:                       # on every load, cached or not
        after_load(list(parts.values()), paths[roles[0]])
    return parts


def _synthetic(spec: DatasetSpec) -> Split:
    from mlx.data.synthetic import make_low_rank_multilabel, make_multiclass

    params = dict(spec.params)
    task = params.pop("task")
    if spec.format == "xmc":
        from mlx.data.xmc_synth import generate, synth_spec

        like, scale, seed = params.pop("like"), params.pop("scale"), params.pop("seed")
        return generate(synth_spec(like, scale, seed, **params), name=spec.name)
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
        split = memo_get(key) if cache else None
        if split is None:
            split = _synthetic(spec)
            if cache:
                memo_put(key, split)
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
