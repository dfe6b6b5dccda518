"""Provider calls under a per-model concurrency limit, retried with exponential backoff.

:func:`call_with_retries` runs one ``acompletion`` of a litellm-like module (passed in, so this
module never imports litellm) under a semaphore per (event loop, model), retries the retryable
failure kinds of :mod:`empath_gate.llm.classify` with full-jitter backoff, and raises a
:class:`~empath_gate.errors.ProviderError` (its message redacted of secrets) after the last try.
"""

from __future__ import annotations

import asyncio
import random
import weakref
from typing import Any, Literal

from empath_gate.errors import ProviderError
from empath_gate.llm.classify import classify, redact_secrets
from empath_gate.llm.events import Event
from empath_gate.settings import RoleSettings

_semaphores: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, dict[str, asyncio.Semaphore]] = (
    weakref.WeakKeyDictionary()
)


def _semaphore(model: str, limit: int) -> asyncio.Semaphore:
    """One semaphore per (event loop, model): at most ``limit`` calls in flight to a model.
    The first caller's limit sizes it."""
    loop = asyncio.get_running_loop()
    per_loop = _semaphores.get(loop)
    if per_loop is None:
        per_loop = {}
        _semaphores[loop] = per_loop
    sem = per_loop.get(model)
    if sem is None:
        sem = asyncio.Semaphore(limit)
        per_loop[model] = sem
    return sem


def backoff_delay(attempt: int, settings: RoleSettings, rng: random.Random | None = None) -> float:
    """Seconds to wait before retry ``attempt`` (0-based): full jitter over
    ``min(retry_max_delay_s, retry_base_delay_s * 2**attempt)`` (the "full jitter" scheme of
    exponential backoff, AWS Architecture Blog, 2015)."""
    cap = min(settings.retry_max_delay_s, settings.retry_base_delay_s * (2**attempt))
    return (rng or random).uniform(0, cap)


async def call_with_retries(
    lib: Any,
    kwargs: dict[str, Any],
    settings: RoleSettings,
    role: Literal["target", "auditor", "judge"],
    secrets: list[str],
    events: list[Event],
) -> tuple[Any, int]:
    """``(response, attempts)`` of the provider call, retrying retryable failures with backoff
    (a ``retry`` event each, appended to ``events``). Raises ProviderError after the last retry."""
    model = str(kwargs["model"])
    sem = _semaphore(model, settings.concurrency)
    attempt = 0
    while True:
        try:
            async with sem:
                resp = await asyncio.wait_for(lib.acompletion(**kwargs), settings.timeout_s + 5.0)
            if not (getattr(resp, "choices", None) or []):
                raise ProviderError(f"{model} returned no choices", kind="server", retryable=True)
            return resp, attempt + 1
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            err = classify(exc)
            message = redact_secrets(str(err), extra=secrets)
            if not err.retryable or attempt >= settings.max_retries:
                tries = f" after {attempt + 1} attempts" if attempt else ""
                raise ProviderError(
                    f"{role} call to {model} failed{tries} ({err.kind}): {message}",
                    kind=err.kind,
                    retryable=err.retryable,
                    status_code=err.status_code,
                ) from None
            delay = backoff_delay(attempt, settings)
            detail = {
                "attempt": attempt + 1,
                "kind": err.kind,
                "status": err.status_code,
                "delay_s": round(delay, 3),
            }
            events.append(Event(kind="retry", role=role, detail=detail))
            await asyncio.sleep(delay)
            attempt += 1
