"""Speakers of multi-party conversations: who wrote a user turn, and how the target sees it.

A multi-party seed (:attr:`~empath_gate.instrument.models.Seed.multi_party`) declares its
``participants`` (id, display name, relation, minor) and the participant who writes each script
turn (``speakers``). Every user turn of its transcripts carries a
:class:`~empath_gate.conversation.transcript.SpeakerRef`. The target receives the speaker by the
``multi_party_convention`` setting:

* ``prefix`` (default): ``"Name: text"`` in the message content. The client may still merge
  two consecutive user messages (e.g. around a filtered reply); each keeps its label.
* ``name``: the content as written plus the OpenAI ``name`` field (:func:`name_field`: the
  display name folded to ``[A-Za-z0-9_-]``, at most 64 characters, the characters the OpenAI
  chat API accepts there); messages of different names are never merged
  (:func:`empath_gate.llm.normalize.normalize_messages`).

One-user conversations are unchanged: no label, no ``name``. Pure functions.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence
from typing import Any, Literal

from empath_gate.conversation.transcript import SpeakerRef, Turn
from empath_gate.instrument.models import Seed

Convention = Literal["prefix", "name"]
"""How speakers reach the target (the ``multi_party_convention`` setting)."""

_NAME_CHARS = re.compile(r"[^A-Za-z0-9_-]+")


def speaker_ref(seed: Seed, participant_id: str) -> SpeakerRef:
    """The :class:`SpeakerRef` of participant ``participant_id`` of ``seed``; KeyError when the
    seed declares no such participant."""
    p = seed.participant(participant_id)
    return SpeakerRef(id=p.id, name=p.name, relation=p.relation)


def script_speaker(seed: Seed, user_turn: int) -> SpeakerRef | None:
    """Who writes script turn ``user_turn`` (0-based) of ``seed``: None for a one-user seed or
    past the script's end."""
    if not seed.multi_party or user_turn >= len(seed.speakers):
        return None
    return speaker_ref(seed, seed.speakers[user_turn])


def name_field(display_name: str) -> str:
    """``display_name`` as an OpenAI ``name`` field: accents removed (NFKD), every run of other
    characters than ``A-Za-z0-9_-`` replaced by ``_``, edges trimmed, at most 64 characters
    (``"María José"`` -> ``"Maria_Jose"``); ``"speaker"`` when nothing is left."""
    ascii_text = unicodedata.normalize("NFKD", display_name).encode("ascii", "ignore").decode("ascii")
    folded = _NAME_CHARS.sub("_", ascii_text).strip("_")[:64]
    return folded or "speaker"


def target_message(turn: Turn, convention: Convention) -> dict[str, Any]:
    """The message the target receives for ``turn``: ``{"role", "content"}``, with the speaker
    as a ``Name: `` prefix (``prefix``) or a ``name`` field (``name``) for a user turn that
    carries a speaker."""
    msg: dict[str, Any] = {"role": turn.role, "content": turn.content}
    if turn.role != "user" or turn.speaker is None:
        return msg
    if convention == "name":
        msg["name"] = name_field(turn.speaker.name)
    else:
        msg["content"] = f"{turn.speaker.name}: {turn.content}"
    return msg


def target_dialogue(turns: Sequence[Turn], convention: Convention) -> list[dict[str, Any]]:
    """The dialogue as the target receives it (:func:`target_message` of each turn, in order)."""
    return [target_message(t, convention) for t in turns]


def split_label(text: str, seed: Seed) -> tuple[str | None, str]:
    """``(participant id, body)`` of an auditor reply ``"Name: body"`` whose label is the display
    name (case-insensitive) of a participant of ``seed``; ``(None, text)`` when ``text`` has no
    such label or the seed is not multi-party."""
    if not seed.multi_party:
        return None, text
    head, sep, body = text.partition(":")
    if not sep:
        return None, text
    label = head.strip().casefold()
    for p in seed.participants:
        if label == p.name.casefold():
            return p.id, body.strip()
    return None, text


def allowed_speakers(seed: Seed, user_turn: int) -> tuple[str, ...]:
    """Participant ids who may write user turn ``user_turn`` (0-based) of ``seed``: the script's
    speaker of that turn while the script lasts, any participant after it; ``()`` for a
    one-user seed."""
    if not seed.multi_party:
        return ()
    if user_turn < len(seed.speakers):
        return (seed.speakers[user_turn],)
    return tuple(p.id for p in seed.participants)
