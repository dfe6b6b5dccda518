"""Template targets, the pure part: paths, filling the body, reading replies, validating files."""

from __future__ import annotations

import codecs
import json
from pathlib import Path
from typing import Any

import pytest

from empath_gate.conversation.json_paths import WILDCARD, find_all, parse_path
from empath_gate.conversation.template_spec import (
    TARGET_KINDS,
    MissingPath,
    events_of,
    fill,
    load_template,
    parse_template,
    placeholder_values,
    reply_text,
    session_of,
)
from empath_gate.errors import ConfigError
from empath_gate.llm.http_transport import SseEvent, SseReader

DOC: dict[str, Any] = {
    "choices": [{"message": {"content": "hello"}}, {"message": {"content": "second"}}],
    "data": {"reply": "hi there", "a.b": "dotted key", "n": 0},
    "messages": [{"text": "one"}, {"type": "image"}, {"text": "two"}],
}


@pytest.mark.parametrize(
    ("path", "expected"),
    [
        ("data.reply", ["hi there"]),
        ("choices.0.message.content", ["hello"]),
        ("choices.-1.message.content", ["second"]),
        ("$.data.reply", ["hi there"]),
        ("$.choices[0].message.content", ["hello"]),
        ("$.choices[-1].message.content", ["second"]),
        ("$['data']['a.b']", ["dotted key"]),
        ('$["data"].n', [0]),
        ("$.messages[*].text", ["one", "two"]),
        ("messages.*.text", ["one", "two"]),
        ("data.missing", []),
        ("choices.7.message", []),
        ("$.data.reply.deeper", []),
        ("$.choices[0]['message']", [{"content": "hello"}]),
    ],
)
def test_dotted_and_jsonpath_paths_find_their_values(path: str, expected: list[Any]) -> None:
    assert find_all(DOC, parse_path(path)) == expected


def test_the_root_path_is_the_whole_document() -> None:
    assert parse_path("$") == ()
    assert find_all(DOC, ()) == [DOC]
    assert parse_path("$.a[*]") == ("a", WILDCARD)
    assert parse_path("$.a[2]") == ("a", 2)


@pytest.mark.parametrize(
    ("path", "reason"),
    [
        ("", "empty"),
        ("a..b", "empty name"),
        ("$..reply", "recursive descent"),
        ("$.a[?(@.x)]", "unsupported bracket"),
        ("$.a[0:2]", "unsupported bracket"),
        ("$.a[0,1]", "unsupported bracket"),
        ("$a", "unexpected"),
    ],
)
def test_unsupported_paths_are_refused_with_the_reason(path: str, reason: str) -> None:
    with pytest.raises(ValueError, match=reason):
        parse_path(path)


BODY = {
    "conversation": {"id": "{{conversation_id}}", "session": "{{session_id}}"},
    "text": "{{message}}",
    "history": "{{messages}}",
    "fixed": ["{{ message }}", 3, None, "plain"],
}


def test_placeholders_become_json_values_and_the_template_is_untouched() -> None:
    msgs = [{"role": "user", "content": "a"}, {"role": "assistant", "content": "b"},
            {"role": "user", "content": "c"}]
    values = placeholder_values(msgs, "conv-1", None)
    filled = fill(BODY, values)
    assert filled == {
        "conversation": {"id": "conv-1", "session": None},
        "text": "c",
        "history": msgs,
        "fixed": ["c", 3, None, "plain"],
    }
    assert BODY["text"] == "{{message}}"
    assert fill(BODY, placeholder_values(msgs, "conv-1", "s-9"))["conversation"]["session"] == "s-9"


