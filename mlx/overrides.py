"""Command-line overrides of config keys: ``key.path=value``.

``mlx run configs/bibtex.yaml seed=3 methods[1].params.l2_reg=1`` reads the YAML file, sets
each key path in the parsed mapping and validates the result exactly as if the file had said
so: the same checks, key paths and "did you mean" suggestions. Values are YAML, read as in a config
file (``3`` is an int, ``0.1`` a float, ``[0.2, 0.4]`` a list, ``null`` removes the value).

Key paths are dotted mapping keys with ``[i]`` list indices (0-based, as in every config
error message). A mapping on the way is created when absent (``sweep.repetitions=3`` in a
config without ``sweep``); a list index must exist.
"""

from __future__ import annotations

import copy
import re

import yaml

from mlx.errors import ConfigError
from mlx.validation import _Loader, shown, type_name

__all__ = ["Override", "parse_override", "apply_overrides", "is_override"]

_KEY = re.compile(r"[A-Za-z_][A-Za-z0-9_\-@]*")
_INDEX = re.compile(r"\[(\d+)\]")
EXAMPLE = "e.g. seed=3 or methods[1].params.l2_reg=1"


class Override:
    """One parsed ``key.path=value``: ``steps`` are keys (str) and list indices (int)."""

    def __init__(self, text: str, steps: tuple, value):
        self.text = text
        self.steps = steps
        self.value = value

    def __repr__(self) -> str:
        return f"Override({self.text!r})"


def is_override(arg: str) -> bool:
    """Whether a command-line argument is meant as an override (``key=value``)."""
    key = arg.split("=", 1)[0]
    return "=" in arg and bool(key) and "/" not in key and not key.endswith((".yaml", ".yml"))


def _path_text(steps) -> str:
    out = ""
    for s in steps:
        out += f"[{s}]" if isinstance(s, int) else (f".{s}" if out else s)
    return out


def parse_override(text: str) -> Override:
    """``"methods[1].params.l2_reg=1"`` -> steps ``("methods", 1, "params", "l2_reg")``, 1."""
    if "=" not in text:
        raise ConfigError(None, None,
                          f"override {shown(text)}: expected key.path=value ({EXAMPLE})")
    key, value_text = text.split("=", 1)
    steps, pos = [], 0
    while pos < len(key):
        if key[pos] == "[":
            m = _INDEX.match(key, pos)
            if not m or not steps:
                break
            steps.append(int(m.group(1)))
            pos = m.end()
            continue
        if steps:
            if key[pos] != ".":
                break
            pos += 1
        m = _KEY.match(key, pos)
        if not m:
            break
        steps.append(m.group(0))
        pos = m.end()
    if not steps or pos != len(key):
        raise ConfigError(None, None, f"override {shown(text)}: {shown(key)} is not a key path "
                                      f"(dotted keys with [i] list indices; {EXAMPLE})")
    try:
        value = yaml.load(value_text, Loader=_Loader) if value_text.strip() else None  # noqa: S506
    except ConfigError as exc:
        raise ConfigError(None, None, f"override {shown(text)}: {exc.message}") from None
    except yaml.YAMLError as exc:
        first = str(getattr(exc, "problem", None) or exc).splitlines()[0]
        raise ConfigError(None, None, f"override {shown(text)}: the value is not valid YAML: "
                                      f"{first}") from None
    return Override(text, tuple(steps), value)


def apply_overrides(raw, overrides, source: str | None):
    """A copy of ``raw`` (a parsed config or spec) with every override set, in order."""
    raw = copy.deepcopy(raw)
    for ov in overrides:
        if not isinstance(ov, Override):
            ov = parse_override(ov)
        node = raw
        for depth, step in enumerate(ov.steps):
            last = depth == len(ov.steps) - 1
            here = _path_text(ov.steps[:depth]) or None
            if isinstance(step, int):
                if not isinstance(node, list):
                    raise ConfigError(source, here, f"is of type {type_name(node)}, not a list; "
                                                    f"override {shown(ov.text)} cannot index it")
                if step >= len(node):
                    raise ConfigError(source, _path_text(ov.steps[:depth + 1]),
                                      f"index out of range in override {shown(ov.text)}: "
                                      f"{here} has {len(node)} entries (indices from 0)")
            elif not isinstance(node, dict):
                raise ConfigError(source, here,
                                  f"is of type {type_name(node)}, not a mapping; override "
                                  f"{shown(ov.text)} cannot set {step!r} in it")
            if last:
                node[step] = ov.value
            else:
                if isinstance(step, str) and node.get(step) is None:
                    node[step] = [] if isinstance(ov.steps[depth + 1], int) else {}
                node = node[step]
    return raw
