"""The run's event loop: a coroutine built in a worker thread for a call Ctrl-C cancelled (what
litellm's ``acompletion`` leaves behind) is closed without a warning, while a coroutine the code
itself forgets to await still warns."""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import functools
import gc
import sys
import threading
import time
import types
import warnings
from collections.abc import Callable, Coroutine
from concurrent.futures import Future
from typing import Any

import pytest

from empath_gate.llm import loop
from empath_gate.llm.loop import inline_request_building, run_calls


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


def _providers(model: str) -> str | None:
    return {"openai/x": "openai", "anthropic/y": "anthropic", "bedrock/z": "bedrock"}.get(model)


@pytest.fixture
def fake_litellm(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """litellm's ``main`` module as far as the executor looks at it: a ``completion`` function
    (here recording the thread it runs in); every provider cold."""
    threads: list[str] = []

    def completion(**_kwargs: Any) -> str:
        threads.append(threading.current_thread().name)
        return "request"

    monkeypatch.setitem(sys.modules, "litellm.main", types.SimpleNamespace(completion=completion))
    monkeypatch.setattr(loop, "_warmed", set())
    return threads


def _litellm_item(**keywords: Any) -> Callable[[], Any]:
    """The work item litellm's ``acompletion`` hands to the default executor."""
    main = sys.modules["litellm.main"]
    keywords.setdefault("acompletion", True)
    return functools.partial(contextvars.copy_context().run, functools.partial(main.completion, **keywords))


async def _build(times: int, **keywords: Any) -> None:
    with inline_request_building(_providers):
        for _ in range(times):
            await asyncio.get_running_loop().run_in_executor(None, _litellm_item(**keywords))


@pytest.mark.parametrize("model", ["openai/x", "anthropic/y"])
def test_a_listed_providers_requests_are_built_in_the_loop_thread_after_the_first(
    fake_litellm: list[str], model: str
) -> None:
    run_calls(_build(3, model=model))
    assert fake_litellm[0] != "MainThread"  # the first: lazy imports and tokenizer, in a worker
    assert fake_litellm[1:] == ["MainThread", "MainThread"]


@pytest.mark.parametrize(
    "keywords",
    [
        {"model": "bedrock/z"},
        {"model": "unknown/w"},
        {"model": "openai/x", "custom_llm_provider": "azure"},
        {"model": "openai/x", "azure": True},
        {"model": "openai/x", "deployment_id": "dep"},
        {"model": "openai/x", "model_list": [{"model_name": "openai/x"}]},
        {"model": "openai/x", "acompletion": False},
    ],
)
def test_other_providers_keep_the_worker_thread(fake_litellm: list[str], keywords: dict[str, Any]) -> None:
    run_calls(_build(3, **keywords))
    assert len(fake_litellm) == 3 and "MainThread" not in fake_litellm


def test_only_litellms_request_building_runs_inline(fake_litellm: list[str]) -> None:
    async def other_work() -> list[int]:
        await _build(2, model="openai/x")  # warm
        with inline_request_building(_providers):
            loop_ = asyncio.get_running_loop()
            return [
                await loop_.run_in_executor(None, threading.get_ident),
                await asyncio.to_thread(threading.get_ident),
                await loop_.run_in_executor(None, functools.partial(threading.get_ident)),
            ]

    assert threading.get_ident() not in run_calls(other_work())
    assert fake_litellm[1] == "MainThread"


def test_only_the_runs_own_loop_builds_inline(fake_litellm: list[str]) -> None:
    asyncio.run(_build(3, model="openai/x"))  # asyncio's own executor
    assert "MainThread" not in fake_litellm


def test_outside_the_block_requests_go_to_a_worker_thread(fake_litellm: list[str]) -> None:
    async def after_the_block() -> None:
        await _build(2, model="openai/x")
        await asyncio.get_running_loop().run_in_executor(None, _litellm_item(model="openai/x"))

    run_calls(after_the_block())
    assert fake_litellm[1] == "MainThread" and fake_litellm[2] != "MainThread"


def test_an_error_raised_inline_reaches_the_caller(monkeypatch: pytest.MonkeyPatch) -> None:
    def completion(**_kwargs: Any) -> str:
        raise ValueError("bad parameter")

    monkeypatch.setitem(sys.modules, "litellm.main", types.SimpleNamespace(completion=completion))
    monkeypatch.setattr(loop, "_warmed", {"openai"})
    with pytest.raises(ValueError, match="bad parameter"):
        run_calls(_build(1, model="openai/x"))


def test_a_first_request_that_never_ran_warms_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(loop, "_warmed", set())
    cancelled: Future[str] = Future()
    cancelled.cancel()
    failed: Future[str] = Future()
    failed.set_exception(ImportError("lazy import failed"))
    built: Future[str] = Future()
    built.set_result("request")
    loop._warm("anthropic", cancelled)
    loop._warm("anthropic", failed)
    assert loop._warmed == set()
    loop._warm("anthropic", built)
    assert loop._warmed == {"anthropic"}
