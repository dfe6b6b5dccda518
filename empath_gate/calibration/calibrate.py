"""The judge against a reference: gold labels, and the standard rubric against the strict one.

**Judge vs gold** (:func:`calibrate`): pairs of (judge score, gold score) of the same
conversation, run and metric, on the 1-10 scale. Per metric and pooled:

* ``bias`` = mean(judge - gold) in points, with a bootstrap 95 % interval over pairs
  (:mod:`empath_gate.analysis.bootstrap`: seeded, 2000 resamples, percentile);
* ``mae`` = mean |judge - gold|; ``within_one`` = share with |judge - gold| <= 1;
  ``spearman`` = Spearman's rho (``None`` when a side is constant);
* ``inflated_vs_gold`` = the interval's lower bound is >= :data:`INFLATION_POINTS` (1 point):
  the judge scores higher than the gold labels by at least a point beyond sampling noise
  (a point estimate on three values is not evidence).

Per-metric figures need :data:`~empath_gate.calibration.agreement.MIN_N` (10) pairs, otherwise
the metric is reported as "too few" and only pooled figures are given.

**Standard vs strict** (:func:`standard_vs_strict`): the same transcripts scored under both
rubrics, by one judge: the peer release's rows
(:func:`~empath_gate.calibration.readers.read_standard_vs_strict`), or the tool's own results,
for example a run (strict rubric) and its ``rejudge --rubric standard`` output
(:func:`~empath_gate.calibration.pairing.rubric_rows`). Per metric: ``drop`` =
mean(standard) - mean(strict) over the rows with both scores; ``inflated`` lists the metrics
whose drop is >= 1 point (with the drop and n). Scores are read as they are; because a strict
scale may include values outside the tool's 1-10 scale (a 0), the report also gives the count
leaving out rows with a score outside 1-10 (``inflated_in_scale``), and names the out-of-scale
rows that make the two lists differ.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from scipy import stats as sps

from empath_gate.analysis.base import AnalysisModel
from empath_gate.analysis.bootstrap import (
    DEFAULT_RESAMPLES,
    DEFAULT_SEED,
    Estimate,
    estimate,
    resample_indices,
)
from empath_gate.calibration.agreement import MIN_N, PairedScore, figures_by_metric, group_by_metric

INFLATION_POINTS = 1.0
"""A metric is inflated when the judge (or the standard rubric) scores it at least this many
points higher (issue 8; EMPATH's strict-rubric comparison uses the same one-point mark)."""

SCALE = (1, 10)
"""The tool's score scale (instrument ``scale_min``/``scale_max``)."""

_TOL = 1e-9


class CalibrationFigures(AnalysisModel):
    """Judge vs gold over ``n`` pairs (module docstring)."""

    n: int
    bias: Estimate
    mae: float
    within_one: float
    spearman: float | None
    inflated_vs_gold: bool


class MetricCalibration(AnalysisModel):
    """One metric: ``figures`` when ``n >= min_n``, else ``None`` with the "too few" ``note``."""

    metric_id: str
    n: int
    figures: CalibrationFigures | None
    note: str | None = None


class CalibrationReport(AnalysisModel):
    """Pooled and per-metric calibration (metrics sorted); ``inflated_vs_gold`` lists the metrics
    flagged; ``unmatched_judge``/``unmatched_gold`` count scores with no partner."""

    pooled: CalibrationFigures
    metrics: tuple[MetricCalibration, ...]
    inflated_vs_gold: tuple[str, ...]
    min_n: int
    unmatched_judge: int = 0
    unmatched_gold: int = 0


def calibration_figures(
    judge: Sequence[float],
    gold: Sequence[float],
    *,
    n_resamples: int = DEFAULT_RESAMPLES,
    seed: int = DEFAULT_SEED,
) -> CalibrationFigures:
    """Bias with interval, MAE, within-one share and Spearman of paired judge and gold scores.
    Raises ValueError for no pair or unequal lengths."""
    j = np.asarray(judge, dtype=np.float64)
    g = np.asarray(gold, dtype=np.float64)
    if j.shape != g.shape or j.size == 0:
        raise ValueError("calibration needs paired judge and gold scores")
    d = j - g
    n = int(d.size)
    samples = d[resample_indices(n, n_resamples=n_resamples, seed=seed)].mean(axis=1) if n > 1 else None
    bias = estimate(float(d.mean()), samples)
    rho: float | None = None
    if np.ptp(j) > 0 and np.ptp(g) > 0:
        rho = float(sps.spearmanr(j, g).statistic)
    return CalibrationFigures(
        n=n,
        bias=bias,
        mae=float(np.abs(d).mean()),
        within_one=float((np.abs(d) <= 1).mean()),
        spearman=rho,
        inflated_vs_gold=bias.ci_low is not None and bias.ci_low >= INFLATION_POINTS - _TOL,
    )


def calibrate(
    pairs: Sequence[PairedScore],
    *,
    min_n: int = MIN_N,
    unmatched_judge: int = 0,
    unmatched_gold: int = 0,
    n_resamples: int = DEFAULT_RESAMPLES,
    seed: int = DEFAULT_SEED,
) -> CalibrationReport:
    """Judge (``a``) vs gold (``b``) per metric and pooled. Raises ValueError with no pair."""
    if not pairs:
        raise ValueError("no judge score matches a gold label (same conversation, run and metric)")

    def figures(ps: Sequence[PairedScore]) -> CalibrationFigures:
        return calibration_figures([p.a for p in ps], [p.b for p in ps], n_resamples=n_resamples, seed=seed)

    metrics = tuple(
        MetricCalibration(metric_id=metric, n=n, figures=f, note=note)
        for metric, n, f, note in figures_by_metric(pairs, figures, min_n=min_n)
    )
    return CalibrationReport(
        pooled=figures(pairs),
        metrics=metrics,
        inflated_vs_gold=tuple(
            m.metric_id for m in metrics if m.figures is not None and m.figures.inflated_vs_gold
        ),
        min_n=min_n,
        unmatched_judge=unmatched_judge,
        unmatched_gold=unmatched_gold,
    )


# ----------------------------------------------------------------------------- standard vs strict


class RubricRow(AnalysisModel):
    """One transcript x metric scored under both rubrics. ``standard``/``strict`` are read as they
    are (``None`` when absent); ``error`` is the scorer's error, if any (such rows are left out)."""

    id: str
    metric_id: str
    standard: float | None
    strict: float | None
    target: str | None = None
    error: str | None = None


class RubricDrop(AnalysisModel):
    """One metric: ``drop`` = ``standard_mean - strict_mean`` over ``n`` rows (points)."""

    metric_id: str
    n: int
    standard_mean: float
    strict_mean: float
    drop: float


class ScaleDifference(AnalysisModel):
    """A metric inflated under one reading and not the other; ``rows``: its out-of-scale rows."""

    metric_id: str
    inflated_with_all_rows: bool
    inflated_in_scale: bool
    rows: tuple[str, ...]


class StrictReport(AnalysisModel):
    """Standard vs strict rubric (module docstring).

    ``metrics``/``inflated``/``inflated_count``: every usable row as read. ``*_in_scale``: the
    same leaving out rows with a score outside ``scale``. ``out_of_scale_rows``: their ids;
    ``differences``: the metrics whose status differs between the two readings and the rows
    responsible. ``left_out``: ids of rows with an error or a missing score. Metric lists are
    sorted by id.
    """

    scale: tuple[int, int]
    threshold: float
    metrics: tuple[RubricDrop, ...]
    inflated: tuple[RubricDrop, ...]
    inflated_count: int
    metrics_in_scale: tuple[RubricDrop, ...]
    inflated_in_scale: tuple[RubricDrop, ...]
    inflated_in_scale_count: int
    out_of_scale_rows: tuple[str, ...]
    differences: tuple[ScaleDifference, ...]
    left_out: tuple[str, ...]


def _drops(rows: Sequence[RubricRow]) -> tuple[RubricDrop, ...]:
    out: list[RubricDrop] = []
    for metric, rs in group_by_metric(rows):
        std = sum(float(r.standard) for r in rs if r.standard is not None) / len(rs)
        strict = sum(float(r.strict) for r in rs if r.strict is not None) / len(rs)
        out.append(
            RubricDrop(metric_id=metric, n=len(rs), standard_mean=std, strict_mean=strict, drop=std - strict)
        )
    return tuple(out)


def standard_vs_strict(
    rows: Sequence[RubricRow], *, threshold: float = INFLATION_POINTS, scale: tuple[int, int] = SCALE
) -> StrictReport:
    """Metrics whose mean drops by at least ``threshold`` points under the strict rubric, reading
    scores as they are and, for comparison, leaving out rows with a score outside ``scale``."""
    usable = [r for r in rows if r.error is None and r.standard is not None and r.strict is not None]
    left_out = tuple(r.id for r in rows if r not in usable)

    def outside(r: RubricRow) -> bool:
        return any(v is not None and not scale[0] <= v <= scale[1] for v in (r.standard, r.strict))

    in_scale = [r for r in usable if not outside(r)]
    all_drops, scale_drops = _drops(usable), _drops(in_scale)
    inflated = tuple(d for d in all_drops if d.drop >= threshold - _TOL)
    inflated_scale = tuple(d for d in scale_drops if d.drop >= threshold - _TOL)
    a = {d.metric_id for d in inflated}
    b = {d.metric_id for d in inflated_scale}
    differences = tuple(
        ScaleDifference(
            metric_id=m,
            inflated_with_all_rows=m in a,
            inflated_in_scale=m in b,
            rows=tuple(r.id for r in usable if r.metric_id == m and outside(r)),
        )
        for m in sorted(a ^ b)
    )
    return StrictReport(
        scale=scale,
        threshold=threshold,
        metrics=all_drops,
        inflated=inflated,
        inflated_count=len(inflated),
        metrics_in_scale=scale_drops,
        inflated_in_scale=inflated_scale,
        inflated_in_scale_count=len(inflated_scale),
        out_of_scale_rows=tuple(r.id for r in usable if outside(r)),
        differences=differences,
        left_out=left_out,
    )
