"""One row per metric and per dimension, as every report shows them (pure)."""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

from empath_gate.analysis.regression import MetricRegression
from empath_gate.analysis.stats import CellStats, MetricStats
from empath_gate.gate.decide import CellDecision
from empath_gate.report.view.thresholds import ThresholdSummary, threshold_summary
from empath_gate.results import Results

MetricStatus = Literal["passed", "failed", "error", "xfail", "skipped", "criteria_only"]

DIMENSION_ORDER: tuple[str, ...] = (
    "crisis_safety",
    "therapeutic_quality",
    "conversational",
    "emotional_safety",
    "cultural_boundaries",
)
"""EMPATH's five dimensions in the instrument's order (suites/instrument.yaml)."""

DIMENSION_LABELS: dict[str, str] = {
    "crisis_safety": "Crisis & safety",
    "therapeutic_quality": "Therapeutic quality",
    "conversational": "Conversational",
    "emotional_safety": "Emotional safety",
    "cultural_boundaries": "Cultural fit & boundaries",
}
"""Fallback display labels when the instrument's are not passed in."""

_STATUS_RANK: dict[str, int] = {
    "incomplete": 0,
    "error": 0,
    "failed": 1,
    "xfail": 2,
    "passed": 3,
    "criteria_only": 4,
    "skipped": 5,
}


@dataclass(frozen=True)
class MetricRow:
    """One metric as the reports show it. Means and changes are on the 1-10 scale
    (candidate - baseline; negative = a drop, since 10 is always safest). ``run_min``/``run_max``:
    lowest and highest judged run score over the metric's conversations; ``flip_rate``: the
    mean of its cells' flip rates (0-0.5); ``status``: the worst cell status (``criteria_only``
    when no run was scored and only deterministic checks ran). ``counts``: cells per gate
    status. ``failed_conditions``: names of the gating conditions that failed, in first-seen
    order. ``reasons``: the messages of failed, errored and waived cells (deduplicated).
    ``threshold``: the cells against their thresholds whatever gated
    (:mod:`empath_gate.report.view.thresholds`); ``fail_on``: the run's ``fail_on``.
    ``regression``: the comparison, ``None`` without a baseline."""

    metric_id: str
    dimension: str
    critical: bool
    status: MetricStatus
    baseline_mean: float | None
    candidate_mean: float | None
    min_mean: float | None
    run_min: int | None
    run_max: int | None
    flip_rate: float | None
    within_sd: float | None
    n_conversations: int
    n_judged: int
    n_failures: int
    n_criteria_only: int
    counts: Mapping[str, int]
    failed_conditions: tuple[str, ...]
    reasons: tuple[str, ...]
    regression: MetricRegression | None
    comparable: bool
    threshold: ThresholdSummary
    fail_on: str
    in_baseline: bool | None = None
    """False when a baseline was given that lacks this metric (shown "not in baseline", never as
    0 or a pass); None without a baseline."""
    runs_given: str | None = None
    """Set when sequential gating stopped some of the metric's conversations: the runs they ran
    of the planned N and why the rest were not started, e.g. ``3 of 5 (stopped: settled)`` or
    ``3–5 of 5 (stopped: settled)`` (:func:`runs_given`); None when every conversation ran N."""

    @property
    def failing(self) -> bool:
        """True when a cell of this metric failed or errored (such rows are never dropped
        for size)."""
        return self.status in ("failed", "error")

    @property
    def has_failed(self) -> bool:
        """True when a cell of this metric failed (errors and waivers do not count)."""
        return self.counts.get("failed", 0) > 0

    @property
    def has_error_cell(self) -> bool:
        """True when a cell of this metric errored (infrastructure; incomplete cells do not
        count)."""
        return self.counts.get("error", 0) > 0

    @property
    def has_error(self) -> bool:
        """True when a cell of this metric errored or is incomplete (infrastructure or missing
        evidence: not a failure)."""
        return self.counts.get("error", 0) > 0 or self.counts.get("incomplete", 0) > 0

    @property
    def change(self) -> float | None:
        """``candidate_mean - baseline_mean`` (points; descriptive, no test), ``None`` when
        either is missing."""
        return _change(self.candidate_mean, self.baseline_mean)


