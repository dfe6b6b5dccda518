"""The circuit breaker (fail fast on a dead provider), Retry-After, and the error classes behind
them: a refused connection, a DNS failure and 401/403 open it; 429 and 5xx never do."""

from __future__ import annotations

import asyncio
import email.utils
import socket
import time
from typing import Any

import pytest
from pydantic import SecretStr

from empath_gate.errors import ProviderError, ProviderUnavailable
from empath_gate.llm.breaker import OPEN_AFTER, Breaker
from empath_gate.llm.client import complete
from empath_gate.llm.retry import PACED_RETRIES, PACED_WAIT_S, RETRY_AFTER_CAP_S, retry_after_s
from empath_gate.settings import RoleSettings
from empath_gate.testing import FakeOpenAIServer, Fault

M = "fake-target"
MSGS: list[dict[str, Any]] = [{"role": "user", "content": "hola"}]


def closed_port() -> int:
    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


async def _calls(rs: RoleSettings, n: int) -> list[BaseException | None]:
    """``n`` sequential calls in one event loop (one run); the exception of each, or None."""
    out: list[BaseException | None] = []
    for i in range(n):
        try:
            await complete("target", rs, MSGS, seed=i, cache=None, cache_extra={"run": i})
            out.append(None)
        except ProviderError as exc:
            out.append(exc)
    return out


def test_five_refused_connections_open_the_breaker_and_later_calls_fail_at_once() -> None:
    port = closed_port()
    rs = RoleSettings(model="openai/x", api_base=f"http://127.0.0.1:{port}/v1?api_key=sekret1",
                      api_key=SecretStr("sk-fake"), max_retries=0, timeout_s=2)
    errors = asyncio.run(_calls(rs, OPEN_AFTER + 3))
    first, later = errors[: OPEN_AFTER - 1], errors[OPEN_AFTER - 1 :]
    assert all(type(e) is ProviderError and e.kind == "connection" for e in first)
    assert all(isinstance(e, ProviderUnavailable) for e in later)
    e = later[-1]
    assert isinstance(e, ProviderUnavailable)
    assert e.cause == "connection refused" and e.provider == f"openai at http://127.0.0.1:{port}/v1"
    assert f"provider openai at http://127.0.0.1:{port}/v1 is unavailable" in str(e)
    assert "connection refused" in str(e) and not e.retryable
    assert "sekret1" not in str(e)


def test_credentials_in_the_url_fail_once_per_call_and_open_it() -> None:
    rs = RoleSettings(model="openai/x", api_base=f"http://user:pw123456@127.0.0.1:{closed_port()}/v1",
                      api_key=SecretStr("sk-fake"), max_retries=3, retry_base_delay_s=0.01, timeout_s=2)
    errors = asyncio.run(_calls(rs, OPEN_AFTER + 1))
    assert all(isinstance(e, ProviderError) and e.kind == "authentication" and not e.retryable
               for e in errors)
    assert all(e is not None and "after" not in str(e).split("(")[0] for e in errors)  # never retried
    last = errors[-1]
    assert isinstance(last, ProviderUnavailable) and last.cause == "credentials in the URL"
    assert "pw123456" not in str(last)


def test_a_refused_connection_is_a_connection_error_not_a_server_error() -> None:
    rs = RoleSettings(model="openai/x", api_base=f"http://127.0.0.1:{closed_port()}/v1",
                      api_key=SecretStr("sk-fake"), max_retries=0, timeout_s=2)
    (err,) = asyncio.run(_calls(rs, 1))
    assert isinstance(err, ProviderError) and err.kind == "connection" and err.retryable


def test_the_breaker_opens_across_retries_of_one_call() -> None:
    rs = RoleSettings(model="openai/x", api_base=f"http://127.0.0.1:{closed_port()}/v1",
                      api_key=SecretStr("sk-fake"), max_retries=10, retry_base_delay_s=0.01, timeout_s=2)
    (err,) = asyncio.run(_calls(rs, 1))
    assert isinstance(err, ProviderUnavailable)  # after 5 attempts, not 11


@pytest.mark.parametrize(("fault", "cause"), [(Fault.auth(), "HTTP 401"),
                                              (Fault.http_error(403, "forbidden"), "HTTP 403")])
def test_401_and_403_open_it_and_are_never_retried(
    fake_openai: FakeOpenAIServer, fault: Fault, cause: str
) -> None:
    fake_openai.on(M, fault)
    rs = fake_openai.role_settings(M, max_retries=3, retry_base_delay_s=0.01)
    errors = asyncio.run(_calls(rs, OPEN_AFTER + 2))
    assert len(fake_openai.requests) == OPEN_AFTER  # one attempt per call, none after it opened
    assert all(isinstance(e, ProviderError) and e.kind == "authentication" for e in errors)
    assert isinstance(errors[-1], ProviderUnavailable) and errors[-1].cause == cause


