"""Generate the JSON Schemas (draft 2020-12) of the instrument files from their models.

The committed files in ``empath_gate/instrument/schemas/<kind>.schema.json`` are what editors
use through the ``# yaml-language-server: $schema=...`` comment and what the loader validates
against; a test asserts they equal :func:`generate_schema`. Regenerate after changing a model::

    python -m empath_gate.instrument.schema_gen
"""

from __future__ import annotations

import json
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any

from empath_gate.instrument.files import FILE_MODELS

DRAFT = "https://json-schema.org/draft/2020-12/schema"
SCHEMA_KINDS: tuple[str, ...] = tuple(FILE_MODELS)


def generate_schema(kind: str) -> dict[str, Any]:
    """The JSON Schema of file kind ``kind`` (one of :data:`SCHEMA_KINDS`), generated from its
    model; raises KeyError for an unknown kind."""
    model = FILE_MODELS[kind]
    schema = model.model_json_schema(mode="validation")
    out: dict[str, Any] = {"$schema": DRAFT, "title": f"empath-gate {kind} file"}
    out.update({k: v for k, v in schema.items() if k != "title"})
    return out


def schema_text(kind: str) -> str:
    """The committed form of a schema: model field order, 2-space indent, UTF-8, trailing newline."""
    return json.dumps(generate_schema(kind), indent=2, ensure_ascii=False) + "\n"


def schemas_dir() -> Path:
    """The package folder holding the committed schemas."""
    return Path(str(resources.files("empath_gate.instrument") / "schemas"))


@cache
def load_schema(kind: str) -> dict[str, Any]:
    """The committed (shipped) schema of ``kind``; raises FileNotFoundError if it is missing."""
    data: dict[str, Any] = json.loads((schemas_dir() / f"{kind}.schema.json").read_text(encoding="utf-8"))
    return data


def write_schemas(target: Path | None = None) -> list[Path]:
    """Write every schema into ``target`` (default: the package folder); returns the paths."""
    folder = target or schemas_dir()
    folder.mkdir(parents=True, exist_ok=True)
    paths = []
    for kind in SCHEMA_KINDS:
        path = folder / f"{kind}.schema.json"
        path.write_text(schema_text(kind), encoding="utf-8")
        paths.append(path)
    return paths


if __name__ == "__main__":  # pragma: no cover
    for p in write_schemas():
        print(p)
