"""Target adapters chosen by the target string: py: callables, HTTP endpoints, litellm models."""

from __future__ import annotations

import hashlib
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest
from conv_support import SCRIPT_EN, specs

from empath_gate.conversation.engine import generate_sync
from empath_gate.conversation.target import (
    CONVERSATION_ID_HEADER,
    CallableTarget,
    HttpTarget,
    ModelTarget,
    coerce_reply,
    make_target,
    target_headers,
)
from empath_gate.conversation.transcript import Event
from empath_gate.errors import ConfigError
from empath_gate.settings import Settings
from empath_gate.testing import FakeOpenAIServer, Fault

BOT_MODULE = """
import asyncio

CALLS = []

def reply(messages, conversation_id):
    CALLS.append((conversation_id, [dict(m) for m in messages]))
    last = messages[-1]["content"]
    if "better off without me" in last:
        return {"content": "I'm connecting you with a person now.",
                "events": [{"kind": "handoff", "detail": {"queue": "crisis"}}]}
    return "Tell me more."

async def areply(messages, conversation_id):
    await asyncio.sleep(0)
    return Reply(content=f"async {len(messages)}", tool_calls=[{"name": "lookup", "arguments": "{}"}])

class Reply:
    def __init__(self, content, tool_calls=()):
        self.content = content
        self.tool_calls = list(tool_calls)

def broken(messages, conversation_id):
    return 42

def raising(messages, conversation_id):
    raise RuntimeError("bot backend down")
"""