def template(**over: Any) -> dict[str, Any]:
    base: dict[str, Any] = {"body": {"q": "{{message}}"}, "reply_path": "data.reply"}
    base.update(over)
    return base


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (template(body={"q": "Hi {{message}}"}), "must be a whole string value"),
        (template(body={"q": "{{mesage}}"}), "unknown placeholder"),
        (template(body={"q": "x"}), 'no "{{message}}"'),
        (template(reply_path="$..x"), "reply_path: .*recursive descent"),
        (template(events={"nonsense": "a"}), "event kind 'nonsense' is not one of"),
        (template(events={"retry": "a"}), "event kind 'retry'"),
        (template(headers={"Authorization": "Bearer x"}), "EMPATH_TARGET_HEADER_AUTHORIZATION"),
        (template(headers={"X-Api-Key": "k"}), "looks like a credential"),
        (template(body={"q": "{{message}}", "s": "{{session_id}}"}), "needs a \"session\""),
        (template(session={"id_path": "s.id"}), "so the id is sent back"),
        (template(method="GET"), "method"),
        (template(extra=1), "extra"),
        ({"body": {"q": "{{message}}"}}, "reply_path"),
        ([1, 2], "must be a JSON object"),
    ],
)
def test_invalid_templates_name_the_file_and_what_to_fix(data: Any, message: str) -> None:
    with pytest.raises(ConfigError, match=r"bot\.json") as info:
        parse_template(data, "bot.json")
    assert __import__("re").search(message, str(info.value)), str(info.value)


def test_event_kinds_come_from_the_event_model() -> None:
    assert "handoff" in TARGET_KINDS and "tool_call" in TARGET_KINDS
    assert not {"retry", "error", "budget", "filtered"} & set(TARGET_KINDS)


def test_a_template_file_is_read_bounded_and_errors_name_it(tmp_path: Path) -> None:
    missing = tmp_path / "nope.json"
    with pytest.raises(ConfigError, match=r"cannot read .*nope\.json.*EMPATH_TARGET_TEMPLATE"):
        load_template(missing)
    broken = tmp_path / "broken.json"
    broken.write_text('{"body": ', encoding="utf-8")
    with pytest.raises(ConfigError, match=r"broken\.json: the target template is not valid JSON"):
        load_template(broken)
    deep = tmp_path / "deep.json"
    nested = template(body={"q": "{{message}}", "d": [[[[[[[[[[1]]]]]]]]]]})
    deep.write_text(json.dumps(nested), encoding="utf-8")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("EMPATH_MAX_INPUT_DEPTH", "5")
        from empath_gate.bounded import InputLimits, configure_limits

        configure_limits(InputLimits.from_env())
        try:
            with pytest.raises(ConfigError, match=r"deep\.json.*max_input_depth"):
                load_template(deep)
        finally:
            configure_limits(None)
    good = tmp_path / "good.json"
    good.write_text(json.dumps(template(session={"id_path": "s", "header": "X-S"})), encoding="utf-8")
    t = load_template(good)
    assert t.source == str(good) and t.stateful


def test_stateful_means_a_session_or_no_history_in_the_body() -> None:
    assert parse_template(template(), "t").stateful  # only {{message}}: the bot must remember
    assert not parse_template(template(body={"h": "{{messages}}"}), "t").stateful
    with_session = template(body={"h": "{{messages}}"}, session={"id_path": "s", "header": "X-S"})
    assert parse_template(with_session, "t").stateful


def test_the_digest_changes_with_the_template_not_with_its_file_name() -> None:
    a = parse_template(template(), "a.json")
    assert a.digest() == parse_template(template(), "b.json").digest()
    assert a.digest() != parse_template(template(reply_path="data.text"), "a.json").digest()


def test_reply_events_and_session_are_read_at_their_paths() -> None:
    t = parse_template(template(reply_path="$.messages[*].text", events={"handoff": "meta.handoff"},
                                session={"id_path": "session.id", "header": "X-S"}), "t")
    doc = {"messages": [{"text": "one"}, {"text": None}, {"text": "two"}],
           "meta": {"handoff": {"to": "human"}}, "session": {"id": 42}}
    assert reply_text(doc, t) == "one\n\ntwo"
    assert events_of(doc, t) == [("handoff", {"path": "meta.handoff", "value": {"to": "human"}})]
    assert session_of(doc, t) == "42"
    for absent in (None, False, "", [], {}):
        assert events_of({**doc, "meta": {"handoff": absent}}, t) == []
    assert events_of({**doc, "meta": {"handoff": 0}}, t)[0][1]["value"] == 0
    with pytest.raises(MissingPath):
        reply_text({"other": 1}, t)
    with pytest.raises(TypeError, match="not text"):
        reply_text({"messages": [{"text": {"nested": 1}}]}, t)
    assert reply_text({"messages": [{"text": None}]}, t) == ""


