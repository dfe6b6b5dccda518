"""Fail fast on a dead provider: one circuit breaker per provider and run.

A provider is a model's litellm provider prefix and endpoint (``openai at
http://127.0.0.1:8000/v1``, ``anthropic``): every role that calls the same one shares its
breaker. The breaker watches the first :data:`OPEN_AFTER` call attempts to its provider. When
all of them end in a cause that no retry can heal (:data:`FATAL_CAUSES`: connection refused,
DNS failure, HTTP 401/403, credentials in the URL) with no success, it opens: every call to
that provider, the ones waiting for a retry included, raises
:class:`~empath_gate.errors.ProviderUnavailable` at once, without a call or a retry. Its
message names the provider and the cause, so the run ends in seconds with every transcript
that needed the provider in error (an infrastructure error: CLI exit 3; under pytest those
tests error with it) instead of retrying each one for minutes. Any other outcome among the first attempts
(a success, a 429, a 5xx, a timeout) disarms it for the rest of the run: a provider that
answered at all is never cut off, and rate limits and server errors are left to the retries.

Breakers live per event loop (one run's ``asyncio.run``), so a new run starts closed.
"""

from __future__ import annotations

import asyncio
import functools
import weakref
from collections import Counter
from typing import Any

from empath_gate.errors import ProviderError, ProviderUnavailable
from empath_gate.llm.classify import root_cause
from empath_gate.settings import redact_url

OPEN_AFTER = 5
"""Attempts that must all fail for a fatal cause before the breaker opens (issue 14: "the
first 5 calls to a provider")."""

FATAL_CAUSES = frozenset(
    {"connection refused", "DNS failure", "credentials in the URL", "HTTP 401", "HTTP 403"}
)
"""Causes a retry cannot heal; 429, 5xx and timeouts are never among them."""


class Breaker:
    """The breaker of one provider in one run (see the module docstring)."""

    def __init__(self, provider: str) -> None:
        self.provider = provider
        self.armed = True
        self.outcomes = 0
        self.causes: Counter[str] = Counter()
        self.opened_by: str | None = None
        self.last = ""

    @property
    def open(self) -> bool:
        """True once the breaker has opened (it never closes again in this run)."""
        return self.opened_by is not None

    def check(self) -> None:
        """Raise :class:`ProviderUnavailable` when the breaker is open."""
        if self.opened_by is not None:
            raise ProviderUnavailable(
                self.provider, self.causes.most_common(1)[0][0], self.opened_by, calls=OPEN_AFTER,
                last=self.last,
            )

    def record(self, cause: str | None, role: str, message: str = "") -> None:
        """Count one attempt's outcome: ``cause`` is a :data:`FATAL_CAUSES` member, or None for
        a success or a failure that does not count (which disarms the breaker); ``message``:
        the failure's redacted message (kept for the error)."""
        if not self.armed or self.open:
            return
        self.last = message or self.last
        if cause is None or cause not in FATAL_CAUSES:
            self.armed = False
            return
        self.outcomes += 1
        self.causes[cause] += 1
        if self.outcomes >= OPEN_AFTER:
            self.opened_by = role


_breakers: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, dict[str, Breaker]] = (
    weakref.WeakKeyDictionary()
)


def provider_name(kwargs: dict[str, Any]) -> str:
    """The provider of an ``acompletion`` call: the model's prefix (``openai`` for a bare name)
    and its ``api_base`` without user-info or query."""
    model = str(kwargs.get("model") or "")
    prefix = model.split("/", 1)[0] if "/" in model else "openai"
    base = kwargs.get("api_base")
    return f"{prefix} at {_shown_url(str(base))}" if base else prefix


@functools.lru_cache(maxsize=64)  # pure; asked on every call with the role's few endpoints
def _shown_url(url: str) -> str:
    return redact_url(url)


def breaker_for(provider: str) -> Breaker:
    """The breaker of ``provider`` in the running event loop (created closed)."""
    loop = asyncio.get_running_loop()
    per_loop = _breakers.setdefault(loop, {})
    return per_loop.setdefault(provider, Breaker(provider))


def fatal_cause(exc: BaseException, err: ProviderError) -> str | None:
    """The :data:`FATAL_CAUSES` member behind a failed attempt (``exc`` as raised, ``err`` its
    classification), or None when a retry or another call might succeed."""
    cause = root_cause(exc)
    if cause is not None:
        return cause
    if err.kind == "authentication" and err.status_code in (401, 403):
        return f"HTTP {err.status_code}"
    return None
