"""How the LLM auditor did over a run, for every report (pure): the degraded transcripts (the
auditor fell back on more than ``max_auditor_fallback_share`` of its turns, so their tests are
incomplete) and the fallbacks and refusals retried successfully that degraded nothing."""

from __future__ import annotations

from dataclasses import dataclass

from empath_gate.gate.unknown import degraded_reason
from empath_gate.report.view.format import plural
from empath_gate.results import Results


@dataclass(frozen=True)
class DegradedRun:
    """One degraded transcript: its conversation, 0-based run and why
    (``auditor fell back on 4 of 6 turns (refusal)``)."""

    conversation_id: str
    run: int
    reason: str


@dataclass(frozen=True)
class AuditorSummary:
    """``degraded``: degraded transcripts in record order; ``fallbacks``: fallback turns over
    every transcript; ``refusals_recovered``: refusals retried successfully (the turn stayed the
    auditor's); ``max_share``: the limit used (0-1)."""

    degraded: tuple[DegradedRun, ...]
    fallbacks: int
    refusals_recovered: int
    max_share: float

    @property
    def any(self) -> bool:
        """True when there is something to report (a fallback or a recovered refusal)."""
        return bool(self.fallbacks or self.refusals_recovered or self.degraded)

    @property
    def degraded_conversations(self) -> tuple[str, ...]:
        """The conversations with a degraded transcript, first-seen order."""
        return tuple(dict.fromkeys(d.conversation_id for d in self.degraded))

    def headline(self) -> str:
        """``auditor: 2 transcripts degraded (fell back on more than 50% of turns), 5 fallbacks,
        3 refusals retried`` (plain text)."""
        bits = []
        if self.degraded:
            n = len(self.degraded)
            bits.append(f"{plural(n, 'transcript')} degraded (fell back on more than "
                        f"{self.max_share:.0%} of turns; their tests are incomplete)")
        bits.append(f"{plural(self.fallbacks, 'fallback')}")
        bits.append(f"{plural(self.refusals_recovered, 'refusal')} retried")
        return "auditor: " + ", ".join(bits)


def auditor_summary(results: Results) -> AuditorSummary:
    """The :class:`AuditorSummary` of ``results`` (only completed transcripts can be degraded;
    a stopped one is already no evidence)."""
    share = results.metadata.max_auditor_fallback_share
    degraded = []
    for r in results.records:
        why = degraded_reason(r, share) if r.status == "complete" else None
        if why is not None:
            degraded.append(DegradedRun(r.conversation_id, r.run, why))
    return AuditorSummary(
        degraded=tuple(degraded),
        fallbacks=sum(r.auditor_fallbacks for r in results.records),
        refusals_recovered=sum(r.auditor_refusals for r in results.records),
        max_share=share,
    )
