"""The exception hierarchy of mlx.

Library code raises these; only :mod:`mlx.cli` turns them into one-line
``Error: ...`` messages and exit codes (2 for bad usage or configuration, 1 for a
failed run).
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable

__all__ = [
    "MlxError",
    "ConfigError",
    "UnknownNameError",
    "DataFormatError",
    "DataNotFoundError",
    "DivergenceError",
    "NotFittedError",  # noqa: F822 -- made by __getattr__ on first use (imports scikit-learn)
    "OutputError",
    "LinkRefusedError",
    "WriteFailedError",
    "Interrupted",
    "suggest",
]


def suggest(name: str, candidates: Iterable[str]) -> str | None:
    """Return the closest candidate to ``name`` (difflib), or None."""
    candidates = list(candidates)
    lowered = {str(c).lower(): c for c in candidates}
    match = difflib.get_close_matches(str(name).lower(), list(lowered), n=1, cutoff=0.6)
    return lowered[match[0]] if match else None


class MlxError(Exception):
    """Base class of every error mlx reports to users.

    ``exit_code`` is what the command line exits with: 2 for bad usage or
    configuration, 1 for a run that failed.
    """

    exit_code = 1


class ConfigError(MlxError):
    """A configuration value is wrong; names the file and the dotted key path."""

    exit_code = 2

    def __init__(self, source: str | None, key_path: str | None, message: str):
        self.source = source
        self.key_path = key_path
        self.message = message
        where = ": ".join(p for p in (source, key_path) if p)
        super().__init__(f"{where}: {message}" if where else message)


class UnknownNameError(ConfigError):
    """An unknown method, metric, dataset or other registered name."""

    def __init__(self, kind: str, name: str, available: Iterable[str], *,
                 source: str | None = None, key_path: str | None = None):
        available = sorted(available)
        self.kind = kind
        self.name = name
        self.available = available
        hint = suggest(name, available)
        msg = f"unknown {kind} {name!r}."
        if hint:
            msg += f" Did you mean {hint!r}?"
        plural = kind[:-2] + "es" if kind.endswith("is") else kind + "s"   # axis -> axes
        msg += f" Available {plural}: {', '.join(available)}"
        super().__init__(source, key_path, msg)


class DataFormatError(MlxError):
    """A data file is malformed; names the file and, where known, the line."""

    exit_code = 1

    def __init__(self, path, line_no: int | None, message: str):
        self.path = str(path)
        self.line_no = line_no
        self.message = message
        where = self.path if line_no is None else f"{self.path}:{line_no}"
        super().__init__(f"{where}: {message}")


class DataNotFoundError(MlxError):
    """A dataset file is not on the search path; the message says how to get it."""

    exit_code = 1


class DivergenceError(MlxError):
    """A fit produced non-finite parameters; the message carries advice."""

    exit_code = 1


def _not_fitted_error() -> type:
    # made on first use: scikit-learn is imported only by code that fits or checks methods
    from sklearn.exceptions import NotFittedError as _SklearnNotFittedError

    class NotFittedError(MlxError, _SklearnNotFittedError):
        """A method was used before ``fit`` (also scikit-learn's ``NotFittedError``, itself a
        ``ValueError`` and ``AttributeError``)."""

    NotFittedError.__module__, NotFittedError.__qualname__ = __name__, "NotFittedError"
    return NotFittedError


def __getattr__(name):
    if name == "NotFittedError":
        globals()[name] = cls = _not_fitted_error()
        return cls
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


class OutputError(MlxError):
    """The output directory cannot be written, or another run holds it."""

    exit_code = 2


class LinkRefusedError(OutputError, OSError):
    """A file or directory mlx would write is a symbolic link (or a second name of another
    file); mlx never writes through one. Also an :class:`OSError`, so code that tolerates a
    failed write of a cache tolerates this one alike."""

    exit_code = 2

    def __init__(self, path, what: str = "a symbolic link"):
        self.path = str(path)
        super().__init__(f"{path}: is {what}; mlx writes only files it creates itself and "
                         f"never follows or replaces links: remove it or choose another "
                         f"output directory")


class WriteFailedError(OutputError, OSError):
    """Writing a file failed on the way (a full disk, a file-size limit, an I/O error): the
    environment failed, not the input, so the exit status is 1. Also an :class:`OSError`."""

    exit_code = 1


class Interrupted(KeyboardInterrupt):
    """SIGINT or SIGTERM arrived during a run.

    A :class:`KeyboardInterrupt` (not an :class:`MlxError`), so that no cell records it as its
    own failure; the command line prints its message and exits with ``128 + signal``.
    """

    def __init__(self, signum: int, message: str = ""):
        import signal

        self.signum = signum
        self.exit_code = 128 + int(signum)
        self.message = message or f"interrupted by {signal.Signals(signum).name}"
        super().__init__(self.message)

    def __str__(self) -> str:
        return self.message

