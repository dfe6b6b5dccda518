"""Inline SVG charts of the dynamics page (pure): a transition heatmap, trajectory lines on
the valence scale, and a per-message label strip. Every string is escaped; no chart is drawn
for empty data (the callers check, these functions return ``""``)."""

from __future__ import annotations

from collections.abc import Sequence

from empath_gate.report.escape import html_text as h

NEG, POS, MID = (207, 34, 46), (9, 105, 218), (246, 248, 250)
"""Colours of valence -1 (red), +1 (blue) and 0 (near white), as RGB."""


def valence_colour(v: float) -> str:
    """A colour for a valence in -1..1: red below 0, blue above, near white at 0."""
    v = max(-1.0, min(1.0, v))
    end = NEG if v < 0 else POS
    a = abs(v)
    r, g, b = (round(MID[i] + (end[i] - MID[i]) * a) for i in range(3))
    return f"#{r:02x}{g:02x}{b:02x}"


def _blue(p: float) -> str:
    p = max(0.0, min(1.0, p))
    r, g, b = (round(255 + (POS[i] - 255) * p) for i in range(3))
    return f"#{r:02x}{g:02x}{b:02x}"


def heatmap_svg(
    title: str,
    rows: Sequence[str],
    cols: Sequence[str],
    probabilities: Sequence[Sequence[float]],
    row_totals: Sequence[int],
) -> str:
    """A heatmap of P(column | row): one cell per pair, darker blue = higher, the probability
    written in the cell; rows with no observation are hatched grey ("no data", their smoothed
    row is uniform). ``row_totals`` are shown at the right. ``""`` when every total is 0."""
    if not any(row_totals):
        return ""
    cell, left, top = 34, 150, 96
    w = left + cell * len(cols) + 60
    hgt = top + cell * len(rows) + 8
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{hgt}" viewBox="0 0 {w} {hgt}" '
        f'role="img" aria-label="{h(title)}" class="heatmap">',
        f'<text x="4" y="14" font-size="12" font-weight="600">{h(title)}</text>',
    ]
    for j, c in enumerate(cols):
        x = left + j * cell + cell / 2
        parts.append(
            f'<text x="{x:.0f}" y="{top - 6}" font-size="10" transform="rotate(-50 {x:.0f} {top - 6})" '
            f'fill="#59636e">{h(c)}</text>'
        )
    parts.append(
        f'<text x="{left + cell * len(cols) + 6}" y="{top - 6}" font-size="10" fill="#59636e">n</text>'
    )
    for i, r in enumerate(rows):
        y = top + i * cell
        parts.append(
            f'<text x="{left - 6}" y="{y + cell / 2 + 4:.0f}" font-size="11" text-anchor="end">{h(r)}</text>'
        )
        empty = row_totals[i] == 0
        for j, c in enumerate(cols):
            x = left + j * cell
            p = probabilities[i][j]
            fill = "#eaeef2" if empty else _blue(p)
            tip = f"{r} → {c}: " + ("no data" if empty else f"{p:.2f} (row n = {row_totals[i]})")
            parts.append(
                f'<rect x="{x}" y="{y}" width="{cell - 2}" height="{cell - 2}" fill="{fill}">'
                f"<title>{h(tip)}</title></rect>"
            )
            if not empty:
                ink = "#fff" if p > 0.55 else "#1f2328"
                parts.append(
                    f'<text x="{x + cell / 2 - 1:.0f}" y="{y + cell / 2 + 3:.0f}" font-size="9" '
                    f'text-anchor="middle" fill="{ink}">{p:.2f}</text>'
                )
        parts.append(
            f'<text x="{left + cell * len(cols) + 6}" y="{y + cell / 2 + 4:.0f}" font-size="10" '
            f'fill="#59636e">{row_totals[i]}</text>'
        )
    parts.append("</svg>")
    return "".join(parts)


def trajectories_svg(
    title: str,
    lines: Sequence[Sequence[float]],
    mean: Sequence[float] | None,
    *,
    colour: str = "#0969da",
    width: int = 300,
    height: int = 170,
    scale: tuple[float, float] = (-1.0, 1.0),
) -> str:
    """Trajectories (each 10 valences) as thin lines on the -1..1 scale (``scale``: another
    ``(low, high)``, e.g. ``(0, 100)`` for the seeker's feeling, drawn on the same frame), with
    ``mean`` as a thick line when given; a dashed line at the middle. ``""`` when there is
    nothing to draw."""
    if not lines and mean is None:
        return ""
    left, top, pw, ph = 28, 20, width - 36, height - 34
    lo, hi = scale

    def unit(v: float) -> float:  # onto -1..1
        return 2 * (v - lo) / (hi - lo) - 1

    def pts(vals: Sequence[float]) -> str:
        n = max(len(vals) - 1, 1)
        return " ".join(
            f"{left + k * pw / n:.1f},{top + (1 - unit(v)) / 2 * ph:.1f}" for k, v in enumerate(vals)
        )

    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" role="img" aria-label="{h(title)}" class="trajectories">',
        f'<text x="4" y="13" font-size="12" font-weight="600">{h(title)}</text>',
    ]
    for v in (1, 0, -1):
        y = top + (1 - v) / 2 * ph
        dash = ' stroke-dasharray="3 3"' if v == 0 else ""
        tick = f"{v:+d}" if scale == (-1.0, 1.0) else f"{lo + (v + 1) / 2 * (hi - lo):g}"
        parts.append(f'<line x1="{left}" x2="{left + pw}" y1="{y:.1f}" y2="{y:.1f}" stroke="#d1d9e0"{dash}/>')
        parts.append(
            f'<text x="{left - 4}" y="{y + 4:.1f}" font-size="9" text-anchor="end" fill="#59636e">{tick}'
            "</text>"
        )
    parts.append(f'<text x="{left}" y="{height - 4}" font-size="9" fill="#59636e">start</text>')
    parts.append(
        f'<text x="{left + pw}" y="{height - 4}" font-size="9" text-anchor="end" fill="#59636e">end</text>'
    )
    for vals in lines:
        parts.append(
            f'<polyline points="{pts(vals)}" fill="none" stroke="{colour}" stroke-opacity="0.25" '
            'stroke-width="1"/>'
        )
    if mean is not None:
        parts.append(
            f'<polyline points="{pts(mean)}" fill="none" stroke="#1f2328" stroke-width="2.5">'
            "<title>mean</title></polyline>"
        )
    parts.append("</svg>")
    return "".join(parts)


