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
from collections.abc import Callable, Mapping
from functools import cache
from typing import Any

_ANNOTATIONS = frozenset({"title", "description", "default", "examples", "$schema", "$defs", "format"})
_KNOWN = _ANNOTATIONS | {
    "$ref", "type", "enum", "const", "anyOf", "properties", "patternProperties", "additionalProperties",
    "propertyNames", "required", "items", "minItems", "maxItems", "minLength", "maxLength", "pattern",
    "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "minProperties", "maxProperties",
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


Check = Callable[[Any], bool]
"""A compiled (sub)schema: True when the value surely matches it, False when it does not or
cannot be decided; raises :class:`_Unsure` (or ``TypeError``) for what only jsonschema decides."""


def _yes(value: Any) -> bool:
    return True


def _no(value: Any) -> bool:
    return False


def _all(parts: list[Check]) -> Check:
    if not parts:
        return _yes
    if len(parts) == 1:
        return parts[0]

    def check(value: Any) -> bool:
        for part in parts:  # noqa: SIM110 - a loop: no generator per value on the hot path
            if not part(value):
                return False
        return True

    return check


def _numbers(schema: Mapping[str, Any]) -> Check | None:
    lo, hi = schema.get("minimum"), schema.get("maximum")
    xlo, xhi = schema.get("exclusiveMinimum"), schema.get("exclusiveMaximum")
    if lo is None and hi is None and xlo is None and xhi is None:
        return None

    def check(value: Any) -> bool:
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            return True
        return ((lo is None or value >= lo) and (hi is None or value <= hi)
                and (xlo is None or value > xlo) and (xhi is None or value < xhi))

    return check


def _string(schema: Mapping[str, Any]) -> Check | None:
    shortest, longest = schema.get("minLength"), schema.get("maxLength")
    rx = _rx(schema["pattern"]) if schema.get("pattern") is not None else None
    if shortest is None and longest is None and rx is None:
        return None

    def check(value: Any) -> bool:
        if not isinstance(value, str):
            return True
        return ((shortest is None or len(value) >= shortest) and (longest is None or len(value) <= longest)
                and (rx is None or rx.search(value) is not None))

    return check


def _object(schema: Mapping[str, Any], root: Mapping[str, Any], defs: dict[str, Check]) -> Check | None:
    keys = ("required", "properties", "patternProperties", "additionalProperties", "propertyNames",
            "minProperties", "maxProperties")
    if not any(k in schema for k in keys):
        return None
    required = tuple(schema.get("required", ()))
    fewest, most = int(schema.get("minProperties", 0)), schema.get("maxProperties")
    props = {k: _compile(sub, root, defs) for k, sub in schema.get("properties", {}).items()}
    patterns = [(_rx(p), _compile(sub, root, defs)) for p, sub in schema.get("patternProperties", {}).items()]
    extra = _compile(schema.get("additionalProperties", True), root, defs)
    names = _compile(schema["propertyNames"], root, defs) if "propertyNames" in schema else None

    def check(value: Any) -> bool:
        if not isinstance(value, dict):
            return True
        if len(value) < fewest or (most is not None and len(value) > most):
            return False
        for k in required:
            if k not in value:
                return False
        for key, item in value.items():
            if names is not None and not names(key):
                return False
            sub = props.get(key)
            matched = sub is not None
            if sub is not None and not sub(item):
                return False
            for rx, pattern_sub in patterns:
                if rx.search(key):
                    matched = True
                    if not pattern_sub(item):
                        return False
            if not matched and not extra(item):
                return False
        return True

    return check


def _array(schema: Mapping[str, Any], root: Mapping[str, Any], defs: dict[str, Check]) -> Check | None:
    fewest, most = schema.get("minItems"), schema.get("maxItems")
    items = _compile(schema["items"], root, defs) if schema.get("items") is not None else None
    if fewest is None and most is None and items is None:
        return None

    def check(value: Any) -> bool:
        if not isinstance(value, list):
            return True
        if (fewest is not None and len(value) < fewest) or (most is not None and len(value) > most):
            return False
        if items is not None:
            for v in value:
                if not items(v):
                    return False
        return True

    return check


_TYPE_NAMES = frozenset({"string", "object", "array", "boolean", "null", "number", "integer"})


def _ref(ref: Any, root: Mapping[str, Any], defs: dict[str, Check]) -> Check:
    if not (isinstance(ref, str) and ref.startswith("#/$defs/")) or ref[8:] not in root.get("$defs", {}):
        raise _Unsure(str(ref))
    name = ref[8:]

    def check(value: Any) -> bool:  # compiled when first used, so recursive definitions work
        found = defs.get(name)
        if found is None:
            found = defs[name] = _compile(root["$defs"][name], root, defs)
        return found(value)

    return check


def _compile(schema: Any, root: Mapping[str, Any], defs: dict[str, Check]) -> Check:
    """``schema`` as one function of the value (the keywords of the module docstring); raises
    :class:`_Unsure` for a keyword, a type name or a ``$ref`` it does not decide."""
    if schema is True:
        return _yes
    if schema is False:
        return _no
    if not isinstance(schema, dict) or not _KNOWN.issuperset(schema):
        raise _Unsure("keyword")
    parts: list[Check] = []
    if "$ref" in schema:
        parts.append(_ref(schema["$ref"], root, defs))
    kind = schema.get("type")
    if kind is not None:
        kinds = tuple(kind if isinstance(kind, list) else [kind])
        if not _TYPE_NAMES.issuperset(kinds):
            raise _Unsure("type")
        parts.append(lambda v: any(_is_type(v, k) for k in kinds))
    if "enum" in schema:
        allowed = list(schema["enum"])
        parts.append(lambda v: any(_same(v, e) for e in allowed))
    if "const" in schema:
        const = schema["const"]
        parts.append(lambda v: _same(v, const))
    if "anyOf" in schema:
        options = [_compile(sub, root, defs) for sub in schema["anyOf"]]
        parts.append(lambda v: any(f(v) for f in options))
    for part in (_numbers(schema), _string(schema), _object(schema, root, defs), _array(schema, root, defs)):
        if part is not None:
            parts.append(part)
    return _all(parts)


_compiled: dict[int, tuple[Mapping[str, Any], Check | None]] = {}
"""id(schema) -> (the schema, kept so the id stays its own; its compiled check, None when unsure)."""


def _check_of(schema: Mapping[str, Any]) -> Check | None:
    hit = _compiled.get(id(schema))
    if hit is not None and hit[0] is schema:
        return hit[1]
    try:
        check: Check | None = _compile(schema, schema, {})
    except (_Unsure, re.error, TypeError):
        check = None
    _compiled[id(schema)] = (schema, check)
    return check


def surely_valid(data: Any, schema: Mapping[str, Any]) -> bool:
    """True only when ``data`` certainly matches ``schema`` (module docstring); False when it
    does not or the walk cannot decide. Nesting is bounded by the input limits already. The
    schema is compiled into one function per subschema the first time it is seen (the schemas
    are loaded once and never changed), so a large file costs one call per value instead of
    keyword lookups."""
    check = _check_of(schema)
    if check is None:
        return False
    try:
        return check(data)
    except (_Unsure, re.error, TypeError):
        return False
