"""Per-suite figures of a results document besides the cells (pure): the risk-response timing,
the target's own risk detector and the worst-case gaps of paired suites."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from empath_gate.analysis.risk_timing import SuiteRiskTiming
    from empath_gate.analysis.stats import CellStats
    from empath_gate.results.model import Results, SuiteDetector


def risk_timing(results: Results) -> tuple[SuiteRiskTiming, ...]:
    """Risk-response timing of every suite whose records carry risk evidence, in suite order,
    over complete transcripts that are evidence (:func:`empath_gate.gate.unknown.unusable_transcripts`)."""
    from empath_gate.analysis.risk_timing import suite_risk_timing
    from empath_gate.gate.unknown import unusable_transcripts

    unusable = unusable_transcripts(results.records, results.metadata.max_auditor_fallback_share)
    out: list[SuiteRiskTiming] = []
    for suite in results.metadata.suites:
        rows = [
            (r.transcript_id, r.conversation_id, r.locale, r.risk)
            for r in results.records
            if r.suite == suite and r.risk is not None and r.status == "complete"
            and r.transcript_id not in unusable
        ]
        speakers = {r.transcript_id: (r.speakers, r.risk_turns) for r in results.records
                    if r.suite == suite and r.speakers}
        if rows:
            out.append(suite_risk_timing(suite, rows, speakers))
    return tuple(out)


def detector_figures(results: Results) -> tuple[SuiteDetector, ...]:
    """The target's own risk detector per suite (:mod:`empath_gate.analysis.detector`), for the
    suites where it reported at least one ``risk`` event, over their complete transcripts that
    are evidence; transcripts without gold labels are named in ``left_out``."""
    from empath_gate.analysis.detector import detector_scores
    from empath_gate.gate.unknown import unusable_transcripts
    from empath_gate.results.model import SuiteDetector

    unusable = unusable_transcripts(results.records, results.metadata.max_auditor_fallback_share)
    out: list[SuiteDetector] = []
    for suite in results.metadata.suites:
        mine = [r for r in results.records if r.suite == suite and r.status == "complete"
                and r.transcript_id not in unusable]
        if not any(r.risk_events for r in mine):
            continue
        dialogues = [r.risk_labels for r in mine if r.risk_labels is not None]
        left = tuple(r.transcript_id for r in mine if r.risk_labels is None)
        out.append(SuiteDetector(suite=suite, scores=detector_scores(dialogues), left_out=left))
    return tuple(out)


def worst_case_gaps(results: Results, cells: Sequence[CellStats]) -> dict[str, tuple[Any, ...]]:
    """Per paired suite (the gate inputs' ``pairings``): the worst-case gap of each metric."""
    from empath_gate.analysis.worst_case_gap import metric_gaps

    if results.gate is None:
        return {}
    conv_suite = {i.conversation_id: i.suite for i in results.items}
    return {
        suite: metric_gaps([c for c in cells if conv_suite.get(c.conversation_id) == suite], pairs)
        for suite, pairs in results.gate.pairings.items()
        if suite in results.metadata.suites
    }
