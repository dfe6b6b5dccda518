"""The shipped instrument meets its coverage rules and its suites select what they promise."""

from __future__ import annotations

import pytest

from empath_gate.instrument.coverage import (
    coverage_problems,
    reachable_personas,
    seeds_by_locale,
    seeds_by_metric,
)
from empath_gate.instrument.cues import is_voice_seed
from empath_gate.instrument.loader import load_instrument
from empath_gate.instrument.models import Instrument, Seed
from empath_gate.plan import build_plan

RISK = ("none", "low", "moderate", "high", "imminent")


def text_seeds(inst: Instrument) -> list[Seed]:
    """The seeds the text suites draw from (voice seeds run only in voice suites)."""
    return [s for s in inst.seeds if not is_voice_seed(s.tags)]


@pytest.fixture(scope="module")
def shipped() -> Instrument:
    return load_instrument()


def test_coverage_rules(shipped: Instrument) -> None:
    assert coverage_problems(shipped) == []
    assert len(shipped.empath_metrics) == 19 and len(shipped.dimensions) == 5
    assert [m.id for m in shipped.family_metrics("worst_case")] == [
        "deep_emotional_understanding", "guided_exploration", "balanced_emotional_support",
        "authentic_grounded_support"]
    assert len(shipped.seeds) >= 40 and len(shipped.personas) >= 34
    assert min(seeds_by_metric(shipped).values()) >= 2
    total = len(shipped.seeds)
    assert all(n / total >= 0.4 for n in seeds_by_locale(shipped).values())
    assert reachable_personas(shipped) == {p.id for p in shipped.personas}


def test_suites_exist(shipped: Instrument) -> None:
    assert {"crisis", "full", "smoke", "worst-case"} <= {s.id for s in shipped.suites}


def test_smoke_is_small_and_covers_dimensions_and_locales(shipped: Instrument) -> None:
    plan = build_plan(shipped, ["smoke"])
    assert len(plan.conversations) <= 10
    assert {i.dimension for i in plan.items} == {d.id for d in shipped.dimensions}
    assert {c.locale for c in plan.conversations} == {"es-MX", "en-US"}


def test_crisis_suite_selection(shipped: Instrument) -> None:
    plan = build_plan(shipped, ["crisis"])
    chosen = {c.seed_id for c in plan.conversations}
    crisis_metrics = {m.id for m in shipped.metrics if m.dimension == "crisis_safety"}
    for seed in text_seeds(shipped):
        crisis = bool(crisis_metrics & set(seed.primary_metrics))
        covert_risky = seed.covert and RISK.index(seed.risk.level) >= RISK.index("moderate")
        # multi-party seeds are drawn only by id or tag (suites/REVIEW.md section 12)
        assert (seed.id in chosen) == ((crisis or covert_risky) and not seed.multi_party), seed.id


def test_full_suite_takes_every_text_seed_once(shipped: Instrument) -> None:
    plan = build_plan(shipped, ["full"])
    assert [c.seed_id for c in plan.conversations] == [
        s.id for s in text_seeds(shipped) if not s.multi_party]


def test_voice_seeds_run_only_in_the_voice_suite(shipped: Instrument) -> None:
    voice = [s.id for s in shipped.seeds if is_voice_seed(s.tags)]
    for suite in shipped.suites:
        chosen = {c.seed_id for c in build_plan(shipped, [suite.id]).conversations}
        assert bool(chosen & set(voice)) == suite.voice, suite.id
    plan = build_plan(shipped, ["voice"])
    assert [c.seed_id for c in plan.conversations] == voice
    by_locale = {loc: sum(1 for c in plan.conversations if c.locale == loc) for loc in ("es-MX", "en-US")}
    assert len(voice) >= 12 and min(by_locale.values()) >= 5, by_locale


def test_worst_case_suite_uses_every_worst_case_persona_plus_one_cooperative_per_seed(
        shipped: Instrument) -> None:
    plan = build_plan(shipped, ["worst-case"])
    worst = {p.id for p in shipped.personas if p.worst_case}
    used = {c.persona_id for c in plan.conversations}
    assert worst <= used
    by_seed: dict[str, list[str]] = {}
    for c in plan.conversations:
        by_seed.setdefault(c.seed_id, []).append(c.persona_id)
    for seed_id, pids in by_seed.items():
        coop = [p for p in pids if p not in worst]
        assert len(coop) <= 1, (seed_id, coop)
