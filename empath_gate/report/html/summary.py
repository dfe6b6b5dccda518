"""The report's summary sections: the verdict header with its notes, the dimension and metric
tables with their plots, and the footer (pure)."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

from empath_gate.analysis.stats import CellStats
from empath_gate.report.escape import html_text as h
from empath_gate.report.html.svg import dimension_bars_svg, metric_plot_svg
from empath_gate.report.view import (
    CRITERIA_ONLY_NOTE,
    MetricRow,
    calibration_text,
    cell_outcomes,
    cost_text,
    criteria_only_metrics,
    dimension_label,
    dimension_rows,
    fmt_delta,
    fmt_num,
    not_gated_note,
    overall_verdict,
    regression_not_gated,
    suite_key,
    threshold_parts,
)
from empath_gate.results import Results

_VERDICT_WORD = {
    "passed": "PASSED",
    "failed": "FAILED",
    "not_evaluated": "NOT EVALUATED",
    "judging_pending": "JUDGING PENDING",
    "infrastructure_error": "INFRASTRUCTURE ERROR",
    "usage_error": "CONFIGURATION ERROR",
}
_STATUS_TEXT = {
    "passed": "passed",
    "failed": "failed",
    "error": "error",
    "xfail": "waived",
    "incomplete": "incomplete",
    "skipped": "skipped",
    "criteria_only": "criteria-only",
}


_EMPTY_CELL = re.compile(r"<td[^>]*>(?:—|)</td>")
"""A table cell that shows no value: empty or the report's dash for "no figure"."""


def table_html(head: Sequence[str], rows: Sequence[tuple[str, Sequence[str]]], cls: str = "") -> str:
    """A table with every column that shows no value in any row left out (a column of dashes
    is no data: e.g. the baseline columns of a report without a baseline, or the candidate
    means of a criteria-only run). ``head``: the ``<th>`` cells; ``rows``: (the ``<tr ...>``
    opening tag, its ``<td>`` cells), one cell per head cell. ``""`` when there is no row."""
    if not rows:
        return ""
    keep = [i for i in range(len(head)) if any(not _EMPTY_CELL.fullmatch(cells[i]) for _, cells in rows)]
    body = "".join(tr + "".join(cells[i] for i in keep) + "</tr>" for tr, cells in rows)
    attr = f' class="{cls}"' if cls else ""
    return (f"<table{attr}><thead><tr>" + "".join(head[i] for i in keep) + "</tr></thead><tbody>" + body
            + "</tbody></table>")


def _header(results: Results, rows: Sequence[MetricRow]) -> str:
    v = overall_verdict(results, rows)
    c = v.counts
    md = results.metadata
    counts = (
        f"{c.get('passed', 0)} passed · {c.get('failed', 0)} failed · {c.get('xfail', 0)} waived · "
        f"{c.get('skipped', 0)} skipped · {c.get('error', 0)} errors"
        + (f" · {c['incomplete']} incomplete" if c.get("incomplete") else "")
    )
    out = [
        f'<section class="verdict {v.status}" id="verdict" data-status="{v.status}">',
        f"<h1>{_VERDICT_WORD[v.status]} · empath-gate <code>{h(suite_key(results))}</code>: "
        f"{h(v.headline)}</h1>",
        f'<div class="muted">Tests (conversation × metric): {counts} · {len(results.records)} transcripts, '
        f"{md.runs} runs per conversation · target <code>{h(md.target)}</code></div>",
    ]
    for title, metrics in (("Critical metrics failing", v.critical_failing),
                           ("Critical metrics with errors", v.critical_errored)):
        if metrics:
            names = ", ".join(f"<code>{h(m)}</code>" for m in metrics)
            out.append(f"<div><strong>{title}:</strong> {names}</div>")
    out.append("</section>")
    notes: list[str] = []
    co = criteria_only_metrics(results, rows)
    if co:
        notes.append(
            f"<strong>Criteria-only (offline):</strong> {', '.join(f'<code>{h(m)}</code>' for m in co)} "
            f"were only checked against deterministic criteria; {CRITERIA_ONLY_NOTE}."
        )
    if v.reasons:
        notes.append("<strong>Why:</strong> " + "; ".join(h(r) for r in v.reasons[:10]))
    if results.summary.judge_failures:
        notes.append(
            "<strong>Judge failures</strong> (no verdict, never a score; fail closed): "
            + ", ".join(f"{h(k)} {n}" for k, n in sorted(results.summary.judge_failures.items()))
        )
    reg = results.regressions
    if reg is not None and not reg.comparable:
        notes.append(
            "<strong>Baseline not comparable</strong> (regressions not gated): "
            + "; ".join(h(r) for r in reg.reasons)
        )
    out += [f'<div class="note">{n}</div>' for n in notes]
    return "\n".join(out)


