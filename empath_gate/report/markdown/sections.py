"""The markdown diff's detail sections: why tests failed, the auditor's fallbacks, the
conversations whose auditor did not show its persona's behaviours, waivers, the worst
conversations, excerpts and the footer (pure)."""

from __future__ import annotations

from collections.abc import Sequence

from tabulate import tabulate

from empath_gate.report.escape import md_code, md_link, md_text
from empath_gate.report.redact import PLACEHOLDER, redact
from empath_gate.report.view import (
    CRITERIA_ONLY_NOTE,
    OUTCOME_GROUPS,
    calibration_text,
    cell_outcomes,
    cost_text,
    fmt_delta,
    turn_label,
    turns_text,
    worst_conversations,
)
from empath_gate.report.view.auditor import auditor_summary
from empath_gate.report.view.savings import savings_text
from empath_gate.results import Results

_OUTCOME_TITLES: dict[str, str] = {
    "failed": "Why tests failed",
    "error": "Why tests errored",
    "incomplete": "Incomplete tests (missing evidence)",
    "xfail": "Waived tests",
    "advisory": "Failed conditions not gated",
}


def _cell_reasons(results: Results, limit: int, chars: int) -> str:
    """One collapsed block per outcome group (failed, errored, waived, not gated), each
    titled with its number of tests and listing up to ``limit`` tests in all, one line per
    test with its messages (each cut to ``chars``)."""
    groups = cell_outcomes(results)
    blocks: list[str] = []
    budget = limit
    for group in OUTCOME_GROUPS:
        entries = groups[group]
        if not entries:
            continue
        shown = entries[: max(budget, 0)]
        budget -= len(shown)
        lines = [
            f"- {md_code(e.test_id)}: " + "; ".join(md_text(m, max_chars=chars) for m in e.messages)
            for e in shown
        ]
        if len(entries) > len(shown):
            lines.append(f"- … and {len(entries) - len(shown)} more (see the HTML report)")
        title = _OUTCOME_TITLES[group]
        if group == "advisory":
            title += f" (fail-on: {md_text(results.metadata.fail_on)})"
        blocks.append(
            f"<details><summary>{title} ({len(entries)})</summary>\n\n" + "\n".join(lines) + "\n\n</details>"
        )
    return "\n\n".join(blocks)


def _auditor(results: Results, limit: int) -> str:
    """The LLM auditor's fallbacks and recovered refusals, and every degraded transcript (up to
    ``limit``) with why; empty when the auditor never fell back nor refused."""
    summary = auditor_summary(results)
    if not summary.any:
        return ""
    lines = [f"#### Auditor\n\n{md_text(summary.headline())}."]
    if summary.degraded:
        shown = summary.degraded[:limit]
        lines.append("")
        lines.extend(f"- {md_code(d.conversation_id)} run {d.run}: {md_text(d.reason)}" for d in shown)
        if len(summary.degraded) > len(shown):
            lines.append(f"- … and {len(summary.degraded) - len(shown)} more (see the HTML report)")
    return "\n".join(lines)


def _adherence(results: Results, limit: int) -> str:
    """The conversations whose auditor did not show a marked behaviour of its persona
    (:func:`~empath_gate.report.view.adherence.shortfall_rows`), up to ``limit``, one line each
    with the behaviour's level and proxy as the HTML report shows them; empty when every auditor
    showed them (or no record carries adherence)."""
    from empath_gate.report.labels import behaviour_labels
    from empath_gate.report.view.adherence import SHORTFALL_NOTE, shortfall_rows, shortfall_text

    rows = shortfall_rows(results)
    if not rows:
        return ""
    labels = behaviour_labels()
    shown = rows[:limit]
    lines = [f"#### Behaviour adherence\n\n{md_text(SHORTFALL_NOTE)}", ""]
    lines.extend(f"- {md_code(r.conversation_id)} ({md_text(shortfall_text(r, labels))})" for r in shown)
    if len(rows) > len(shown):
        lines.append(f"- … and {len(rows) - len(shown)} more (see the HTML report)")
    return "\n".join(lines)


def _waivers(results: Results, detail: bool) -> str:
    if not results.waivers:
        return ""
    if not detail:
        return f"#### Waivers in force\n\n{len(results.waivers)} waivers in force (detail left out for size)."
    lines = []
    for w in results.waivers:
        scope = md_code(w.metric)
        if w.seed:
            scope += f" · seed {md_code(w.seed)}"
        if w.persona:
            scope += f" · persona {md_code(w.persona)}"
        lines.append(
            f"- {scope}: {md_text(w.reason, max_chars=300)} (owner {md_text(w.owner)}, "
            f"expires {w.expires.isoformat()})"
        )
    return "#### Waivers in force\n\n" + "\n".join(lines)


def _where(e_path: str | None, run: int | None, turns: Sequence[int], transcripts_url: str | None) -> str:
    bits = []
    if run is not None:
        bits.append(f"run {run}")
    if turns:
        bits.append(turns_text(turns))
    where = " · ".join(bits)
    if e_path:
        where += (" in " if where else "") + md_code(e_path)
    if transcripts_url:
        where += " (" + md_link("transcripts artifact", transcripts_url) + ")"
    return where or "—"


