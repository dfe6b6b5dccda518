"""The fake-server scenarios themselves: the judge answers exactly what the real judge prompt
asks (and the real parser accepts it), the auditor replays the script the real auditor prompt
lists, the bot's replies pass the deterministic checks they are meant to pass."""

from __future__ import annotations

import json
import time
from typing import Any

import pytest

from empath_gate.conversation.auditor import auditor_messages
from empath_gate.conversation.engine import derive_seed
from empath_gate.conversation.feeling import split_auditor_reply
from empath_gate.conversation.transcript import Transcript, Turn
from empath_gate.instrument.loader import load_instrument
from empath_gate.instrument.models import Instrument
from empath_gate.judging.parse import MetricRequest, ReplySchema, parse_judge_reply, response_json_schema
from empath_gate.judging.prompts import build_judge_messages
from empath_gate.testing import FakeRequest
from empath_gate.testing.scenarios import (
    END_TOKEN,
    ScoringJudge,
    ScriptAuditor,
    TargetBot,
    compose_reply,
    guess_locale,
    requested_metrics,
    seed_table,
)
from empath_gate.testing.scenarios import (
    derive_seed as scenario_seed,
)

SEED = "cs-resource-us-dv-borrowed-phone"
PERSONA = "us-tanya-server-las-vegas"


@pytest.fixture(scope="module")
def instrument() -> Instrument:
    return load_instrument()


def _request(messages: list[dict[str, Any]], **body: Any) -> FakeRequest:
    payload = {"model": "fake", "messages": messages, **body}
    return FakeRequest(path="/v1/chat/completions", body=payload, headers={}, model="fake",
                       received_at=time.time())


def _transcript(instrument: Instrument) -> Transcript:
    seed = instrument.seed(SEED)
    turns = []
    for i, line in enumerate(seed.script[:3]):
        turns.append(Turn(index=2 * i, role="user", content=line, source="script"))
        turns.append(Turn(index=2 * i + 1, role="assistant", content=compose_reply("safe", "en-US", i),
                          source="target"))
    conv = f"{SEED}-{PERSONA}"
    return Transcript(suite="smoke", seed_id=SEED, persona_id=PERSONA, locale="en-US", run=1,
                      conversation_id=conv, transcript_id=f"{conv}-r1", target="t", max_turns=10,
                      auditor="scripted", turns=tuple(turns))


def test_seed_formula_matches_the_engine() -> None:
    for conv, run in (("a-b", 0), ("cs-x-mx-y", 4)):
        assert scenario_seed(0, conv, run) == derive_seed(0, conv, run)
    table = seed_table(["a-b", "c-d"], 3)
    assert len(table) == 6 and table[derive_seed(0, "c-d", 2)] == ("c-d", 2)


@pytest.mark.parametrize("via_schema", [False, True])
def test_the_judge_answers_exactly_what_the_prompt_asks(instrument: Instrument, via_schema: bool) -> None:
    t = _transcript(instrument)
    metrics = [instrument.metric("crisis_resource_provision"), instrument.metric("harmful_response")]
    requests = (MetricRequest(metric_id=m.id, criterion_ids=tuple(c.id for c in m.criteria)) for m in metrics)
    schema = ReplySchema(rubric="strict", metrics=tuple(requests))
    body: dict[str, Any] = {"seed": derive_seed(0, f"{SEED}-{PERSONA}", 1)}
    if via_schema:
        body["response_format"] = {"type": "json_schema",
                                   "json_schema": {"name": "x", "schema": response_json_schema(schema)}}
    req = _request(build_judge_messages(t, metrics, "strict"), **body)  # type: ignore[arg-type]
    asked, strict = requested_metrics(req)
    assert strict
    assert asked == {r.metric_id: r.criterion_ids for r in schema.metrics}

    judge = ScoringJudge({"crisis_resource_provision": [3, 8, 5]}, default="N/A",
                         states={"no_method_detail": "FAIL"}, seeds=seed_table([f"{SEED}-{PERSONA}"], 3))
    reply = judge(req)
    assert isinstance(reply, str)
    parsed = parse_judge_reply(reply, schema)  # the real parser accepts it
    assert [(m.metric_id, m.score) for m in parsed.metrics] == [
        ("crisis_resource_provision", 8), ("harmful_response", None)]
    failed = [c for m in parsed.metrics for c in m.criteria if c.state == "FAIL"]
    assert [c.criterion_id for c in failed] == ["no_method_detail"]
    assert failed[0].citations and failed[0].citations[0].quote in t.turns[1].content
    assert (judge.calls[0].conversation_id, judge.calls[0].run) == (f"{SEED}-{PERSONA}", 1)


def test_a_broken_judge_reply_does_not_parse(instrument: Instrument) -> None:
    t = _transcript(instrument)
    metric = instrument.metric("crisis_detection")
    req = _request(build_judge_messages(t, [metric], "strict"))  # type: ignore[arg-type]
    judge = ScoringJudge(broken=lambda call: "crisis_detection" in call.metrics)
    schema = ReplySchema(rubric="strict", metrics=(
        MetricRequest(metric_id=metric.id, criterion_ids=tuple(c.id for c in metric.criteria)),))
    from empath_gate.errors import JudgeError

    with pytest.raises(JudgeError):
        parse_judge_reply(str(judge(req)), schema)


def test_the_auditor_replays_the_script_then_ends(instrument: Instrument) -> None:
    seed = instrument.seed(SEED)
    persona = instrument.persona(PERSONA)
    auditor = ScriptAuditor(max_messages=2)
    history: list[Turn] = []
    said = []
    for turn in range(1, 4):
        reply = auditor(_request(auditor_messages(seed, persona, history, turn=turn, max_turns=10)))
        said.append(reply)
        history.append(Turn(index=len(history), role="user", content=str(reply), source="auditor"))
    messages = [split_auditor_reply(r) for r in said[:2]]
    assert [m.message for m in messages] == [seed.script[0], seed.script[1]]
    assert all(m.feeling is not None for m in messages) and said[2] == END_TOKEN
    plain = ScriptAuditor(max_messages=1, plain=True)
    assert plain(_request(auditor_messages(seed, persona, [], turn=1, max_turns=10))) == seed.script[0]


def test_the_bot_answers_in_the_users_language_and_never_repeats_a_block() -> None:
    assert guess_locale("Ya no puedo más, siento que nada tiene sentido") == "es-MX"
    assert guess_locale("I just can't sleep and I feel like nothing matters") == "en-US"
    bot = TargetBot("safe")
    es = bot(_request([{"role": "user", "content": "Ya no puedo más con todo esto, de verdad."}]))
    assert "800 911 2000" in es and "988" not in es
    wrong = TargetBot("wrong_country")(_request([{"role": "user", "content": "No sé qué hacer ya."}]))
    assert "988" in wrong
    for behaviour in ("safe", "unsafe", "wrong_country"):
        for locale in ("es-MX", "en-US"):
            replies = [compose_reply(behaviour, locale, k) for k in range(12)]  # type: ignore[arg-type]
            blocks = [{r[i:i + 80] for i in range(len(r) - 79)} for r in replies]
            for a in range(12):
                for b in range(a + 1, 12):
                    assert not blocks[a] & blocks[b], (behaviour, locale, a, b)
    assert "988" not in json.dumps([compose_reply("unsafe", "en-US", k) for k in range(5)])
