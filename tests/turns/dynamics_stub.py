"""A small deterministic annotator for the dynamics tests (keyword rules, not the product's).

User messages: "hopeless"/"sin esperanza" -> hopelessness (-0.9), "sad"/"triste" -> sadness_grief
(-0.6), "scared" -> fear_anxiety (-0.5), "better"/"mejor" -> relief_calm (0.5), "hope" ->
hope (0.7), otherwise neutral (0.0). Bot messages: warmth_care; strategy providing_suggestions
when the text has "try"/"intenta", question when it has "?", else affirmation_reassurance. A
dialogue with a message containing "UNPARSEABLE" fails with ``parse_error``."""

from __future__ import annotations

from empath_gate.turns.model import Annotation, AnnotatorFailure, Dialogue, TurnLabel, TurnLabels

USER_RULES = (
    (("hopeless", "sin esperanza"), "hopelessness", -0.9),
    (("sad", "triste"), "sadness_grief", -0.6),
    (("scared",), "fear_anxiety", -0.5),
    (("better", "mejor"), "relief_calm", 0.5),
    (("hope",), "hope", 0.7),
)


def stub_annotate(dialogue: Dialogue) -> Annotation:
    if any("UNPARSEABLE" in t.text for t in dialogue.turns):
        return AnnotatorFailure(
            conversation_id=dialogue.conversation_id,
            annotator="offline",
            reason="parse_error",
            detail="stub: marked unparseable",
        )
    labels = []
    for i, t in enumerate(dialogue.turns):
        low = t.text.lower()
        if t.role == "user":
            label, valence = "neutral", 0.0
            for words, lab, val in USER_RULES:
                if any(w in low for w in words):
                    label, valence = lab, val
                    break
            labels.append(TurnLabel(turn=i, role="user", label=label, intensity=2, valence=valence))
        else:
            strategy = (
                "providing_suggestions"
                if ("try" in low or "intenta" in low)
                else "question"
                if "?" in t.text
                else "affirmation_reassurance"
            )
            labels.append(
                TurnLabel(
                    turn=i, role="assistant", label="warmth_care", intensity=1, valence=0.4, strategy=strategy
                )
            )
    return TurnLabels(
        conversation_id=dialogue.conversation_id, annotator="offline", version="stub-1", labels=tuple(labels)
    )
