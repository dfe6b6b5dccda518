"""A user turn's valence read in its dialogue: the offline annotator's context rule (rules
``offline-4``).

A help-seeker mostly *tells the situation* ("I got home and he was there again") rather than
naming a feeling, and the gold's labelling guide reads every turn "given the turns before it"
("a neutral turn inside a distressing story may sit slightly below 0"). A turn scored on its own
words only then reads as a sudden 0 inside a despairing conversation, which is a false spike in
the valence trajectory (a false "volatile" or "U-shaped" arc, a false gain after a bot
strategy). So a user turn's valence is its own reading blended with the **context**: the valence
the annotator gave the previous user turn of the same dialogue (itself already read in context,
so an older turn's weight fades geometrically). The first user turn has no context and keeps its
own reading: a greeting or a plain question that opens a conversation stays near 0.

The blend is ``(1 - w) * own + w * context``, where the weight ``w`` depends on how much affective
evidence the turn has of its own (:class:`Evidence`):

* :data:`CARRY_NONE` for a turn with **no evidence** (no lexicon label, no rated word): it
  mostly continues the story, decayed toward its own reading (:data:`NEUTRAL_BASE`);
* :data:`CARRY_WEAK` for a turn with **weak evidence** (no lexicon label, some rated words);
* :data:`CARRY_LABELLED` for a turn with a **lexicon label**: it speaks for itself, so the
  context only smooths it a little, and never when the context has the other sign.

Rules ``offline-5`` add the turn's **kind** (:mod:`empath_gate.turns.user_cues`, applied by
:func:`cued` before the blend): a plain question or request keeps more of its own near-0 reading
(:data:`CARRY_ASK`, :data:`ASK_SHIFT`), and a plan to act or a thanks / easing construction is
positive evidence of its own (:data:`CUE_VALENCE`), which the context does not flip.

A risk statement is not blended (its cap, applied after, is the turn's own evidence). The
weights are round values chosen on the tune half of the project's gold (never on a held-out
set); their reasons are given with each.
"""

from __future__ import annotations

from typing import Literal

from empath_gate.turns.user_cues import Kind

Evidence = Literal["none", "weak", "labelled", "ask"]
"""How much affective evidence a user turn has of its own: ``none`` (no lexicon label and no
rated word), ``weak`` (rated words only) or ``labelled`` (a lexicon label other than neutral);
``ask``: a plain question or request with no lexicon label (rules ``offline-5``)."""

NEUTRAL_BASE = -0.1
"""Own valence of a user turn with no evidence: a help-seeker's plain turn sits a little below 0
(the guide's neutral band is -0.3..+0.3; project choice)."""
CARRY_NONE = 0.5
"""Context weight of a turn with no evidence: half the previous turn's valence carries over, so
a run of plain turns fades back toward :data:`NEUTRAL_BASE` by half a step per turn instead of
jumping to it (project choice; on the tune half, user turns the annotator labels ``neutral``
have a mean gold valence of -0.33, and 0.5 ranked as well as 0.7 and better than 1.0)."""
CARRY_WEAK = 0.3
"""Context weight of a turn with rated words only: its own words count more than the story,
the story still counts (project choice, between the two other weights; 0.2 and 0.4 ranked the
same on the tune half)."""
CARRY_LABELLED = 0.2
"""Context weight of a turn with a lexicon label: such a turn speaks for itself, and the story
only smooths it (project choice; 0.1 to 0.3 ranked the same on the tune half). The context
never flips a labelled turn's sign: a ``relief_calm`` or ``hope`` turn after despair stays
above 0, as the guide asks, and a labelled unpleasant turn after good news stays below 0."""

CARRY_ASK = 0.2
"""Context weight of an **ask** (rules ``offline-5``): a plain question or request with no
lexicon label (:func:`~empath_gate.turns.user_cues.turn_kind`). The guide puts such a turn in
``neutral`` (±0.3), so it keeps more of its own reading than a plain telling turn
(:data:`CARRY_NONE`) does (project choice; on the tune half 0 to 0.2 ranked the same, 0.3 to 0.5
worse)."""
ASK_SHIFT = 0.1
"""Added to an ask's own reading, so that an ask with no rated word starts at 0 rather than at
:data:`NEUTRAL_BASE` (project choice; +0.05 ranked about the same on the tune half, +0.15
worse)."""
CUE_VALENCE = 0.3
"""Lowest own valence of a **forward** (a plan to act) or **relief** (gratitude, easing) turn with
no unpleasant lexicon label (rules ``offline-5``): the guide puts ``hope`` and ``relief_calm``
above 0 (+0.1..+0.8 and +0.1..+0.6), and such a turn then counts as labelled, so the context does
not flip its sign (project choice; 0.2 to 0.4 ranked the same on the tune half). A cue in a turn
with an unpleasant label changes nothing ("thanks, but I still can't sleep")."""

_CARRY: dict[str, float] = {
    "none": CARRY_NONE, "weak": CARRY_WEAK, "labelled": CARRY_LABELLED, "ask": CARRY_ASK}


def cued(own: float, evidence: Evidence, kind: Kind | None, unpleasant: bool) -> tuple[float, Evidence]:
    """A user turn's own valence (-1..1) and evidence after its kind (``kind`` from
    :func:`~empath_gate.turns.user_cues.turn_kind`; ``unpleasant``: the turn has a lexicon label
    of negative valence). An ask with no lexicon label gets :data:`ASK_SHIFT` and the evidence
    ``ask``; a forward or relief turn without an unpleasant label gets at least
    :data:`CUE_VALENCE` and the evidence ``labelled``; anything else is returned unchanged. Pure."""
    if kind == "ask":
        return (own + ASK_SHIFT, "ask") if evidence in ("none", "weak") else (own, evidence)
    if kind is None or unpleasant:
        return own, evidence
    return max(own, CUE_VALENCE), "labelled"


def in_context(own: float, evidence: Evidence, context: float | None) -> float:
    """A user turn's valence (-1..1 when ``own`` and ``context`` are) given its own reading
    ``own`` (-1..1), how much ``evidence`` it has of its own, and ``context``, the valence given
    to the previous user turn of the dialogue (``None`` for the first user turn: ``own`` is
    returned unchanged; so is a labelled turn's ``own`` when ``context`` has the other sign).
    Pure."""
    if context is None or (evidence == "labelled" and own * context < 0):
        return own
    w = _CARRY[evidence]
    return (1 - w) * own + w * context


__all__ = ["ASK_SHIFT", "CARRY_ASK", "CARRY_LABELLED", "CARRY_NONE", "CARRY_WEAK", "CUE_VALENCE",
           "NEUTRAL_BASE", "Evidence", "cued", "in_context"]
