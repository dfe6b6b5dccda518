"""Parsing judge replies against the schema of the request (pure; the end-to-end versions of
these cases, through litellm and the fake server, are in test_llm_judge.py)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from empath_gate.errors import JudgeError
from empath_gate.judging.parse import (
    MetricRequest,
    ReplySchema,
    extract_json_text,
    parse_judge_reply,
    response_json_schema,
)

STRICT = ReplySchema(
    rubric="strict",
    metrics=(
        MetricRequest(metric_id="crisis_detection", criterion_ids=("names_risk", "asks_directly")),
        MetricRequest(metric_id="harmful_response", criterion_ids=("no_method_detail",)),
    ),
)
STANDARD = ReplySchema(rubric="standard", metrics=(MetricRequest(metric_id="crisis_detection"),))


def reply(score_a: Any = 8, score_b: Any = 9, **extra: Any) -> dict[str, Any]:
    return {
        "confirm_turn": 2,
        "metrics": {
            "crisis_detection": {
                "criteria": {
                    "names_risk": {"state": "PASS", "citations": []},
                    "asks_directly": {"state": "FAIL", "citations": [{"turn": 3, "quote": "How was work?"}]},
                },
                "score": score_a,
                "justification": "Noticed the risk, never asked directly.",
                **extra,
            },
            "harmful_response": {
                "criteria": {"no_method_detail": {"state": "N/A", "citations": []}},
                "score": score_b,
            },
        },
    }


def parse_error(text: str, schema: ReplySchema = STRICT) -> str:
    with pytest.raises(JudgeError) as info:
        parse_judge_reply(text, schema)
    assert info.value.reason == "parse_error"
    return str(info.value)


def test_plain_json_is_parsed_in_request_order() -> None:
    parsed = parse_judge_reply(json.dumps(reply()), STRICT)
    assert [m.metric_id for m in parsed.metrics] == ["crisis_detection", "harmful_response"]
    first = parsed.metrics[0]
    assert (first.score, [c.state for c in first.criteria]) == (8, ["PASS", "FAIL"])
    assert first.criteria[1].citations[0].quote == "How was work?"
    assert parsed.confirm_turn == 2


def test_fenced_json_is_accepted() -> None:
    text = "```json\n" + json.dumps(reply(), indent=2) + "\n```"
    assert parse_judge_reply(text, STRICT).metrics[0].score == 8
    assert parse_judge_reply("```" + json.dumps(reply()) + "```", STRICT).metrics[1].score == 9


def test_a_fence_inside_a_string_field_is_content() -> None:
    data = reply()
    data["metrics"]["crisis_detection"]["justification"] = "It wrote ```json\n{}\n``` at turn 3"
    parsed = parse_judge_reply(json.dumps(data), STRICT)
    assert parsed.metrics[0].justification == "It wrote ```json\n{}\n``` at turn 3"
    fenced = "```json\n" + json.dumps(data) + "\n```"
    assert parse_judge_reply(fenced, STRICT).metrics[0].justification == "It wrote ```json\n{}\n``` at turn 3"
    assert extract_json_text(json.dumps(data)) == json.dumps(data)


def test_prose_around_json_is_rejected() -> None:
    message = parse_error("Here is my verdict:\n" + json.dumps(reply()))
    assert "not a JSON object" in message


def test_two_fences_are_rejected() -> None:
    parse_error("```json\n" + json.dumps(reply()) + "\n```\nand\n```json\n{}\n```")


@pytest.mark.parametrize(
    ("score", "expected"), [("7", 7), ("7/10", 7), (" 10 / 10 ", 10), (7.0, 7), ("N/A", None)]
)
def test_accepted_score_forms(score: Any, expected: int | None) -> None:
    assert parse_judge_reply(json.dumps(reply(score_a=score)), STRICT).metrics[0].score == expected


@pytest.mark.parametrize(
    ("score", "message"),
    [
        ("0.75", "'0.75' is not an integer score"),
        (7.5, "7.5 is not an integer score"),
        ("8 out of 10", "'8 out of 10' is not an integer score"),
        ("7/5", "'7/5' is not on the 1-10 scale"),
        (11, "11 is outside the 1-10 scale (no clamping)"),
        (0, "0 is outside the 1-10 scale (no clamping)"),
        ("11/10", "'11/10' is outside the 1-10 scale"),
        (True, "True is not a score"),
        (None, "None is not a score"),
    ],
)
def test_rejected_scores(score: Any, message: str) -> None:
    error = parse_error(json.dumps(reply(score_a=score)))
    assert f"metrics.crisis_detection.score: {message}" in error


@pytest.mark.parametrize("score", ["７", "٧", "7/１０", "१०", "７/10"])
def test_only_ascii_digits_are_read_as_scores(score: str) -> None:
    # int("７") is 7 in Python: a full-width (or Arabic-Indic, Devanagari) digit is not what the
    # request asked for, so it is a parse error, never a score
    error = parse_error(json.dumps(reply(score_a=score), ensure_ascii=False))
    assert f"metrics.crisis_detection.score: {score!r} is not an integer score" in error


def test_only_ascii_digits_in_turns() -> None:
    data = reply()
    data["confirm_turn"] = "２"
    data["metrics"]["crisis_detection"]["criteria"]["asks_directly"]["citations"][0]["turn"] = "３"
    error = parse_error(json.dumps(data, ensure_ascii=False))
    assert "confirm_turn" in error and "citations.0.turn" in error


def test_missing_metric_is_rejected() -> None:
    data = reply()
    del data["metrics"]["harmful_response"]
    assert "metrics.harmful_response: missing" in parse_error(json.dumps(data))


def test_missing_criterion_is_rejected() -> None:
    data = reply()
    del data["metrics"]["crisis_detection"]["criteria"]["asks_directly"]
    assert "metrics.crisis_detection.criteria.asks_directly: missing" in parse_error(json.dumps(data))


def test_unknown_metric_and_criterion_are_rejected() -> None:
    data = reply()
    data["metrics"]["sycophancy"] = {"score": 3, "criteria": {}}
    data["metrics"]["crisis_detection"]["criteria"]["invented"] = {"state": "PASS"}
    error = parse_error(json.dumps(data))
    assert "metrics.sycophancy: not requested" in error
    assert "metrics.crisis_detection.criteria.invented: not requested" in error


def test_bad_criterion_state_is_rejected() -> None:
    data = reply()
    data["metrics"]["crisis_detection"]["criteria"]["names_risk"]["state"] = "MOSTLY"
    assert "'MOSTLY' is not PASS, FAIL or N/A" in parse_error(json.dumps(data))


def test_duplicate_keys_are_rejected() -> None:
    text = json.dumps(reply())[:-2] + ', "harmful_response": {}}}'
    assert "duplicate key 'harmful_response'" in parse_error(text)


def test_pass_flag_is_ignored_and_the_score_stands() -> None:
    data = reply(score_a=2, **{"pass": True, "verdict": "PASS"})
    data["overall_pass"] = True
    assert parse_judge_reply(json.dumps(data), STRICT).metrics[0].score == 2


def test_standard_rubric_needs_a_justification() -> None:
    ok = {"metrics": {"crisis_detection": {"score": 6, "justification": "band 4-6: mixed"}}}
    parsed = parse_judge_reply(json.dumps(ok), STANDARD)
    assert (parsed.metrics[0].score, parsed.metrics[0].criteria) == (6, ())
    missing = {"metrics": {"crisis_detection": {"score": 6}}}
    assert "metrics.crisis_detection.justification: missing" in parse_error(json.dumps(missing), STANDARD)


def test_not_an_object() -> None:
    assert "not an object (got list)" in parse_error("[1, 2]")


def test_response_schema_lists_exactly_the_requested_ids() -> None:
    schema = response_json_schema(STRICT)
    metrics = schema["properties"]["metrics"]
    assert metrics["required"] == ["crisis_detection", "harmful_response"]
    assert metrics["additionalProperties"] is False
    crit = metrics["properties"]["crisis_detection"]["properties"]["criteria"]
    assert crit["required"] == ["names_risk", "asks_directly"]
    order = list(metrics["properties"]["crisis_detection"]["properties"])
    assert order == ["criteria", "score", "justification"]
