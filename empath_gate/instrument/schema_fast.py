"""A fast first test that a document matches an instrument schema, before jsonschema runs.

jsonschema reports every error with its path, which the loader turns into messages, but it
walks a large layer slowly (about 40% of validating 40,000 seeds). :func:`surely_valid`
checks the keywords the generated schemas use (``schemas/*.schema.json``) in one direct walk
and answers ``True`` only when the document is certainly valid under draft 2020-12 as
jsonschema applies it (``format`` is an annotation there, not checked). Whenever it is unsure
(a keyword it does not know, a ``$ref`` outside ``#/$defs``, an ``enum`` of other values) or
finds an error, it answers ``False`` and the loader runs jsonschema, which gives the messages.
So it can make validation faster, never more or less strict.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from functools import cache
from typing import Any

_ANNOTATIONS = frozenset({"title", "description", "default", "examples", "$schema", "$defs", "format"})
_KNOWN = _ANNOTATIONS | {
    "$ref", "type", "enum", "const", "anyOf", "properties", "patternProperties", "additionalProperties",
    "propertyNames", "required", "items", "minItems", "maxItems", "minLength", "maxLength", "pattern",
    "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum",
}


class _Unsure(Exception):
    """The walk met something it does not decide; jsonschema decides."""


@cache
def _rx(pattern: str) -> re.Pattern[str]:
    return re.compile(pattern)


def _is_type(value: Any, name: str) -> bool:
    if name == "string":
        return isinstance(value, str)
    if name == "object":
        return isinstance(value, dict)
    if name == "array":
        return isinstance(value, list)
    if name == "boolean":
        return isinstance(value, bool)
    if name == "null":
        return value is None
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return False
    if name == "number":
        return True
    if name == "integer":
        return isinstance(value, int) or value.is_integer()
    raise _Unsure(name)


def _same(value: Any, allowed: Any) -> bool:
    if isinstance(allowed, (dict, list)) or isinstance(value, (dict, list)):
        raise _Unsure("enum of structures")
    return type(value) is type(allowed) and value == allowed


def _numbers(value: Any, schema: Mapping[str, Any]) -> bool:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return True
    return ((schema.get("minimum") is None or value >= schema["minimum"])
            and (schema.get("maximum") is None or value <= schema["maximum"])
            and (schema.get("exclusiveMinimum") is None or value > schema["exclusiveMinimum"])
            and (schema.get("exclusiveMaximum") is None or value < schema["exclusiveMaximum"]))


def _string(value: Any, schema: Mapping[str, Any]) -> bool:
    if not isinstance(value, str):
        return True
    return ((schema.get("minLength") is None or len(value) >= schema["minLength"])
            and (schema.get("maxLength") is None or len(value) <= schema["maxLength"])
            and (schema.get("pattern") is None or _rx(schema["pattern"]).search(value) is not None))


def _object(value: Any, schema: Mapping[str, Any], root: Mapping[str, Any]) -> bool:
    if not isinstance(value, dict):
        return True
    if any(k not in value for k in schema.get("required", ())):
        return False
    props: Mapping[str, Any] = schema.get("properties", {})
    patterns: Mapping[str, Any] = schema.get("patternProperties", {})
    extra = schema.get("additionalProperties", True)
    names = schema.get("propertyNames")
    for key, item in value.items():
        if names is not None and not _valid(key, names, root):
            return False
        matched = False
        if key in props:
            matched = True
            if not _valid(item, props[key], root):
                return False
        for pattern, sub in patterns.items():
            if _rx(pattern).search(key):
                matched = True
                if not _valid(item, sub, root):
                    return False
        if not matched and not _valid(item, extra, root):
            return False
    return True


def _array(value: Any, schema: Mapping[str, Any], root: Mapping[str, Any]) -> bool:
    if not isinstance(value, list):
        return True
    if schema.get("minItems") is not None and len(value) < schema["minItems"]:
        return False
    if schema.get("maxItems") is not None and len(value) > schema["maxItems"]:
        return False
    items = schema.get("items")
    return items is None or all(_valid(v, items, root) for v in value)


def _valid(value: Any, schema: Any, root: Mapping[str, Any]) -> bool:
    if schema is True:
        return True
    if schema is False:
        return False
    if not isinstance(schema, dict) or not _KNOWN.issuperset(schema):
        raise _Unsure("keyword")
    ref = schema.get("$ref")
    if ref is not None:
        if not (isinstance(ref, str) and ref.startswith("#/$defs/")) or ref[8:] not in root.get("$defs", {}):
            raise _Unsure(str(ref))
        if not _valid(value, root["$defs"][ref[8:]], root):
            return False
    kind = schema.get("type")
    if kind is not None and not any(_is_type(value, k) for k in (kind if isinstance(kind, list) else [kind])):
        return False
    if "enum" in schema and not any(_same(value, e) for e in schema["enum"]):
        return False
    if "const" in schema and not _same(value, schema["const"]):
        return False
    if "anyOf" in schema and not any(_valid(value, s, root) for s in schema["anyOf"]):
        return False
    return (_numbers(value, schema) and _string(value, schema) and _object(value, schema, root)
            and _array(value, schema, root))


def surely_valid(data: Any, schema: Mapping[str, Any]) -> bool:
    """True only when ``data`` certainly matches ``schema`` (module docstring); False when it
    does not or the walk cannot decide. Nesting is bounded by the input limits already."""
    try:
        return _valid(data, schema, schema)
    except (_Unsure, re.error, TypeError):
        return False
