"""The model client through litellm over real HTTP to the fake OpenAI-compatible server."""

from __future__ import annotations

import asyncio
import socket
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from pydantic import SecretStr

from empath_gate.errors import ProviderError
from empath_gate.llm import loop
from empath_gate.llm.cache import Cache
from empath_gate.llm.client import (
    Completion,
    backoff_delay,
    complete,
    litellm_module,
    register_chat_provider,
    supports_json_schema,
)
from empath_gate.llm.loop import run_calls
from empath_gate.settings import RoleSettings
from empath_gate.testing import FakeOpenAIServer, FakeRequest, Fault, Reply

M = "fake-target"
MSGS: list[dict[str, Any]] = [
    {"role": "system", "content": "You are kind."},
    {"role": "user", "content": "hola"},
]


def call(
    rs: RoleSettings,
    messages: list[dict[str, Any]] | None = None,
    *,
    seed: int | None = 7,
    cache: Cache | None = None,
    role: str = "target",
    **kw: Any,
) -> Completion:
    return asyncio.run(
        complete(
            role,
            rs,
            messages if messages is not None else MSGS,
            seed=seed,
            cache=cache,
            cache_extra=kw.pop("cache_extra", {"run": 0}),
            **kw,
        )
    )


def test_success_records_content_usage_fingerprint_and_sends_params(fake_openai: FakeOpenAIServer) -> None:
    fake_openai.script(M, "Aquí estoy contigo.")
    rs = fake_openai.role_settings(M, temperature=0.3, max_tokens=200, extra={"top_p": 0.9})
    c = call(rs)
    assert c.content == "Aquí estoy contigo."
    assert (c.finish_reason, c.model, c.system_fingerprint) == ("stop", M, "fp_empath_fake")
    assert c.usage.prompt_tokens == 4 and c.usage.completion_tokens == 3
    assert c.cost_usd is None  # not in litellm's cost map: unknown, never a guess
    assert (c.cache, c.attempts, c.events, c.filtered) == ("off", 1, (), False)
    body = fake_openai.requests[0].body
    assert body is not None
    assert (body["temperature"], body["max_tokens"], body["top_p"], body["seed"]) == (0.3, 200, 0.9, 7)
    assert body["messages"] == MSGS


def test_seed_is_not_sent_when_disabled(fake_openai: FakeOpenAIServer) -> None:
    fake_openai.on(M, "ok")
    call(fake_openai.role_settings(M, send_seed=False))
    call(fake_openai.role_settings(M), seed=None)
    assert all("seed" not in (r.body or {}) for r in fake_openai.requests)


def test_cost_from_litellm_cost_map(fake_openai: FakeOpenAIServer) -> None:
    """A model litellm prices (served by the fake): cost follows the token counts."""
    fake_openai.script(
        "gpt-4o-mini",
        Reply("a", usage={"prompt_tokens": 1000, "completion_tokens": 100}),
        Reply("b", usage={"prompt_tokens": 2000, "completion_tokens": 200}),
    )
    rs = fake_openai.role_settings("gpt-4o-mini")
    one, two = call(rs), call(rs)
    assert one.cost_usd is not None and one.cost_usd > 0
    assert two.cost_usd == pytest.approx(2 * one.cost_usd)


@pytest.mark.parametrize(
    ("fault", "kind"),
    [
        (Fault.rate_limit(), "rate_limit"),
        (Fault.server_error(500), "server"),
        (Fault.server_error(503), "server"),
        (Fault.malformed(), "server"),
        (Fault.disconnect(), "server"),
    ],
)
def test_retryable_failures_are_retried(fake_openai: FakeOpenAIServer, fault: Fault, kind: str) -> None:
    fake_openai.script(M, fault, fault, "finally")
    c = call(fake_openai.role_settings(M, max_retries=3))
    assert c.content == "finally"
    assert c.attempts == 3
    assert [e.kind for e in c.events] == ["retry", "retry"]
    assert c.events[0].detail["attempt"] == 1 and c.events[0].role == "target"
    assert c.events[0].detail["kind"] in (kind, "connection")
    assert len(fake_openai.requests) == 3


def test_timeout_is_retried(fake_openai: FakeOpenAIServer) -> None:
    fake_openai.script(M, Fault.timeout(5), "after the timeout")
    t0 = time.perf_counter()
    c = call(fake_openai.role_settings(M, timeout_s=0.5, max_retries=2))
    assert c.content == "after the timeout"
    assert c.events[0].detail["kind"] == "timeout"
    assert time.perf_counter() - t0 < 4


