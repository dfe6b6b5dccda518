"""Turn JSON Schema and pydantic errors into ``what is wrong — what to fix`` messages.

Each function returns ``(json_pointer, what, fix)`` triples; the loader adds the file and
line. Pointers are RFC 6901, relative to the document root.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any

from pydantic import ValidationError as ModelError

from empath_gate.instrument.models import SLUG_PATTERN
from empath_gate.instrument.yaml_io import pointer

if TYPE_CHECKING:  # jsonschema is imported only when a file fails the fast schema walk
    from jsonschema.exceptions import ValidationError as SchemaError

Diagnostic = tuple[str, str, str | None]
"""(JSON pointer, what is wrong, what to fix or None)."""

_JSON_TYPES = {
    bool: "a boolean",
    int: "an integer",
    float: "a number",
    str: "a string",
    list: "a list",
    dict: "a mapping",
    type(None): "empty (null)",
}
_EXPECTED = {
    "string": "a string",
    "integer": "an integer",
    "number": "a number",
    "boolean": "true or false",
    "array": "a list",
    "object": "a mapping (key: value lines)",
    "null": "empty",
}
_SEMVER = r"^\d+\.\d+\.\d+$"


def did_you_mean(word: str, choices: Iterable[str]) -> str | None:
    """The closest of ``choices`` to ``word`` (difflib ratio >= 0.6), or None."""
    found = difflib.get_close_matches(word, list(choices), n=1, cutoff=0.6)
    return found[0] if found else None


def _kind(value: Any) -> str:
    return _JSON_TYPES.get(type(value), type(value).__name__)


def _short(value: Any, limit: int = 60) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _fix_for_type(expected: Sequence[str], value: Any) -> str:
    names = [_EXPECTED.get(t, t) for t in expected if t != "null"]
    want = " or ".join(names) if names else "empty"
    if "string" in expected and isinstance(value, (bool, int, float)):
        return f"write {want}: put the value in quotes"
    if "array" in expected and not isinstance(value, list):
        return "write a list: '[a, b]' or one '- item' line per entry"
    if value is None:
        return f"write {want} after the colon, or remove the key to use its default"
    return f"write {want}"


def _type_diagnostic(ptr: str, expected: Sequence[str], value: Any) -> Diagnostic:
    names = " or ".join(_EXPECTED.get(t, t) for t in expected)
    return ptr, f"expected {names}, got {_kind(value)} ({_short(value)})", _fix_for_type(expected, value)


def _expected_types(schema: Any) -> list[str]:
    t = schema.get("type") if isinstance(schema, dict) else None
    if isinstance(t, str):
        return [t]
    if isinstance(t, list):
        return [str(x) for x in t]
    return []


def _allowed_keys(schema: dict[str, Any]) -> list[str]:
    return list(schema.get("properties", {}))


def schema_diagnostics(error: SchemaError) -> list[Diagnostic]:
    """Diagnostics for one jsonschema error (descending into anyOf/oneOf alternatives)."""
    ptr = pointer(list(error.absolute_path))
    v = error.validator
    inst = error.instance
    if v == "additionalProperties" and error.validator_value is False and isinstance(inst, dict):
        allowed = _allowed_keys(error.schema)
        out: list[Diagnostic] = []
        for key in inst:
            if key in allowed:
                continue
            guess = did_you_mean(str(key), allowed)
            fix = f"did you mean {guess!r}?" if guess else "remove it or use one of the allowed keys"
            what = f"unknown key {str(key)!r} (allowed: {', '.join(allowed)})"
            out.append((pointer([*error.absolute_path, str(key)]), what, fix))
        return out
    if v == "required" and isinstance(inst, dict):
        missing = [k for k in error.validator_value if k not in inst]
        return [(ptr, f"missing required key {k!r}", f"add '{k}:' here") for k in missing]
    if v == "type":
        return [_type_diagnostic(ptr, _expected_types(error.schema), inst)]
    if v in ("enum", "const"):
        options = error.validator_value if v == "enum" else [error.validator_value]
        guess = did_you_mean(str(inst), [str(o) for o in options])
        listing = ", ".join(repr(o) for o in options)
        fix = f"did you mean {guess!r}?" if guess else f"use one of: {listing}"
        return [(ptr, f"{_short(inst)} is not allowed here (allowed: {listing})", fix)]
    if v == "pattern":
        if error.validator_value == SLUG_PATTERN:
            fix = ("use a lowercase ASCII slug: letters a-z and digits, words joined by single '-' or '_' "
                   "(e.g. 'cs-es-01'); put accented labels in a label field")
        elif error.validator_value == _SEMVER:
            fix = "write a semantic version such as \"1.0.0\" (quoted)"
        else:
            fix = f"make it match the pattern {error.validator_value}"
        return [(ptr, f"{_short(inst)} does not have the expected form", fix)]
    if v in ("minItems", "maxItems"):
        n = error.validator_value
        bound = "at least" if v == "minItems" else "at most"
        count = len(inst) if isinstance(inst, list) else "?"
        return [(ptr, f"has {count} entries; needs {bound} {n}", f"give {bound} {n} entries")]
    if v in ("minLength", "maxLength"):
        n = error.validator_value
        bound = "at least" if v == "minLength" else "at most"
        return [(ptr, f"text is too {'short' if v == 'minLength' else 'long'} ({_short(inst)})",
                 f"write {bound} {n} characters")]
    if v in ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"):
        sign = {"minimum": ">=", "maximum": "<=", "exclusiveMinimum": ">", "exclusiveMaximum": "<"}[v]
        return [(ptr, f"{inst!r} is out of range", f"use a value {sign} {error.validator_value}")]
    if v in ("anyOf", "oneOf") and error.context:
        return _alternatives(error)
    return [(ptr, error.message, None)]


def _alternatives(error: SchemaError) -> list[Diagnostic]:
    """An anyOf/oneOf failure: report the alternative that came closest (nullable fields are
    anyOf [X, null]; the null branch is never the interesting one)."""
    context = list(error.context or [])
    branches: dict[int, list[SchemaError]] = {}
    for sub in context:
        idx = sub.relative_schema_path[0] if sub.relative_schema_path else 0
        branches.setdefault(int(idx), []).append(sub)
    ptr = pointer(list(error.absolute_path))
    # A wrong type for every branch: one message listing the accepted types.
    shallow_type = all(
        len(errs) == 1 and errs[0].validator == "type" and not errs[0].relative_path
        for errs in branches.values()
    )
    if shallow_type:
        expected = [t for errs in branches.values() for t in _expected_types(errs[0].schema)]
        return [_type_diagnostic(ptr, expected, error.instance)]
    # Branches whose type matched (their errors are about the content): report those.
    deep = [
        errs for errs in branches.values()
        if not (len(errs) == 1 and errs[0].validator == "type" and not errs[0].relative_path)
    ]
    if len(deep) > 1 and isinstance(error.instance, dict):
        deep = _closest_objects(deep, error.instance)
    if len(deep) == 1:
        return [d for sub in deep[0] for d in schema_diagnostics(sub)]
    from jsonschema.exceptions import best_match

    best = best_match(context)
    return schema_diagnostics(best) if best is not None else [(ptr, error.message, None)]


def _closest_objects(branches: list[list[SchemaError]], instance: dict[str, Any]) -> list[list[SchemaError]]:
    """Of several object alternatives (e.g. a review record or a not-reviewed record), those
    whose properties hold the most keys of ``instance``: the one the author meant."""
    def overlap(errs: list[SchemaError]) -> int:
        props = next((e.schema.get("properties") for e in errs
                      if not e.relative_path and isinstance(e.schema, dict) and "properties" in e.schema),
                     None)
        return sum(1 for k in instance if k in props) if isinstance(props, dict) else -1

    scores = [overlap(errs) for errs in branches]
    top = max(scores)
    return [errs for errs, score in zip(branches, scores, strict=True) if score == top]


_PYDANTIC_FIXES = {
    "date_from_datetime_parsing": "write an ISO date such as 2026-01-31",
    "date_parsing": "write an ISO date such as 2026-01-31",
    "date_type": "write an ISO date such as 2026-01-31",
    "extra_forbidden": "remove the key",
    "missing": "add the key",
}


def model_diagnostics(error: ModelError, base: Sequence[str | int], data: Any) -> list[Diagnostic]:
    """Diagnostics for a pydantic ValidationError raised validating ``data`` found at ``base``.

    Location parts that are not keys of the data (pydantic adds union branch names) are dropped.
    """
    out: list[Diagnostic] = []
    for e in error.errors(include_url=False):
        parts: list[str | int] = list(base)
        node = data
        for part in e["loc"]:
            in_dict = isinstance(node, dict) and part in node
            in_list = isinstance(node, list) and isinstance(part, int) and 0 <= part < len(node)
            if in_dict or in_list:
                node = node[part]
                parts.append(part)
            elif isinstance(node, dict) and e["type"] == "missing" and part == e["loc"][-1]:
                out_msg = f"missing required key {part!r}"
                out.append((pointer(parts), out_msg, f"add '{part}:' here"))
                break
        else:
            msg = str(e["msg"])
            if msg.startswith("Value error, "):
                msg = msg[len("Value error, "):]
            fix = _PYDANTIC_FIXES.get(str(e["type"]))
            if fix is None and e["type"] == "value_error":
                fix = "correct the value as the message says"
            out.append((pointer(parts), msg, fix))
    return out
