"""Pacing call starts, so that call slots freed together do not restart as one clump.

Why: a run's calls hold their slots for about the provider's latency. When many calls leave at
once (the first round of a run, or replies that arrive together), they come back together; the
event loop then works through their client-side CPU (request building, reply parsing, pricing
and logging inside litellm: a few milliseconds each) in interleaved pieces, so every call of the
clump waits for most of the clump's CPU, round after round. :class:`Pacer` spaces the starts by
the event loop's CPU per call, so a burst of granted slots leaves one call after another and the
replies come back spread out.

The interval is an EWMA (weight :data:`PACE_ALPHA`) of the event-loop thread's CPU time between
two consecutive call starts (each sample at most :data:`PACE_SAMPLE_CAP_S`): over a run this is
the loop's CPU per call, everything the loop does included. Starting calls one interval apart is
therefore never slower than the loop could start them anyway (each start costs that much loop
CPU on average); with a provider that answers at once (the tests' fake server) the calls are
CPU-bound and the interval is their own CPU, so pacing changes nothing measurable. A call is
never delayed by more than (calls ahead of it in the pacing queue) x the cap:
:func:`pace_delay`. Pacing changes when a call starts, never which calls are made or in what
order slots are granted.

Single event loop, not thread-safe (the owner, :class:`~empath_gate.llm.slots.CallSlots`, is
per loop). Clocks are passed in, so the decisions are pure and tested without timing.
"""

from __future__ import annotations

from dataclasses import dataclass

PACE_ALPHA = 1 / 16
"""Weight of the newest sample in the CPU-per-call EWMA (project choice: about the last 16
starts, half a round at the bench's 32 calls in flight, so the estimate follows a change of
phase, generation to judging, within a round)."""

PACE_SAMPLE_CAP_S = 0.02
"""Longest loop CPU time one gap between two starts counts for, in seconds (project choice:
about 4 x litellm's CPU per call measured by ``bench/bench_engine.py``, 4-6 ms; a longer gap is
other work between calls, such as writing a report, not the cost of a call). It also bounds the
interval, so no call waits more than this per call ahead of it."""


def next_estimate(estimate_s: float, sample_s: float, alpha: float = PACE_ALPHA,
                  cap_s: float = PACE_SAMPLE_CAP_S) -> float:
    """The EWMA of loop CPU per call after one more gap of ``sample_s`` seconds of loop CPU
    (clamped to ``[0, cap_s]``): ``estimate + alpha * (sample - estimate)``. Never negative,
    never above ``cap_s`` when ``estimate_s`` is not."""
    sample = min(max(sample_s, 0.0), cap_s)
    return estimate_s + alpha * (sample - estimate_s)


def pace_delay(now_s: float, next_at_s: float, interval_s: float) -> tuple[float, float]:
    """``(delay, next_at)`` for a call that may start at ``now_s`` (seconds, monotonic): it
    starts at ``max(now_s, next_at_s)``, ``delay`` seconds from now (>= 0), and the next call
    not before that start plus ``interval_s``. A call alone (``next_at_s <= now_s``) is never
    delayed; a burst of k calls at one instant starts over (k - 1) x ``interval_s``."""
    start = max(now_s, next_at_s)
    return start - now_s, start + max(interval_s, 0.0)


@dataclass
class Pacer:
    """Spaces call starts by the event loop's CPU per call (module docstring).

    ``cpu_per_call_s``: the current EWMA, seconds (0 until two calls have started: the first
    calls of a run are not paced); ``paced``: calls delayed so far; ``delay_s``: their total
    delay, seconds."""

    cpu_per_call_s: float = 0.0
    paced: int = 0
    delay_s: float = 0.0
    _next_at: float = float("-inf")
    _last_cpu: float | None = None

    def reserve(self, now_s: float) -> float:
        """Seconds the call asking at ``now_s`` (the loop's monotonic clock) waits before it
        starts (0: at once); reserves its start, so calls asking together leave in the order
        they asked."""
        delay, self._next_at = pace_delay(now_s, self._next_at, self.cpu_per_call_s)
        if delay > 0:
            self.paced += 1
            self.delay_s += delay
        return delay

    def started(self, loop_cpu_s: float) -> None:
        """Record a call start; ``loop_cpu_s``: the event-loop thread's CPU clock now
        (``time.thread_time()`` in that thread)."""
        if self._last_cpu is not None:
            self.cpu_per_call_s = next_estimate(self.cpu_per_call_s, loop_cpu_s - self._last_cpu)
        self._last_cpu = loop_cpu_s
