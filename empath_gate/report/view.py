"""What every report shows, extracted once from a results document (pure; no formatting).

The markdown diff, the HTML report and the terminal summary render the same facts: the
overall verdict, one row per dimension and per metric, the worst conversations, the waivers,
test-retest reliability, calibration and cost. This module computes them as plain frozen
dataclasses; the renderers only format (and escape) them.

Verdict rules (never green by accident):

* ``usage_error``: the gate found configuration problems (e.g. an expired waiver);
* ``infrastructure_error``: a cell errored or the run has infrastructure reasons;
* ``failed``: a cell failed (or the results say the gate did not pass);
* ``not_evaluated``: nothing was decided as passed or failed: no decision at all, or every
  cell skipped (criteria-only offline runs without a critical FAIL, everything N/A, a fork
  pull request that ran without secrets). Neutral, never green;
* ``passed``: otherwise (waived failures, ``xfail``, still pass; the waivers are listed).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from empath_gate.analysis.regression import MetricRegression
from empath_gate.analysis.stats import CellStats, MetricStats
from empath_gate.gate import CellDecision
from empath_gate.judging.verdict import CriterionVerdict, MetricVerdict
from empath_gate.results import CostInfo, Results, RunRecord

VerdictStatus = Literal["passed", "failed", "not_evaluated", "infrastructure_error", "usage_error"]
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

CRITERIA_ONLY_NOTE = "a judge model is needed for scores"
"""The plain sentence every report puts beside criteria-only (offline) metrics."""

_STATUS_RANK: dict[str, int] = {
    "error": 0,
    "failed": 1,
    "xfail": 2,
    "passed": 3,
    "criteria_only": 4,
    "skipped": 5,
}


@dataclass(frozen=True)
class Verdict:
    """The one-line verdict: ``status``, a short ``headline`` (plain text) and the cell
    ``counts`` behind it (every gate status, 0 when absent)."""

    status: VerdictStatus
    headline: str
    counts: Mapping[str, int]
    failing_metrics: tuple[str, ...] = ()
    critical_failing: tuple[str, ...] = ()
    reasons: tuple[str, ...] = ()


@dataclass(frozen=True)
class MetricRow:
    """One metric as the reports show it. Means and changes are on the 1-10 scale
    (candidate - baseline; negative = a drop, since 10 is always safest). ``run_min``/``run_max``:
    lowest and highest judged run score over the metric's conversations; ``flip_rate``: the
    mean of its cells' flip rates (0-0.5); ``status``: the worst cell status (``criteria_only``
    when no run was scored and only deterministic checks ran). ``failed_conditions``: names of
    the gating conditions that failed, in first-seen order. ``regression``: the comparison,
    ``None`` without a baseline."""

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

    @property
    def failing(self) -> bool:
        """True when a cell of this metric failed or errored."""
        return self.status in ("failed", "error")

    @property
    def change(self) -> float | None:
        """``candidate_mean - baseline_mean`` (points; descriptive, no test), ``None`` when
        either is missing."""
        return _change(self.candidate_mean, self.baseline_mean)


@dataclass(frozen=True)
class DimensionRow:
    """One dimension: its metrics (ids in report order), how many fail, and the mean of the
    metrics' baseline and candidate means (``None`` when none was scored)."""

    dimension: str
    metrics: tuple[str, ...]
    failing: tuple[str, ...]
    baseline_mean: float | None
    candidate_mean: float | None
    status: MetricStatus

    @property
    def change(self) -> float | None:
        """``candidate_mean - baseline_mean`` (points), ``None`` when either is missing."""
        return _change(self.candidate_mean, self.baseline_mean)


def _change(candidate: float | None, baseline: float | None) -> float | None:
    return candidate - baseline if candidate is not None and baseline is not None else None


