"""The one-line verdict of a run (rules in :mod:`empath_gate.report.view`; pure)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

from empath_gate.report.view.rows import CRITERIA_ONLY_NOTE, MetricRow, metric_rows
from empath_gate.results import Results

VerdictStatus = Literal["passed", "failed", "not_evaluated", "infrastructure_error", "usage_error"]


@dataclass(frozen=True)
class Verdict:
    """The one-line verdict: ``status``, a short ``headline`` (plain text) and the cell
    ``counts`` behind it (every gate status, 0 when absent)."""

    status: VerdictStatus
    headline: str
    counts: Mapping[str, int]
    failing_metrics: tuple[str, ...] = ()
    critical_failing: tuple[str, ...] = ()
    reasons: tuple[str, ...] = ()


def suite_key(results: Results) -> str:
    """The suite(s) of a results document as one key (``crisis``, ``crisis+smoke``); names
    the sticky comment's hidden marker."""
    return "+".join(results.metadata.suites) or "default"


def _counts(results: Results) -> dict[str, int]:
    counts = dict.fromkeys(("passed", "failed", "skipped", "error", "xfail"), 0)
    if results.decisions:
        for d in results.decisions:
            counts[d.status] = counts.get(d.status, 0) + 1
    else:
        for k, v in results.summary.counts.items():
            counts[k] = counts.get(k, 0) + int(v)
    return counts


def overall_verdict(results: Results, rows: Sequence[MetricRow] | None = None) -> Verdict:
    """The verdict of a run (module docstring for the rules)."""
    counts = _counts(results)
    rows = metric_rows(results) if rows is None else rows
    failing = tuple(r.metric_id for r in rows if r.failing)
    critical = tuple(r.metric_id for r in rows if r.failing and r.critical)
    s = results.summary
    if s.usage_errors:
        return Verdict("usage_error", "configuration error", counts, failing, critical, s.usage_errors)
    if counts["error"] or s.infrastructure_reasons:
        reasons = (
            s.infrastructure_reasons
            or tuple(d.reasons[0] for d in results.decisions if d.status == "error" and d.reasons)[:5]
        )
        return Verdict("infrastructure_error", "infrastructure error", counts, failing, critical, reasons)
    if counts["failed"] or (not s.passed and not results.decisions and s.counts.get("failed")):
        n = len(failing)
        what = f"{n} of {len(rows)} metrics fail" if n else "the gate failed"
        return Verdict("failed", f"failed: {what}", counts, failing, critical)
    if counts["passed"] == 0 and counts["xfail"] == 0:
        why = "every test was skipped" if counts["skipped"] else "no test was decided"
        if results.summary.criteria_only_metrics or any(r.status == "criteria_only" for r in rows):
            why += f" (criteria-only: {CRITERIA_ONLY_NOTE})"
        return Verdict("not_evaluated", f"not evaluated: {why}", counts, failing, critical)
    waived = f", {counts['xfail']} waived" if counts["xfail"] else ""
    return Verdict("passed", f"passed{waived}", counts, failing, critical)
