"""The markdown diff's tables: by dimension, by metric and test-retest reliability (pure)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from tabulate import tabulate

from empath_gate.report.escape import md_code, md_text
from empath_gate.report.markdown.header import STATUS_ICONS
from empath_gate.report.view import (
    MetricRow,
    dimension_label,
    dimension_rows,
    fmt_delta,
    fmt_num,
    fmt_pct,
    not_gated_note,
    regression_not_gated,
    reliability_rows,
    threshold_parts,
)
from empath_gate.results import Results


def _label(metric_id: str, labels: Mapping[str, str] | None) -> str:
    code = md_code(metric_id)
    if labels and metric_id in labels and labels[metric_id] != metric_id:
        return f"{md_text(labels[metric_id])} ({code})"
    return code


THRESHOLD_ICONS: dict[str, str] = {
    "error": "⛔",
    "failed": "❌",
    "xfail": "🟡",
    "advisory": "⚠️",
    "passed": "✅",
    "skipped": "⏭️",
    "criteria_only": "🔎",
}
"""Icon of each part of a Threshold cell (:func:`empath_gate.report.view.threshold_parts`)."""


def _threshold_cell(r: MetricRow) -> str:
    return " · ".join(f"{THRESHOLD_ICONS[state]} {md_text(text)}" for state, text in threshold_parts(r))


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
        note = f", {not_gated_note(r.fail_on)}" if regression_not_gated(r) else ""
        return f"🔻 **regressed** ({how}{note})"
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
        if r.runs_given is not None:
            runs += f" · {r.runs_given}"
        delta = fmt_delta(r.regression.effect if r.regression is not None else r.change)
        body.append(
            [
                STATUS_ICONS[r.status],
                _label(r.metric_id, labels) + crit,
                ("not in baseline" if r.in_baseline is False else fmt_num(r.baseline_mean))
                if with_baseline
                else "—",
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
        failing = ", ".join([md_code(m) for m in d.failing] + [f"{md_code(m)} (error)" for m in d.errored]
                            + [f"{md_code(m)} (incomplete)" for m in d.incomplete])
        body.append(
            [
                STATUS_ICONS[d.status],
                md_text(label),
                str(len(d.metrics)),
                failing or "0",
                fmt_num(d.baseline_mean) if with_baseline else "—",
                fmt_num(d.candidate_mean),
                fmt_delta(d.change if with_baseline else None),
            ]
        )
    return str(tabulate(body, headers=headers, tablefmt="github", disable_numparse=True))


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
        "minority side of the pass mark." + _runs_used(results) + "\n\n" + str(table)
    )


def _runs_used(results: Results) -> str:
    """The runs the figures read, when sequential gating stopped some (else nothing)."""
    rel = results.reliability or {}
    stopped = rel.get("runs_stopped") or results.summary.transcripts_stopped
    if not stopped:
        return ""
    used = rel.get("runs_used")
    return (f" They use the {used} runs that ran; {stopped} runs were not started (stopped as settled, "
            "sequential gating)." if used is not None else
            f" {stopped} runs were not started (stopped as settled, sequential gating) and are not used.")


def _worst_case_gap(results: Results, labels: Mapping[str, str] | None) -> str:
    """The worst-case gap per paired suite x metric (nothing when the run has no paired suite)."""
    from empath_gate.report.view.gap import gap_rows

    rows = gap_rows(results)
    if not rows:
        return ""
    headers = ["", "Suite", "Metric", "Cooperative", "Worst case", "Gap", "95% CI", "Seeds", "Limit"]
    body = [
        [
            "❌" if r.over else ("✅" if r.gap is not None else "⏭️"),
            md_code(r.suite),
            _label(r.metric_id, labels),
            fmt_num(r.cooperative),
            fmt_num(r.worst_case),
            fmt_num(r.gap),
            f"{r.ci_low:+.2f} … {r.ci_high:+.2f}" if r.ci_low is not None and r.ci_high is not None else "—",
            str(r.seeds),
            fmt_num(r.limit),
        ]
        for r in rows
    ]
    legend = ("Gap = mean over seeds of (cooperative persona − worst-case personas), in score points; "
              "95% CI = cluster bootstrap over seeds; the check fails when a gap exceeds its limit")
    table = str(tabulate(body, headers=headers, tablefmt="github", disable_numparse=True))
    return f"#### Worst-case gap\n\n{table}\n\n<sub>{legend}</sub>"
