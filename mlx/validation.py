"""Checks shared by everything a user writes: YAML files, keys, typed values, messages.

Configs, table specs, dataset specs and preprocessing steps all go through these, so every
one of them reports problems the same way: a one-line :class:`~mlx.errors.ConfigError`
naming the file and the dotted key path, what is wrong and what would be valid. Values shown
in messages are cut to :data:`MAX_SHOWN` characters, so a huge value never becomes a huge
"one-line" error.

YAML is read with two guards that PyYAML's ``safe_load`` lacks:

* a key given twice in one mapping is an error naming both lines (``safe_load`` keeps the
  last silently);
* aliases may not expand into more than :data:`MAX_NODES` nodes (a few kilobytes of nested
  aliases can otherwise expand into gigabytes: the "billion laughs").

Numbers in scientific notation are floats as in YAML 1.2 (``1e3``, ``1.0e6``, ``2.5E-4``);
YAML 1.1, which PyYAML follows, reads them as strings unless they have a dot and a signed
exponent (``1.0e+6``).
"""

from __future__ import annotations

import numbers
import os
import re
import stat

import yaml

from mlx.errors import ConfigError, suggest

__all__ = ["MAX_SHOWN", "MAX_NODES", "shown", "type_name", "read_yaml", "check_keys",
           "as_int", "as_float", "as_ratio", "as_bool", "as_str", "as_list", "as_str_list"]

MAX_SHOWN = 80
MAX_NODES = 100_000
MAX_YAML_BYTES = 16 << 20


def shown(value, limit: int = MAX_SHOWN) -> str:
    """``repr(value)``, cut to ``limit`` characters with a note of the full length."""
    text = repr(value)
    if len(text) <= limit:
        return text
    return f"{text[:limit]}... ({len(text)} characters)"


def type_name(value) -> str:
    return type(value).__name__ if value is not None else "null"


# ----------------------------------------------------------------------------- YAML
class _Loader(yaml.SafeLoader):
    """SafeLoader that refuses duplicate keys and runaway alias expansion."""

    def __init__(self, stream):
        super().__init__(stream)
        self._expanded = 0

    def construct_document(self, node):
        self._expanded = 0
        self._line = node.start_mark.line + 1
        if isinstance(node, yaml.MappingNode):      # report the top-level key that explodes
            for key, value in node.value:
                self._line = key.start_mark.line + 1
                self._count(key, set())
                self._count(value, set())
        else:
            self._count(node, set())
        return super().construct_document(node)

    def _count(self, node, stack: set) -> None:
        # Nodes as the document would expand them: an alias counts its whole subtree each
        # time it is used. Stop as soon as the limit is passed.
        self._expanded += 1
        if self._expanded > MAX_NODES:
            raise ConfigError(None, None,
                              f"line {self._line}: the document expands to more than "
                              f"{MAX_NODES} values (nested aliases?); write the values out")
        if id(node) in stack:   # a recursive alias: PyYAML builds a cycle; count it once
            return
        if isinstance(node, yaml.SequenceNode):
            stack.add(id(node))
            for child in node.value:
                self._count(child, stack)
            stack.discard(id(node))
        elif isinstance(node, yaml.MappingNode):
            stack.add(id(node))
            for key, value in node.value:
                self._count(key, stack)
                self._count(value, stack)
            stack.discard(id(node))

    def construct_mapping(self, node, deep=False):
        if isinstance(node, yaml.MappingNode):
            self.flatten_mapping(node)
            seen = {}
            for key_node, _ in node.value:
                try:
                    key = self.construct_object(key_node, deep=True)
                    hash(key)
                except TypeError:
                    continue                         # unhashable: the base class reports it
                line = key_node.start_mark.line + 1
                if key in seen:
                    raise ConfigError(None, None,
                                      f"line {line}: key {shown(key)} is given twice (first at "
                                      f"line {seen[key]}); give each key once")
                seen[key] = line
        return super().construct_mapping(node, deep=deep)


_Loader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG,
                        _Loader.construct_mapping)
# The YAML 1.2 core schema's float rule (after YAML 1.1's, which still reads 1_000.5 and
# 1.0e+6): the exponent's sign is optional and the dot is not needed.
_Loader.add_implicit_resolver(
    "tag:yaml.org,2002:float",
    re.compile(r"^[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)$"),
    list("-+0123456789."))


