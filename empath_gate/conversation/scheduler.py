"""The scheduler of a run: calls are limited, transcripts advance as far as the limits allow.

A run's concurrency is spent on **calls in flight**, not on transcript slots
(:mod:`empath_gate.llm.slots`): at most ``Settings.concurrency`` calls over every role, at most
each role's ``concurrency`` for the target, the auditor and the judge, and
``annotator_concurrency`` (unset: the judge's) for the dynamics annotator; a provider model or
a provider named in ``provider_concurrency`` has that limit too (its AIMD narrowing on 429s
stays in :mod:`empath_gate.llm.adaptive`). A transcript's turns are sequential, so one
transcript has at most one generation call in flight: :func:`drive` keeps
:func:`open_window` transcripts open at once (twice ``Settings.concurrency``: enough to keep
every call slot busy while half of them wait for their next turn, and few enough that memory
stays flat on plans of any size), each taken from generation through judging and annotation
to its record before the next is opened. Judge calls of a finished transcript therefore start
at once, in the same slots and the same event loop as the generation of the others. Each open
transcript carries a :class:`~empath_gate.llm.slots.Ticket`, so a freed call slot goes to the
oldest open transcript while some remain to be opened, then to the one with the most turns
ahead (:mod:`empath_gate.llm.slots`).

Sequential gating (``stop``, a :data:`StopRule` in :func:`empath_gate.runner.execute`): a
conversation's runs go strictly one after another, the next starting only once the previous
one has its record (generated and judged); after each record the rule is asked, with the
conversation id and the records so far in run order, whether to stop; a reason stops the
conversation, and each of its runs not started gets the ``stopped`` outcome with that reason.
Without a rule every run is an independent unit of work, taken in spec order.

Every spec yields exactly one result, returned in spec order.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence
from typing import TYPE_CHECKING, TypeVar

from empath_gate.llm.slots import CallSlots, Ticket, active_slots, ticket_session

if TYPE_CHECKING:
    from empath_gate.conversation.runspec import RunSpec
    from empath_gate.gate.sequential import StopRule
    from empath_gate.settings import Settings

__all__ = ["StopRule", "call_slots", "drive", "open_window"]

R = TypeVar("R")


def __getattr__(name: str) -> object:
    """``StopRule``, imported on first use: the gate's module loads the gate's statistics
    (scipy), about 0.7 s of CPU that generating transcripts does not need."""
    if name == "StopRule":
        from empath_gate.gate.sequential import StopRule

        return StopRule
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


WINDOW_FACTOR = 2
"""Transcripts open at once per call slot of ``Settings.concurrency`` (ours: with one call per
transcript in flight at most, two transcripts per slot keep the slots busy while every other
transcript waits between its turns; the bench ``bench/bench_engine.py`` measures it)."""


def open_window(settings: Settings) -> int:
    """Transcripts open at once: :data:`WINDOW_FACTOR` x ``settings.concurrency`` (>= 1)."""
    return max(1, WINDOW_FACTOR * settings.concurrency)


def call_slots(settings: Settings) -> CallSlots:
    """The call limits of a run of ``settings``: each role's ``concurrency`` (the annotator's:
    ``annotator_concurrency``, unset: the judge's), ``concurrency`` in all, and
    ``provider_concurrency``."""
    annotator = settings.annotator_concurrency or settings.judge.concurrency
    limits = {
        "target": settings.target_role.concurrency,
        "auditor": settings.auditor.concurrency,
        "judge": settings.judge.concurrency,
        "annotator": annotator,
    }
    return CallSlots(limits, total=settings.concurrency, providers=dict(settings.provider_concurrency))


def _units(specs: Sequence[RunSpec], sequential: bool) -> list[list[int]]:
    """Spec indices grouped into units of work: one spec each, or (``sequential``) one
    conversation each, its runs in run order; units in order of first appearance."""
    if not sequential:
        return [[i] for i in range(len(specs))]
    groups: dict[str, list[int]] = {}
    for i, spec in enumerate(specs):
        groups.setdefault(spec.conversation_id, []).append(i)
    return [sorted(ix, key=lambda i: specs[i].run) for ix in groups.values()]


async def drive(
    specs: Sequence[RunSpec],
    step: Callable[[RunSpec], Awaitable[R]],
    *,
    window: int,
    stop: Callable[[str, list[R]], str | None] | None = None,
    stopped: Callable[[RunSpec, str], R] | None = None,
) -> list[R]:
    """``step(spec)`` for every spec, at most ``window`` at once; results in spec order.

    ``stop``: sequential gating (module docstring): ``stop(conversation_id, results so far in
    run order)`` after each step of a conversation; a reason makes ``stopped(spec, reason)`` the
    result of each later run of it. Raises ValueError when ``stop`` is given without
    ``stopped``; an exception of ``step`` propagates (the other steps are cancelled with the
    run)."""
    if stop is not None and stopped is None:
        raise ValueError("a stop rule needs a stopped() result for the runs it stops")
    results: list[R | None] = [None] * len(specs)
    all_units = _units(specs, stop is not None)
    units = iter(enumerate(all_units))
    slots = active_slots()

    async def worker() -> None:
        for order, unit in units:
            if slots is not None and order == len(all_units) - 1:
                slots.all_open = True  # the last transcript is open: the longest go first
            done: list[R] = []
            reason: str | None = None
            with ticket_session(Ticket(order)) as ticket:
                for i in unit:
                    if reason is not None:
                        assert stopped is not None
                        results[i] = stopped(specs[i], reason)
                        continue
                    ticket.remaining = specs[i].max_turns
                    results[i] = result = await step(specs[i])
                    done.append(result)
                    if stop is not None:
                        reason = stop(specs[i].conversation_id, list(done))

    n = max(1, min(window, len(specs)))
    await asyncio.gather(*(worker() for _ in range(n)))
    missing = [specs[i].transcript_id for i, r in enumerate(results) if r is None]
    if missing:  # pragma: no cover - every index is consumed exactly once
        raise RuntimeError(f"no result for {missing[:5]}")
    return [r for r in results if r is not None]
