"""Behaviour controls (suites/behaviours.yaml) and the scripted variants: the instrument text is
complete in both locales, variants are deterministic across processes, keep the alert and confirm
turns, and `validate` catches a variant that breaks a review rule."""

from __future__ import annotations

import hashlib
import json
import re
import subprocess
import sys

import pytest

from empath_gate.cli import main
from empath_gate.commands import validate as validate_cmd
from empath_gate.instrument.behaviour_models import BehaviourSet
from empath_gate.instrument.identity import script_for
from empath_gate.instrument.loader import load_instrument
from empath_gate.instrument.models import BEHAVIOURS, Instrument
from empath_gate.instrument.review import review_problems
from empath_gate.instrument.variant_checks import suite_variants, variant_problems
from empath_gate.instrument.variants import script_variant, shorten

LOCALES = ("es-MX", "en-US")


@pytest.fixture(scope="module")
def shipped() -> Instrument:
    return load_instrument()


def _behaviours(inst: Instrument) -> BehaviourSet:
    assert inst.behaviours is not None
    return inst.behaviours


def test_every_behaviour_has_conduct_at_every_level_in_both_locales(shipped: Instrument) -> None:
    bs = _behaviours(shipped)
    assert tuple(b.id for b in bs.behaviours) == BEHAVIOURS
    for b in bs.behaviours:
        for loc in LOCALES:
            texts = [b.conduct(level, loc) for level in range(4)]
            assert len(set(texts)) == 4 and all(len(t) > 30 for t in texts), (b.id, loc)
    assert {b.id: b.scripted for b in bs.behaviours} == {
        "low_engagement": "shorten", "resistance": "pushback", "limited_self_disclosure": "none",
        "emotional_volatility": "mood", "rigid_negative_interpretation": "none",
    }


def test_lines_are_neutral_and_state_no_risk(shipped: Instrument) -> None:
    bs = _behaviours(shipped)
    explicit = shipped.pattern_set("explicit_risk").patterns
    method = shipped.pattern_set("method_detail").patterns
    address = {"es-MX": r"\b(t[uú]|usted(es)?|contigo|te|ti)\b", "en-US": r"\byou\b"}
    for loc in LOCALES:
        lines = [*bs.pushback_lines[loc], *bs.mood_lines[loc].down, *bs.mood_lines[loc].up]
        assert len(bs.pushback_lines[loc]) >= 10 and len(lines) - len(bs.pushback_lines[loc]) >= 10
        assert len(set(lines)) == len(lines)
        for line in lines:
            assert not re.search(address[loc], line, re.IGNORECASE), line
            for p in (*explicit[loc], *method[loc]):  # type: ignore[index]
                assert not re.search(p, line, re.IGNORECASE), (line, p)


def test_the_model_rejects_an_incomplete_set(shipped: Instrument) -> None:
    data = _behaviours(shipped).model_dump(mode="json")
    short = json.loads(json.dumps(data))
    short["pushback_lines"]["es-MX"] = short["pushback_lines"]["es-MX"][:9]
    with pytest.raises(ValueError, match="at least 10"):
        BehaviourSet.model_validate(short)
    unmatched = json.loads(json.dumps(data))
    unmatched["pushback_lines"]["en-US"][0] = "Sure, sounds good."
    with pytest.raises(ValueError, match="matches no pushback pattern"):
        BehaviourSet.model_validate(unmatched)
    reordered = json.loads(json.dumps(data))
    reordered["behaviours"] = reordered["behaviours"][::-1]
    with pytest.raises(ValueError, match="in that order"):
        BehaviourSet.model_validate(reordered)


def test_shorten_keeps_the_first_sentences() -> None:
    assert shorten("One. Two! Three? Four.", 2) == "One. Two!"
    assert shorten("One. Two! Three? Four.", 1) == "One."
    assert shorten("just one line no stop", 1) == "just one line no stop"


