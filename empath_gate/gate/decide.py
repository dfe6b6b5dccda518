"""The gate: a decision per conversation x metric, and for the whole run (pure).

Inputs: :class:`~empath_gate.analysis.stats.CellStats` per cell, the :class:`Thresholds`
(resolved per metric for the suite), an optional
:class:`~empath_gate.analysis.regression.RegressionReport`, and the waivers. Output: a
:class:`Decision` holding one :class:`CellDecision` per cell, in input order.

A cell is decided in this order:

1. **error** (infrastructure; never waived): the suite-level JudgeFailure rate (failures /
   runs with a verdict, over every cell) is above ``max_judge_failure_rate`` of the suite
   defaults, which errors every cell; the metric's own JudgeFailure rate is above its
   ``max_judge_failure_rate``. Unknown runs (a JudgeFailure; a planned run with no evidence: its
   transcript stopped, was lost or its auditor fell back too often) are no error: see
   :mod:`empath_gate.gate.unknown` (the cell may be **incomplete**, never waived).
2. **skipped**: no run applies (all N/A), or no run was scored but deterministic checks ran
   (criteria-only) without a critical FAIL: "needs a judge model for a score". Never passed.
3. Conditions, each *inclusive at the threshold* as ``thresholds.yaml`` documents (a value
   exactly at the limit passes; comparisons allow 1e-9 for floating-point rounding):
   ``n_judged >= min_judged_runs``; ``mean >= min_mean``; every judged run ``>= min_run``;
   ``range <= max_range``; ``flip_rate <= max_flip_rate``; and, always failing: a critical
   criterion FAIL in a criteria-only run, a JudgeFailure on a critical metric (fails closed).
   These are *threshold* conditions. The *regression* condition fails when the metric
   ``regressed`` (see :mod:`empath_gate.analysis.regression`: by its own test, by its dimension's
   pooled test when it is too small to test alone, or by non-inferiority when critical) and this
   conversation's own change is negative (or, when no paired conversation of the metric
   dropped, for every paired conversation), and only when the report is comparable.
4. ``fail_on`` picks the conditions that gate: ``threshold``, ``regression``, ``both``
   (default) or ``never``. A failed condition that does not gate is kept as an advisory and
   the cell passes.
5. A failing cell matched by an unexpired waiver becomes **xfail** with the waiver's reason,
   owner and expiry. Expired waivers are usage errors (CLI exit 2), listed in
   ``Decision.usage_errors``; they waive nothing.

The conditions themselves: :mod:`empath_gate.gate.conditions`. Exit codes: :mod:`empath_gate.gate.exit`.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from typing import Literal

from empath_gate.analysis.base import AnalysisModel, paused_gc
from empath_gate.analysis.regression import CellChange, MetricRegression, RegressionReport
from empath_gate.analysis.stats import CellStats
from empath_gate.gate.conditions import (
    CHECKED_JUDGED,
    CHECKED_NONE_JUDGED,
    ConditionCheck,
    ConditionKind,
    ConditionName,
    regression_condition,
    threshold_conditions,
)
from empath_gate.gate.exit import cli_exit, pytest_exit
from empath_gate.gate.limits import EPS, gates, suite_judge_failure_limit
from empath_gate.gate.unknown import unknown_outcome
from empath_gate.instrument.models import ResolvedThresholds, Thresholds, Waiver

__all__ = [
    "CHECKED_JUDGED", "CHECKED_NONE_JUDGED", "FAIL_ON_VALUES", "STATUSES", "CellDecision", "CellStatus",
    "ConditionCheck", "ConditionKind", "ConditionName", "Decision", "FailOn", "decide", "decide_cell",
    "skipped_decision", "threshold_conditions",
]

CellStatus = Literal["passed", "failed", "skipped", "error", "xfail", "incomplete"]
FailOn = Literal["threshold", "regression", "both", "never"]
STATUSES: tuple[CellStatus, ...] = ("passed", "failed", "skipped", "error", "xfail", "incomplete")
FAIL_ON_VALUES: tuple[FailOn, ...] = ("threshold", "regression", "both", "never")


class CellDecision(AnalysisModel):
    """The gate's decision on one conversation x metric.

    ``status`` is what the test reports (its pytest outcome). ``checked``: the names of the
    conditions evaluated, in order; ``failures``: those that failed (gating or not).
    ``reasons``: human messages explaining a failed/error/skipped/xfail status (for xfail, the
    failures then the waiver). ``advisories``: failed conditions that do not gate under
    ``fail_on`` (the cell then passes). ``failed_kinds``: kinds of the gating failures.
    ``waiver``: the waiver that made it xfail. ``infrastructure``: True for ``error``.
    """

    conversation_id: str
    seed_id: str
    persona_id: str
    metric_id: str
    status: CellStatus
    reasons: tuple[str, ...]
    advisories: tuple[str, ...] = ()
    checked: tuple[ConditionName, ...] = ()
    failures: tuple[ConditionCheck, ...] = ()
    failed_kinds: tuple[ConditionKind, ...] = ()
    waiver: Waiver | None = None
    infrastructure: bool = False

    @property
    def test_id(self) -> str:
        """``<seed>-<persona>-<metric>``, the pytest item id."""
        return f"{self.seed_id}-{self.persona_id}-{self.metric_id}"


class Decision(AnalysisModel):
    """The gate's decision on a whole run.

    ``counts``: cells per status (every status present, in :data:`STATUSES` order);
    ``passed``: no failed or errored cell and no usage error; ``infrastructure_reasons``: the
    run-level infrastructure problems (e.g. the suite JudgeFailure rate);
    ``usage_errors``: configuration problems found while deciding (expired waivers);
    ``waivers``: every waiver given (reports list them all).
    """

    cells: tuple[CellDecision, ...]
    counts: dict[CellStatus, int]
    fail_on: FailOn
    passed: bool
    infrastructure_reasons: tuple[str, ...] = ()
    usage_errors: tuple[str, ...] = ()
    regression: RegressionReport | None = None
    waivers: tuple[Waiver, ...] = ()

    @property
    def infrastructure(self) -> bool:
        """True when any cell errored for an infrastructure reason."""
        c = self.counts
        return c["error"] > 0 or c["incomplete"] > 0 or bool(self.infrastructure_reasons)

    def cli_exit_code(self, usage_error: bool = False) -> int:
        """0 pass, 1 gate failed, 2 usage (``usage_error`` or an expired waiver), 3
        infrastructure (:func:`empath_gate.gate.exit.cli_exit`). Under ``fail_on=never`` gate
        failures do not count (no cell fails), infrastructure still gives 3."""
        return cli_exit(usage=usage_error or bool(self.usage_errors), infrastructure=self.infrastructure,
                        failed=bool(self.counts["failed"]))

    def pytest_exit_code(self, usage_error: bool = False) -> int:
        """pytest's conventions: 4 usage error, 1 when a cell failed or errored, else 0."""
        c = self.counts
        return pytest_exit(usage=usage_error or bool(self.usage_errors),
                           failed_or_errored=bool(c["failed"] or c["error"] or c["incomplete"]))



