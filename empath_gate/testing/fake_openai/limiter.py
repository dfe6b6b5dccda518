"""A load-dependent rate limiter for the fake server: a token bucket and a concurrency cap per model.

:class:`ModelLimit` admits a request of one model when a token is in its bucket (refilled at
``rps`` tokens per second up to ``burst``) and fewer than ``concurrent`` of its requests are
being answered; otherwise the server answers HTTP 429 ``rate_limit_exceeded`` at once, with
``Retry-After`` (whole seconds, rounded up, RFC 9110 §10.2.3) and ``retry-after-ms`` (the
precise wait) computed from the limiter's state: the time until the next token, or until the
earliest request in service is due to end (its start plus the expected service time). A
refused request takes no token and no slot. Thread-safe (the server answers each connection
in its own thread).
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field


@dataclass
class ModelLimit:
    """The limits of one model. ``rps``: tokens per second (> 0); ``concurrent``: requests in
    service at once (>= 1); ``burst``: bucket size (default: ``rps``, at least 1);
    ``service_s``: expected service time of one request (the server's latency), for the
    concurrency wait. Counters: ``admitted``, ``refused`` (429s answered). Raises ValueError
    for a non-positive ``rps`` or ``concurrent`` below 1."""

    rps: float
    concurrent: int
    burst: float | None = None
    service_s: float = 0.0
    clock: Callable[[], float] = time.monotonic
    admitted: int = 0
    refused: int = 0
    _tokens: float = field(default=0.0, init=False)
    _stamp: float = field(default=0.0, init=False)
    _started: dict[int, float] = field(default_factory=dict, init=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, init=False)

    def __post_init__(self) -> None:
        if self.rps <= 0:
            raise ValueError(f"rps must be > 0, not {self.rps}")
        if self.concurrent < 1:
            raise ValueError(f"concurrent must be >= 1, not {self.concurrent}")
        self.burst = max(1.0, self.rps if self.burst is None else self.burst)
        self._tokens = self.burst
        self._stamp = self.clock()

    def admit(self) -> tuple[int | None, float]:
        """``(ticket, 0.0)`` with a slot taken when the request may be served now (pass the
        ticket to :meth:`done`); else ``(None, seconds)``: the wait before a request could be
        admitted (> 0)."""
        with self._lock:
            now = self.clock()
            cap = float(self.burst or 1.0)
            self._tokens = min(cap, self._tokens + (now - self._stamp) * self.rps)
            self._stamp = now
            waits = []
            if self._tokens < 1.0:
                waits.append((1.0 - self._tokens) / self.rps)
            if len(self._started) >= self.concurrent:
                waits.append(max(0.0, min(self._started.values()) + self.service_s - now))
            if waits:
                self.refused += 1
                return None, max(0.001, max(waits))
            self._tokens -= 1.0
            ticket = self.admitted
            self._started[ticket] = now
            self.admitted += 1
            return ticket, 0.0

    def done(self, ticket: int) -> None:
        """Free the slot of the admitted request ``ticket`` (call once it is answered)."""
        with self._lock:
            self._started.pop(ticket, None)

    def in_service(self) -> int:
        """Admitted requests not yet answered."""
        with self._lock:
            return len(self._started)


def retry_after_headers(wait_s: float) -> dict[str, str]:
    """The headers of a 429 asking to wait ``wait_s`` seconds: ``Retry-After`` in whole
    seconds (rounded up, at least 1) and ``retry-after-ms`` (rounded up, at least 1)."""
    return {
        "Retry-After": str(max(1, math.ceil(wait_s))),
        "retry-after-ms": str(max(1, math.ceil(wait_s * 1000))),
    }
