"""Behaviour controls reach the auditors: the LLM auditor's first request states every control as
the conduct of the persona's level; the scripted auditor plays the persona's variant."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from conv_support import AUDITOR, TARGET, model_settings

from empath_gate.conversation.auditor import ScriptedAuditor, render_prompt
from empath_gate.conversation.engine import generate_sync
from empath_gate.conversation.runspec import RunSpec
from empath_gate.instrument.loader import load_instrument
from empath_gate.instrument.models import BEHAVIOURS, Instrument, Persona, Seed
from empath_gate.instrument.variant_checks import suite_pairs
from empath_gate.instrument.variants import script_variant
from empath_gate.testing import FakeOpenAIServer


@pytest.fixture(scope="module")
def shipped() -> Instrument:
    return load_instrument()


def _pair(inst: Instrument, locale: str, *, multi_party: bool = False) -> tuple[Seed, Persona]:
    """A seed x persona some suite plays, whose persona has two behaviours at level >= 2 (so the
    conduct differs between levels in one prompt)."""
    for seed, persona in suite_pairs(inst):
        hard = sum(v >= 2 for v in persona.profile)
        if seed.locale == locale and seed.multi_party == multi_party and hard >= 2:
            return seed, persona
    for seed, persona in suite_pairs(inst):  # multi-party seeds are spoken by one shared voice
        if seed.locale == locale and seed.multi_party == multi_party:
            return seed, persona
    raise AssertionError(f"no pair for {locale}")


@pytest.mark.parametrize(("locale", "multi_party"), [("es-MX", False), ("en-US", False), ("en-US", True)])
def test_the_first_auditor_request_states_each_control_as_conduct(
    fake_openai: FakeOpenAIServer, tmp_path: Path, shipped: Instrument, locale: str, multi_party: bool
) -> None:
    seed, persona = _pair(shipped, locale, multi_party=multi_party)
    assert shipped.behaviours is not None
    label = seed.participants[0].name + ": " if multi_party else ""
    fake_openai.on(AUDITOR, f'{{"message": "{label}ok", "feeling_0_100": 40}}')
    fake_openai.on(TARGET, "I'm here.")
    spec = RunSpec.build("smoke", seed, persona, 0, suite_max_turns=1)
    spec = spec.model_copy(update={"behaviours": shipped.behaviours})
    generate_sync([spec], settings=model_settings(fake_openai, tmp_path, auditor=True))
    first = next(r for r in fake_openai.requests if r.model == AUDITOR)
    system = first.messages[0]["content"]
    for behaviour, level in zip(BEHAVIOURS, persona.profile, strict=True):
        control = shipped.behaviours.control(behaviour)
        line = f"- {control.label(locale)} (level {level} of 3): {control.conduct(level, locale)}"
        assert line in system, behaviour
        for other in range(4):  # only the persona's own level is stated
            if other != level:
                assert control.conduct(other, locale) not in system
    assert "Ways you can be hard to help" not in system


def test_without_a_behaviour_set_the_prompt_still_names_each_level() -> None:
    inst = load_instrument()
    seed, persona = _pair(inst, "en-US")
    text = render_prompt(seed, persona, turn=1, max_turns=3)
    for behaviour, level in zip(BEHAVIOURS, persona.profile, strict=True):
        assert f"- {behaviour.replace('_', ' ')} (level {level} of 3)" in text


def test_the_scripted_auditor_plays_the_variant_and_keeps_the_alert_and_confirm_turns(
    shipped: Instrument,
) -> None:
    for seed, persona in suite_pairs(shipped):
        variant = script_variant(seed, persona, shipped.behaviours)
        if variant.id != seed.id and variant.protected and variant.changes:
            break
    else:
        raise AssertionError("no shipped variant with changes and protected turns")
    aud = ScriptedAuditor()

    async def play() -> list[str | None]:
        out = []
        for k in range(len(seed.script) + 1):
            t = await aud.next_turn(seed=seed, persona=persona, history=[], user_turn=k, max_turns=20, run=0,
                                    call_seed=None, cache=None, behaviours=shipped.behaviours)
            out.append(t.content)
        return out

    played = asyncio.run(play())
    assert played == [*variant.turns, None]
    assert played[:-1] != list(script_variant(seed, persona, None).turns)  # the variant, not the script
    for k in variant.protected:
        assert played[k - 1] == script_variant(seed, persona, None).turns[k - 1]


def test_every_run_spec_of_a_plan_carries_the_instrument_behaviours(shipped: Instrument) -> None:
    from empath_gate.plan import build_plan
    from empath_gate.runner import run_specs

    specs = run_specs(build_plan(shipped, ["smoke"]), shipped)
    assert specs and all(s.behaviours is not None and s.behaviours == shipped.behaviours for s in specs)
