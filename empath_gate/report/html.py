"""The self-contained HTML report: one file that opens with no network.

Sections: a verdict header; notes (criteria-only metrics, judge failures, infrastructure);
a dimension overview; per metric a table row and an inline SVG plot of the run scores
(baseline beside candidate, with the ``min_mean`` and ``min_run`` threshold lines); a
test-retest grid per conversation (every run's score or state); test-retest reliability;
waivers; the worst conversations; and a transcript viewer behind a content note (click to
reveal), showing each turn with the judge's verdicts, the cited quotes highlighted, and
JudgeFailures, target content-filter events and hand-offs marked. A footer carries models,
versions, judge calibration status and cost.

The HTML is an artifact, not a public comment, so transcripts are shown in full (behind the
content note). Every string from a results file or a transcript is escaped
(:func:`~empath_gate.report.escape.html_text`). The page carries a Content-Security-Policy
that allows only its own inline style and script (by SHA-256 hash) and no network at all, so
even a missed escape could not run a script or load anything.

:func:`render_html` is pure (transcripts are passed in); :func:`load_transcripts` reads them
from the records' ``transcript_path`` (relative to the results file's folder, or absolute; a
missing or unreadable file becomes a message shown in its place, never a crash);
:func:`write_html_report` does both and writes the file.
"""

from __future__ import annotations

import base64
import hashlib
import re
from collections.abc import Mapping, Sequence
from pathlib import Path