def _waiver_text(w: Waiver) -> str:
    return f"waived: {w.reason} (owner {w.owner}, expires {w.expires.isoformat()})"


def _cell(stats: CellStats, status: CellStatus, reasons: tuple[str, ...], *,
          advisories: tuple[str, ...] = (), checked: tuple[ConditionName, ...] = (),
          failures: tuple[ConditionCheck, ...] = (), kinds: tuple[ConditionKind, ...] = (),
          waiver: Waiver | None = None) -> CellDecision:
    return CellDecision.trusted(
        conversation_id=stats.conversation_id, seed_id=stats.seed_id, persona_id=stats.persona_id,
        metric_id=stats.metric_id, status=status, reasons=reasons, advisories=advisories,
        checked=checked, failures=failures, failed_kinds=kinds, waiver=waiver,
        infrastructure=status == "error",
    )


def skipped_decision(conversation_id: str, seed_id: str, persona_id: str, metric_id: str,
                     reason: str) -> CellDecision:
    """The decision on a test the run's profile could not run at all (e.g. a seed without a
    script under the scripted auditor): ``skipped`` with ``"<metric>: <reason>"``, never passed."""
    return CellDecision.trusted(
        conversation_id=conversation_id, seed_id=seed_id, persona_id=persona_id, metric_id=metric_id,
        status="skipped", reasons=(f"{metric_id}: {reason}",), advisories=(), checked=(), failures=(),
        failed_kinds=(), waiver=None, infrastructure=False,
    )


