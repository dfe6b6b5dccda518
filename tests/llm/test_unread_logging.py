"""The client's calls skip litellm's success logging only while nothing reads it."""

from __future__ import annotations

import asyncio
import sys
import types
from collections.abc import Mapping
from typing import Any

import pytest

from empath_gate.llm import unread_logging
from empath_gate.llm.client import complete, litellm_module, register_chat_provider
from empath_gate.llm.unread_logging import (
    CALLBACK_LISTS,
    checked_release,
    installed_release,
    logging_read,
    skip_unread_logging,
)
from empath_gate.testing import FakeOpenAIServer, Fault

M = "gpt-4o-mini"  # priced in litellm's cost map: the cost must survive the skipped logging
MSGS = [{"role": "user", "content": "hola"}]

pytestmark = pytest.mark.skipif(
    not checked_release(installed_release()), reason="a litellm outside CHECKED_RELEASES: nothing is skipped"
)


@pytest.fixture
def lib(monkeypatch: pytest.MonkeyPatch) -> Any:
    """litellm with every callback list fresh and empty; litellm copies a registered callback
    into several lists on the next call, and the originals come back after the test."""
    module = litellm_module()
    for name in CALLBACK_LISTS:
        monkeypatch.setattr(module, name, [], raising=False)
    return module


@pytest.fixture
def scheduled(lib: Any, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The models of the calls for which litellm schedules its success logging (synchronously,
    in the call's own wrapper: litellm 1.110's ``utils._schedule_async_success_logging``)."""
    seen: list[str] = []
    original = lib.utils._schedule_async_success_logging

    def spy(logging_obj: Any, *args: Any, **kwargs: Any) -> None:
        seen.append(str(logging_obj.model))
        original(logging_obj, *args, **kwargs)

    monkeypatch.setattr(lib.utils, "_schedule_async_success_logging", spy)
    return seen


def _recorder(received: list[Any]) -> Any:
    from litellm.integrations.custom_logger import CustomLogger

    class Recorder(CustomLogger):  # type: ignore[misc]
        async def async_log_success_event(
            self, kwargs: Any, response_obj: Any, start_time: Any, end_time: Any
        ) -> None:
            received.append(kwargs.get("model"))

    return Recorder()


async def _wait_for(received: list[Any], want: int) -> None:
    """Let litellm's background logging worker run (up to 5 s) until ``received`` has ``want``."""
    for _ in range(500):
        if len(received) >= want:
            return
        await asyncio.sleep(0.01)


def test_client_calls_skip_the_logging_and_bare_calls_before_and_after_keep_it(
    fake_openai: FakeOpenAIServer, lib: Any, scheduled: list[str]
) -> None:
    fake_openai.on(M, "Aquí estoy.")
    rs = fake_openai.role_settings(M)

    async def bare() -> None:
        await lib.acompletion(
            model=f"openai/{M}", messages=MSGS, api_base=rs.api_base, api_key="sk-x", max_retries=0
        )

    async def calls() -> Any:
        await bare()
        done = await complete("target", rs, MSGS, seed=1, cache=None, cache_extra={})
        after_client = len(scheduled)
        await bare()  # the flag is reset once the client's call is over
        return done, after_client

    done, after_client = asyncio.run(calls())
    assert after_client == 1 and len(scheduled) == 2
    assert done.content == "Aquí estoy." and done.cost_usd is not None and done.cost_usd > 0


def test_a_retried_call_skips_it_and_keeps_its_attempts_and_events(
    fake_openai: FakeOpenAIServer, scheduled: list[str]
) -> None:
    fake_openai.script(M, Fault.server_error(), "Aquí estoy.")
    rs = fake_openai.role_settings(M, max_retries=2)
    done = asyncio.run(complete("target", rs, MSGS, seed=1, cache=None, cache_extra={}))
    assert (done.content, done.attempts) == ("Aquí estoy.", 2)
    assert [e.kind for e in done.events] == ["retry"]
    assert scheduled == []


def test_a_registered_callback_still_receives_every_client_call(
    fake_openai: FakeOpenAIServer, lib: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    received: list[Any] = []
    monkeypatch.setattr(lib, "callbacks", [_recorder(received)])
    fake_openai.on(M, "Aquí estoy.")
    rs = fake_openai.role_settings(M)

    async def two() -> None:
        for seed in (1, 2):
            await complete("target", rs, MSGS, seed=seed, cache=None, cache_extra={})
        await _wait_for(received, 2)

    asyncio.run(two())
    assert len(received) == 2


def test_a_registered_providers_own_litellm_calls_keep_their_callbacks(
    fake_openai: FakeOpenAIServer, lib: Any
) -> None:
    received: list[Any] = []
    fake_openai.on(M, "desde dentro")
    rs = fake_openai.role_settings(M)

    async def relay(model: str, messages: list[dict[str, Any]], **_kw: Any) -> Mapping[str, Any]:
        inner = await lib.acompletion(
            model=f"openai/{M}", messages=messages, api_base=rs.api_base, api_key="sk-x", max_retries=0,
            callbacks=[_recorder(received)],
        )
        await _wait_for(received, 1)  # (the outer call may log too: litellm keeps the callback)
        return {"content": inner.choices[0].message.content, "finish_reason": "stop"}

    register_chat_provider("unread-relay", relay)
    outer = rs.model_copy(update={"model": "unread-relay/any", "api_base": None})
    done = asyncio.run(complete("target", outer, MSGS, seed=1, cache=None, cache_extra={}))
    assert done.content == "desde dentro" and M in received  # the inner call was logged


def test_logging_is_read_with_a_callback_a_budget_or_a_callback_argument() -> None:
    quiet = types.SimpleNamespace(callbacks=[], success_callback=[], max_budget=0.0)
    assert not logging_read(quiet, {"model": "openai/x", "messages": []})
    assert logging_read(types.SimpleNamespace(success_callback=["langfuse"]), {})
    assert logging_read(types.SimpleNamespace(_async_failure_callback=[object()]), {})
    assert logging_read(types.SimpleNamespace(max_budget=5.0), {})
    assert logging_read(quiet, {"success_callback": ["langfuse"]})


def test_nothing_is_skipped_on_another_release_or_without_the_flag(
    lib: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    quiet = types.SimpleNamespace()  # (``lib``: litellm imported, its flag's module loaded)
    assert [checked_release(v) for v in ("1.110.2", "1.111.0", "1.74.0", None)] == [True, False, False, False]
    monkeypatch.setattr(unread_logging, "installed_release", lambda: "1.111.0")
    with skip_unread_logging(quiet, {}) as skipped:
        assert skipped is False
    monkeypatch.setattr(unread_logging, "installed_release", lambda: "1.110.2")
    with skip_unread_logging(quiet, {}) as skipped:
        assert skipped is True
    name = "litellm._internal_context"
    monkeypatch.setitem(sys.modules, name, types.ModuleType(name))
    with skip_unread_logging(quiet, {}) as skipped:
        assert skipped is False
