"""Where dataset files and caches live, and the search path for dataset files.

Search path
-----------
A registered file ``bibtex/bibtex-train.arff.gz`` is looked up, in order, in

1. every directory of ``MLX_DATA_PATH`` (separated by ``os.pathsep``),
2. ``./datasets``,
3. the user data directory ``$MLX_HOME/datasets`` (default ``~/.cache/mlx/datasets``), where
   :func:`mlx.data.fetch.fetch` writes.

``<dir>/<relpath>`` is found when it exists; the same name without or with ``.gz`` is accepted
too (the readers detect gzip by its magic bytes).
"""

from __future__ import annotations

import os
from pathlib import Path

__all__ = [
    "mlx_home",
    "user_data_dir",
    "cache_dir",
    "search_path",
    "describe_search_path",
    "find_file",
]


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
