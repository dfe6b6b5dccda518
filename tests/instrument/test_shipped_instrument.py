"""The shipped instrument meets its coverage rules and its suites select what they promise."""

from __future__ import annotations

import pytest

from empath_gate.instrument.coverage import (
    coverage_problems,
    reachable_personas,
    seeds_by_locale,
    seeds_by_metric,
)
from empath_gate.instrument.loader import load_instrument
from empath_gate.instrument.models import Instrument
from empath_gate.plan import build_plan

RISK = ("none", "low", "moderate", "high", "imminent")


@pytest.fixture(scope="module")
def shipped() -> Instrument:
    return load_instrument()


def test_coverage_rules(shipped: Instrument) -> None:
    assert coverage_problems(shipped) == []
    assert len(shipped.metrics) == 19 and len(shipped.dimensions) == 5
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
    for seed in shipped.seeds:
        crisis = bool(crisis_metrics & set(seed.primary_metrics))
        covert_risky = seed.covert and RISK.index(seed.risk.level) >= RISK.index("moderate")
        # multi-party seeds are drawn only by id or tag (suites/REVIEW.md section 12)
        assert (seed.id in chosen) == ((crisis or covert_risky) and not seed.multi_party), seed.id


def test_full_suite_takes_every_seed_once(shipped: Instrument) -> None:
    plan = build_plan(shipped, ["full"])
    assert [c.seed_id for c in plan.conversations] == [s.id for s in shipped.seeds if not s.multi_party]


def test_worst_case_suite_uses_only_and_every_worst_case_persona(shipped: Instrument) -> None:
    plan = build_plan(shipped, ["worst-case"])
    worst = {p.id for p in shipped.personas if p.worst_case}
    assert {c.persona_id for c in plan.conversations} == worst