@dataclass(frozen=True)
class WorstEntry:
    """A conversation x metric worth reading, and where to read it. ``run``: the run picked
    (lowest score, else the judge failure); ``turns``: 0-based turn indices the judge cited;
    ``quotes``: the cited quotes (transcript text: shown only when excerpts are enabled)."""

    conversation_id: str
    metric_id: str
    status: str
    reason: str
    change: float | None
    run: int | None
    score: int | None
    transcript_path: str | None
    criterion_id: str | None
    critical_criterion: bool
    turns: tuple[int, ...]
    quotes: tuple[tuple[int, str], ...] = field(default=())


@dataclass(frozen=True)
class ReliabilityRow:
    """Test-retest reliability of one metric: ``within_sd`` (pooled within-conversation SD,
    points), ``icc`` (ICC(1,1) across conversations), ``flip_rate`` (0-0.5),
    ``different_transcripts`` (share of conversations whose runs produced more than one
    distinct transcript, 0-1), ``judge_variance``/``generation_variance`` (points²) when the
    reliability analysis split them."""

    metric_id: str
    within_sd: float | None
    icc: float | None
    flip_rate: float | None
    different_transcripts: float | None
    judge_variance: float | None
    generation_variance: float | None


def dimension_label(dimension: str, labels: Mapping[str, str] | None = None) -> str:
    """A dimension's display label: from ``labels`` (the instrument's), else
    :data:`DIMENSION_LABELS`, else the id itself."""
    return (labels or {}).get(dimension) or DIMENSION_LABELS.get(dimension) or dimension


def suite_key(results: Results) -> str:
    """The suite(s) of a results document as one key (``crisis``, ``crisis+smoke``); names
    the sticky comment's hidden marker."""
    return "+".join(results.metadata.suites) or "default"


def _counts(results: Results) -> dict[str, int]:
    counts = dict.fromkeys(("passed", "failed", "skipped", "error", "xfail"), 0)
    if results.decisions:
        for d in results.decisions:
            counts[d.status] = counts.get(d.status, 0) + 1
    else:
        for k, v in results.summary.counts.items():
            counts[k] = counts.get(k, 0) + int(v)
    return counts


def overall_verdict(results: Results, rows: Sequence[MetricRow] | None = None) -> Verdict:
    """The verdict of a run (module docstring for the rules)."""
    counts = _counts(results)
    rows = metric_rows(results) if rows is None else rows
    failing = tuple(r.metric_id for r in rows if r.failing)
    critical = tuple(r.metric_id for r in rows if r.failing and r.critical)
    s = results.summary
    if s.usage_errors:
        return Verdict("usage_error", "configuration error", counts, failing, critical, s.usage_errors)
    if counts["error"] or s.infrastructure_reasons:
        reasons = (
            s.infrastructure_reasons
            or tuple(d.reasons[0] for d in results.decisions if d.status == "error" and d.reasons)[:5]
        )
        return Verdict("infrastructure_error", "infrastructure error", counts, failing, critical, reasons)
    if counts["failed"] or (not s.passed and not results.decisions and s.counts.get("failed")):
        n = len(failing)
        what = f"{n} of {len(rows)} metrics fail" if n else "the gate failed"
        return Verdict("failed", f"failed: {what}", counts, failing, critical)
    if counts["passed"] == 0 and counts["xfail"] == 0:
        why = "every test was skipped" if counts["skipped"] else "no test was decided"
        if results.summary.criteria_only_metrics or any(r.status == "criteria_only" for r in rows):
            why += f" (criteria-only: {CRITERIA_ONLY_NOTE})"
        return Verdict("not_evaluated", f"not evaluated: {why}", counts, failing, critical)
    waived = f", {counts['xfail']} waived" if counts["xfail"] else ""
    return Verdict("passed", f"passed{waived}", counts, failing, critical)


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
    if worst == "skipped" and cells and all(c.n_judged == 0 and c.n_criteria_only > 0 for c in cells):
        return "criteria_only"
    return worst


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
    rows: list[MetricRow] = []
    for m in metric_order(results):
        mcells = cells.get(m, [])
        mdec = decisions.get(m, [])
        ms = stats.get(m)
        mr = reg.metric(m) if reg is not None else None
        scores = [s for c in mcells for s in c.scores]
        counts: dict[str, int] = {}
        conditions: list[str] = []
        reasons: list[str] = []
        for d in mdec:
            counts[d.status] = counts.get(d.status, 0) + 1
            if d.status in ("failed", "error", "xfail"):
                for f in d.failures:
                    if f.kind in d.failed_kinds and f.name not in conditions:
                        conditions.append(f.name)
                reasons.extend(d.reasons)
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
                failed_conditions=tuple(conditions),
                reasons=tuple(dict.fromkeys(reasons)),
                regression=mr,
                comparable=reg.comparable if reg is not None else False,
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
                failing=tuple(r.metric_id for r in rs if r.failing),
                baseline_mean=_mean(r.baseline_mean for r in rs),
                candidate_mean=_mean(r.candidate_mean for r in rs),
                status=min((r.status for r in rs), key=lambda s: _STATUS_RANK[s]),
            )
        )
    return out


