"""Reading conversations to analyse: external logs (JSONL or CSV, one row per message) and the
tool's own transcript files, into :class:`~empath_gate.turns.model.Dialogue` values.

**External rows** carry ``conversation_id``, ``turn`` (an integer; messages are sorted by it
within a conversation; gaps are fine), ``role``, ``text``, and optionally ``locale``
(``es-MX``/``en-US``, also ``es``/``en``, any case, ``_`` or ``-``) and ``profile`` (a persona
behaviour profile id, for the profile x strategy table). Roles: ``user`` and ``assistant``,
or an alias of :data:`ROLE_ALIASES` (texter, seeker, help-seeker, client, caller -> user;
volunteer, counselor, supporter, listener, bot, agent -> assistant), any case.

A row with a problem (not an object, unknown role, missing or empty text, missing id, a
``turn`` that is not an integer, a turn already given for that conversation, an unknown
locale) is reported as an :class:`InputProblem` with its file
and 1-based line (CSV: the header is line 1) and left out (an unknown locale only drops the
locale); the rest is analysed. Nothing is dropped silently. Conversation ids, profiles and
problem messages are redacted of secrets (:func:`empath_gate.secrets.redact`).

**Transcript files** (:mod:`empath_gate.conversation.transcript_io`) are recognised by their
header line (``"type": "header"``); each is one conversation keyed by its ``transcript_id``,
with ``suite`` and ``locale`` as grouping keys (external rows: ``source``, the file name, and
``locale``, ``unknown`` when no row gives one) and the persona's behaviour profiles when a
``profiles_of`` lookup is given. A transcript that cannot be read is reported as a problem.

Every file is read through :mod:`empath_gate.bounded`; a file that cannot be read at all
(missing, not UTF-8, over an input limit, broken CSV) raises ConfigError naming it.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any, NamedTuple

from pydantic import BaseModel, ConfigDict, field_validator

from empath_gate.bounded import csv_header, current_limits, iter_csv, loads_json, read_text
from empath_gate.errors import ConfigError
from empath_gate.secrets import redact
from empath_gate.turns.model import Dialogue, DialogueTurn, Role

ROLE_ALIASES: Mapping[str, Role] = {
    "user": "user",
    "texter": "user",
    "seeker": "user",
    "help-seeker": "user",
    "help_seeker": "user",
    "client": "user",
    "caller": "user",
    "assistant": "assistant",
    "volunteer": "assistant",
    "counselor": "assistant",
    "counsellor": "assistant",
    "supporter": "assistant",
    "listener": "assistant",
    "bot": "assistant",
    "agent": "assistant",
}
"""Role names accepted in external rows (lower-cased before lookup)."""

LOCALES = {"es-mx": "es-MX", "es": "es-MX", "en-us": "en-US", "en": "en-US"}
"""Locale spellings accepted in external rows (lower-cased, ``_`` read as ``-``)."""

REQUIRED = ("conversation_id", "turn", "role", "text")


class InputProblem(BaseModel):
    """A row (or file) of the input that was not analysed, or analysed with a caveat:
    ``source`` file, 1-based ``line`` (``None`` for the whole file), ``what`` happened."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    source: str
    line: int | None
    what: str

    @field_validator("what")
    @classmethod
    def _no_secret(cls, value: str) -> str:
        """A problem quotes input values; a credential among them is taken out."""
        return redact(value)


class SourcedDialogue(BaseModel):
    """A dialogue with what the statistics group by: ``keys`` (``source`` file, ``locale``,
    and ``suite`` for transcripts) and the persona behaviour ``profiles`` (may be empty);
    ``feelings``: a transcript's seeker feeling per user message (LLM auditor; empty otherwise),
    kept beside the dialogue so no annotator sees it."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    dialogue: Dialogue
    keys: dict[str, str]
    profiles: tuple[str, ...] = ()
    feelings: tuple[int | None, ...] = ()


class ReadConversations(BaseModel):
    """What :func:`read_conversations` found: the ``conversations`` (in order of first
    appearance), the ``problems`` (rows not analysed) and ``rows`` (message rows read)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    conversations: tuple[SourcedDialogue, ...]
    problems: tuple[InputProblem, ...]
    rows: int