@dataclass(frozen=True)
class DimensionRow:
    """One dimension: its metrics (ids in report order), those with a failed cell
    (``failing``), those with an errored cell (``errored``), those with an incomplete cell and
    none errored (``incomplete``: missing evidence), and the mean of the metrics' baseline and
    candidate means (``None`` when none was scored)."""

    dimension: str
    metrics: tuple[str, ...]
    failing: tuple[str, ...]
    baseline_mean: float | None
    candidate_mean: float | None
    status: MetricStatus
    errored: tuple[str, ...] = ()
    incomplete: tuple[str, ...] = ()

    @property
    def change(self) -> float | None:
        """``candidate_mean - baseline_mean`` (points), ``None`` when either is missing."""
        return _change(self.candidate_mean, self.baseline_mean)


def _change(candidate: float | None, baseline: float | None) -> float | None:
    return candidate - baseline if candidate is not None and baseline is not None else None


def dimension_label(dimension: str, labels: Mapping[str, str] | None = None) -> str:
    """A dimension's display label: from ``labels`` (the instrument's), else
    :data:`DIMENSION_LABELS`, else the id itself."""
    return (labels or {}).get(dimension) or DIMENSION_LABELS.get(dimension) or dimension


def _mean(values: Iterable[float | None]) -> float | None:
    vals = [v for v in values if v is not None and not math.isnan(v)]
    return sum(vals) / len(vals) if vals else None


def metric_order(results: Results) -> list[str]:
    """Metric ids in report order: the items' order, then any metric only in the cells."""
    order = list(dict.fromkeys(i.metric_id for i in results.items))
    for c in results.cells:
        if c.metric_id not in order:
            order.append(c.metric_id)
    return order


def dimension_of(results: Results) -> dict[str, str]:
    """Metric id -> dimension id, from the items (``unknown`` when no item names it)."""
    out: dict[str, str] = {}
    for i in results.items:
        out.setdefault(i.metric_id, i.dimension)
    return out


def _metric_status(decisions: Sequence[CellDecision], cells: Sequence[CellStats]) -> MetricStatus:
    if not decisions:
        return "skipped"
    worst = min(decisions, key=lambda d: _STATUS_RANK[d.status]).status
    if worst == "incomplete":  # shown as an error: the metric could not be decided
        return "error"
    if worst == "skipped" and cells and all(c.n_judged == 0 and c.n_criteria_only > 0 for c in cells):
        return "criteria_only"
    return worst


def _tally_decisions(
    decisions: Sequence[CellDecision],
) -> tuple[dict[str, int], tuple[str, ...], tuple[str, ...]]:
    """(cells per status, gating conditions that failed, messages of failed/errored/waived
    cells deduplicated), in first-seen order."""
    counts: dict[str, int] = {}
    conditions: list[str] = []
    reasons: list[str] = []
    for d in decisions:
        counts[d.status] = counts.get(d.status, 0) + 1
        if d.status in ("failed", "error", "xfail"):
            for f in d.failures:
                if f.kind in d.failed_kinds and f.name not in conditions:
                    conditions.append(f.name)
            reasons.extend(d.reasons)
    return counts, tuple(conditions), tuple(dict.fromkeys(reasons))


def runs_given(results: Results, conversations: Iterable[str]) -> str | None:
    """``"3 of 5 (stopped: settled)"``: the fewest-most runs ``conversations`` ran of the planned
    N, when sequential gating stopped one of them (records with status ``stopped``; the reason's
    first word, ``settled``), else None."""
    stopped: dict[str, int] = {}
    why: list[str] = []
    for r in results.records:
        if r.status == "stopped":
            stopped[r.conversation_id] = stopped.get(r.conversation_id, 0) + 1
            word = (r.error or "stopped").split(":", 1)[0].strip()
            if word not in why:
                why.append(word)
    n = results.metadata.runs
    given = [n - stopped.get(c, 0) for c in conversations]
    if not given or all(g == n for g in given):
        return None
    lo, hi = min(given), max(given)
    span = str(lo) if lo == hi else f"{lo}–{hi}"
    return f"{span} of {n} (stopped: {', '.join(why)})"


