"""A small name -> object registry with suggestions for typos."""

from __future__ import annotations

from typing import Generic, TypeVar

from mlx.errors import UnknownNameError

T = TypeVar("T")

__all__ = ["Registry"]


class Registry(Generic[T]):
    """Maps lower-case names to objects (classes or functions).

    ``register(name)`` is a decorator; a duplicate name raises ``ValueError``.
    ``get(name)`` raises :class:`~mlx.errors.UnknownNameError` listing the
    available names and the closest match.
    """

    def __init__(self, kind: str):
        self.kind = kind
        self._items: dict[str, T] = {}

    def register(self, name: str):
        def deco(obj: T) -> T:
            if name in self._items:
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
            raise UnknownNameError(self.kind, str(name), self._items, source=source,
                                   key_path=key_path) from None

    def __contains__(self, name) -> bool:
        return name in self._items

    def names(self) -> list[str]:
        return sorted(self._items)