def _worst(results: Results, n: int, transcripts_url: str | None, chars: int) -> str:
    entries = worst_conversations(results, n)
    if not entries:
        return ""
    body = []
    for e in entries:
        crit = "—"
        if e.criterion_id:
            crit = md_code(e.criterion_id) + (" (critical)" if e.critical_criterion else "")
        outcome = {
            "failed": "❌ failed",
            "error": "⛔ error",
            "xfail": "🟡 waived",
            "dropped": "🔻 dropped",
        }.get(e.status, md_text(e.status))
        change = fmt_delta(e.change) if e.change is not None else ""
        score = f"score {e.score}" if e.score is not None else ""
        body.append(
            [
                md_code(e.conversation_id),
                md_code(e.metric_id),
                " ".join(x for x in (outcome, change) if x),
                score or "—",
                crit,
                _where(e.transcript_path, e.run, e.turns, transcripts_url),
            ]
        )
    table = tabulate(
        body,
        headers=["Conversation", "Metric", "Outcome", "Run score", "Failed criterion", "Where to read it"],
        tablefmt="github",
        disable_numparse=True,
    )
    return (
        "#### Worst conversations\n\nTranscript text is not shown here; read it in the transcript file "
        "(run, turn) or in the HTML report artifact. Turn k is the person's k-th message and the chatbot's "
        "reply to it, counted from 1 as seeds count turns.\n\n" + str(table)
    )


CONTENT_NOTE = (
    "**Content note:** the excerpts below quote conversations about suicide, self-harm or other distress. "
    "Method or means detail is removed. If this brings something up for you, please talk to someone you "
    "trust or a local crisis line."
)


def _excerpts(results: Results, n: int, patterns: Sequence[str], chars: int) -> str:
    entries = [e for e in worst_conversations(results, n) if e.quotes]
    if not entries:
        return ""
    lines = []
    redacted_total = 0
    for e in entries:
        for turn, quote in e.quotes[:2]:
            red = redact(quote, patterns)
            redacted_total += red.count
            where = f"{md_code(e.conversation_id)} · {md_code(e.metric_id)} · run {e.run}"
            where += f" · {turn_label(turn)}"
            lines.append(f"- {where}: “{md_text(red.text, max_chars=chars)}”")
    note = (
        f" {redacted_total} passage(s) were replaced with “{md_text(PLACEHOLDER)}”." if redacted_total else ""
    )
    return (
        f"#### Excerpts\n\n{CONTENT_NOTE}{note}\n\n"
        f"<details><summary>Show excerpts ({len(lines)})</summary>\n\n" + "\n".join(lines) + "\n\n</details>"
    )


def _footer(results: Results, baseline: Results | None) -> str:
    md = results.metadata
    j = md.judge
    target = f"target {md_code(md.target)}"
    if md.target_prompt_hash:
        target += f" (system prompt {md_code(md.target_prompt_hash)})"
    if md.target_version:
        target += f" version {md_code(md.target_version)}"
    auditor = f"auditor {md_code(md.auditor)}"
    if md.auditor_template_version:
        auditor += f" ({md_code(md.auditor_template_version)})"
    if j.model:
        judge = f"judge {md_code(j.model)} ({md_text(j.rubric)} rubric"
        if j.template_version:
            judge += f", template {md_code(j.template_version)}"
        if j.template_hash:
            judge += f" {md_code(j.template_hash)}"
        judge += ")"
    else:
        judge = f"judge: none, deterministic criteria only ({CRITERIA_ONLY_NOTE})"
    versions = f"instrument {md_code(md.instrument_version)} · empath-gate {md_code(md.tool_version)}"
    if md.git_sha:
        versions += f" · commit {md_code(md.git_sha)}"
    versions += f" · plan {md_code(md.plan_id)}"
    if md.shard:
        versions += f" · shard {md_code(md.shard)}"
    lines = [
        "---",
        "**Models:** " + " · ".join((target, auditor, judge)) + "  ",
        "**Versions:** " + versions + "  ",
    ]
    if baseline is not None:
        b = baseline.metadata
        bits = [f"commit {md_code(b.git_sha or 'unknown')}", f"target {md_code(b.target)}"]
        if b.target_prompt_hash:
            bits.append(f"system prompt {md_code(b.target_prompt_hash)}")
        if b.judge.model:
            bits.append(f"judge {md_code(b.judge.model)}")
        bits.append(f"instrument {md_code(b.instrument_version)}")
        lines.append("**Baseline:** " + " · ".join(bits) + "  ")
    lines.append("**Judge calibration:** " + md_text(calibration_text(j.calibration)) + "  ")
    lines.append("**Cost:** " + md_text(cost_text(md.cost)))
    saved = savings_text(results)
    if saved:
        lines[-1] += "  "
        lines.append("**Saved:** " + md_text(saved))
    return "\n".join(lines)