from empath_gate.analysis.stats import CellStats
from empath_gate.conversation.transcript import Transcript, Turn
from empath_gate.judging.verdict import MetricVerdict
from empath_gate.report.escape import html_text as h
from empath_gate.report.view import (
    CRITERIA_ONLY_NOTE,
    MetricRow,
    WorstEntry,
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
from empath_gate.results import Results, RunRecord

MAX_TRANSCRIPTS = 400
"""Transcripts embedded at most (worst conversations first); the rest stay in the artifact."""

CONTENT_NOTE = (
    "Content note: these transcripts are conversations about suicide, self-harm, abuse or other "
    "distress, written by a model playing a help-seeker. They are shown in full for review."
)

_CSS = """
:root{--bg:#fff;--fg:#1f2328;--muted:#59636e;--line:#d1d9e0;--pass:#1a7f37;--fail:#cf222e;--warn:#9a6700;
--err:#8250df;--skip:#59636e;--mark:#fff8c5}
*{box-sizing:border-box}
body{font:14px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:var(--fg);
background:var(--bg);margin:0;padding:0 24px 48px;max-width:1280px}
h1{font-size:22px;margin:16px 0 4px}h2{font-size:18px;margin:28px 0 8px;border-bottom:1px solid var(--line)}
h3{font-size:15px;margin:16px 0 6px}
table{border-collapse:collapse;margin:6px 0 12px}th,td{border:1px solid var(--line);padding:3px 8px;
text-align:left;vertical-align:top}th{background:#f6f8fa}td.num{text-align:right;font-variant-numeric:tabular-nums}
code{font:12px ui-monospace,SFMono-Regular,Menlo,monospace;background:#f6f8fa;padding:1px 4px;
border-radius:4px}
.verdict{padding:12px 16px;border-radius:8px;margin:12px 0;border:2px solid}
.verdict.passed{border-color:var(--pass)}.verdict.failed,.verdict.usage_error{border-color:var(--fail)}
.verdict.not_evaluated{border-color:var(--warn)}.verdict.infrastructure_error{border-color:var(--err)}
.verdict h1{margin:0}.muted{color:var(--muted)}.note{border-left:4px solid var(--warn);padding:4px 12px;
background:#fff8e6;margin:6px 0}
.st-passed{color:var(--pass)}.st-failed{color:var(--fail);font-weight:600}.st-error{color:var(--err)}
.st-xfail{color:var(--warn)}.st-skipped,.st-criteria_only{color:var(--skip)}
.plots{display:flex;flex-wrap:wrap;gap:12px}.plot{border:1px solid var(--line);border-radius:6px;padding:6px}
.plot h3{margin:0 0 4px;font-size:13px}
.runs span{display:inline-block;min-width:22px;margin:1px;padding:0 3px;border-radius:3px;text-align:center;
font-size:12px;color:#fff}
.s-low{background:#cf222e}.s-mid{background:#bc4c00}.s-ok{background:#4d8b31}.s-high{background:#1a7f37}
.s-na{background:#8c959f}.s-co{background:#6e7781}.s-jf{background:#8250df}.s-missing{background:#24292f}
details.gate>summary{cursor:pointer;padding:10px 14px;background:#fff8e6;border:1px solid var(--warn);
border-radius:6px;font-weight:600}
details.transcript{border:1px solid var(--line);border-radius:6px;margin:8px 0;padding:4px 10px}
details.transcript>summary{cursor:pointer}
.turn{border-left:4px solid var(--line);margin:6px 0;padding:4px 10px;white-space:pre-wrap;
overflow-wrap:anywhere}.turn.user{border-color:#0969da;background:#f6f8fa}.turn.assistant{border-color:#1a7f37}
.turn .who{font-size:12px;color:var(--muted);white-space:normal}
mark.cite{background:var(--mark);border-bottom:2px solid var(--fail)}
.badge{display:inline-block;font-size:11px;padding:0 6px;border-radius:10px;margin-left:4px;color:#fff;
white-space:normal}
.b-filtered{background:var(--fail)}.b-handoff{background:#0969da}.b-error,.b-budget{background:var(--err)}
.b-other{background:#6e7781}.b-jf{background:#8250df}
.crit-FAIL{color:var(--fail);font-weight:600}.crit-PASS{color:var(--pass)}.missing{color:var(--fail)}
input#transcript-filter{padding:4px 8px;width:320px;margin:8px 0}
footer{margin-top:32px;border-top:1px solid var(--line);padding-top:8px;color:var(--muted)}
"""

_JS = """
(function () {
  'use strict';
  var gate = document.getElementById('transcripts');
  function reveal(id, scroll) {
    if (gate) { gate.open = true; }
    if (id) {
      var el = document.getElementById(id);
      if (el) {
        el.open = true;
        if (scroll) { el.scrollIntoView(); }
      }
    }
  }
  var hash = window.location.hash;
  if (hash === '#show-transcripts') { reveal(null, false); }
  else if (hash === '#show-all-transcripts') {
    reveal(null, false);
    var all = document.querySelectorAll('details.transcript');
    for (var k = 0; k < all.length; k++) { all[k].open = true; }
  }
  else if (hash.indexOf('#t-') === 0) { reveal(hash.slice(1), false); }
  var links = document.querySelectorAll('a.open-transcript');
  for (var i = 0; i < links.length; i++) {
    links[i].addEventListener('click', function (ev) {
      ev.preventDefault();
      reveal(this.getAttribute('href').slice(1), true);
    });
  }
  var box = document.getElementById('transcript-filter');
  if (box) {
    box.addEventListener('input', function () {
      var q = box.value.toLowerCase();
      var items = document.querySelectorAll('details.transcript');
      for (var j = 0; j < items.length; j++) {
        var hay = items[j].getAttribute('data-search') || '';
        items[j].hidden = q !== '' && hay.indexOf(q) < 0;
      }
    });
  }
  document.documentElement.setAttribute('data-ready', '1');
}());
"""

_VERDICT_WORD = {
    "passed": "PASSED",
    "failed": "FAILED",
    "not_evaluated": "NOT EVALUATED",
    "infrastructure_error": "INFRASTRUCTURE ERROR",
    "usage_error": "CONFIGURATION ERROR",
}
_STATUS_TEXT = {
    "passed": "passed",
    "failed": "failed",
    "error": "error",
    "xfail": "waived",
    "skipped": "skipped",
    "criteria_only": "criteria-only",
}


def _csp_hash(text: str) -> str:
    return "sha256-" + base64.b64encode(hashlib.sha256(text.encode("utf-8")).digest()).decode("ascii")


def _score_class(score: int) -> str:
    if score <= 3:
        return "s-low"
    if score <= 6:
        return "s-mid"
    if score <= 8:
        return "s-ok"
    return "s-high"


def _anchor(transcript_id: str) -> str:
    return "t-" + re.sub(r"[^A-Za-z0-9_-]", "_", transcript_id)


# ------------------------------------------------------------------------------------------- SVG


def _y(score: float, top: float, height: float) -> float:
    return top + (10 - score) / 9 * height


def metric_plot_svg(
    metric_id: str,
    candidate: Sequence[CellStats],
    baseline: Sequence[CellStats],
    min_mean: float | None,
    min_run: float | None = None,
) -> str:
    """An inline SVG strip plot of one metric's judged run scores (1-10, higher is safer):
    baseline runs on the left, candidate runs on the right (one dot per run, spread
    deterministically by conversation), each side's mean as a bar, and dashed threshold lines
    at ``min_mean`` (and ``min_run`` when given). 300 x 190 px."""
    w, hgt, left, top, ph = 300, 190, 34, 12, 150
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{hgt}" viewBox="0 0 {w} {hgt}" '
        f'role="img" aria-label="{h(metric_id)} run scores" class="metric-plot" data-metric="{h(metric_id)}">'
    ]
    for s in (1, 4, 7, 10):
        y = _y(s, top, ph)
        parts.append(f'<line x1="{left}" x2="{w - 6}" y1="{y:.1f}" y2="{y:.1f}" stroke="#eaeef2"/>')
        parts.append(
            f'<text x="{left - 6}" y="{y + 4:.1f}" font-size="10" text-anchor="end" fill="#59636e">{s}</text>'
        )
    groups = (("baseline", baseline, left + 20, "#8c959f"), ("candidate", candidate, left + 140, "#0969da"))
    for name, cells, x0, color in groups:
        parts.append(
            f'<text x="{x0 + 50}" y="{hgt - 8}" font-size="11" text-anchor="middle" '
            f'fill="#59636e">{name}</text>'
        )
        if not cells:
            parts.append(
                f'<text x="{x0 + 50}" y="{top + ph / 2:.1f}" font-size="11" text-anchor="middle" '
                f'fill="#8c959f">no data</text>'
            )
            continue
        scores: list[int] = []
        n = len(cells)
        for ci, cell in enumerate(cells):
            x = x0 + (ci + 0.5) * 100 / n
            for ri, sc in enumerate(cell.run_scores):
                if sc is None:
                    continue
                scores.append(sc)
                jitter = (ri % 3 - 1) * min(3.0, 30 / n)
                parts.append(
                    f'<circle cx="{x + jitter:.1f}" cy="{_y(sc, top, ph):.1f}" r="3" fill="{color}" '
                    f'fill-opacity="0.7" class="run-dot {name}"><title>{h(cell.conversation_id)} '
                    f"run {cell.run_ids[ri]}: {sc}</title></circle>"
                )
        if scores:
            mean = sum(scores) / len(scores)
            y = _y(mean, top, ph)
            parts.append(
                f'<line x1="{x0}" x2="{x0 + 100}" y1="{y:.1f}" y2="{y:.1f}" stroke="{color}" '
                f'stroke-width="2"><title>{name} mean {mean:.2f}</title></line>'
            )
    for value, label, dash in ((min_mean, "min_mean", "6 3"), (min_run, "min_run", "2 3")):
        if value is None:
            continue
        y = _y(value, top, ph)
        parts.append(
            f'<line x1="{left}" x2="{w - 6}" y1="{y:.1f}" y2="{y:.1f}" stroke="#cf222e" '
            f'stroke-dasharray="{dash}" class="threshold"><title>{label} {fmt_num(value)}</title></line>'
        )
        parts.append(
            f'<text x="{w - 8}" y="{y - 3:.1f}" font-size="9" text-anchor="end" fill="#cf222e">'
            f"{label} {fmt_num(value)}</text>"
        )
    parts.append("</svg>")
    return "".join(parts)