def test_connection_refused_is_retried_then_raised() -> None:
    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    rs = RoleSettings(
        model="openai/x",
        api_base=f"http://127.0.0.1:{port}/v1",
        api_key=SecretStr("sk-fake"),
        max_retries=2,
        retry_base_delay_s=0.01,
        timeout_s=2,
    )
    with pytest.raises(ProviderError) as info:
        call(rs)
    assert info.value.kind in ("connection", "server") and info.value.retryable
    assert "after 3 attempts" in str(info.value)


def test_retries_are_bounded(fake_openai: FakeOpenAIServer) -> None:
    fake_openai.on(M, Fault.server_error(500))
    with pytest.raises(ProviderError) as info:
        call(fake_openai.role_settings(M, max_retries=2))
    assert (info.value.kind, info.value.retryable, info.value.status_code) == ("server", True, 500)
    assert len(fake_openai.requests) == 3


@pytest.mark.parametrize(
    ("fault", "kind"),
    [
        (Fault.auth(), "authentication"),
        (Fault.bad_request(), "bad_request"),
        (Fault.context_exceeded(), "context_exceeded"),
        (Fault.content_policy(), "content_policy"),
        (
            Fault.http_error(404, "The model `fake-target` does not exist", code="model_not_found"),
            "not_found",
        ),
    ],
)
def test_non_retryable_failures_are_reported_as_what_they_are(
    fake_openai: FakeOpenAIServer, fault: Fault, kind: str
) -> None:
    fake_openai.script(M, fault)
    with pytest.raises(ProviderError) as info:
        call(fake_openai.role_settings(M, max_retries=5))
    assert info.value.kind == kind
    assert not info.value.retryable
    assert len(fake_openai.requests) == 1


def test_content_filter_is_a_filtered_completion(fake_openai: FakeOpenAIServer) -> None:
    fake_openai.script(M, Fault.content_filter())
    c = call(fake_openai.role_settings(M))
    assert c.filtered and c.finish_reason == "content_filter"
    assert not c.content


def test_truncated_reply_keeps_finish_reason(fake_openai: FakeOpenAIServer) -> None:
    fake_openai.script(M, Fault.truncated("I hear how"))
    c = call(fake_openai.role_settings(M))
    assert c.truncated and c.content == "I hear how" and not c.filtered


def test_messages_are_normalised_before_sending(fake_openai: FakeOpenAIServer) -> None:
    fake_openai.on(M, "ok")
    msgs = [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "one"},
        {"role": "assistant", "content": ""},
        {"role": "user", "content": "two"},
    ]
    c = call(fake_openai.role_settings(M, system_role=False), msgs)
    sent = fake_openai.requests[0].messages
    assert sent == [{"role": "user", "content": "Be brief.\n\none\n\ntwo"}]
    assert c.system_folded
    assert [e.kind for e in c.events] == ["system_folded"]


def test_opening_user_turn_added_for_models_that_need_one(fake_openai: FakeOpenAIServer) -> None:
    fake_openai.on("claude-proxy", "ok")
    fake_openai.on(M, "ok")
    msgs = [
        {"role": "system", "content": "Be brief."},
        {"role": "assistant", "content": "Hi, I'm the bot."},
        {"role": "user", "content": "hey"},
    ]
    call(fake_openai.role_settings("claude-proxy"), msgs)
    assert [m["role"] for m in fake_openai.requests[0].messages] == ["system", "user", "assistant", "user"]
    call(fake_openai.role_settings(M), msgs, cache_extra={})
    assert [m["role"] for m in fake_openai.requests[1].messages] == ["system", "assistant", "user"]


def test_response_format_is_passed_and_schema_support_is_reported(fake_openai: FakeOpenAIServer) -> None:
    fake_openai.on(M, '{"ok": true}')
    fmt = {"type": "json_schema", "json_schema": {"name": "v", "schema": {"type": "object"}}}
    c = call(fake_openai.role_settings(M), response_format=fmt, role="judge")
    assert fake_openai.requests[0].body is not None
    assert fake_openai.requests[0].body["response_format"] == fmt
    assert c.mode == "json_schema" and c.role == "judge"
    assert supports_json_schema("openai/gpt-4o-mini") is True
    assert supports_json_schema("openai/fake-judge") is False
    assert supports_json_schema(None) is False


