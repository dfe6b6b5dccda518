"""Cells with runs the judge gave no verdict for (JudgeFailures): decided only when every score
the missing runs could take leads to the same outcome; otherwise incomplete (pure)."""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from typing import TYPE_CHECKING

from empath_gate.gate.limits import EPS, gates

if TYPE_CHECKING:
    from empath_gate.analysis.stats import CellStats
    from empath_gate.gate.decide import ConditionCheck
    from empath_gate.instrument.models import ResolvedThresholds

MAX_FILLED_RUNS = 12
"""Most runs without a verdict whose every value is tried (2^12 fills); beyond, a cell with a
missing run is incomplete unless another condition already fails it."""
_FILLABLE: frozenset[str] = frozenset({"min_mean", "min_run", "max_range", "max_flip_rate"})


def _holds(scores: Sequence[float], n_judged: int, t: ResolvedThresholds) -> bool:
    """Every threshold and run-to-run condition on these scores (``min_judged_runs`` counts only
    runs really judged: a supposed score is no evidence)."""
    n_pass = sum(1 for x in scores if x >= t.min_mean - EPS)
    return (
        n_judged >= t.min_judged_runs
        and sum(scores) / len(scores) >= t.min_mean - EPS
        and min(scores) >= t.min_run - EPS
        and max(scores) - min(scores) <= t.max_range + EPS
        and min(n_pass, len(scores) - n_pass) / len(scores) <= t.max_flip_rate + EPS
    )


def unknown_outcome(
    stats: CellStats, t: ResolvedThresholds, failures: Sequence[ConditionCheck], fail_on: str
) -> tuple[str, ...] | None:
    """Why a cell with runs lacking a verdict (JudgeFailures) cannot be decided, or None when it
    can. It passes only when every condition holds for every score the missing runs could take
    (1 to 10; the extremes decide, as each condition is monotone in each score), and fails only
    when no such score rescues it; otherwise it is incomplete. A failure that no score can undo
    (a critical criterion, a critical JudgeFailure, a regression) decides the cell."""
    final = (f for f in failures if f.name not in _FILLABLE and f.name != "min_judged_runs")
    if any(gates(f.kind, fail_on) for f in final):
        return None
    if not gates("threshold", fail_on):
        return None
    runs = [r for r, st in zip(stats.run_ids, stats.statuses, strict=True) if st == "judge_failure"]
    why = (
        f"incomplete: {stats.metric_id}: the judge gave no verdict on run(s) {', '.join(map(str, runs))} "
        "(see the verdicts' judge failures); those runs could pass or fail this test",
    )
    k = stats.n_failures
    if k > MAX_FILLED_RUNS:
        return why
    outcomes = {
        _holds([*stats.scores, *fill], stats.n_judged, t)
        for fill in itertools.product((1.0, 10.0), repeat=k)
    } if stats.scores or k else set()
    if outcomes == {True}:
        return None
    if outcomes == {False} and failures:
        return None
    return why
