"""The judge-batch state file: which provider batches a submit created and what each request is.

Written by ``--judge-batch submit`` (default ``judge-batch.json`` beside the results file,
``judge_batch_state``), read by ``--judge-batch collect``. Layout (UTF-8 JSON)::

    {"format": "empath-judge-batch/1", "judge_model": "openai/gpt-4o-mini",
     "endpoint": "https://api.openai.com/v1" | null,
     "batches": [{"batch_id", "input_file_id", "requests", "submitted_at"}],
     "requests": [{"key", "batch_id", "transcript_id", "metrics", "rejudge", "template_sha256"}]}

``key`` is the request's reply-cache key (also the batch line's ``custom_id``): the collect run
finds each result by it. The file never holds a credential: no key, no header, the endpoint
without user-info or credential-named query parameters, and every string passes
:func:`empath_gate.secrets.scrub`. It is written atomically (a temporary file renamed over the
old one), after every batch created, so a crash leaves the previous complete state.
"""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from empath_gate.errors import ConfigError
from empath_gate.secrets import scrub

STATE_FORMAT = "empath-judge-batch/1"
DEFAULT_STATE_NAME = "judge-batch.json"


class _Model(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class BatchEntry(_Model):
    """One provider batch: its id, input file id, how many requests it holds, when (ISO-8601 UTC)."""

    batch_id: str
    input_file_id: str
    requests: int = Field(ge=0)
    submitted_at: str


class RequestEntry(_Model):
    """One judge request: its reply-cache ``key`` (64 hex), the ``batch_id`` holding it, the
    ``transcript_id`` it judges, the ``metrics`` it asks for, the ``rejudge`` index and the judge
    template hash (``template_sha256``) it was built with."""

    key: str = Field(pattern=r"^[0-9a-f]{64}$")
    batch_id: str
    transcript_id: str | None = None
    metrics: tuple[str, ...] = ()
    rejudge: int = Field(default=0, ge=0)
    template_sha256: str | None = None


class BatchState(_Model):
    """The whole state file (module docstring)."""

    format: Literal["empath-judge-batch/1"] = "empath-judge-batch/1"
    judge_model: str
    endpoint: str | None = None
    batches: tuple[BatchEntry, ...] = ()
    requests: tuple[RequestEntry, ...] = ()

    def by_key(self) -> dict[str, str]:
        """Request key -> batch id."""
        return {r.key: r.batch_id for r in self.requests}

    def pending_transcripts(self) -> list[str]:
        """The transcript ids with a request in a batch, in first-seen order."""
        return list(dict.fromkeys(r.transcript_id for r in self.requests if r.transcript_id))


def state_path(configured: Path | None, results: Path) -> Path:
    """The state file: ``configured`` when set, else :data:`DEFAULT_STATE_NAME` beside ``results``."""
    return configured if configured is not None else results.parent / DEFAULT_STATE_NAME


MAX_FIELD_ERRORS = 20
"""Most field errors one message lists (a corrupt file of 50,000 requests could have as many)."""


def read_state(path: Path) -> BatchState | None:
    """The state in ``path``, or None when there is no file. Raises ConfigError when it is
    unreadable, empty, not JSON, over the input limits or not a state file: the message names
    the file, what is wrong (every field that is not valid, by its path, e.g.
    ``batches.0.submitted_at: Field required``) and what to do (:func:`state_remedy`)."""
    from empath_gate.bounded import InputLimitError, read_json

    if not path.exists():
        return None
    try:
        data = read_json(path)
    except json.JSONDecodeError as exc:
        what = ("the file is empty" if not exc.doc.strip()
                else f"not JSON (line {exc.lineno} column {exc.colno}: {exc.msg})")
    except UnicodeDecodeError:
        what = "not UTF-8 text"
    except (OSError, ValueError, InputLimitError) as exc:
        what = str(exc)
    else:
        what = ""
    if what:
        raise ConfigError(f"{path}: cannot read the judge-batch state file: {what}. {state_remedy(path)}")
    try:
        return BatchState.model_validate(data)
    except ValidationError as exc:
        raise ConfigError(f"{path}: not a valid judge-batch state file ({STATE_FORMAT}): "
                          f"{field_errors(exc)}. {state_remedy(path, data)}") from None


def field_errors(exc: ValidationError) -> str:
    """Every error of ``exc`` as ``<field path>: <message>`` joined by ``; `` (``(top level)``
    for the document itself), at most :data:`MAX_FIELD_ERRORS` of them and how many more."""
    errors = exc.errors(include_url=False, include_input=False)
    parts = [f"{'.'.join(str(x) for x in e['loc']) or '(top level)'}: {e['msg']}"
             for e in errors[:MAX_FIELD_ERRORS]]
    if len(errors) > MAX_FIELD_ERRORS:
        parts.append(f"and {len(errors) - MAX_FIELD_ERRORS} more field errors")
    return "; ".join(parts)


def state_remedy(path: Path, data: object = None) -> str:
    """What to do about the unusable state file ``path`` (``data``: its JSON document, when it
    is JSON): restore it from the submit job's artifact, or delete it and submit again, which
    sends the pending judge requests again and pays the batch price for them once more."""
    held = data.get("requests") if isinstance(data, dict) else None
    count = f" ({len(held)} in this file)" if isinstance(held, list) and held else ""
    return (f"Restore {path.name} as the submit run wrote it (in CI: from the submit job's artifact, "
            f"empath-judge-batch in .github/workflows/nightly.yml), or delete it and run --judge-batch "
            f"submit again: the new submit sends every pending judge request{count} again in a new "
            f"batch, which costs the batch price of those requests again (half the live judge price); "
            f"the batches already submitted are billed as well, their results unused")


def write_state(path: Path, state: BatchState) -> Path:
    """Write ``state`` to ``path`` atomically (UTF-8, ``ensure_ascii=False``, secrets scrubbed);
    returns ``path``. Raises OSError when the folder cannot be written."""
    data = scrub(state.model_dump(mode="json"))
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            json.dump(data, fh, ensure_ascii=False, indent=2)
            fh.write("\n")
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    return path


__all__ = [
    "DEFAULT_STATE_NAME",
    "MAX_FIELD_ERRORS",
    "STATE_FORMAT",
    "BatchEntry",
    "BatchState",
    "RequestEntry",
    "field_errors",
    "read_state",
    "state_path",
    "state_remedy",
    "write_state",
]