def dimension_bars_svg(rows: Sequence[tuple[str, float | None, float | None]]) -> str:
    """Horizontal bars of each dimension's candidate mean (blue) over its baseline mean (grey
    outline), on the 1-10 scale. ``rows``: ``(label, baseline_mean, candidate_mean)``."""
    bar_w, lab_w, row_h = 300, 170, 22
    hgt = row_h * len(rows) + 20
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{lab_w + bar_w + 60}" height="{hgt}" '
        f'role="img" aria-label="dimension means" class="dimension-bars">'
    ]
    for i, (label, base, cand) in enumerate(rows):
        y = 6 + i * row_h
        parts.append(f'<text x="{lab_w - 6}" y="{y + 13}" font-size="12" text-anchor="end">{h(label)}</text>')
        parts.append(f'<rect x="{lab_w}" y="{y + 2}" width="{bar_w}" height="14" fill="#f6f8fa"/>')
        if cand is not None:
            parts.append(
                f'<rect x="{lab_w}" y="{y + 2}" width="{(cand - 1) / 9 * bar_w:.1f}" height="14" '
                f'fill="#0969da"><title>candidate {cand:.2f}</title></rect>'
            )
            parts.append(f'<text x="{lab_w + bar_w + 6}" y="{y + 13}" font-size="11">{cand:.2f}</text>')
        if base is not None:
            parts.append(
                f'<rect x="{lab_w}" y="{y + 1}" width="{(base - 1) / 9 * bar_w:.1f}" height="16" '
                f'fill="none" stroke="#57606a" stroke-dasharray="3 2"><title>baseline {base:.2f}</title>'
                f"</rect>"
            )
    parts.append("</svg>")
    return "".join(parts)


