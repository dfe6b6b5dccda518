"""Call slots: how many provider calls may be in flight at once, per role, per provider and in all.

A run's scheduler (:mod:`empath_gate.schedule`) opens a :class:`CallSlots` for its event loop
(:func:`slot_session`); every provider attempt then holds one slot of its role and one of the
run's total while it is in flight (:func:`call_slot`, taken by the retry loop
:func:`empath_gate.llm.retry.call_with_retries` around each attempt, and by a callable target
around each call of the team's function). A cache hit takes no slot; a retry's backoff sleep
holds none. The per-provider-model limit and its AIMD narrowing on 429s stay where they were
(:mod:`empath_gate.llm.retry`, :mod:`empath_gate.llm.adaptive`); :meth:`CallSlots.model_limit`
only says how large it is when ``provider_concurrency`` names the model, and
:meth:`CallSlots.provider_semaphore` adds a cap over all models of a provider it names.

Which waiting call gets a freed slot: each transcript the scheduler opens carries a
:class:`Ticket` (its open order and the turns it still has ahead, which the engine updates:
:func:`note_remaining`). While transcripts remain to be opened, the oldest open transcript goes
first, so transcripts finish and new ones open at the rate the slots allow; once every
transcript is open (:attr:`CallSlots.all_open`), the one with the most turns ahead goes first
(highest level first: optimal for unit-time chains on identical machines, T. C. Hu, "Parallel
sequencing and assembly line problems", Operations Research 9(6), 1961), so the last
transcripts do not run alone at the end. Calls without a ticket come after, in arrival order.

Pacing: a call granted its slots starts when the run's :class:`~empath_gate.llm.pacing.Pacer`
lets it, at most one start per the measured CPU per call of the process's Python threads, so
slots granted in a burst do not start as one clump; a call that finds no other call in flight
or being paced starts at once (:mod:`empath_gate.llm.pacing`).

Roles: ``target``, ``auditor``, ``judge`` and ``annotator`` (the dynamics annotator calls the
judge model with the judge's settings, but holds its own slots: :func:`slot_role`). Without an
open session (a bare :func:`~empath_gate.llm.client.complete` call) no slot applies.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
from collections.abc import AsyncIterator, Callable, Iterator, Mapping
from dataclasses import dataclass, field

from empath_gate.llm.pacing import Pacer, python_cpu_s

SLOT_ROLES: tuple[str, ...] = ("target", "auditor", "judge", "annotator")


@dataclass
class Ticket:
    """One open transcript (or conversation) as the call slots see it: ``order``, its open
    order (0-based); ``remaining``: the user turns it still has ahead (an upper bound; 0 while
    it is judged)."""

    order: int
    remaining: int = 0


class _Waiting:
    __slots__ = ("future", "seq", "ticket")

    def __init__(self, future: asyncio.Future[None], ticket: Ticket | None, seq: int) -> None:
        self.future, self.ticket, self.seq = future, ticket, seq


class PrioritySlots:
    """``value`` slots handed to waiting calls by priority (:meth:`CallSlots.priority`), not by
    arrival; a freed slot goes straight to the chosen waiter. Single event loop."""

    def __init__(self, value: int, owner: CallSlots) -> None:
        self._free = value
        self._owner = owner
        self._waiting: list[_Waiting] = []
        self._seq = 0

    async def acquire(self, ticket: Ticket | None) -> None:
        """Wait for a slot (at once when one is free and nobody waits)."""
        if self._free > 0 and not self._waiting:
            self._free -= 1
            return
        self._seq += 1
        entry = _Waiting(asyncio.get_running_loop().create_future(), ticket, self._seq)
        self._waiting.append(entry)
        try:
            await entry.future
        except asyncio.CancelledError:
            if entry in self._waiting:
                self._waiting.remove(entry)
            elif entry.future.done() and not entry.future.cancelled():
                self.release()  # granted, then cancelled before it ran: hand the slot on
            raise

    def release(self) -> None:
        """Free a slot: to the waiter of highest priority, else back to the pool."""
        while self._waiting:
            best = min(self._waiting, key=self._owner.priority)
            self._waiting.remove(best)
            if not best.future.done():
                best.future.set_result(None)
                return
        self._free += 1


@dataclass
class CallSlots:
    """The call limits of one run on one event loop (mutable counters; single event loop).

    ``role_limits``: role -> calls in flight at most (>= 1; a role not named has no role
    limit); ``total``: calls in flight at most over every role (None: no total limit);
    ``providers``: ``provider_concurrency``, a provider model (``openai/gpt-4o-mini``) or a
    provider prefix (``openai``) -> calls in flight at most. ``all_open``: every transcript of
    the plan is open (the scheduler sets it; it changes which waiting call goes first).
    Counters: ``in_flight`` and ``peak`` per role, ``peak_total``, ``calls`` per role (attempts
    admitted). ``pacer``: spaces the starts of granted calls (:mod:`empath_gate.llm.pacing`);
    ``cpu_clock``: the CPU clock it samples (seconds; :func:`~empath_gate.llm.pacing.python_cpu_s`);
    ``clock``: the time its reservations are made at (seconds; None: the event loop's clock).
    Raises ValueError for a limit below 1."""

    role_limits: Mapping[str, int]
    total: int | None = None
    providers: Mapping[str, int] = field(default_factory=dict)
    all_open: bool = False
    in_flight: dict[str, int] = field(default_factory=dict)
    peak: dict[str, int] = field(default_factory=dict)
    calls: dict[str, int] = field(default_factory=dict)
    peak_total: int = 0
    _roles: dict[str, PrioritySlots] = field(default_factory=dict, repr=False)
    _total: PrioritySlots | None = field(default=None, repr=False)
    _provider_sems: dict[str, asyncio.Semaphore] = field(default_factory=dict, repr=False)
    pacer: Pacer = field(default_factory=Pacer, repr=False)
    cpu_clock: Callable[[], float] = field(default=python_cpu_s, repr=False)
    clock: Callable[[], float] | None = field(default=None, repr=False)
    _pacing: int = field(default=0, repr=False)

    def __post_init__(self) -> None:
        bad = {k: v for k, v in {**self.role_limits, **self.providers}.items() if v < 1}
        if bad or (self.total is not None and self.total < 1):
            raise ValueError(f"call limits must be >= 1: {bad or self.total}")
        self._roles = {r: PrioritySlots(n, self) for r, n in self.role_limits.items()}
        self._total = PrioritySlots(self.total, self) if self.total is not None else None

    def priority(self, waiting: _Waiting) -> tuple[int, int, int, int]:
        """Sort key of a waiting call, smallest first (module docstring)."""
        t = waiting.ticket
        if t is None:
            return (1, 0, 0, waiting.seq)
        return (0, -t.remaining if self.all_open else 0, t.order, waiting.seq)

    @contextlib.asynccontextmanager
    async def hold(self, role: str) -> AsyncIterator[None]:
        """Hold one slot of ``role`` and one of the total while the block runs (role first, so
        a role at its limit does not keep total slots from the others); the block starts when
        the :attr:`pacer` lets it (:mod:`empath_gate.llm.pacing`)."""
        ticket = _ticket.get()
        sem = self._roles.get(role)
        if sem is not None:
            await sem.acquire(ticket)
        try:
            if self._total is not None:
                await self._total.acquire(ticket)
            try:
                await self._paced_start()
                self.in_flight[role] = self.in_flight.get(role, 0) + 1
                self.calls[role] = self.calls.get(role, 0) + 1
                self.peak[role] = max(self.peak.get(role, 0), self.in_flight[role])
                self.peak_total = max(self.peak_total, sum(self.in_flight.values()))
                try:
                    yield
                finally:
                    self.in_flight[role] -= 1
            finally:
                if self._total is not None:
                    self._total.release()
        finally:
            if sem is not None:
                sem.release()

    async def _paced_start(self) -> None:
        """Wait until the :attr:`pacer` lets a granted call start, then record its start. A
        call alone (none in flight, none being paced) starts at once; when the last call being
        paced is cancelled, the starts it and the others reserved are dropped."""
        alone = not self._pacing and not any(self.in_flight.values())
        now = self.clock() if self.clock is not None else asyncio.get_running_loop().time()
        delay = self.pacer.reserve(now, alone=alone)
        if delay > 0:
            self._pacing += 1
            try:
                await asyncio.sleep(delay)
            except BaseException:
                self._pacing -= 1
                if not self._pacing:  # no call left to start: its reservation is void
                    self.pacer.forget()
                raise
            self._pacing -= 1
        self.pacer.started(self.cpu_clock(), now + delay)

    def model_limit(self, model: str, default: int) -> int:
        """The calls in flight allowed to ``model`` (its ``provider_concurrency`` entry, else
        ``default``: the calling role's concurrency)."""
        return self.providers.get(model, default)

    def provider_semaphore(self, model: str) -> asyncio.Semaphore | None:
        """The semaphore capping every model of ``model``'s provider prefix (``openai`` of
        ``openai/gpt-4o-mini``; a bare name is ``openai``), None when ``provider_concurrency``
        does not name the prefix."""
        prefix = model.split("/", 1)[0] if "/" in model else "openai"
        limit = self.providers.get(prefix)
        if limit is None:
            return None
        sem = self._provider_sems.get(prefix)
        if sem is None:
            sem = self._provider_sems[prefix] = asyncio.Semaphore(limit)
        return sem


_slots: contextvars.ContextVar[CallSlots | None] = contextvars.ContextVar("empath_slots", default=None)
_role: contextvars.ContextVar[str | None] = contextvars.ContextVar("empath_slot_role", default=None)
_holding: contextvars.ContextVar[bool] = contextvars.ContextVar("empath_slot_held", default=False)
_ticket: contextvars.ContextVar[Ticket | None] = contextvars.ContextVar("empath_slot_ticket", default=None)


@contextlib.contextmanager
def ticket_session(ticket: Ticket) -> Iterator[Ticket]:
    """Make ``ticket`` the one the calls made in the block (and tasks it creates) wait with."""
    token = _ticket.set(ticket)
    try:
        yield ticket
    finally:
        _ticket.reset(token)


def note_remaining(turns: int) -> None:
    """Record that the current transcript has ``turns`` user turns ahead (no-op without a
    ticket)."""
    t = _ticket.get()
    if t is not None:
        t.remaining = turns


@contextlib.contextmanager
def slot_session(slots: CallSlots | None) -> Iterator[CallSlots | None]:
    """Make ``slots`` the active call slots for the block (and tasks it creates); an outer
    session's slots stay active when one is already open (one run, one set of limits)."""
    current = _slots.get()
    if current is not None or slots is None:
        yield current
        return
    token = _slots.set(slots)
    try:
        yield slots
    finally:
        _slots.reset(token)


def active_slots() -> CallSlots | None:
    """The call slots of the run in progress in this context, or None."""
    return _slots.get()


@contextlib.contextmanager
def slot_role(role: str) -> Iterator[None]:
    """Count the calls made in the block against ``role``'s slots whatever role makes them
    (the dynamics annotator's judge-model calls hold ``annotator`` slots)."""
    token = _role.set(role)
    try:
        yield
    finally:
        _role.reset(token)


@contextlib.asynccontextmanager
async def call_slot(role: str) -> AsyncIterator[None]:
    """Hold a slot of ``role`` (or of the role :func:`slot_role` set) while one call is in
    flight; nothing without an active session, and nothing more inside a call that already
    holds one (a team's callable target that calls a model through this client: one call, one
    slot, and no wait on a slot its own caller holds)."""
    slots = _slots.get()
    if slots is None or _holding.get():
        yield
        return
    async with slots.hold(_role.get() or role):
        token = _holding.set(True)
        try:
            yield
        finally:
            _holding.reset(token)
