"""The fast schema walk never calls valid what jsonschema rejects, and is sure of the shipped files."""

from __future__ import annotations

import copy
import random
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from empath_gate.instrument.schema_fast import surely_valid
from empath_gate.instrument.schema_gen import load_schema
from empath_gate.instrument.yaml_io import read_yaml
from empath_gate.resources import shipped_suites_dir, shipped_thresholds


def shipped_files() -> list[tuple[str, Path]]:
    root = shipped_suites_dir()
    files = [(p.stem, p) for p in sorted(root.glob("*.yaml")) if p.stem in
             ("instrument", "patterns", "resources", "suites", "cues", "emotions", "crisis_levels",
              "behaviours")]
    files += [(d, p) for d in ("metrics", "personas", "seeds", "lexicons")
              for p in sorted((root / d).glob("*.yaml"))]
    return [*files, ("thresholds", shipped_thresholds())]


FILES = shipped_files()


@pytest.mark.parametrize(("kind", "path"), FILES, ids=[p.name for _, p in FILES])
def test_shipped_files_are_surely_valid(kind: str, path: Path) -> None:
    assert surely_valid(read_yaml(path).data, load_schema(kind))


_REPLACEMENTS: list[Any] = [None, True, 0, -1, 1.5, "", "x", "Not A Slug!", [], {}, [1], {"zz_unknown": 1}]


def _mutate(data: Any, rng: random.Random) -> Any:
    """``data`` with one value somewhere replaced, or one key dropped or added."""
    doc = copy.deepcopy(data)
    node = doc
    for _ in range(rng.randint(1, 6)):
        children = list(node.items()) if isinstance(node, dict) else list(enumerate(node)) \
            if isinstance(node, list) else []
        containers = [(k, v) for k, v in children if isinstance(v, (dict, list)) and v]
        if not containers or rng.random() < 0.3:
            break
        _, node = rng.choice(containers)
    if isinstance(node, dict) and node:
        key = rng.choice(list(node))
        action = rng.random()
        if action < 0.2:
            del node[key]
        elif action < 0.3:
            node["zz_unknown"] = 1
        else:
            node[key] = rng.choice(_REPLACEMENTS)
    elif isinstance(node, list) and node:
        node[rng.randrange(len(node))] = rng.choice(_REPLACEMENTS)
    return doc


def test_never_valid_where_jsonschema_finds_an_error() -> None:
    rng = random.Random(14)
    rejected = 0
    for kind, path in FILES:
        data = read_yaml(path).data
        schema = load_schema(kind)
        validator = jsonschema.Draft202012Validator(schema)
        for _ in range(60):
            doc = _mutate(data, rng)
            if not validator.is_valid(doc):
                rejected += 1
                assert not surely_valid(doc, schema), (path.name, doc)
    assert rejected > 300  # the mutations did break the schemas