def verdict_index(results: Results) -> dict[tuple[str, str], MetricVerdict]:
    """(transcript id, metric id) -> its first judging."""
    out: dict[tuple[str, str], MetricVerdict] = {}
    for rec in results.records:
        for v in rec.verdicts:
            if v.rejudge == 0:
                out.setdefault((v.transcript_id, v.metric_id), v)
    return out


def record_index(results: Results) -> dict[str, RunRecord]:
    """Transcript id -> its record."""
    return {r.transcript_id: r for r in results.records}


def failed_criterion(verdict: MetricVerdict | None) -> CriterionVerdict | None:
    """The criterion to name for a verdict: the first critical FAIL, else the first FAIL."""
    if verdict is None:
        return None
    fails = [c for c in verdict.criteria if c.state == "FAIL"]
    crit = [c for c in fails if c.critical]
    pool = crit or fails
    return pool[0] if pool else None


def _pick_run(cell: CellStats | None) -> int | None:
    if cell is None:
        return None
    judged = [(sc, r) for r, sc in zip(cell.run_ids, cell.run_scores, strict=True) if sc is not None]
    failures = [
        r for r, st in zip(cell.run_ids, cell.statuses, strict=True) if st in ("judge_failure", "missing")
    ]
    crit = list(cell.critical_fail_runs)
    if failures:
        return failures[0]
    if judged:
        return min(judged)[1]
    return crit[0] if crit else (cell.run_ids[0] if cell.run_ids else None)


