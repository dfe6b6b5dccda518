"""The project's word valence lists (es-MX whole list, en-US supplement to vaderSentiment)."""

from __future__ import annotations

import pytest

from empath_gate.turns.lexmatch import Hit, compile_phrase, fold, tokens
from empath_gate.turns.model import Dialogue, DialogueTurn, TurnLabels
from empath_gate.turns.offline import annotate
from empath_gate.turns.valence_en import rated_valence, word_ratings
from empath_gate.turns.valence_words import (
    EN_RATINGS,
    ENGLISH,
    ES_RATINGS,
    SPANISH,
    STEM_KEY,
    WordList,
    negation_scope,
    ratings,
)


def test_ratings_are_on_vaders_scale_and_words_are_folded() -> None:
    for table in (ES_RATINGS, EN_RATINGS):
        for value, words in table.items():
            assert -4 <= value <= 4
            for w in words.split():
                assert w == fold(w) and " " not in w


def test_whole_words_and_stems() -> None:
    assert SPANISH.rating("triste") is not None and SPANISH.rating("triste") < 0  # type: ignore[operator]
    assert SPANISH.rating("desesperadisima") == SPANISH.rating("desesperado")  # the stem desesperad*
    assert SPANISH.rating("chido") is not None and SPANISH.rating("chido") > 0  # type: ignore[operator]
    assert SPANISH.rating("mesa") is None
    with pytest.raises(ValueError, match="shorter"):
        WordList({-1.0: "abc*"})
    assert all(len(stem) >= STEM_KEY for key in SPANISH.stems for stem, _ in SPANISH.stems[key])


def test_the_english_supplement_replaces_vaders_rating() -> None:
    toks = tokens("please help, nobody answers")
    vader = word_ratings(toks)
    ours = ratings(toks, "en-US")
    assert ours[0] == ENGLISH.words["please"] != vader[0]
    assert vader[3] is None and ours[3] == ENGLISH.words["nobody"]
    assert ratings(tokens("estoy muy triste"), "es-MX")[2] == SPANISH.rating("triste")


def test_rated_valence_negation_intensifier_and_positive_scale() -> None:
    assert rated_valence([None, None], [False, False], [False, False]) is None
    plain = rated_valence([2.0], [False], [False])
    assert plain is not None and 0 < plain < 1
    negated = rated_valence([2.0], [True], [False])
    assert negated is not None and negated < 0
    boosted = rated_valence([2.0], [False], [True])
    assert boosted is not None and boosted > plain
    damped = rated_valence([2.0], [False], [False], positive_scale=0.3)
    assert damped is not None and 0 < damped < plain
    unpleasant = rated_valence([-2.0], [False], [False])
    assert rated_valence([-2.0], [False], [False], positive_scale=0.3) == unpleasant



def _scope(text: str, locale: str, negator: str) -> dict[str, bool]:
    """Whether each rated word of ``text`` is flipped by the one ``negator`` phrase in it."""
    toks = tokens(text)
    k = len(negator.split())
    start = next(i for i in range(len(toks)) if toks[i:i + k] == negator.split())
    hit = Hit(phrase=compile_phrase("negator", "negator", negator), start=start, end=start + k)
    rated = ratings(toks, locale)
    flipped = negation_scope(toks, [hit], rated, 3)
    return {t: f for t, r, f in zip(toks, rated, flipped, strict=True)
            if r is not None and t not in negator.split()}


def test_an_inability_keeps_an_unpleasant_word_unpleasant() -> None:
    assert _scope("no puedo respirar", "es-MX", "no") == {"respirar": False}
    assert _scope("no tengo miedo", "es-MX", "no") == {"miedo": True}
    assert _scope("no puedo estar tranquila", "es-MX", "no") == {"tranquila": True}  # pleasant: flips
    assert _scope("no deja de llorar", "es-MX", "no")["llorar"] is False
    assert _scope("I can't stop crying", "en-US", "can't")["crying"] is False
    assert _scope("I'm not sad", "en-US", "not") == {"sad": True}


def test_cant_breathe_reads_unpleasant() -> None:
    out = annotate(Dialogue(conversation_id="c", locale="es-MX", turns=(
        DialogueTurn(role="user", text="ayuda porfa no puedo respirar bien"),)))
    assert isinstance(out, TurnLabels) and out.labels[0].valence < -0.4
