"""Provider calls under a per-model concurrency limit, retried with exponential backoff.

:func:`call_with_retries` runs one ``acompletion`` of a litellm-like module (passed in, so this
module never imports litellm) under a semaphore per (event loop, model), retries the retryable
failure kinds of :mod:`empath_gate.llm.classify` with full-jitter backoff, or after the wait a
``Retry-After`` header asks for (at most :data:`RETRY_AFTER_CAP_S`), and raises a
:class:`~empath_gate.errors.ProviderError` (its message redacted of secrets) after the last try.
A rate limit (429) whose ``Retry-After`` asks for at most :data:`PACED_WAIT_S` seconds is the
provider pacing the caller, not a failure: up to :data:`PACED_RETRIES` such retries per call do
not count against ``max_retries``.
Every attempt reports to its provider's circuit breaker (:mod:`empath_gate.llm.breaker`), which
raises :class:`~empath_gate.errors.ProviderUnavailable` once it is open. A
:class:`~empath_gate.errors.ConfigError` behind a failure (the embedded model not installed,
raised inside litellm's custom-provider handler) is raised as is: it is the user's to fix.
With adaptive concurrency on, every attempt is also admitted by its provider's model's AIMD
gate (:mod:`empath_gate.llm.adaptive`), which a 429 narrows and a ``Retry-After`` pauses.
Inside a run, every attempt first holds a call slot of its role and of the run
(:mod:`empath_gate.llm.slots`), and the model's limit is its ``provider_concurrency`` entry
when one names it (else the role's ``concurrency``).
"""

from __future__ import annotations

import asyncio
import email.utils
import random
import sys
import time
import weakref
from collections.abc import Coroutine
from typing import Any, Literal

from empath_gate.errors import ConfigError, ProviderError, ProviderUnavailable
from empath_gate.llm.adaptive import AdaptiveGate, gate_for
from empath_gate.llm.breaker import breaker_for, fatal_cause, provider_name
from empath_gate.llm.classify import classify, exception_chain, redact_secrets
from empath_gate.llm.events import Event
from empath_gate.llm.slots import active_slots, call_slot
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


RETRY_AFTER_CAP_S = 120.0
"""Longest ``Retry-After`` wait honoured, in seconds: a longer one (a quota reset hours away) is
shortened to this, so the call fails after its last retry instead of stalling the run."""


PACED_WAIT_S = 30.0
"""Longest ``Retry-After`` of a 429 that does not use up one of the ``max_retries`` (project
choice: a short wait is throttling the call will get through; a longer one, such as a quota
reset, is a failure the budget should end)."""

PACED_RETRIES = 8
"""Retries per call after such paced 429s, on top of ``max_retries`` (project choice: at a 20 %
429 rate, the soak's, a call with ``max_retries`` 4 then fails about once in 10^9 calls instead of
once in 3,000; the extra wait is at most 8 x 30 s)."""


def retry_after_s(exc: BaseException, now: float | None = None) -> float | None:
    """Seconds a ``Retry-After`` (or ``retry-after-ms``) response header behind ``exc`` asks to
    wait (RFC 9110 §10.2.3: delay-seconds or an HTTP date), at most :data:`RETRY_AFTER_CAP_S`;
    None when no response along the exception chain carries one or it cannot be read."""
    for e in exception_chain(exc):
        headers = getattr(getattr(e, "response", None), "headers", None)
        if headers is None:
            headers = getattr(e, "litellm_response_headers", None)
        if headers is None or not hasattr(headers, "get"):
            continue
        value = _parse_retry_after(headers.get("retry-after"), headers.get("retry-after-ms"), now)
        if value is not None:
            return min(max(value, 0.0), RETRY_AFTER_CAP_S)
    return None


def _parse_retry_after(value: Any, value_ms: Any, now: float | None) -> float | None:
    try:
        if value_ms is not None:
            return float(value_ms) / 1000.0
        if value is None:
            return None
        return float(value)
    except (TypeError, ValueError):
        pass
    try:
        when = email.utils.parsedate_to_datetime(str(value))
    except (TypeError, ValueError, IndexError):
        return None
    return when.timestamp() - (time.time() if now is None else now)


def _config_error(exc: BaseException) -> ConfigError | None:
    return next((e for e in exception_chain(exc) if isinstance(e, ConfigError)), None)


