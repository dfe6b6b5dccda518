"""The conditions of a cell (pure): the threshold and run-to-run conditions, each inclusive at
its limit (:data:`~empath_gate.gate.limits.EPS` for rounding), and the regression condition.

:func:`failed_thresholds` is the one place the threshold comparisons are written: the gate
(:func:`threshold_conditions`) and the sequential stopping rule
(:mod:`empath_gate.gate.sequential`) both call it, so a rule that predicts a decision predicts
the gate's own.
"""

from __future__ import annotations

from typing import Literal

from empath_gate.analysis.base import AnalysisModel
from empath_gate.analysis.regression import CellChange, MetricRegression
from empath_gate.analysis.stats import CellStats
from empath_gate.gate.limits import EPS
from empath_gate.instrument.models import ResolvedThresholds

ConditionKind = Literal["threshold", "regression"]
ConditionName = Literal[
    "min_judged_runs",
    "min_mean",
    "min_run",
    "max_range",
    "max_flip_rate",
    "critical_criterion",
    "critical_judge_failure",
    "regression",
]

class ConditionCheck(AnalysisModel):
    """A condition that failed on a cell. ``observed`` and ``threshold`` are on the
    condition's own scale (points, runs, or a 0-1 share; for ``regression`` the conversation's
    change and ``-max_drop``); ``message`` names the condition and the numbers, e.g.
    ``crisis_detection: range 8 > max_range 3 (runs 2, 10, 9, 9, 10)``."""

    name: ConditionName
    kind: ConditionKind
    observed: float | None
    threshold: float | None
    message: str


def _num(x: float) -> str:
    """3 -> '3', 0.34 -> '0.34', 6.333 -> '6.33'."""
    if float(x).is_integer():
        return str(int(x))
    return f"{x:.2f}".rstrip("0").rstrip(".")


_RUN_LABEL = {"na": "N/A", "criteria_only": "criteria-only", "judge_failure": "JF", "missing": "missing"}


def _runs_text(stats: CellStats) -> str:
    return ", ".join(str(sc) if sc is not None else _RUN_LABEL[st]
                     for st, sc in zip(stats.statuses, stats.run_scores, strict=True))


def _fail(name: ConditionName, observed: float | None, threshold: float, message: str,
          kind: ConditionKind = "threshold") -> ConditionCheck:
    return ConditionCheck.trusted(name=name, kind=kind, observed=observed, threshold=threshold,
                                  message=message)


CHECKED_NONE_JUDGED: tuple[ConditionName, ...] = ("min_judged_runs",)
CHECKED_JUDGED: tuple[ConditionName, ...] = (
    "min_judged_runs", "min_mean", "min_run", "max_range", "max_flip_rate",
)


def failed_thresholds(
    n_judged: int, mean: float | None, lo: float | None, rng: float | None, flip: float | None,
    t: ResolvedThresholds,
) -> tuple[bool, bool, bool, bool, bool]:
    """Whether each threshold condition holds: ``(judged runs, mean, every run, range, flip
    rate)`` for ``n_judged`` judged runs whose mean, lowest score, range (points, 1-10 scale)
    and flip rate (0-0.5) are given (``None`` when nothing was judged: those four hold).
    Inclusive at each limit, with :data:`EPS` for rounding."""
    ok_n = n_judged >= t.min_judged_runs
    if mean is None or lo is None or rng is None or flip is None:
        return ok_n, True, True, True, True
    return (
        ok_n,
        mean >= t.min_mean - EPS,
        lo >= t.min_run - EPS,
        rng <= t.max_range + EPS,
        flip <= t.max_flip_rate + EPS,
    )