class _Row(NamedTuple):
    """One usable row (a tuple: 200,000 of them are read for a 10,000-conversation file)."""

    source: str
    line: int
    conversation_id: str
    turn: int
    role: Role
    text: str
    locale: str | None
    profile: str | None


def _row(rec: Any, source: str, line: int, problems: list[InputProblem]) -> _Row | None:
    def bad(what: str) -> None:
        problems.append(InputProblem(source=source, line=line, what=what + "; row not analysed"))

    if not isinstance(rec, dict):
        bad("not an object with conversation_id, turn, role, text")
        return None
    cid = rec.get("conversation_id")
    if isinstance(cid, bool) or not isinstance(cid, (str, int)) or not str(cid).strip():
        bad("missing conversation_id")
        return None
    raw_turn = rec.get("turn")
    turn: int | None = None
    if isinstance(raw_turn, int) and not isinstance(raw_turn, bool):
        turn = raw_turn
    elif isinstance(raw_turn, str) and raw_turn.strip().lstrip("-").isdigit():
        turn = int(raw_turn.strip())
    elif isinstance(raw_turn, float) and raw_turn.is_integer():
        turn = int(raw_turn)
    if turn is None:
        bad(f"turn {raw_turn!r} is not an integer")
        return None
    raw_role = rec.get("role")
    role = ROLE_ALIASES.get(raw_role.strip().lower()) if isinstance(raw_role, str) else None
    if role is None:
        known = ", ".join(sorted(ROLE_ALIASES))
        bad(f"unknown role {raw_role!r} (use user or assistant, or an alias: {known})")
        return None
    text = rec.get("text")
    if not isinstance(text, str) or not text.strip():
        bad(
            "missing text"
            if text is None
            else "empty text"
            if isinstance(text, str)
            else "text is not a string"
        )
        return None
    locale = rec.get("locale")
    canonical = None
    if isinstance(locale, str) and locale.strip():
        canonical = LOCALES.get(locale.strip().lower().replace("_", "-"))
        if canonical is None:
            problems.append(
                InputProblem(
                    source=source,
                    line=line,
                    what=f"unknown locale {locale!r} (es-MX or en-US); analysed with the locale unknown",
                )
            )
    profile = rec.get("profile")
    profile = profile.strip() if isinstance(profile, str) and profile.strip() else None
    return _Row(
        source=source,
        line=line,
        conversation_id=str(cid).strip(),
        turn=turn,
        role=role,
        text=text,
        locale=canonical,
        profile=profile,
    )


_NOT_JSON = object()


def _jsonl_records(text: str, source: str, problems: list[InputProblem]) -> Iterable[tuple[int, Any]]:
    """Each non-blank line's value; a line that is not JSON is a problem (and ``_NOT_JSON``),
    not the end of the file."""
    lim = current_limits()
    rows = 0
    for n, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        rows += 1
        if rows > lim.max_input_rows:
            raise ConfigError(
                f"{source}:{n}: more than max_input_rows = {lim.max_input_rows:,} lines — "
                "split the file, or raise max_input_rows (EMPATH_MAX_INPUT_ROWS)"
            )
        try:
            yield n, loads_json(line, f"{source}:{n}", lim)
        except json.JSONDecodeError as exc:
            problems.append(
                InputProblem(source=source, line=n, what=f"not valid JSON ({exc.msg}); row not analysed")
            )
            yield n, _NOT_JSON


def _is_transcript(text: str) -> bool:
    first = next((ln for ln in text.splitlines() if ln.strip()), "")
    return first.lstrip().startswith("{") and '"type"' in first and '"header"' in first


