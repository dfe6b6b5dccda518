"""The instrument's YAML reader in one pass over parse events: data, lines and limits together.

:func:`empath_gate.instrument.yaml_io.parse_yaml` used to scan the events for the limits,
compose a node tree, construct the data from it and walk it again for the line of every value:
four passes, and a node (with two position marks) kept for every value of the file. On a 3 MB
layer of 19,000 minimal seeds that took about 3.5 s of CPU, this way about 0.7 s.
:func:`build_from_events` makes the same :class:`~empath_gate.instrument.yaml_io.YamlDocument`
in one pass: each event is checked by :func:`empath_gate.bounded.checked_events` (so the limits
and the refusal of anchors and aliases are the same) and goes straight into the data and the
line map.

It covers what instrument files are made of: one document of mappings with string keys,
sequences and scalars that are strings, null, booleans (YAML 1.2: ``true``/``false``), integers
or floats, resolved and constructed exactly as the strict loaders do. Anything else (an explicit
tag, a duplicate key, a key that is not a string, a merge key, a second document, a directive,
a syntax error) makes it return None, and the caller reads the text the node way, which gives
the same data for everything it accepts and the messages for everything it refuses. So this
reader can make reading faster, never different.
"""

from __future__ import annotations

from typing import Any

import yaml
from yaml.nodes import ScalarNode

from empath_gate.bounded import InputLimits, checked_events

_STR = "tag:yaml.org,2002:str"
_BUILT: dict[str, str] = {
    "tag:yaml.org,2002:null": "construct_yaml_null",
    "tag:yaml.org,2002:bool": "construct_yaml_bool",
    "tag:yaml.org,2002:int": "construct_yaml_int",
    "tag:yaml.org,2002:float": "construct_yaml_float",
}
"""The implicit scalar tags built here other than strings -> the SafeConstructor method."""


class _Unusual(Exception):
    """Something the one-pass reader leaves to the node way (module docstring)."""


def _resolved(loader: Any, event: Any, value: str, rules: list[tuple[str, Any]]) -> Any:
    """The value of a plain scalar that may not be a string, as the loader resolves and builds it."""
    for tag, rx in rules:
        if rx.match(value):
            method = _BUILT.get(tag)
            if method is None:
                raise _Unusual(tag)
            return getattr(loader, method)(ScalarNode(tag, value, event.start_mark, event.end_mark))
    return value


def build_from_events(loader: Any, source: str, limits: InputLimits
                      ) -> tuple[Any, dict[str, int]] | None:
    """``(data, lines)`` of the single document ``loader`` (a strict loader over one text)
    parses, as the node way gives them (``lines``: JSON pointer -> 1-based line of a mapping
    entry's key or a sequence item; ``""`` the root's line, 1 for an empty stream), or None when
    the text holds something this reader leaves to the node way (module docstring). Raises
    :class:`~empath_gate.bounded.InputLimitError` for an anchor, an alias or a broken limit."""
    from empath_gate.instrument.yaml_io import escape_pointer_token

    resolvers = type(loader).yaml_implicit_resolvers
    wildcard = list(resolvers.get(None, ()))
    # first character -> the implicit resolvers to try, for characters that have any
    rules: dict[str, list[tuple[str, Any]]] = {
        c: [*rs, *wildcard] for c, rs in resolvers.items() if c is not None and (rs or wildcard)}
    lines: dict[str, int] = {}
    # open collections: [container, its pointer, the pending key of a mapping (None: expecting a key)]
    stack: list[list[Any]] = []
    root: Any = None
    documents = 0
    seen_root = False
    scalar, seq_start, map_start = yaml.ScalarEvent, yaml.SequenceStartEvent, yaml.MappingStartEvent
    ends = (yaml.SequenceEndEvent, yaml.MappingEndEvent)
    try:
        for event in checked_events(loader, source, limits):
            kind = type(event)
            if kind is scalar:
                if event.tag is not None:
                    raise _Unusual("explicit tag")
                value: Any = event.value
                if event.implicit[0]:  # plain: maybe null, a boolean or a number
                    rule = rules.get(value[0] if value else "")
                    if rule is not None:
                        value = _resolved(loader, event, value, rule)
                    elif wildcard:
                        value = _resolved(loader, event, value, wildcard)
                opened = False
            elif kind is seq_start or kind is map_start:
                if event.tag is not None:
                    raise _Unusual("explicit tag")
                value = {} if kind is map_start else []
                opened = True
            else:
                if kind in ends:
                    stack.pop()
                elif kind is yaml.DocumentStartEvent:
                    documents += 1
                    if documents > 1 or event.version is not None or event.tags:
                        raise _Unusual("a second document or a directive")
                continue
            if stack:
                top = stack[-1]
                container = top[0]
                if top[2] is not None:  # a mapping's value
                    key, key_line = top[2]
                    top[2] = None
                    ptr = f"{top[1]}/{escape_pointer_token(key)}"
                    lines[ptr] = key_line
                    container[key] = value
                elif type(container) is list:
                    ptr = f"{top[1]}/{len(container)}"
                    lines[ptr] = event.start_mark.line + 1
                    container.append(value)
                else:  # a mapping's key
                    if opened or type(value) is not str or value in container:
                        raise _Unusual("a key that is not a new string")
                    top[2] = (value, event.start_mark.line + 1)
                    continue
            else:
                if seen_root:
                    raise _Unusual("a second root")
                seen_root, root, ptr = True, value, ""
                lines[""] = event.start_mark.line + 1
            if opened:
                stack.append([value, ptr, None])
    except (_Unusual, yaml.YAMLError):
        return None
    if not seen_root:
        return None, {"": 1}
    return root, lines


__all__ = ["build_from_events"]