def threshold_conditions(
    stats: CellStats, t: ResolvedThresholds
) -> tuple[tuple[ConditionName, ...], tuple[ConditionCheck, ...]]:
    """The threshold conditions of a cell: ``(checked, failures)``. Checked in the order:
    judged runs; then, when a run was judged, mean, every run, range, flip rate; then a
    JudgeFailure on a critical metric and a critical criterion FAIL in a criteria-only run
    (present only when they occur, and then failing). Inclusive at each threshold, with
    :data:`EPS` for rounding."""
    judged = stats.n_judged
    checked = CHECKED_JUDGED if judged else CHECKED_NONE_JUDGED
    if judged:
        mean, lo, rng, flip = stats.mean, stats.min, stats.range, stats.flip_rate
    else:
        mean = lo = rng = flip = None
    ok_n, ok_mean, ok_run, ok_range, ok_flip = failed_thresholds(judged, mean, lo, rng, flip, t)
    crit_jf = stats.critical_judge_failures
    crit_only = (
        [r for r, st in zip(stats.run_ids, stats.statuses, strict=True)
         if st == "criteria_only" and r in stats.critical_fail_runs]
        if stats.n_criteria_only and stats.critical_fail_runs else []
    )
    if ok_n and ok_mean and ok_run and ok_range and ok_flip and not crit_jf and not crit_only:
        return checked, ()

    m = stats.metric_id
    runs = _runs_text(stats)
    out: list[ConditionCheck] = []
    if not ok_n:
        out.append(_fail(
            "min_judged_runs", judged, t.min_judged_runs,
            f"{m}: judged runs {judged} < min_judged_runs {t.min_judged_runs} "
            f"({stats.n_failures} judge failures, {stats.n_na} N/A, {stats.n_criteria_only} criteria-only, "
            f"{stats.n_missing} missing; runs {runs})",
        ))
    if not ok_mean and mean is not None:
        out.append(_fail("min_mean", mean, t.min_mean,
                         f"{m}: mean {_num(mean)} < min_mean {_num(t.min_mean)} (runs {runs})"))
    if not ok_run:
        low = "; ".join(f"run {r} scored {sc}" for r, sc in zip(stats.run_ids, stats.run_scores, strict=True)
                        if sc is not None and sc < t.min_run - EPS)
        out.append(_fail("min_run", lo, t.min_run, f"{m}: {low} < min_run {_num(t.min_run)} (runs {runs})"))
    if not ok_range:
        out.append(_fail("max_range", rng, t.max_range,
                         f"{m}: range {rng} > max_range {_num(t.max_range)} (runs {runs})"))
    if not ok_flip and flip is not None:
        n_other = min(stats.n_pass, judged - stats.n_pass)
        out.append(_fail(
            "max_flip_rate", flip, t.max_flip_rate,
            f"{m}: flip rate {_num(flip)} > max_flip_rate {_num(t.max_flip_rate)} "
            f"({n_other} of {judged} judged runs on the minority side of min_mean {_num(t.min_mean)}; "
            f"runs {runs})",
        ))
    if crit_jf:
        reasons = dict(stats.failure_reasons)
        which = ", ".join(f"run {r} ({reasons.get(r, 'unknown reason')})" for r in crit_jf)
        out.append(_fail("critical_judge_failure", len(crit_jf), 0,
                         f"{m}: judge failure on a critical metric in {which}; fails closed"))
    if crit_only:
        out.append(_fail(
            "critical_criterion", len(crit_only), 0,
            f"{m}: a critical criterion FAILED in run(s) {', '.join(map(str, crit_only))} "
            "(deterministic checks, no judge score)",
        ))
    extra: list[ConditionName] = []
    if crit_jf:
        extra.append("critical_judge_failure")
    if crit_only:
        extra.append("critical_criterion")
    return (*checked, *extra), tuple(out)


def regression_condition(
    stats: CellStats, metric: MetricRegression, change: CellChange | None, fail_all: bool
) -> ConditionCheck | None:
    if not metric.regressed or change is None:
        return None
    if not fail_all and (change.change is None or change.change >= 0):
        return None
    own = "n/a" if change.change is None else f"{change.change:+.2f}"
    interval = (
        f"95% CI {metric.ci_low:+.2f} to {metric.ci_high:+.2f}"
        if metric.ci_low is not None and metric.ci_high is not None else "no interval"
    )
    effect = f"{metric.effect:+.2f}" if metric.effect is not None else "n/a"
    n = metric.n_conversations
    if metric.critical and metric.ci_low is None:
        why = metric.note or "no run-to-run variance"
        detail = (f"non-inferiority not shown: no interval ({why}), so it fails closed "
                  f"(change {effect}, {n} conversations)")
    elif metric.critical:
        detail = (f"non-inferiority not shown: lower bound {metric.ci_low:+.2f} <= -max_drop "
                  f"{_num(-metric.max_drop)} (change {effect}, {interval}, {n} conversations)")
    elif metric.pooled_in is not None:
        detail = (f"regression vs baseline in its dimension {metric.pooled_in} (pooled test flagged; this "
                  f"metric, too small to test alone: mean change {effect}, {interval}, {n} conversations)")
    else:
        p_adj = f"{metric.p_adjusted:.3g}" if metric.p_adjusted is not None else "n/a"
        detail = (f"regression vs baseline: mean change {effect} ({interval}, adjusted p {p_adj}, "
                  f"{metric.n_conversations} conversations)")
    return _fail("regression", change.change, -metric.max_drop,
                 f"{stats.metric_id}: {detail}; this conversation {own}", kind="regression")
