"""What the dynamics statistics read: one labelled conversation, and the check that an
annotator's labels really cover the dialogue they claim to label (pure).

Every statistic of :mod:`empath_gate.analysis.dynamics` reads :class:`LabelledConversation`
values; a conversation whose annotation failed never becomes one (it is listed as a failure in
the report and contributes nothing).
"""

from __future__ import annotations

from collections.abc import Sequence

from pydantic import Field

from empath_gate.analysis.base import AnalysisModel
from empath_gate.turns.model import (
    BOT_LABELS,
    STRATEGIES,
    USER_LABELS,
    Annotation,
    AnnotatorFailure,
    Dialogue,
    TurnLabel,
    TurnLabels,
)

NO_PROFILE = "(none)"
"""The profile key of a conversation that names no persona behaviour profile."""


class LabelledConversation(AnalysisModel):
    """One conversation with its turn labels, ready for the statistics.

    * ``conversation_id``: stable id (a transcript id, or an external file's id).
    * ``keys``: grouping values, e.g. ``{"suite": "crisis", "locale": "es-MX"}``; pooled
      statistics group by the keys they are given (a missing key groups as ``""``).
    * ``profiles``: the persona behaviour profiles of the help-seeker (e.g. ``resistance``);
      empty when unknown. A conversation counts once in each of its profiles' rows.
    * ``labels``: one :class:`~empath_gate.turns.model.TurnLabel` per message, in order,
      ``labels[i].turn == i`` (checked by :func:`checked_annotation`).
    * ``risk_turns``: 0-based indices of user messages that state suicide or self-harm risk
      explicitly (the instrument's ``explicit_risk`` patterns).
    * ``risk_speakers``: in a multi-party conversation, the speaker id of each ``risk_turns``
      entry, in the same order (who stated the risk); empty for a one-user conversation.
    * ``annotator``, ``version``: who labelled (``TurnLabels.annotator`` and ``version``).
    * ``feelings``: the seeker's own feeling (0-100) with each user message, in order (``None``:
      none on that message); empty when unknown (:mod:`.feeling`). Never read by an annotator.
    """

    conversation_id: str
    keys: dict[str, str] = Field(default_factory=dict)
    profiles: tuple[str, ...] = ()
    labels: tuple[TurnLabel, ...]
    risk_turns: tuple[int, ...] = ()
    risk_speakers: tuple[str, ...] = ()
    annotator: str = "offline"
    version: str = ""
    feelings: tuple[int | None, ...] = ()

    def user_labels(self) -> list[TurnLabel]:
        """The user messages' labels, in order."""
        return [t for t in self.labels if t.role == "user"]


def checked_annotation(dialogue: Dialogue, annotation: Annotation) -> Annotation:
    """``annotation`` when it labels ``dialogue`` completely and consistently, else an
    :class:`~empath_gate.turns.model.AnnotatorFailure` with reason ``incomplete`` saying what
    is wrong (never a repaired or default label). Checked: one label per message, ``turn``
    equal to its position, the same role as the message, a label of that role's label set
    (:data:`USER_LABELS`, :data:`BOT_LABELS`), a strategy of :data:`STRATEGIES` on every
    assistant message and none on user messages. A failure passes through unchanged."""
    if isinstance(annotation, AnnotatorFailure):
        return annotation
    problem = _label_problem(dialogue, annotation)
    if problem is None:
        return annotation
    return AnnotatorFailure(
        conversation_id=dialogue.conversation_id,
        annotator=annotation.annotator,
        reason="incomplete",
        detail=problem,
    )


def _label_problem(dialogue: Dialogue, labels: TurnLabels) -> str | None:
    if labels.conversation_id != dialogue.conversation_id:
        return f"labels are for conversation {labels.conversation_id!r}"
    if len(labels.labels) != len(dialogue.turns):
        return f"{len(labels.labels)} labels for {len(dialogue.turns)} messages"
    user, bot, strategies = set(USER_LABELS), set(BOT_LABELS), set(STRATEGIES)
    for i, (turn, lab) in enumerate(zip(dialogue.turns, labels.labels, strict=True)):
        where = f"message {i + 1}"
        if lab.turn != i:
            return f"{where}: label numbered turn {lab.turn}"
        if lab.role != turn.role:
            return f"{where}: labelled as {lab.role}, written by {turn.role}"
        if lab.label not in (user if lab.role == "user" else bot):
            return f"{where}: {lab.label!r} is not a {lab.role} label"
        if lab.role == "assistant" and lab.strategy not in strategies:
            return f"{where}: strategy {lab.strategy!r} is not one of the support strategies"
        if lab.role == "user" and lab.strategy is not None:
            return f"{where}: a user message carries a strategy"
    return None


def labelled(
    dialogue: Dialogue,
    labels: TurnLabels,
    *,
    keys: dict[str, str] | None = None,
    profiles: Sequence[str] = (),
    risk_turns: Sequence[int] = (),
) -> LabelledConversation:
    """The :class:`LabelledConversation` of a dialogue whose labels passed
    :func:`checked_annotation` (ValueError otherwise)."""
    problem = _label_problem(dialogue, labels)
    if problem is not None:
        raise ValueError(f"{dialogue.conversation_id}: {problem}")
    return LabelledConversation(
        conversation_id=dialogue.conversation_id,
        keys=dict(keys or {}),
        profiles=tuple(profiles),
        labels=labels.labels,
        risk_turns=tuple(sorted(set(risk_turns))),
        annotator=labels.annotator,
        version=labels.version,
    )
