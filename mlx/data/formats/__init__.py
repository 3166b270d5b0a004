"""The data formats a file spec's ``format:`` can name, one module per format in this package.

Each module (``arff.py``, ``csv.py``, ...; names starting with ``_`` are not formats) defines
``FORMAT``, a :class:`Format`: its name, the tasks it can be read as, the file-spec options it
takes, its reader, a writer if ``mlx datasets convert --to`` can write it, and the words that
describe it in help texts. Everything that lists or reads formats -- the validation of a
config's ``dataset:`` (:mod:`mlx.data.spec`), loading (:mod:`mlx.data.catalog`) and the
command line's ``--format`` and ``--to`` -- asks this registry, so adding a format is adding a
module here (plus its reader, in the same module or beside the others in :mod:`mlx.data`).

Format modules import nothing heavy at module level: the registry is read when a config is
validated and when ``mlx --help`` runs; readers and writers load their code when called.
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache

__all__ = ["Format", "Option", "Writer", "formats", "get_format", "writers"]


@dataclass(frozen=True)
class Option:
    """A file-spec option that :mod:`mlx.data.spec` does not know yet, declared by the format
    that takes it: ``what`` it sets (for messages) and ``check(value, key_path, source)``,
    which returns the value to keep or raises :class:`~mlx.errors.ConfigError`."""

    name: str
    what: str
    check: Callable


@dataclass(frozen=True)
class Writer:
    """How ``mlx datasets convert --to NAME`` writes a :class:`~mlx.data.dataset.Dataset`.

    ``write(dataset, path) -> Path`` writes one file (atomically; gzip when ``path`` ends in
    ``.gz``); ``extension`` is the suffix of the files ``convert`` names; ``description``
    completes "Target format: ..." in the help text; ``order`` places the writer among the
    ``--to`` choices (the order they were added).
    """

    name: str
    extension: str
    write: Callable
    description: str
    order: int


@dataclass(frozen=True)
class Format:
    """One data format of a file spec (``dataset: {format: NAME, train: ..., ...}``).

    ``tasks``: the tasks the format can be read as (a file spec's or registry entry's
    ``task:``), the default first. ``options``: the file-spec keys it takes besides ``name``,
    ``format``, ``task``, ``train`` and ``test``: options of :mod:`mlx.data.spec`'s vocabulary,
    or new ones the format declares in ``new_options`` (:class:`Option`).
    ``read(spec, files, options, xml, xml_beside)`` returns one
    :class:`~mlx.data.dataset.Dataset` per file of ``files`` (paths, in the spec's role
    order), ``options`` the spec's format options as a dict (without ``bins``, which the
    loader applies to any real target), ``xml`` and ``xml_beside`` a label list given by the
    spec or found beside the data. ``suffixes``: the file-name endings of the format's files,
    dropped (after ``.gz``) from a train file's name to name a file spec that has no
    ``name``. Optional hooks: ``find_beside(path)`` finds such a label
    list beside the first data file of a file spec; ``after_load(parts, path)`` runs on every
    load, parsed or from the cache (e.g. a warning about the data). ``order`` places the
    format in messages and help texts (the order formats were added).
    """

    name: str
    description: str
    tasks: tuple[str, ...]
    read: Callable
    order: int
    options: tuple[str, ...] = ()
    suffixes: tuple[str, ...] = ()
    new_options: tuple[Option, ...] = ()
    writer: Writer | None = None
    find_beside: Callable | None = None
    after_load: Callable | None = None

    @property
    def default_task(self) -> str:
        return self.tasks[0]


@cache
def _registry() -> dict[str, Format]:
    found = []
    for module in pkgutil.iter_modules(__path__):
        if module.name.startswith("_"):
            continue
        fmt = importlib.import_module(f"{__name__}.{module.name}").FORMAT
        found.append(fmt)
    found.sort(key=lambda f: f.order)
    check_unique(found)
    return {f.name: f for f in found}


def check_unique(found) -> None:
    """Refuse two formats (or two writers) with one name or one ``order``."""
    groups = {"format": found, "writer": [f.writer for f in found if f.writer is not None]}
    for what, items in groups.items():
        for attr in ("name", "order"):
            values = [getattr(item, attr) for item in items]
            clash = sorted({v for v in values if values.count(v) > 1})
            if clash:
                raise RuntimeError(f"data formats: more than one {what} with {attr} "
                                   f"{clash[0]!r} (mlx/data/formats/)")


def formats() -> tuple[Format, ...]:
    """Every registered format, in the order of their ``order``."""
    return tuple(_registry().values())


def get_format(name: str) -> Format:
    """The format called ``name`` (``KeyError`` if none: :mod:`mlx.data.spec` validates
    names with the message users see)."""
    return _registry()[name]


def writers() -> tuple[Writer, ...]:
    """The writers of the formats that have one, in the order of their ``order``."""
    return tuple(sorted((f.writer for f in formats() if f.writer is not None),
                        key=lambda w: w.order))
