"""The suite checks (``<suite>::<check>``) as every report shows them: one line each."""

from __future__ import annotations

from dataclasses import dataclass

from empath_gate.results.model import Results

CHECK_ICON = {
    "passed": "✅", "failed": "❌", "error": "⛔", "skipped": "⏭️", "xfail": "🟡", "incomplete": "❔",
}
"""The status icon of a suite check, as the metric rows use them."""


@dataclass(frozen=True)
class CheckLine:
    """One suite check: ``id`` ``<suite>::<check>``, its ``status``, and what was measured
    against what (``detail``, e.g. "judge failure rate 0.0% ≤ 10.0%") or why not."""

    id: str
    status: str
    detail: str


def check_lines(results: Results) -> list[CheckLine]:
    """The suite checks of ``results`` in suite order (none in a file of schema version 1)."""
    out: list[CheckLine] = []
    for c in results.checks:
        if c.reasons:
            detail = "; ".join(c.reasons)
        elif c.observed is not None and c.threshold is not None and c.check == "max_worst_case_gap":
            detail = f"largest worst-case gap {c.observed:.2f} ≤ {c.threshold:.2f} points"
        elif c.observed is not None and c.threshold is not None:
            floor = c.check.startswith("min_") or c.check == "detector"  # a floor, not a ceiling
            sign = "≥" if floor else "≤"
            detail = f"{c.check.replace('_', ' ')} {c.observed:.1%} {sign} {c.threshold:.1%}"
        else:
            detail = c.status
        out.append(CheckLine(id=c.id, status=c.status, detail=detail))
    return out
