"""Template targets end to end: the engine (scripted auditor) against the fake non-OpenAI bot on
127.0.0.1, with sessions, server-sent events, failures, caching and secrets."""

from __future__ import annotations

import asyncio
import json
import re
import socket
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from conv_support import SCRIPT_EN, specs

from empath_gate.bounded import InputLimits, configure_limits
from empath_gate.conversation.engine import generate
from empath_gate.conversation.target import Target, make_target
from empath_gate.conversation.template_spec import parse_template
from empath_gate.conversation.template_target import TemplateTarget
from empath_gate.conversation.transcript import Transcript
from empath_gate.errors import ConfigError
from empath_gate.llm.accounting import Ledger, ledger_session
from empath_gate.llm.cache import Cache
from empath_gate.settings import RoleSettings, Settings
from empath_gate.testing.fake_bot import SESSION_HEADER, FakeBot
from empath_gate.testing.scenarios import compose_reply

JSON_TEMPLATE: dict[str, Any] = {
    "body": {"conversation_id": "{{conversation_id}}", "session_id": "{{session_id}}",
             "input": {"text": "{{message}}"}},
    "reply_path": "output.text",
    "events": {"handoff": "output.handoff"},
    "session": {"id_path": "session.id"},
}
SSE_TEMPLATE: dict[str, Any] = {
    "body": {"conversation_id": "{{conversation_id}}", "input": {"text": "{{message}}"}},
    "reply_path": "$.delta.text",
    "events": {"handoff": "$.handoff"},
    "session": {"id_path": "$.session.id", "header": SESSION_HEADER},
    "stream": True,
}


@pytest.fixture
def bot() -> Iterator[FakeBot]:
    with FakeBot(handoff_turns={1}) as b:
        yield b


def settings_for(tmp_path: Path, url: str, template: dict[str, Any], **kw: Any) -> Settings:
    path = tmp_path / "bot-template.json"
    path.write_text(json.dumps(template), encoding="utf-8")
    role = RoleSettings(retry_base_delay_s=0.01, retry_max_delay_s=0.02, timeout_s=10.0,
                        max_retries=kw.pop("max_retries", 2))
    return Settings(target=url, target_template=path, target_role=role, cache_dir=tmp_path / "cache", **kw)


def run(settings: Settings, n: int = 1, *, script: tuple[str, ...] = SCRIPT_EN,
        env: dict[str, str] | None = None, target: Target | None = None) -> tuple[list[Transcript], Ledger]:
    target = target or make_target(settings, env=env or {})

    async def go() -> tuple[list[Transcript], Ledger]:
        with ledger_session(None) as ledger:
            out = await generate(specs(n, 1, max_turns=3, script=script), settings=settings, target=target)
        return out, ledger

    return asyncio.run(go())


def replies(t: Transcript) -> list[str]:
    return [x.content for x in t.turns if x.role == "assistant"]


@pytest.mark.parametrize("mode", ["json", "sse"])
def test_a_session_bot_hears_the_whole_conversation_in_one_session(
    bot: FakeBot, tmp_path: Path, mode: str
) -> None:
    url, template = (bot.url, JSON_TEMPLATE) if mode == "json" else (bot.stream_url, SSE_TEMPLATE)
    [t], ledger = run(settings_for(tmp_path, url, template))
    assert t.status == "complete", t.error
    assert replies(t) == [compose_reply("safe", "en-US", k) for k in range(3)]
    [(session, heard)] = bot.sessions.items()
    assert heard == list(SCRIPT_EN)  # the bot's own memory holds every turn, in order
    assert [r.session_id for r in bot.requests] == [None, session, session]
    ids = {r.headers["x-empath-conversation-id"] for r in bot.requests}
    assert len(ids) == 1 and ids.pop().startswith(f"{t.transcript_id}-")
    assert all(r.headers["x-empath-synthetic"] == "1" for r in bot.requests)
    handoffs = [[e.detail["value"] for e in x.events if e.kind == "handoff"] for x in t.turns[1::2]]
    assert handoffs == [[], [{"to": "crisis-line"}], []]
    assert ledger.by_role["target"].calls == 3
    if mode == "sse":
        assert all(r.headers.get("accept") == "text/event-stream" for r in bot.requests)


