"""The fake server's load-dependent limiter: a token bucket and a concurrency cap per model."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from concurrent.futures import ThreadPoolExecutor

import pytest

from empath_gate.testing import FakeOpenAIServer
from empath_gate.testing.fake_openai.limiter import ModelLimit, retry_after_headers


def post(server: FakeOpenAIServer, model: str) -> tuple[int, dict[str, str]]:
    body = json.dumps({"model": model, "messages": [{"role": "user", "content": "hi"}]}).encode()
    req = urllib.request.Request(
        f"{server.base_url}/chat/completions", data=body, method="POST",
        headers={"Content-Type": "application/json"},
    )
    try:
        with urllib.request.urlopen(req, timeout=5) as resp:
            return resp.status, {k.lower(): v for k, v in resp.headers.items()}
    except urllib.error.HTTPError as exc:
        return exc.code, {k.lower(): v for k, v in exc.headers.items()}


def test_bucket_refuses_above_rate_with_the_wait_to_the_next_token() -> None:
    now = [0.0]
    lim = ModelLimit(rps=2.0, concurrent=10, burst=2.0, clock=lambda: now[0])
    a, _ = lim.admit()
    b, _ = lim.admit()
    assert a is not None and b is not None
    lim.done(a)
    lim.done(b)
    refused, wait = lim.admit()
    assert refused is None and wait == pytest.approx(0.5)  # 1 token at 2 per second
    now[0] = 0.25
    refused, wait = lim.admit()
    assert refused is None and wait == pytest.approx(0.25)
    now[0] = 0.5
    ok, _ = lim.admit()
    assert ok is not None
    assert (lim.admitted, lim.refused) == (3, 2)


def test_concurrency_cap_refuses_until_a_request_ends() -> None:
    now = [0.0]
    lim = ModelLimit(rps=100.0, concurrent=2, service_s=0.4, clock=lambda: now[0])
    a, _ = lim.admit()
    now[0] = 0.1
    b, _ = lim.admit()
    assert a is not None and b is not None and lim.in_service() == 2
    refused, wait = lim.admit()
    assert refused is None and wait == pytest.approx(0.3)  # the first in service ends at 0.4
    lim.done(a)
    c, _ = lim.admit()
    assert c is not None and lim.in_service() == 2
    with pytest.raises(ValueError):
        ModelLimit(rps=0, concurrent=1)
    with pytest.raises(ValueError):
        ModelLimit(rps=1, concurrent=0)


def test_retry_after_headers_round_up() -> None:
    assert retry_after_headers(0.0123) == {"Retry-After": "1", "retry-after-ms": "13"}
    assert retry_after_headers(2.5) == {"Retry-After": "3", "retry-after-ms": "2500"}


def test_server_answers_429_with_retry_after_above_the_concurrency_cap() -> None:
    with FakeOpenAIServer(latency_s=0.3) as server:
        server.on("m", "fine")
        server.on("free", "fine")
        server.limit("m", rps=1000, concurrent=2)
        with ThreadPoolExecutor(6) as pool:
            results = list(pool.map(lambda _i: post(server, "m"), range(6)))
        codes = sorted(code for code, _h in results)
        assert codes.count(200) >= 2 and codes.count(429) >= 1
        assert set(codes) <= {200, 429}
        for code, headers in results:
            if code == 429:
                assert int(headers["retry-after"]) >= 1
                assert 0 < int(headers["retry-after-ms"]) <= 300
        assert server.throttled == codes.count(429)
        assert post(server, "free")[0] == 200  # other models are not limited


def test_server_answers_429_above_the_rate_and_limits_each_model_apart() -> None:
    with FakeOpenAIServer() as server:
        server.on("*", "fine")
        server.limit("*", rps=1.0, concurrent=10, burst=2)
        first = [post(server, "a")[0] for _ in range(3)]
        assert first == [200, 200, 429]
        code, headers = post(server, "a")
        assert code == 429 and 0 < int(headers["retry-after-ms"]) <= 1000
        assert post(server, "b")[0] == 200  # its own bucket
        assert server.throttled == 2