# ------------------------------------------------------------------------------------ sections


def _header(results: Results, rows: Sequence[MetricRow]) -> str:
    v = overall_verdict(results, rows)
    c = v.counts
    md = results.metadata
    counts = (
        f"{c.get('passed', 0)} passed · {c.get('failed', 0)} failed · {c.get('xfail', 0)} waived · "
        f"{c.get('skipped', 0)} skipped · {c.get('error', 0)} errors"
    )
    out = [
        f'<section class="verdict {v.status}" id="verdict" data-status="{v.status}">',
        f"<h1>{_VERDICT_WORD[v.status]} · empath-gate <code>{h(suite_key(results))}</code>: "
        f"{h(v.headline)}</h1>",
        f'<div class="muted">Tests (conversation × metric): {counts} · {len(results.records)} transcripts, '
        f"{md.runs} runs per conversation · target <code>{h(md.target)}</code></div>",
    ]
    if v.critical_failing:
        out.append(
            "<div><strong>Critical metrics failing:</strong> "
            + ", ".join(f"<code>{h(m)}</code>" for m in v.critical_failing)
            + "</div>"
        )
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
    body = []
    bars = []
    for d in drows:
        label = dimension_label(d.dimension, labels)
        failing = ", ".join(f"<code>{h(m)}</code>" for m in d.failing) or "0"
        body.append(
            f'<tr class="dim" data-dimension="{h(d.dimension)}"><td class="st-{d.status}">'
            f"{_STATUS_TEXT[d.status]}</td><td>{h(label)}</td><td class=num>{len(d.metrics)}</td>"
            f"<td>{failing}</td><td class=num>{fmt_num(d.baseline_mean)}</td>"
            f"<td class=num>{fmt_num(d.candidate_mean)}</td><td class=num>{fmt_delta(d.change)}</td></tr>"
        )
        bars.append((label, d.baseline_mean, d.candidate_mean))
    return (
        '<section id="dimensions"><h2>Dimensions</h2><table><thead><tr><th>Status</th><th>Dimension</th>'
        "<th>Metrics</th><th>Failing</th><th>Baseline</th><th>Candidate</th><th>Δ</th></tr></thead><tbody>"
        + "".join(body)
        + "</tbody></table>"
        + dimension_bars_svg(bars)
        + "</section>"
    )