def test_a_stream_without_done_is_read_to_its_end(tmp_path: Path) -> None:
    with FakeBot(stream_done=False) as bot:
        [t], _ = run(settings_for(tmp_path, bot.stream_url, SSE_TEMPLATE))
    assert t.status == "complete" and replies(t) == [compose_reply("safe", "en-US", k) for k in range(3)]


def test_each_generation_gets_a_new_conversation_id(bot: FakeBot, tmp_path: Path) -> None:
    settings = settings_for(tmp_path, bot.url, JSON_TEMPLATE)
    run(settings)
    run(settings)
    ids = [r.body["conversation_id"] for r in bot.requests if r.body]
    assert len(set(ids[:3])) == 1 and len(set(ids[3:])) == 1 and ids[0] != ids[3]
    assert len(bot.sessions) == 2  # a rerun never lands in the earlier session (409 otherwise)


def test_a_retryable_status_is_retried_after_its_retry_after(bot: FakeBot, tmp_path: Path) -> None:
    bot.fail("status", status=503, retry_after=0)
    bot.fail("status", status=429, retry_after=0)
    [t], ledger = run(settings_for(tmp_path, bot.url, JSON_TEMPLATE))
    assert t.status == "complete", t.error
    retries = [e.detail for e in t.turns[1].events if e.kind == "retry"]
    seen = [(r["kind"], r["status"], r["delay_s"]) for r in retries]
    assert seen == [("server", 503, 0.0), ("rate_limit", 429, 0.0)]
    assert ledger.by_role["target"].calls == 5  # every attempt counted
    assert list(bot.sessions.values()) == [list(SCRIPT_EN)]  # failed attempts left no turn behind


@pytest.mark.parametrize(
    ("fault", "status", "kind", "attempts", "message"),
    [
        ("status", 500, "server", 3, "HTTP 500 Internal Server Error from http://127.0.0.1"),
        ("status", 401, "authentication", 1, "HTTP 401 Unauthorized"),
        ("status", 404, "not_found", 1, "HTTP 404"),
        ("not_json", 200, "server", 3, "is not JSON"),
        ("missing_reply", 200, "server", 3, "no reply at 'output.text'"),
        ("empty_reply", 200, "empty_reply", 1, "is empty (recorded as an error, never as an empty turn)"),
    ],
)
def test_failures_are_provider_errors_retried_when_retryable_never_empty_turns(
    bot: FakeBot, tmp_path: Path, fault: Any, status: int, kind: str, attempts: int, message: str
) -> None:
    bot.fail(fault, status=status, count=5)
    [t], ledger = run(settings_for(tmp_path, bot.url, JSON_TEMPLATE))
    assert t.status == "error"
    assert t.error is not None and t.error.startswith(f"target: {kind}: ") and message in t.error, t.error
    assert [x.role for x in t.turns] == ["user"]  # no assistant turn, empty or otherwise
    assert [e.detail for e in t.events if e.kind == "error"] == [
        {"phase": "target", "kind": kind, "status": status if fault == "status" else None}
    ]
    assert len(bot.requests) == attempts == ledger.by_role["target"].calls


def test_a_first_response_without_a_session_id_is_an_error(bot: FakeBot, tmp_path: Path) -> None:
    template = {**JSON_TEMPLATE, "session": {"id_path": "session.token"}}
    [t], _ = run(settings_for(tmp_path, bot.url, template, max_retries=0))
    assert t.status == "error" and "no session id at 'session.token' in the first response" in (t.error or "")


def test_a_body_over_the_limit_is_refused_without_retry(bot: FakeBot, tmp_path: Path) -> None:
    settings = settings_for(tmp_path, bot.url, JSON_TEMPLATE)
    target = make_target(settings, env={})
    configure_limits(InputLimits(max_json_bytes=100))
    try:
        [t], _ = run(settings, target=target)
    finally:
        configure_limits(None)
    error = t.error or ""
    assert t.status == "error" and "target: bad_request: " in error and "max_json_bytes" in error
    assert len(bot.requests) == 1


