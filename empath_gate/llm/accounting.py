"""Counting every model call and enforcing the cost budget per call.

Every HTTP request to a provider is a call, whoever makes it (target, auditor, judge) and
whether it is a first attempt or a retry. :func:`empath_gate.llm.client.complete` reports each
one here through a :class:`Meter`, which wraps the provider's ``acompletion``:

* before an attempt starts, its estimated cost is **reserved** on the active :class:`Ledger`;
  once known spend plus reservations reaches the ledger's ``limit_usd`` (``max_cost_usd``) no
  attempt starts (:class:`~empath_gate.errors.BudgetExceeded`). Attempts run inside the
  per-model concurrency slot (:mod:`empath_gate.llm.retry`), so at most one call per slot can
  overshoot the limit, by what it costs beyond its reservation.
* when the attempt ends, the reservation is released and the attempt is counted: a call, its
  tokens and its cost when the provider returned usage (a failed attempt costs nothing known).
* a cache hit is no call and costs nothing; it is counted apart (``cache_hits``).

The active ledger and the current scope (a transcript id: the calls of one transcript, its
generation and its judging) live in context variables, so every task the run spawns inherits
them without threading them through each call site (:func:`ledger_session`, :func:`scope`).
Without an active ledger nothing is counted and no budget applies.
"""

from __future__ import annotations

import contextlib
import contextvars
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from empath_gate.errors import BudgetExceeded, ProviderError

ROLES: tuple[str, ...] = ("target", "auditor", "judge")


@dataclass
class RoleTally:
    """One role's calls (a mutable accumulator). ``calls``: provider attempts (HTTP requests);
    ``cache_hits``: replies served from the cache (no call); ``cost_usd``: known spend in USD;
    ``unpriced_calls``: attempts that returned usage the cost map cannot price; tokens as the
    provider reported them (0 when it did not). ``cache_saved_usd``: what the cache hits cost
    when they were first called (known prices only); ``batch_calls``: replies taken from a
    provider batch (not live calls), ``batch_cost_usd`` their known price at the batch rate and
    ``batch_saved_usd`` the known difference from the live price."""

    calls: int = 0
    cache_hits: int = 0
    cost_usd: float = 0.0
    unpriced_calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cache_saved_usd: float = 0.0
    batch_calls: int = 0
    batch_cost_usd: float = 0.0
    batch_saved_usd: float = 0.0

    def add(self, other: RoleTally) -> None:
        """Add ``other``'s counts to this tally."""
        for name, value in vars(other).items():
            setattr(self, name, getattr(self, name) + value)


def total_of(tallies: dict[str, RoleTally]) -> RoleTally:
    """The sum of a role -> tally mapping (a new tally)."""
    out = RoleTally()
    for t in tallies.values():
        out.add(t)
    return out


@dataclass
class Ledger:
    """The calls and the budget of one run. ``limit_usd``: ``max_cost_usd`` (None: no limit);
    ``spent_usd``: known spend; ``reserved_usd``: estimated cost of the attempts in flight;
    ``by_role``: totals per role; ``by_scope``: scope (transcript id) -> role -> tally;
    ``refused``: attempts the budget did not start. Single event loop (not thread-safe)."""

    limit_usd: float | None = None
    spent_usd: float = 0.0
    reserved_usd: float = 0.0
    refused: int = 0
    by_role: dict[str, RoleTally] = field(default_factory=lambda: {r: RoleTally() for r in ROLES})
    by_scope: dict[str, dict[str, RoleTally]] = field(default_factory=dict)

    @property
    def exhausted(self) -> bool:
        """True when spend plus reservations has reached the limit (no call may start)."""
        return self.limit_usd is not None and self.spent_usd + self.reserved_usd >= self.limit_usd

    def total(self) -> RoleTally:
        """All roles together."""
        return total_of(self.by_role)

    def scope_tally(self, key: str) -> dict[str, RoleTally]:
        """The role -> tally of scope ``key`` (empty when it made no call)."""
        return self.by_scope.get(key, {})

    def _tallies(self, role: str) -> list[RoleTally]:
        out = [self.by_role.setdefault(role, RoleTally())]
        key = _scope.get()
        if key is not None:
            out.append(self.by_scope.setdefault(key, {}).setdefault(role, RoleTally()))
        return out

    def reserve(self, role: str, estimate_usd: float) -> float:
        """Reserve ``estimate_usd`` for an attempt of ``role`` about to start and count the call;
        returns the amount reserved. Raises BudgetExceeded (nothing reserved or counted) when
        the budget is exhausted."""
        if self.exhausted:
            self.refused += 1
            raise BudgetExceeded(
                f"the budget max_cost_usd=${self.limit_usd} was reached (spent ${self.spent_usd:.4f}, "
                f"${self.reserved_usd:.4f} reserved by calls in flight): no new {role} call starts"
            )
        amount = max(0.0, estimate_usd)
        self.reserved_usd += amount
        for t in self._tallies(role):
            t.calls += 1
        return amount

    def settle(
        self, role: str, reserved: float, *, cost_usd: float | None, usage: tuple[int, int] | None
    ) -> None:
        """End an attempt: release ``reserved``; with ``usage`` (prompt, completion tokens the
        provider returned) add its tokens and its cost (``None``: unpriced)."""
        self.reserved_usd = max(0.0, self.reserved_usd - reserved)
        if usage is None:
            return
        if cost_usd is not None:
            self.spent_usd += cost_usd
        for t in self._tallies(role):
            t.prompt_tokens += usage[0]
            t.completion_tokens += usage[1]
            if cost_usd is None:
                t.unpriced_calls += 1
            else:
                t.cost_usd += cost_usd

    def hit(self, role: str, first_cost_usd: float | None = None) -> None:
        """Count a reply of ``role`` served from the cache (no call, no cost); ``first_cost_usd``:
        what the call that stored it cost (None: unknown), counted as saved."""
        for t in self._tallies(role):
            t.cache_hits += 1
            t.cache_saved_usd += first_cost_usd or 0.0

    def batched(self, role: str, cost_usd: float | None, saved_usd: float | None) -> None:
        """Count a reply of ``role`` taken from a provider batch: not a live call; ``cost_usd``
        its price at the batch rate, ``saved_usd`` the difference from the live price (None:
        unknown, counted as 0)."""
        if cost_usd is not None:
            self.spent_usd += cost_usd
        for t in self._tallies(role):
            t.batch_calls += 1
            t.batch_cost_usd += cost_usd or 0.0
            t.batch_saved_usd += saved_usd or 0.0


