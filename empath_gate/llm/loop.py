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
has that ``completion`` work item run in the event-loop thread instead
(:func:`inline_request_building`): a worker thread gains nothing there (it needs the interpreter
lock the loop holds), and each hand-over to it and back costs two thread wake-ups and lock
contention with the loop. Only that item: every other piece of work handed to the executor
(DNS lookups, ``asyncio.to_thread``) keeps its worker thread.
"""

from __future__ import annotations

import asyncio
import contextvars
import functools
import inspect
import sys
import threading
from collections.abc import Callable, Coroutine, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import contextmanager
from typing import Any, TypeVar

T = TypeVar("T")


INLINE_PROVIDERS = frozenset({"openai", "anthropic", "openrouter", "groq", "mistral", "deepseek",
                              "together_ai", "fireworks_ai", "xai", "hosted_vllm"})
"""litellm provider names (``litellm.get_llm_provider``) whose synchronous ``completion``, on the
async path, only maps parameters and builds the provider request (project reading of litellm's
provider handlers: an API key or a bearer header, no credential exchange). Providers that may
fetch or refresh credentials there with blocking I/O (Bedrock's AWS session, Vertex AI's Google
auth) are not listed, nor is Azure: their synchronous ``completion`` step keeps running in a
worker thread, as litellm runs it."""

ProviderOf = Callable[[str], "str | None"]
"""litellm's provider name of a model string, None when unknown or a provider registered with
:func:`empath_gate.llm.client.register_chat_provider` (``client._provider_of``)."""

_provider_of: contextvars.ContextVar[ProviderOf | None] = contextvars.ContextVar(
    "empath_gate_inline_build", default=None
)
_warmed: set[str] = set()  # providers whose first request of this process was built in a worker


@contextmanager
def inline_request_building(provider_of: ProviderOf) -> Iterator[None]:
    """Within this block (the current task and the tasks created in it), under :func:`run_calls`,
    litellm's ``completion`` work item (:func:`litellm_provider`) runs in the event-loop thread
    when ``provider_of(its model)`` is in :data:`INLINE_PROVIDERS` and that provider's first
    request of the process has already been built: the first one imports litellm's lazily loaded
    modules and tokenizer (about 0.1 s for OpenAI, 0.6 s for Anthropic, measured 2026-12-03), so
    it runs in a worker thread. Every other work item (a DNS lookup, ``asyncio.to_thread``, a
    registered provider's function, a fallback to an unlisted provider) still runs in a worker
    thread. Under another loop nothing changes."""
    token = _provider_of.set(provider_of)
    try:
        yield
    finally:
        _provider_of.reset(token)


_ROUTING_KEYWORDS = ("deployment_id", "azure", "model_list")
"""``completion`` keywords with which litellm picks the route itself (Azure, a model list), so the
model's provider name does not tell which handler builds the request (``litellm/main.py``)."""


def litellm_provider(fn: Callable[..., object], provider_of: ProviderOf) -> str | None:
    """The provider of the request ``fn`` builds when ``fn`` is the work item litellm's
    ``acompletion`` hands to the default executor (``partial(Context.run, partial(completion,
    model=..., ...))``, ``litellm/main.py``), else None. The provider is ``provider_of(model)``
    of the item's own model, so a fallback model is judged on its own; None when an explicit
    ``custom_llm_provider`` says otherwise, when litellm routes the call itself
    (:data:`_ROUTING_KEYWORDS`, ``litellm.model_alias_map``) and when the item is not on the
    async route (``acompletion=True``). Anything it does not recognise is None: a worker thread."""
    main = sys.modules.get("litellm.main")
    if main is None or not isinstance(fn, functools.partial) or len(fn.args) != 1:
        return None
    if not isinstance(getattr(fn.func, "__self__", None), contextvars.Context):
        return None
    inner = fn.args[0]
    if not isinstance(inner, functools.partial) or inner.func is not getattr(main, "completion", None):
        return None
    keywords = inner.keywords
    model = keywords.get("model")
    if not isinstance(model, str) or keywords.get("acompletion") is not True:
        return None  # only the async route's request building, never a whole blocking request
    if any(keywords.get(name) for name in _ROUTING_KEYWORDS) or getattr(
        sys.modules.get("litellm"), "model_alias_map", None
    ):
        return None  # litellm re-routes the call inside ``completion``: the model does not tell
    name = provider_of(model)
    explicit = inner.keywords.get("custom_llm_provider")
    return name if explicit in (None, name) else None


def _warm(provider: str, future: Future[Any]) -> None:
    """Mark ``provider`` warm once a request of it was built in a worker (not when the work item
    was cancelled before it ran or failed, so its lazy imports may not have happened)."""
    if not future.cancelled() and future.exception() is None:
        _warmed.add(provider)


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

        provider_of = _provider_of.get()
        provider = None if provider_of is None else litellm_provider(fn, provider_of)
        if provider in _warmed:
            done: Future[T] = Future()
            try:
                done.set_result(work())
            except Exception as exc:  # to the awaiting coroutine; Ctrl-C and exits leave at once
                done.set_exception(exc)
            return done
        future = super().submit(work)
        if provider in INLINE_PROVIDERS:
            future.add_done_callback(lambda f: _warm(provider, f))
        return future

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


__all__ = ["INLINE_PROVIDERS", "ProviderOf", "inline_request_building", "litellm_provider", "run_calls"]