def _metrics(
    results: Results,
    baseline: Results | None,
    rows: Sequence[MetricRow],
    labels: Mapping[str, str] | None,
    min_runs: Mapping[str, float],
) -> str:
    body = []
    for r in rows:
        mr = r.regression
        ci = (
            f"{mr.ci_low:+.2f} … {mr.ci_high:+.2f}"
            if mr and mr.ci_low is not None and mr.ci_high is not None
            else "—"
        )
        reg = (
            "—"
            if mr is None
            else ("not comparable" if not r.comparable else ("regressed" if mr.regressed else "no"))
        )
        label = (labels or {}).get(r.metric_id)
        name = (
            f"<code>{h(r.metric_id)}</code>"
            + (f" {h(label)}" if label else "")
            + (" ⚑" if r.critical else "")
        )
        status = _STATUS_TEXT[r.status]
        if r.status == "criteria_only":
            status += f": {CRITERIA_ONLY_NOTE}"
        delta = mr.effect if mr is not None else None
        body.append(
            f'<tr class="metric" data-metric="{h(r.metric_id)}" data-status="{r.status}">'
            f'<td class="st-{r.status}">{h(status)}</td><td>{name}</td>'
            f"<td class=num>{fmt_num(r.baseline_mean)}</td><td class=num>{fmt_num(r.candidate_mean)}</td>"
            f"<td class=num>{fmt_delta(delta)}</td><td class=num>{ci}</td>"
            f"<td class=num>{fmt_num(mr.mdd if mr else None)}</td>"
            f"<td class=num>{f'{r.run_min}–{r.run_max}' if r.run_min is not None else '—'}</td>"
            f"<td class=num>{fmt_num(r.flip_rate)}</td><td>{h(', '.join(r.failed_conditions)) or '—'}</td>"
            f'<td class="{"st-failed" if reg == "regressed" else ""}">{reg}</td></tr>'
        )
    table = (
        "<table><thead><tr><th>Status</th><th>Metric</th><th>Baseline</th><th>Candidate</th><th>Δ</th>"
        "<th>95% CI</th><th>MDD</th><th>Runs</th><th>Flip</th><th>Failed conditions</th><th>Regression</th>"
        "</tr></thead><tbody>" + "".join(body) + "</tbody></table>"
    )
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
            base.get(r.metric_id, []),
            r.min_mean,
            min_runs.get(r.metric_id),
        )
        plots.append(f'<div class="plot"><h3><code>{h(r.metric_id)}</code></h3>{svg}</div>')
    reasons = []
    for r in rows:
        for reason in r.reasons:
            reasons.append(f"<li>{h(reason)}</li>")
    why = (
        f"<details><summary>Why tests failed ({len(reasons)})</summary><ul>{''.join(reasons)}</ul></details>"
        if reasons
        else ""
    )
    return (
        '<section id="metrics"><h2>Metrics</h2>'
        + table
        + '<p class="muted">⚑ critical · Δ = candidate − baseline (1–10, higher is safer) · MDD = smallest '
        "drop this run could detect · Runs = lowest–highest run score · Flip = mean flip rate</p>"
        + why
        + '<h3>Run scores per metric</h3><div class="plots">'
        + "".join(plots)
        + "</div></section>"
    )


def _run_chip(status: str, score: int | None, run: int, reason: str | None) -> str:
    if score is not None:
        return f'<span class="{_score_class(score)}" title="run {run}: {score}">{score}</span>'
    label, cls = {
        "na": ("N/A", "s-na"),
        "criteria_only": ("CO", "s-co"),
        "judge_failure": ("JF", "s-jf"),
        "missing": ("—", "s-missing"),
    }.get(status, (status, "s-na"))
    title = f"run {run}: {status}" + (f" ({reason})" if reason else "")
    return f'<span class="{cls}" title="{h(title)}">{label}</span>'


def _retest(results: Results) -> str:
    by_conv: dict[str, list[CellStats]] = {}
    for c in results.cells:
        by_conv.setdefault(c.conversation_id, []).append(c)
    metrics = list(dict.fromkeys(c.metric_id for c in results.cells))
    if not by_conv:
        return ""
    head = "".join(f"<th><code>{h(m)}</code></th>" for m in metrics)
    body = []
    for conv, cells in by_conv.items():
        idx = {c.metric_id: c for c in cells}
        tds = []
        for m in metrics:
            cell = idx.get(m)
            if cell is None:
                tds.append("<td></td>")
                continue
            c = cell
            reasons = dict(c.failure_reasons)
            chips = "".join(
                _run_chip(st, sc, r, reasons.get(r))
                for r, st, sc in zip(c.run_ids, c.statuses, c.run_scores, strict=True)
            )
            extra = []
            if c.range is not None:
                extra.append(f"range {c.range}")
            if c.flip_rate:
                extra.append(f"flip {fmt_num(c.flip_rate)}")
            tds.append(f'<td class="runs">{chips}<div class="muted">{" · ".join(extra)}</div></td>')
        body.append(
            f'<tr class="retest" data-conversation="{h(conv)}"><td><code>{h(conv)}</code></td>'
            + "".join(tds)
            + "</tr>"
        )
    return (
        '<section id="retest"><h2>Test-retest per conversation</h2><p class="muted">Each chip is one run: '
        "its score, N/A (not applicable), CO (criteria-only, no score), JF (judge failure), — (missing)."
        f"</p><table><thead><tr><th>Conversation</th>{head}</tr></thead><tbody>"
        + "".join(body)
        + "</tbody></table></section>"
    )


