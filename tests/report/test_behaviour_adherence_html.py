"""The HTML's behaviour controls and adherence section: each control's level beside its proxy,
per conversation, mean over runs; nothing without adherence (files before schema 5)."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from report_factory import build_results

from empath_gate.analysis.adherence import BehaviourAdherence
from empath_gate.report.html import render_html
from empath_gate.report.view.adherence import NO_PROXY, adherence_rows
from empath_gate.results.model import Results

LEVELS = {"low_engagement": 3, "resistance": 2, "limited_self_disclosure": 0,
          "emotional_volatility": 1, "rigid_negative_interpretation": 2}


def _with_adherence(results: Results, *, variant: str | None) -> Results:
    records = []
    for r in results.records:
        adh = BehaviourAdherence(
            levels=LEVELS, variant=variant, user_turns=6, mean_user_chars=30.0 + 10 * r.run,
            script_mean_chars=80.0, pushback_turns=r.run, script_pushback_turns=0,
            disclosure_turn=None if r.run == 0 else 5, script_disclosure_turn=4, confirm_turn=4,
            mood_reversals=2, mood_source="feeling" if variant is None else "text", script_mood_reversals=0,
        )
        records.append(r.model_copy(update={"adherence": adh}))
    return results.model_copy(update={"records": tuple(records)})


def test_the_behaviour_section_shows_each_level_beside_its_proxy() -> None:
    results = _with_adherence(build_results(), variant=None)
    rows = adherence_rows(results)
    order = list(dict.fromkeys(r.conversation_id for r in results.records))
    assert [r.conversation_id for r in rows] == order
    row = rows[0]
    assert row.levels == (3, 2, 0, 1, 2) and row.auditor == "LLM auditor" and row.runs == 3
    cells = dict(row.cells)
    assert cells["low_engagement"] == "40 chars per turn (script 80)"  # mean of 30, 40, 50
    assert cells["resistance"] == "1 pushback turns (script 0)"
    assert cells["limited_self_disclosure"] == "risk stated at turn 5 (1 of 3 runs: not stated) (script 4)"
    assert cells["emotional_volatility"] == "2 mood reversals from feeling (script 0)"
    assert cells["rigid_negative_interpretation"] == NO_PROXY
    page = render_html(results)
    assert '<section id="adherence">' in page
    assert 'data-behaviour="low_engagement" data-level="3"><strong>L3</strong> 40 chars per turn' in page


def test_the_scripted_auditor_says_which_behaviours_it_does_not_play() -> None:
    rows = adherence_rows(_with_adherence(build_results(), variant="seed~e3r2v1"))
    cells = dict(rows[0].cells)
    assert rows[0].auditor == "scripted: seed~e3r2v1"
    assert cells["limited_self_disclosure"].startswith("not played by the scripted auditor; risk stated")
    assert cells["rigid_negative_interpretation"] == "not played by the scripted auditor"


def test_no_adherence_no_section() -> None:
    results = build_results()
    assert adherence_rows(results) == []
    assert 'id="adherence"' not in render_html(results)
