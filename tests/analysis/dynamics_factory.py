"""Builders of labelled conversations for the dynamics tests.

A conversation is written as a list of messages: ``("u", label, valence)`` for a user message
and ``("b", label, strategy)`` for a bot message."""

from __future__ import annotations

from collections.abc import Sequence

from empath_gate.analysis.dynamics import LabelledConversation
from empath_gate.turns.model import TurnLabel

Message = tuple[str, str, float | str]

BOT_VALENCE = {"warmth_care": 0.5, "concern": 0.0, "neutral_informative": 0.0}


def labels_of(messages: Sequence[Message]) -> tuple[TurnLabel, ...]:
    out = []
    for i, (who, label, extra) in enumerate(messages):
        if who == "u":
            assert isinstance(extra, float | int)
            out.append(TurnLabel(turn=i, role="user", label=label, intensity=2, valence=float(extra)))
        else:
            assert isinstance(extra, str)
            out.append(
                TurnLabel(
                    turn=i,
                    role="assistant",
                    label=label,
                    intensity=1,
                    valence=BOT_VALENCE[label],
                    strategy=extra,
                )
            )
    return tuple(out)


def conv(
    cid: str,
    messages: Sequence[Message],
    *,
    keys: dict[str, str] | None = None,
    profiles: Sequence[str] = (),
    risk: Sequence[int] = (),
) -> LabelledConversation:
    return LabelledConversation(
        conversation_id=cid,
        keys=keys or {},
        profiles=tuple(profiles),
        labels=labels_of(messages),
        risk_turns=tuple(risk),
    )


def user_only(
    cid: str, valences: Sequence[float], label: str = "sadness_grief", **kw: object
) -> LabelledConversation:
    msgs: list[Message] = []
    for v in valences:
        msgs.append(("u", label, v))
        msgs.append(("b", "warmth_care", "question"))
    return conv(cid, msgs, **kw)  # type: ignore[arg-type]
