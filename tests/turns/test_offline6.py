"""Rules offline-6 of the offline annotator: a contrast ("but" / "pero") weighs the clause after
it, a plan to tell someone is a plan, and a risk statement told as closed past is not read as a
present risk."""

from __future__ import annotations

import pytest
from dialogues import user_labels

from empath_gate.turns.contrast import AFTER, BEFORE, contrast_weights
from empath_gate.turns.lexmatch import tokens
from empath_gate.turns.offline import RISK_VALENCE
from empath_gate.turns.user_cues import closed_past, turn_kind
from empath_gate.turns.valence_en import rated_valence

pytestmark = pytest.mark.usefixtures("offline_rules")  # the rules' valences, without the fitted table


# ----------------------------------------------------------------------------- contrast


def test_contrast_weights_halve_before_and_raise_after_the_first_but() -> None:
    toks = tokens("it was awful but it helped")
    got = contrast_weights(toks)
    assert got is not None and len(got) == len(toks)
    cut = toks.index("but")
    assert set(got[:cut + 1]) == {BEFORE} and set(got[cut + 1:]) == {AFTER}
    assert contrast_weights(tokens("pero")) is None and contrast_weights(tokens("all good")) is None
    assert contrast_weights(tokens("estoy llorando pero ya no estoy sola")) is not None


def test_rated_valence_applies_the_weights() -> None:
    ratings = [-2.0, None, 2.0]
    flat = rated_valence(ratings, [False] * 3, [False] * 3)
    turned = rated_valence(ratings, [False] * 3, [False] * 3, weights=[BEFORE, BEFORE, AFTER])
    assert flat == pytest.approx(0.0) and turned is not None and turned > 0.1


@pytest.mark.parametrize(("locale", "turned", "plain"), [
    ("en-US", "it's dumb but it's kind of working", "it's dumb and it's kind of working"),
    ("es-MX", "fue horrible pero ya pasó y estoy contenta", "fue horrible y ya pasó y estoy contenta"),
])
def test_the_clause_after_the_contrast_carries_the_turn(locale: str, turned: str, plain: str) -> None:
    assert user_labels(locale, turned)[0].valence > user_labels(locale, plain)[0].valence


# ----------------------------------------------------------------------------- a plan to tell


@pytest.mark.parametrize(("text", "kind"), [
    ("ok ill tell her tonight when she gets home", "forward"),
    ("I'm going to tell my doctor on Monday", "forward"),
    ("I won't tell anyone", None),
])
def test_a_plan_to_tell_someone_is_forward_in_english(text: str, kind: str | None) -> None:
    assert turn_kind(tokens(text), "en-US") == kind


# ----------------------------------------------------------------------------- closed past


@pytest.mark.parametrize(("locale", "text", "closed"), [
    ("en-US", "two years ago I tried to kill myself. I'm in recovery now", True),
    ("en-US", "last time I stopped my meds I kept thinking about dying", True),
    ("es-MX", "a los veinte años intenté quitarme la vida. ya estoy bien", True),
    ("es-MX", "hace dos años me quise matar, ya estoy mejor", True),
    ("es-MX", "de los 15 a los 17 me cortaba", True),
    ("en-US", "like an hour ago I took all the pills", False),
    ("en-US", "two years ago I tried and I want to do it again", False),
    ("es-MX", "ya me está regresando lo de que me quiero morir, como hace dos años", False),
    ("es-MX", "hace dos años lo intenté y todavía lo pienso", False),
    ("en-US", "I want to kill myself", False),
])
def test_closed_past(locale: str, text: str, closed: bool) -> None:
    assert closed_past(tokens(text), locale) is closed


@pytest.mark.parametrize("locale", ["en-US", "es-MX"])
def test_a_past_attempt_told_as_background_is_not_capped_but_a_present_one_is(locale: str) -> None:
    past, present = {
        "en-US": ("So two years ago I tried to kill myself. I'm in recovery now.", "I want to kill myself"),
        "es-MX": ("a los veinte años intenté quitarme la vida. Ya tengo muchos años bien.",
                  "me quiero matar"),
    }[locale]
    assert user_labels(locale, present)[0].valence <= RISK_VALENCE
    got = user_labels(locale, past)[0]
    assert got.valence > RISK_VALENCE and got.intensity < 3


def test_can_tell_perceives_and_is_no_plan() -> None:
    assert turn_kind(tokens("come on, i can tell you're a real person"), "en-US") is None
    assert turn_kind(tokens("i can call her after work"), "en-US") == "forward"


def test_heart_has_no_pleasant_rating_in_english_user_turns() -> None:
    from empath_gate.turns.valence_en import word_ratings
    from empath_gate.turns.valence_words import ratings

    toks = tokens("my heart is pounding")
    assert word_ratings(toks)[1] is not None and word_ratings(toks)[1] > 0  # vaderSentiment rates it pleasant
    assert ratings(toks, "en-US")[1] is None
