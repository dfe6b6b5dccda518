"""Read an instrument YAML file strictly, keeping the line of every value.

PyYAML's ``safe_load`` silently keeps the last of two equal keys and turns ``no``, ``on`` or
``2026-01-01`` into booleans and dates. :func:`read_yaml` instead:

* rejects a duplicate key in any mapping, naming both lines;
* resolves booleans as YAML 1.2 does (only ``true``/``false`` in any case pattern), so a
  Spanish ``no`` stays a string;
* keeps timestamps as strings (the models parse ISO dates), so the data is plain JSON and can
  be checked against a JSON Schema;
* returns a map from JSON pointer (RFC 6901) to 1-based line, so every error can name a line;
* reads within the limits of :mod:`empath_gate.bounded` (file size, value length, nesting,
  entries) and refuses anchors and aliases before any node is composed, so no walk or check
  ever follows an alias.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml
from yaml.constructor import ConstructorError
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from empath_gate.bounded import InputLimits, current_limits, read_bytes, scan_yaml
from empath_gate.instrument.yaml_events import build_from_events

_BOOL_TAG = "tag:yaml.org,2002:bool"
_TIMESTAMP_TAG = "tag:yaml.org,2002:timestamp"
_MERGE_TAG = "tag:yaml.org,2002:merge"


class _StrictMixin:
    """Duplicate-key rejection on top of PyYAML's SafeConstructor."""

    def construct_mapping(self, node: MappingNode, deep: bool = False) -> dict[Any, Any]:
        seen: dict[Any, int] = {}
        for key_node, _ in node.value:
            if key_node.tag == _MERGE_TAG:
                continue
            key = self.construct_object(key_node, deep=True)
            try:
                first = seen.get(key)
            except TypeError:  # unhashable key: let PyYAML report it
                continue
            line = key_node.start_mark.line + 1
            if first is not None:
                raise ConstructorError(
                    None,
                    None,
                    f"duplicate key {key!r} (first at line {first}) — keep one of them",
                    key_node.start_mark,
                )
            seen[key] = line
        return super().construct_mapping(node, deep=deep)  # type: ignore[misc, no-any-return]

    construct_object: Any


class StrictLoader(_StrictMixin, yaml.SafeLoader):
    """SafeLoader without YAML 1.1 booleans and timestamps, rejecting duplicate keys."""


_BaseFast: type[yaml.SafeLoader] = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class FastStrictLoader(_StrictMixin, _BaseFast):  # type: ignore[valid-type, misc]
    """The same rules over libyaml's parser when PyYAML was built with it (about 10x faster)."""


for _cls in (StrictLoader, FastStrictLoader):
    _cls.yaml_implicit_resolvers = {
        first: [(tag, rx) for tag, rx in resolvers if tag not in (_BOOL_TAG, _TIMESTAMP_TAG)]
        for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
    }
    _cls.add_implicit_resolver(
        _BOOL_TAG, re.compile(r"^(?:true|True|TRUE|false|False|FALSE)$"), list("tTfF")
    )


class YamlSyntaxError(Exception):
    """The file is not readable YAML (or has a duplicate key); ``line`` is 1-based."""

    def __init__(self, path: Path, line: int, message: str) -> None:
        super().__init__(f"{path}:{line}: {message}")
        self.path = path
        self.line = line
        self.message = message


def escape_pointer_token(token: str | int) -> str:
    """RFC 6901 escaping of one pointer token (``~`` -> ``~0``, ``/`` -> ``~1``)."""
    text = str(token)
    return text.replace("~", "~0").replace("/", "~1") if "~" in text or "/" in text else text


def pointer(parts: tuple[str | int, ...] | list[str | int]) -> str:
    """The JSON pointer of a path of keys and indices; ``""`` is the document root."""
    return "".join("/" + escape_pointer_token(p) for p in parts)