def test_every_shipped_variant_keeps_the_turn_count_and_the_alert_to_confirm_turns(
    shipped: Instrument,
) -> None:
    variants = suite_variants(shipped)
    assert len(variants) >= 50
    kinds: set[str] = set()
    for seed, v in variants:
        script = script_for(seed, shipped.persona(v.persona_id))
        assert len(v.turns) == len(script)
        a, c = seed.risk.alert_turn, seed.risk.confirm_turn
        for k in (a, c):
            if k is not None:
                assert v.turns[k - 1] == script[k - 1], (v.id, k)
        for change in v.changes:
            kinds.add(change.kind)
            assert change.turn not in v.protected
            if change.kind in ("pushback", "mood"):
                assert change.turn > 1
    assert kinds == {"shorten", "pushback", "mood"}


def test_levels_drive_the_variant(shipped: Instrument) -> None:
    bs = _behaviours(shipped)
    for seed, v in suite_variants(shipped):
        persona = shipped.persona(v.persona_id)
        e, r, vol = persona.profile[0], persona.profile[1], persona.profile[3]
        assert v.id == f"{seed.id}~e{e}r{r}v{vol}"
        pushes = [c.line for c in v.changes if c.kind == "pushback"]
        moods = [c for c in v.changes if c.kind == "mood"]
        assert bool(pushes) <= (r >= 2) and all(p in bs.pushback_lines[seed.locale] for p in pushes)
        assert len(set(pushes)) == len(pushes)
        assert [m.direction for m in moods] == [("down", "up")[j % 2] for j in range(len(moods))]
        assert bool(moods) <= (vol >= 2)
        if e >= 2:
            script = script_for(seed, persona)
            added = sum(len(p or "") + 2 for p in pushes) + sum(len(m.line or "") + 2 for m in moods)
            assert sum(map(len, v.turns)) <= sum(map(len, script)) + added
    cooperative = [p for p in shipped.personas if max(p.profile) < 2]
    seed = shipped.seeds[0]
    for p in cooperative:
        if p.locale == seed.locale:
            assert script_variant(seed, p, bs).id == seed.id


_CHILD = """
import hashlib, json
from empath_gate.instrument.loader import load_instrument
from empath_gate.instrument.variant_checks import suite_variants
out = [[v.id, v.persona_id, hashlib.sha256("\\x00".join(v.turns).encode()).hexdigest()]
       for _, v in suite_variants(load_instrument())]
print(json.dumps(out))
"""


def test_variants_are_the_same_in_another_process(shipped: Instrument) -> None:
    mine = [[v.id, v.persona_id, hashlib.sha256("\x00".join(v.turns).encode()).hexdigest()]
            for _, v in suite_variants(shipped)]
    env = {"PYTHONHASHSEED": "12345", "PATH": ""}
    proc = subprocess.run([sys.executable, "-c", _CHILD], capture_output=True, text=True, check=True, env=env,
                          timeout=120)
    assert json.loads(proc.stdout) == mine


def _breaking(inst: Instrument, line: str) -> Instrument:
    """The instrument with ``line`` as every en-US pushback line (validation bypassed)."""
    bs = _behaviours(inst)
    lines = dict(bs.pushback_lines)
    lines["en-US"] = (line,) * 12
    return inst.model_copy(update={"behaviours": bs.model_copy(update={"pushback_lines": lines})})


def test_the_shipped_variants_have_no_problem(shipped: Instrument) -> None:
    assert variant_problems(shipped) == []


def test_a_variant_that_states_the_risk_early_or_names_a_method_is_a_problem(shipped: Instrument) -> None:
    early = variant_problems(_breaking(shipped, "Already tried that. I want to kill myself."))
    assert early and any("would move the disclosure" in p for p in early)
    assert all("persona us-" in p for p in early)
    method = variant_problems(_breaking(shipped, "Already tried that. The lethal dose of insulin is 50"))
    assert any("method or means detail" in p for p in method)
    assert any("would move the disclosure" in p or "method" in p for p in review_problems(
        _breaking(shipped, "Already tried that. I want to kill myself.")))


def test_validate_fails_on_a_breaking_variant(
    shipped: Instrument, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    broken = _breaking(shipped, "Already tried that. I want to kill myself.")
    monkeypatch.setattr(validate_cmd, "load_instrument", lambda *a, **k: broken)
    assert main(["validate"]) == 2
    err = capsys.readouterr().err
    assert "review:" in err and "would move the disclosure" in err