async def call_with_retries(
    lib: Any,
    kwargs: dict[str, Any],
    settings: RoleSettings,
    role: Literal["target", "auditor", "judge"],
    secrets: list[str],
    events: list[Event],
) -> tuple[Any, int]:
    """``(response, attempts)`` of the provider call, retrying retryable failures with backoff
    (a ``retry`` event each, appended to ``events``; its ``delay_s`` is the ``Retry-After`` wait
    when the provider sent one). Raises ProviderError after the last retry, ProviderUnavailable
    when the provider's breaker is open, ConfigError when one is behind the failure."""
    model = str(kwargs["model"])
    slots = active_slots()
    limit = slots.model_limit(model, settings.concurrency) if slots is not None else settings.concurrency
    sem = _semaphore(model, limit)
    provider_sem = slots.provider_semaphore(model) if slots is not None else None
    provider = provider_name(kwargs)
    breaker = breaker_for(provider)
    gate = gate_for(f"{provider} {model}", limit)
    attempt = 0  # retries counted against max_retries
    paced = 0  # retries after a paced 429 (PACED_WAIT_S, PACED_RETRIES)
    while True:
        breaker.check()
        try:
            async with call_slot(role), provider_sem or _NO_LIMIT, sem:
                breaker.check()
                resp = await _attempt(lib, kwargs, settings, gate)
            if not (getattr(resp, "choices", None) or []):
                raise ProviderError(f"{model} returned no choices", kind="server", retryable=True)
            breaker.record(None, role)
            return resp, attempt + paced + 1
        except (asyncio.CancelledError, ProviderUnavailable):
            raise
        except Exception as exc:
            config = _config_error(exc)
            if config is not None:
                raise config from None
            err = classify(exc)
            message = redact_secrets(str(err), extra=secrets)
            breaker.record(fatal_cause(exc, err), role, message)
            breaker.check()
            wait = retry_after_s(exc)
            pacing = (err.kind == "rate_limit" and wait is not None and wait <= PACED_WAIT_S
                      and paced < PACED_RETRIES)
            if not err.retryable or (attempt >= settings.max_retries and not pacing):
                tries = f" after {attempt + paced + 1} attempts" if attempt + paced else ""
                raise ProviderError(
                    f"{role} call to {model} failed{tries} ({err.kind}): {message}",
                    kind=err.kind,
                    retryable=err.retryable,
                    status_code=err.status_code,
                ) from None
            delay = wait if wait is not None else backoff_delay(attempt, settings)
            detail = {
                "attempt": attempt + paced + 1,
                "kind": err.kind,
                "status": err.status_code,
                "delay_s": round(delay, 3),
            }
            events.append(Event(kind="retry", role=role, detail=detail))
            await asyncio.sleep(delay)
            if pacing:
                paced += 1
            else:
                attempt += 1


class _NoLimit:
    """An async context manager that holds nothing (no provider-wide limit applies)."""

    async def __aenter__(self) -> None:
        return None

    async def __aexit__(self, *_exc: object) -> None:
        return None


_NO_LIMIT = _NoLimit()


async def _within(call: Coroutine[Any, Any, Any], timeout_s: float) -> Any:
    """``await call``, cancelled with TimeoutError after ``timeout_s`` seconds. On Python 3.11+
    through ``asyncio.timeout`` in the caller's own task: ``asyncio.wait_for`` runs the call in
    a task of its own, one more task and one more event-loop hop per call."""
    if sys.version_info >= (3, 11):
        async with asyncio.timeout(timeout_s):
            return await call
    return await asyncio.wait_for(call, timeout_s)


async def _attempt(
    lib: Any, kwargs: dict[str, Any], settings: RoleSettings, gate: AdaptiveGate | None
) -> Any:
    """One ``acompletion`` attempt, admitted by ``gate`` (None: no adaptive limit) and reported
    to it: a reply, a 429 (with its Retry-After) or another failure."""
    timeout = settings.timeout_s + 5.0
    if gate is None:
        return await _within(lib.acompletion(**kwargs), timeout)
    ticket = await gate.acquire()
    try:
        resp = await _within(lib.acompletion(**kwargs), timeout)
    except Exception as exc:
        if classify(exc).kind == "rate_limit":
            gate.release(ticket, "throttled", retry_after_s(exc))
        else:
            gate.release(ticket, "failed")
        raise
    except BaseException:
        gate.release(ticket, "failed")
        raise
    gate.release(ticket, "ok")
    return resp