def test_cache_hit_makes_no_call_and_keys_cover_seed_and_run(
    fake_openai: FakeOpenAIServer, tmp_path: Path
) -> None:
    fake_openai.on(M, lambda r: f"reply {len(fake_openai.requests)}")
    rs = fake_openai.role_settings(M)
    cache = Cache(tmp_path)
    first = call(rs, cache=cache)
    again = call(rs, cache=cache)
    assert (first.cache, again.cache) == ("miss", "hit")
    assert again.content == first.content and again.cost_usd == 0.0 and again.attempts == 0
    assert len(fake_openai.requests) == 1
    assert call(rs, cache=cache, seed=8).cache == "miss"
    assert call(rs, cache=cache, cache_extra={"run": 1}).cache == "miss"
    assert call(rs, cache=cache, role="auditor").cache == "miss"
    assert call(fake_openai.role_settings(M, temperature=1.0), cache=cache).cache == "miss"
    assert len(fake_openai.requests) == 5
    refresh = call(rs, cache=Cache(tmp_path, mode="refresh"))
    assert refresh.cache == "miss" and len(fake_openai.requests) == 6
    assert call(rs, cache=cache).content == refresh.content  # refresh overwrote the entry
    assert call(rs, cache=Cache(tmp_path / "off", mode="off")).cache == "off"
    assert not (tmp_path / "off").exists()


def test_cache_extra_cannot_redefine_client_parts(fake_openai: FakeOpenAIServer, tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="redefine"):
        call(fake_openai.role_settings(M), cache=Cache(tmp_path), cache_extra={"seed": 1})


