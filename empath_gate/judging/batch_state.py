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


def read_state(path: Path) -> BatchState | None:
    """The state in ``path``, or None when there is no file. Raises ConfigError naming the file
    when it is unreadable, not JSON, over the input limits or not a state file."""
    from empath_gate.bounded import InputLimitError, read_json

    if not path.exists():
        return None
    try:
        data = read_json(path)
    except (OSError, ValueError, InputLimitError) as exc:
        raise ConfigError(f"{path}: cannot read the judge-batch state file: {exc}") from None
    try:
        return BatchState.model_validate(data)
    except ValidationError as exc:
        raise ConfigError(f"{path}: not a judge-batch state file ({STATE_FORMAT}): "
                          f"{exc.errors()[0].get('msg')}") from None


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
    "STATE_FORMAT",
    "BatchEntry",
    "BatchState",
    "RequestEntry",
    "read_state",
    "state_path",
    "write_state",
]
