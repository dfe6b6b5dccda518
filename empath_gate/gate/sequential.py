"""Sequential gating: stop a conversation's runs once the decision of every metric it serves is
settled (pure; off by default).

With a rule, a conversation's runs go one after another, each started once the previous one is
judged; after each judged run the runner asks the rule (:data:`StopRule`) whether to stop. A
non-None answer is the reason, and every run not started is recorded with status ``stopped``
and that reason (such runs are *not run*: never an error, never a pass).

A conversation stops only when all of these hold after its ``k`` judged runs (of N):

* every run so far completed, is evidence (its auditor did not fall back too often:
  :func:`empath_gate.gate.unknown.degraded_reason`) and gave every metric a score or N/A: a
  JudgeFailure, a criteria-only run or a missing verdict settles nothing (fail closed);
* each metric has at least ``min_judged_runs`` judged runs, and at least
  :data:`CRITICAL_FLOOR` for a critical metric;
* with a baseline whose suite scores the metric and ``fail_on`` gating regressions, ``k``
  reaches the runs the comparison uses (``min(N, baseline runs)``, the shared runs of
  :mod:`empath_gate.analysis.regression`): the comparison pools every conversation's runs, so no
  conversation's share of it settles earlier, and runs past the shared ones never enter it;
* each metric's threshold decision is settled: mode ``exact`` by
  :func:`empath_gate.gate.settle.exact_settled` (no score of the remaining runs on the 1-10
  scale changes it); mode ``sequential`` by that, or by stochastic curtailment at the stated
  error rate ``e`` (:func:`empath_gate.gate.settle.reversal_probability` <= ``e``: Lan, Simon &
  Halperin 1982; Spiegelhalter, Freedman & Blackburn 1986).

The suite-level judge-failure rate counts the runs that were run: stopping clean runs can only
raise it (fail closed).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from empath_gate.gate.limits import gates
from empath_gate.gate.settle import exact_settled, reversal_probability
from empath_gate.gate.unknown import degraded_reason
from empath_gate.instrument.models import ResolvedThresholds

if TYPE_CHECKING:
    from empath_gate.instrument.models import Instrument
    from empath_gate.plan.build import Plan
    from empath_gate.results.model import Results, RunRecord

GatingMode = Literal["off", "exact", "sequential"]
StopRule = Callable[[str, "Sequence[RunRecord]"], "str | None"]
"""``rule(conversation_id, records so far in run order) -> reason to stop, or None``: asked by
the scheduler (:mod:`empath_gate.conversation.scheduler`) after each run of a conversation has
its record; a reason (such as ``"settled"``) stops the conversation and becomes the ``error``
of each of its runs not started (status ``stopped``)."""

CRITICAL_FLOOR = 3
"""Fewest judged runs before a critical metric may settle (the issue's floor: two runs cannot
show a run-to-run spread worth trusting on a safety metric)."""
SETTLED_EXACT = "settled: no score of the remaining runs (1-10) changes any decision"
STOPPED = "stopped"
"""The ``RunRecord.status`` of a run not started because its conversation was settled."""


def settled_sequential(error_rate: float) -> str:
    """The stop reason of mode ``sequential`` at ``error_rate`` (0-1)."""
    return (f"settled: stochastic curtailment, each decision differs from all runs' with "
            f"probability <= {error_rate:g}")


@dataclass(frozen=True)
class ConversationLimits:
    """What the rule needs of one conversation: ``runs`` (N), each metric's resolved thresholds
    in plan order, and ``floor``: runs before any stop (the baseline's shared runs, else 0)."""

    runs: int
    metrics: tuple[tuple[str, ResolvedThresholds], ...]
    floor: int = 0


def conversation_limits(
    plan: Plan, instrument: Instrument, *, baseline: Results | None = None, fail_on: str = "both"
) -> dict[str, ConversationLimits]:
    """:class:`ConversationLimits` of every conversation of ``plan`` that runs (not ``skip``).
    ``baseline``: the results compared with (its run count and which suite x metric it scores);
    ignored when ``fail_on`` does not gate regressions."""
    compared: set[tuple[str, str]] = set()
    shared = 0
    if baseline is not None and gates("regression", fail_on):
        compared = {(i.suite, i.metric_id) for i in baseline.items}
        shared = min(plan.runs, baseline.metadata.runs)
    out: dict[str, ConversationLimits] = {}
    for c in plan.conversations:
        if c.skip is not None:
            continue
        metrics = tuple((m, instrument.thresholds.resolve(m, c.suite)) for m in c.metric_ids)
        floor = shared if any((c.suite, m) in compared for m in c.metric_ids) else 0
        out[c.conversation_id] = ConversationLimits(runs=plan.runs, metrics=metrics, floor=floor)
    return out


def _scores(records: Sequence[RunRecord], metric: str) -> list[int] | None:
    """The metric's judged scores (first judgings, run order), N/A runs left out; None when a
    run has no verdict for it, or one that is neither a score nor N/A."""
    out: list[int] = []
    for r in records:
        v = next((v for v in r.verdicts if v.metric_id == metric and not v.rejudge), None)
        if v is None:
            return None
        if v.status == "scored" and v.score is not None:
            out.append(v.score)
        elif v.status != "na":
            return None
    return out


def settle_reason(
    limits: ConversationLimits,
    records: Sequence[RunRecord],
    *,
    mode: GatingMode,
    error_rate: float = 0.05,
    fail_on: str = "both",
    max_fallback_share: float = 0.5,
) -> str | None:
    """Why the conversation may stop after ``records`` (its judged runs so far, run order), or
    None to go on (module docstring for the conditions). Pure. Raises ValueError for mode
    ``off`` or an ``error_rate`` outside (0, 1)."""
    if mode not in ("exact", "sequential"):
        raise ValueError(f"settle_reason needs mode exact or sequential; got {mode!r}")
    if not 0 < error_rate < 1:
        raise ValueError(f"error_rate must be in (0, 1); got {error_rate}")
    k = len(records)
    remaining = limits.runs - k
    if remaining <= 0 or k < limits.floor:
        return None
    if any(r.status != "complete" or degraded_reason(r, max_fallback_share) for r in records):
        return None
    curtailed = False
    for metric, t in limits.metrics:
        scores = _scores(records, metric)
        if not scores or len(scores) < max(t.min_judged_runs, CRITICAL_FLOOR if t.critical else 1):
            return None
        if exact_settled(scores, remaining, t, fail_on):
            continue
        if mode == "sequential" and reversal_probability(scores, remaining, t, fail_on) <= error_rate:
            curtailed = True
            continue
        return None
    return settled_sequential(error_rate) if curtailed else SETTLED_EXACT


def stop_rule(
    limits: Mapping[str, ConversationLimits],
    *,
    mode: GatingMode,
    error_rate: float = 0.05,
    fail_on: str = "both",
    max_fallback_share: float = 0.5,
) -> StopRule | None:
    """The runner's stop rule for these conversations (None for mode ``off``): a conversation
    it does not know never stops. Arguments as :func:`settle_reason`."""
    if mode == "off":
        return None

    def rule(conversation_id: str, records: Sequence[RunRecord]) -> str | None:
        lim = limits.get(conversation_id)
        if lim is None:
            return None
        return settle_reason(lim, records, mode=mode, error_rate=error_rate, fail_on=fail_on,
                             max_fallback_share=max_fallback_share)

    return rule


def plan_stop_rule(
    plan: Plan, instrument: Instrument, *, mode: GatingMode, error_rate: float, fail_on: str,
    baseline: Results | None = None, max_fallback_share: float = 0.5,
) -> StopRule | None:
    """:func:`stop_rule` over every conversation of ``plan`` (:func:`conversation_limits`)."""
    if mode == "off":
        return None
    limits = conversation_limits(plan, instrument, baseline=baseline, fail_on=fail_on)
    return stop_rule(limits, mode=mode, error_rate=error_rate, fail_on=fail_on,
                     max_fallback_share=max_fallback_share)
