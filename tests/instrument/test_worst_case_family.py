"""The worst_case metric family, persona behaviour levels and the worst-case suite's pairing."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from pydantic import ValidationError

from empath_gate.errors import SuiteError
from empath_gate.instrument.loader import load_instrument
from empath_gate.instrument.models import BEHAVIOURS, HARD_LEVEL, Instrument, Persona, SeedSelector, Suite
from empath_gate.instrument.pairing import pairing_coverage, pairing_problems
from empath_gate.plan import build_plan
from empath_gate.results.suite_hash import suite_content_hashes

FAMILY = ("deep_emotional_understanding", "guided_exploration", "balanced_emotional_support",
          "authentic_grounded_support")


@pytest.fixture(scope="module")
def shipped() -> Instrument:
    return load_instrument()


def _with_suite(inst: Instrument, **fields: object) -> Instrument:
    seed = next(s for s in inst.seeds if s.locale == "en-US" and not s.covert)
    suite = Suite.model_validate({"id": "extra", "label": "Extra", "description": "test suite",
                                  "seeds": SeedSelector(ids=(seed.id,)), **fields})
    return inst.model_copy(update={"suites": (*inst.suites, suite)})


def test_family_is_declared_with_four_metrics_sourced_abstract_only(shipped: Instrument) -> None:
    assert [f.id for f in shipped.families] == ["worst_case", "relational"]
    metrics = shipped.family_metrics("worst_case")
    assert tuple(m.id for m in metrics) == FAMILY
    for m in metrics:
        assert m.dimension is None and m.group == "worst_case"
        assert "2605.28228" in m.source and "abstract only" in m.source
        assert 3 <= len(m.criteria) <= 6 and len(m.bands) >= 2
        assert not any(c.critical for c in m.criteria)
        assert not shipped.thresholds.resolve(m.id, "worst-case").critical
    assert len(shipped.empath_metrics) == 19
    assert shipped.group_label("worst_case") == "Hard-to-help seekers"


def test_metrics_all_stays_empaths_19_and_a_family_is_judged_only_when_named(shipped: Instrument) -> None:
    plan = build_plan(_with_suite(shipped, metrics="all"), ["extra"])
    (conv,) = plan.conversations
    assert conv.metric_ids == tuple(m.id for m in shipped.empath_metrics)
    assert not set(FAMILY) & set(conv.metric_ids)
    named = build_plan(_with_suite(shipped, metrics="all", families=("worst_case",)), ["extra"])
    assert named.conversations[0].metric_ids[-4:] == FAMILY
    assert len(named.conversations[0].metric_ids) == 23
    for sid in ("crisis", "full", "smoke", "persona-sweep"):
        assert not {i.metric_id for i in build_plan(shipped, [sid]).items} & set(FAMILY)


def test_worst_case_suite_judges_the_family_with_markers_from_the_instrument(shipped: Instrument) -> None:
    plan = build_plan(shipped, ["worst-case"])
    for conv in plan.conversations:
        assert set(FAMILY) <= set(conv.metric_ids)
    fam = [i for i in plan.items if i.metric_id in FAMILY]
    assert fam and all("worst_case" in i.markers and i.dimension == "worst_case" for i in fam)
    assert all("critical" not in i.markers for i in fam)


def test_other_suites_keep_their_hashes(shipped: Instrument) -> None:
    # recorded with instrument 1.2.0, before the family and the behaviour levels existed (1.4.0)
    assert suite_content_hashes(shipped, "full", "strict")["metrics"] == (
        "4ef4501ca8e7c15a9c38e93e5e2b4bfbdafe28eaefbbbd30f8f3d833266b7fc3")
    # the personas part changed when the behaviour levels became conduct (hashed since then)
    assert suite_content_hashes(shipped, "full", "strict")["personas"] == (
        "ac9f51392db09d4ef73e2bd8ccc5570608894b5688777649cd4a837c8ff1c351")
    assert suite_content_hashes(shipped, "crisis", "strict")["conversations"] == (
        "67ff54618855ee2f13a86159312d3238dcebd3910345d875e248040c71cfdd44")


def test_worst_case_suite_pairs_each_seed_with_one_cooperative_persona(shipped: Instrument) -> None:
    plan = build_plan(shipped, ["worst-case"])
    rows = {r.seed_id: r for r in pairing_coverage(shipped, "worst-case")}
    assert rows
    for seed_id, row in rows.items():
        pids = [c.persona_id for c in plan.conversations if c.seed_id == seed_id]
        coop = [p for p in pids if not shipped.persona(p).worst_case]
        assert coop == ([row.cooperative] if row.cooperative else [])
        if row.cooperative:
            assert max(shipped.persona(row.cooperative).profile) <= 1
    assert rows["cs-resource-us-wont-call-cops"].covered


def test_every_seed_of_the_shipped_worst_case_suite_meets_the_coverage_rule(shipped: Instrument) -> None:
    """Instrument 1.5.0 met the rule for 1 of 22 seeds; 1.6.0's personas make it hold for all."""
    plan = build_plan(shipped, ["worst-case"])
    rows = pairing_coverage(shipped, "worst-case")
    assert {r.seed_id for r in rows} == {c.seed_id for c in plan.conversations}
    assert len(rows) >= 22
    for row in rows:
        assert row.covered, (row.seed_id, row.missing, row.cooperative)
        worst = {shipped.persona(c.persona_id).profile for c in plan.conversations
                 if c.seed_id == row.seed_id and shipped.persona(c.persona_id).worst_case}
        assert len(worst) == row.profiles
        for i, b in enumerate(BEHAVIOURS):  # recomputed from the plan, not from the table
            assert any(v[i] >= HARD_LEVEL for v in worst), (row.seed_id, b)
    assert pairing_problems(shipped) == []


