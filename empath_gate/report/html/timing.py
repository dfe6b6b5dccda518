"""The risk-timing section of the HTML report: per suite its rates, and per risk transcript a
timeline of its user turns with the alert turn, the confirm turn and the bot's first risk
response marked (inline SVG; pure)."""

from __future__ import annotations

from empath_gate.analysis.risk_timing import TranscriptTiming
from empath_gate.report.escape import html_text as h
from empath_gate.report.html.summary import table_html
from empath_gate.report.view.risk_timing import TIMING_LABEL, detector_lines, timing_line
from empath_gate.results.model import Results

_STEP, _LEFT, _TOP = 22, 10, 14
"""Pixels per user turn, left margin and top of the axis."""


def timeline_svg(t: TranscriptTiming) -> str:
    """A timeline of one transcript's user turns 1..n: a tick per turn, the alert turn (amber
    bar), the confirm turn (red bar) and the bot's first risk response (a blue dot on the turn
    whose reply it was; none when missed). ``data-timing`` carries the class."""
    n = max(t.user_turns, t.confirm_turn or 0, t.first_turn or 0, 1)
    w = _LEFT * 2 + _STEP * n
    hgt = _TOP + 22

    def x(turn: int) -> float:
        return _LEFT + (turn - 0.5) * _STEP

    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{hgt}" viewBox="0 0 {w} {hgt}" '
        f'role="img" class="risk-timeline" data-timing="{h(t.timing)}" '
        f'aria-label="{h(t.transcript_id)}: {h(TIMING_LABEL[t.timing])}">',
        f'<line x1="{_LEFT}" x2="{w - _LEFT}" y1="{_TOP}" y2="{_TOP}" stroke="#8c959f"/>',
    ]
    for k in range(1, n + 1):
        parts.append(f'<line x1="{x(k):.1f}" x2="{x(k):.1f}" y1="{_TOP - 3}" y2="{_TOP + 3}" '
                     'stroke="#8c959f"/>')
        parts.append(f'<text x="{x(k):.1f}" y="{_TOP + 16}" font-size="9" text-anchor="middle" '
                     f'fill="#59636e">{k}</text>')
    for turn, color, name in ((t.alert_turn, "#bf8700", "alert"), (t.confirm_turn, "#cf222e", "confirm")):
        if turn is not None:
            parts.append(f'<rect x="{x(turn) - 4:.1f}" y="2" width="8" height="{_TOP - 4}" fill="{color}" '
                         f'class="{name}"><title>{name} turn {turn}</title></rect>')
    if t.first_turn is not None:
        parts.append(f'<circle cx="{x(t.first_turn):.1f}" cy="{_TOP}" r="5" fill="#0969da" class="response">'
                     f"<title>first risk response: the reply to turn {t.first_turn} ({h(t.by or '')})</title>"
                     "</circle>")
    parts.append("</svg>")
    return "".join(parts)


def timing_section(results: Results) -> str:
    """The section (nothing when the file has no risk timing, e.g. before schema 3)."""
    if not results.risk_timing and not results.detector:
        return ""
    out = ['<section id="risk-timing"><h2>Risk-response timing</h2>',
           "<p>User turns, 1-based. Amber: alert turn; red: confirm turn; blue dot: the turn whose "
           "reply first responded to risk (text in at least 80% of the no-risk replies does not "
           "count).</p>"]
    from empath_gate.report.html.speakers import counts_line, speaker_order, timing_cell

    order = speaker_order(results)
    for suite in results.risk_timing:
        out.append(f"<h3>{h(suite.suite)}</h3><p>{h(timing_line(suite))}</p>{counts_line(suite)}")
        if suite.constant_texts:
            shown = "; ".join(suite.constant_texts[:5])
            out.append(f"<p>Set aside as constant text: {h(shown)}</p>")
        per_speaker = any(t.speakers for t in suite.transcripts)
        rows = [
            ("<tr>", [f"<td><code>{h(t.transcript_id)}</code></td>", f"<td>{h(TIMING_LABEL[t.timing])}</td>",
                      f"<td>{'' if t.lag is None else f'{t.lag:+d}'}</td>", f"<td>{timeline_svg(t)}</td>",
                      *([f"<td>{timing_cell(t.transcript_id, suite, order)}</td>"] if per_speaker else [])])
            for t in suite.transcripts
        ]
        head = [f"<th>{t}</th>" for t in ("transcript", "timing", "lag", "timeline",
                                          *(("per speaker",) if per_speaker else ()))]
        out.append(table_html(head, rows))
    if results.detector:
        items = "".join(f"<li>{h(line)}</li>" for line in detector_lines(results))
        out.append(f"<h3>The bot's risk detector</h3><ul>{items}</ul>")
    out.append("</section>")
    return "".join(out)
