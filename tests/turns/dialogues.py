"""Dialogues for the offline annotator's tests: user turns, each answered by a short assistant
reply, and what the annotator gives those user turns (its user labels never read the replies)."""

from __future__ import annotations

from empath_gate.turns.model import Dialogue, DialogueTurn, TurnLabel, TurnLabels
from empath_gate.turns.offline import annotate

RULES = "offline-7/"
"""The rules version every annotation here must carry (a test pins what these rules give)."""
REPLY = "ok"


def user_dialogue(locale: str, *texts: str) -> Dialogue:
    """Dialogue ``c`` in ``locale``: each of ``texts`` as a user turn followed by :data:`REPLY`."""
    turns: list[DialogueTurn] = []
    for text in texts:
        turns += [DialogueTurn(role="user", text=text), DialogueTurn(role="assistant", text=REPLY)]
    return Dialogue(conversation_id="c", locale=locale, turns=tuple(turns))


def user_labels(locale: str, *texts: str) -> list[TurnLabel]:
    """The offline annotator's labels of the user turns of :func:`user_dialogue`, in order."""
    out = annotate(user_dialogue(locale, *texts))
    assert isinstance(out, TurnLabels) and RULES in out.version
    return [lab for lab in out.labels if lab.role == "user"]


def user_valences(locale: str, *texts: str) -> list[float]:
    """The valences of :func:`user_labels`, in order (-1..1)."""
    return [lab.valence for lab in user_labels(locale, *texts)]