def _reliability(results: Results, rows: Sequence[MetricRow]) -> str:
    rel = reliability_rows(results, rows)
    if not rel:
        return ""
    body = "".join(
        f'<tr data-metric="{h(r.metric_id)}"><td><code>{h(r.metric_id)}</code></td>'
        f"<td class=num>{fmt_num(r.within_sd)}</td><td class=num>{fmt_num(r.icc)}</td>"
        f"<td class=num>{fmt_num(r.flip_rate)}</td>"
        f"<td class=num>{fmt_pct(r.different_transcripts)}</td>"
        f"<td class=num>{fmt_num(r.judge_variance)}</td>"
        f"<td class=num>{fmt_num(r.generation_variance)}</td></tr>"
        for r in rel
    )
    return (
        '<section id="reliability"><h2>Test-retest reliability</h2><table><thead><tr><th>Metric</th>'
        "<th>Within-conversation SD</th><th>ICC(1,1)</th><th>Flip rate</th><th>Different transcripts</th>"
        "<th>σ² judge</th><th>σ² generation</th></tr></thead><tbody>" + body + "</tbody></table></section>"
    )


def _waivers(results: Results) -> str:
    if not results.waivers:
        return ""
    items = "".join(
        f"<li><code>{h(w.metric)}</code>{f' · seed <code>{h(w.seed)}</code>' if w.seed else ''}"
        f"{f' · persona <code>{h(w.persona)}</code>' if w.persona else ''}: {h(w.reason)} "
        f"(owner {h(w.owner)}, "
        f"expires {w.expires.isoformat()})</li>"
        for w in results.waivers
    )
    return f'<section id="waivers"><h2>Waivers in force</h2><ul>{items}</ul></section>'


def _worst(entries: Sequence[WorstEntry], embedded: set[str]) -> str:
    if not entries:
        return ""
    body = []
    for e in entries:
        tid = f"{e.conversation_id}-r{e.run}" if e.run is not None else None
        link = (
            f'<a class="open-transcript" href="#{_anchor(tid)}">open transcript</a>'
            if tid and tid in embedded
            else h(e.transcript_path or "—")
        )
        turns = ", ".join(str(t) for t in e.turns) or "—"
        body.append(
            f"<tr><td><code>{h(e.conversation_id)}</code></td><td><code>{h(e.metric_id)}</code></td>"
            f'<td class="st-{h(e.status)}">{h(e.status)}</td>'
            f"<td class=num>{e.score if e.score is not None else '—'}</td>"
            f"<td>{h(e.criterion_id or '—')}</td><td class=num>{e.run if e.run is not None else '—'}</td>"
            f"<td class=num>{turns}</td><td>{link}</td></tr>"
        )
    return (
        '<section id="worst"><h2>Worst conversations</h2><table><thead><tr><th>Conversation</th>'
        "<th>Metric</th><th>Outcome</th><th>Score</th><th>Failed criterion</th><th>Run</th><th>Turn</th>"
        "<th>Transcript</th></tr></thead><tbody>" + "".join(body) + "</tbody></table></section>"
    )


def _highlight(content: str, quotes: Sequence[tuple[str, str]]) -> str:
    """``content`` escaped, with each quote found (case-insensitively, any whitespace) wrapped
    in ``<mark class="cite">`` titled by its label."""
    spans: list[tuple[int, int, str]] = []
    for quote, label in quotes:
        words = quote.split()
        if not words:
            continue
        pattern = re.compile(r"\s+".join(re.escape(w) for w in words), re.IGNORECASE)
        m = pattern.search(content)
        if m:
            spans.append((m.start(), m.end(), label))
    spans.sort()
    out: list[str] = []
    pos = 0
    for s, e, label in spans:
        if s < pos:
            continue
        out.append(h(content[pos:s]))
        out.append(f'<mark class="cite" title="{h(label)}">{h(content[s:e])}</mark>')
        pos = e
    out.append(h(content[pos:]))
    return "".join(out)


_EVENT_BADGE = {"filtered": "b-filtered", "handoff": "b-handoff", "error": "b-error", "budget": "b-budget"}
"""Badge class of an event kind (any other kind: ``b-other``)."""


def _events(turn: Turn) -> str:
    out = []
    for ev in turn.events:
        cls = _EVENT_BADGE.get(ev.kind, "b-other")
        label = "content filter" if ev.kind == "filtered" else ev.kind.replace("_", " ")
        out.append(
            f'<span class="badge {cls} ev-{h(ev.kind)}" title="{h(ev.role)}">{h(label)} ({h(ev.role)})</span>'
        )
    return "".join(out)


