"""Detect another distribution installed under the import name ``mlx``.

This project is the distribution ``mlx-multilabel``; its import package is ``mlx``. Apple's
array framework is the distribution ``mlx`` on PyPI and installs the same import package.
In one environment the two overwrite each other's files (``mlx/__init__.py``,
``mlx/__main__.py``), and every command would fail with an unrelated ``AttributeError``.
The command line calls :func:`clash_message` first and prints its one line instead.
"""

from __future__ import annotations

import importlib.machinery
import os
import re
import sys

__all__ = ["DIST_NAME", "FOREIGN_DIST", "clash_message", "own_version"]

DIST_NAME = "mlx-multilabel"
FOREIGN_DIST = "mlx"
FIX = ("install mlx-multilabel in a separate environment (python -m venv .venv-mlx && "
       ".venv-mlx/bin/pip install mlx-multilabel), or pip uninstall mlx if Apple's framework "
       "is not needed there")


def _dist_version(name: str) -> str | None:
    import importlib.metadata  # 20 ms of imports (email, zipfile, ...): only when needed

    try:
        return importlib.metadata.version(name)
    except importlib.metadata.PackageNotFoundError:
        return None


def _may_be_installed(name: str) -> bool:
    """False only when no entry of ``sys.path`` can hold metadata of distribution ``name``.

    A quick look at the directory names, as :mod:`importlib.metadata` reads them (a
    ``<name>[-version].dist-info`` or ``.egg-info`` child, the name normalised as PEP 503 with
    underscores), so that the usual answer, no such distribution, costs no import of
    :mod:`importlib.metadata`. Anything this look cannot rule out (a zip file or an egg on
    the path, a finder of distributions other than the standard one) counts as maybe.
    """
    for finder in sys.meta_path:
        if finder is not importlib.machinery.PathFinder and \
                hasattr(finder, "find_distributions"):
            return True
    for entry in sys.path:
        root = entry or "."
        if root.lower().endswith(".egg"):
            return True
        try:
            children = os.listdir(root)
        except NotADirectoryError:          # a zip file on the path
            return True
        except OSError:                     # missing or unreadable: importlib skips it too
            continue
        for child in children:
            low = child.lower()
            if low.endswith((".dist-info", ".egg-info")) and re.sub(
                    r"[-_.]+", "_", low.rpartition(".")[0].partition("-")[0]) == name:
                return True
    return False


def own_version() -> str:
    """This program's version: the package's ``__version__``, else the distribution's."""
    module = sys.modules.get("mlx")
    version = getattr(module, "__version__", None)
    return version or _dist_version(DIST_NAME) or "unknown"


def clash_message() -> str | None:
    """One line naming both distributions and the fix, or None when ``mlx`` is ours alone.

    A clash is either a distribution named ``mlx`` in the environment's metadata (Apple's
    framework, whatever its files did to ours) or an ``mlx`` module without this package's
    ``__version__`` (a foreign package shadowing ours on the path).
    """
    foreign = _dist_version(FOREIGN_DIST) if _may_be_installed(FOREIGN_DIST) else None
    if foreign is not None:
        return (f"the distributions {DIST_NAME} (this program) and {FOREIGN_DIST} {foreign} "
                f"(Apple's array framework) are both installed in {sys.prefix} and share the "
                f"import name 'mlx'; {FIX}")
    import mlx

    if getattr(mlx, "__version__", None) is None:
        where = getattr(mlx, "__file__", None) or ", ".join(getattr(mlx, "__path__", []) or [])
        return (f"the module 'mlx' at {where or '?'} is not {DIST_NAME}'s (another package, "
                f"such as the distribution {FOREIGN_DIST}, Apple's array framework, uses the "
                f"import name 'mlx'); {FIX}")
    return None