def _dimensions(rows: Sequence[MetricRow], labels: Mapping[str, str] | None) -> str:
    drows = dimension_rows(rows)
    body: list[tuple[str, list[str]]] = []
    bars = []
    for d in drows:
        label = dimension_label(d.dimension, labels)
        failing = ", ".join(
            [f"<code>{h(m)}</code>" for m in d.failing] + [f"<code>{h(m)}</code> (error)" for m in d.errored]
            + [f"<code>{h(m)}</code> (incomplete)" for m in d.incomplete]
        ) or "0"
        body.append((
            f'<tr class="dim" data-dimension="{h(d.dimension)}">',
            [f'<td class="st-{d.status}">{_STATUS_TEXT[d.status]}</td>', f"<td>{h(label)}</td>",
             f"<td class=num>{len(d.metrics)}</td>", f"<td>{failing}</td>",
             f"<td class=num>{fmt_num(d.baseline_mean)}</td>",
             f"<td class=num>{fmt_num(d.candidate_mean)}</td>",
             f"<td class=num>{fmt_delta(d.change)}</td>"],
        ))
        bars.append((label, d.baseline_mean, d.candidate_mean))
    titles = ("Status", "Dimension", "Metrics", "Failing", "Baseline", "Candidate", "Δ")
    head = [f"<th>{t}</th>" for t in titles]
    return (
        '<section id="dimensions"><h2>Dimensions</h2>'
        + table_html(head, body)
        + dimension_bars_svg(bars)
        + "</section>"
    )


def _threshold(r: MetricRow) -> str:
    return " · ".join(f'<span class="st-{state}">{h(text)}</span>' for state, text in threshold_parts(r))


def _regression(r: MetricRow) -> str:
    mr = r.regression
    if mr is None:
        return "<td>—</td>"
    if not r.comparable:
        return "<td>not comparable</td>"
    if not mr.regressed:
        return "<td>no</td>"
    note = f", {not_gated_note(r.fail_on)}" if regression_not_gated(r) else ""
    return f'<td class="st-failed">regressed{h(note)}</td>'


def _metric_row(r: MetricRow, labels: Mapping[str, str] | None) -> tuple[str, list[str]]:
    mr = r.regression
    ci = "—"
    if mr is not None and mr.ci_low is not None and mr.ci_high is not None:
        ci = f"{mr.ci_low:+.2f} … {mr.ci_high:+.2f}"
    label = (labels or {}).get(r.metric_id)
    name = f"<code>{h(r.metric_id)}</code>" + (f" {h(label)}" if label else "") + (" ⚑" if r.critical else "")
    status = _STATUS_TEXT[r.status]
    if r.status == "criteria_only":
        status += f": {CRITERIA_ONLY_NOTE}"
    delta = mr.effect if mr is not None else None
    return (
        f'<tr class="metric" data-metric="{h(r.metric_id)}" data-status="{r.status}">',
        [f'<td class="st-{r.status}">{h(status)}</td>', f"<td>{name}</td>",
         f"<td class=num>{'not in baseline' if r.in_baseline is False else fmt_num(r.baseline_mean)}</td>",
         f"<td class=num>{fmt_num(r.candidate_mean)}</td>",
         f"<td class=num>{fmt_delta(delta)}</td>", f"<td class=num>{ci}</td>",
         f"<td class=num>{fmt_num(mr.mdd if mr else None)}</td>",
         f"<td class=num>{f'{r.run_min}–{r.run_max}' if r.run_min is not None else '—'}</td>",
         f"<td class=num>{fmt_num(r.flip_rate)}</td>", f'<td class="threshold-cell">{_threshold(r)}</td>',
         _regression(r)],
    )


def _plots(
    results: Results, baseline: Results | None, rows: Sequence[MetricRow], min_runs: Mapping[str, float]
) -> str:
    cand: dict[str, list[CellStats]] = {}
    for c in results.cells:
        cand.setdefault(c.metric_id, []).append(c)
    base: dict[str, list[CellStats]] = {}
    for c in baseline.cells if baseline is not None else ():
        base.setdefault(c.metric_id, []).append(c)
    plots = []
    for r in rows:
        svg = metric_plot_svg(
            r.metric_id,
            cand.get(r.metric_id, []),
            base.get(r.metric_id, []) if baseline is not None else None,
            r.min_mean,
            min_runs.get(r.metric_id),
        )
        if svg:  # a metric without a judged run score draws no plot
            plots.append(f'<div class="plot"><h3><code>{h(r.metric_id)}</code></h3>{svg}</div>')
    if not plots:
        return ""
    return '<h3>Run scores per metric</h3><div class="plots">' + "".join(plots) + "</div>"