def _verdict_table(verdicts: Sequence[MetricVerdict]) -> str:
    rows = []
    for v in verdicts:
        if v.status == "scored":
            state = f"score {v.score}" + (
                f" (judge wrote {v.raw_score}, capped)" if v.raw_score != v.score else ""
            )
        elif v.status == "judge_failure" and v.failure is not None:
            state = (
                f'<span class="badge b-jf jf">JudgeFailure: {h(v.failure.reason)}</span> '
                f"{h(v.failure.detail)}"
            )
        elif v.status == "na":
            state = "N/A"
        else:
            state = f"criteria-only ({CRITERIA_ONLY_NOTE})"
        crits = "".join(
            f'<li class="crit-{c.state.replace("/", "")}">{h(c.criterion_id)}: {h(c.state)}'
            f"{' (critical)' if c.critical else ''}{' — ' + h(c.check_detail) if c.check_detail else ''}"
            + "".join(f" · turn {ct.turn}" for ct in c.citations)
            + "</li>"
            for c in v.criteria
        )
        rows.append(
            f'<tr data-metric="{h(v.metric_id)}"><td><code>{h(v.metric_id)}</code></td><td>{state}</td>'
            f"<td><ul>{crits}</ul></td></tr>"
        )
    return (
        '<table class="verdicts"><thead><tr><th>Metric</th><th>Verdict</th><th>Criteria</th></tr></thead>'
        "<tbody>" + "".join(rows) + "</tbody></table>"
    )


def _transcript(rec: RunRecord, item: Transcript | str | None) -> str:
    anchor = _anchor(rec.transcript_id)
    fails = sum(1 for v in rec.verdicts for c in v.criteria if c.state == "FAIL")
    jf = sum(1 for v in rec.verdicts if v.status == "judge_failure")
    flags = []
    if fails:
        flags.append(f"{fails} FAIL")
    if jf:
        flags.append(f"{jf} judge failure")
    if rec.target_filtered:
        flags.append(f"{rec.target_filtered} filtered")
    if rec.handoffs:
        flags.append(f"{rec.handoffs} hand-off")
    if rec.status != "complete":
        flags.append(rec.status)
    summary = f"<code>{h(rec.conversation_id)}</code> · run {rec.run} · {h(rec.locale)}" + (
        f" · {h(', '.join(flags))}" if flags else ""
    )
    search = f"{rec.conversation_id} {rec.seed_id} {rec.persona_id} {' '.join(flags)}".lower()
    parts = [
        f'<details class="transcript" id="{anchor}" data-search="{h(search)}"><summary>{summary}</summary>',
        _verdict_table(rec.verdicts),
    ]
    if rec.error:
        parts.append(f'<p class="missing">Transcript stopped: {h(rec.error)}</p>')
    if not isinstance(item, Transcript):
        msg = item if isinstance(item, str) else "no transcript file recorded"
        parts.append(f'<p class="missing transcript-missing">{h(msg)}</p></details>')
        return "".join(parts)
    cites: dict[int, list[tuple[str, str]]] = {}
    for v in rec.verdicts:
        for c in v.criteria:
            for ct in c.citations:
                cites.setdefault(ct.turn, []).append(
                    (ct.quote, f"{v.metric_id} · {c.criterion_id} · {c.state}")
                )
    for t in item.turns:
        who = "user (" + t.source + ")" if t.role == "user" else "assistant (target)"
        content = (
            _highlight(t.content, cites.get(t.index, [])) if t.content else '<em class="muted">(empty)</em>'
        )
        parts.append(
            f'<div class="turn {t.role}" data-turn="{t.index}"><div class="who">turn {t.index} · {h(who)}'
            f"{_events(t)}</div>{content}</div>"
        )
    for ev in item.events:
        parts.append(
            f'<div class="turn"><div class="who">transcript event{_events_from(ev.kind, ev.role)}</div></div>'
        )
    parts.append("</details>")
    return "".join(parts)


def _events_from(kind: str, role: str) -> str:
    cls = _EVENT_BADGE.get(kind, "b-other")
    return f'<span class="badge {cls} ev-{h(kind)}">{h(kind)} ({h(role)})</span>'


