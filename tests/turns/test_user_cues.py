"""The offline annotator's turn-kind cues for user valence (rules offline-5): a plain question or
request keeps its own near-0 reading, a plan to act and a thanks are positive evidence."""

from __future__ import annotations

import pytest
from dialogues import user_labels, user_valences

from empath_gate.turns.lexmatch import tokens
from empath_gate.turns.user_context import ASK_SHIFT, CARRY_ASK, CARRY_NONE, CUE_VALENCE, cued, in_context
from empath_gate.turns.user_cues import turn_kind

pytestmark = pytest.mark.usefixtures("offline_rules")  # the rules' valences, without the fitted table


@pytest.mark.parametrize(("locale", "text", "kind"), [
    ("en-US", "can you help me write a text to my landlord", "ask"),
    ("en-US", "Where do I find a clinic near me?", "ask"),
    ("es-MX", "¿a quién le puedo hablar a estas horas?", "ask"),
    ("es-MX", "oye, dime cómo se saca la cita en el seguro", "ask"),
    ("en-US", "what if he finds out? he'll take the kids", None),
    ("es-MX", "¿y si me corren del trabajo?", None),
    ("en-US", "ok. I'll call them tomorrow morning", "forward"),
    ("en-US", "maybe ill go to the meeting this week", "forward"),
    ("es-MX", "va, mañana le marco a mi prima", "forward"),
    ("es-MX", "lo voy a intentar", "forward"),
    ("en-US", "I won't call anyone", None),
    ("es-MX", "ya no le voy a hablar nunca", None),
    ("es-MX", "le voy a decir sus verdades delante de todos", None),
    ("en-US", "thank you, this helps", "relief"),
    ("es-MX", "gracias güey, ya me siento menos peor", "relief"),
    ("es-MX", "llegó al hospital, ya está bien gracias a Dios", None),
    ("en-US", "my sister moved to Denver last year", None),
])
def test_turn_kinds(locale: str, text: str, kind: str | None) -> None:
    assert turn_kind(tokens(text), locale) == kind


def test_an_ask_keeps_more_of_its_own_reading_than_a_plain_telling_turn() -> None:
    assert 0 <= CARRY_ASK < CARRY_NONE
    own, evidence = cued(-0.1, "none", "ask", False)
    assert (own, evidence) == (pytest.approx(-0.1 + ASK_SHIFT), "ask")
    assert in_context(own, evidence, -0.9) > in_context(-0.1, "none", -0.9)
    # a labelled question keeps its label's reading
    assert cued(-0.4, "labelled", "ask", True) == (-0.4, "labelled")


def test_a_plan_or_a_thanks_is_positive_evidence_unless_the_turn_is_unpleasant() -> None:
    assert cued(-0.2, "weak", "forward", False) == (CUE_VALENCE, "labelled")
    assert cued(0.5, "labelled", "relief", False) == (0.5, "labelled")
    assert cued(-0.3, "labelled", "relief", True) == (-0.3, "labelled")
    assert cued(-0.2, "none", None, False) == (-0.2, "none")


DESPAIR = {"en-US": "I can't do this anymore, I'm hopeless and exhausted",
           "es-MX": "ya no puedo más, estoy desesperada y no quiero seguir así"}


@pytest.mark.parametrize(("locale", "question", "telling"), [
    ("en-US", "can you tell me what hours the clinic is open?", "then I went to my aunt's house on Tuesday"),
    ("es-MX", "¿me puedes decir a qué hora abre la clínica?", "luego fui a la casa de mi tía el martes"),
])
def test_a_question_stays_near_zero_in_a_despairing_dialogue(
        locale: str, question: str, telling: str) -> None:
    despair, asked = user_valences(locale, DESPAIR[locale], question)
    told = user_valences(locale, DESPAIR[locale], telling)[1]
    assert despair < -0.5
    assert abs(asked) <= 0.3  # inside the guide's neutral band
    assert asked > told  # a plain telling turn carries more of the story


@pytest.mark.parametrize(("locale", "plan"), [
    # turns the feeling lexicon does not label: without the cue each read below 0 in this dialogue
    ("en-US", "maybe ill go to the meeting this week"),
    ("en-US", "ok. I will text my sister after work"),
    ("es-MX", "va, al rato le marco a mi prima"),
    ("es-MX", "sale, el lunes voy a ir al centro de salud"),
    ("en-US", "ok this helps"),
])
def test_a_plan_or_a_thanks_after_despair_is_above_zero(locale: str, plan: str) -> None:
    despair, after = user_valences(locale, DESPAIR[locale], plan)
    assert despair < -0.5 < 0 < after


@pytest.mark.parametrize(("locale", "text", "label"), [
    ("en-US", "maybe ill go to the meeting this week", "hope"),
    ("es-MX", "sale, el lunes voy a ir al centro de salud", "hope"),
    ("en-US", "ok this helps", "relief_calm"),
    ("en-US", "can you tell me what hours the clinic is open?", "neutral"),
])
def test_a_turn_with_no_feeling_found_takes_its_cues_label(locale: str, text: str, label: str) -> None:
    got = user_labels(locale, DESPAIR[locale], text)[1]
    assert (got.label, got.intensity) == (label, 0 if label == "neutral" else 1)


def test_a_cue_does_not_relabel_a_turn_with_a_feeling() -> None:
    got = user_labels("en-US", "I'm so scared, I'll call them tomorrow but I'm terrified")[0]
    assert got.label == "fear_anxiety" and got.valence < 0
