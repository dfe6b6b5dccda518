"""Adherence proxies: the pure functions, and a scripted run that records them per transcript
beside the persona's levels, in results.json and in the HTML report."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from empath_gate import evaluate_run, load_settings, prepare, run_plan
from empath_gate.analysis.adherence import (
    adherence,
    compile_patterns,
    feeling_directions,
    reversals,
    text_directions,
)
from empath_gate.instrument.loader import load_instrument
from empath_gate.instrument.selection import cooperative_partner, personas_by_locale
from empath_gate.instrument.variant_checks import suite_variants
from empath_gate.results.model import Results

PUSH = compile_patterns([r"\balready tried\b"])
DOWN = compile_patterns([r"\bmad\b"])
UP = compile_patterns([r"\bsorry\b"])
RISK = compile_patterns([r"\bkill myself\b"])
LEVELS = {"low_engagement": 3, "resistance": 2}


def _adh(turns: list[str], feelings: list[int | None] | None = None, script: list[str] | None = None):  # type: ignore[no-untyped-def]
    return adherence(turns, feelings or [None] * len(turns), levels=LEVELS,
                     script=script or ["one two three four. five six.", "kill myself", "x"],
                     confirm_turn=2, pushback=PUSH, mood_down=DOWN, mood_up=UP, explicit_risk=RISK)


def test_each_proxy_is_measured_against_the_script() -> None:
    a = _adh(["ok", "already tried that. so mad", "sorry", "I could kill myself"])
    assert a.user_turns == 4 and a.mean_user_chars == pytest.approx((2 + 26 + 5 + 19) / 4, abs=0.05)
    assert a.script_mean_chars == pytest.approx((29 + 11 + 1) / 3, abs=0.05)
    assert (a.pushback_turns, a.script_pushback_turns) == (1, 0)
    assert (a.disclosure_turn, a.script_disclosure_turn, a.confirm_turn) == (4, 2, 2)
    assert (a.mood_reversals, a.mood_source, a.script_mood_reversals) == (1, "text", 0)
    assert a.levels == LEVELS and a.variant is None


def test_a_run_that_stopped_early_is_measured_against_the_turns_it_played() -> None:
    # the script's first 2 turns are long, calm and without pushback; its last 3 are short,
    # push back and swing the mood: a run that played only 2 turns is judged on the first 2
    script = ["I have been feeling really low for weeks now.", "Work is heavy and I sleep badly.",
              "already tried", "so mad", "sorry"]
    a = _adh(["i feel low", "work. no sleep"], script=script)
    assert a.user_turns == 2 and a.mean_user_chars == 12.0
    assert a.script_mean_chars == pytest.approx((45 + 32) / 2, abs=0.05)  # not the 5-turn mean, 20.2
    assert a.mean_user_chars < a.script_mean_chars  # shorter than what it played: engagement shown
    assert (a.pushback_turns, a.script_pushback_turns) == (0, 0)  # the script's pushback is turn 3
    assert (a.mood_reversals, a.script_mood_reversals) == (0, 0)  # its reversal is turns 4-5
    assert a.script_disclosure_turn is None  # "kill myself" is not in the script
    longer = _adh(["a", "b", "c", "d", "e", "f", "g"], script=script)  # past the script: all of it
    assert (longer.script_mean_chars, longer.script_pushback_turns, longer.script_mood_reversals) == (
        pytest.approx(20.2, abs=0.05), 1, 1)


def test_feelings_decide_mood_reversals_when_there_are_enough() -> None:
    assert feeling_directions([50, 20, 60, 65, 30]) == ["down", "up", "down"]  # 60 -> 65 is below the step
    assert reversals(["down", "up", "down"]) == 2 and reversals([]) == 0
    a = _adh(["a", "b", "c", "d", "e"], [50, 20, 60, 65, 30])
    assert (a.mood_reversals, a.mood_source) == (2, "feeling")
    few = _adh(["so mad", "sorry"], [50, None])  # one report: read from the text
    assert (few.mood_reversals, few.mood_source) == (1, "text")


def test_nothing_measured_is_none_not_zero() -> None:
    a = _adh([])
    assert a.mean_user_chars is None and a.disclosure_turn is None and a.mood_reversals is None
    assert text_directions(["so mad and sorry"], DOWN, UP) == []  # both directions: no direction


SUITE = """\
suites:
  - id: adherence
    label: Adherence
    description: One worst-case and one cooperative persona on one seed.
    seeds:
      ids: [{seed}]
    metrics: primary
    personas:
      mode: list
      ids: [{persona}, {other}]
    runs: 1
    max_turns: 12
"""

BOT = "def reply(messages, conversation_id):\n    return 'I hear you. What would help right now?'\n"


@pytest.fixture()
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    for key in [k for k in os.environ if k.startswith("EMPATH_")]:
        monkeypatch.delenv(key)
    yield tmp_path


def test_a_scripted_run_records_the_proxies_beside_the_levels(project: Path) -> None:
    inst = load_instrument()
    by_locale = personas_by_locale(inst.personas)
    seed, variant, other = next((s, v, cooperative_partner(s, by_locale)) for s, v in suite_variants(inst)
                                if "r2" in v.id and "v3" in v.id and cooperative_partner(s, by_locale))
    assert other is not None
    persona = inst.persona(variant.persona_id)
    team = project / "suites-team"
    team.mkdir()
    suite = SUITE.format(seed=seed.id, persona=persona.id, other=other.id)
    (team / "suites.yaml").write_text(suite, encoding="utf-8")
    (project / "adherence_bot.py").write_text(BOT, encoding="utf-8")
    settings = load_settings(overrides={"target": "py:adherence_bot:reply", "offline": True, "runs": 1,
                                        "suites_dirs": (team,), "cache_dir": project / "cache"})
    setup = prepare(settings, ["adherence"])
    results = evaluate_run(setup, run_plan(setup))
    by_persona = {r.persona_id: r for r in results.records}
    hard = by_persona[persona.id].adherence
    assert hard is not None and hard.variant == variant.id
    assert hard.levels["resistance"] == persona.profile[1] >= 2
    pushes = sum(1 for c in variant.changes if c.kind == "pushback")
    assert hard.pushback_turns >= hard.script_pushback_turns + pushes > hard.script_pushback_turns
    moods = sum(1 for c in variant.changes if c.kind == "mood")
    assert hard.mood_source == "text" and hard.mood_reversals is not None
    assert hard.mood_reversals >= moods - 1 >= 1
    assert hard.disclosure_turn == hard.script_disclosure_turn  # the variant never moves it
    assert hard.confirm_turn == seed.risk.confirm_turn
    easy = by_persona[other.id].adherence
    assert easy is not None and easy.variant == seed.id and easy.pushback_turns == easy.script_pushback_turns
    assert easy.mean_user_chars == easy.script_mean_chars

    # the results file keeps them; the HTML shows them beside the levels
    from empath_gate.report.html import render_html
    from empath_gate.results import read_results, write_results

    path = write_results(results, project / "out" / "results.json")
    again: Results = read_results(path)
    assert again.records == results.records
    page = render_html(again)
    assert '<section id="adherence">' in page
    level = persona.profile[1]
    assert f'data-behaviour="resistance" data-level="{level}"><strong>L{level}</strong>' in page
    assert f"{hard.pushback_turns} pushback turns (script {hard.script_pushback_turns})" in page
    assert f"scripted: {variant.id}" in page
