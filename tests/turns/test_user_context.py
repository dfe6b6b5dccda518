"""The offline annotator's context rule for user valence (rules offline-4 and offline-5)."""

from __future__ import annotations

import pytest
from dialogues import user_valences

from empath_gate.turns.user_context import CARRY_LABELLED, CARRY_NONE, CARRY_WEAK, in_context

pytestmark = pytest.mark.usefixtures("offline_rules")  # the rules' valences, without the fitted table


def test_the_first_turn_keeps_its_own_reading() -> None:
    assert in_context(-0.1, "none", None) == -0.1
    assert in_context(0.4, "labelled", None) == 0.4


def test_the_weight_of_the_context_falls_as_the_turns_own_evidence_grows() -> None:
    assert 0 < CARRY_LABELLED < CARRY_WEAK < CARRY_NONE < 1
    got = [in_context(-0.1, e, -0.8) for e in ("none", "weak", "labelled")]
    assert got[0] < got[1] < got[2] < -0.1
    assert in_context(-0.1, "none", -0.8) == pytest.approx((1 - CARRY_NONE) * -0.1 + CARRY_NONE * -0.8)


def test_the_context_never_flips_a_labelled_turns_sign() -> None:
    assert in_context(0.1, "labelled", -0.9) == 0.1
    assert in_context(-0.2, "labelled", 0.7) == -0.2
    assert in_context(-0.4, "labelled", -0.9) < -0.4


def test_plain_turns_inside_a_despairing_story_fade_back_instead_of_jumping_to_zero() -> None:
    despair = "ya no puedo más, estoy desesperada y no quiero seguir así"
    plain = "luego fui a la casa de mi tía el martes"
    v = user_valences("es-MX", despair, plain, plain, plain)
    alone = user_valences("es-MX", plain)[0]
    assert v[0] < v[1] < v[2] < v[3] < alone
    assert v[1] < alone - 0.2  # the first plain turn after despair is not a jump back to about 0
    assert abs(v[3] - alone) < abs(v[1] - alone)  # and the story fades


def test_an_opening_greeting_stays_near_zero() -> None:
    for locale, text in (("es-MX", "hola, buenas noches"), ("en-US", "Hi, what are the hours?")):
        assert abs(user_valences(locale, text)[0]) <= 0.15


def test_relief_after_despair_stays_pleasant() -> None:
    v = user_valences("es-MX", "ya no puedo más, estoy desesperada", "ya me siento mejor, gracias")
    assert v[0] < 0 < v[1]
