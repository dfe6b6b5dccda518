"""The run's event loop: a coroutine built in a worker thread for a call Ctrl-C cancelled (what
litellm's ``acompletion`` leaves behind) is closed without a warning, while a coroutine the code
itself forgets to await still warns."""

from __future__ import annotations

import asyncio
import contextlib
import gc
import threading
import time
import warnings
from collections.abc import Callable, Coroutine
from typing import Any

import pytest

from empath_gate.llm.loop import INLINE_PROVIDERS, inline_request_building, run_calls


async def _provider_request() -> str:
    return "reply"


def _completion() -> Coroutine[Any, Any, str]:
    """Like litellm's synchronous ``completion`` for an async call: slow, then a coroutine."""
    time.sleep(0.3)
    return _provider_request()


async def _cancelled_call() -> None:
    loop = asyncio.get_running_loop()
    call = asyncio.ensure_future(loop.run_in_executor(None, _completion))
    await asyncio.sleep(0.05)  # the worker thread is busy building the coroutine
    call.cancel()
    with contextlib.suppress(asyncio.CancelledError):
        await call


def _never_awaited(run: Callable[[Coroutine[Any, Any, None]], None], coro: Coroutine[Any, Any, None]) -> int:
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        run(coro)
        gc.collect()
    return sum("was never awaited" in str(w.message) for w in seen)


def test_a_cancelled_calls_coroutine_is_closed_quietly() -> None:
    assert _never_awaited(asyncio.run, _cancelled_call()) == 1  # what a plain loop prints
    assert _never_awaited(run_calls, _cancelled_call()) == 0


def test_a_forgotten_coroutine_still_warns() -> None:
    async def forgets() -> None:
        _provider_request()  # a bug: never awaited

    assert _never_awaited(run_calls, forgets()) == 1


def test_results_and_errors_pass_through() -> None:
    async def answer() -> str:
        return await asyncio.get_running_loop().run_in_executor(None, lambda: "ok")

    assert run_calls(answer()) == "ok"

    async def fails() -> None:
        raise ValueError("boom")

    with pytest.raises(ValueError, match="boom"):
        run_calls(fails())


async def _builder_thread(provider: str | None) -> int:
    """The thread that runs a work item litellm would hand to the default executor, inside
    ``inline_request_building(provider)``."""
    with inline_request_building(provider):
        return await asyncio.get_running_loop().run_in_executor(None, threading.get_ident)


@pytest.mark.parametrize("provider", sorted(INLINE_PROVIDERS))
def test_request_building_runs_in_the_loop_thread_for_listed_providers(provider: str) -> None:
    assert run_calls(_builder_thread(provider)) == threading.get_ident()


@pytest.mark.parametrize("provider", ["bedrock", "vertex_ai", "azure", None])
def test_other_providers_keep_the_worker_thread(provider: str | None) -> None:
    assert run_calls(_builder_thread(provider)) != threading.get_ident()


def test_only_the_runs_own_loop_builds_inline() -> None:
    assert asyncio.run(_builder_thread("openai")) != threading.get_ident()  # asyncio's executor


def test_outside_the_block_work_goes_to_a_worker_thread() -> None:
    async def after_the_block() -> int:
        await _builder_thread("openai")
        return await asyncio.get_running_loop().run_in_executor(None, threading.get_ident)

    assert run_calls(after_the_block()) != threading.get_ident()


def test_an_error_raised_inline_reaches_the_caller() -> None:
    def broken() -> None:
        raise ValueError("bad parameter")

    async def call() -> None:
        with inline_request_building("openai"):
            await asyncio.get_running_loop().run_in_executor(None, broken)

    with pytest.raises(ValueError, match="bad parameter"):
        run_calls(call())
