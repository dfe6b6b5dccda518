"""The fake OpenAI-compatible server itself, exercised with plain HTTP (urllib), no litellm."""

from __future__ import annotations

import hashlib
import json
import os
import socket
import subprocess
import sys
import textwrap
import time
import urllib.error
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from empath_gate.testing import FakeOpenAIServer, FakeRequest, Fault, Reply


def post(
    server: FakeOpenAIServer,
    body: Any,
    *,
    path: str = "/v1/chat/completions",
    headers: dict[str, str] | None = None,
    timeout: float = 5.0,
) -> tuple[int, bytes]:
    data = body if isinstance(body, bytes) else json.dumps(body).encode()
    req = urllib.request.Request(
        f"http://127.0.0.1:{server.port}{path}",
        data=data,
        method="POST",
        headers={"Content-Type": "application/json", **(headers or {})},
    )
    try:
        with urllib.request.urlopen(req, timeout=timeout) as resp:
            return resp.status, resp.read()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read()


def chat(model: str, text: str = "hello there") -> dict[str, Any]:
    return {
        "model": model,
        "messages": [{"role": "system", "content": "be kind"}, {"role": "user", "content": text}],
    }


def test_reply_shape_usage_and_recorded_request() -> None:
    with FakeOpenAIServer() as server:
        server.script("fake-target", "I am here with you")
        status, raw = post(
            server,
            chat("fake-target", "I cannot sleep at all"),
            headers={"Authorization": "Bearer sk-secret-value", "X-Trace": "t1"},
        )
        assert status == 200
        body = json.loads(raw)
        assert body["choices"][0]["message"] == {"role": "assistant", "content": "I am here with you"}
        assert body["choices"][0]["finish_reason"] == "stop"
        # usage = word counts: "be kind" (2) + "I cannot sleep at all" (5); reply 5 words
        # (a first sight of a short system prompt: nothing cached)
        assert body["usage"] == {"prompt_tokens": 7, "completion_tokens": 5, "total_tokens": 12,
                                 "prompt_tokens_details": {"cached_tokens": 0}}
        assert body["system_fingerprint"] == "fp_empath_fake"
        req = server.requests[0]
        assert req.model == "fake-target" and req.path == "/v1/chat/completions"
        assert req.last_user == "I cannot sleep at all"
        assert req.headers["x-trace"] == "t1"
        assert "authorization" not in req.headers
        assert "sk-secret-value" not in repr(req)
        assert req.authorization_sha256 == hashlib.sha256(b"Bearer sk-secret-value").hexdigest()


def test_routes_by_model_wildcard_and_callable() -> None:
    with FakeOpenAIServer() as server:
        server.on(
            "fake-auditor", lambda r: Reply(content=f"echo {r.last_user}", usage={"prompt_tokens": 100})
        )
        server.on("*", "anyone")
        _, a = post(server, chat("fake-auditor", "ping"), path="/chat/completions")
        _, b = post(server, chat("something-else"))
        assert json.loads(a)["choices"][0]["message"]["content"] == "echo ping"
        assert json.loads(a)["usage"]["prompt_tokens"] == 100
        assert json.loads(b)["choices"][0]["message"]["content"] == "anyone"
        assert [r.model for r in server.requests] == ["fake-auditor", "something-else"]
        assert server.requests_for("fake-auditor")[0].path == "/chat/completions"


def test_script_is_served_in_order_then_fails_loudly() -> None:
    server = FakeOpenAIServer().start()
    try:
        server.script("fake-target", "one", "two")
        replies = [post(server, chat("fake-target")) for _ in range(3)]
        assert [json.loads(r[1])["choices"][0]["message"]["content"] for r in replies[:2]] == ["one", "two"]
        assert replies[2][0] == 500
        assert b"exhausted" in replies[2][1]
        assert server.pending("fake-target") == 0
    finally:
        server.close()
    with pytest.raises(AssertionError, match="exhausted"):
        server.check()


def test_unknown_model_is_a_problem_raised_on_exit() -> None:
    with (
        pytest.raises(AssertionError, match="no reply programmed for model 'nobody'"),
        FakeOpenAIServer() as server,
    ):
        status, _ = post(server, chat("nobody"))
        assert status == 500


@pytest.mark.parametrize(
    ("fault", "status", "code"),
    [
        (Fault.rate_limit(), 429, "rate_limit_exceeded"),
        (Fault.server_error(503), 503, None),
        (Fault.auth(), 401, "invalid_api_key"),
        (Fault.context_exceeded(), 400, "context_length_exceeded"),
        (Fault.content_policy(), 400, "content_policy_violation"),
    ],
)
def test_http_error_faults(fault: Fault, status: int, code: str | None) -> None:
    with FakeOpenAIServer() as server:
        server.script("m", fault)
        got, raw = post(server, chat("m"))
        assert got == status
        assert json.loads(raw)["error"]["code"] == code


