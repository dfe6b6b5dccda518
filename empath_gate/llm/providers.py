"""The custom-provider handler: a plain chat function exposed to litellm as a ``CustomLLM``.

:func:`make_handler` wraps a :data:`ChatFn` so litellm calls it for ``<name>/<model>``; the
registry itself and litellm's import live in :mod:`empath_gate.llm.client`.
"""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

ChatFn = Callable[..., Mapping[str, Any] | Awaitable[Mapping[str, Any]]]
"""A chat function for :func:`~empath_gate.llm.client.register_chat_provider`:
``fn(model, messages, *, temperature, max_tokens, seed) -> {"content", "finish_reason",
"prompt_tokens", "completion_tokens"}`` (sync, run in a worker thread, or async)."""


def make_handler(lib: Any, fn: ChatFn) -> Any:
    """A litellm ``CustomLLM`` whose async completion calls the chat function ``fn``
    (see :func:`empath_gate.llm.client.register_chat_provider`); ``lib`` is the litellm module."""
    class _ChatFnHandler(lib.CustomLLM):  # type: ignore[misc]
        async def acompletion(
            self,
            model: str,
            messages: list[dict[str, Any]],
            api_base: Any,
            custom_prompt_dict: Any,
            model_response: Any,
            print_verbose: Any,
            encoding: Any,
            api_key: Any,
            logging_obj: Any,
            optional_params: dict[str, Any],
            *args: Any,
            **kwargs: Any,
        ) -> Any:
            call_kw = {
                "temperature": optional_params.get("temperature"),
                "max_tokens": optional_params.get("max_tokens"),
                "seed": optional_params.get("seed"),
            }
            if inspect.iscoroutinefunction(fn):
                out = await fn(model, messages, **call_kw)
            else:
                out = await asyncio.to_thread(fn, model, messages, **call_kw)
                if inspect.isawaitable(out):
                    out = await out
            model_response.choices[0].message.content = out.get("content")
            model_response.choices[0].finish_reason = out.get("finish_reason") or "stop"
            model_response.model = model
            pt, ct = out.get("prompt_tokens"), out.get("completion_tokens")
            model_response.usage = lib.Usage(
                prompt_tokens=pt or 0, completion_tokens=ct or 0, total_tokens=(pt or 0) + (ct or 0)
            )
            return model_response

        def completion(self, *args: Any, **kwargs: Any) -> Any:  # pragma: no cover - sync path unused
            return asyncio.run(self.acompletion(*args, **kwargs))

    return _ChatFnHandler()
