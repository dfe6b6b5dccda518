"""Provider prompt caching: the Anthropic ``cache_control`` mark on the request litellm builds,
and no mark for other providers."""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest
from pydantic import SecretStr

from empath_gate.llm.client import Completion, complete, litellm_module
from empath_gate.llm.prompt_cache import EPHEMERAL, mark_cache_prefix
from empath_gate.settings import RoleSettings
from empath_gate.testing import FakeOpenAIServer

STABLE = "You are an evaluator. Rubric: strict. " * 200  # 1,200 words: above the fake's cache minimum
MESSAGES = [{"role": "system", "content": STABLE}, {"role": "user", "content": "[0] USER: hello"}]


class _AnthropicCapture(BaseHTTPRequestHandler):
    """Just enough of Anthropic's messages API: records each POST body, answers one text block
    with usage that reports a cache read."""

    bodies: list[tuple[str, dict[str, Any]]]

    def do_POST(self) -> None:
        raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        self.server.bodies.append((self.path, json.loads(raw)))  # type: ignore[attr-defined]
        reply = {
            "id": "msg_fake_1", "type": "message", "role": "assistant", "model": "claude-3-5-haiku-20241022",
            "content": [{"type": "text", "text": "ok"}], "stop_reason": "end_turn", "stop_sequence": None,
            "usage": {"input_tokens": 300, "output_tokens": 2, "cache_read_input_tokens": 1200,
                      "cache_creation_input_tokens": 0},
        }
        data = json.dumps(reply).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, format: str, *args: Any) -> None:
        pass


@pytest.fixture
def anthropic_capture() -> Iterator[ThreadingHTTPServer]:
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _AnthropicCapture)
    httpd.bodies = []  # type: ignore[attr-defined]
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield httpd
    finally:
        httpd.shutdown()
        httpd.server_close()


def _anthropic_role(httpd: ThreadingHTTPServer) -> RoleSettings:
    return RoleSettings(
        model="anthropic/claude-3-5-haiku-20241022", api_base=f"http://127.0.0.1:{httpd.server_address[1]}",
        api_key=SecretStr("sk-ant-fake"), max_retries=0, timeout_s=10.0, max_tokens=16,
    )


def test_the_anthropic_request_litellm_builds_marks_the_stable_system_block(
    anthropic_capture: ThreadingHTTPServer,
) -> None:
    role = _anthropic_role(anthropic_capture)
    completion = asyncio.run(complete(
        "judge", role, list(MESSAGES), seed=None, cache=None, cache_extra={}, cache_prefix=True,
    ))
    assert completion.content == "ok"
    [(path, body)] = anthropic_capture.bodies  # type: ignore[attr-defined]
    assert path.endswith("/v1/messages")
    # Anthropic takes the system prompt apart from the messages; the mark rides on its block
    assert body["system"] == [{"type": "text", "text": STABLE, "cache_control": EPHEMERAL}]
    # only the stable block is marked; the conversation follows it unmarked
    assert json.dumps(body).count("cache_control") == 1
    assert "[0] USER: hello" in json.dumps(body["messages"])
    # the cache read litellm maps from Anthropic's usage
    assert completion.usage.cached_prompt_tokens == 1200


def test_without_cache_prefix_the_anthropic_request_is_not_marked(
    anthropic_capture: ThreadingHTTPServer,
) -> None:
    role = _anthropic_role(anthropic_capture)
    asyncio.run(complete("judge", role, list(MESSAGES), seed=None, cache=None, cache_extra={}))
    [(_, body)] = anthropic_capture.bodies  # type: ignore[attr-defined]
    assert "cache_control" not in json.dumps(body)


def test_an_openai_compatible_request_is_sent_unmarked(fake_openai: FakeOpenAIServer) -> None:
    fake_openai.on("judge-x", "ok")
    asyncio.run(complete(
        "judge", fake_openai.role_settings("judge-x"), list(MESSAGES), seed=None, cache=None, cache_extra={},
        cache_prefix=True,
    ))
    [req] = fake_openai.requests
    assert req.messages[0] == {"role": "system", "content": STABLE}


def test_mark_cache_prefix_is_pure_and_only_marks_a_leading_system_string() -> None:
    msgs = [dict(m) for m in MESSAGES]
    marked = mark_cache_prefix(msgs, "anthropic")
    assert marked[0]["content"] == [{"type": "text", "text": STABLE, "cache_control": {"type": "ephemeral"}}]
    assert marked[1] == MESSAGES[1] and msgs == MESSAGES  # input untouched
    assert mark_cache_prefix(msgs, "openai") == MESSAGES
    assert mark_cache_prefix(msgs, None) == MESSAGES
    assert mark_cache_prefix(MESSAGES[1:], "anthropic") == MESSAGES[1:]  # no system message


def _ask(role: RoleSettings, user: str) -> Completion:
    messages = [{"role": "system", "content": STABLE}, {"role": "user", "content": user}]
    return asyncio.run(
        complete("judge", role, messages, seed=None, cache=None, cache_extra={}, cache_prefix=True)
    )


def test_a_repeated_system_prefix_is_reported_cached_and_priced_at_the_cached_input_price(
    fake_openai: FakeOpenAIServer,
) -> None:
    fake_openai.on("gpt-4o-mini", "ok")  # a model litellm's local cost map prices, cached input included
    role = fake_openai.role_settings("gpt-4o-mini")
    first = _ask(role, "[0] USER: hello")
    second = _ask(role, "[0] USER: something else entirely")
    words = len(STABLE.split())
    assert (first.usage.cached_prompt_tokens, second.usage.cached_prompt_tokens) == (0, words)
    price = litellm_module().model_cost["gpt-4o-mini"]
    assert price["cache_read_input_token_cost"] < price["input_cost_per_token"]
    pt, ct = second.usage.prompt_tokens, second.usage.completion_tokens
    assert pt is not None and ct is not None and pt > words
    expected = ((pt - words) * price["input_cost_per_token"] + words * price["cache_read_input_token_cost"]
                + ct * price["output_cost_per_token"])
    assert second.cost_usd == pytest.approx(expected, rel=1e-9)
    uncached = pt * price["input_cost_per_token"] + ct * price["output_cost_per_token"]
    assert second.cost_usd is not None and second.cost_usd < uncached
    assert first.cost_usd == pytest.approx(
        first.usage.prompt_tokens * price["input_cost_per_token"]
        + first.usage.completion_tokens * price["output_cost_per_token"], rel=1e-9)


def test_the_fake_caches_per_model_and_can_be_turned_off(fake_openai: FakeOpenAIServer) -> None:
    fake_openai.on("*", "ok")
    a, b = fake_openai.role_settings("m-a"), fake_openai.role_settings("m-b")
    assert _ask(a, "one").usage.cached_prompt_tokens == 0
    assert _ask(b, "one").usage.cached_prompt_tokens == 0  # another model: its own cache
    fake_openai.prompt_cache = False
    assert _ask(a, "two").usage.cached_prompt_tokens == 0
    fake_openai.prompt_cache = True
    assert _ask(a, "three").usage.cached_prompt_tokens == len(STABLE.split())
    fake_openai.prompt_cache_min_tokens = len(STABLE.split()) + 1  # too short to cache
    assert _ask(a, "four").usage.cached_prompt_tokens == 0
