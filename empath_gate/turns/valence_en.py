"""English word valence from vaderSentiment's lexicon (the only vaderSentiment import).

vaderSentiment (Hutto and Gilbert, "VADER: A Parsimonious Rule-based Model for Sentiment
Analysis of Social Media Text", ICWSM 2014; MIT licence) ships its word list inside the package
(``vader_lexicon.txt``: about 7,500 words, each a mean rating on -4..4), so nothing is
downloaded. Only its word ratings and constants are used, with the offline annotator's own
negation and intensifier scopes (its full analyser costs about ten times more per sentence):

* a word's rating counts negatively (times vaderSentiment's ``N_SCALAR``, -0.74) when a negator
  ends within three tokens before it in the same clause;
* an intensifier right before it adds vaderSentiment's ``B_INCR`` (0.293) in the word's
  direction;
* the sum is squashed into -1..1 by vaderSentiment's ``normalize`` (``x / sqrt(x² + 15)``).
"""

from __future__ import annotations

import functools
import importlib.metadata
from collections.abc import Sequence

from empath_gate.turns.lexmatch import PUNCTUATION


@functools.lru_cache(maxsize=1)
def _vader() -> tuple[dict[str, float], float, float]:
    from vaderSentiment.vaderSentiment import B_INCR, N_SCALAR, SentimentIntensityAnalyzer

    lexicon: dict[str, float] = dict(SentimentIntensityAnalyzer().lexicon)
    return lexicon, float(B_INCR), float(N_SCALAR)


@functools.lru_cache(maxsize=1)
def vader_version() -> str:
    """The installed vaderSentiment version (part of the offline annotator's version)."""
    return importlib.metadata.version("vaderSentiment")


def word_ratings(toks: Sequence[str]) -> list[float | None]:
    """vaderSentiment's rating (-4..4) of every token (None for punctuation and unrated words)."""
    lexicon = _vader()[0]
    return [None if tok in PUNCTUATION else lexicon.get(tok) for tok in toks]


def rated_valence(
    ratings: Sequence[float | None], negated: Sequence[bool], intensified: Sequence[bool],
    positive_scale: float = 1.0, weights: Sequence[float] | None = None,
) -> float | None:
    """The valence (-1..1) of tokens with word ``ratings`` (-4..4, None: unrated), or None when
    no token has a rating. ``negated[i]`` / ``intensified[i]``: token ``i`` is in a negator's or
    an intensifier's scope (same length as ``ratings``). ``positive_scale`` (0..1) multiplies
    the ratings that end up positive (the annotator's choice for help-seeking text, where
    "please", "help" or "thanks" are mostly politeness). ``weights`` (optional, same length):
    a factor on each token's rating after its scopes (rules ``offline-6``: a contrast,
    :func:`empath_gate.turns.contrast.contrast_weights`). Used for both locales."""
    from vaderSentiment.vaderSentiment import normalize

    _, b_incr, n_scalar = _vader()
    total = 0.0
    found = False
    for i, rating in enumerate(ratings):
        if rating is None:
            continue
        found = True
        if intensified[i]:
            rating += b_incr if rating > 0 else -b_incr
        if negated[i]:
            rating *= n_scalar
        if weights is not None:
            rating *= weights[i]
        total += rating * positive_scale if rating > 0 else rating
    return float(normalize(total)) if found else None


def word_valence(
    toks: Sequence[str], negated: Sequence[bool], intensified: Sequence[bool]
) -> float | None:
    """The valence (-1..1) of English tokens from vaderSentiment's word ratings, or None when no
    token has a rating (:func:`rated_valence` of :func:`word_ratings`)."""
    return rated_valence(word_ratings(toks), negated, intensified)


__all__ = ["rated_valence", "vader_version", "word_ratings", "word_valence"]
