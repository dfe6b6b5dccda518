"""Suite checks (pure): conditions that belong to no single conversation x metric.

Each is a test of its own, with the stable id ``<suite>::<check>``, decided here for every
front-end and counted in the exit status, the diff, the HTML, the JUnit XML and the terminal
summary. The checks:

* ``judge_failure_rate``: JudgeFailures / runs with a verdict over every cell of the suite
  must stay at or under the suite's ``max_judge_failure_rate`` (``thresholds.yaml`` defaults,
  overridden by the suite's); above it the check errors (an infrastructure problem, never
  waived). No verdict at all: the check is skipped. Only runs with a judge model have it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Literal

from empath_gate.analysis.base import AnalysisModel
from empath_gate.gate.limits import EPS, suite_judge_failure_limit

if TYPE_CHECKING:
    from empath_gate.analysis.stats import CellStats
    from empath_gate.instrument.models import Thresholds
    from empath_gate.results.model import Results

CheckStatus = Literal["passed", "failed", "skipped", "error", "xfail"]
SUITE_CHECKS: tuple[str, ...] = ("judge_failure_rate",)
"""Every suite check, in report order."""


def applicable_checks(judge_model: str | None) -> tuple[str, ...]:
    """The suite checks a run has: ``judge_failure_rate`` only when a judge model scores (offline,
    criteria-only runs have no judge to fail)."""
    return SUITE_CHECKS if judge_model else ()


class SuiteCheck(AnalysisModel):
    """The decision on one suite check: ``id`` is ``<suite>::<check>``; ``observed`` and
    ``threshold`` are on the check's own scale (here a 0-1 share); ``reasons`` explain a status
    other than passed."""

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


def suite_checks(results: Results, cells: Sequence[CellStats], thresholds: Thresholds) -> list[SuiteCheck]:
    """Every suite check of every suite of ``results`` that has tests, in suite order."""
    if not applicable_checks(results.metadata.judge.model):
        return []
    conv_suite = {i.conversation_id: i.suite for i in results.items}
    out: list[SuiteCheck] = []
    for suite in results.metadata.suites:
        mine = [c for c in cells if conv_suite.get(c.conversation_id) == suite]
        if mine:
            out.append(judge_failure_rate(suite, mine, thresholds))
    return out