def read_yaml(path: str | os.PathLike, *, empty_hint: str):
    """Parse a YAML file; every problem is a one-line ConfigError naming the file.

    ``empty_hint`` completes the message for an empty file ("a config needs ...").
    """
    source = str(path)
    try:
        if not stat.S_ISREG(os.stat(path).st_mode) and not os.path.isdir(path):
            # a FIFO would block the read forever, a device never end
            raise ConfigError(source, None, "is not a regular file (a FIFO, a device or a "
                                            "socket); give a YAML file")
        with open(path, "rb") as fh:
            data = fh.read(MAX_YAML_BYTES + 1)
        if len(data) > MAX_YAML_BYTES:
            raise ConfigError(source, None, f"is larger than {MAX_YAML_BYTES // 2**20} MiB; a "
                                            f"YAML file of mlx is a few kilobytes")
    except FileNotFoundError:
        raise ConfigError(source, None, "file not found") from None
    except IsADirectoryError:
        raise ConfigError(source, None, "is a directory, not a YAML file") from None
    except OSError as exc:
        raise ConfigError(source, None, f"cannot read: {exc.strerror}") from None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data[:exc.start].count(b"\n") + 1
        raise ConfigError(source, None, f"line {line}: not UTF-8 text (byte "
                                        f"0x{data[exc.start]:02x}); save the file as UTF-8") \
            from None
    try:
        raw = yaml.load(text, Loader=_Loader)  # noqa: S506 - a SafeLoader subclass
    except ConfigError as exc:
        raise ConfigError(source, None, exc.message) from None
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark
        where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark else ""
        raise ConfigError(source, None, f"invalid YAML{where}: {exc.problem}") from None
    except yaml.YAMLError as exc:
        raise ConfigError(source, None, f"invalid YAML: {str(exc).splitlines()[0]}") from None
    except RecursionError:
        raise ConfigError(source, None, "invalid YAML: nested too deeply") from None
    if raw is None:
        raise ConfigError(source, None, f"the file is empty; {empty_hint}")
    return raw


# ----------------------------------------------------------------------------- keys and values
def _join(path: str, key) -> str:
    return f"{path}.{key}" if path else str(key)


def check_keys(node, valid, path: str, source) -> None:
    """``node`` must be a mapping whose keys are all in ``valid``; suggest the closest."""
    if not isinstance(node, dict):
        if path:
            raise ConfigError(source, path, f"must be a mapping, got {type_name(node)}")
        raise ConfigError(source, None, f"top level must be a mapping, got {type_name(node)}")
    for key in node:
        if key not in valid:
            hint = suggest(str(key), valid)
            msg = f"unknown key {shown(_join(path, key))}."
            if hint:
                msg += f" Did you mean {_join(path, hint)!r}?"
            under = f"under {path!r}" if path else "at the top level"
            raise ConfigError(source, None,
                              msg + f" Valid keys {under}: {', '.join(sorted(valid))}")


def as_int(value, path, source, *, minimum=None, maximum=None) -> int:
    ok = isinstance(value, numbers.Integral) and not isinstance(value, bool)
    if ok:
        ok = (minimum is None or value >= minimum) and (maximum is None or value <= maximum)
    if not ok:
        what = "an int"
        if minimum is not None and maximum is not None:
            what += f" in the range [{minimum}, {maximum}]"
        elif minimum is not None:
            what += f" >= {minimum}"
        elif maximum is not None:
            what += f" <= {maximum}"
        raise ConfigError(source, path, f"must be {what}. Got {shown(value)} instead.")
    return int(value)


def as_float(value, path, source, *, low=None, high=None, low_open=False,
             high_open=False) -> float:
    """A finite real number in the given range (bounds None: unbounded)."""
    ok = isinstance(value, numbers.Real) and not isinstance(value, bool)
    if ok:
        v = float(value)
        ok = v == v and v not in (float("inf"), float("-inf"))
        if ok and low is not None:
            ok = v > low if low_open else v >= low
        if ok and high is not None:
            ok = v < high if high_open else v <= high
    if not ok:
        if low is None and high is None:
            what = "a finite float"
        else:
            lb = "(" if low_open or low is None else "["
            rb = ")" if high_open or high is None else "]"
            what = (f"a float in the range {lb}{'-inf' if low is None else f'{low:g}'}, "
                    f"{'inf' if high is None else f'{high:g}'}{rb}")
        raise ConfigError(source, path, f"must be {what}. Got {shown(value)} instead.")
    return float(value)


def as_ratio(value, path, source, *, low_open=True) -> float:
    """A float in (0, 1] (``low_open``) or [0, 1]."""
    return as_float(value, path, source, low=0.0, high=1.0, low_open=low_open)


def as_bool(value, path, source) -> bool:
    if not isinstance(value, bool):
        raise ConfigError(source, path, f"must be true or false. Got {shown(value)} instead.")
    return value


def as_str(value, path, source) -> str:
    if not isinstance(value, str) or not value:
        raise ConfigError(source, path, f"must be a non-empty string. Got {shown(value)} "
                                        f"instead.")
    return value


def as_list(value, path, source) -> list:
    """A non-empty list; a single value becomes a one-element list."""
    if isinstance(value, (list, tuple)):
        if not value:
            raise ConfigError(source, path, "must be a non-empty list")
        return list(value)
    return [value]


def as_str_list(value, path, source) -> list[str]:
    """A non-empty list of strings (numbers are taken as their text)."""
    if isinstance(value, (str, numbers.Number)) and not isinstance(value, bool):
        value = [value]
    if not isinstance(value, list) or not value:
        raise ConfigError(source, path, "must be a non-empty list")
    out = []
    for i, v in enumerate(value):
        if isinstance(v, bool) or not isinstance(v, (str, numbers.Number)):
            raise ConfigError(source, f"{path}[{i}]", f"must be a string. Got {shown(v)} "
                                                      f"instead.")
        out.append(str(v))
    return out
