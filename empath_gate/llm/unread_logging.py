"""litellm's success and failure logging, skipped for the engine's calls while nothing reads it.

After each call litellm builds a logging payload (its standard logging object, the messages
prepared for logging, the call's cost once more) and queues it on a background logging worker,
which hands it to the registered callbacks (``litellm.callbacks``, ``success_callback`` and the
other lists of :data:`CALLBACK_LISTS`) and, when ``litellm.max_budget`` is set, adds the cost to
litellm's own budget counter; a failed call goes through its failure handler the same way. With
no callback and no budget, nothing reads either. litellm skips both for the nested calls it
makes itself, which it marks with the context variable ``is_internal_call`` of
``litellm._internal_context`` so that they are neither logged nor billed;
:func:`skip_unread_logging` marks the engine's calls the same way. Measured on a copy of
``bench/bench_engine.py``'s bare row with the flag set (384 calls, 3 pairs, 2-core VM,
2026-12-04): 0.27 to 1.33 ms less client CPU per call, out of 5 to 7.4 ms.

What does not change: the reply, its usage and its ``response_cost`` (litellm sets that in the
response's ``_hidden_params`` before logging; the client prices from it), exceptions, retries.
Read in litellm 1.110.2, the flag is consulted at the start of each ``acompletion`` and gates
its success and failure logging, the binding of a budget reservation to callbacks (litellm's
proxy) and the callbacks of a hit in litellm's own cache (which the client does not use).
Nothing is skipped when any callback list is non-empty, when ``litellm.max_budget`` is set,
when the call's own keyword arguments name a callback, on a litellm release outside
:data:`CHECKED_RELEASES` (another release may read the flag for more), or for a provider
registered with :func:`~empath_gate.llm.client.register_chat_provider` (its function may call
litellm itself, with callbacks of its own): those calls are logged as litellm logs them.
"""

from __future__ import annotations

import contextlib
import functools
import importlib.metadata
import sys
from collections.abc import Iterator, Mapping
from contextvars import ContextVar
from typing import Any

CALLBACK_LISTS: tuple[str, ...] = (
    "callbacks", "success_callback", "failure_callback", "input_callback", "service_callback",
    "audit_log_callbacks", "_async_success_callback", "_async_failure_callback", "_async_input_callback",
)
"""The module-level lists of the ``litellm`` module through which a callback receives calls
(litellm 1.110's ``litellm/__init__.py``); a name a release lacks counts as empty."""


def logging_read(lib: Any, kwargs: Mapping[str, Any]) -> bool:
    """Whether a call made with ``kwargs`` through the ``litellm`` module ``lib`` has a reader of
    its logging: any of :data:`CALLBACK_LISTS` non-empty, ``lib.max_budget`` set, or a keyword
    argument naming callbacks (``callbacks``, ``success_callback``…)."""
    if any(getattr(lib, name, None) for name in CALLBACK_LISTS) or getattr(lib, "max_budget", None):
        return True
    return any("callback" in name for name in kwargs)


CHECKED_RELEASES: tuple[str, ...] = ("1.110.",)
"""Release prefixes of litellm whose reads of ``is_internal_call`` were checked to gate logging
and nothing a run relies on (module docstring); on any other release nothing is skipped."""


def checked_release(version: str | None) -> bool:
    """Whether litellm ``version`` (``"1.110.2"``; None: not installed as a distribution) is one
    of :data:`CHECKED_RELEASES`."""
    return version is not None and version.startswith(CHECKED_RELEASES)


@functools.lru_cache(maxsize=1)
def installed_release() -> str | None:
    """The installed litellm distribution's version, None when it has no metadata."""
    try:
        return importlib.metadata.version("litellm")
    except importlib.metadata.PackageNotFoundError:
        return None


def _internal_flag() -> ContextVar[bool] | None:
    """litellm's ``is_internal_call`` context variable, None when the loaded litellm has none or
    is not a :data:`CHECKED_RELEASES` release."""
    if not checked_release(installed_release()):
        return None
    module = sys.modules.get("litellm._internal_context")
    flag = getattr(module, "is_internal_call", None)
    return flag if isinstance(flag, ContextVar) else None


@contextlib.contextmanager
def skip_unread_logging(lib: Any, kwargs: Mapping[str, Any]) -> Iterator[bool]:
    """Within the block (the current task and the tasks it creates), litellm calls skip their
    success and failure logging unless :func:`logging_read` says something reads it or the
    loaded litellm cannot skip it (module docstring). Yields whether the block skips it."""
    flag = None if logging_read(lib, kwargs) else _internal_flag()
    if flag is None:
        yield False
        return
    token = flag.set(True)
    try:
        yield True
    finally:
        flag.reset(token)


__all__ = ["CALLBACK_LISTS", "CHECKED_RELEASES", "checked_release", "installed_release", "logging_read",
           "skip_unread_logging"]
