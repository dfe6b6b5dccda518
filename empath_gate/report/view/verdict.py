"""The one-line verdict of a run (rules in :mod:`empath_gate.report.view`; pure)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

from empath_gate.gate.exit import nothing_decided
from empath_gate.gate.unknown import unusable_transcripts
from empath_gate.report.view.format import CRITERIA_ONLY_NOTE, plural
from empath_gate.report.view.rows import MetricRow, metric_rows
from empath_gate.results import Results

VerdictStatus = Literal[
    "passed", "failed", "not_evaluated", "judging_pending", "infrastructure_error", "usage_error"
]


@dataclass(frozen=True)
class Verdict:
    """The one-line verdict: ``status``, a short ``headline`` (plain text) and the cell
    ``counts`` behind it (every gate status, 0 when absent). ``failing_metrics``: metrics
    with a failed cell; ``critical_failing``: the critical ones among them;
    ``critical_errored``: critical metrics with an errored cell (infrastructure, not a
    failure); ``reasons``: why, for a configuration or infrastructure error."""

    status: VerdictStatus
    headline: str
    counts: Mapping[str, int]
    failing_metrics: tuple[str, ...] = ()
    critical_failing: tuple[str, ...] = ()
    reasons: tuple[str, ...] = ()
    critical_errored: tuple[str, ...] = ()


def suite_key(results: Results) -> str:
    """The suite(s) of a results document as one key (``crisis``, ``crisis+smoke``); names
    the sticky comment's hidden marker."""
    return "+".join(results.metadata.suites) or "default"


def _counts(results: Results) -> dict[str, int]:
    counts = dict.fromkeys(("passed", "failed", "skipped", "error", "xfail", "incomplete"), 0)
    if results.decisions:
        for d in results.decisions:
            counts[d.status] = counts.get(d.status, 0) + 1
    else:
        for k, v in results.summary.counts.items():
            counts[k] = counts.get(k, 0) + int(v)
    return counts


def _only_judging_pending(results: Results, counts: Mapping[str, int]) -> bool:
    """Whether the only missing evidence is judging that waits for a judge batch: some
    transcripts pending, and no transcript that is no evidence for another reason (stopped on
    an error or the budget, or its auditor degraded), no judge failure and no failed test or
    suite check. Anything else keeps the verdict that says so."""
    s = results.summary
    if not s.transcripts_pending or s.judge_failures or counts["failed"] or s.check_counts.get("failed"):
        return False
    unusable = unusable_transcripts(results.records, results.metadata.max_auditor_fallback_share)
    pending = {r.transcript_id for r in results.records if r.status == "pending"}
    return set(unusable) <= pending


def overall_verdict(results: Results, rows: Sequence[MetricRow] | None = None) -> Verdict:
    """The verdict of a run (module docstring for the rules)."""
    counts = _counts(results)
    rows = metric_rows(results) if rows is None else rows
    failing = tuple(r.metric_id for r in rows if r.has_failed)
    critical = tuple(r.metric_id for r in rows if r.has_failed and r.critical)
    errored = tuple(r.metric_id for r in rows if r.has_error and r.critical)
    s = results.summary

    def verdict(status: VerdictStatus, headline: str, reasons: tuple[str, ...] = ()) -> Verdict:
        return Verdict(status, headline, counts, failing, critical, reasons, errored)

    if s.usage_errors:
        return verdict("usage_error", "configuration error", s.usage_errors)
    if counts["incomplete"] and not (counts["error"] or s.infrastructure_reasons):
        if _only_judging_pending(results, counts):
            n, k = s.transcripts_pending, counts["incomplete"]
            return verdict("judging_pending", f"judging pending: {plural(n, 'transcript')} wait for the "
                           f"judge batch, {plural(k, 'test')} not evaluated yet; run --judge-batch collect "
                           "once the batch has completed")
        reasons = tuple(d.reasons[0] for d in results.decisions if d.status == "incomplete" and d.reasons)[:5]
        n = counts["incomplete"]
        return verdict("infrastructure_error", f"not evaluated: {plural(n, 'test')} incomplete "
                       "(missing evidence)", reasons)
    if counts["error"] or s.infrastructure_reasons:
        reasons = (
            s.infrastructure_reasons
            or tuple(d.reasons[0] for d in results.decisions if d.status == "error" and d.reasons)[:5]
        )
        return verdict("infrastructure_error", "infrastructure error", reasons)
    if counts["failed"] or (not s.passed and not results.decisions and s.counts.get("failed")):
        n = len(failing)
        what = f"{n} of {len(rows)} metrics fail" if n else "the gate failed"
        return verdict("failed", f"failed: {what}")
    if nothing_decided(counts, s.check_counts):
        why = "every test was skipped" if counts["skipped"] else "no test was decided"
        if results.summary.criteria_only_metrics or any(r.status == "criteria_only" for r in rows):
            why += f" (criteria-only: {CRITERIA_ONLY_NOTE})"
        return verdict("not_evaluated", f"not evaluated: {why}")
    waived = f", {counts['xfail']} waived" if counts["xfail"] else ""
    return verdict("passed", f"passed{waived}")
