"""Reading a team's labelled conversations for ``empath-gate detect`` (bounded: every row through
:mod:`empath_gate.bounded`).

**jsonl** (default): one JSON object per line with ``conversation_id`` (string), ``turn`` (the
1-based user turn; an assistant row gives the user turn it answers), ``role`` (``user`` or
``assistant``), ``text``, ``labels`` (gold; on user rows) and ``predicted`` (the detector's, on
either row of the turn), and optionally ``alert: true`` on the user row of the alert turn. A
gold label is active from the first user row that lists it, so labels may be written once (at
their confirm turn) or on every later turn alike.

**cradle** (``--format cradle``): CRADLE-Dialogue's column layout as the issue names it,
``turn_id``, ``text`` and ``labels``, plus ``predicted``; every row is a user turn;
``conversation_id`` when present, else ``turn_id`` is ``<conversation>_<n>`` (or ``-<n>``).

Labels are ``{"category": ..., "timing": "ongoing"|"past"}`` or ``"category:timing"``; in the
cradle layout also ``"category_timing"`` and spaced names (``"suicidal ideation active:past"``).
Every bad row is reported with its line number (:class:`DetectorInputError`).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from pathlib import Path
from typing import Any, Literal

from empath_gate.analysis.detector import LabelledDialogue, LabelledTurn
from empath_gate.bounded import JsonLineError, read_jsonl
from empath_gate.errors import ConfigError
from empath_gate.instrument.risk_labels import parse_label

MAX_REPORTED = 20
"""Bad rows named in one error (the count of the rest is given)."""

_ALIASES = {
    "suicidal_ideation_active": "active_suicidal_ideation",
    "suicidal_ideation_passive": "passive_suicidal_ideation",
    "child_abuse_or_endangerment": "child_abuse",
    "child_endangerment": "child_abuse",
    "selfharm": "self_harm",
    "psychosis": "psychosis_delusion",
    "delusion": "psychosis_delusion",
    "overdose": "substance_overdose",
}
_TAIL = re.compile(r"^(.*?)[_\-](\d+)$")


class DetectorInputError(ConfigError):
    """A labelled-conversations file with bad rows; the message names each by line."""


def _label(value: Any, cradle: bool) -> str:
    if cradle and isinstance(value, str) and ":" not in value:
        name = re.sub(r"[\s\-]+", "_", value.strip().lower())
        for timing in ("ongoing", "past"):
            if name.endswith("_" + timing):
                value = f"{name[: -len(timing) - 1]}:{timing}"
                break
    if isinstance(value, str) and ":" in value:
        cat, _, timing = value.partition(":")
        cat = re.sub(r"[\s\-]+", "_", cat.strip().lower()) if cradle else cat
        value = f"{_ALIASES.get(cat, cat)}:{timing.strip()}"
    return parse_label(value).key


def _labels(row: dict[str, Any], key: str, cradle: bool, required: bool) -> tuple[str, ...]:
    value = row.get(key)
    if value is None and not required:
        return ()
    if not isinstance(value, list):
        raise ValueError(f"{key!r} must be a list of labels")
    return tuple(sorted({_label(v, cradle) for v in value}))


def _turn_of(row: dict[str, Any], cradle: bool) -> tuple[str, int, str]:
    if cradle:
        tid = row.get("turn_id")
        conv = row.get("conversation_id")
        if conv is None:
            m = _TAIL.match(str(tid)) if isinstance(tid, (str, int)) else None
            if not m:
                raise ValueError("'turn_id' must be '<conversation>_<n>' without a conversation_id column")
            conv, tid = m.group(1), m.group(2)
        if not isinstance(conv, str) or not conv:
            raise ValueError("'conversation_id' must be a non-empty string")
        if isinstance(tid, bool) or not str(tid).isdigit():
            raise ValueError("'turn_id' must end in the turn number")
        return conv, int(str(tid)), "user"
    conv, turn, role = row.get("conversation_id"), row.get("turn"), row.get("role")
    if not isinstance(conv, str) or not conv:
        raise ValueError("'conversation_id' must be a non-empty string")
    if not isinstance(turn, int) or isinstance(turn, bool) or turn < 1:
        raise ValueError("'turn' must be a user-turn number, 1 or more")
    if role not in ("user", "assistant"):
        raise ValueError("'role' must be 'user' or 'assistant'")
    return conv, turn, str(role)


def read_dialogues(path: Path, fmt: Literal["jsonl", "cradle"] = "jsonl") -> list[LabelledDialogue]:
    """The labelled dialogues of ``path`` in first-seen order (module docstring). Raises
    DetectorInputError naming every bad row (up to :data:`MAX_REPORTED`), ConfigError for an
    unreadable file, InputLimitError past a limit of :mod:`empath_gate.bounded`."""
    cradle = fmt == "cradle"
    problems: list[str] = []
    convs: dict[str, dict[int, dict[str, Any]]] = {}
    try:
        rows: Iterable[tuple[int, Any]] = list(read_jsonl(path))
    except FileNotFoundError:
        raise ConfigError(f"{path}: file not found") from None
    except JsonLineError as exc:
        raise DetectorInputError(str(exc)) from None
    for n, row in rows:
        try:
            if not isinstance(row, dict):
                raise ValueError("a row must be a JSON object")
            if not isinstance(row.get("text", ""), str):
                raise ValueError("'text' must be a string")
            conv, turn, role = _turn_of(row, cradle)
            slot = convs.setdefault(conv, {}).setdefault(turn, {"gold": set(), "pred": set(), "user": 0,
                                                                 "alert": False})
            slot["pred"].update(_labels(row, "predicted", cradle, required=cradle or role == "user"))
            if role == "user":
                slot["user"] += 1
                if slot["user"] > 1:
                    raise ValueError(f"a second user row for turn {turn} of {conv!r}")
                slot["gold"].update(_labels(row, "labels", cradle, required=True))
                slot["alert"] = row.get("alert") is True
        except ValueError as exc:
            problems.append(f"{path}:{n}: {exc}")
    for conv, turns in convs.items():
        missing = [k for k in range(1, max(turns) + 1) if not turns.get(k, {}).get("user")]
        if missing:
            problems.append(f"{path}: conversation {conv!r} has no user row for turn(s) "
                            f"{', '.join(map(str, missing[:10]))}")
    if problems:
        more = len(problems) - MAX_REPORTED
        shown = problems[:MAX_REPORTED] + ([f"... and {more} more"] if more > 0 else [])
        raise DetectorInputError("bad rows:\n" + "\n".join(shown))
    if not convs:
        raise DetectorInputError(f"{path}: no rows")
    out: list[LabelledDialogue] = []
    for conv, turns in convs.items():
        seen: set[str] = set()
        labelled: list[LabelledTurn] = []
        alert = None
        for k in sorted(turns):
            new = tuple(sorted(turns[k]["gold"] - seen))
            seen |= turns[k]["gold"]
            labelled.append(LabelledTurn(turn=k, gold=new, predicted=tuple(sorted(turns[k]["pred"]))))
            if turns[k]["alert"] and alert is None:
                alert = k
        out.append(LabelledDialogue(conversation_id=conv, turns=tuple(labelled), alert_turn=alert))
    return out