def _transcript(
    path: Path, problems: list[InputProblem], profiles_of: Callable[[str], Sequence[str]] | None
) -> SourcedDialogue | None:
    from empath_gate.conversation.transcript_io import read_transcript

    try:
        t = read_transcript(path)
    except ValueError as exc:
        problems.append(InputProblem(source=str(path), line=None, what=f"transcript not analysed: {exc}"))
        return None
    dialogue = Dialogue(
        conversation_id=t.transcript_id,
        locale=t.locale,
        turns=tuple(
            DialogueTurn(role=turn.role, text=turn.content, speaker=turn.speaker.id if turn.speaker else None)
            for turn in t.turns
        ),
    )
    keys = {"suite": t.suite, "locale": t.locale}
    feelings = tuple(turn.feeling_0_100 for turn in t.turns if turn.role == "user")
    return SourcedDialogue(
        dialogue=dialogue, keys=keys, profiles=tuple(profiles_of(t.persona_id)) if profiles_of else (),
        feelings=feelings if any(f is not None for f in feelings) else (),
    )


def read_conversations(
    paths: Sequence[Path], *, profiles_of: Callable[[str], Sequence[str]] | None = None
) -> ReadConversations:
    """Read every file of ``paths`` (module docstring): ``.csv`` as CSV, anything else as JSONL
    (a transcript when its first line is a transcript header). ``profiles_of``: persona id ->
    its behaviour profiles, for transcripts. Raises ConfigError for a file that cannot be read
    (missing, unreadable, not UTF-8, over an input limit, malformed CSV)."""
    problems: list[InputProblem] = []
    rows: list[_Row] = []
    whole: list[SourcedDialogue] = []
    count = 0
    for path in paths:
        source = str(path)
        try:
            text = read_text(Path(path))
        except (OSError, UnicodeDecodeError) as exc:
            raise ConfigError(
                f"{source}: cannot read the file ({exc}) — give a readable UTF-8 file"
            ) from None
        if path.suffix.lower() == ".csv":
            missing = [c for c in REQUIRED if c not in csv_header(text)]
            if missing:
                what = "missing columns: " + ", ".join(missing) + "; file not analysed"
                problems.append(InputProblem(source=source, line=1, what=what))
                continue
            records: Iterable[tuple[int, Any]] = iter_csv(text, source)
        elif _is_transcript(text):
            item = _transcript(Path(path), problems, profiles_of)
            if item is not None:
                whole.append(item)
                count += len(item.dialogue.turns)
            continue
        else:
            records = _jsonl_records(text, source, problems)
        for line, rec in records:
            count += 1
            if rec is _NOT_JSON:
                continue
            row = _row(rec, source, line, problems)
            if row is not None:
                rows.append(row)
    return ReadConversations(
        conversations=tuple(whole) + _assemble(rows, problems), problems=tuple(problems), rows=count
    )


def _assemble(rows: list[_Row], problems: list[InputProblem]) -> tuple[SourcedDialogue, ...]:
    """Group rows by conversation (first appearance order), drop duplicate turns with a
    problem, sort by turn."""
    by_conv: dict[str, dict[int, _Row]] = {}
    for r in rows:
        turns = by_conv.setdefault(r.conversation_id, {})
        if r.turn in turns:
            first = turns[r.turn]
            problems.append(
                InputProblem(
                    source=r.source,
                    line=r.line,
                    what=f"turn {r.turn} of conversation {r.conversation_id!r} is already given at "
                    f"{first.source}:{first.line}; row not analysed",
                )
            )
            continue
        turns[r.turn] = r
    out = []
    for cid, turns in by_conv.items():
        ordered = [turns[k] for k in sorted(turns)]
        locales = [r.locale for r in ordered if r.locale]
        locale = locales[0] if locales else None
        for r in ordered:
            if r.locale and r.locale != locale:
                problems.append(
                    InputProblem(
                        source=r.source,
                        line=r.line,
                        what=(
                            f"locale {r.locale} differs from the conversation's {locale}; "
                            f"analysed as {locale}"
                        ),
                    )
                )
        profiles = tuple(dict.fromkeys(redact(r.profile) for r in ordered if r.profile))
        dialogue = Dialogue(
            conversation_id=redact(cid),
            locale=locale,
            turns=tuple(DialogueTurn(role=r.role, text=r.text) for r in ordered),
        )
        keys = {"source": Path(ordered[0].source).name, "locale": locale or "unknown"}
        out.append(SourcedDialogue(dialogue=dialogue, keys=keys, profiles=profiles))
    return tuple(out)
