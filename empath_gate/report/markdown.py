"""The markdown safety diff: what a pull-request comment and a job summary show (pure).

:func:`render_markdown` turns a results document (and optionally its baseline) into
GitHub-flavoured markdown, tables through ``tabulate``:

1. a hidden marker ``<!-- empath-gate:suite=<suite> -->`` (the sticky comment is found by it);
2. a one-line verdict: ✅ passed / ❌ failed / ⚠️ not evaluated / ⛔ infrastructure error /
   ❌ configuration error (rules in :mod:`empath_gate.report.view`); then the counts;
3. a plain note naming the metrics that were only criteria-checked (offline), saying that a
   judge model is needed for scores;
4. per dimension, then per metric: baseline mean, candidate mean, Δ with an arrow, its 95 %
   interval, the smallest detectable drop (MDD), the run range, the flip rate, the threshold
   status and the regression flag; why cells failed (collapsed);
5. waivers in force; the worst conversations with the failed criterion and where to read the
   transcript (path, run, turn, metric, criterion: no transcript text unless ``excerpts``);
6. test-retest reliability per metric (within-conversation SD, ICC, flip rate, ...);
7. a footer: models, prompt hash, instrument, judge and tool versions, judge calibration
   status, cost.

Safe messaging: transcript excerpts are off by default. With ``excerpts=True`` they sit in a
collapsed block behind a content note, with method or means detail redacted (the instrument's
``method_detail`` patterns) and every character escaped (:mod:`empath_gate.report.escape`).
Every string that did not come from this module is escaped.

Size: GitHub rejects a comment over 65,536 characters and truncates a job summary over
1 MiB. The output is shorter than ``max_chars`` characters and, with ``max_bytes``, than
``max_bytes`` UTF-8 bytes: detail is dropped first (excerpts, then the worst-conversation
list, the per-cell reasons, reliability, waiver detail, then passing metric rows), never the
verdict or a failing metric; a note says what was left out.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace

from tabulate import tabulate

from empath_gate.report.escape import html_comment_safe, md_code, md_link, md_text
from empath_gate.report.redact import PLACEHOLDER, redact
from empath_gate.report.view import (
    CRITERIA_ONLY_NOTE,
    MetricRow,
    Verdict,
    calibration_text,
    cost_text,
    criteria_only_metrics,
    dimension_label,
    dimension_rows,
    fmt_delta,
    fmt_num,
    fmt_pct,
    metric_rows,
    overall_verdict,
    reliability_rows,
    suite_key,
    worst_conversations,
)
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
    "infrastructure_error": "⛔",
    "usage_error": "❌",
}
STATUS_ICONS: dict[str, str] = {
    "passed": "✅",
    "failed": "❌",
    "error": "⛔",
    "xfail": "🟡",
    "skipped": "⏭️",
    "criteria_only": "🔎",
}


def marker(suite: str) -> str:
    """The hidden marker naming a suite: ``<!-- empath-gate:suite=<suite> -->``."""
    return f"<!-- {MARKER_PREFIX}{html_comment_safe(suite)} -->"


@dataclass(frozen=True)
class _Detail:
    """How much detail one rendering attempt includes (see the module docstring)."""

    excerpts: bool
    worst_n: int
    cell_reasons: int
    reliability: bool
    waiver_detail: bool
    passing_metrics: bool
    reason_chars: int = 300
    dropped: tuple[str, ...] = ()


def _verdict_line(v: Verdict, suite: str) -> str:
    return f"### {ICONS[v.status]} empath-gate {md_code(suite)}: {md_text(v.headline)}"


def _counts_line(v: Verdict, results: Results, baseline: Results | None) -> str:
    c = v.counts
    parts = [f"{c.get('passed', 0)} passed", f"{c.get('failed', 0)} failed"]
    if c.get("xfail"):
        parts.append(f"{c['xfail']} waived")
    parts += [f"{c.get('skipped', 0)} skipped", f"{c.get('error', 0)} errors"]
    md = results.metadata
    line = (
        f"Tests (conversation × metric): {', '.join(parts)} · "
        f"{results.summary.transcripts or len(results.records)} "
        f"transcripts, {md.runs} runs per conversation"
    )
    if baseline is not None or results.regressions is not None:
        label = (baseline.metadata.git_sha if baseline is not None else None) or "baseline"
        line += f" · compared with baseline {md_code(label)}"
    if v.critical_failing:
        line += " · **critical metrics failing:** " + ", ".join(md_code(m) for m in v.critical_failing)
    return line


def _notes(v: Verdict, results: Results, rows: Sequence[MetricRow]) -> list[str]:
    out: list[str] = []
    co = criteria_only_metrics(results, rows)
    if co:
        out.append(
            f"> **Criteria-only (offline):** {len(co)} metric{'s' if len(co) != 1 else ''} "
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


def _label(metric_id: str, labels: Mapping[str, str] | None) -> str:
    code = md_code(metric_id)
    if labels and metric_id in labels and labels[metric_id] != metric_id:
        return f"{md_text(labels[metric_id])} ({code})"
    return code


def _threshold_cell(r: MetricRow) -> str:
    n = r.n_conversations
    c = r.counts
    if r.status == "criteria_only":
        return f"🔎 criteria-only: {CRITERIA_ONLY_NOTE}"
    if r.status == "error":
        return f"⛔ error in {c.get('error', 0)}/{n}"
    if r.status == "skipped":
        return "⏭️ N/A" if r.n_judged == 0 else "⏭️ skipped"
    target = f"mean ≥ {fmt_num(r.min_mean)}" if r.min_mean is not None else ""
    failed = c.get("failed", 0)
    if failed:
        conds = ", ".join(r.failed_conditions) or "conditions"
        return f"❌ {failed}/{n} fail ({md_text(conds)})"
    if c.get("xfail"):
        return f"🟡 {c['xfail']}/{n} waived"
    return f"✅ {target}".strip()


def _regression_cell(r: MetricRow) -> str:
    mr = r.regression
    if mr is None:
        return "—"
    if not r.comparable:
        return "not comparable"
    if mr.regressed:
        how = (
            "not non-inferior"
            if mr.critical
            else (f"p_adj {mr.p_adjusted:.3g}" if mr.p_adjusted is not None else "flagged")
        )
        return f"🔻 **regressed** ({how})"
    if mr.effect is None:
        return "no pairs"
    return "no"


def _ci(r: MetricRow) -> str:
    mr = r.regression
    if mr is None or mr.ci_low is None or mr.ci_high is None:
        return "—"
    return f"{mr.ci_low:+.2f} … {mr.ci_high:+.2f}"


def _metrics_table(rows: Sequence[MetricRow], labels: Mapping[str, str] | None, with_baseline: bool) -> str:
    headers = [
        "",
        "Metric",
        "Baseline",
        "Candidate",
        "Δ",
        "95% CI",
        "MDD",
        "Runs",
        "Flip",
        "Threshold",
        "Regression",
    ]
    body = []
    for r in rows:
        crit = " ⚑" if r.critical else ""
        runs = f"{r.run_min}–{r.run_max}" if r.run_min is not None else "—"
        delta = fmt_delta(r.regression.effect if r.regression is not None else r.change)
        body.append(
            [
                STATUS_ICONS[r.status],
                _label(r.metric_id, labels) + crit,
                fmt_num(r.baseline_mean) if with_baseline else "—",
                fmt_num(r.candidate_mean),
                delta,
                _ci(r),
                fmt_num(r.regression.mdd if r.regression is not None else None),
                runs,
                fmt_num(r.flip_rate),
                _threshold_cell(r),
                _regression_cell(r),
            ]
        )
    return str(tabulate(body, headers=headers, tablefmt="github", disable_numparse=True))


def _dimension_table(rows: Sequence[MetricRow], labels: Mapping[str, str] | None, with_baseline: bool) -> str:
    headers = ["", "Dimension", "Metrics", "Failing", "Baseline", "Candidate", "Δ"]
    body = []
    for d in dimension_rows(rows):
        label = dimension_label(d.dimension, labels)
        failing = ", ".join(md_code(m) for m in d.failing) if d.failing else "0"
        body.append(
            [
                STATUS_ICONS[d.status],
                md_text(label),
                str(len(d.metrics)),
                failing,
                fmt_num(d.baseline_mean) if with_baseline else "—",
                fmt_num(d.candidate_mean),
                fmt_delta(d.change if with_baseline else None),
            ]
        )
    return str(tabulate(body, headers=headers, tablefmt="github", disable_numparse=True))


def _cell_reasons(rows: Sequence[MetricRow], limit: int, chars: int) -> str:
    lines: list[str] = []
    total = 0
    for r in rows:
        if not r.reasons:
            continue
        for reason in r.reasons:
            total += 1
            if len(lines) < limit:
                lines.append(f"- {md_text(reason, max_chars=chars)}")
    if not lines:
        return ""
    more = f"\n- … and {total - len(lines)} more (see the HTML report)" if total > len(lines) else ""
    return (
        f"<details><summary>Why tests failed ({total})</summary>\n\n"
        + "\n".join(lines)
        + more
        + "\n\n</details>"
    )


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
        bits.append("turn " + ", ".join(str(t) for t in turns[:5]))
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
        "(run, turn index) or in the HTML report artifact.\n\n" + str(table)
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
            lines.append(
                f"- {md_code(e.conversation_id)} · {md_code(e.metric_id)} · run {e.run} · turn {turn}: "
                f"“{md_text(red.text, max_chars=chars)}”"
            )
    note = (
        f" {redacted_total} passage(s) were replaced with “{md_text(PLACEHOLDER)}”." if redacted_total else ""
    )
    return (
        f"#### Excerpts\n\n{CONTENT_NOTE}{note}\n\n"
        f"<details><summary>Show excerpts ({len(lines)})</summary>\n\n" + "\n".join(lines) + "\n\n</details>"
    )


def _reliability(results: Results, rows: Sequence[MetricRow]) -> str:
    rel = reliability_rows(results, rows)
    if not rel:
        return ""
    has_split = any(r.judge_variance is not None or r.generation_variance is not None for r in rel)
    headers = ["Metric", "Within-conversation SD", "ICC(1,1)", "Flip rate", "Different transcripts"]
    if has_split:
        headers += ["σ² judge", "σ² generation"]
    body = []
    for r in rel:
        row = [
            md_code(r.metric_id),
            fmt_num(r.within_sd),
            fmt_num(r.icc),
            fmt_num(r.flip_rate),
            fmt_pct(r.different_transcripts),
        ]
        if has_split:
            row += [fmt_num(r.judge_variance), fmt_num(r.generation_variance)]
        body.append(row)
    table = tabulate(body, headers=headers, tablefmt="github", disable_numparse=True)
    return (
        "#### Test-retest reliability\n\nSD across a conversation's runs first (it stays meaningful near the "
        "ceiling, where ICC collapses); ICC(1,1) across conversations; flip rate = share of runs on the "
        "minority side of the pass mark.\n\n" + str(table)
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
    return "\n".join(lines)


def _render(
    results: Results,
    baseline: Results | None,
    d: _Detail,
    labels: Mapping[str, str] | None,
    transcripts_url: str | None,
    patterns: Sequence[str],
) -> str:
    rows = metric_rows(results, baseline)
    v = overall_verdict(results, rows)
    suite = suite_key(results)
    with_baseline = baseline is not None or results.regressions is not None
    parts: list[str] = [marker(suite), _verdict_line(v, suite), "", _counts_line(v, results, baseline)]
    notes = _notes(v, results, rows)
    if notes:
        parts += ["", "\n>\n".join(notes)]
    if rows:
        parts += ["", "#### By dimension", "", _dimension_table(rows, labels, with_baseline)]
        shown = [r for r in rows if d.passing_metrics or r.failing or r.status == "xfail"]
        hidden = len(rows) - len(shown)
        parts += [
            "",
            "#### By metric",
            "",
            _metrics_table(shown, labels, with_baseline) if shown else "_No failing metric._",
        ]
        legend = (
            "⚑ critical metric · Δ = candidate − baseline (1–10, higher is safer) · 95% CI of Δ · "
            "MDD = smallest drop this run could detect (80% power) · Runs = lowest–highest run score · "
            "Flip = mean flip rate"
        )
        if hidden:
            legend += f" · {hidden} passing or skipped metrics left out for size"
        parts += ["", f"<sub>{legend}</sub>"]
        reasons = _cell_reasons(rows, d.cell_reasons, d.reason_chars) if d.cell_reasons else ""
        if reasons:
            parts += ["", reasons]
    waivers = _waivers(results, d.waiver_detail)
    if waivers:
        parts += ["", waivers]
    if d.worst_n:
        worst = _worst(results, d.worst_n, transcripts_url, d.reason_chars)
        if worst:
            parts += ["", worst]
    if d.excerpts:
        ex = _excerpts(results, d.worst_n or 5, patterns, d.reason_chars)
        if ex:
            parts += ["", ex]
    if d.reliability:
        rel = _reliability(results, rows)
        if rel:
            parts += ["", rel]
    if d.dropped:
        parts += [
            "",
            f"_Left out to fit GitHub's size limit: {', '.join(d.dropped)}; "
            "the HTML report artifact has everything._",
        ]
    parts += ["", _footer(results, baseline)]
    return "\n".join(parts) + "\n"


def _fits(text: str, max_chars: int, max_bytes: int | None) -> bool:
    if len(text) >= max_chars:
        return False
    return max_bytes is None or len(text.encode("utf-8")) < max_bytes


def _minimal(results: Results, max_chars: int, max_bytes: int | None) -> str:
    """Last resort: marker, verdict, counts, and every failing metric as one line each."""
    rows = metric_rows(results)
    v = overall_verdict(results, rows)
    suite = suite_key(results)
    lines = [
        marker(suite),
        _verdict_line(v, suite),
        "",
        _counts_line(v, results, None),
        "",
        "Failing metrics: " + (", ".join(md_code(r.metric_id) for r in rows if r.failing) or "none"),
        "",
        "_Detail left out to fit GitHub's size limit; the HTML report artifact has everything._",
        "",
    ]
    text = "\n".join(lines)
    budget = max_chars - 1
    while not _fits(text, max_chars, max_bytes) and budget > 0:
        budget //= 2
        text = text[:budget]
    return text


def render_not_evaluated(suite: str, reason: str) -> str:
    """The diff of a run that did not happen (e.g. a pull request from a fork, which has no
    secrets): marker, a neutral ⚠️ "not evaluated" verdict and the escaped ``reason``."""
    return (
        f"{marker(suite)}\n### {ICONS['not_evaluated']} empath-gate {md_code(suite)}: not evaluated\n\n"
        f"{md_text(reason, max_chars=2000)}\n\nNothing was gated: this is neither a pass nor a failure.\n"
    )


def render_markdown(
    results: Results,
    *,
    baseline: Results | None = None,
    max_chars: int = COMMENT_MAX_CHARS,
    excerpts: bool = False,
    transcripts_url: str | None = None,
    max_bytes: int | None = None,
    metric_labels: Mapping[str, str] | None = None,
    method_detail_patterns: Sequence[str] | None = None,
) -> str:
    """The markdown safety diff of ``results`` (module docstring for the layout).

    ``baseline``: the baseline results (its means and metadata are shown; the comparison
    itself is ``results.regressions``). ``max_chars``: the output has fewer characters than
    this (default: GitHub's comment limit); ``max_bytes``: likewise in UTF-8 bytes (use
    :data:`SUMMARY_MAX_BYTES` for a job summary). ``excerpts``: quote the judge's citations
    behind a content note, with method/means detail redacted by ``method_detail_patterns``
    (default: the shipped instrument's ``method_detail`` set). ``transcripts_url``: an
    ``http(s)`` link to the transcripts artifact. ``metric_labels``: metric or dimension id
    -> display label. Raises ValueError when ``max_chars`` < 200.
    """
    if max_chars < 200:
        raise ValueError("max_chars must be at least 200")
    patterns: Sequence[str] = ()
    if excerpts:
        if method_detail_patterns is None:
            from empath_gate.report.redact import method_detail_patterns as load_patterns

            patterns = load_patterns()
        else:
            patterns = method_detail_patterns
    full = _Detail(
        excerpts=excerpts,
        worst_n=10,
        cell_reasons=200,
        reliability=True,
        waiver_detail=True,
        passing_metrics=True,
    )
    steps: list[Callable[[_Detail], _Detail]] = [
        lambda d: replace(d, excerpts=False, dropped=(*d.dropped, "excerpts") if d.excerpts else d.dropped),
        lambda d: replace(d, worst_n=3, cell_reasons=30, reason_chars=160),
        lambda d: replace(d, worst_n=0, dropped=(*d.dropped, "worst-conversation list")),
        lambda d: replace(d, cell_reasons=0, dropped=(*d.dropped, "per-test reasons")),
        lambda d: replace(d, reliability=False, dropped=(*d.dropped, "reliability")),
        lambda d: replace(d, waiver_detail=False, dropped=(*d.dropped, "waiver detail")),
        lambda d: replace(d, passing_metrics=False, dropped=(*d.dropped, "passing metric rows")),
    ]
    detail = full
    text = _render(results, baseline, detail, metric_labels, transcripts_url, patterns)
    for step in steps:
        if _fits(text, max_chars, max_bytes):
            return text
        detail = step(detail)
        text = _render(results, baseline, detail, metric_labels, transcripts_url, patterns)
    if _fits(text, max_chars, max_bytes):
        return text
    return _minimal(results, max_chars, max_bytes)