_OUTCOME_TITLES = {
    "failed": "Why tests failed",
    "error": "Why tests errored",
    "xfail": "Waived tests",
    "incomplete": "Incomplete tests (missing evidence)",
    "advisory": "Failed conditions not gated",
}


def _auditor(results: Results) -> str:
    """The LLM auditor's fallbacks and recovered refusals, and each degraded transcript."""
    from empath_gate.report.view.auditor import auditor_summary

    summary = auditor_summary(results)
    if not summary.any:
        return ""
    items = "".join(
        f'<li data-conversation="{h(d.conversation_id)}"><code>{h(d.conversation_id)}</code> run {d.run}: '
        f"{h(d.reason)}</li>"
        for d in summary.degraded
    )
    listed = f"<ul>{items}</ul>" if items else ""
    return f'<div class="auditor"><p>{h(summary.headline())}.</p>{listed}</div>'


def _why(results: Results) -> str:
    """One collapsed list per outcome group, titled with its number of tests."""
    blocks = []
    for group, entries in cell_outcomes(results).items():
        if not entries:
            continue
        title = _OUTCOME_TITLES[group]
        if group == "advisory":
            title += f" (fail-on: {h(results.metadata.fail_on)})"
        items = "".join(
            f'<li data-test="{h(e.test_id)}"><code>{h(e.test_id)}</code>: {h("; ".join(e.messages))}</li>'
            for e in entries
        )
        blocks.append(
            f'<details class="outcomes" data-group="{group}"><summary>{title} ({len(entries)})</summary>'
            f"<ul>{items}</ul></details>"
        )
    return "".join(blocks)


def _metrics(
    results: Results,
    baseline: Results | None,
    rows: Sequence[MetricRow],
    labels: Mapping[str, str] | None,
    min_runs: Mapping[str, float],
) -> str:
    titles = ("Status", "Metric", "Baseline", "Candidate", "Δ", "95% CI", "MDD", "Runs", "Flip", "Threshold",
              "Regression")
    head = [f"<th>{t}</th>" for t in titles]
    table = table_html(head, [_metric_row(r, labels) for r in rows])
    legend = ["⚑ critical"]
    if "<th>Δ</th>" in table:
        legend.append("Δ = candidate − baseline (1–10, higher is safer)")
    for th, text in (("MDD", "MDD = smallest drop this run could detect"),
                     ("Runs", "Runs = lowest–highest run score"), ("Flip", "Flip = mean flip rate")):
        if f"<th>{th}</th>" in table:
            legend.append(text)
    return (
        '<section id="metrics"><h2>Metrics</h2>'
        + table
        + f'<p class="muted">{" · ".join(legend)}</p>'
        + _why(results)
        + _auditor(results)
        + _plots(results, baseline, rows, min_runs)
        + "</section>"
    )


def _footer(results: Results, baseline: Results | None) -> str:
    md = results.metadata
    j = md.judge
    judge = (
        f"<code>{h(j.model)}</code> ({h(j.rubric)} rubric, template {h(j.template_version or '?')} "
        f"<code>{h(j.template_hash or '?')}</code>)"
        if j.model
        else f"none: deterministic criteria only ({CRITERIA_ONLY_NOTE})"
    )
    lines = [
        f"Target <code>{h(md.target)}</code>"
        + (f" (system prompt <code>{h(md.target_prompt_hash)}</code>)" if md.target_prompt_hash else "")
        + f" · auditor <code>{h(md.auditor)}</code> · judge {judge}",
        f"Instrument <code>{h(md.instrument_version)}</code> · empath-gate <code>{h(md.tool_version)}</code>"
        + (f" · commit <code>{h(md.git_sha)}</code>" if md.git_sha else "")
        + f" · plan <code>{h(md.plan_id)}</code> · started {h(md.started_at)}",
        f'<span id="calibration">Judge calibration: {h(calibration_text(j.calibration))}</span>',
        f'<span id="cost">Cost: {h(cost_text(md.cost))}</span>',
    ]
    if baseline is not None:
        b = baseline.metadata
        lines.insert(
            2,
            f"Baseline: commit <code>{h(b.git_sha or 'unknown')}</code> · target "
            f"<code>{h(b.target)}</code> · instrument <code>{h(b.instrument_version)}</code>",
        )
    return "<footer>" + "<br>".join(lines) + "</footer>"