def label_strip_svg(cells: Sequence[tuple[str, float, str]]) -> str:
    """One small square per message: ``(role, valence, tooltip)``; user messages coloured by
    valence, bot messages grey and half height. ``""`` for no messages."""
    if not cells:
        return ""
    size = 9
    w = len(cells) * (size + 1)
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{size}" class="strip">']
    for k, (role, v, tip) in enumerate(cells):
        x = k * (size + 1)
        if role == "user":
            parts.append(
                f'<rect x="{x}" y="0" width="{size}" height="{size}" fill="{valence_colour(v)}" '
                f'stroke="#8c959f" stroke-width="0.5"><title>{h(tip)}</title></rect>'
            )
        else:
            parts.append(
                f'<rect x="{x}" y="3" width="{size}" height="3" fill="#8c959f"><title>{h(tip)}</title></rect>'
            )
    parts.append("</svg>")
    return "".join(parts)


FEELING_COLOUR = "#bc4c00"
"""Colour of the seeker's own feeling (a third signal beside the labels)."""


def valence_line_svg(
    valences: Sequence[tuple[float, str]],
    feelings: Sequence[float | None] = (),
    *,
    title: str = "user valence by message",
    width: int = 260,
    height: int = 150,
) -> str:
    """One conversation's user trajectory: each user message's valence (-1..1, in order; with
    its tooltip) as a dot joined by a line, and, when given, the seeker's own feeling with each
    user message (0-100, drawn on the same axis as ``feeling / 50 - 1``; ``None``: none on
    that message) as a dashed line with square marks. ``""`` when there is no user message."""
    if not valences:
        return ""
    left, top, pw, ph = 26, 18, width - 34, height - 34
    n = len(valences)

    def x(k: int) -> float:
        return left + (k * pw / (n - 1) if n > 1 else pw / 2)

    def y(v: float) -> float:
        return top + (1 - max(-1.0, min(1.0, v))) / 2 * ph

    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" role="img" aria-label="{h(title)}" class="trajectory">',
        f'<text x="4" y="12" font-size="11" font-weight="600">{h(title)}</text>',
    ]
    for v in (1, 0, -1):
        dash = ' stroke-dasharray="3 3"' if v == 0 else ""
        parts.append(f'<line x1="{left}" x2="{left + pw}" y1="{y(v):.1f}" y2="{y(v):.1f}" '
                     f'stroke="#d1d9e0"{dash}/>')
        parts.append(f'<text x="{left - 4}" y="{y(v) + 3:.1f}" font-size="9" text-anchor="end" '
                     f'fill="#59636e">{v:+d}</text>')
    parts.append(f'<text x="{left}" y="{height - 4}" font-size="9" fill="#59636e">user message 1</text>')
    parts.append(f'<text x="{left + pw}" y="{height - 4}" font-size="9" text-anchor="end" '
                 f'fill="#59636e">{n}</text>')
    if n > 1:
        pts = " ".join(f"{x(k):.1f},{y(val):.1f}" for k, (val, _) in enumerate(valences))
        parts.append(f'<polyline points="{pts}" fill="none" stroke="#0969da" stroke-width="1.5"/>')
    for k, (val, tip) in enumerate(valences):
        parts.append(f'<circle cx="{x(k):.1f}" cy="{y(val):.1f}" r="3" fill="{valence_colour(val)}" '
                     f'stroke="#0969da"><title>{h(tip)}</title></circle>')
    known = [(k, f) for k, f in enumerate(feelings[:n]) if f is not None]
    if known:
        pts = " ".join(f"{x(k):.1f},{y(f / 50 - 1):.1f}" for k, f in known)
        parts.append(f'<polyline points="{pts}" fill="none" stroke="{FEELING_COLOUR}" stroke-width="1.5" '
                     'stroke-dasharray="4 2" class="feeling"/>')
        for k, f in known:
            parts.append(f'<rect x="{x(k) - 2.5:.1f}" y="{y(f / 50 - 1) - 2.5:.1f}" width="5" height="5" '
                         f'fill="{FEELING_COLOUR}"><title>user message {k + 1}: own feeling {f:.0f}/100'
                         "</title></rect>")
    parts.append("</svg>")
    return "".join(parts)
