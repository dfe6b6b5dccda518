"""The client's calls skip litellm's success logging only while nothing reads it."""

from __future__ import annotations

import asyncio
import sys
import types
from typing import Any

import pytest

from empath_gate.llm.client import complete, litellm_module
from empath_gate.llm.unread_logging import logging_read, skip_unread_logging
from empath_gate.testing import FakeOpenAIServer

M = "gpt-4o-mini"  # priced in litellm's cost map: the cost must survive the skipped logging
MSGS = [{"role": "user", "content": "hola"}]


def _count_success_logs(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Record every call of litellm's async success handler (the step the client skips)."""
    from litellm.litellm_core_utils.litellm_logging import Logging

    seen: list[str] = []
    original = Logging.async_success_handler

    def spy(self: Any, *args: Any, **kwargs: Any) -> Any:
        seen.append(str(self.model))
        return original(self, *args, **kwargs)

    monkeypatch.setattr(Logging, "async_success_handler", spy)
    return seen


async def _settle(seen: list[Any], want: int) -> None:
    """Let litellm's background logging worker run (up to 3 s) until ``seen`` has ``want`` items."""
    for _ in range(300):
        if len(seen) >= want:
            break
        await asyncio.sleep(0.01)
    await asyncio.sleep(0.05)  # and a moment more, for one that should not come


def test_client_calls_skip_success_logging_that_nothing_reads(
    fake_openai: FakeOpenAIServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    fake_openai.on(M, "Aquí estoy.")
    lib = litellm_module()
    seen = _count_success_logs(monkeypatch)
    rs = fake_openai.role_settings(M)

    async def both() -> Any:
        await lib.acompletion(
            model=f"openai/{M}", messages=MSGS, api_base=rs.api_base, api_key="sk-x", max_retries=0
        )
        await _settle(seen, 1)
        bare = len(seen)
        done = await complete("target", rs, MSGS, seed=1, cache=None, cache_extra={})
        await _settle(seen, bare + 1)
        return bare, done

    bare, done = asyncio.run(both())
    assert bare == 1  # litellm called directly logs its call: the probe sees the step
    assert seen == [seen[0]]  # the client's call did not
    assert done.content == "Aquí estoy." and done.cost_usd is not None and done.cost_usd > 0


def test_a_registered_callback_still_receives_every_client_call(
    fake_openai: FakeOpenAIServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    from litellm.integrations.custom_logger import CustomLogger

    received: list[Any] = []

    class Recorder(CustomLogger):  # type: ignore[misc]
        async def async_log_success_event(
            self, kwargs: Any, response_obj: Any, start_time: Any, end_time: Any
        ) -> None:
            received.append(response_obj)

    lib = litellm_module()
    monkeypatch.setattr(lib, "callbacks", [Recorder()])
    fake_openai.on(M, "Aquí estoy.")
    rs = fake_openai.role_settings(M)

    async def one() -> None:
        await complete("target", rs, MSGS, seed=1, cache=None, cache_extra={})
        await _settle(received, 1)

    asyncio.run(one())
    assert len(received) == 1


def test_logging_is_read_with_a_callback_a_budget_or_a_callback_argument() -> None:
    quiet = types.SimpleNamespace(callbacks=[], success_callback=[], max_budget=0.0)
    assert not logging_read(quiet, {"model": "openai/x", "messages": []})
    assert logging_read(types.SimpleNamespace(success_callback=["langfuse"]), {})
    assert logging_read(types.SimpleNamespace(_async_failure_callback=[object()]), {})
    assert logging_read(types.SimpleNamespace(max_budget=5.0), {})
    assert logging_read(quiet, {"success_callback": ["langfuse"]})


def test_nothing_is_skipped_on_a_litellm_without_the_flag(monkeypatch: pytest.MonkeyPatch) -> None:
    quiet = types.SimpleNamespace()
    with skip_unread_logging(quiet, {}) as skipped:
        assert skipped is (sys.modules.get("litellm._internal_context") is not None)
    name = "litellm._internal_context"
    monkeypatch.setitem(sys.modules, name, types.ModuleType(name))
    with skip_unread_logging(quiet, {}) as skipped:
        assert skipped is False
    with skip_unread_logging(types.SimpleNamespace(callbacks=[object()]), {}) as skipped:
        assert skipped is False
