"""Calls that do not go through litellm (an HTTP bot with its own API) under the same rules as
every model call: the per-model concurrency limit, retries with backoff or ``Retry-After``,
classification, the provider's circuit breaker (:mod:`empath_gate.llm.retry`,
:mod:`empath_gate.llm.breaker`) and the ledger, which counts every attempt and holds the budget
(:mod:`empath_gate.llm.accounting`).

:func:`call_direct` runs an attempt function through :func:`~empath_gate.llm.retry.call_with_retries`
behind a :class:`~empath_gate.llm.accounting.Meter`, exactly where the model client runs
litellm's ``acompletion``. :func:`status_error` turns a non-2xx answer into the
:class:`~empath_gate.errors.ProviderError` its status calls for, keeping the response headers
reachable so a ``Retry-After`` is honoured.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any, Generic, Literal, TypeVar

from empath_gate.errors import ProviderError
from empath_gate.llm.accounting import Meter
from empath_gate.llm.classify import RETRYABLE_KINDS, status_kind
from empath_gate.llm.events import Event
from empath_gate.llm.retry import call_with_retries
from empath_gate.settings import RoleSettings

T = TypeVar("T")


@dataclass(frozen=True)
class _Response(Generic[T]):
    """What the retry loop expects of a response: non-empty ``choices`` and ``usage``."""

    choices: tuple[T]
    usage: None = None


class _Attempts(Generic[T]):
    """A stand-in for litellm whose ``acompletion`` runs one attempt of ``fn``."""

    def __init__(self, fn: Callable[[], Awaitable[T]]) -> None:
        self.fn = fn

    async def acompletion(self, **_kwargs: Any) -> _Response[T]:
        return _Response((await self.fn(),))


async def call_direct(
    role: Literal["target", "auditor", "judge"],
    settings: RoleSettings,
    attempt: Callable[[], Awaitable[T]],
    *,
    model: str,
    endpoint: str,
    secrets: list[str],
) -> tuple[T, int, tuple[Event, ...]]:
    """``(value, attempts, retry events)`` of ``attempt()`` run under the retry rules of
    ``settings`` (``max_retries``, delays, ``timeout_s`` per attempt plus 5 s, ``concurrency``).

    ``model`` names the concurrency slot and appears in error messages (``<prefix>/<name>``:
    the prefix and ``endpoint``, a URL as shown, name the provider's circuit breaker);
    ``secrets``: values taken out of every error message. An exception ``attempt`` raises is
    classified (a ProviderError passes unchanged); the retryable kinds are retried. Raises
    ProviderError after the last try, ProviderUnavailable once the breaker is open,
    BudgetExceeded when the active ledger's budget refused an attempt (no cost is known for
    these calls: each reserves nothing and adds no spend, but is counted)."""
    events: list[Event] = []
    meter = Meter(_Attempts(attempt), role, 0.0, lambda _r: None)
    kwargs: dict[str, Any] = {"model": model, "api_base": endpoint}
    try:
        resp, attempts = await call_with_retries(meter, kwargs, settings, role, secrets, events)
    except ProviderError:
        if meter.stopped is not None:
            raise meter.stopped from None
        raise
    return resp.choices[0], attempts, tuple(events)


class HttpStatus(Exception):
    """A non-2xx answer: ``status_code`` and ``response.headers`` (lower-cased names) as the
    retry loop reads them for ``Retry-After``."""

    def __init__(self, status: int, headers: Mapping[str, str]) -> None:
        super().__init__(f"HTTP {status}")
        self.status_code = status
        self.response = _Headers(dict(headers))


@dataclass(frozen=True)
class _Headers:
    headers: dict[str, str]


def status_error(
    status: int, reason: str, headers: Mapping[str, str], where: str, body: str
) -> ProviderError:
    """The ProviderError of an HTTP ``status`` from ``where`` (a URL as shown): its kind from the
    status alone (429 rate_limit, 5xx server, 401/403 authentication, 404 not_found, 400/413/422
    bad_request, 408 timeout, others unknown), retryable as that kind is, with the first 300
    characters of ``body`` in the message. Raise it ``from`` the :class:`HttpStatus` it carries
    (``__cause__``), so the retry loop finds the response's ``Retry-After``."""
    kind = status_kind(status)
    snippet = " ".join(body.split())[:300]
    message = f"HTTP {status} {reason} from {where}" + (f": {snippet}" if snippet else "")
    err = ProviderError(message, kind=kind, retryable=kind in RETRYABLE_KINDS, status_code=status)
    err.__cause__ = HttpStatus(status, headers)
    return err


__all__ = ["HttpStatus", "call_direct", "status_error"]
