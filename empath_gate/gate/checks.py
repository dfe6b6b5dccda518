"""Suite checks (pure): conditions that belong to no single conversation x metric.

Each is a test of its own, with the stable id ``<suite>::<check>``, decided here for every
front-end and counted in the exit status, the diff, the HTML, the JUnit XML and the terminal
summary. The checks:

* ``judge_failure_rate``: JudgeFailures / runs with a verdict over every cell of the suite
  must stay at or under the suite's ``max_judge_failure_rate`` (``thresholds.yaml`` defaults,
  overridden by the suite's); above it the check errors (an infrastructure problem, never
  waived). No verdict at all: the check is skipped. Only runs with a judge model have it.
* ``max_worsened_share`` / ``min_recovering_share`` (LLM-auditor runs only: with fixed scripts
  the user side does not depend on the bot): the share of labelled transcripts whose user
  trajectory is ``deteriorating`` (resp. ``recovering``; :mod:`empath_gate.results.dynamics`)
  must stay at or under (resp. over) the suite's limit (``thresholds.yaml`` ``dynamics:``, or a
  suite's; a check exists only when its limit is set). Any annotator failure in the suite
  makes these checks ``incomplete`` (the 19 metrics are not touched). Against a baseline, the
  change of each conversation's share (paired by conversation) is tested one-sided with an exact sign-flip
  permutation test (:mod:`empath_gate.gate.dynamics_checks`); the two dynamics tests of a suite
  are Benjamini-Hochberg adjusted together at the thresholds' ``alpha``; fewer than
  :data:`~empath_gate.gate.dynamics_checks.MIN_PAIRED` paired conversations: "cannot detect".
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Literal

from empath_gate.analysis.base import AnalysisModel
from empath_gate.gate.limits import EPS, suite_judge_failure_limit

if TYPE_CHECKING:
    from empath_gate.analysis.stats import CellStats
    from empath_gate.instrument.models import Thresholds
    from empath_gate.results.dynamics import SuiteDynamics
    from empath_gate.results.model import Results

CheckStatus = Literal["passed", "failed", "skipped", "error", "xfail", "incomplete"]
DYNAMICS_CHECKS: tuple[str, ...] = ("max_worsened_share", "min_recovering_share")
"""The suite checks on the emotion dynamics (LLM-auditor runs with an annotator)."""
SUITE_CHECKS: tuple[str, ...] = ("judge_failure_rate", *DYNAMICS_CHECKS)
"""Every suite check, in report order."""


def applicable_checks(
    judge_model: str | None,
    llm_auditor: bool = False,
    annotator: str = "off",
    thresholds: Thresholds | None = None,
    suite: str = "",
) -> tuple[str, ...]:
    """The suite checks a suite of a run has: ``judge_failure_rate`` only when a judge model
    scores (offline, criteria-only runs have no judge to fail); each dynamics check only with an
    LLM auditor, a dynamics annotator (``annotator`` other than ``off``) and its limit set for
    ``suite`` in ``thresholds`` (an unset limit is no check)."""
    out: tuple[str, ...] = ("judge_failure_rate",) if judge_model else ()
    if llm_auditor and annotator != "off" and thresholds is not None:
        out += tuple(c for c in DYNAMICS_CHECKS if thresholds.dynamics_limit(suite, c) is not None)
    return out


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


def suite_checks(
    results: Results,
    cells: Sequence[CellStats],
    thresholds: Thresholds,
    *,
    dynamics: Sequence[SuiteDynamics] = (),
    baseline: Results | None = None,
) -> list[SuiteCheck]:
    """Every suite check of every suite of ``results`` that has tests, in suite order.
    ``dynamics``: the suites' dynamics (:func:`empath_gate.results.dynamics.results_dynamics`);
    the dynamics checks exist for a suite of an LLM-auditor run that has them."""
    from empath_gate.gate.dynamics_checks import dynamics_checks

    conv_suite = {i.conversation_id: i.suite for i in results.items}
    by_suite = {d.suite: d for d in dynamics}
    out: list[SuiteCheck] = []
    for suite in results.metadata.suites:
        mine = [c for c in cells if conv_suite.get(c.conversation_id) == suite]
        if mine and results.metadata.judge.model:
            out.append(judge_failure_rate(suite, mine, thresholds))
        d = by_suite.get(suite)
        if d is not None and d.user_side == "per run":
            out.extend(dynamics_checks(d, results, thresholds, baseline))
    return out
