"""A small name -> object registry with suggestions for typos."""

from __future__ import annotations

import importlib
from typing import Generic, TypeVar

from mlx.errors import UnknownNameError

T = TypeVar("T")

__all__ = ["Registry"]


class Registry(Generic[T]):
    """Maps lower-case names to objects (classes or functions).

    ``register(name)`` is a decorator; a duplicate name raises ``ValueError``.
    ``get(name)`` raises :class:`~mlx.errors.UnknownNameError` listing the
    available names and the closest match.
    ``register_lazy(name, module)`` announces a name whose module registers it
    when imported: the module is imported on the first ``get(name)`` only, so
    heavy libraries load when an object that needs them is used.
    """

    def __init__(self, kind: str):
        self.kind = kind
        self._items: dict[str, T] = {}
        self._lazy: dict[str, str] = {}

    def register_lazy(self, name: str, module: str) -> None:
        if name in self._items or name in self._lazy:
            raise ValueError(f"{self.kind} {name!r} is registered twice")
        self._lazy[name] = module

    def register(self, name: str):
        def deco(obj: T) -> T:
            if name in self._items or self._lazy.get(name, obj.__module__) != obj.__module__:
                raise ValueError(f"{self.kind} {name!r} is registered twice")
            self._items[name] = obj
            if isinstance(obj, type) and getattr(obj, "name", None) == "":
                obj.name = name  # classes learn their registry key
            return obj

        return deco

    def get(self, name: str, *, source: str | None = None, key_path: str | None = None) -> T:
        try:
            return self._items[name]
        except (KeyError, TypeError):
            pass
        if isinstance(name, str) and name in self._lazy:
            importlib.import_module(self._lazy[name])
            return self._items[name]
        raise UnknownNameError(self.kind, str(name), self.names(), source=source,
                               key_path=key_path) from None

    def __contains__(self, name) -> bool:
        return name in self._items or name in self._lazy

    def names(self) -> list[str]:
        return sorted({*self._items, *self._lazy})