def test_api_key_never_reaches_cache_or_errors(
    fake_openai: FakeOpenAIServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    planted = "sk-planted-key-0123456789abcdef"
    monkeypatch.setenv("OPENAI_API_KEY", planted)
    fake_openai.script(M, "fine", Fault.auth(f"Incorrect API key provided: {planted}"))
    rs = fake_openai.role_settings(M, api_key=SecretStr(planted))
    assert planted not in repr(rs) and planted not in rs.model_dump_json()
    call(rs, cache=Cache(tmp_path))
    with pytest.raises(ProviderError) as info:
        call(rs, cache=Cache(tmp_path), seed=99)
    assert planted not in str(info.value)
    for f in tmp_path.rglob("*"):
        if f.is_file():
            assert planted not in f.read_text(encoding="utf-8")


def test_an_echoed_request_header_is_redacted_only_when_it_is_a_credential(
    fake_openai: FakeOpenAIServer,
) -> None:
    conversation, token = "cs-detect-mx-dormir-r0", "tok-planted-0123456789"
    body = (f"unsupported header x-stainless-read-timeout; X-Empath-Conversation-Id: {conversation}; "
            f"Authorization: Bearer {token}")
    fake_openai.script(M, Fault.http_error(400, body))
    headers = {"X-Empath-Conversation-Id": conversation, "Authorization": f"Bearer {token}"}
    with pytest.raises(ProviderError) as info:
        call(fake_openai.role_settings(M, max_retries=3), headers=headers)
    assert info.value.kind == "bad_request" and not info.value.retryable  # a 400 is not a timeout
    assert len(fake_openai.requests) == 1
    assert conversation in str(info.value)  # the conversation id is no secret
    assert token not in str(info.value) and "<redacted>" in str(info.value)


def test_per_model_concurrency_limit(fake_openai: FakeOpenAIServer) -> None:
    lock = threading.Lock()
    state = {"now": 0, "peak": 0}

    def slow(req: FakeRequest) -> str:
        with lock:
            state["now"] += 1
            state["peak"] = max(state["peak"], state["now"])
        time.sleep(0.15)
        with lock:
            state["now"] -= 1
        return "ok"

    fake_openai.on(M, slow)
    rs = fake_openai.role_settings(M, concurrency=2)

    async def many() -> list[Completion]:
        return list(
            await asyncio.gather(
                *(complete("target", rs, MSGS, seed=i, cache=None, cache_extra={}) for i in range(8))
            )
        )

    assert len(asyncio.run(many())) == 8
    assert state["peak"] == 2


def test_custom_provider_uses_the_same_path_and_cache(tmp_path: Path) -> None:
    seen: list[dict[str, Any]] = []

    def echo(
        model: str,
        messages: list[dict[str, Any]],
        *,
        temperature: float | None,
        max_tokens: int | None,
        seed: int | None,
    ) -> dict[str, Any]:
        seen.append({"model": model, "seed": seed, "temperature": temperature})
        return {
            "content": f"echo {messages[-1]['content']}",
            "finish_reason": "stop",
            "prompt_tokens": 3,
            "completion_tokens": 2,
        }

    register_chat_provider("echotest", echo)
    rs = RoleSettings(model="echotest/tiny", temperature=0.2, retry_base_delay_s=0.01)
    cache = Cache(tmp_path)
    c = call(rs, cache=cache, seed=42)
    assert c.content == "echo hola" and c.cost_usd is None and c.cache == "miss"
    assert c.usage.prompt_tokens == 3
    assert seen == [{"model": "tiny", "seed": 42, "temperature": 0.2}]
    assert call(rs, cache=cache, seed=42).cache == "hit"
    assert len(seen) == 1


def test_custom_provider_errors_are_classified() -> None:
    def broken(model: str, messages: list[dict[str, Any]], **kw: Any) -> dict[str, Any]:
        raise RuntimeError("maximum context length exceeded for tiny model")

    register_chat_provider("brokentest", broken)
    with pytest.raises(ProviderError) as info:
        call(RoleSettings(model="brokentest/tiny", retry_base_delay_s=0.01))
    assert info.value.kind == "context_exceeded"


def test_bad_calls_are_rejected_before_any_request() -> None:
    with pytest.raises(ValueError, match="no model"):
        call(RoleSettings())
    with pytest.raises(ValueError, match="role"):
        call(RoleSettings(model="openai/x"), role="narrator")


def test_backoff_is_exponential_with_full_jitter() -> None:
    import random

    rs = RoleSettings(retry_base_delay_s=1.0, retry_max_delay_s=5.0)
    rng = random.Random(0)
    for attempt, cap in [(0, 1.0), (1, 2.0), (2, 4.0), (3, 5.0), (6, 5.0)]:
        delays = [backoff_delay(attempt, rs, rng) for _ in range(200)]
        assert min(delays) >= 0 and max(delays) <= cap
        assert max(delays) > cap * 0.8  # spread over the whole interval


def test_an_openai_request_is_built_in_the_loop_thread(
    fake_openai: FakeOpenAIServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    main = sys.modules[litellm_module().__name__ + ".main"]
    built_in: list[str] = []
    completion = main.completion

    def recording(*args: Any, **kwargs: Any) -> Any:
        built_in.append(threading.current_thread().name)
        return completion(*args, **kwargs)

    monkeypatch.setattr(main, "completion", recording)
    monkeypatch.setattr(loop, "_warmed", set())
    fake_openai.on(M, "Aquí estoy.")
    rs = fake_openai.role_settings(M)

    async def two_calls() -> list[str | None]:
        return [(await complete("target", rs, MSGS, seed=s, cache=None, cache_extra={"run": 0})).content
                for s in (1, 2)]

    assert run_calls(two_calls()) == ["Aquí estoy.", "Aquí estoy."]
    assert built_in[0] != "MainThread" and built_in[1] == "MainThread"  # the first warms up in a worker


def test_a_fallback_to_a_registered_provider_is_built_in_a_worker(monkeypatch: pytest.MonkeyPatch) -> None:
    main = sys.modules[litellm_module().__name__ + ".main"]
    built_in: dict[str, str] = {}
    completion = main.completion

    def recording(*args: Any, **kwargs: Any) -> Any:
        built_in[kwargs["model"]] = threading.current_thread().name
        return completion(*args, **kwargs)

    def answer(model: str, messages: list[dict[str, Any]], **kw: Any) -> dict[str, Any]:
        return {"content": "ok", "finish_reason": "stop", "prompt_tokens": 1, "completion_tokens": 1}

    register_chat_provider("fallbacktest", answer)
    monkeypatch.setattr(main, "completion", recording)
    monkeypatch.setattr(loop, "_warmed", {"openai"})  # the primary's requests are built inline
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        closed = s.getsockname()[1]
    rs = RoleSettings(model="openai/x", api_base=f"http://127.0.0.1:{closed}/v1", api_key=SecretStr("sk-x"),
                      max_retries=0, extra={"fallbacks": ["fallbacktest/tiny"]})
    assert run_calls(complete("target", rs, MSGS, seed=1, cache=None, cache_extra={"run": 0})).content == "ok"
    assert built_in["openai/x"] == "MainThread"
    assert built_in["fallbacktest/tiny"] != "MainThread"  # judged by its own model: registered


def test_a_registered_name_is_never_a_listed_provider(monkeypatch: pytest.MonkeyPatch) -> None:
    from empath_gate.llm import client

    client._provider_of.cache_clear()
    assert client._provider_of("groq/llama-3") == "groq"
    monkeypatch.setitem(client._providers, "groq", lambda *a, **k: {})
    client._provider_of.cache_clear()
    try:
        assert client._provider_of("groq/llama-3") is None  # its function may block: a worker thread
    finally:
        monkeypatch.undo()
        client._provider_of.cache_clear()
