"""The turn layer's data: a dialogue to label, the labels of one turn, and the outcome of one
annotation (labels or a visible failure, never a default label).

A :class:`Dialogue` is what every annotator reads: the tool's own transcripts and external
conversations (a team's logs) both become one. Turn indices are 0-based positions in
``Dialogue.turns``; reports show them 1-based.

Label ids come from the instrument's label set (``suites/emotions.yaml``); the ids below are the
ones every annotator and every statistic agree on. Strategy ids are the eight support strategies
named by ESConv (Liu et al., "Towards Emotional Support Dialog Systems", ACL 2021); only the names
are used, no ESConv text.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

Role = Literal["user", "assistant"]

USER_LABELS: tuple[str, ...] = (
    "hopelessness",
    "sadness_grief",
    "fear_anxiety",
    "anger",
    "shame_guilt",
    "numbness",
    "neutral",
    "relief_calm",
    "hope",
)
"""User-side primary labels, in the label set's order."""

BOT_LABELS: tuple[str, ...] = ("warmth_care", "concern", "neutral_informative")
"""Bot-side primary labels, in the label set's order."""

STRATEGIES: tuple[str, ...] = (
    "question",
    "restatement_paraphrasing",
    "reflection_of_feelings",
    "self_disclosure",
    "affirmation_reassurance",
    "providing_suggestions",
    "information",
    "other",
)
"""Bot support strategies: ESConv's eight strategy names as ASCII ids (Liu et al., ACL 2021)."""

AnnotatorKind = Literal["offline", "judge", "auditor"]
"""Who labelled: the offline lexicon annotator, the LLM annotator (the judge model), or the LLM
auditor's own report of its feeling (``feeling_0_100``)."""


class DialogueTurn(BaseModel):
    """One message to label: ``role`` and ``text``; ``speaker`` names who wrote a user turn in a
    conversation with more than one person (``None`` otherwise)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    role: Role
    text: str
    speaker: str | None = None


class Dialogue(BaseModel):
    """A conversation to label. ``conversation_id`` is stable (a transcript's ``transcript_id`` or
    an external file's id); ``locale`` is ``es-MX`` or ``en-US`` (``None``: unknown, the
    annotator detects or falls back to ``en-US`` and says so)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    conversation_id: str
    locale: str | None = None
    turns: tuple[DialogueTurn, ...]


class TurnLabel(BaseModel):
    """The labels of one turn.

    * ``turn``: 0-based index in the dialogue; ``role`` as in the dialogue.
    * ``label``: the primary label id (a user-side id for user turns, a bot-side id for
      assistant turns); ``intensity`` 0 (absent/flat) .. 3 (strong); ``valence`` in -1..1.
    * ``strategy``: assistant turns only, one of :data:`STRATEGIES`; ``None`` on user turns.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    turn: int = Field(ge=0)
    role: Role
    label: str
    intensity: int = Field(ge=0, le=3)
    valence: float = Field(ge=-1.0, le=1.0)
    strategy: str | None = None


class TurnLabels(BaseModel):
    """One annotator's labels for a whole dialogue: one :class:`TurnLabel` per turn, in order.
    ``annotator`` is the kind; ``version`` the annotator's version (the lexicon version, or the
    LLM template's hash), so a change of annotator is visible in results."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    status: Literal["labelled"] = "labelled"
    conversation_id: str
    annotator: AnnotatorKind
    version: str
    labels: tuple[TurnLabel, ...]


class AnnotatorFailure(BaseModel):
    """No labels could be obtained for a dialogue. ``reason``: ``parse_error``, ``truncated``,
    ``content_policy``, ``context_exceeded``, ``provider_error`` (as a judge failure) or
    ``incomplete`` (labels missing for some turns); ``detail`` says what happened. A failure is
    never replaced by default labels."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    status: Literal["failed"] = "failed"
    conversation_id: str
    annotator: AnnotatorKind
    reason: Literal[
        "parse_error", "truncated", "content_policy", "context_exceeded", "provider_error", "incomplete"
    ]
    detail: str = ""


Annotation = TurnLabels | AnnotatorFailure
"""What an annotator returns for one dialogue."""
