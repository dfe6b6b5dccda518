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

Roles: ``target``, ``auditor``, ``judge`` and ``annotator`` (the dynamics annotator calls the
judge model with the judge's settings, but holds its own slots: :func:`slot_role`). Without an
open session (a bare :func:`~empath_gate.llm.client.complete` call) no slot applies.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
from collections.abc import AsyncIterator, Iterator, Mapping
from dataclasses import dataclass, field

SLOT_ROLES: tuple[str, ...] = ("target", "auditor", "judge", "annotator")


@dataclass
class CallSlots:
    """The call limits of one run on one event loop (mutable counters; single event loop).

    ``role_limits``: role -> calls in flight at most (>= 1; a role not named has no role
    limit); ``total``: calls in flight at most over every role (None: no total limit);
    ``providers``: ``provider_concurrency``, a provider model (``openai/gpt-4o-mini``) or a
    provider prefix (``openai``) -> calls in flight at most. Counters: ``in_flight`` and
    ``peak`` per role, ``peak_total``, ``calls`` per role (attempts admitted)."""

    role_limits: Mapping[str, int]
    total: int | None = None
    providers: Mapping[str, int] = field(default_factory=dict)
    in_flight: dict[str, int] = field(default_factory=dict)
    peak: dict[str, int] = field(default_factory=dict)
    calls: dict[str, int] = field(default_factory=dict)
    peak_total: int = 0
    _roles: dict[str, asyncio.Semaphore] = field(default_factory=dict, repr=False)
    _total: asyncio.Semaphore | None = field(default=None, repr=False)
    _provider_sems: dict[str, asyncio.Semaphore] = field(default_factory=dict, repr=False)

    def __post_init__(self) -> None:
        bad = {k: v for k, v in {**self.role_limits, **self.providers}.items() if v < 1}
        if bad or (self.total is not None and self.total < 1):
            raise ValueError(f"call limits must be >= 1: {bad or self.total}")
        self._roles = {r: asyncio.Semaphore(n) for r, n in self.role_limits.items()}
        self._total = asyncio.Semaphore(self.total) if self.total is not None else None

    @contextlib.asynccontextmanager
    async def hold(self, role: str) -> AsyncIterator[None]:
        """Hold one slot of ``role`` and one of the total while the block runs (role first, so
        a role at its limit does not keep total slots from the others)."""
        async with contextlib.AsyncExitStack() as stack:
            sem = self._roles.get(role)
            if sem is not None:
                await stack.enter_async_context(sem)
            if self._total is not None:
                await stack.enter_async_context(self._total)
            self.in_flight[role] = self.in_flight.get(role, 0) + 1
            self.calls[role] = self.calls.get(role, 0) + 1
            self.peak[role] = max(self.peak.get(role, 0), self.in_flight[role])
            self.peak_total = max(self.peak_total, sum(self.in_flight.values()))
            try:
                yield
            finally:
                self.in_flight[role] -= 1

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
