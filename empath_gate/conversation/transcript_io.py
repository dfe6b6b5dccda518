"""Transcripts as JSONL files, one per run: a header line (the :class:`Transcript` without its
turns and annotation), then one line per :class:`Turn`, then, when the dynamics annotator ran,
one ``{"type": "annotation", ...}`` line (per-turn labels or the annotator's failure; files
without it read as before); UTF-8, not ASCII-escaped, written atomically at
``<dir>/<suite>/<seed>__<persona>__r<run>.jsonl`` (``__`` cannot occur inside a slug).
"""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from empath_gate.bounded import JsonLineError, read_jsonl, well_formed
from empath_gate.conversation.transcript import Transcript, Turn
from empath_gate.secrets import scrub


def transcript_path(directory: Path, transcript: Transcript) -> Path:
    """``<directory>/<suite>/<seed>__<persona>__r<run>.jsonl``."""
    name = f"{transcript.seed_id}__{transcript.persona_id}__r{transcript.run}.jsonl"
    return Path(directory) / transcript.suite / name


_UMASK = os.umask(0)
os.umask(_UMASK)
_FILE_MODE = 0o666 & ~_UMASK
"""Mode of written transcripts: what ``open()`` would give under the process umask."""


def _turn_record(turn: Turn) -> dict[str, Any]:
    """A turn's JSON line: every field, except ``feeling_0_100`` when it is None (turns without
    an auditor feeling are written as before it existed)."""
    exclude = {"feeling_0_100"} if turn.feeling_0_100 is None else None
    return turn.model_dump(mode="json", exclude=exclude)


def write_transcript(transcript: Transcript, directory: Path) -> Path:
    """Write ``transcript`` as JSONL (a header line, then one line per turn; UTF-8, not
    ASCII-escaped, secrets taken out by :func:`empath_gate.secrets.scrub`) atomically at
    :func:`transcript_path`; returns the path."""
    path = transcript_path(directory, transcript)
    path.parent.mkdir(parents=True, exist_ok=True)
    header = {"type": "header", **transcript.model_dump(mode="json", exclude={"turns", "annotation"})}
    lines = [json.dumps(scrub(header), ensure_ascii=False)]
    lines += [
        json.dumps(scrub({"type": "turn", **_turn_record(t)}), ensure_ascii=False)
        for t in transcript.turns
    ]
    if transcript.annotation is not None:
        note = {"type": "annotation", **transcript.annotation.model_dump(mode="json")}
        lines.append(json.dumps(scrub(note),
                                ensure_ascii=False))
    fd, tmp = tempfile.mkstemp(prefix=f".{path.stem}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(well_formed("\n".join(lines) + "\n"))  # any surrogate left: U+FFFD
        os.chmod(tmp, _FILE_MODE)  # mkstemp makes 0600; a transcript is read like any report
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    return path


def read_transcript(path: Path) -> Transcript:
    """Read a JSONL transcript written by :func:`write_transcript`. Raises ValueError naming the
    file and line when a line is not JSON, the header is missing, or a record is invalid;
    :class:`~empath_gate.bounded.InputLimitError` when the file breaks an input limit."""
    header: Mapping[str, Any] | None = None
    turns: list[Turn] = []
    annotation: dict[str, Any] | None = None
    try:
        records = list(read_jsonl(Path(path)))
    except JsonLineError as exc:
        raise ValueError(f"{path}:{exc.line}: {exc.msg}") from None
    for n, rec in records:
        try:
            kind = rec.pop("type", None) if isinstance(rec, dict) else None
            if n == 1 and kind == "header":
                header = {"schema_version": "1", **rec}  # files before version 2 carry none
            elif kind == "turn" and header is not None:
                turns.append(Turn.model_validate(rec))
            elif kind == "annotation" and header is not None and annotation is None:
                annotation = rec
            else:
                raise ValueError(f"unexpected record type {kind!r}")
        except ValueError as exc:  # pydantic's ValidationError is a ValueError
            raise ValueError(f"{path}:{n}: {exc}") from None
    if header is None:
        raise ValueError(f"{path}: no header line")
    try:
        return Transcript.model_validate(
            {**header, "turns": turns, **({"annotation": annotation} if annotation is not None else {})})
    except ValueError as exc:
        raise ValueError(f"{path}:1: {exc}") from None