def test_a_dead_bot_opens_the_breaker_and_the_run_ends_fast(tmp_path: Path) -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    settings = settings_for(tmp_path, f"http://127.0.0.1:{port}/api/chat", JSON_TEMPLATE, max_retries=3)
    out, ledger = run(settings, n=8)
    assert all(t.status == "error" for t in out)
    assert any("template at http://127.0.0.1" in (t.error or "") and "connection refused" in (t.error or "")
               for t in out), [t.error for t in out]
    assert ledger.by_role["target"].calls <= 5 + settings.concurrency  # no retries once open


def test_secrets_in_headers_and_the_url_never_reach_the_transcript(bot: FakeBot, tmp_path: Path) -> None:
    token = "tok-1234567890-abcdef"
    bot.fail("status", status=400, body=f"bad token {token} for key query-secret-999")
    url = bot.url + "?key=query-secret-999"
    [t], _ = run(settings_for(tmp_path, url, JSON_TEMPLATE), env={"EMPATH_TARGET_HEADER_X_BOT_TOKEN": token})
    assert bot.requests[0].headers["x-bot-token"] == token  # sent...
    dump = t.model_dump_json()
    assert token not in dump and "query-secret-999" not in dump  # ...never shown
    assert t.target == bot.url and "HTTP 400" in (t.error or "")


def test_a_credential_header_in_the_template_file_is_refused(bot: FakeBot, tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="EMPATH_TARGET_HEADER_AUTHORIZATION"):
        with_key = {**JSON_TEMPLATE, "headers": {"Authorization": "Bearer x"}}
        settings = settings_for(tmp_path, bot.url, with_key)
        make_target(settings, env={})


def test_a_template_needs_an_http_target(tmp_path: Path) -> None:
    settings = settings_for(tmp_path, "openai/gpt-4o-mini", JSON_TEMPLATE)
    with pytest.raises(ConfigError, match="needs the bot's http"):
        make_target(settings, env={})


# --------------------------------------------------------------------------- caching


def cache_states(t: Transcript) -> list[str]:
    return [x.cache for x in t.turns if x.role == "assistant"]


def test_a_session_bot_is_cached_per_whole_transcript_never_in_part(bot: FakeBot, tmp_path: Path) -> None:
    settings = settings_for(tmp_path, bot.url, JSON_TEMPLATE, target_version="v1")
    assert isinstance(make_target(settings, env={}), TemplateTarget)
    [cold], _ = run(settings)
    assert cache_states(cold) == ["miss"] * 3 and len(bot.requests) == 3
    [warm], _ = run(settings)
    assert cache_states(warm) == ["hit"] * 3 and len(bot.requests) == 3  # whole transcript from the cache
    assert replies(warm) == replies(cold)
    # the third user turn changes: two cached turns, then a miss -> generated again, all live
    changed = (*SCRIPT_EN[:2], "Something new happened today.")
    [again], ledger = run(settings, script=changed)
    assert again.status == "complete", again.error
    assert cache_states(again) == ["miss"] * 3
    assert len(bot.requests) == 6 and ledger.by_role["target"].calls == 3
    newest = list(bot.sessions.values())[-1]
    assert newest == list(changed)  # the bot saw every turn of the transcript it answered
    assert [x.content for x in again.turns[::2]] == list(changed)
    # the rewritten entries now replay whole
    [replayed], _ = run(settings, script=changed)
    assert cache_states(replayed) == ["hit"] * 3 and len(bot.requests) == 6


def test_a_stateless_bot_is_cached_reply_by_reply(bot: FakeBot, tmp_path: Path) -> None:
    template = {"body": {"history": "{{messages}}", "input": {"text": "{{message}}"}},
                "reply_path": "output.text"}
    stateless = FakeBot(responder=lambda users: f"reply {len(users)}").start()
    try:
        settings = settings_for(tmp_path, stateless.url, template, target_version="v1")
        run(settings)
        changed = (*SCRIPT_EN[:2], "Something new happened today.")
        [t], _ = run(settings, script=changed)
        assert cache_states(t) == ["hit", "hit", "miss"] and len(stateless.requests) == 4
        assert stateless.requests[-1].body is not None
        assert [m["content"] for m in stateless.requests[-1].body["history"]][::2] == list(changed)
    finally:
        stateless.close()


