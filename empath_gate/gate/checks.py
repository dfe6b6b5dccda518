"""Suite checks (pure): conditions that belong to no single conversation x metric.

Each is a test of its own, with the stable id ``<suite>::<check>``, decided here for every
front-end and counted in the exit status, the diff, the HTML, the JUnit XML and the terminal
summary. The checks:

* ``judge_failure_rate``: JudgeFailures / runs with a verdict over every cell of the suite
  must stay at or under the suite's ``max_judge_failure_rate`` (``thresholds.yaml`` defaults,
  overridden by the suite's); above it the check errors (an infrastructure problem, never
  waived). No verdict at all: the check is skipped. Only runs with a judge model have it.
* ``max_worst_case_gap``: only suites with a cooperative pairing (``cooperative_pairing`` in
  suites.yaml), only with a judge model. For every metric, the worst-case gap (mean over seeds of
  the cooperative persona's score minus the worst-case personas' mean score;
  :mod:`empath_gate.analysis.worst_case_gap`) must stay at or under the metric's resolved
  ``max_worst_case_gap``; above it the check fails (a gate failure, like a threshold). No metric
  with a seed judged on both arms: skipped. The worst-case cells keep their own thresholds, so a
  bot that scores low with every seeker fails them whatever its gap.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Literal

from empath_gate.analysis.base import AnalysisModel
from empath_gate.gate.limits import EPS, suite_judge_failure_limit

if TYPE_CHECKING:
    from empath_gate.analysis.stats import CellStats
    from empath_gate.analysis.worst_case_gap import MetricGap
    from empath_gate.instrument.models import Thresholds
    from empath_gate.results.model import Results

CheckStatus = Literal["passed", "failed", "skipped", "error", "xfail"]
SUITE_CHECKS: tuple[str, ...] = ("judge_failure_rate", "max_worst_case_gap")
"""Every suite check, in report order."""


def applicable_checks(judge_model: str | None, *, paired: bool = False) -> tuple[str, ...]:
    """The suite checks a suite has: none without a judge model (offline, criteria-only runs
    have no judge to fail and no score to compare); ``judge_failure_rate`` always with one;
    ``max_worst_case_gap`` when the suite is ``paired`` (it has a cooperative pairing)."""
    if not judge_model:
        return ()
    return SUITE_CHECKS if paired else ("judge_failure_rate",)


class SuiteCheck(AnalysisModel):
    """The decision on one suite check: ``id`` is ``<suite>::<check>``; ``observed`` and
    ``threshold`` are on the check's own scale (a 0-1 share for ``judge_failure_rate``, score
    points for ``max_worst_case_gap``); ``reasons`` explain a status other than passed."""

    suite: str
    check: str
    status: CheckStatus
    reasons: tuple[str, ...] = ()
    observed: float | None = None
    threshold: float | None = None

    @property
    def id(self) -> str:
        """``<suite>::<check>``, the test id."""
        return f"{self.suite}::{self.check}"


def judge_failure_rate(suite: str, cells: Sequence[CellStats], thresholds: Thresholds) -> SuiteCheck:
    """The ``judge_failure_rate`` check of ``suite`` over its ``cells`` (module docstring)."""
    failures = sum(c.n_failures for c in cells)
    attempted = sum(c.n_runs - c.n_missing for c in cells)
    limit = suite_judge_failure_limit(thresholds, suite)
    if not attempted:
        return SuiteCheck(
            suite=suite,
            check="judge_failure_rate",
            status="skipped",
            threshold=limit,
            reasons=("no run has a verdict yet",),
        )
    rate = failures / attempted
    if rate > limit + EPS:
        return SuiteCheck(
            suite=suite,
            check="judge_failure_rate",
            status="error",
            observed=rate,
            threshold=limit,
            reasons=(
                f"infrastructure: judge failure rate {rate:.1%} ({failures} of {attempted} verdicts) "
                f"> max_judge_failure_rate {limit:.1%}",
            ),
        )
    return SuiteCheck(
        suite=suite, check="judge_failure_rate", status="passed", observed=rate, threshold=limit
    )


def max_worst_case_gap(suite: str, gaps: Sequence[MetricGap], thresholds: Thresholds) -> SuiteCheck:
    """The ``max_worst_case_gap`` check of ``suite`` over its metrics' ``gaps`` (module
    docstring); ``observed`` is the largest gap, ``threshold`` its metric's limit."""
    judged = [(g, _gap_limit(thresholds, g.metric_id, suite)) for g in gaps if g.gap.value is not None]
    if not judged:
        return SuiteCheck(suite=suite, check="max_worst_case_gap", status="skipped",
                          reasons=("no seed has both the cooperative and a worst-case persona judged",))
    worst, limit = max(judged, key=lambda x: (x[0].gap.value or 0.0) - x[1])
    over = [(g, lim) for g, lim in judged if (g.gap.value or 0.0) > lim + EPS]
    if over:
        return SuiteCheck(
            suite=suite, check="max_worst_case_gap", status="failed",
            observed=worst.gap.value, threshold=limit,
            reasons=tuple(
                f"{g.metric_id}: worst-case gap {g.gap.value:.2f} points over {len(g.seeds)} seed(s) "
                f"(cooperative {g.cooperative_mean:.2f}, worst case {g.worst_case_mean:.2f}) "
                f"> max_worst_case_gap {lim:.2f}"
                for g, lim in over
            ),
        )
    return SuiteCheck(suite=suite, check="max_worst_case_gap", status="passed",
                      observed=worst.gap.value, threshold=limit)


def _gap_limit(thresholds: Thresholds, metric_id: str, suite: str) -> float:
    """``max_worst_case_gap`` resolved for (metric, suite); ValueError when nothing sets it."""
    value = thresholds.resolve(metric_id, suite).max_worst_case_gap
    if value is None:
        raise ValueError("thresholds set no max_worst_case_gap in defaults")
    return value


def suite_checks(results: Results, cells: Sequence[CellStats], thresholds: Thresholds,
                 gaps: Mapping[str, Sequence[MetricGap]] | None = None) -> list[SuiteCheck]:
    """Every suite check of every suite of ``results`` that has tests, in suite order;
    ``gaps`` holds the worst-case gaps of the paired suites (suite id -> per metric)."""
    if not applicable_checks(results.metadata.judge.model):
        return []
    conv_suite = {i.conversation_id: i.suite for i in results.items}
    paired = results.gate.pairings if results.gate is not None else {}
    out: list[SuiteCheck] = []
    for suite in results.metadata.suites:
        mine = [c for c in cells if conv_suite.get(c.conversation_id) == suite]
        if mine:
            out.append(judge_failure_rate(suite, mine, thresholds))
            if suite in paired:
                out.append(max_worst_case_gap(suite, (gaps or {}).get(suite, ()), thresholds))
    return out