@pytest.mark.parametrize("fault", [Fault.rate_limit(), Fault.server_error(500), Fault.server_error(503)])
def test_429_and_5xx_never_open_it(fake_openai: FakeOpenAIServer, fault: Fault) -> None:
    fake_openai.on(M, fault)
    rs = fake_openai.role_settings(M, max_retries=1, retry_base_delay_s=0.01, retry_max_delay_s=0.02)
    errors = asyncio.run(_calls(rs, OPEN_AFTER + 3))
    assert len(fake_openai.requests) == 2 * (OPEN_AFTER + 3)
    assert all(type(e) is ProviderError and e.retryable for e in errors)


def test_a_success_among_the_first_calls_disarms_it() -> None:
    b = Breaker("p")
    b.record("connection refused", "target")
    b.record(None, "target")
    for _ in range(OPEN_AFTER * 2):
        b.record("connection refused", "target")
    assert not b.open
    b.check()


def test_retry_after_is_honoured(fake_openai: FakeOpenAIServer) -> None:
    fake_openai.script(M, Fault.http_error(429, "slow down", type="rate_limit_error",
                                           headers={"Retry-After": "1"}), "after the wait")
    rs = fake_openai.role_settings(M, max_retries=2, retry_base_delay_s=0.01, retry_max_delay_s=0.02)
    t0 = time.perf_counter()
    c = asyncio.run(complete("target", rs, MSGS, seed=1, cache=None, cache_extra={"run": 0}))
    waited = time.perf_counter() - t0
    assert c.content == "after the wait" and c.attempts == 2
    assert c.events[0].detail["delay_s"] == 1.0 and c.events[0].detail["kind"] == "rate_limit"
    assert 1.0 <= waited < 5


class _Resp:
    def __init__(self, headers: dict[str, str]) -> None:
        self.headers = headers


class _Err(Exception):
    def __init__(self, headers: dict[str, str]) -> None:
        super().__init__("429")
        self.response = _Resp(headers)


def test_retry_after_forms_and_cap() -> None:
    now = time.time()
    assert retry_after_s(_Err({"retry-after": "2.5"})) == 2.5
    assert retry_after_s(_Err({"retry-after-ms": "1500"})) == 1.5
    date = email.utils.formatdate(now + 30, usegmt=True)
    assert 28 <= (retry_after_s(_Err({"retry-after": date}), now=now) or 0) <= 31
    assert retry_after_s(_Err({"retry-after": "86400"})) == RETRY_AFTER_CAP_S
    assert retry_after_s(_Err({"retry-after": "soon"})) is None
    assert retry_after_s(_Err({})) is None
    wrapped = RuntimeError("wrapper")
    wrapped.__cause__ = _Err({"retry-after": "3"})
    assert retry_after_s(wrapped) == 3.0


def test_a_proxy_502_that_says_connection_refused_is_a_server_error(fake_openai: FakeOpenAIServer) -> None:
    fake_openai.on(M, Fault.server_error(502, "upstream connect error: connection refused"))
    rs = fake_openai.role_settings(M, max_retries=0)
    errors = asyncio.run(_calls(rs, OPEN_AFTER + 1))
    assert all(type(e) is ProviderError and e.kind == "server" for e in errors)


def _paced(seconds: str) -> Fault:
    return Fault.http_error(429, "slow down", type="rate_limit_error", headers={"Retry-After": seconds})


def test_paced_429s_do_not_use_up_the_retries(fake_openai: FakeOpenAIServer) -> None:
    # max_retries 1, yet five 429s asking for a short wait are ridden out (PACED_RETRIES of them)
    fake_openai.script(M, *[_paced("0")] * 5, "got through")
    rs = fake_openai.role_settings(M, max_retries=1, retry_base_delay_s=0.01, retry_max_delay_s=0.02)
    c = asyncio.run(complete("target", rs, MSGS, seed=1, cache=None, cache_extra={"run": 0}))
    assert c.content == "got through" and c.attempts == 6
    assert [e.detail["attempt"] for e in c.events] == [1, 2, 3, 4, 5]


def test_paced_429s_are_bounded_and_long_waits_count(fake_openai: FakeOpenAIServer) -> None:
    rs = fake_openai.role_settings(M, max_retries=1, retry_base_delay_s=0.01, retry_max_delay_s=0.02)
    fake_openai.on(M, _paced("0"))
    with pytest.raises(ProviderError) as info:  # PACED_RETRIES free ones, then max_retries
        asyncio.run(complete("target", rs, MSGS, seed=1, cache=None, cache_extra={"run": 0}))
    assert info.value.kind == "rate_limit"
    assert len(fake_openai.requests) == 1 + PACED_RETRIES + 1
    # a wait over PACED_WAIT_S (a quota, not pacing) and a 429 without Retry-After both count
    for fault in (_paced(str(int(PACED_WAIT_S) + 1)), Fault.rate_limit()):
        fake_openai.requests.clear()
        fake_openai.on(M, fault)
        rs0 = fake_openai.role_settings(M, max_retries=0)
        with pytest.raises(ProviderError):
            asyncio.run(complete("target", rs0, MSGS, seed=1, cache=None, cache_extra={"run": 0}))
        assert len(fake_openai.requests) == 1