_ledger: contextvars.ContextVar[Ledger | None] = contextvars.ContextVar("empath_ledger", default=None)
_scope: contextvars.ContextVar[str | None] = contextvars.ContextVar("empath_scope", default=None)


def current_scope() -> str | None:
    """The scope (transcript id) calls are attributed to in this context, or None."""
    return _scope.get()


def active_ledger() -> Ledger | None:
    """The ledger of the run in progress in this context, or None."""
    return _ledger.get()


@contextlib.contextmanager
def ledger_session(limit_usd: float | None) -> Iterator[Ledger]:
    """The active ledger for the block: the one already active (an outer run), else a new one
    with ``limit_usd``. Tasks created inside the block inherit it."""
    current = _ledger.get()
    if current is not None:
        yield current
        return
    ledger = Ledger(limit_usd=limit_usd)
    token = _ledger.set(ledger)
    try:
        yield ledger
    finally:
        _ledger.reset(token)


@contextlib.contextmanager
def scope(key: str) -> Iterator[None]:
    """Attribute the calls made in the block (and in tasks it creates) to ``key`` as well."""
    token = _scope.set(key)
    try:
        yield
    finally:
        _scope.reset(token)


def usage_of(resp: Any) -> tuple[int, int] | None:
    """(prompt, completion) tokens of a provider response, or None when it reported no usage."""
    u = getattr(resp, "usage", None)
    if u is None:
        return None
    pt, ct = getattr(u, "prompt_tokens", None), getattr(u, "completion_tokens", None)
    if pt is None and ct is None:
        return None
    return int(pt or 0), int(ct or 0)


class Meter:
    """A stand-in for the litellm module that counts and budgets each ``acompletion`` attempt
    of one :func:`~empath_gate.llm.client.complete` call on the active ledger.

    ``lib``: the litellm module; ``role``: who calls; ``estimate_usd``: the reservation of one
    attempt; ``price``: ``fn(response) -> USD | None``. ``stopped`` is True once the budget
    refused an attempt (the caller turns the resulting provider error into BudgetExceeded)."""

    def __init__(
        self, lib: Any, role: str, estimate_usd: float, price: Callable[[Any], float | None]
    ) -> None:
        self.lib = lib
        self.role = role
        self.estimate_usd = estimate_usd
        self.price = price
        self.stopped: BudgetExceeded | None = None

    async def acompletion(self, **kwargs: Any) -> Any:
        """One provider attempt: reserve, call, settle (also when it fails or is cancelled)."""
        ledger = _ledger.get()
        if ledger is None:
            return await self.lib.acompletion(**kwargs)
        try:
            reserved = ledger.reserve(self.role, self.estimate_usd)
        except BudgetExceeded as exc:
            self.stopped = exc
            # a ProviderError passes the retry loop's classification unchanged and, not
            # retryable, ends it at once; the client raises ``stopped`` instead
            raise ProviderError(str(exc), kind="budget", retryable=False) from None
        try:
            resp = await self.lib.acompletion(**kwargs)
        except BaseException:
            ledger.settle(self.role, reserved, cost_usd=None, usage=None)
            raise
        usage = usage_of(resp)
        ledger.settle(self.role, reserved, cost_usd=self.price(resp) if usage else None, usage=usage)
        return resp