def metric_rows(results: Results, baseline: Results | None = None) -> list[MetricRow]:
    """One :class:`MetricRow` per metric, in :func:`metric_order`. The baseline mean comes
    from the regression report (paired conversations) when there is one, else from
    ``baseline``'s own metric statistics."""
    dims = dimension_of(results)
    cells: dict[str, list[CellStats]] = {}
    for c in results.cells:
        cells.setdefault(c.metric_id, []).append(c)
    decisions: dict[str, list[CellDecision]] = {}
    for d in results.decisions:
        decisions.setdefault(d.metric_id, []).append(d)
    stats: dict[str, MetricStats] = {m.metric_id: m for m in results.metrics}
    base_stats: dict[str, MetricStats] = {m.metric_id: m for m in baseline.metrics} if baseline else {}
    critical_items = {i.metric_id for i in results.items if i.critical}
    reg = results.regressions
    any_stopped = bool(results.summary.transcripts_stopped)
    rows: list[MetricRow] = []
    for m in metric_order(results):
        mcells = cells.get(m, [])
        mdec = decisions.get(m, [])
        ms = stats.get(m)
        mr = reg.metric(m) if reg is not None else None
        scores = [s for c in mcells for s in c.scores]
        counts, conditions, reasons = _tally_decisions(mdec)
        candidate_mean = ms.mean if ms is not None else _mean(c.mean for c in mcells)
        if mr is not None and mr.baseline_mean is not None:
            base_mean: float | None = mr.baseline_mean
        else:
            bs = base_stats.get(m)
            base_mean = bs.mean if bs is not None else None
        rows.append(
            MetricRow(
                metric_id=m,
                dimension=dims.get(m, "unknown"),
                critical=m in critical_items or any(c.critical for c in mcells),
                status=_metric_status(mdec, mcells),
                baseline_mean=base_mean,
                in_baseline=None if baseline is None else (m in base_stats or mr is not None),
                candidate_mean=candidate_mean,
                min_mean=mcells[0].min_mean if mcells else None,
                run_min=min(scores) if scores else None,
                run_max=max(scores) if scores else None,
                flip_rate=ms.mean_flip_rate if ms is not None else _mean(c.flip_rate for c in mcells),
                within_sd=ms.within_sd if ms is not None else None,
                n_conversations=len(mcells),
                n_judged=sum(c.n_judged for c in mcells),
                n_failures=sum(c.n_failures for c in mcells),
                n_criteria_only=sum(c.n_criteria_only for c in mcells),
                counts=counts,
                failed_conditions=conditions,
                reasons=reasons,
                regression=mr,
                comparable=reg.comparable if reg is not None else False,
                threshold=threshold_summary(mdec),
                fail_on=results.metadata.fail_on,
                runs_given=runs_given(results, [c.conversation_id for c in mcells]) if any_stopped else None,
            )
        )
    return rows


def dimension_rows(rows: Sequence[MetricRow]) -> list[DimensionRow]:
    """Metric rows grouped by dimension, in :data:`DIMENSION_ORDER` then first-seen order."""
    groups: dict[str, list[MetricRow]] = {}
    for r in rows:
        groups.setdefault(r.dimension, []).append(r)
    order = [d for d in DIMENSION_ORDER if d in groups] + [d for d in groups if d not in DIMENSION_ORDER]
    out: list[DimensionRow] = []
    for d in order:
        rs = groups[d]
        out.append(
            DimensionRow(
                dimension=d,
                metrics=tuple(r.metric_id for r in rs),
                failing=tuple(r.metric_id for r in rs if r.has_failed),
                errored=tuple(r.metric_id for r in rs if r.has_error_cell),
                incomplete=tuple(r.metric_id for r in rs if r.has_error and not r.has_error_cell),
                baseline_mean=_mean(r.baseline_mean for r in rs),
                candidate_mean=_mean(r.candidate_mean for r in rs),
                status=min((r.status for r in rs), key=lambda s: _STATUS_RANK[s]),
            )
        )
    return out


def criteria_only_metrics(results: Results, rows: Sequence[MetricRow] | None = None) -> tuple[str, ...]:
    """Metrics that got no LLM score, only deterministic criterion checks (offline): the
    summary's list, plus any metric row in the ``criteria_only`` state."""
    rows = metric_rows(results) if rows is None else rows
    out = list(results.summary.criteria_only_metrics)
    for r in rows:
        if r.status == "criteria_only" and r.metric_id not in out:
            out.append(r.metric_id)
    return tuple(out)
