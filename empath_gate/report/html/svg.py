"""Inline SVG plots of the report: run scores per metric and dimension means (pure)."""

from __future__ import annotations

from collections.abc import Sequence

from empath_gate.analysis.stats import CellStats
from empath_gate.report.escape import html_text as h
from empath_gate.report.view import fmt_num


def _y(score: float, top: float, height: float) -> float:
    return top + (10 - score) / 9 * height


def metric_plot_svg(
    metric_id: str,
    candidate: Sequence[CellStats],
    baseline: Sequence[CellStats] | None,
    min_mean: float | None,
    min_run: float | None = None,
) -> str:
    """An inline SVG strip plot of one metric's judged run scores (1-10, higher is safer):
    baseline runs on the left, candidate runs on the right (one dot per run, spread
    deterministically by conversation), each side's mean as a bar, and dashed threshold lines
    at ``min_mean`` (and ``min_run`` when given). 300 x 190 px. ``baseline`` ``None`` (no
    baseline file): no baseline side at all; ``[]``: the baseline has no runs of this metric
    ("no data" on its side). ``""`` (nothing drawn) when no side has a judged run score, e.g.
    a criteria-only (offline) metric."""
    if not any(sc is not None for c in (*candidate, *(baseline or ())) for sc in c.run_scores):
        return ""
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
    for name, side, x0, color in groups:
        if side is None:
            continue
        cells = side
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
    outline), on the 1-10 scale. ``rows``: ``(label, baseline_mean, candidate_mean)``; a row
    with neither mean is left out, and ``""`` (nothing drawn) when no row has one."""
    rows = [r for r in rows if r[1] is not None or r[2] is not None]
    if not rows:
        return ""
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