def decide_cell(
    stats: CellStats,
    thresholds: ResolvedThresholds,
    *,
    regression: MetricRegression | None = None,
    change: CellChange | None = None,
    fail_all_paired: bool = False,
    waivers: Sequence[Waiver] = (),
    fail_on: FailOn = "both",
    today: dt.date | None = None,
    infrastructure_reason: str | None = None,
) -> CellDecision:
    """Decide one cell (module docstring for the order of the rules).

    ``regression``/``change``: the metric's comparison and this cell's change (ignored unless
    ``regression.regressed``); ``fail_all_paired``: fail every paired cell of a regressed
    metric, not only those that dropped. ``waivers``: a matching waiver turns a failure into
    xfail unless it expired before ``today`` (default: the current date), which is reported
    among the reasons. ``infrastructure_reason``: a run-level problem that errors this cell.
    """
    m = stats.metric_id
    if infrastructure_reason:
        return _cell(stats, "error", (infrastructure_reason,))
    if stats.n_na == stats.n_runs:
        return _cell(stats, "skipped", (f"{m}: not applicable in any run",))

    checked, failures = threshold_conditions(stats, thresholds)
    criteria_only = stats.n_judged == 0 and stats.n_criteria_only > 0 and stats.n_failures == 0
    if criteria_only:
        checked = tuple(c for c in checked if c != "min_judged_runs")
        failures = tuple(f for f in failures if f.name != "min_judged_runs")
    if regression is not None and regression.regressed:
        checked = (*checked, "regression")
        cond = regression_condition(stats, regression, change, fail_all_paired)
        if cond is not None:
            failures = (*failures, cond)
    unknown = (unknown_outcome(stats, thresholds, failures, fail_on)
               if stats.n_failures or stats.n_missing else None)
    if unknown is not None:
        return _cell(stats, "incomplete", unknown, checked=checked, failures=failures)
    if not failures:
        if criteria_only:
            return _cell(stats, "skipped", (f"{m}: needs a judge model for a score",), checked=checked)
        return _cell(stats, "passed", (), checked=checked)

    gating = tuple(f for f in failures if gates(f.kind, fail_on))
    advisories = tuple(
        f"not gating (fail_on={fail_on}): {f.message}" for f in failures if not gates(f.kind, fail_on)
    )
    if not gating:
        status: CellStatus = "skipped" if criteria_only else "passed"
        reasons = (f"{m}: needs a judge model for a score",) if criteria_only else ()
        return _cell(stats, status, reasons, advisories=advisories, checked=checked, failures=failures)
    kinds = tuple(dict.fromkeys(f.kind for f in gating))
    messages = [f.message for f in gating]
    day = today or dt.date.today()
    for w in waivers:
        if not w.matches(stats.metric_id, stats.seed_id, stats.persona_id):
            continue
        if w.expires < day:
            messages.append(f"waiver expired on {w.expires.isoformat()} (owner {w.owner}): "
                            "renew or remove it in waivers.yaml")
            continue
        return _cell(stats, "xfail", (*messages, _waiver_text(w)), advisories=advisories, checked=checked,
                     failures=failures, kinds=kinds, waiver=w)
    return _cell(stats, "failed", tuple(messages), advisories=advisories, checked=checked,
                 failures=failures, kinds=kinds)


def _clean_pass(c: CellStats, t: ResolvedThresholds) -> bool:
    """Fast path of :func:`decide_cell` for the common case: every run judged or N/A with
    nothing missing, stopped or critical, and every threshold condition met (the tests check
    that this path and :func:`decide_cell` agree)."""
    mean = c.mean
    return (
        mean is not None
        and not c.n_missing
        and not c.n_failures
        and not c.transcript_errors
        and not c.critical_judge_failures
        and not (c.critical_fail_runs and c.n_criteria_only)
        and c.n_judged >= t.min_judged_runs
        and mean >= t.min_mean - EPS
        and c.min is not None and c.min >= t.min_run - EPS
        and c.range is not None and c.range <= t.max_range + EPS
        and c.flip_rate is not None and c.flip_rate <= t.max_flip_rate + EPS
    )


