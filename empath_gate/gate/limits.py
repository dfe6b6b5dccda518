"""Limits every gate decision shares: the comparison tolerance and the suite-level judge
failure limit (used by the cells' decision and by the suite check)."""

from __future__ import annotations

from empath_gate.instrument.models import Thresholds

EPS = 1e-9
"""Tolerance of every threshold comparison (scores are means of integers: 7 * 3 / 3 must equal 7)."""


def suite_judge_failure_limit(thresholds: Thresholds, suite_id: str | None) -> float:
    """``max_judge_failure_rate`` of the suite as a whole: the defaults, overridden by the
    suite's defaults (metric-level values apply to their metric only). Raises ValueError when
    neither sets it."""
    value = thresholds.defaults.max_judge_failure_rate
    if suite_id is not None and suite_id in thresholds.suites:
        s = thresholds.suites[suite_id].defaults.max_judge_failure_rate
        if s is not None:
            value = s
    if value is None:
        raise ValueError("thresholds set no max_judge_failure_rate in defaults")
    return value


def gates(kind: str, fail_on: str) -> bool:
    """Whether a failed condition of ``kind`` (``threshold`` or ``regression``) fails the gate
    under ``fail_on`` (``threshold``, ``regression``, ``both``, ``never``)."""
    return fail_on == "both" or fail_on == kind
