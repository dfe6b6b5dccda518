"""The run's event loop: a coroutine built in a worker thread for a call Ctrl-C cancelled (what
litellm's ``acompletion`` leaves behind) is closed without a warning, while a coroutine the code
itself forgets to await still warns."""

from __future__ import annotations

import asyncio
import contextlib
import gc
import time
import warnings
from collections.abc import Callable, Coroutine
from typing import Any

import pytest

from empath_gate.llm.loop import run_calls


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
