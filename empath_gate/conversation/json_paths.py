"""Paths into a JSON response: dotted (``data.reply``, ``choices.0.message.content``) or a small
subset of JSONPath (``$.data.reply``, ``$.choices[0].message.content``, ``$.messages[*].text``).

Pure functions; nothing here does I/O.

Grammar (what :func:`parse_path` accepts):

* **dotted**: names separated by ``.``; a name made of digits (``0``, ``-1``) indexes a list
  (on a mapping it is a key); ``*`` takes every item of a list (or every value of a mapping).
* **JSONPath subset** (starts with ``$``): ``.name``, ``['name']`` or ``["name"]`` (any key,
  dots included), ``[0]`` / ``[-1]`` (list index, negative from the end), ``[*]`` or ``.*``
  (every item). ``$`` alone is the whole document. Filters (``[?(...)]``), slices
  (``[0:2]``), unions and recursive descent (``..``) are not supported: a path using them is
  refused with the reason (a ValueError naming the path).

A step is a ``str`` (a key; a digit string also indexes a list), an ``int`` (a list index,
JSONPath brackets only) or :data:`WILDCARD`.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any, Final

WILDCARD: Final = "*"
"""The step that takes every item of a list or every value of a mapping."""

Step = str | int
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_-]*")
_DIGITS = re.compile(r"-?[0-9]+")
_BRACKET = re.compile(r"""\[\s*(?:(-?[0-9]+)|'((?:[^'\\]|\\.)*)'|"((?:[^"\\]|\\.)*)"|(\*))\s*\]""")


def _dotted(path: str) -> tuple[Step, ...]:
    parts = path.split(".")
    if any(not p.strip() for p in parts):
        raise ValueError(f"path {path!r}: an empty name between dots")
    return tuple(p.strip() for p in parts)


def _jsonpath(path: str) -> tuple[Step, ...]:
    steps: list[Step] = []
    i = 1
    while i < len(path):
        if path.startswith("..", i):
            raise ValueError(f"path {path!r}: recursive descent '..' is not supported")
        if path[i] == ".":
            if path.startswith("*", i + 1):
                steps.append(WILDCARD)
                i += 2
                continue
            m = _NAME.match(path, i + 1)
            if not m:
                raise ValueError(f"path {path!r}: expected a name after '.' at character {i + 1}")
            steps.append(m.group(0))
            i = m.end()
            continue
        if path[i] == "[":
            m = _BRACKET.match(path, i)
            if not m:
                raise ValueError(
                    f"path {path!r}: unsupported bracket at character {i + 1} (use [0], [-1], [*] "
                    "or ['name']; filters, slices and unions are not supported)"
                )
            index, single, double, star = m.groups()
            if index is not None:
                steps.append(int(index))
            elif star is not None:
                steps.append(WILDCARD)
            else:
                raw = single if single is not None else double
                steps.append(re.sub(r"\\(.)", r"\1", raw or ""))
            i = m.end()
            continue
        raise ValueError(f"path {path!r}: unexpected {path[i]!r} at character {i + 1}")
    return tuple(steps)


def parse_path(path: str) -> tuple[Step, ...]:
    """The steps of ``path`` (module docstring); ``()`` for ``$`` (the whole document).
    Raises ValueError naming the path and what is wrong."""
    text = path.strip()
    if not text:
        raise ValueError("path is empty")
    if text.startswith("$"):
        return _jsonpath(text)
    return _dotted(text)


def _step(values: Iterable[Any], step: Step) -> list[Any]:
    out: list[Any] = []
    for v in values:
        if step == WILDCARD:
            if isinstance(v, list):
                out.extend(v)
            elif isinstance(v, dict):
                out.extend(v.values())
        elif isinstance(step, int):
            if isinstance(v, list) and -len(v) <= step < len(v):
                out.append(v[step])
        elif isinstance(v, dict):
            if step in v:
                out.append(v[step])
        elif isinstance(v, list) and _DIGITS.fullmatch(step):
            k = int(step)
            if -len(v) <= k < len(v):
                out.append(v[k])
    return out


def find_all(document: Any, steps: tuple[Step, ...]) -> list[Any]:
    """Every value at ``steps`` in ``document`` (parsed JSON), in document order; ``[]`` when
    the path leads nowhere (a missing key, an index out of range, a step into a scalar)."""
    values: list[Any] = [document]
    for step in steps:
        values = _step(values, step)
        if not values:
            return []
    return values


def has_wildcard(steps: tuple[Step, ...]) -> bool:
    """True when the path can match several values."""
    return WILDCARD in steps


__all__ = ["WILDCARD", "Step", "find_all", "has_wildcard", "parse_path"]
