"""A contrast in a user turn: what comes after "but" / "pero" carries the turn (rules ``offline-6``).

A help-seeker often names a feeling and then turns it: "its dumb but its kinda working", "estoy
llorando pero ya no estoy sola", "thanks, but I still can't sleep". The turn is mainly about the
clause after the contrast, and the gold's labelling guide gives the label "to the one the turn
is mainly about". vaderSentiment (Hutto and Gilbert, ICWSM 2014; MIT licence) handles "but" the
same way: the ratings of the words before the first "but" count half, those after it one and a
half times (its ``_but_check``). Rules ``offline-6`` apply these two factors, vaderSentiment's
own, to both locales' word ratings and to the feeling-lexicon hits of a user turn.

Evidence on the project's gold (all four seen sets): turns of the kind "nervous but she was
really nice", "crying but like the good kind", "todavía tiemblo pero ya respiro" were read
from their first clause (``fear_anxiety`` / ``sadness_grief`` below 0) where the gold gives
``relief_calm`` above 0.
"""

from __future__ import annotations

from collections.abc import Sequence

CONTRASTS: frozenset[str] = frozenset({"but", "pero"})
"""Folded words that turn a user turn (project choice; English "but" as in vaderSentiment,
Spanish "pero", its plain equivalent; "aunque" / "though" are left out: they mark the conceded
part, not the main one)."""
BEFORE = 0.5
"""Factor on the words before the first contrast (vaderSentiment's ``_but_check``)."""
AFTER = 1.5
"""Factor on the words after the first contrast (vaderSentiment's ``_but_check``)."""


def contrast_weights(toks: Sequence[str]) -> list[float] | None:
    """The weight of every token of ``toks`` (folded, :func:`empath_gate.turns.lexmatch.tokens`):
    :data:`BEFORE` up to the first word of :data:`CONTRASTS`, :data:`AFTER` after it (the word
    itself :data:`BEFORE`), or None when the turn has no contrast word or nothing follows it.
    Pure."""
    for i, tok in enumerate(toks):
        if tok in CONTRASTS:
            if i + 1 >= len(toks) or i == 0:
                return None
            return [BEFORE] * (i + 1) + [AFTER] * (len(toks) - i - 1)
    return None


__all__ = ["AFTER", "BEFORE", "CONTRASTS", "contrast_weights"]
