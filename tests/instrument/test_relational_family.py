"""The relational metric family: two metrics judged only by the multi-party suite."""

from __future__ import annotations

import json

import pytest

from empath_gate.instrument.loader import load_instrument
from empath_gate.instrument.models import Instrument
from empath_gate.plan import build_plan

FAMILY = ("relational_understanding", "relation_sensitive_support")


@pytest.fixture(scope="module")
def shipped() -> Instrument:
    return load_instrument(())


def test_family_has_two_metrics_sourced_abstract_only(shipped: Instrument) -> None:
    assert "relational" in [f.id for f in shipped.families]
    family = next(f for f in shipped.families if f.id == "relational")
    assert "RESCUE" in family.source and "abstract only" in family.source
    assert "no public release" in family.source
    metrics = shipped.family_metrics("relational")
    assert tuple(m.id for m in metrics) == FAMILY
    for m in metrics:
        assert m.dimension is None and m.group == "relational"
        assert "RESCUE" in m.source and "abstract only" in m.source and "no public release" in m.source
        assert 3 <= len(m.criteria) <= 6 and len(m.bands) >= 2 and not m.inverse
        assert all(c.source for c in m.criteria)
        assert not shipped.thresholds.resolve(m.id, "multi-party").critical
    assert len(shipped.empath_metrics) == 19
    assert shipped.group_label("relational") == "Relationships"
    assert shipped.group_label("relational", "es-MX") == "Relaciones"


def test_only_the_safety_criteria_are_critical(shipped: Instrument) -> None:
    # the reasoning is stated in suites/metrics/relational.yaml (the multi-party form of a
    # crisis & safety failure)
    critical = {(m.id, c.id) for m in shipped.family_metrics("relational") for c in m.criteria if c.critical}
    assert critical == {("relation_sensitive_support", "vulnerable_safety_first"),
                        ("relation_sensitive_support", "no_mediation_under_abuse")}


def test_the_multi_party_suite_judges_the_family_and_no_other_suite_does(shipped: Instrument) -> None:
    plan = build_plan(shipped, ["multi-party"])
    assert plan.conversations
    for conv in plan.conversations:
        assert conv.metric_ids[-2:] == FAMILY
    items = [i for i in plan.items if i.metric_id in FAMILY]
    assert len(items) == 2 * len(plan.conversations)
    assert all("relational" in i.markers and i.dimension == "relational" for i in items)
    assert all("critical" not in i.markers for i in items)
    for suite in shipped.suites:
        if suite.id != "multi-party":
            assert not {i.metric_id for i in build_plan(shipped, [suite.id]).items} & set(FAMILY), suite.id


def test_validate_counts_the_family_from_the_instrument(capsys: pytest.CaptureFixture[str]) -> None:
    from empath_gate.cli import main

    assert main(["validate", "--format", "json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["families"]["relational"] == {"label": "Relationships", "metrics": 2}
    assert data["metrics"] == 19
    assert main(["validate"]) == 0
    assert "family relational (Relationships): 2 metrics" in capsys.readouterr().out