def test_unhashed_personas_play_only_where_a_suite_plays_every_fitting_persona(shipped: Instrument) -> None:
    unhashed = {p.id for p in shipped.personas if not p.hashed}
    assert len(unhashed) == 13
    for suite in shipped.suites:
        speakers = {c.persona_id for c in build_plan(shipped, [suite.id]).conversations}
        if suite.personas.mode == "hash":
            assert not speakers & unhashed, suite.id
    assert unhashed <= {c.persona_id for c in build_plan(shipped, ["worst-case"]).conversations}


def test_a_layer_whose_paired_suite_misses_a_behaviour_is_reported(
    shipped: Instrument, team: Callable[..., Path]
) -> None:
    layer = team({"suites.yaml": (
        "suites:\n  - id: ours\n    label: Ours\n    description: one hard persona\n"
        "    seeds: {ids: [cs-trajectory-mx-culiacan-ruptura]}\n"
        "    personas: {mode: list, ids: [mx-diego-cbtis-queretaro], worst_case_only: true,"
        " cooperative_pairing: true}\n")})
    inst = load_instrument([layer])
    (row,) = pairing_coverage(inst, "ours")
    assert row.missing == ("limited_self_disclosure", "emotional_volatility", "rigid_negative_interpretation")
    assert row.cooperative == "mx-emiliano-prepa-merida"
    problem = ("behaviours: suite 'ours', seed 'cs-trajectory-mx-culiacan-ruptura': no profile plays "
               "limited_self_disclosure, emotional_volatility, rigid_negative_interpretation at level >= 2")
    assert [p for p in pairing_problems(inst) if p.startswith(problem)]
    proc = _validate("--suites", str(layer), cwd=layer.parent)
    assert proc.returncode == 0, proc.stderr  # with a team layer the rule is a note
    assert "note: coverage: " + problem in proc.stdout


def _persona(**extra: object) -> dict[str, object]:
    return {"id": "p", "locale": "en-US", "name": "P", "age": 30, "gender": "woman", "category": "x",
            "background": "b", "situation": "s", "emotional_state": "e", "crisis_level": 0,
            "cultural_context": "c", "socioeconomic_context": "s", "language_style": "l",
            "writing_style": "w", "sample_phrases": ["a", "b"], **extra}


def test_behaviour_levels_must_match_worst_case() -> None:
    p = Persona.model_validate(_persona(worst_case=["resistance"], behaviours={"resistance": 3,
                                                                                "low_engagement": 1}))
    assert p.profile == (1, 3, 0, 0, 0)
    assert Persona.model_validate(_persona(worst_case=["resistance"])).profile == (0, 2, 0, 0, 0)
    with pytest.raises(ValidationError, match="exactly the worst_case"):
        Persona.model_validate(_persona(worst_case=["resistance"], behaviours={"resistance": 1}))
    with pytest.raises(ValidationError, match="exactly the worst_case"):
        Persona.model_validate(_persona(behaviours={"emotional_volatility": 2}))
    with pytest.raises(ValidationError, match="outside 0-3"):
        Persona.model_validate(_persona(behaviours={"emotional_volatility": 4}))


def test_a_suite_naming_an_unknown_family_is_an_error(team: Callable[..., Path]) -> None:
    layer = team({"suites.yaml": (
        "suites:\n  - id: ours\n    label: Ours\n    description: ours\n    seeds:\n      all: true\n"
        "    families: [worst_cases]\n")})
    with pytest.raises(SuiteError, match=r"unknown metric family 'worst_cases'.*did you mean 'worst_case'"):
        load_instrument([layer])


def _validate(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    # a subprocess: validate binds the shipped paths at import, which other tests patch
    return subprocess.run([sys.executable, "-m", "empath_gate.cli", "validate", *args], cwd=cwd,
                          capture_output=True, text=True, timeout=120, check=False)


def test_validate_counts_and_coverage_table(tmp_path: Path) -> None:
    proc = _validate("--format", "json", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    assert data["metrics"] == 19
    assert data["families"]["worst_case"] == {"label": "Hard-to-help seekers", "metrics": 4}
    rows = data["pairing_coverage"]["worst-case"]
    assert {r["seed_id"] for r in rows} >= {"cs-resource-us-wont-call-cops"}
    assert set(rows[0]["hard"]) == {"low_engagement", "resistance", "limited_self_disclosure",
                                    "emotional_volatility", "rigid_negative_interpretation"}
    text = _validate(cwd=tmp_path)
    assert text.returncode == 0, text.stderr
    assert "family worst_case (Hard-to-help seekers): 4 metrics" in text.stdout
    assert "behaviour coverage of worst-case" in text.stdout
    line = next(x for x in text.stdout.splitlines() if x.strip().startswith("cs-resource-us-wont-call-cops"))
    assert line.endswith("| yes")
    assert all(r["covered"] for r in rows)
    assert "behaviours: suite" not in text.stdout + text.stderr
