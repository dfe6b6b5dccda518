"""A Python function as the target: ``py:package.module:function`` (module
:mod:`empath_gate.conversation.target`: replies, caching)."""

from __future__ import annotations

import asyncio
import importlib
import inspect
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from empath_gate.conversation.target_base import VersionedTarget
from empath_gate.conversation.target_reply import TargetReply, bounded_reply, coerce_reply
from empath_gate.errors import ConfigError
from empath_gate.llm.cache import Cache
from empath_gate.llm.client import CacheStatus, utc_now
from empath_gate.llm.slots import call_slot
from empath_gate.settings import Settings


class CallableTarget(VersionedTarget):
    """A Python function ``fn(messages, conversation_id)`` (sync: run in a worker thread;
    async: awaited) returning a str or a structured reply (see the module doc)."""

    kind = "callable"

    def __init__(self, spec: str, settings: Settings, fn: Callable[..., Any] | None = None) -> None:
        self.spec = spec
        self.fn = fn if fn is not None else load_callable(spec)
        super().__init__(spec, settings)

    async def reply(
        self,
        messages: Sequence[Mapping[str, Any]],
        *,
        conversation_id: str,
        run: int,
        seed: int | None,
        cache: Cache | None,
    ) -> TargetReply:
        msgs = [dict(m) for m in messages]
        started = utc_now()
        key = None
        if cache is not None and self.cacheable and cache.mode != "off":
            key = cache.key({"role": "target", "messages": msgs, **self._key_parts(run, conversation_id)})
        stored = cache.get(key) if cache is not None and key is not None else None
        status: CacheStatus = "off"
        if stored is not None:
            content, events = coerce_reply(stored, self.spec)
            status = "hit"
        else:
            content, events = coerce_reply(await self._call(msgs, conversation_id), self.spec)
            content = bounded_reply(content, f"target reply of {self.spec}")
            if cache is not None and key is not None:
                try:
                    stored_events = [e.model_dump(mode="json") for e in events]
                    cache.put(key, {"content": content, "events": stored_events})
                    status = "miss"
                except (ValueError, TypeError):  # event details that cannot or must not be stored
                    status = "off"
        return TargetReply(
            content=content,
            events=events,
            cache=status,
            model=self.spec,
            started_at=started,
            ended_at=utc_now(),
        )

    async def _call(self, msgs: list[dict[str, Any]], conversation_id: str) -> object:
        """The user function's raw reply (sync functions run in a worker thread), holding a
        target call slot of the run (:mod:`empath_gate.llm.slots`) while it runs."""
        async with call_slot("target"):
            if inspect.iscoroutinefunction(self.fn):
                return await self.fn(msgs, conversation_id)
            value = await asyncio.to_thread(self.fn, msgs, conversation_id)
            if inspect.isawaitable(value):
                value = await value
            return value


def load_callable(spec: str) -> Callable[..., Any]:
    """Import ``py:package.module:function``; ConfigError saying what is missing."""
    path = spec[3:] if spec.startswith("py:") else spec
    module_name, _, attr = path.partition(":")
    if not module_name or not attr:
        raise ConfigError(f"target {spec!r} must look like py:package.module:function")
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise ConfigError(
            f"target {spec!r}: cannot import {module_name!r} ({exc}); is it on sys.path?"
        ) from None
    fn = getattr(module, attr, None)
    if not callable(fn):
        raise ConfigError(f"target {spec!r}: {module_name} has no callable {attr!r}")
    return fn  # type: ignore[no-any-return]


__all__ = ["CallableTarget", "load_callable"]