def test_server_sent_events_are_read_across_chunk_boundaries() -> None:
    stream = (": comment\r\nevent: message\r\ndata: {\"a\":\r\ndata: 1}\r\n\r\n"
              "data:  two spaces\n\nid: 7\ndata: [DONE]\n\ndata: tail")
    for size in (1, 3, 7, len(stream)):
        reader = SseReader()
        out: list[SseEvent] = []
        for i in range(0, len(stream), size):
            out.extend(reader.feed(stream[i:i + size]))
        out.extend(reader.close())
        assert [e.data for e in out] == ['{"a":\n1}', " two spaces", "[DONE]", "tail"], size


def _read_bytes(raw: bytes, size: int) -> list[SseEvent]:
    """The events of ``raw`` read as :func:`~empath_gate.llm.http_transport.send` reads a stream:
    chunks of ``size`` bytes through an incremental UTF-8 decoder into one reader."""
    decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
    reader = SseReader()
    out: list[SseEvent] = []
    for i in range(0, len(raw), size):
        out.extend(reader.feed(decoder.decode(raw[i:i + size])))
    return out + reader.feed(decoder.decode(b"", final=True)) + reader.close()


@pytest.mark.parametrize("size", [1, 2, 3, 4, 100])
def test_one_byte_order_mark_starting_the_stream_is_dropped_even_split_across_chunks(size: int) -> None:
    body = 'data: {"a": 1}\n\ndata: x\ufeffy\n\n'.encode()
    assert [e.data for e in _read_bytes(b"\xef\xbb\xbf" + body, size)] == ['{"a": 1}', "x\ufeffy"]
    # exactly one: a second BOM starts the first line's field name ("\ufeffdata"), ignored
    assert [e.data for e in _read_bytes(b"\xef\xbb\xbf" * 2 + body, size)] == ["x\ufeffy"]


def test_the_event_type_is_kept_and_an_error_event_is_dispatched_even_without_data() -> None:
    reader = SseReader()
    out = reader.feed("event: delta\ndata: a\n\ndata: b\n\n"
                      "event: error\n\nevent: error\ndata: {\"m\": 1}\n\n")
    assert [(e.type, e.data) for e in out] == [
        ("delta", "a"), ("message", "b"), ("error", ""), ("error", '{"m": 1}')
    ]
    assert reader.feed("event: ping\n\ndata: c\n\n") == [SseEvent("c")]  # no data, not error: none


@pytest.mark.parametrize(
    ("over", "message"),
    [
        ({"stream": True, "stream_error": "$..error"}, "stream_error: .*recursive descent"),
        ({"stream_error": "$.error"}, 'stream_error: needs "stream": true'),
        ({"stream_error_retry": True}, 'stream_error_retry: needs "stream": true'),
        ({"stream": True, "stream_error_retry": "often"}, "stream_error_retry"),
    ],
)
def test_a_stream_error_path_is_validated_like_the_other_paths(over: dict[str, Any], message: str) -> None:
    with pytest.raises(ConfigError, match=r"bot\.json") as info:
        parse_template(template(**over), "bot.json")
    assert __import__("re").search(message, str(info.value)), str(info.value)
    ok = parse_template(template(stream=True, stream_error="$.error", stream_error_retry=False), "t")
    assert ok.stream_error == "$.error" and ok.stream_error_retry is False


def test_the_new_stream_fields_leave_the_digest_of_older_templates_alone() -> None:
    # the digest of a template without them, as it was before they existed (cache keys kept)
    before = "a8760c150bd14ca9"
    digest = parse_template(template(), "t").digest()
    assert digest.startswith(before), digest
    assert parse_template(template(stream=True, stream_error="$.error"), "t").digest() != \
        parse_template(template(stream=True), "t").digest()