def test_without_a_target_version_nothing_is_cached(bot: FakeBot, tmp_path: Path) -> None:
    settings = settings_for(tmp_path, bot.url, JSON_TEMPLATE)
    run(settings)
    [t], _ = run(settings)
    assert cache_states(t) == ["off"] * 3 and len(bot.requests) == 6


def readme_templates() -> list[dict[str, Any]]:
    """The JSON blocks of README's "Any HTTP bot" section: the generic one, then the examples."""
    text = (Path(__file__).resolve().parents[2] / "README.md").read_text(encoding="utf-8")
    section = text.split("## Any HTTP bot", 1)[1].split("\n## ", 1)[0]
    return [json.loads(block) for block in re.findall(r"```json\n(.*?)```", section, flags=re.S)]


def test_the_readme_examples_gate_the_fake_bot(bot: FakeBot, tmp_path: Path) -> None:
    generic, session_in_body, streaming = readme_templates()
    assert parse_template(generic, "README").stateful
    for url, template in ((bot.url, session_in_body), (bot.stream_url, streaming)):
        [t], _ = run(settings_for(tmp_path, url, template))
        assert t.status == "complete", t.error
        assert replies(t) == [compose_reply("safe", "en-US", k) for k in range(3)]
        assert [e.kind for x in t.turns for e in x.events] == ["handoff"]
    assert sorted(bot.sessions.values()) == [list(SCRIPT_EN)] * 2


def test_a_json_answer_to_a_stream_request_says_it_carried_no_event(bot: FakeBot, tmp_path: Path) -> None:
    [t], _ = run(settings_for(tmp_path, bot.url, SSE_TEMPLATE, max_retries=0))
    assert t.status == "error"
    assert "it carried no event (application/json)" in (t.error or ""), t.error


def test_a_cache_entry_this_version_cannot_read_is_a_miss(bot: FakeBot, tmp_path: Path) -> None:
    settings = settings_for(tmp_path, bot.url, JSON_TEMPLATE, target_version="v1")
    run(settings)
    cache = Cache(tmp_path / "cache")
    entries = cache.entries()
    assert len(entries) == 3
    for key in entries:  # a later write of a key wins
        cache.put(key, {"content": "x", "events": [{"kind": "nonsense", "role": "target"}]})
    [t], _ = run(settings)
    assert t.status == "complete" and cache_states(t) == ["miss"] * 3 and len(bot.requests) == 6


def test_a_template_maps_a_response_path_to_a_triage_level(tmp_path: Path) -> None:
    template = {**JSON_TEMPLATE, "events": {"triage": "output.text"}}
    with FakeBot(responder=lambda heard: "urgent") as bot:
        [t], _ = run(settings_for(tmp_path, bot.url, template))
    assert t.status == "complete", t.error
    levels = [[e.detail for e in x.events if e.kind == "triage"] for x in t.turns[1::2]]
    assert levels == [[{"level": "urgent", "path": "output.text"}]] * 3


def test_a_template_triage_level_outside_the_three_is_an_error(bot: FakeBot, tmp_path: Path) -> None:
    template = {**JSON_TEMPLATE, "events": {"triage": "output.handoff.to"}}
    [t], ledger = run(settings_for(tmp_path, bot.url, template))
    assert t.status == "error" and "unknown triage level 'crisis-line'" in (t.error or "")
    assert ledger.by_role["target"].calls == 2  # turn 2 (the hand-off) is refused, not retried


def test_a_stream_starting_with_a_byte_order_mark_is_read(tmp_path: Path) -> None:
    with FakeBot(stream_bom=True) as bot:  # the BOM's three bytes come in three chunks
        [t], ledger = run(settings_for(tmp_path, bot.stream_url, SSE_TEMPLATE))
    assert t.status == "complete", t.error
    assert replies(t) == [compose_reply("safe", "en-US", k) for k in range(3)]
    assert ledger.by_role["target"].calls == 3