def test_content_filter_truncated_and_malformed() -> None:
    with FakeOpenAIServer() as server:
        server.script("m", Fault.content_filter(), Fault.truncated("I hear how"), Fault.malformed())
        f = json.loads(post(server, chat("m"))[1])["choices"][0]
        assert f["finish_reason"] == "content_filter" and f["message"]["content"] == ""
        t = json.loads(post(server, chat("m"))[1])["choices"][0]
        assert t["finish_reason"] == "length" and t["message"]["content"] == "I hear how"
        status, raw = post(server, chat("m"))
        assert status == 200
        with pytest.raises(json.JSONDecodeError):
            json.loads(raw)


def test_timeout_fault_outlasts_the_client_and_close_wakes_it() -> None:
    server = FakeOpenAIServer().start()
    server.script("m", Fault.timeout(30))
    t0 = time.perf_counter()
    with pytest.raises((TimeoutError, socket.timeout, urllib.error.URLError)):
        post(server, chat("m"), timeout=0.3)
    assert time.perf_counter() - t0 < 2
    t1 = time.perf_counter()
    server.close()
    assert time.perf_counter() - t1 < 5


def test_disconnect_fault_closes_without_answer() -> None:
    with FakeOpenAIServer() as server:
        server.script("m", Fault.disconnect())
        with pytest.raises((urllib.error.URLError, ConnectionError, OSError)):
            post(server, chat("m"))


def test_latency_and_many_concurrent_connections() -> None:
    """128 requests, each held 0.5 s by the server, finish together (not one after another)."""
    with FakeOpenAIServer(latency_s=0.5) as server:
        server.on("m", lambda r: f"reply {r.last_user}")
        t0 = time.perf_counter()
        with ThreadPoolExecutor(max_workers=128) as pool:
            results = list(pool.map(lambda i: post(server, chat("m", str(i)), timeout=20), range(128)))
        wall = time.perf_counter() - t0
        assert all(status == 200 for status, _ in results)
        assert {json.loads(raw)["choices"][0]["message"]["content"] for _, raw in results} == {
            f"reply {i}" for i in range(128)
        }
        assert wall < 5.0, f"128 concurrent requests took {wall:.1f}s: the server is not concurrent"
        assert len(server.requests) == 128


def test_streaming_and_non_json_bodies_are_rejected() -> None:
    with FakeOpenAIServer() as server:
        assert post(server, {"model": "m", "messages": [], "stream": True})[0] == 400
        assert post(server, b"not json")[0] == 400
        assert server.requests[1].body is None


def test_request_helpers() -> None:
    req = FakeRequest(
        path="/v1/chat/completions",
        body={"messages": [{"role": "user", "content": "a"}, {"role": "assistant", "content": "b"}]},
        headers={},
        model="m",
        received_at=0.0,
    )
    assert req.last_user == "a"
    assert len(req.messages) == 2


def test_role_settings_point_litellm_at_the_server() -> None:
    with FakeOpenAIServer() as server:
        rs = server.role_settings("fake-judge", temperature=0.0)
        assert rs.model == "openai/fake-judge"
        assert rs.api_base == server.base_url
        assert rs.api_key is not None
        assert "api_key" not in rs.model_dump()
        assert rs.temperature == 0.0


def test_fixture_plugin_is_usable_from_a_users_conftest(tmp_path: Path) -> None:
    """The documented setup: ``pytest_plugins = ["empath_gate.testing.fixtures"]``."""
    (tmp_path / "conftest.py").write_text('pytest_plugins = ["empath_gate.testing.fixtures"]\n')
    (tmp_path / "test_user.py").write_text(
        textwrap.dedent("""
        import json, urllib.request

        def test_uses_fixture(fake_openai):
            fake_openai.script("fake-target", "hi from the fake")
            req = urllib.request.Request(
                fake_openai.base_url + "/chat/completions",
                data=json.dumps({"model": "fake-target",
                                 "messages": [{"role": "user", "content": "x"}]}).encode(),
                headers={"Content-Type": "application/json"}, method="POST")
            with urllib.request.urlopen(req) as resp:
                assert json.loads(resp.read())["choices"][0]["message"]["content"] == "hi from the fake"

        def test_exhausted_script_fails_the_test(fake_openai):
            fake_openai.script("fake-target")
            req = urllib.request.Request(
                fake_openai.base_url + "/chat/completions",
                data=json.dumps({"model": "fake-target", "messages": []}).encode(),
                headers={"Content-Type": "application/json"}, method="POST")
            try:
                urllib.request.urlopen(req)
            except Exception:
                pass
    """)
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST_")}
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
            "-p",
            "no:empath_gate",
            str(tmp_path),
        ],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    out = proc.stdout + proc.stderr
    assert "2 passed, 1 error" in out, out
    assert "exhausted" in out
