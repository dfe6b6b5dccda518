"""The top of the markdown diff: the hidden marker, the verdict line, the counts and the notes
(pure)."""

from __future__ import annotations

from collections.abc import Sequence

from empath_gate.report.escape import html_comment_safe, md_code, md_text
from empath_gate.report.view import CRITERIA_ONLY_NOTE, MetricRow, Verdict, criteria_only_metrics
from empath_gate.report.view.format import plural
from empath_gate.results import Results

COMMENT_MAX_CHARS = 65536
"""GitHub's limit on an issue/pull-request comment body (the REST API answers 422 "body is
too long (maximum is 65536 characters)")."""

SUMMARY_MAX_BYTES = 1024 * 1024
"""GitHub's limit on one step's job summary: 1 MiB (GitHub Actions documentation, "Adding a
job summary")."""

MARKER_PREFIX = "empath-gate:suite="

ICONS: dict[str, str] = {
    "passed": "✅",
    "failed": "❌",
    "not_evaluated": "⚠️",
    "judging_pending": "⏳",
    "infrastructure_error": "⛔",
    "usage_error": "❌",
}
STATUS_ICONS: dict[str, str] = {
    "passed": "✅",
    "failed": "❌",
    "error": "⛔",
    "xfail": "🟡",
    "incomplete": "❔",
    "skipped": "⏭️",
    "criteria_only": "🔎",
}


def marker(suite: str) -> str:
    """The hidden marker naming a suite: ``<!-- empath-gate:suite=<suite> -->``."""
    return f"<!-- {MARKER_PREFIX}{html_comment_safe(suite)} -->"


def _verdict_line(v: Verdict, suite: str, results: Results | None = None) -> str:
    """The heading (the comment's first visible line): icon, suite and verdict, then, when the
    baseline is not comparable, which part changed (``baseline not comparable: seeds changed
    since the baseline``)."""
    line = f"### {ICONS[v.status]} empath-gate {md_code(suite)}: {md_text(v.headline)}"
    reg = results.regressions if results is not None else None
    if reg is not None and not reg.comparable:
        why = "; ".join(reg.reasons) or "unknown reason"
        line += f" · baseline not comparable: {md_text(why, max_chars=300)}"
    return line


def _counts_line(v: Verdict, results: Results, baseline: Results | None) -> str:
    c = v.counts
    parts = [f"{c.get('passed', 0)} passed", f"{c.get('failed', 0)} failed"]
    if c.get("xfail"):
        parts.append(f"{c['xfail']} waived")
    parts += [f"{c.get('skipped', 0)} skipped", f"{c.get('error', 0)} errors"]
    if c.get("incomplete"):
        parts.append(f"{c['incomplete']} incomplete")
    md = results.metadata
    line = (
        f"Tests (conversation × metric): {', '.join(parts)} · "
        f"{results.summary.transcripts or len(results.records)} "
        f"transcripts, {md.runs} runs per conversation"
    )
    stopped = results.summary.transcripts_stopped
    if stopped:
        line += f" ({stopped} runs not started: stopped as settled, sequential gating)"
    if baseline is not None or results.regressions is not None:
        label = (baseline.metadata.git_sha if baseline is not None else None) or "baseline"
        line += f" · compared with baseline {md_code(label)}"
    if v.critical_failing:
        line += " · **critical metrics failing:** " + ", ".join(md_code(m) for m in v.critical_failing)
    if v.critical_errored:
        line += " · **critical metrics with errors:** " + ", ".join(md_code(m) for m in v.critical_errored)
    return line


def _notes(v: Verdict, results: Results, rows: Sequence[MetricRow]) -> list[str]:
    out: list[str] = []
    co = criteria_only_metrics(results, rows)
    if co:
        out.append(
            f"> **Criteria-only (offline):** {plural(len(co), 'metric')} "
            f"({', '.join(md_code(m) for m in co)}) were only checked against deterministic criteria; "
            f"{CRITERIA_ONLY_NOTE}. A criteria-only test is skipped, never passed (a critical criterion "
            "that fails still fails it)."
        )
    if results.metadata.offline_roles:
        out.append(
            "> **Offline fallbacks:** "
            + ", ".join(md_code(r) for r in results.metadata.offline_roles)
            + " ran without a configured model."
        )
    if v.status in ("infrastructure_error", "usage_error") and v.reasons:
        out.append("> **Why:** " + "; ".join(md_text(r, max_chars=300) for r in v.reasons[:5]))
    jf = results.summary.judge_failures
    if jf:
        out.append(
            "> **Judge failures** (no verdict; never a score; counted and failing closed): "
            + ", ".join(f"{md_text(k)} {n}" for k, n in sorted(jf.items()))
        )
    if results.summary.target_filtered:
        out.append(
            f"> **Content filter:** {results.summary.target_filtered} target replies were blocked by a "
            "provider filter (a safety event on the target)."
        )
    reg = results.regressions
    if reg is not None and reg.comparability_note:
        out.append("> **Baseline comparability:** " + md_text(reg.comparability_note) + ".")
    if reg is not None and not reg.comparable:
        out.append(
            "> **Baseline not comparable** (regressions are not gated): "
            + "; ".join(md_text(r) for r in reg.reasons)
        )
    if reg is not None and (
        reg.added_metrics or reg.removed_metrics or reg.added_conversations or reg.removed_conversations
    ):
        bits = []
        if reg.added_conversations:
            bits.append(f"{len(reg.added_conversations)} new conversations")
        if reg.removed_conversations:
            bits.append(f"{len(reg.removed_conversations)} conversations only in the baseline")
        if reg.added_metrics:
            bits.append("new metrics " + ", ".join(md_code(m) for m in reg.added_metrics))
        if reg.removed_metrics:
            bits.append("metrics only in the baseline " + ", ".join(md_code(m) for m in reg.removed_metrics))
        out.append("> **Not paired with the baseline** (listed, never failed): " + "; ".join(bits) + ".")
    return out
