"""Running totals of a plan (:class:`PlanStats`, the progress line) and their recount from
finished transcripts (:func:`summarize`)."""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, fields, replace
from typing import TYPE_CHECKING, Any

from empath_gate.conversation.transcript import Transcript, auditor_tally

if TYPE_CHECKING:
    from empath_gate.llm.accounting import Ledger


@dataclass
class PlanStats:
    """Running totals of a plan (a mutable accumulator). ``calls``: provider attempts made by
    every role, retries and failed attempts included (HTTP requests; cache hits excluded);
    ``cost_usd``: known spend in USD; ``unpriced_calls``: attempts whose price is unknown (these
    four come from the run's ledger: :meth:`sync`); ``not_started``: transcripts the budget stopped;
    ``stopped``: runs sequential gating did not start (they leave the plan: the line's total and
    the time left count only runs still to run);
    ``auditor_refusals``: LLM-auditor refusals retried successfully, ``auditor_fallbacks``: turns
    the script replaced (:class:`~empath_gate.conversation.transcript.AuditorTally`)."""

    total: int = 0
    done: int = 0
    calls: int = 0
    cache_hits: int = 0
    cost_usd: float = 0.0
    unpriced_calls: int = 0
    errors: int = 0
    not_started: int = 0
    stopped: int = 0
    auditor_refusals: int = 0
    auditor_fallbacks: int = 0
    target_filtered: int = 0

    def sync(self, ledger: Ledger) -> None:
        """Take calls, cache hits, known cost and unpriced calls from ``ledger``'s totals."""
        total = ledger.total()
        self.calls, self.cache_hits = total.calls, total.cache_hits
        self.cost_usd, self.unpriced_calls = total.cost_usd, total.unpriced_calls

    def cost_text(self) -> str:
        """``$X`` when every call was priced, else ``≥ $X, k calls unpriced``."""
        if self.unpriced_calls:
            return f"≥ ${self.cost_usd:.4f}, {self.unpriced_calls} calls unpriced"
        return f"${self.cost_usd:.4f}"

    def line(self, elapsed_s: float | None = None) -> str:
        """The progress line, e.g. ``transcripts 12/100 · 73 calls, 5 cached · ≥ $0.0123, 4 calls
        unpriced · about 6 min left``; the time left (:func:`time_left_text`) needs
        ``elapsed_s``, the seconds since the plan started."""
        to_run = self.total - self.stopped
        parts = [
            f"transcripts {self.done}/{to_run}",
            f"{self.calls} calls, {self.cache_hits} cached",
            self.cost_text(),
        ]
        left = time_left_text(self.done, to_run, elapsed_s)
        if self.stopped:
            parts.append(f"{self.stopped} runs stopped early (settled)")
        if left:
            parts.append(left)
        if self.errors:
            parts.append(f"{self.errors} errors")
        if self.target_filtered:
            parts.append(f"{self.target_filtered} target replies filtered")
        if self.auditor_fallbacks or self.auditor_refusals:
            parts.append(f"auditor: {self.auditor_refusals} refusals, {self.auditor_fallbacks} fallbacks")
        if self.not_started:
            parts.append(f"budget reached: {self.not_started} not started")
        return "empath-gate: " + " · ".join(parts)

    def progress_line(self, elapsed_s: float | None = None) -> ProgressLine:
        """:meth:`line` as a :class:`ProgressLine` carrying a copy of these totals."""
        return ProgressLine(replace(self), elapsed_s)

    def to_dict(self) -> dict[str, Any]:
        """The totals as plain JSON values (what an xdist worker sends its controller)."""
        return asdict(self)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> PlanStats:
        """Totals from :meth:`to_dict`'s output; unknown keys are ignored, a missing,
        non-numeric or non-finite (NaN, infinite) value counts 0."""
        out = cls()
        for f in fields(cls):
            value = data.get(f.name)
            if isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value):
                setattr(out, f.name, float(value) if f.name == "cost_usd" else int(value))
        return out

    @classmethod
    def combined(cls, parts: Iterable[PlanStats]) -> PlanStats:
        """The totals of several plans run side by side (every count and the cost summed), e.g.
        the shares of a run's xdist workers."""
        out = cls()
        for part in parts:
            for f in fields(cls):
                setattr(out, f.name, getattr(out, f.name) + getattr(part, f.name))
        return out


class ProgressLine(str):
    """A progress line (:meth:`PlanStats.line`) that also carries its totals (``stats``, a copy)
    and the seconds since its plan started (``elapsed_s``): a front-end that adds up several
    plans' progress (the pytest plugin's xdist controller) reads the numbers, not the text. Every
    other front-end sees a plain ``str``."""

    stats: PlanStats
    elapsed_s: float | None

    def __new__(cls, stats: PlanStats, elapsed_s: float | None = None) -> ProgressLine:
        obj = super().__new__(cls, stats.line(elapsed_s=elapsed_s))
        obj.stats, obj.elapsed_s = stats, elapsed_s
        return obj


def time_left_text(done: int, total: int, elapsed_s: float | None) -> str | None:
    """``about 40 s left`` / ``about 6 min left`` / ``about 2 h 5 min left`` (pure): the time
    left at the pace so far, ``elapsed_s / done`` seconds per transcript for the ``total - done``
    still to run. None before the first transcript, once all are done, or without
    ``elapsed_s`` (a pace from nothing would be a made-up figure)."""
    if elapsed_s is None or done <= 0 or done >= total:
        return None
    left = elapsed_s / done * (total - done)
    if left < 90:
        return f"about {max(1, round(left))} s left"
    minutes = round(left / 60)
    if minutes < 90:
        return f"about {minutes} min left"
    return f"about {minutes // 60} h {minutes % 60} min left"


def summarize(transcripts: Sequence[Transcript]) -> PlanStats:
    """Totals of finished transcripts (pure): calls, cache hits, known cost, unpriced calls,
    errors, budget stops, auditor refusals retried successfully and fallbacks, filtered target
    replies. ``calls`` counts
    turns served by a provider (a turn whose call was retried counts once)."""
    s = PlanStats(total=len(transcripts), done=len(transcripts))
    for t in transcripts:
        for turn in t.turns:
            if turn.model is None and turn.cache == "off":
                continue  # scripted user turn: no call
            if turn.cache == "hit":
                s.cache_hits += 1
                continue
            s.calls += 1
            if turn.cost_usd is None:
                s.unpriced_calls += 1
            else:
                s.cost_usd += turn.cost_usd
        auditor = auditor_tally(t)
        s.auditor_refusals += auditor.refusals_recovered
        s.auditor_fallbacks += auditor.fallbacks
        s.target_filtered += t.target_filtered
        s.errors += t.status == "error"
        s.not_started += t.status == "budget" and not t.turns
    return s
