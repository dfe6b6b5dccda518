"""Pacing call starts, so that call slots freed together do not restart as one clump.

Why: a run's calls hold their slots for about the provider's latency. When many calls leave at
once (the first round of a run, or replies that arrive together), they come back together; the
event loop then works through their client-side CPU (request building, reply parsing, pricing
and logging inside litellm: a few milliseconds each) in interleaved pieces, so every call of the
clump waits for most of the clump's CPU, round after round. :class:`Pacer` spaces the starts by
the CPU per call of the process's Python threads, so a burst of granted slots leaves one call
after another and the replies come back spread out.

The interval is an EWMA (weight :data:`PACE_ALPHA`) of the CPU time of the process's Python
threads between two consecutive call starts (:func:`python_cpu_s`; each sample at most
:data:`PACE_SAMPLE_CAP_S`): over a run this is the CPU per call that competes with the event loop.
All Python threads, not the event-loop thread alone: for providers outside
:data:`~empath_gate.llm.loop.INLINE_PROVIDERS` litellm builds each request in a worker thread
(``acompletion`` runs ``completion`` in the loop's default executor), and that thread holds the
same interpreter lock the loop needs. Not the whole process: the embedded model's
llama.cpp threads compute without the lock (:data:`NATIVE_THREAD_PREFIX`). The
estimate starts at :data:`PACE_PRIOR_S`, not at 0, because the first round is where the clump
forms: while every call of a burst is paced, the CPU between two starts cannot exceed the
interval, so an estimate that starts low stays low for the whole burst. Starting calls one
interval apart is never much slower than the loop could start them anyway (each start costs
that much CPU on average). A call that finds no other call in flight or waiting to start is
never delayed (``reserve(..., alone=True)``): a caller making one call at a time has no clump
to spread. A call is never delayed by more than (calls ahead of it in the pacing queue) x the
cap: :func:`pace_delay`. Pacing changes when a call starts, never which calls are made or in
what order slots are granted.

Single event loop, not thread-safe (the owner, :class:`~empath_gate.llm.slots.CallSlots`, is
per loop). Clocks are passed in, so the decisions are pure and tested without timing.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass

PACE_ALPHA = 1 / 16
"""Weight of the newest sample in the CPU-per-call EWMA (project choice: about the last 16
starts, half a round at the bench's 32 calls in flight, so the estimate follows a change of
phase, generation to judging, within a round)."""

PACE_PRIOR_S = 0.008
"""The estimate of CPU per call before any call has started, in seconds (project choice: the
client CPU per call of bare litellm and of the engine measured by ``bench/bench_engine.py`` on
2-core machines, 5 to 10 ms, litellm's worker thread included). Two repeats each of the engine
row there, 2026-12-03: a prior of 0 gave 19.90 to 20.06 s, 8 to 12 ms gave 19.58 to 19.81 s."""

PACE_SAMPLE_CAP_S = 0.02
"""Longest CPU time one gap between two starts counts for, in seconds (project choice:
2 to 4 x the CPU per call measured by ``bench/bench_engine.py``, 5 to 10 ms; a longer gap is
other work between calls, such as writing a report, not the cost of a call). It also bounds the
interval, so no call waits more than this per call ahead of it."""


NATIVE_THREAD_PREFIX = "empath-local-model"
"""Name prefix of the thread that runs the embedded model (:mod:`empath_gate.llm.local`): its
llama.cpp work runs without the interpreter lock, on threads of its own, so its CPU does not
delay the event loop and :func:`python_cpu_s` leaves it out."""


_THREAD_CLOCK = getattr(time, "pthread_getcpuclockid", None)


def python_cpu_s() -> float:
    """CPU seconds used so far by this process's Python threads (every thread
    :func:`threading.enumerate` lists, except the embedded model's, :data:`NATIVE_THREAD_PREFIX`):
    the CPU that competes with the event loop for the interpreter lock.

    While no thread of the embedded model exists (every run without a ``local/`` model) this is
    ``time.process_time()``: one clock read, every thread of the process. Once one exists, the
    per-thread clocks of the other listed threads are summed (``time.pthread_getcpuclockid``:
    Linux and most Unix), one clock read each, about 1 to 2 microseconds per thread; threads
    created outside Python (llama.cpp's OpenMP team) are not listed, so not counted, and a thread
    that ends takes its CPU out of the sum, so two readings can step back (:func:`next_estimate`
    clamps a sample to 0). Where per-thread clocks do not exist (Windows, macOS) it is
    ``time.process_time()`` throughout."""
    threads = threading.enumerate()
    if _THREAD_CLOCK is None or not any(t.name.startswith(NATIVE_THREAD_PREFIX) for t in threads):
        return time.process_time()
    total = 0.0
    for thread in threads:
        ident = thread.ident
        if ident is None or thread.name.startswith(NATIVE_THREAD_PREFIX):
            continue
        try:
            total += time.clock_gettime(_THREAD_CLOCK(ident))
        except OSError:  # the thread ended meanwhile
            continue
    return total


def next_estimate(estimate_s: float, sample_s: float, alpha: float = PACE_ALPHA,
                  cap_s: float = PACE_SAMPLE_CAP_S) -> float:
    """The EWMA of CPU per call after one more gap of ``sample_s`` seconds of CPU
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
    """Spaces call starts by the CPU per call of the process's Python threads (module docstring).

    ``cpu_per_call_s``: the current EWMA, seconds (:data:`PACE_PRIOR_S` until two calls have
    started); ``paced``: calls delayed so far; ``delay_s``: their total
    delay, seconds."""

    cpu_per_call_s: float = PACE_PRIOR_S
    paced: int = 0
    delay_s: float = 0.0
    _next_at: float = float("-inf")
    _last_cpu: float | None = None
    _last_start: float = float("-inf")

    def reserve(self, now_s: float, *, alone: bool = False) -> float:
        """Seconds the call asking at ``now_s`` (the loop's monotonic clock) waits before it
        starts (0: at once); reserves its start, so calls asking together leave in the order
        they asked. ``alone``: no other call is in flight or waiting to start; such a call
        starts at once, and the next one not before one interval after it."""
        delay, self._next_at = pace_delay(now_s, float("-inf") if alone else self._next_at,
                                          self.cpu_per_call_s)
        if delay > 0:
            self.paced += 1
            self.delay_s += delay
        return delay

    def started(self, cpu_s: float, now_s: float | None = None) -> None:
        """Record a call start; ``cpu_s``: the CPU clock now (:func:`python_cpu_s`, seconds);
        ``now_s``: the start's time on the clock :meth:`reserve` reads (for :meth:`forget`)."""
        if self._last_cpu is not None:
            self.cpu_per_call_s = next_estimate(self.cpu_per_call_s, cpu_s - self._last_cpu)
        self._last_cpu = cpu_s
        if now_s is not None:
            self._last_start = now_s

    def forget(self) -> None:
        """Drop the starts reserved by calls that will not start (called when the last call
        waiting to start was cancelled): the next call is spaced from the last real start only."""
        self._next_at = self._last_start + self.cpu_per_call_s
