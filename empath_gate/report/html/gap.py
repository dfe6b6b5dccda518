"""The HTML section of the worst-case gap: a paired chart per paired suite (pure).

Each metric is one row on the 1-10 scale (higher is safer): the cooperative arm's mean (green
dot) and the worst-case arm's mean (red dot), joined by a line whose length is the gap; the
gap, its 95 % interval and the limit are written beside it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from empath_gate.report.escape import html_text as h
from empath_gate.report.view import fmt_num
from empath_gate.report.view.gap import GapRow, gap_rows
from empath_gate.results import Results

_COOP, _WORST = "#1a7f37", "#cf222e"


def _x(score: float, left: float, width: float) -> float:
    return left + (score - 1) / 9 * width


def gap_pairs_svg(rows: Sequence[GapRow], labels: Mapping[str, str] | None) -> str:
    """An inline SVG paired chart of one suite's ``rows`` (module docstring); 22 px a row."""
    lab_w, plot_w, text_w, row_h = 210, 300, 200, 22
    hgt = row_h * len(rows) + 34
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{lab_w + plot_w + text_w}" height="{hgt}" '
        'role="img" aria-label="worst-case gap per metric" class="gap-pairs">'
    ]
    for s in (1, 4, 7, 10):
        x = _x(s, lab_w, plot_w)
        parts.append(f'<line x1="{x:.1f}" x2="{x:.1f}" y1="4" y2="{hgt - 22}" stroke="#eaeef2"/>')
        parts.append(f'<text x="{x:.1f}" y="{hgt - 8}" font-size="10" text-anchor="middle" '
                     f'fill="#59636e">{s}</text>')
    for i, r in enumerate(rows):
        y = 14 + i * row_h
        label = (labels or {}).get(r.metric_id) or r.metric_id
        parts.append(f'<text x="{lab_w - 8}" y="{y + 4}" font-size="12" text-anchor="end">{h(label)}</text>')
        if r.cooperative is None or r.worst_case is None:
            parts.append(f'<text x="{lab_w + 4}" y="{y + 4}" font-size="11" '
                         'fill="#8c959f">no pair judged</text>')
            continue
        xc, xw = _x(r.cooperative, lab_w, plot_w), _x(r.worst_case, lab_w, plot_w)
        color = _WORST if r.over else "#57606a"
        parts.append(f'<line x1="{xc:.1f}" x2="{xw:.1f}" y1="{y}" y2="{y}" stroke="{color}" '
                     'stroke-width="2"/>')
        parts.append(f'<circle cx="{xc:.1f}" cy="{y}" r="4" fill="{_COOP}" class="arm cooperative">'
                     f"<title>cooperative {r.cooperative:.2f}</title></circle>")
        parts.append(f'<circle cx="{xw:.1f}" cy="{y}" r="4" fill="{_WORST}" class="arm worst-case">'
                     f"<title>worst case {r.worst_case:.2f}</title></circle>")
        ci = f" [{fmt_num(r.ci_low)}, {fmt_num(r.ci_high)}]" if r.ci_low is not None else ""
        limit = f" (limit {fmt_num(r.limit)})" if r.limit is not None else ""
        parts.append(f'<text x="{lab_w + plot_w + 8}" y="{y + 4}" font-size="11" fill="{color}" '
                     f'class="gap-value" data-metric="{h(r.metric_id)}">'
                     f"gap {fmt_num(r.gap)}{ci}{limit}</text>")
    parts.append("</svg>")
    return "".join(parts)


def gap_section(results: Results, labels: Mapping[str, str] | None) -> str:
    """The ``worst-case-gap`` section: a paired chart per paired suite (nothing without one)."""
    rows = gap_rows(results)
    if not rows:
        return ""
    by_suite: dict[str, list[GapRow]] = {}
    for r in rows:
        by_suite.setdefault(r.suite, []).append(r)
    charts = "".join(
        f"<h3>{h(suite)}</h3>{gap_pairs_svg(rs, labels)}" for suite, rs in by_suite.items()
    )
    note = ("<p>Per metric: the cooperative persona's mean (green) and the worst-case personas' mean "
            "(red) over the seeds where both were judged; gap = cooperative − worst case in score "
            "points, with its 95% cluster-bootstrap interval over seeds.</p>")
    return f'<section id="worst-case-gap"><h2>Worst-case gap</h2>{note}{charts}</section>'
