"""Reading numpydoc docstrings for the command line (``mlx methods NAME``).

Only what the listings need: the one-line meaning of each parameter, i.e. the first sentence
of its description in the ``Parameters`` section.
"""

from __future__ import annotations

import inspect
import re

__all__ = ["first_sentence", "parameter_meanings"]

_RULE = re.compile(r"^\s*-{3,}\s*$")
_PARAM = re.compile(r"^([A-Za-z_]\w*(?:\s*,\s*[A-Za-z_]\w*)*)\s*(?::.*)?$")
_ROLE = re.compile(r":[\w:]+:`([^`]*)`")
_CODE = re.compile(r"``([^`]*)``|`([^`]*)`")
_ABBREVIATIONS = ("e.g.", "i.e.", "etc.", "cf.", "vs.", "approx.", "resp.")


def first_sentence(text: str) -> str:
    """The first sentence of ``text`` with reST markup removed (``x``, :func:`x` -> x).

    A sentence ends at ``.``, ``!`` or ``?`` followed by white space or the end, outside
    parentheses and not after an abbreviation such as "e.g.".
    """
    text = " ".join(text.split())
    text = _ROLE.sub(r"\1", text)
    text = _CODE.sub(lambda m: m.group(1) if m.group(1) is not None else m.group(2), text)
    depth = 0
    for i, c in enumerate(text):
        if c in "([{":
            depth += 1
        elif c in ")]}":
            depth = max(0, depth - 1)
        elif c in ".!?" and depth == 0 and (i + 1 == len(text) or text[i + 1] == " "):
            words = text[:i + 1].rsplit(None, 1)
            if words and words[-1].lower() in _ABBREVIATIONS:
                continue
            return text[:i + 1]
    return text


def parameter_meanings(doc: str | None) -> dict[str, str]:
    """``{name: first sentence of its description}`` from a numpydoc ``Parameters`` section.

    ``a, b : float`` gives both names the same meaning; a parameter without a description
    maps to ``""``. Lines of the section that are not ``name : type`` entries or their
    indented descriptions (a closing paragraph, say) are skipped. A docstring without the
    section gives ``{}``.
    """
    lines = inspect.cleandoc(doc or "").splitlines()
    start = next((i + 2 for i in range(len(lines) - 1)
                  if lines[i].strip() == "Parameters" and _RULE.match(lines[i + 1])), None)
    if start is None:
        return {}
    out: dict[str, str] = {}
    base = None
    names: list[str] = []
    para: list[str] = []

    def close():
        for n in names:
            out[n] = first_sentence(" ".join(para))

    for i in range(start, len(lines)):
        line = lines[i]
        if not line.strip():
            if para:                       # only the first paragraph of a description
                close()
                names, para = [], []
            continue
        if i + 1 < len(lines) and _RULE.match(lines[i + 1]):
            break                          # the next section's heading
        indent = len(line) - len(line.lstrip())
        if base is None:
            base = indent
        if indent > base:
            if names:
                para.append(line.strip())
            continue
        close()
        para = []
        match = _PARAM.match(line.strip()) if indent == base else None
        names = [n.strip() for n in match.group(1).split(",")] if match else []
    close()
    return out