def _transcripts(results: Results, transcripts: Mapping[str, Transcript | str], order: Sequence[str]) -> str:
    records = {r.transcript_id: r for r in results.records}
    chosen = [t for t in order if t in records][:MAX_TRANSCRIPTS]
    left = len(results.records) - len(chosen)
    body = "".join(_transcript(records[t], transcripts.get(t)) for t in chosen)
    more = (
        f'<p class="muted">{left} more transcripts are in the artifact\'s transcript files.</p>'
        if left > 0
        else ""
    )
    return (
        '<section id="transcript-viewer"><h2>Transcripts</h2>'
        f'<details class="gate" id="transcripts"><summary>{h(CONTENT_NOTE)} Click to show the transcripts.'
        '</summary><input id="transcript-filter" type="search" placeholder="filter by conversation, seed, '
        f'persona, FAIL…" aria-label="filter transcripts">{body}{more}</details></section>'
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


def render_html(
    results: Results,
    *,
    baseline: Results | None = None,
    transcripts: Mapping[str, Transcript | str] | None = None,
    metric_labels: Mapping[str, str] | None = None,
    min_runs: Mapping[str, float] | None = None,
    base_dir: Path | None = None,
) -> str:
    """The report as one HTML document (module docstring). ``transcripts``: transcript id ->
    the transcript, or a message shown in its place (e.g. "missing: path"); when it is
    ``None`` and ``base_dir`` (the results file's folder) is given, they are read from there
    (:func:`load_transcripts`). ``min_runs``: metric id -> ``min_run`` threshold to draw (the
    ``min_mean`` line comes from the cells)."""
    if transcripts is None and base_dir is not None:
        transcripts = load_transcripts(results, base_dir)
    rows = metric_rows(results, baseline)
    worst = worst_conversations(results, 50)
    order = [f"{e.conversation_id}-r{e.run}" for e in worst if e.run is not None]
    order += [r.transcript_id for r in results.records]
    order = list(dict.fromkeys(order))
    embedded = set(order[:MAX_TRANSCRIPTS])
    title = f"empath-gate {suite_key(results)}: {overall_verdict(results, rows).headline}"
    css, js = _CSS.strip(), _JS.strip()
    csp = (
        f"default-src 'none'; style-src '{_csp_hash(css)}'; script-src '{_csp_hash(js)}'; img-src data:; "
        "base-uri 'none'; form-action 'none'"
    )
    body = [
        _header(results, rows),
        _dimensions(rows, metric_labels),
        _metrics(results, baseline, rows, metric_labels, min_runs or {}),
        _waivers(results),
        _worst(worst[:20], embedded),
        _retest(results),
        _reliability(results, rows),
        _transcripts(results, transcripts or {}, order),
        _footer(results, baseline),
    ]
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        f'<meta http-equiv="Content-Security-Policy" content="{csp}">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{h(title)}</title><style>{css}</style></head><body>\n"
        + "\n".join(b for b in body if b)
        + f"\n<script>{js}</script>\n</body></html>\n"
    )


def load_transcripts(results: Results, results_dir: Path) -> dict[str, Transcript | str]:
    """Read every record's transcript: ``transcript_path`` relative to ``results_dir`` or
    absolute. A missing file gives ``"transcript file missing: <path>"``, an unreadable one
    ``"transcript file unreadable: <why>"``; a record without a path is left out."""
    from empath_gate.conversation.engine import read_transcript

    out: dict[str, Transcript | str] = {}
    for rec in results.records:
        if not rec.transcript_path:
            continue
        p = Path(rec.transcript_path)
        path = p if p.is_absolute() else results_dir / p
        if not path.is_file():
            out[rec.transcript_id] = f"transcript file missing: {rec.transcript_path}"
            continue
        try:
            out[rec.transcript_id] = read_transcript(path)
        except (OSError, ValueError) as exc:
            out[rec.transcript_id] = f"transcript file unreadable: {exc}"
    return out


def write_html_report(
    results: Results,
    path: Path,
    *,
    results_dir: Path,
    baseline: Results | None = None,
    metric_labels: Mapping[str, str] | None = None,
    min_runs: Mapping[str, float] | None = None,
) -> Path:
    """Load the transcripts (:func:`load_transcripts`), render (:func:`render_html`) and write
    ``path`` (UTF-8); returns the path."""
    html_doc = render_html(
        results,
        baseline=baseline,
        transcripts=load_transcripts(results, results_dir),
        metric_labels=metric_labels,
        min_runs=min_runs,
    )
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(html_doc, encoding="utf-8")
    return path
