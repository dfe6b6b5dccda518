"""A transcript's risk labels: the seed's gold labels and the target's own detector's
predictions (``risk`` events), per user turn (pure; the figures: :mod:`empath_gate.analysis.detector`).

The gold labels of the seed (:func:`empath_gate.instrument.risk_labels.seed_labels`) are given at
its confirm turn (the evidence's: the seed's, or the judge's / the first ``explicit_risk`` match
with an LLM auditor); the predictions of user turn ``k`` are the labels of every ``risk`` event
on the target's reply to it.
"""

from __future__ import annotations

from empath_gate.analysis.detector import LabelledDialogue, LabelledTurn
from empath_gate.conversation.transcript import Transcript
from empath_gate.instrument.risk_labels import RiskLabel, seed_labels
from empath_gate.instrument.seed_models import Seed


def risk_event_count(transcript: Transcript) -> int:
    """How many ``risk`` events the target reported in ``transcript``."""
    return sum(1 for t in transcript.turns for e in t.events if e.kind == "risk" and e.role == "target")


def labelled_dialogue(
    transcript: Transcript, seed: Seed, alert_turn: int | None, confirm_turn: int | None
) -> LabelledDialogue | None:
    """The transcript's :class:`LabelledDialogue`; None when the seed's gold labels cannot be
    given (an unsplit ``sexual_violence``). A seed with a risk but no confirm turn reached in the
    transcript gives no gold label at any turn (its turns still count false positives)."""
    gold = seed_labels(seed)
    if gold is None:
        return None
    keys = tuple(g.key for g in gold)
    turns: list[LabelledTurn] = []
    k = 0
    pending: set[str] = set()
    for t in transcript.turns:
        if t.role == "user":
            if k:
                turns.append(_turn(k, keys, confirm_turn, pending))
            k += 1
            pending = set()
        else:
            for e in t.events:
                if e.kind == "risk" and e.role == "target":
                    pending.update(RiskLabel.model_validate(x).key for x in e.detail.get("labels", ()))
    if k:
        turns.append(_turn(k, keys, confirm_turn, pending))
    return LabelledDialogue(
        conversation_id=transcript.transcript_id,
        turns=tuple(turns),
        alert_turn=alert_turn if gold else None,
    )


def _turn(k: int, gold: tuple[str, ...], confirm: int | None, predicted: set[str]) -> LabelledTurn:
    return LabelledTurn(turn=k, gold=gold if k == confirm else (), predicted=tuple(sorted(predicted)))