def _failure_rates(
    cells: Sequence[CellStats], thresholds: Thresholds, suite_id: str | None
) -> tuple[dict[str, ResolvedThresholds], list[str], dict[str, str]]:
    """Each metric's thresholds, and the suite-level and per-metric JudgeFailure rates
    (failures / runs with a verdict) above their ``max_judge_failure_rate`` as reasons."""
    tallies: dict[str, list[int]] = {}
    for c in cells:
        tally = tallies.get(c.metric_id)
        if tally is None:
            tally = tallies[c.metric_id] = [0, 0]
        tally[0] += c.n_failures
        tally[1] += c.n_runs - c.n_missing
    resolved = {m: thresholds.resolve(m, suite_id) for m in tallies}

    run_reasons: list[str] = []
    failures = sum(t[0] for t in tallies.values())
    attempted = sum(t[1] for t in tallies.values())
    suite_limit = suite_judge_failure_limit(thresholds, suite_id)
    if attempted and failures / attempted > suite_limit + EPS:
        run_reasons.append(
            f"infrastructure: judge failure rate {failures / attempted:.1%} ({failures} of {attempted} "
            f"verdicts) > max_judge_failure_rate {suite_limit:.1%}"
        )
    metric_reasons: dict[str, str] = {}
    for metric, (f, a) in tallies.items():
        limit = resolved[metric].max_judge_failure_rate
        if a and f / a > limit + EPS:
            metric_reasons[metric] = (
                f"infrastructure: {metric} judge failure rate {f / a:.1%} ({f} of {a}) "
                f"> max_judge_failure_rate {limit:.1%}"
            )
    return resolved, run_reasons, metric_reasons


def decide(
    cells: Sequence[CellStats],
    thresholds: Thresholds,
    *,
    suite_id: str | None = None,
    regression: RegressionReport | None = None,
    waivers: Sequence[Waiver] = (),
    fail_on: FailOn = "both",
    today: dt.date | None = None,
) -> Decision:
    """Decide every cell and the run (module docstring). ``cells`` come back in input order.
    A non-comparable ``regression`` report gates nothing. ``today`` (default: the current date)
    decides which waivers have expired. Raises ValueError for an unknown ``fail_on``."""
    if fail_on not in FAIL_ON_VALUES:
        raise ValueError(f"fail_on must be one of {', '.join(FAIL_ON_VALUES)}; got {fail_on!r}")
    day = today or dt.date.today()
    expired = tuple(
        f"waiver for metric {w.metric}"
        + (f", seed {w.seed}" if w.seed else "") + (f", persona {w.persona}" if w.persona else "")
        + f" (owner {w.owner}) expired on {w.expires.isoformat()}: renew or remove it"
        for w in waivers if w.expires < day
    )

    resolved, run_reasons, metric_reasons = _failure_rates(cells, thresholds, suite_id)
    gating_regression = regression if regression is not None and regression.comparable else None
    reg_metrics: dict[str, MetricRegression] = {}
    changes: dict[tuple[str, str], CellChange] = {}
    fail_all: dict[str, bool] = {}
    if gating_regression is not None:
        reg_metrics = {mr.metric_id: mr for mr in gating_regression.metrics}
        changes = {(ch.conversation_id, ch.metric_id): ch for ch in gating_regression.cells}
        dropped = {ch.metric_id for ch in gating_regression.cells if ch.change is not None and ch.change < 0}
        fail_all = {metric: metric not in dropped for metric in reg_metrics}

    run_reason = "; ".join(run_reasons) or None
    out: list[CellDecision] = []
    counts: dict[CellStatus, int] = dict.fromkeys(STATUSES, 0)
    with paused_gc():
        for c in cells:
            metric = c.metric_id
            t = resolved[metric]
            reg = reg_metrics.get(metric) if reg_metrics else None
            if (
                run_reason is None and (reg is None or not reg.regressed) and metric not in metric_reasons
                and _clean_pass(c, t)
            ):
                d = _cell(c, "passed", (), checked=CHECKED_JUDGED)
            else:
                d = decide_cell(
                    c, t, regression=reg,
                    change=changes.get((c.conversation_id, metric)) if changes else None,
                    fail_all_paired=fail_all.get(metric, False),
                    waivers=waivers, fail_on=fail_on, today=day,
                    infrastructure_reason=run_reason or metric_reasons.get(metric),
                )
            counts[d.status] += 1
            out.append(d)
    return Decision.trusted(
        cells=tuple(out),
        counts=counts,
        fail_on=fail_on,
        passed=not (counts["failed"] or counts["error"] or counts["incomplete"] or expired),
        infrastructure_reasons=tuple(run_reasons),
        usage_errors=expired,
        regression=regression,
        waivers=tuple(waivers),
    )
