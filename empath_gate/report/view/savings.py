"""What a run did not spend, for the footer of the diff (pure): calls and cost saved by the reply
cache, by sequential stopping and by a provider batch's discount.

* **cache**: every cache hit is a call not made; its cost is what the call that stored the reply
  cost (``cache_saved_usd``: known prices only).
* **sequential stopping**: a record with status ``stopped`` is a run not made because its
  conversation's decisions were settled; what it would have cost is estimated from the finished
  runs of the same conversation (else of the whole run): their mean calls (live, cached and
  batched: what a run asks for) and mean cost at live prices. Shown with ``about``.
* **batch discount**: the judge replies taken from a provider batch (``batch_calls``) and the
  known difference from the live price (``batch_saved_usd``; :mod:`empath_gate.llm.batches`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from empath_gate.gate.sequential import STOPPED
from empath_gate.report.view.format import plural

if TYPE_CHECKING:
    from empath_gate.results.model import Results, RunRecord



@dataclass(frozen=True)
class Savings:
    """Calls and USD not spent: ``cache_calls``/``cache_usd``; ``stopped_runs`` and the estimated
    ``stopped_calls``/``stopped_usd`` (None: no finished run to estimate from); ``batch_calls``
    and ``batch_usd``."""

    cache_calls: int = 0
    cache_usd: float = 0.0
    stopped_runs: int = 0
    stopped_calls: float | None = None
    stopped_usd: float | None = None
    batch_calls: int = 0
    batch_usd: float = 0.0


def _asked(r: RunRecord) -> tuple[int, float]:
    """(calls a run asked for, their cost at live prices) of a finished record."""
    calls = r.calls + r.cache_hits + sum(c.batch_calls for c in r.by_role.values())
    usd = r.cost_usd + sum(c.cache_saved_usd + c.batch_saved_usd for c in r.by_role.values())
    return calls, usd


def _estimate(stopped: Sequence[RunRecord], done: Sequence[RunRecord]) -> tuple[float | None, float | None]:
    calls = usd = 0.0
    for s in stopped:
        pool = [r for r in done if r.conversation_id == s.conversation_id] or list(done)
        if not pool:
            return None, None
        asked = [_asked(r) for r in pool]
        calls += sum(a[0] for a in asked) / len(asked)
        usd += sum(a[1] for a in asked) / len(asked)
    return calls, usd


def savings_of(results: Results) -> Savings:
    """The :class:`Savings` of ``results`` (module docstring)."""
    cost = results.metadata.cost
    stopped = [r for r in results.records if r.status == STOPPED]
    done = [r for r in results.records if r.status == "complete"]
    calls, usd = _estimate(stopped, done) if stopped else (None, None)
    return Savings(
        cache_calls=cost.cache_hits, cache_usd=cost.cache_saved_usd, stopped_runs=len(stopped),
        stopped_calls=calls, stopped_usd=usd, batch_calls=cost.batch_calls, batch_usd=cost.batch_saved_usd,
    )


def savings_text(results: Results) -> str | None:
    """``42 calls by the cache ($0.31); about 36 calls and $0.20 by sequential stopping (6 runs
    stopped); $0.05 by the batch discount (8 judge replies from a provider batch)``, or None
    when nothing was saved."""
    s = savings_of(results)
    parts: list[str] = []
    if s.cache_calls:
        money = f" (${s.cache_usd:,.2f})" if s.cache_usd else ""
        parts.append(f"{s.cache_calls} calls by the cache{money}")
    if s.stopped_runs:
        runs = f"{plural(s.stopped_runs, 'run')} stopped"
        if s.stopped_calls is None:
            parts.append(f"{runs} by sequential stopping")
        else:
            money = f" and ${s.stopped_usd:,.2f}" if s.stopped_usd else ""
            parts.append(f"about {s.stopped_calls:.0f} calls{money} by sequential stopping ({runs})")
    if s.batch_calls:
        replies = f"{s.batch_calls} judge replies from a provider batch"
        parts.append(f"${s.batch_usd:,.2f} by the batch discount ({replies})" if s.batch_usd
                     else f"{replies} (discount unknown: the model is not priced)")
    return "; ".join(parts) or None


__all__ = ["STOPPED", "Savings", "savings_of", "savings_text"]