def worst_conversations(results: Results, n: int = 10) -> list[WorstEntry]:
    """Up to ``n`` conversation x metric cells worth reading, most severe first: errored and
    failed cells (critical metrics first, then the lowest mean), waived (xfail) cells, then
    the largest drops against the baseline not listed yet."""
    cells = {(c.conversation_id, c.metric_id): c for c in results.cells}
    verdicts = verdict_index(results)
    records = record_index(results)
    reg = results.regressions

    def entry(conv: str, metric: str, status: str, reason: str) -> WorstEntry:
        cell = cells.get((conv, metric))
        run = _pick_run(cell)
        tid = f"{conv}-r{run}" if run is not None else None
        v = verdicts.get((tid, metric)) if tid else None
        crit = failed_criterion(v)
        change = None
        if reg is not None:
            ch = reg.change(conv, metric)
            change = ch.change if ch is not None else None
        rec = records.get(tid) if tid else None
        score = None
        if cell is not None and run is not None and run in cell.run_ids:
            score = cell.run_scores[cell.run_ids.index(run)]
        quotes = tuple((c.turn, c.quote) for c in crit.citations) if crit is not None else ()
        return WorstEntry(
            conversation_id=conv,
            metric_id=metric,
            status=status,
            reason=reason,
            change=change,
            run=run,
            score=score,
            transcript_path=rec.transcript_path if rec else None,
            criterion_id=crit.criterion_id if crit else None,
            critical_criterion=bool(crit and crit.critical),
            turns=tuple(dict.fromkeys(t for t, _ in quotes)),
            quotes=quotes,
        )

    bad = [d for d in results.decisions if d.status in ("error", "failed", "xfail")]
    crit_metrics = {i.metric_id for i in results.items if i.critical}

    def sort_key(d: CellDecision) -> tuple[int, int, float, str, str]:
        c = cells.get((d.conversation_id, d.metric_id))
        mean = c.mean if c is not None and c.mean is not None else -1.0
        return (
            _STATUS_RANK[d.status],
            0 if d.metric_id in crit_metrics else 1,
            mean,
            d.conversation_id,
            d.metric_id,
        )

    out: list[WorstEntry] = []
    seen: set[tuple[str, str]] = set()
    for d in sorted(bad, key=sort_key):
        if len(out) >= n:
            break
        out.append(entry(d.conversation_id, d.metric_id, d.status, d.reasons[0] if d.reasons else d.status))
        seen.add((d.conversation_id, d.metric_id))
    if reg is not None:
        for ch in reg.worst(n):
            if len(out) >= n:
                break
            if (ch.conversation_id, ch.metric_id) in seen or ch.change is None or ch.change >= 0:
                continue
            out.append(
                entry(
                    ch.conversation_id,
                    ch.metric_id,
                    "dropped",
                    f"{ch.metric_id}: mean {ch.baseline_mean:.2f} → {ch.candidate_mean:.2f}"
                    if ch.baseline_mean is not None and ch.candidate_mean is not None
                    else "dropped",
                )
            )
            seen.add((ch.conversation_id, ch.metric_id))
    return out


_ALIASES: dict[str, tuple[str, ...]] = {
    "within_sd": ("within_sd", "within_conversation_sd", "sd_within", "within_subject_sd"),
    "icc": ("icc", "icc_1_1", "icc11", "icc1"),
    "flip_rate": ("flip_rate", "mean_flip_rate"),
    "different_transcripts": (
        "different_transcripts",
        "transcripts_differed",
        "different_transcript_rate",
        "transcript_change_rate",
        "transcripts_differ",
        "share_different_transcripts",
    ),
    "judge_variance": ("judge_variance", "sigma2_judge", "var_judge", "judge_noise_variance"),
    "generation_variance": (
        "generation_variance",
        "sigma2_generation",
        "var_generation",
        "generation_noise_variance",
    ),
}


