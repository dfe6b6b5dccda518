"""Adaptive concurrency on 429s: additive increase, multiplicative decrease (AIMD).

With ``adaptive_concurrency`` on (the default), the calls in flight to one model of one
provider (``openai at http://…/v1`` + ``gpt-4o-mini``: the granularity at which providers set
rate limits and at which ``RoleSettings.concurrency`` is configured) are bounded by a limit
that follows the provider's answers:

* it starts at the configured ``concurrency`` (the ceiling: it never exceeds it, so a run
  never loads a provider more than a fixed limit would);
* **multiplicative decrease**: a 429 halves it (:data:`DECREASE`, floor 1), at most once per
  round trip: a 429 on a call admitted before the last decrease is old news and does not cut
  again, so a burst of 429s from one over-full window halves the limit once, not to 1;
* **additive increase**: each window of successes (as many successes as the limit, about one
  round trip) raises it by 1, up to the ceiling;
* **remembered level**: the largest limit that completed a window (``proven``) is kept; after
  a cut, the limit climbs back to it one step per success (fast recovery, as TCP's slow start
  climbs back to its threshold, RFC 5681 §3.1), then holds there :data:`PROBE_AFTER_WINDOWS`
  windows before probing one above it. Plain AIMD against a hard concurrency cap saws between
  half the cap and the cap (about 75% of the throughput); this keeps it at the cap and spends
  one 429 per probe;
* **Retry-After**: a 429 carrying ``Retry-After`` (or ``retry-after-ms``) pauses every new call
  to that provider's model until then (calls in flight continue).

:class:`AimdState` is the pure arithmetic (no clock, no I/O: ``now`` is passed in);
:class:`AdaptiveGate` admits calls on one event loop under it. :func:`gate_for` hands out one
gate per (event loop, provider and model) while the context allows it
(:func:`adaptive_session`), None otherwise (the fixed per-model semaphore alone applies).
The retry loop (:mod:`empath_gate.llm.retry`) admits every attempt of every role through it.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import time
import weakref
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Literal

DECREASE = 0.5
"""Factor applied to the limit on a 429 (multiplicative decrease; TCP's halving, RFC 5681)."""

PROBE_AFTER_WINDOWS = 10
"""Windows of successes held at the remembered level before probing one above it. Ours: a
failed probe costs one 429 and about one window at half the limit, so probing once in ten
windows keeps the cost near 5% of throughput while still finding capacity that grew."""

Outcome = Literal["ok", "throttled", "failed"]
"""How an admitted call ended: a reply, a 429 (rate limit), or any other failure."""


@dataclass
class AimdState:
    """The AIMD limit of one provider's model (mutable; single event loop).

    ``ceiling``: the configured concurrency (>= 1); ``limit``: calls allowed in flight now
    (1..ceiling); ``in_flight``: admitted and not yet ended; ``proven``: largest limit that
    completed a window of successes (None: none yet, or forgotten after a 429 at or below
    it); ``hold``: windows still to hold at ``proven`` before probing above it;
    ``paused_until``: clock time before which no call starts (Retry-After); counters
    ``throttled`` (429s seen), ``decreases``, ``increases``. Raises ValueError for a ceiling
    below 1."""

    ceiling: int
    limit: int = 0
    in_flight: int = 0
    proven: int | None = None
    hold: int = 0
    successes: int = 0
    next_ticket: int = 0
    cut_ticket: int = 0
    paused_until: float = 0.0
    throttled: int = 0
    decreases: int = 0
    increases: int = 0

    def __post_init__(self) -> None:
        if self.ceiling < 1:
            raise ValueError(f"ceiling must be >= 1, not {self.ceiling}")
        if not 1 <= self.limit <= self.ceiling:
            self.limit = self.ceiling

    def can_start(self, now: float) -> bool:
        """True when a call may start at ``now``: not paused and below the limit."""
        return now >= self.paused_until and self.in_flight < self.limit

    def start(self) -> int:
        """Admit a call; returns its ticket (admission number, for :meth:`end`)."""
        self.in_flight += 1
        ticket = self.next_ticket
        self.next_ticket += 1
        return ticket

    def raise_ceiling(self, ceiling: int) -> None:
        """Let the limit grow up to ``ceiling`` when a caller configures more (never lowers)."""
        self.ceiling = max(self.ceiling, ceiling)

    def end(self, ticket: int, outcome: Outcome, now: float, retry_after_s: float | None = None) -> None:
        """Record how the call with ``ticket`` ended at ``now``; ``retry_after_s``: the wait a
        429 asked for (seconds; None: none given)."""
        self.in_flight = max(0, self.in_flight - 1)
        if outcome == "ok":
            self._success()
        elif outcome == "throttled":
            self._throttle(ticket, now, retry_after_s)

    def _success(self) -> None:
        if self.proven is not None and self.limit < self.proven:
            self.limit += 1  # fast recovery up to the remembered level
            self.increases += 1
            self.successes = 0
            return
        self.successes += 1
        if self.successes < self.limit:
            return
        self.successes = 0
        self.proven = max(self.proven or 0, self.limit)
        if self.hold > 0:
            self.hold -= 1
        elif self.limit < self.ceiling:
            self.limit += 1
            self.increases += 1

    def _throttle(self, ticket: int, now: float, retry_after_s: float | None) -> None:
        self.throttled += 1
        if retry_after_s is not None and retry_after_s > 0:
            self.paused_until = max(self.paused_until, now + retry_after_s)
        if ticket < self.cut_ticket:
            return  # admitted before the last cut: that cut already answered this window
        level = self.limit
        self.limit = max(1, int(level * DECREASE))
        self.cut_ticket = self.next_ticket
        self.successes = 0
        self.hold = PROBE_AFTER_WINDOWS
        self.decreases += 1
        if self.proven is not None and self.proven >= level:
            self.proven = level - 1 if level > 1 else None


class AdaptiveGate:
    """Admits calls to one provider's model on one event loop under an :class:`AimdState`.

    ``key``: the provider and model (for messages); ``ceiling``: the configured concurrency;
    ``clock``: seconds, monotonic (``time.monotonic``)."""

    def __init__(self, key: str, ceiling: int, clock: Callable[[], float] = time.monotonic) -> None:
        self.key = key
        self.state = AimdState(ceiling=ceiling)
        self._clock = clock
        self._waiters: list[asyncio.Future[None]] = []

    async def acquire(self) -> int:
        """Wait until a call may start (pause over, below the limit); returns its ticket."""
        loop = asyncio.get_running_loop()
        while True:
            now = self._clock()
            if now < self.state.paused_until:
                await asyncio.sleep(self.state.paused_until - now)
                continue
            if self.state.can_start(now):
                return self.state.start()
            fut: asyncio.Future[None] = loop.create_future()
            self._waiters.append(fut)
            try:
                await fut
            finally:
                if fut in self._waiters:
                    self._waiters.remove(fut)

    def release(self, ticket: int, outcome: Outcome, retry_after_s: float | None = None) -> None:
        """End the call with ``ticket`` (see :meth:`AimdState.end`) and wake the waiters."""
        self.state.end(ticket, outcome, self._clock(), retry_after_s)
        waiters, self._waiters = self._waiters, []
        for fut in waiters:
            if not fut.done():
                fut.set_result(None)


_enabled: contextvars.ContextVar[bool] = contextvars.ContextVar("empath_adaptive", default=True)
_gates: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, dict[str, AdaptiveGate]] = (
    weakref.WeakKeyDictionary()
)


@contextlib.contextmanager
def adaptive_session(enabled: bool) -> Iterator[None]:
    """Turn adaptive concurrency on or off for the calls made in the block (and in tasks it
    creates); outside any session it is on (the setting's default)."""
    token = _enabled.set(enabled)
    try:
        yield
    finally:
        _enabled.reset(token)


def gate_for(key: str, ceiling: int) -> AdaptiveGate | None:
    """The gate of ``key`` (provider and model) in the running event loop, created with
    ``ceiling`` (a larger ceiling later raises it); None when adaptive concurrency is off."""
    if not _enabled.get():
        return None
    per_loop = _gates.setdefault(asyncio.get_running_loop(), {})
    gate = per_loop.get(key)
    if gate is None:
        gate = per_loop[key] = AdaptiveGate(key, ceiling)
    else:
        gate.state.raise_ceiling(ceiling)
    return gate


def gates() -> dict[str, AdaptiveGate]:
    """The gates of the running event loop by key (for reports and benches; a copy)."""
    return dict(_gates.get(asyncio.get_running_loop(), {}))
