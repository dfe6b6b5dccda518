"""The report's detail sections: the test-retest grid, reliability, waivers and the worst
conversations (pure)."""

from __future__ import annotations

from collections.abc import Sequence

from empath_gate.analysis.stats import CellStats
from empath_gate.report.escape import html_text as h
from empath_gate.report.html.summary import table_html
from empath_gate.report.html.transcripts import _anchor
from empath_gate.report.view import MetricRow, WorstEntry, fmt_num, fmt_pct, reliability_rows, turn_label
from empath_gate.results import Results


def _score_class(score: int) -> str:
    if score <= 3:
        return "s-low"
    if score <= 6:
        return "s-mid"
    if score <= 8:
        return "s-ok"
    return "s-high"


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
    body = [
        (f'<tr data-metric="{h(r.metric_id)}">',
         [f"<td><code>{h(r.metric_id)}</code></td>",
          f"<td class=num>{fmt_num(r.within_sd)}</td>", f"<td class=num>{fmt_num(r.icc)}</td>",
          f"<td class=num>{fmt_num(r.flip_rate)}</td>",
          f"<td class=num>{fmt_pct(r.different_transcripts)}</td>",
          f"<td class=num>{fmt_num(r.judge_variance)}</td>",
          f"<td class=num>{fmt_num(r.generation_variance)}</td>"])
        for r in rel
    ]
    head = [f"<th>{t}</th>" for t in ("Metric", "Within-conversation SD", "ICC(1,1)", "Flip rate",
                                      "Different transcripts", "σ² judge", "σ² generation")]
    return ('<section id="reliability"><h2>Test-retest reliability</h2>' + table_html(head, body)
            + "</section>")


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
    body: list[tuple[str, list[str]]] = []
    for e in entries:
        tid = f"{e.conversation_id}-r{e.run}" if e.run is not None else None
        link = (
            f'<a class="open-transcript" href="#{_anchor(tid)}">open transcript</a>'
            if tid and tid in embedded
            else h(e.transcript_path or "—")
        )
        turns = ", ".join(dict.fromkeys(turn_label(t, word=False) for t in e.turns)) or "—"
        body.append(("<tr>", [
            f"<td><code>{h(e.conversation_id)}</code></td>", f"<td><code>{h(e.metric_id)}</code></td>",
            f'<td class="st-{h(e.status)}">{h(e.status)}</td>',
            f"<td class=num>{e.score if e.score is not None else '—'}</td>",
            f"<td>{h(e.criterion_id or '—')}</td>",
            f"<td class=num>{e.run if e.run is not None else '—'}</td>",
            f"<td class=num>{turns}</td>", f"<td>{link}</td>",
        ]))
    head = [f"<th>{t}</th>" for t in ("Conversation", "Metric", "Outcome", "Score", "Failed criterion", "Run",
                                      "Turn", "Transcript")]
    return '<section id="worst"><h2>Worst conversations</h2>' + table_html(head, body) + "</section>"