def _num(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        if isinstance(value, Mapping):
            for key in ("value", "estimate", "point"):
                if key in value:
                    return _num(value[key])
        return None
    f = float(value)
    return None if math.isnan(f) or math.isinf(f) else f


def _reliability_entries(reliability: Mapping[str, Any] | None) -> dict[str, Mapping[str, Any]]:
    """Accepts ``{"metrics": {id: {...}}}``, ``{"metrics": [{"metric_id": id, ...}]}``,
    ``{"per_metric": ...}`` or ``{id: {...}}``; anything else gives no entries."""
    if not isinstance(reliability, Mapping):
        return {}
    body: Any = reliability
    for key in ("metrics", "per_metric", "by_metric", "reliability"):
        if key in reliability:
            body = reliability[key]
            break
    out: dict[str, Mapping[str, Any]] = {}
    if isinstance(body, Mapping):
        for k, v in body.items():
            if isinstance(k, str) and isinstance(v, Mapping):
                out[k] = v
    elif isinstance(body, list):
        for v in body:
            if isinstance(v, Mapping):
                mid = v.get("metric_id") or v.get("metric")
                if isinstance(mid, str):
                    out[mid] = v
    return out


def _different_transcripts(results: Results) -> dict[str, float]:
    by_conv: dict[str, set[str]] = {}
    for r in results.records:
        if r.content_hash is not None:
            by_conv.setdefault(r.conversation_id, set()).add(r.content_hash)
    metrics_of: dict[str, set[str]] = {}
    for c in results.cells:
        metrics_of.setdefault(c.metric_id, set()).add(c.conversation_id)
    out: dict[str, float] = {}
    for m, convs in metrics_of.items():
        known = [c for c in convs if c in by_conv]
        if known:
            out[m] = sum(1 for c in known if len(by_conv[c]) > 1) / len(known)
    return out


def reliability_rows(results: Results, rows: Sequence[MetricRow] | None = None) -> list[ReliabilityRow]:
    """Reliability per metric: figures from ``results.reliability`` (any of the shapes
    :func:`_reliability_entries` accepts, unknown keys ignored), falling back to the metric
    statistics (within-conversation SD, flip rate) and the records' content hashes (different
    transcripts). Metrics with nothing to show are left out."""
    rows = metric_rows(results) if rows is None else rows
    entries = _reliability_entries(results.reliability)
    diff = _different_transcripts(results)
    out: list[ReliabilityRow] = []
    for r in rows:
        if r.n_judged == 0 and r.metric_id not in entries:
            continue
        e = entries.get(r.metric_id, {})
        out.append(
            ReliabilityRow(
                metric_id=r.metric_id,
                within_sd=_pick(e, "within_sd", r.within_sd),
                icc=_pick(e, "icc"),
                flip_rate=_pick(e, "flip_rate", r.flip_rate),
                different_transcripts=_pick(e, "different_transcripts", diff.get(r.metric_id)),
                judge_variance=_pick(e, "judge_variance"),
                generation_variance=_pick(e, "generation_variance"),
            )
        )
    return out


def _pick(entry: Mapping[str, Any], name: str, fallback: float | None = None) -> float | None:
    """The figure ``name`` of a reliability entry under its first alias present (``_ALIASES``),
    else ``fallback`` (also when that value is not a finite number)."""
    for alias in _ALIASES[name]:
        if alias in entry:
            value = _num(entry[alias])
            return fallback if value is None else value
    return fallback


_CAL_FIGURES: tuple[tuple[tuple[str, ...], str, bool], ...] = (
    (("within_1", "within_one", "within_pm1", "agreement_within_1"), "within ±1", True),
    (("exact", "exact_agreement"), "exact", True),
    (("mae", "mean_absolute_error"), "MAE", False),
    (("mean_abs_diff", "mean_absolute_difference"), "mean |Δ|", False),
    (("bias", "mean_bias"), "bias", False),
    (("spearman", "spearman_rho"), "Spearman", False),
    (("pearson", "pearson_r"), "Pearson", False),
    (("kappa", "weighted_kappa", "quadratic_kappa"), "weighted κ", False),
    (("alpha", "krippendorff_alpha"), "Krippendorff α", False),
)


def calibration_text(calibration: Mapping[str, Any] | None) -> str:
    """The judge's calibration status as one plain-text sentence: "not calibrated" when
    ``None`` or marked uncalibrated (``calibrated: false`` or a ``status`` other than
    ``calibrated``, e.g. "stale: calibrated for <model>", shown with its ``note``); else
    against what, when, and the agreement figures found (within ±1, exact, MAE, mean absolute
    difference, bias with its ``bias_ci_low``/``bias_ci_high`` interval, Spearman, Pearson,
    weighted κ, Krippendorff α, n), in that order. Figures may sit under ``figures``,
    ``pooled`` or ``agreement`` (the shape of :mod:`empath_gate.calibration_status`); unknown
    keys are ignored."""
    if not calibration:
        return "judge not calibrated (no gold labels or agreement run recorded)"
    cal: Mapping[str, Any] = calibration
    status = cal.get("status")
    if cal.get("calibrated") is False or (isinstance(status, str) and status != "calibrated"):
        bits = [
            x
            for x in (
                status if status not in ("uncalibrated", "not_calibrated") else None,
                cal.get("reason") or cal.get("note"),
            )
            if isinstance(x, str) and x
        ]
        return "judge not calibrated" + (f" ({'; '.join(bits)})" if bits else "")
    against = next(
        (cal[k] for k in ("against", "gold", "reference", "source") if isinstance(cal.get(k), str)), None
    )
    when = next(
        (cal[k] for k in ("date", "when", "at", "calibrated_at") if isinstance(cal.get(k), str)), None
    )
    figures_src: Mapping[str, Any] = cal
    for k in ("pooled", "figures", "agreement"):
        if isinstance(cal.get(k), Mapping):
            figures_src = {**cal[k], **{kk: vv for kk, vv in cal.items() if kk not in (k,)}}
            break
    figures: list[str] = []
    for aliases, label, pct in _CAL_FIGURES:
        for a in aliases:
            v = _num(figures_src.get(a))
            if v is not None:
                text_v = fmt_pct(v) if pct else f"{v:+.2f}" if label == "bias" else f"{v:.2f}"
                lo, hi = _num(figures_src.get(f"{a}_ci_low")), _num(figures_src.get(f"{a}_ci_high"))
                if lo is not None and hi is not None:
                    text_v += (
                        f" (95% CI {lo:+.2f} to {hi:+.2f})" if label == "bias" else f" ({lo:.2f}–{hi:.2f})"
                    )
                figures.append(f"{label} {text_v}")
                break
    n = _num(figures_src.get("n") if "n" in figures_src else figures_src.get("n_pairs"))
    if n is not None:
        figures.append(f"n = {int(n)}")
    text = "judge calibrated"
    if against:
        text += f" against {against}"
    if when:
        text += f" on {when}"
    if figures:
        text += ": " + ", ".join(figures)
    inflated = cal.get("inflated_vs_gold") or cal.get("inflated")
    if isinstance(inflated, (list, tuple)) and inflated:
        text += f"; inflated vs gold on {', '.join(str(x) for x in inflated)}"
    return text


def cost_text(cost: CostInfo) -> str:
    """``$1.23 (156 calls)``, or ``≥ $1.23, 4 of 156 calls unpriced`` when some calls had no
    known price (the true cost is then higher), plus the budget when one was set."""
    amount = f"${cost.known_usd:,.2f}"
    if cost.unpriced_calls:
        text = f"≥ {amount}, {cost.unpriced_calls} of {cost.calls} calls unpriced"
    else:
        text = f"{amount} ({cost.calls} calls)"
    if cost.budget_usd is not None:
        text += f"; budget ${cost.budget_usd:,.2f}" + (
            " (exhausted: the run stopped early)" if cost.budget_exhausted else ""
        )
    return text


def criteria_only_metrics(results: Results, rows: Sequence[MetricRow] | None = None) -> tuple[str, ...]:
    """Metrics that got no LLM score, only deterministic criterion checks (offline): the
    summary's list, plus any metric row in the ``criteria_only`` state."""
    rows = metric_rows(results) if rows is None else rows
    out = list(results.summary.criteria_only_metrics)
    for r in rows:
        if r.status == "criteria_only" and r.metric_id not in out:
            out.append(r.metric_id)
    return tuple(out)


def fmt_num(x: float | None, digits: int = 2) -> str:
    """A number for a table: ``—`` for None, else rounded with trailing zeros kept short."""
    if x is None:
        return "—"
    s = f"{x:.{digits}f}"
    if "." in s:
        s = s.rstrip("0").rstrip(".")
    return "0" if s in ("-0", "") else s


def fmt_pct(x: float | None) -> str:
    """A share (0-1) as a whole percentage for a table: ``42%``; ``—`` for None."""
    return "—" if x is None else f"{x * 100:.0f}%"


def fmt_delta(x: float | None) -> str:
    """A signed change with an arrow: ``▼ -2.42``, ``▲ +0.5``, ``= 0``; ``—`` for None."""
    if x is None:
        return "—"
    if abs(x) < 0.005:
        return "= 0"
    arrow = "▲" if x > 0 else "▼"
    return f"{arrow} {x:+.2f}"
