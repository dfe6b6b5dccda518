"""A lone surrogate (a ``\\ud83d`` escape in a JSON reply, e.g. a bot that cut its text inside
an emoji by UTF-16 units) becomes U+FFFD wherever it enters: a model's or a callable's reply,
their events and tool calls, a judge's or an auditor's JSON, an error message. The turn is kept,
cached, sent on in the next request and written out; never an errored transcript or a lost run."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType

from conv_support import TARGET, model_settings, specs

from empath_gate.bounded import InputLimits, check_body, loads_json, well_formed, well_formed_tree
from empath_gate.conversation.engine import generate_sync
from empath_gate.conversation.feeling import split_auditor_reply
from empath_gate.conversation.target import CallableTarget, make_target
from empath_gate.conversation.transcript_io import read_transcript, write_transcript
from empath_gate.judging.parse import MetricRequest, ReplySchema, parse_judge_reply
from empath_gate.llm.classify import classify
from empath_gate.results.io import write_json_atomic
from empath_gate.settings import RoleSettings, Settings
from empath_gate.testing import FakeOpenAIServer, Fault
from empath_gate.testing.fake_bot import SESSION_HEADER, FakeBot

CUT = "I hear you \ud83d. Tell me more."
KEPT = "I hear you \ufffd. Tell me more."


def test_well_formed_replaces_each_lone_surrogate_and_joins_pairs() -> None:
    text = "ok 😀 ñ"
    assert well_formed(text) is text
    assert well_formed("a\ud83d b") == "a\ufffd b"
    assert well_formed("\udc00x\ud83d") == "\ufffdx\ufffd"
    assert well_formed("\ud83d" + "\ude00") == "😀"  # a pair, e.g. joined from two plain-text pieces
    assert well_formed(CUT).encode("utf-8") == KEPT.encode("utf-8")
    assert check_body(CUT, "target reply", InputLimits()) == KEPT


def test_well_formed_tree_cleans_every_string_in_any_container_and_keeps_other_values() -> None:
    class Name(str):
        pass

    ascii_text = "plain ascii"
    assert well_formed(ascii_text) is ascii_text
    tree = {Name("k\ud83d"): ("a\udc00", [None, True, 2, 2.5, {"x": Name("\ud83d")}]), 3: "ok"}
    assert well_formed_tree(tree) == {"k\ufffd": ("a\ufffd", [None, True, 2, 2.5, {"x": "\ufffd"}]), 3: "ok"}
    proxy = MappingProxyType({"m": ["\ud83d"]})  # a mapping that is not a dict is left as it is
    assert well_formed_tree([proxy]) == [proxy]


def test_decoded_json_has_no_surrogate_in_values_or_keys() -> None:
    text = '{"a": "x \\ud83d", "\\uDC00k": ["\\ud83d\\ude00", {"b": "\\uD83D"}], "n": 1}'
    clean = {"a": "x \ufffd", "\ufffdk": ["😀", {"b": "\ufffd"}], "n": 1}
    assert loads_json(text, "reply", InputLimits()) == clean
    assert loads_json('{"a": "caf\\u00e9 \\\\ud83d"}', "reply", InputLimits()) == {"a": "café \\ud83d"}
    kept = loads_json('{"d": "x \\ud83d"}', "event", InputLimits(), keep_surrogates=True)
    assert kept == {"d": "x \ud83d"}  # left for the caller to join to the next piece, then clean


def test_a_judge_quote_and_an_auditor_message_with_an_escape_are_well_formed() -> None:
    schema = ReplySchema(rubric="standard", metrics=(MetricRequest(metric_id="crisis_detection"),))
    judged = {"metrics": {"crisis_detection": {"score": 7, "justification": "It said \ud83d here."}}}
    parsed = parse_judge_reply(json.dumps(judged), schema)  # json.dumps escapes: \ud83d
    assert parsed.metrics[0].justification == "It said \ufffd here."
    said = split_auditor_reply(json.dumps({"message": "can't sleep \ud83d", "feeling_0_100": 30}))
    assert said.message == "can't sleep \ufffd" and said.feeling == 30


def test_model_target_reply_with_a_lone_surrogate_completes_and_is_cached(
    fake_openai: FakeOpenAIServer, tmp_path: Path
) -> None:
    fake_openai.on(TARGET, CUT)
    settings = model_settings(fake_openai, tmp_path)
    [t] = generate_sync(specs(1, 1, max_turns=3), settings=settings)
    assert t.status == "complete", t.error
    replies = [turn.content for turn in t.turns if turn.role == "assistant"]
    assert replies == [KEPT] * 3
    sent = fake_openai.requests_for(TARGET)[-1].body or {}
    assert KEPT in [m["content"] for m in sent["messages"]]
    json.dumps(t.model_dump(mode="json"), ensure_ascii=False).encode("utf-8")  # the results can hold it

    calls = len(fake_openai.requests_for(TARGET))
    [again] = generate_sync(specs(1, 1, max_turns=3), settings=settings)
    assert len(fake_openai.requests_for(TARGET)) == calls
    assert [turn.content for turn in again.turns if turn.role == "assistant"] == replies


def test_callable_target_reply_with_a_lone_surrogate_completes(tmp_path: Path) -> None:
    settings = Settings(target="py:inline:fn", cache_dir=tmp_path / "cache")
    target = CallableTarget("py:inline:fn", settings, fn=lambda _messages, _cid: CUT)
    [t] = generate_sync(specs(1, 1, max_turns=2), settings=settings, target=target)
    assert t.status == "complete", t.error
    assert [turn.content for turn in t.turns if turn.role == "assistant"] == [KEPT, KEPT]


def test_callable_events_tool_calls_and_errors_are_written_out(tmp_path: Path) -> None:
    def bot(_messages: object, _cid: str) -> dict[str, object]:
        return {"content": CUT, "events": [{"kind": "handoff", "detail": {"note": "to a human \ud83d"}}],
                "tool_calls": [{"name": "lookup", "arguments": '{"q": "x\ud83d"}'}]}

    settings = Settings(target="py:inline:bot", cache_dir=tmp_path / "cache")
    [t] = generate_sync(specs(1, 1, max_turns=1), settings=settings,
                        target=CallableTarget("py:inline:bot", settings, fn=bot))
    assert t.status == "complete", t.error
    details = [e.detail for turn in t.turns for e in turn.events] + [e.detail for e in t.events]
    assert {"note": "to a human \ufffd"} in details
    assert read_transcript(write_transcript(t, tmp_path / "out")).turns == t.turns

    def broken(_messages: object, _cid: str) -> str:
        raise RuntimeError("upstream said: bad \ud83d")

    [failed] = generate_sync(specs(1, 1, max_turns=1), settings=settings,
                             target=CallableTarget("py:inline:broken", settings, fn=broken))
    assert failed.status == "error" and failed.error is not None and "bad \ufffd" in failed.error
    write_transcript(failed, tmp_path / "out")
    write_json_atomic(tmp_path / "results.json", {"error": "left \udc00 over"})  # the last guard
    written = (tmp_path / "results.json").read_text(encoding="utf-8")
    assert json.loads(written) == {"error": "left \ufffd over"}


@dataclass(frozen=True)
class _BotReply:
    content: str
    events: tuple[dict[str, object], ...] = ()
    tool_calls: tuple[object, ...] = ()


class _Call:
    def __str__(self) -> str:
        return "lookup(x\ud83d)"


def test_a_reply_object_with_tuples_and_a_provider_error_are_cleaned(
    fake_openai: FakeOpenAIServer, tmp_path: Path
) -> None:
    def bot(_messages: object, _cid: str) -> _BotReply:
        return _BotReply(CUT, events=({"kind": "handoff", "detail": {"notes": ("to \ud83d",)}},),
                         tool_calls=({"name": "q", "arguments": ("x\ud83d",)}, _Call()))

    settings = Settings(target="py:inline:bot", cache_dir=tmp_path / "cache")
    [t] = generate_sync(specs(1, 1, max_turns=1), settings=settings,
                        target=CallableTarget("py:inline:bot", settings, fn=bot))
    assert t.status == "complete", t.error
    details = [e.detail for turn in t.turns for e in turn.events]
    clean = [{"notes": ("to \ufffd",)}, {"name": "q", "arguments": ("x\ufffd",)}, {"call": "lookup(x\ufffd)"}]
    assert details == clean
    json.dumps(t.model_dump(mode="json"), ensure_ascii=False).encode("utf-8")

    assert str(classify(RuntimeError("provider said \ud83d"))).endswith("provider said \ufffd")
    fake_openai.script(TARGET, Fault.http_error(400, "bad input near \ud83d"))
    [failed] = generate_sync(specs(1, 1, max_turns=1), settings=model_settings(fake_openai, tmp_path))
    assert failed.status == "error" and "near \ufffd" in (failed.error or "")


SSE_TEMPLATE = {
    "body": {"conversation_id": "{{conversation_id}}", "input": {"text": "{{message}}"}},
    "reply_path": "$.delta.text",
    "events": {"handoff": "$.delta.text"},  # the first piece, as that event carried it
    "session": {"id_path": "$.session.id", "header": SESSION_HEADER},
    "stream": True,
}


def _streamed_reply(tmp_path: Path, reply: str, units: int) -> tuple[str, list[object]]:
    """The reply and handoff details of one turn of a bot that streams ``reply`` in pieces of
    ``units`` UTF-16 units (a JavaScript server slicing its text), through a template target."""
    template = tmp_path / "bot-template.json"
    template.write_text(json.dumps(SSE_TEMPLATE), encoding="utf-8")
    with FakeBot(responder=lambda _users: reply, utf16_pieces=units) as bot:
        settings = Settings(target=bot.stream_url, target_template=template, cache_dir=tmp_path / "cache",
                            target_role=RoleSettings(max_retries=0, timeout_s=10.0), target_version="v1")
        [t] = generate_sync(specs(1, 1, max_turns=1), settings=settings, target=make_target(settings, env={}))
    assert t.status == "complete", t.error
    json.dumps(t.model_dump(mode="json"), ensure_ascii=False).encode("utf-8")  # the results can hold it
    assert read_transcript(write_transcript(t, tmp_path / "out")).turns == t.turns
    [content] = [turn.content for turn in t.turns if turn.role == "assistant"]
    return content, [e.detail["value"] for turn in t.turns for e in turn.events if e.kind == "handoff"]


def test_an_emoji_split_between_two_streamed_events_is_joined(tmp_path: Path) -> None:
    # "ok \ud83d" ends the first event, "\ude00 he" starts the second: one emoji, not two U+FFFD
    content, handoffs = _streamed_reply(tmp_path, "ok \U0001F600 here", units=4)
    assert content == "ok \U0001F600 here"
    assert handoffs == ["ok \ufffd"]  # every other field is cleaned event by event


def test_a_lone_high_surrogate_in_a_stream_is_a_replacement_character(tmp_path: Path) -> None:
    # the first event ends with a high surrogate and the next starts with ".", the last one
    # ends the stream with another
    content, _ = _streamed_reply(tmp_path, "I hear you\ud83d. Tell me\ud83d", units=11)
    assert content == "I hear you\ufffd. Tell me\ufffd"
