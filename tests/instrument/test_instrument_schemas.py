"""The committed JSON Schemas equal the ones generated from the models (schema and models agree)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import jsonschema
import pytest

from empath_gate.instrument.schema_gen import SCHEMA_KINDS, generate_schema, schema_text, schemas_dir

REPO = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("kind", SCHEMA_KINDS)
def test_committed_schema_equals_generated(kind: str) -> None:
    path = schemas_dir() / f"{kind}.schema.json"
    assert path.is_file(), f"{path} missing: run python -m empath_gate.instrument.schema_gen"
    assert path.read_text(encoding="utf-8") == schema_text(kind), (
        f"{path.name} is stale: run python -m empath_gate.instrument.schema_gen"
    )


@pytest.mark.parametrize("kind", SCHEMA_KINDS)
def test_schema_is_valid_draft_2020_12(kind: str) -> None:
    schema = generate_schema(kind)
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    jsonschema.Draft202012Validator.check_schema(schema)


def test_schema_rejects_unknown_keys() -> None:
    schema = json.loads((schemas_dir() / "thresholds.schema.json").read_text(encoding="utf-8"))
    errors = list(jsonschema.Draft202012Validator(schema).iter_errors({"defaults": {"min_maen": 7}}))
    assert [e.validator for e in errors] == ["additionalProperties"]


def test_only_the_expected_schema_files_ship() -> None:
    names = sorted(p.name for p in schemas_dir().glob("*.schema.json"))
    assert names == sorted(f"{k}.schema.json" for k in SCHEMA_KINDS)
    assert set(SCHEMA_KINDS) == {"instrument", "metrics", "patterns", "resources", "personas", "seeds",
                                 "suites", "thresholds", "waivers", "cues", "emotions", "lexicons",
                                 "crisis_levels", "behaviours"}


def test_yaml_files_point_to_their_schema() -> None:
    """Every shipped YAML file names an existing schema of its kind in its first line."""
    kinds = {"instrument.yaml": "instrument", "patterns.yaml": "patterns", "resources.yaml": "resources",
             "suites.yaml": "suites", "metrics": "metrics", "personas": "personas", "seeds": "seeds",
             "emotions.yaml": "emotions", "lexicons": "lexicons", "behaviours.yaml": "behaviours"}
    files = [REPO / "thresholds.yaml", *sorted((REPO / "suites").rglob("*.yaml"))]
    checked = 0
    for path in files:
        if not path.is_file() or not path.read_text(encoding="utf-8").strip():
            continue
        rel = path.relative_to(REPO / "suites") if path.parent != REPO else Path("thresholds.yaml")
        kind = "thresholds" if path.name == "thresholds.yaml" else kinds.get(rel.parts[0])
        if kind is None:
            continue
        first = path.read_text(encoding="utf-8").splitlines()[0]
        m = re.match(r"#\s*yaml-language-server:\s*\$schema=(\S+)", first)
        assert m, f"{path.relative_to(REPO)}: first line must be '# yaml-language-server: $schema=...'"
        target = (path.parent / m.group(1)).resolve()
        expected = (schemas_dir() / f"{kind}.schema.json").resolve()
        assert target == expected, f"{path.relative_to(REPO)} -> {target}"
        checked += 1
    assert checked >= 1
