"""Reading and writing results documents: atomic UTF-8 JSON, checked against the shipped schema."""

from __future__ import annotations

import datetime as dt
import json
import os
import tempfile
from pathlib import Path
from typing import Any

from empath_gate.bounded import well_formed
from empath_gate.results.model import READABLE_SCHEMA_VERSIONS, RESULTS_SCHEMA_VERSION, Results
from empath_gate.secrets import scrub

_UMASK = os.umask(0)
os.umask(_UMASK)
_FILE_MODE = 0o666 & ~_UMASK
"""Mode of written results files: what ``open()`` would give under the process umask."""


def now_iso() -> str:
    """Current UTC time as ISO-8601 with seconds precision."""
    return dt.datetime.now(dt.timezone.utc).replace(microsecond=0).isoformat()


def write_json_atomic(path: Path, data: Any) -> None:
    """Write ``data`` as UTF-8 JSON (``ensure_ascii=False``) to ``path`` atomically, every
    string with its secrets taken out (:func:`empath_gate.secrets.scrub`)."""
    data = scrub(data)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(well_formed(json.dumps(data, ensure_ascii=False, indent=2)))  # a surrogate: U+FFFD
            fh.write("\n")
        os.chmod(tmp, _FILE_MODE)  # mkstemp makes 0600; results are shared like any report
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def write_results(results: Results, path: Path) -> Path:
    """Validate against the shipped JSON Schema and write ``results`` to ``path``; returns the path.

    Raises ``jsonschema.ValidationError`` if the document does not match its schema (a bug).
    """
    data = results.model_dump(mode="json")
    validate_results_json(data)
    write_json_atomic(path, data)
    return path


def read_results(path: Path) -> Results:
    """Read a results file. Raises ConfigError naming the file when it is missing, not JSON,
    of another schema version, or invalid."""
    from empath_gate.bounded import read_json
    from empath_gate.errors import ConfigError

    try:
        data = read_json(path)
    except FileNotFoundError as exc:
        raise ConfigError(f"{path}: results file not found") from exc
    except json.JSONDecodeError as exc:
        raise ConfigError(f"{path}:{exc.lineno}: not valid JSON ({exc.msg})") from exc
    if not isinstance(data, dict) or data.get("schema_version") not in READABLE_SCHEMA_VERSIONS:
        got = data.get("schema_version") if isinstance(data, dict) else type(data).__name__
        raise ConfigError(
            f"{path}: results schema_version {got!r} is not one of {', '.join(READABLE_SCHEMA_VERSIONS)}; "
            "re-run the suite with this version of empath-gate"
        )
    try:
        return Results.model_validate(data)
    except Exception as exc:
        raise ConfigError(f"{path}: not a valid empath-gate results file: {exc}") from exc


def results_json_schema() -> dict[str, Any]:
    """The JSON Schema (draft 2020-12) of the results document, generated from the models."""
    schema = Results.model_json_schema()
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    schema["$id"] = f"https://empath-gate.dev/schemas/results-{RESULTS_SCHEMA_VERSION}.json"
    return schema


def shipped_schema_path() -> Path:
    """Where the results schema ships inside the package."""
    return Path(__file__).parents[1] / "schemas" / "results.schema.json"


def validate_results_json(data: Any) -> None:
    """Validate a results document (parsed JSON) against the shipped schema."""
    import jsonschema

    schema = json.loads(shipped_schema_path().read_text(encoding="utf-8"))
    jsonschema.Draft202012Validator(schema).validate(data)