@dataclass(frozen=True)
class YamlDocument:
    """A parsed file: ``data`` (plain JSON types) and ``lines`` (JSON pointer -> 1-based line).

    A mapping entry's pointer maps to the line of its key; a sequence item's to its first line.
    """

    path: Path
    data: Any
    lines: Mapping[str, int] = field(default_factory=dict)

    def line_of(self, ptr: str) -> int:
        """The line of ``ptr``, or of its nearest ancestor that has one (1 for the root)."""
        p = ptr
        while True:
            if p in self.lines:
                return self.lines[p]
            if not p:
                return 1
            p = p.rsplit("/", 1)[0]


def _walk(root: Node, lines: dict[str, int]) -> None:
    """Record the line of every key and item below ``root`` (iterative: no recursion limit;
    anchors and aliases were refused before, so every node is visited once)."""
    stack: list[tuple[Node, str]] = [(root, "")]
    while stack:
        node, ptr = stack.pop()
        if isinstance(node, MappingNode):
            for key_node, value_node in node.value:
                if key_node.tag == _MERGE_TAG:
                    continue
                key = key_node.value if isinstance(key_node, ScalarNode) else str(key_node.start_mark)
                child = f"{ptr}/{escape_pointer_token(key)}"
                lines.setdefault(child, key_node.start_mark.line + 1)
                stack.append((value_node, child))
        elif isinstance(node, SequenceNode):
            for i, item in enumerate(node.value):
                child = f"{ptr}/{i}"
                lines.setdefault(child, item.start_mark.line + 1)
                stack.append((item, child))


def parse_yaml(text: str, path: Path, *, fast: bool = True, limits: InputLimits | None = None,
               events: bool = True) -> YamlDocument:
    """Parse ``text`` (the content of ``path``) strictly; raises :class:`YamlSyntaxError` with the
    line of a syntax error or duplicate key, :class:`~empath_gate.bounded.InputLimitError` for an
    anchor, an alias or a broken limit (``limits``, default the current ones). An empty document
    gives ``data = None``. ``fast=False`` forces the pure-Python parser; ``events=False`` the node
    way for every text (same results, used to test all of them): by default the text is read in
    one pass over its events (:mod:`empath_gate.instrument.yaml_events`), and the node way
    (limits scanned, a node tree composed, constructed and walked) takes only what that pass
    leaves to it."""
    lim = limits or current_limits()
    if events:
        loader = FastStrictLoader(text) if fast else StrictLoader(text)
        try:
            built = build_from_events(loader, str(path), lim)
        finally:
            loader.dispose()
        if built is not None:
            return YamlDocument(path, built[0], built[1])
    scan_yaml(text, str(path), lim, fast=fast)
    loader = FastStrictLoader(text) if fast else StrictLoader(text)
    try:
        node = loader.get_single_node()
        if node is None:
            return YamlDocument(path, None, {"": 1})
        data = loader.construct_document(node)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = mark.line + 1 if mark is not None else 1
        what = " ".join(x for x in (exc.context, exc.problem) if x)
        if isinstance(exc, ConstructorError):
            raise YamlSyntaxError(path, line, what) from exc
        raise YamlSyntaxError(
            path, line, f"YAML syntax error: {what} — check indentation, quoting and colons near this line"
        ) from exc
    except yaml.YAMLError as exc:
        raise YamlSyntaxError(path, 1, f"YAML error: {exc}") from exc
    finally:
        loader.dispose()
    lines: dict[str, int] = {"": node.start_mark.line + 1}
    _walk(node, lines)
    return YamlDocument(path, data, lines)


def read_yaml(path: Path, limits: InputLimits | None = None) -> YamlDocument:
    """Read and parse ``path`` (UTF-8); raises :class:`YamlSyntaxError` (line 1 for a file that
    is not UTF-8), :class:`~empath_gate.bounded.InputLimitError` (over ``max_yaml_bytes`` or
    another limit, an anchor or alias) or OSError when it cannot be read."""
    lim = limits or current_limits()
    raw = read_bytes(path, lim.max_yaml_bytes, "max_yaml_bytes")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        raise YamlSyntaxError(path, line, "not UTF-8 text — save the file as UTF-8") from exc
    return parse_yaml(text, path, limits=lim)
