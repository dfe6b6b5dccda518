"""Reading literal data out of Python source with :mod:`ast`, never importing or running it.

The published EMPATH instrument keeps its seeds and personas in Python modules: dict literals
with triple-quoted strings, lists of them, and ``Persona(...)`` calls whose ``category`` is an
enum attribute (``PersonaCategory.CRISIS``). :func:`parse_module` parses a file within the
input size limit; :func:`literal` turns one expression into plain data, accepting only what a
data file holds:

* constants (strings, numbers, booleans, ``None``), implicit and ``+`` string concatenation,
  f-strings without placeholders;
* lists, tuples, dicts with constant keys (``**`` unpacking is refused);
* an attribute of a known enum (``enums``: class name -> member -> value) as the member's value;
* a call of ``dict(...)`` with keyword arguments.

Anything else (a name, another call, a comprehension, a placeholder in an f-string) raises
:class:`Unreadable` with the line, so the caller reports the entry instead of dropping it.
"""

from __future__ import annotations

import ast
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from empath_gate.bounded import current_limits, read_bytes


class Unreadable(ValueError):
    """An expression that is not plain data: ``reason`` says what, ``line`` is 1-based."""

    def __init__(self, reason: str, line: int | None) -> None:
        self.reason, self.line = reason, line
        super().__init__(f"line {line}: {reason}" if line else reason)


def parse_module(path: Path) -> ast.Module:
    """The syntax tree of the Python file ``path``, read within ``max_yaml_bytes`` (the limit
    of instrument source files, :mod:`empath_gate.bounded`). Never executes it. Raises
    InputLimitError, OSError, UnicodeDecodeError (not UTF-8) or SyntaxError."""
    data = read_bytes(path, current_limits().max_yaml_bytes, "max_yaml_bytes")
    return ast.parse(data.decode("utf-8"), filename=str(path))


EnumValues = Mapping[str, Mapping[str, Any]]
"""Enum class name -> member name -> value (e.g. ``{"PersonaCategory": {"CRISIS": "crisis"}}``)."""


def _line(node: ast.AST) -> int | None:
    return getattr(node, "lineno", None)


def literal(node: ast.expr, enums: EnumValues | None = None) -> Any:
    """The plain value of ``node`` (module docstring for what is accepted). Raises Unreadable."""
    if isinstance(node, ast.Constant):
        return node.value
    if isinstance(node, ast.JoinedStr):
        parts = []
        for v in node.values:
            if not isinstance(v, ast.Constant):
                raise Unreadable("an f-string with a placeholder", _line(node))
            parts.append(str(v.value))
        return "".join(parts)
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        left, right = literal(node.left, enums), literal(node.right, enums)
        if isinstance(left, str) and isinstance(right, str):
            return left + right
        raise Unreadable("a '+' of values that are not both strings", _line(node))
    if isinstance(node, (ast.List, ast.Tuple)):
        return [literal(e, enums) for e in node.elts]
    if isinstance(node, ast.Dict):
        return _dict(node, enums)
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        value = literal(node.operand, enums)
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return -value
        raise Unreadable("a '-' before a value that is not a number", _line(node))
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
        members = (enums or {}).get(node.value.id)
        if members is not None and node.attr in members:
            return members[node.attr]
        raise Unreadable(f"{node.value.id}.{node.attr} is not a known enum member", _line(node))
    if (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id == "dict"
        and not node.args
    ):
        return keywords(node, enums)
    raise Unreadable(f"{type(node).__name__} is not a literal ({ast.unparse(node)[:60]!r})", _line(node))


def _dict(node: ast.Dict, enums: EnumValues | None) -> dict[Any, Any]:
    out: dict[Any, Any] = {}
    for k, v in zip(node.keys, node.values, strict=True):
        if k is None:
            raise Unreadable("'**' unpacking in a dict", _line(v))
        key = literal(k, enums)
        if key in out:
            raise Unreadable(f"the key {key!r} appears twice", _line(k))
        out[key] = literal(v, enums)
    return out


def keywords(call: ast.Call, enums: EnumValues | None = None) -> dict[str, Any]:
    """The keyword arguments of ``call`` as plain values; raises Unreadable for ``**kwargs``."""
    out: dict[str, Any] = {}
    for kw in call.keywords:
        if kw.arg is None:
            raise Unreadable("'**' unpacking in a call", _line(kw.value))
        out[kw.arg] = literal(kw.value, enums)
    return out


def assignments(module: ast.Module) -> dict[str, ast.expr]:
    """Top-level ``NAME = value`` and ``NAME: type = value`` of ``module``, name -> value node
    (a later assignment replaces an earlier one, as running the module would)."""
    out: dict[str, ast.expr] = {}
    for stmt in module.body:
        if isinstance(stmt, ast.Assign) and stmt.value is not None:
            for target in stmt.targets:
                if isinstance(target, ast.Name):
                    out[target.id] = stmt.value
        elif isinstance(stmt, ast.AnnAssign) and stmt.value is not None and isinstance(stmt.target, ast.Name):
            out[stmt.target.id] = stmt.value
    return out


def enum_values(module: ast.Module) -> dict[str, dict[str, Any]]:
    """Every top-level class of ``module`` deriving from ``Enum`` (any ``*Enum`` base), as
    class name -> member name -> literal value; members whose value is not a literal are left out."""
    out: dict[str, dict[str, Any]] = {}
    for stmt in module.body:
        if not isinstance(stmt, ast.ClassDef):
            continue
        bases = [
            b.id if isinstance(b, ast.Name) else b.attr if isinstance(b, ast.Attribute) else ""
            for b in stmt.bases
        ]
        if not any(b.endswith("Enum") for b in bases):
            continue
        members: dict[str, Any] = {}
        for item in stmt.body:
            if (
                isinstance(item, ast.Assign)
                and len(item.targets) == 1
                and isinstance(item.targets[0], ast.Name)
            ):
                try:
                    members[item.targets[0].id] = literal(item.value)
                except Unreadable:
                    continue
        out[stmt.name] = members
    return out


def dataclass_fields(module: ast.Module, class_name: str) -> list[str]:
    """The annotated field names of class ``class_name`` in ``module``, in order (the order a
    dataclass takes positional arguments in); ``[]`` when the class is absent."""
    for stmt in module.body:
        if isinstance(stmt, ast.ClassDef) and stmt.name == class_name:
            return [
                s.target.id
                for s in stmt.body
                if isinstance(s, ast.AnnAssign) and isinstance(s.target, ast.Name)
            ]
    return []


def line_of(node: ast.AST) -> int | None:
    """The 1-based line of ``node`` (None for nodes without one)."""
    return _line(node)
