"""The event loop of a run, and the coroutines litellm leaves behind when a run is interrupted.

litellm's ``acompletion`` calls its synchronous ``completion`` in the loop's default executor,
and that call *returns the coroutine* of the provider request, which ``acompletion`` then
awaits. When Ctrl-C cancels a run while such a worker thread is busy, the thread still builds
the coroutine, nobody awaits it, and Python prints "coroutine ... was never awaited" when it
is collected. :func:`run_calls` runs a coroutine as :func:`asyncio.run` does, with a default
executor that keeps every coroutine its work items return; once the loop is closed (its worker
threads joined) it closes those that never started. Nothing is silenced: a coroutine the tool
itself forgets to await still warns.

For providers whose request building is computation only (:data:`INLINE_PROVIDERS`), the client
runs that ``completion`` call in the event-loop thread instead (:func:`inline_request_building`):
the worker thread gains nothing there (it needs the interpreter lock the loop holds), and each
call's hand-over to it and back costs two thread wake-ups and lock contention with the loop.
"""

from __future__ import annotations

import asyncio
import inspect
import threading
from collections.abc import Callable, Coroutine, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any, TypeVar

T = TypeVar("T")


INLINE_PROVIDERS = frozenset({"openai", "anthropic", "openrouter", "groq", "mistral", "deepseek",
                              "together_ai", "fireworks_ai", "xai", "hosted_vllm"})
"""litellm provider names (``litellm.get_llm_provider``) whose synchronous ``completion``, on the
async path, only maps parameters and builds the provider request (project reading of litellm's
provider handlers: an API key or a bearer header, no credential exchange). Providers that may
fetch or refresh credentials there with blocking I/O (Bedrock's AWS session, Vertex AI's Google
auth, Azure's AD token) are not listed: their ``completion`` keeps running in a worker thread,
so a slow token fetch never stalls the event loop."""

_inline: ContextVar[bool] = ContextVar("empath_gate_inline_build", default=False)


@contextmanager
def inline_request_building(provider: str | None) -> Iterator[None]:
    """Within this block, in the current task, work that litellm hands to the loop's default
    executor runs at once in the calling thread when ``provider`` is in
    :data:`INLINE_PROVIDERS` and the loop runs under :func:`run_calls`; otherwise (another
    provider, None, another executor) nothing changes. Tasks created inside the block inherit it."""
    if provider not in INLINE_PROVIDERS:
        yield
        return
    token = _inline.set(True)
    try:
        yield
    finally:
        _inline.reset(token)


class _KeepingExecutor(ThreadPoolExecutor):
    """A thread pool that remembers the coroutines its work items return (module docstring)."""

    def __init__(self) -> None:
        super().__init__(thread_name_prefix="empath-gate-calls")
        self._made: list[Coroutine[Any, Any, Any]] = []
        self._lock = threading.Lock()
        self._prune_at = 256

    def submit(self, fn: Callable[..., T], /, *args: Any, **kwargs: Any) -> Future[T]:
        def work() -> T:
            out = fn(*args, **kwargs)
            if inspect.iscoroutine(out):
                self._keep(out)
            return out

        if _inline.get():
            done: Future[T] = Future()
            try:
                done.set_result(work())
            except BaseException as exc:  # delivered to the awaiting coroutine, as from a thread
                done.set_exception(exc)
            return done
        return super().submit(work)

    def _keep(self, coro: Coroutine[Any, Any, Any]) -> None:
        with self._lock:
            self._made.append(coro)
            if len(self._made) >= self._prune_at:  # finished ones need no keeping
                self._made = [c for c in self._made if inspect.getcoroutinestate(c) != inspect.CORO_CLOSED]
                self._prune_at = max(256, 2 * len(self._made))

    def close_unstarted(self) -> int:
        """Close every kept coroutine that never started; returns how many."""
        with self._lock:
            made, self._made = self._made, []
        unstarted = [c for c in made if inspect.getcoroutinestate(c) == inspect.CORO_CREATED]
        for c in unstarted:
            c.close()
        return len(unstarted)


def run_calls(coro: Coroutine[Any, Any, T]) -> T:
    """``asyncio.run(coro)`` with the keeping executor as the loop's default executor; on the
    way out (a result, an error or Ctrl-C's KeyboardInterrupt, which propagates) the
    coroutines litellm built for calls that were cancelled are closed."""
    executor = _KeepingExecutor()

    async def main() -> T:
        asyncio.get_running_loop().set_default_executor(executor)
        return await coro

    try:
        return asyncio.run(main())
    finally:
        executor.shutdown(wait=True)
        executor.close_unstarted()


__all__ = ["INLINE_PROVIDERS", "inline_request_building", "run_calls"]
