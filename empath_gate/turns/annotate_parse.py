"""Parse the LLM annotator's reply against the dialogue it labels (pure, fail-closed, no guessing).

The reply is one JSON object, optionally in one markdown fence around the whole reply (as the
judge's, :func:`empath_gate.judging.parse.extract_json_text`)::

    {"turns": [
      {"turn": 0, "role": "user", "label": "hopelessness", "intensity": 2, "valence": -0.8},
      {"turn": 1, "role": "assistant", "label": "concern", "intensity": 1, "valence": -0.2,
       "strategy": "question"}
    ]}

Rules: exactly one entry per turn, in order (``turn`` equal to its position, ``role`` equal to
the dialogue's); ``label`` a user-side id on user turns and a bot-side id on assistant turns;
``intensity`` an integer 0..3 (an integral number such as ``2.0`` is accepted, ``2.5`` or
``true`` are not); ``valence`` a number in -1..1 (never clamped); ``strategy`` one of the eight
ids on assistant turns, absent or null on user turns. Other keys are ignored.

Fewer entries than turns raise :class:`AnnotationParseError` with ``reason="incomplete"``;
anything else wrong raises it with ``reason="parse_error"``; the message names the entry and the
offending value. No label is ever filled in by default.
"""

from __future__ import annotations

import math
from typing import Any, Literal

from empath_gate.bounded import InputLimitError, check_body, loads_json
from empath_gate.judging.parse import extract_json_text
from empath_gate.turns.model import BOT_LABELS, STRATEGIES, USER_LABELS, Dialogue, TurnLabel


class AnnotationParseError(ValueError):
    """The reply gives no usable labels; ``reason`` is ``parse_error`` or ``incomplete``."""

    def __init__(self, message: str, reason: Literal["parse_error", "incomplete"] = "parse_error") -> None:
        super().__init__(message)
        self.reason: Literal["parse_error", "incomplete"] = reason


def _unique(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            raise ValueError(f"duplicate key {key!r}")
        out[key] = value
    return out


def _intensity(value: Any, where: str) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise AnnotationParseError(f"{where}.intensity: expected an integer 0-3, got {value!r}")
    if isinstance(value, float) and not value.is_integer():
        raise AnnotationParseError(f"{where}.intensity: expected an integer 0-3, got {value!r}")
    if not 0 <= int(value) <= 3:
        raise AnnotationParseError(f"{where}.intensity: {value!r} is outside 0-3")
    return int(value)


def _valence(value: Any, where: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise AnnotationParseError(f"{where}.valence: expected a number in -1..1, got {value!r}")
    if not -1.0 <= float(value) <= 1.0:
        raise AnnotationParseError(f"{where}.valence: {value!r} is outside -1..1")
    return float(value)


def _entry(i: int, raw: Any, dialogue: Dialogue) -> TurnLabel:
    where = f"turns[{i}]"
    if not isinstance(raw, dict):
        raise AnnotationParseError(f"{where}: expected an object, got {type(raw).__name__}")
    role = dialogue.turns[i].role
    if raw.get("turn") != i or isinstance(raw.get("turn"), bool):
        raise AnnotationParseError(f"{where}.turn: expected {i} (one entry per turn, in order), "
                                   f"got {raw.get('turn')!r}")
    if raw.get("role") != role:
        raise AnnotationParseError(f"{where}.role: turn {i} is a {role} turn, got {raw.get('role')!r}")
    allowed = USER_LABELS if role == "user" else BOT_LABELS
    label = raw.get("label")
    if label not in allowed:
        raise AnnotationParseError(f"{where}.label: {label!r} is not a {role} label ({', '.join(allowed)})")
    strategy = raw.get("strategy")
    if role == "assistant" and strategy not in STRATEGIES:
        raise AnnotationParseError(f"{where}.strategy: {strategy!r} is not a strategy "
                                   f"({', '.join(STRATEGIES)})")
    if role == "user" and strategy is not None:
        raise AnnotationParseError(f"{where}.strategy: user turns have no strategy, got {strategy!r}")
    return TurnLabel(turn=i, role=role, label=str(label), intensity=_intensity(raw.get("intensity"), where),
                     valence=_valence(raw.get("valence"), where),
                     strategy=str(strategy) if strategy is not None else None)


def parse_annotation_reply(reply: str, dialogue: Dialogue) -> tuple[TurnLabel, ...]:
    """The labels of every turn of ``dialogue`` from ``reply`` (see the module docstring).
    Raises AnnotationParseError."""
    body = extract_json_text(reply)
    try:
        data = loads_json(check_body(body, "annotator reply"), "annotator reply", object_pairs_hook=_unique)
    except InputLimitError as exc:
        raise AnnotationParseError(str(exc)) from None
    except ValueError as exc:
        head = body[:80].replace("\n", " ")
        raise AnnotationParseError(f"the reply is not a JSON object: {exc}; reply starts {head!r}") from None
    if not isinstance(data, dict) or not isinstance(data.get("turns"), list):
        raise AnnotationParseError("the reply is not an object with a 'turns' list")
    entries: list[Any] = data["turns"]
    n = len(dialogue.turns)
    if len(entries) < n:
        raise AnnotationParseError(f"{len(entries)} entries for {n} turns: turns {len(entries)}..{n - 1} "
                                   "have no labels", reason="incomplete")
    if len(entries) > n:
        raise AnnotationParseError(f"{len(entries)} entries for {n} turns")
    return tuple(_entry(i, raw, dialogue) for i, raw in enumerate(entries))


__all__ = ["AnnotationParseError", "parse_annotation_reply"]
