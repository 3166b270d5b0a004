"""Modules imported on first attribute access, so that start-up does not pay for them."""

from __future__ import annotations

import importlib
import types

__all__ = ["lazy_module"]


class _LazyModule(types.ModuleType):
    def __getattr__(self, attr):
        module = importlib.import_module(self.__name__)
        # The module's names, bound here once: later reads are plain attribute lookups.
        self.__dict__.update((k, v) for k, v in vars(module).items() if not k.startswith("__"))
        return getattr(module, attr)


def lazy_module(name: str) -> types.ModuleType:
    """A stand-in for ``import name``: the module is imported when an attribute is first read."""
    return _LazyModule(name)