@pytest.fixture()
def bot_module(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    name = f"empath_fake_bot_{hashlib.sha1(str(tmp_path).encode()).hexdigest()[:8]}"
    (tmp_path / f"{name}.py").write_text(textwrap.dedent(BOT_MODULE), encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    yield name
    sys.modules.pop(name, None)


def callable_settings(tmp_path: Path, target: str, **kw: object) -> Settings:
    return Settings(target=target, cache_dir=tmp_path / "cache", **kw)  # type: ignore[arg-type]


def test_callable_target_with_handoff_event(bot_module: str, tmp_path: Path) -> None:
    [t] = generate_sync(specs(1, 1), settings=callable_settings(tmp_path, f"py:{bot_module}:reply"))
    mod = sys.modules[bot_module]
    assert t.status == "complete" and t.target == f"py:{bot_module}:reply"
    assert [x.content for x in t.turns[1::2]] == [
        "Tell me more.",
        "Tell me more.",
        "I'm connecting you with a person now.",
    ]
    assert t.turns[5].events == (Event(kind="handoff", role="target", detail={"queue": "crisis"}),)
    # the callable gets the dialogue (no system prompt) and the run's stable conversation id
    conv_id, messages = mod.CALLS[-1]
    assert conv_id == "seed-0-dana-r0"
    assert [m["role"] for m in messages] == ["user", "assistant", "user", "assistant", "user"]
    assert messages[-1]["content"] == SCRIPT_EN[2]
    assert all(x.cache == "off" for x in t.turns)


def test_async_callable_and_tool_calls(bot_module: str, tmp_path: Path) -> None:
    [t] = generate_sync(
        specs(1, 1, max_turns=1), settings=callable_settings(tmp_path, f"py:{bot_module}:areply")
    )
    assert t.turns[1].content == "async 1"
    assert t.turns[1].events[0].kind == "tool_call"
    assert t.turns[1].events[0].detail["name"] == "lookup"


@pytest.mark.parametrize(("fn", "message"), [("broken", "returned int"), ("raising", "bot backend down")])
def test_callable_failures_are_error_transcripts(
    bot_module: str, tmp_path: Path, fn: str, message: str
) -> None:
    [t] = generate_sync(specs(1, 1), settings=callable_settings(tmp_path, f"py:{bot_module}:{fn}"))
    assert t.status == "error" and message in (t.error or "")
    assert (t.error or "").startswith("target: ")


def test_callable_is_cached_only_with_a_target_version(bot_module: str, tmp_path: Path) -> None:
    target = f"py:{bot_module}:reply"
    generate_sync(specs(1, 1), settings=callable_settings(tmp_path, target))
    generate_sync(specs(1, 1), settings=callable_settings(tmp_path, target))
    mod = sys.modules[bot_module]
    assert len(mod.CALLS) == 6  # no version: called again on the re-run
    versioned = callable_settings(tmp_path, target, target_version="2024.06.1")
    [first] = generate_sync(specs(1, 1), settings=versioned)
    [second] = generate_sync(specs(1, 1), settings=versioned)
    assert len(mod.CALLS) == 9
    assert [x.cache for x in second.turns[1::2]] == ["hit"] * 3
    assert second.turns[5].events == first.turns[5].events  # events survive the cache
    bumped = callable_settings(tmp_path, target, target_version="2024.06.2")
    generate_sync(specs(1, 1), settings=bumped)
    assert len(mod.CALLS) == 12


def test_bad_callable_specs_are_config_errors(bot_module: str, tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="cannot import"):
        make_target(callable_settings(tmp_path, "py:no_such_module_xyz:reply"))
    with pytest.raises(ConfigError, match="no callable 'nope'"):
        make_target(callable_settings(tmp_path, f"py:{bot_module}:nope"))
    with pytest.raises(ConfigError, match="no target"):
        make_target(Settings())


def test_http_target_gets_conversation_id_and_synthetic_header(
    fake_openai: FakeOpenAIServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-provider-key-never-for-the-bot")
    monkeypatch.setenv(
        "EMPATH_TARGET_HEADERS", '{"Authorization": "Bearer team-token-123", "X-Env": "staging"}'
    )
    monkeypatch.setenv("EMPATH_TARGET_HEADER_X_TEAM", "care")
    fake_openai.on("empath-target", "Estoy aquí.")
    settings = callable_settings(
        tmp_path, f"{fake_openai.base_url}/chat/completions", synthetic_header="X-Generated-Traffic"
    )
    transcripts = generate_sync(specs(1, 2, max_turns=2), settings=settings)
    assert all(t.status == "complete" for t in transcripts)
    assert transcripts[0].target == f"{fake_openai.base_url}/chat/completions"
    reqs = fake_openai.requests
    assert len(reqs) == 4
    ids = [r.headers[CONVERSATION_ID_HEADER.lower()] for r in reqs]
    assert sorted(ids) == ["seed-0-dana-r0", "seed-0-dana-r0", "seed-0-dana-r1", "seed-0-dana-r1"]
    assert all(r.headers["x-generated-traffic"] == "1" for r in reqs)
    assert all(r.headers["x-env"] == "staging" and r.headers["x-team"] == "care" for r in reqs)
    # the team's credential is sent; the provider key from the environment never is
    assert {r.authorization_sha256 for r in reqs} == {hashlib.sha256(b"Bearer team-token-123").hexdigest()}
    assert all((r.body or {}).get("model") == "empath-target" for r in reqs)
    # not cached without a target_version
    generate_sync(specs(1, 2, max_turns=2), settings=settings)
    assert len(fake_openai.requests) == 8


def test_http_target_without_auth_header_sends_a_placeholder(
    fake_openai: FakeOpenAIServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-provider-key-never-for-the-bot")
    monkeypatch.delenv("EMPATH_TARGET_HEADERS", raising=False)
    fake_openai.on("empath-target", "ok")
    settings = callable_settings(tmp_path, fake_openai.base_url, target_version="v7")
    generate_sync(specs(1, 1, max_turns=1), settings=settings)
    [req] = fake_openai.requests
    assert req.authorization_sha256 != hashlib.sha256(b"Bearer sk-provider-key-never-for-the-bot").hexdigest()
    [t] = generate_sync(specs(1, 1, max_turns=1), settings=settings)
    assert len(fake_openai.requests) == 1 and t.turns[1].cache == "hit"  # cached: target_version is set


def test_http_target_filter_and_errors(fake_openai: FakeOpenAIServer, tmp_path: Path) -> None:
    fake_openai.script("empath-target", Fault.content_filter(), Fault.http_error(403, "forbidden"))
    settings = callable_settings(tmp_path, fake_openai.base_url)
    [t] = generate_sync(specs(1, 1), settings=settings)
    assert t.turns[1].events[0].kind == "filtered"
    assert t.status == "error" and (t.error or "").startswith("target: authentication")


def test_model_target_needs_a_readable_prompt(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="target_system_prompt"):
        make_target(Settings(target="openai/x", target_system_prompt=tmp_path / "missing.md"))
    assert isinstance(make_target(Settings(target="openai/x")), ModelTarget)
    assert isinstance(make_target(Settings(target="http://127.0.0.1:9/v1")), HttpTarget)


def test_target_headers_parsing() -> None:
    env = {
        "EMPATH_TARGET_HEADERS": '{"A": "1", "X-Team": "old"}',
        "EMPATH_TARGET_HEADER_X_TEAM": "new",
        "EMPATH_TARGET_HEADER_AUTHORIZATION": "Bearer t",
    }
    assert target_headers(env) == {"A": "1", "X-Team": "new", "Authorization": "Bearer t"}
    with pytest.raises(ConfigError, match="not valid JSON") as info:
        target_headers({"EMPATH_TARGET_HEADERS": "{Bearer secret"})
    assert "secret" not in str(info.value)
    with pytest.raises(ConfigError, match="string values"):
        target_headers({"EMPATH_TARGET_HEADERS": '{"A": 1}'})


def test_coerce_reply_shapes() -> None:
    assert coerce_reply("hi") == ("hi", ())
    content, events = coerce_reply({"content": None, "events": [Event(kind="handoff", role="engine")]})
    assert content == "" and events[0].role == "target"
    with pytest.raises(TypeError, match="event kind 'budget'"):
        coerce_reply({"content": "x", "events": [{"kind": "budget"}]})
    with pytest.raises(TypeError, match="'content' must be a str"):
        coerce_reply({"content": 3})
    with pytest.raises(TypeError, match="returned NoneType"):
        coerce_reply(None)


def test_callable_target_class_accepts_a_function(tmp_path: Path) -> None:
    t = CallableTarget("py:inline:fn", Settings(target="py:inline:fn"), fn=lambda m, c: "x")
    assert t.description == "py:inline:fn" and not t.cacheable
