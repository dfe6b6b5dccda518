"""Intervention units, strategy outcomes, risky interventions, the profile table, the report."""

from __future__ import annotations

import json

import jsonschema
import pytest
from dynamics_factory import conv, user_only

from empath_gate.analysis.dynamics import (
    DynamicsReport,
    build_report,
    checked_annotation,
    dynamics_json_schema,
    intervention_units,
    risky_interventions,
    strategy_outcomes,
)
from empath_gate.analysis.dynamics.interventions import profile_strategy_table
from empath_gate.turns.model import AnnotatorFailure, Dialogue, DialogueTurn, TurnLabel, TurnLabels

RISKY = conv(
    "r1",
    [
        ("u", "sadness_grief", -0.6),
        ("b", "warmth_care", "reflection_of_feelings"),
        ("u", "hopelessness", -0.9),
        ("b", "concern", "providing_suggestions"),  # reply to a risk statement
        ("u", "hopelessness", -0.9),
        ("b", "concern", "question"),
    ],
    risk=[2],
    profiles=["resistance"],
)


def test_units_link_the_user_before_and_after() -> None:
    units = intervention_units(RISKY)
    assert [u.turn for u in units] == [1, 3, 5]
    first = units[0]
    assert first.before is not None and first.before.turn == 0
    assert first.after is not None and first.after.turn == 2
    assert first.valence_change == pytest.approx(-0.3)
    assert first.label_changed is True and first.escalation is True
    assert units[1].risk_before is True and units[1].escalation is False  # hopelessness -> hopelessness
    assert units[2].after is None and units[2].valence_change is None and units[2].escalation is None


def test_bot_first_has_no_before() -> None:
    c = conv(
        "b1",
        [
            ("b", "warmth_care", "question"),
            ("u", "neutral", 0.0),
            ("b", "concern", "information"),
            ("u", "hope", 0.6),
        ],
    )
    units = intervention_units(c)
    assert units[0].before is None and units[0].escalation is None
    assert units[1].valence_change == pytest.approx(0.6) and units[1].escalation is False


def test_strategy_outcomes_and_risky_list() -> None:
    units = intervention_units(RISKY)
    out = {o.strategy: o for o in strategy_outcomes(units)}
    assert len(out) == 8
    assert out["reflection_of_feelings"].escalation_rate == 1.0
    assert out["providing_suggestions"].mean_valence_change == pytest.approx(0.0)
    q = out["question"]
    assert q.units == 1 and q.with_change == 0 and q.escalation_rate is None
    assert out["other"].units == 0 and out["other"].mean_valence_change is None
    risky = risky_interventions(units)
    assert [(r.kind, r.bot_message, r.user_before, r.user_after) for r in risky] == [
        ("escalation_to_hopelessness", 2, 1, 3),
        ("suggestion_after_risk", 4, 3, 5),
    ]


def test_profile_strategy_table() -> None:
    calm = user_only("c2", [0.0, 0.1, 0.2])
    table = profile_strategy_table([(RISKY, intervention_units(RISKY)), (calm, intervention_units(calm))])
    cells = {(c.profile, c.strategy): c for c in table}
    assert cells[("resistance", "reflection_of_feelings")].escalations == 1
    none_q = cells[("(none)", "question")]
    assert none_q.with_change == 2 and none_q.escalation_rate == 0.0
    assert [c.profile for c in table][-1] == "(none)"


def _dialogue(cid: str) -> Dialogue:
    return Dialogue(
        conversation_id=cid,
        turns=(DialogueTurn(role="user", text="hola"), DialogueTurn(role="assistant", text="hola")),
    )


def test_an_incomplete_annotation_is_a_failure_never_repaired() -> None:
    d = _dialogue("x")
    short = TurnLabels(
        conversation_id="x",
        annotator="offline",
        version="1",
        labels=(TurnLabel(turn=0, role="user", label="neutral", intensity=0, valence=0.0),),
    )
    out = checked_annotation(d, short)
    assert isinstance(out, AnnotatorFailure) and out.reason == "incomplete" and "1 labels for 2" in out.detail
    wrong = TurnLabels(
        conversation_id="x",
        annotator="offline",
        version="1",
        labels=(
            TurnLabel(turn=0, role="user", label="neutral", intensity=0, valence=0.0),
            TurnLabel(turn=1, role="assistant", label="hope", intensity=0, valence=0.0, strategy="question"),
        ),
    )
    failed = checked_annotation(d, wrong)
    assert isinstance(failed, AnnotatorFailure) and "'hope' is not a assistant label" in failed.detail
    nostrat = wrong.model_copy(
        update={
            "labels": (
                wrong.labels[0],
                TurnLabel(turn=1, role="assistant", label="concern", intensity=0, valence=0.0),
            )
        }
    )
    assert isinstance(checked_annotation(d, nostrat), AnnotatorFailure)
    ok = wrong.model_copy(
        update={
            "labels": (
                wrong.labels[0],
                TurnLabel(
                    turn=1, role="assistant", label="concern", intensity=0, valence=0.0, strategy="question"
                ),
            )
        }
    )
    assert checked_annotation(d, ok) is ok


def test_report_counts_failures_and_matches_its_schema() -> None:
    convs = [RISKY] + [
        user_only(f"u{i}", [-0.8 + 0.05 * i, -0.5, 0.08 * i], keys={"locale": "es-MX"}) for i in range(12)
    ]
    failure = AnnotatorFailure(
        conversation_id="f1", annotator="judge", reason="parse_error", detail="not JSON"
    )
    report = build_report(convs, [(failure, {"locale": "en-US"})], group_keys=("locale",))
    assert (report.conversations, report.labelled, report.failed) == (14, 13, 1)
    assert report.failures[0].conversation_id == "f1" and report.failures[0].reason == "parse_error"
    assert "f1" not in {c.conversation_id for c in report.per_conversation}
    assert sum(report.shapes.values()) == 13 and set(report.shapes) >= {"recovering", "too_short"}
    assert len(report.risky) == 2
    assert report.clustering.k is not None and report.clustering.assignment == ()
    assert all(c.cluster is not None for c in report.per_conversation)
    assert report.per_conversation[0].risk_messages == (3,)
    data = json.loads(report.model_dump_json())
    jsonschema.Draft202012Validator(dynamics_json_schema()).validate(data)
    assert DynamicsReport.model_validate(data) == report