ERROR_TEMPLATE: dict[str, Any] = {**SSE_TEMPLATE, "stream_error": "$.error"}
STATELESS_SSE: dict[str, Any] = {"body": {"history": "{{messages}}", "input": {"text": "{{message}}"}},
                                 "reply_path": "$.delta.text", "stream": True, "stream_error": "$.error"}


@pytest.mark.parametrize(
    ("fault", "template"),
    [("stream_error", ERROR_TEMPLATE), ("error_event", ERROR_TEMPLATE), ("error_event", SSE_TEMPLATE)],
)
def test_an_error_in_the_stream_of_a_session_bot_fails_the_turn_never_a_cut_off_reply(
    bot: FakeBot, tmp_path: Path, fault: Any, template: dict[str, Any]
) -> None:
    bot.fail(fault, body="upstream model overloaded (session s-stream-fault)")
    [t], ledger = run(settings_for(tmp_path, bot.stream_url, template))
    assert t.status == "error"
    assert [x.role for x in t.turns] == ["user"]  # the cut-off piece is never a reply
    error = t.error or ""
    assert error.startswith("target: server: ") and "bot-template.json" in error, error
    assert "upstream model overloaded" in error and "s-stream-fault" not in error, error
    where = "'$.error' (stream_error)" if fault == "stream_error" else "an 'error' event"
    assert where in error, error
    assert ledger.by_role["target"].calls == 1  # a session bot may keep the turn: never sent twice


def test_an_error_in_the_stream_of_a_stateless_bot_is_retried(tmp_path: Path) -> None:
    with FakeBot(responder=lambda users: f"reply {len(users)}") as bot:
        bot.fail("stream_error", count=2)
        [t], ledger = run(settings_for(tmp_path, bot.stream_url, STATELESS_SSE))
    assert t.status == "complete", t.error
    assert [e.detail["kind"] for e in t.turns[1].events if e.kind == "retry"] == ["server", "server"]
    assert ledger.by_role["target"].calls == 5


def test_the_template_decides_whether_a_stream_error_is_retried(bot: FakeBot, tmp_path: Path) -> None:
    bot.fail("stream_error")
    [t], ledger = run(settings_for(tmp_path, bot.stream_url, {**ERROR_TEMPLATE, "stream_error_retry": True}))
    assert t.status == "complete", t.error
    assert ledger.by_role["target"].calls == 4  # the failed attempt, then three turns
    with FakeBot(responder=lambda users: "ok") as stateless:
        stateless.fail("stream_error", count=5)
        no_retry = {**STATELESS_SSE, "stream_error_retry": False}
        [t], ledger = run(settings_for(tmp_path, stateless.stream_url, no_retry))
    assert t.status == "error" and ledger.by_role["target"].calls == 1


def test_a_long_stream_error_is_quoted_bounded(bot: FakeBot, tmp_path: Path) -> None:
    bot.fail("stream_error", body="overloaded " + "x" * 5000)
    [t], _ = run(settings_for(tmp_path, bot.stream_url, ERROR_TEMPLATE))
    assert t.status == "error" and "overloaded xxx" in (t.error or "") and len(t.error or "") < 800


def test_a_session_id_inside_an_error_event_is_taken_out_of_the_message(tmp_path: Path) -> None:
    from empath_gate.conversation.template_target import _Generation
    from empath_gate.errors import ProviderError
    from empath_gate.llm.http_transport import HttpResult, SseEvent

    target = make_target(settings_for(tmp_path, "http://127.0.0.1:9/chat", SSE_TEMPLATE), env={})
    assert isinstance(target, TemplateTarget)
    data = json.dumps({"session": {"id": "sess-SECRET-12345"}, "message": "boom"})
    result = HttpResult(status=200, reason="OK", events=(SseEvent(data, "error"),))
    with pytest.raises(ProviderError) as caught:
        target._parse(result, _Generation("conv-1"))  # the first turn: no session id known yet
    assert "boom" in str(caught.value) and "sess-SECRET-12345" not in str(caught.value), caught.value
