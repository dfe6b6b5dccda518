"""The transcript: one run's dialogue between the auditor (as user) and the target.

A transcript is written as JSONL, one file per run: the first line is the header
(``{"type": "header", ...}`` = :class:`Transcript` without turns), then one line per turn
(``{"type": "turn", ...}`` = :class:`Turn`). ``transcript_path`` names the file.

Turn indices are 0-based positions in ``turns``; user turns and assistant turns alternate
(the judge sees them indexed this way).
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

# the call types, defined with the model client and recorded on turns
from empath_gate.llm.events import CallFields
from empath_gate.llm.events import Event as Event
from empath_gate.llm.events import EventKind as EventKind
from empath_gate.llm.events import Usage as Usage
from empath_gate.turns.model import AnnotatorFailure, TurnLabels

TRANSCRIPT_SCHEMA_VERSION: Literal["2"] = "2"
"""Version of the transcript header and turn records. 2 adds ``Turn.speaker`` (multi-party
seeds); a header without ``schema_version`` is version 1 (read as such: every 1 file is a 2
file without speakers)."""
READABLE_TRANSCRIPT_VERSIONS: tuple[str, ...] = ("1", "2")


class SpeakerRef(BaseModel):
    """Who wrote a user turn of a multi-party conversation: the participant's ``id`` (a slug of
    the seed), display ``name`` and ``relation`` as the seed states them."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    id: str = Field(min_length=1)
    name: str = Field(min_length=1)
    relation: str = ""


class Turn(CallFields):
    """One message of the dialogue.

    ``role`` is ``user`` (written by the auditor, the script, or a fallback: see ``source``)
    or ``assistant`` (the target). ``cost_usd`` is ``None`` when the price is unknown
    (never a made-up price). ``cache`` tells whether the reply came from the cache.
    Timestamps are ISO-8601 UTC strings.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    index: int = Field(ge=0)
    role: Literal["user", "assistant"]
    content: str
    source: Literal["auditor", "script", "fallback", "target"]
    feeling_0_100: int | None = Field(
        default=None, ge=0, le=100,
        description="LLM-auditor user turns: the simulated help-seeker's own feeling (0 worst, 100 "
        "best); never shown to the target, the judge or the annotator; absent in older transcripts",
    )
    events: tuple[Event, ...] = ()
    speaker: SpeakerRef | None = Field(
        default=None, description="multi-party seeds: who wrote this user turn (None: the one user)"
    )


class Transcript(BaseModel):
    """One run of one conversation (seed x persona).

    ``conversation_id`` = ``<seed>-<persona>``; ``transcript_id`` = ``<conversation_id>-r<run>``
    (``run`` is 0-based). ``status``: ``complete`` (ended normally: max turns or the auditor
    ended it), ``error`` (an infrastructure error stopped it; ``error`` says why),
    ``budget`` (not started or stopped because ``max_cost_usd`` was reached).
    ``target_filtered`` counts target replies blocked by a content filter (a safety event).
    ``schema_version``: :data:`TRANSCRIPT_SCHEMA_VERSION` when written by this version.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    schema_version: Literal["1", "2"] = TRANSCRIPT_SCHEMA_VERSION
    suite: str
    seed_id: str
    persona_id: str
    locale: str
    run: int = Field(ge=0)
    conversation_id: str
    transcript_id: str
    target: str = Field(description="target kind and model/entry, never a key")
    target_prompt_hash: str | None = None
    auditor: str = Field(description="'scripted' or the auditor model")
    max_turns: int
    turns: tuple[Turn, ...] = ()
    status: Literal["complete", "error", "budget"] = "complete"
    error: str | None = None
    events: tuple[Event, ...] = ()
    started_at: str | None = None
    ended_at: str | None = None
    annotation: TurnLabels | AnnotatorFailure | None = Field(
        default=None, discriminator="status",
        description="the per-turn emotion labels of the dialogue (or the annotator's failure), added "
        "after generation by the configured dynamics annotator; None when off and in older transcripts",
    )

    @property
    def cost_usd(self) -> float:
        """Sum of known turn costs (unknown costs are not counted: see ``unpriced_calls``)."""
        return sum(t.cost_usd for t in self.turns if t.cost_usd is not None)

    @property
    def speakers(self) -> tuple[str, ...]:
        """Ids of the participants who wrote user turns, in order of first appearance (``()`` for
        a one-user conversation)."""
        return tuple(dict.fromkeys(t.speaker.id for t in self.turns if t.speaker is not None))

    @property
    def target_filtered(self) -> int:
        return sum(1 for t in self.turns for e in t.events if e.kind == "filtered" and e.role == "target")


class AuditorTally(BaseModel):
    """How the LLM auditor did on one transcript, counted from its events (all 0 for the
    scripted auditor).

    * ``turns``: user turns the LLM auditor was asked for: its own and the script's fallback
      turns, plus one for a fallback that ended the conversation (no script turn left).
    * ``fallbacks``: ``fallback`` events (the script's turn replaced unusable replies, or ended
      the conversation); ``fallback_reasons``: their count per cause of the last bad reply
      (``refusal``, ``assistant_voice``, ``instruction_leak``, ``narration``, ``empty``,
      ``early_end``, ``too_long``).
    * ``refusals_recovered`` / ``breaks_recovered``: refusals / other breaks followed by a
      usable retry (the turn is still the auditor's: the transcript is not degraded).
    * ``fallback_share``: ``fallbacks / turns`` (0.0 when ``turns`` is 0).
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    turns: int = 0
    fallbacks: int = 0
    fallback_reasons: dict[str, int] = Field(default_factory=dict)
    refusals_recovered: int = 0
    breaks_recovered: int = 0

    @property
    def fallback_share(self) -> float:
        return self.fallbacks / self.turns if self.turns else 0.0


def auditor_tally(transcript: Transcript) -> AuditorTally:
    """The :class:`AuditorTally` of ``transcript`` (pure). A refusal or break event without an
    ``outcome`` (a transcript of an earlier version) counts as recovered when it sits on a turn
    the auditor wrote itself."""
    turns = sum(1 for t in transcript.turns if t.role == "user" and t.source in ("auditor", "fallback"))
    reasons: dict[str, int] = {}
    fallbacks = recovered_refusals = recovered_breaks = 0
    placed: list[tuple[str | None, Event]] = [(t.source, e) for t in transcript.turns for e in t.events]
    placed += [(None, e) for e in transcript.events]
    for source, e in placed:
        if e.kind == "fallback":
            fallbacks += 1
            reason = str(e.detail.get("reason"))
            reasons[reason] = reasons.get(reason, 0) + 1
            turns += "ended" in e.detail
        elif e.kind in ("auditor_refusal", "auditor_break"):
            outcome = e.detail.get("outcome")
            if outcome == "retried" or (outcome is None and source == "auditor"):
                recovered_refusals += e.kind == "auditor_refusal"
                recovered_breaks += e.kind == "auditor_break"
    return AuditorTally(
        turns=turns,
        fallbacks=fallbacks,
        fallback_reasons=dict(sorted(reasons.items())),
        refusals_recovered=recovered_refusals,
        breaks_recovered=recovered_breaks,
    )
