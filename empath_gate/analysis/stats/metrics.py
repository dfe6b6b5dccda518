"""One metric summed up across its conversations (:class:`MetricStats`)."""

from __future__ import annotations

import math
from collections.abc import Sequence

from empath_gate.analysis.base import AnalysisModel
from empath_gate.analysis.stats.build import _sample_sd
from empath_gate.analysis.stats.cells import CellStats


class MetricStats(AnalysisModel):
    """One metric summed up across conversations.

    ``mean``: mean of the conversation means (each conversation weighs the same; ``None`` when
    no conversation was judged); ``sd_between``: sample SD of the conversation means;
    ``within_sd``: pooled within-conversation SD, the square root of the mean of the cells'
    sample variances over cells with >= 2 judged runs; ``mean_flip_rate``: mean of the cells'
    flip rates; ``flipping_conversations``: cells whose flip rate is > 0. Run counts add up
    over cells; ``judge_failure_rate`` = ``n_failures / (n_runs - n_missing)`` (``None`` when no
    run has a verdict).
    """

    metric_id: str
    n_conversations: int
    n_judged_conversations: int
    mean: float | None
    sd_between: float | None
    within_sd: float | None
    mean_flip_rate: float | None
    flipping_conversations: int
    n_runs: int
    n_judged: int
    n_failures: int
    n_na: int
    n_criteria_only: int
    n_missing: int
    judge_failure_rate: float | None


def aggregate_metric(metric_id: str, cells: Sequence[CellStats]) -> MetricStats:
    """Sum up the cells of one metric (cells of other metrics raise ValueError)."""
    for c in cells:
        if c.metric_id != metric_id:
            raise ValueError(f"cell of {c.metric_id!r} given to the summary of {metric_id!r}")
    means = [c.mean for c in cells if c.mean is not None]
    variances = [c.sd * c.sd for c in cells if c.sd is not None]
    flips = [c.flip_rate for c in cells if c.flip_rate is not None]
    n_runs = sum(c.n_runs for c in cells)
    n_missing = sum(c.n_missing for c in cells)
    n_failures = sum(c.n_failures for c in cells)
    attempted = n_runs - n_missing
    return MetricStats(
        metric_id=metric_id,
        n_conversations=len(cells),
        n_judged_conversations=len(means),
        mean=sum(means) / len(means) if means else None,
        sd_between=_sample_sd(means),
        within_sd=math.sqrt(sum(variances) / len(variances)) if variances else None,
        mean_flip_rate=sum(flips) / len(flips) if flips else None,
        flipping_conversations=sum(1 for f in flips if f > 0),
        n_runs=n_runs,
        n_judged=sum(c.n_judged for c in cells),
        n_failures=n_failures,
        n_na=sum(c.n_na for c in cells),
        n_criteria_only=sum(c.n_criteria_only for c in cells),
        n_missing=n_missing,
        judge_failure_rate=n_failures / attempted if attempted else None,
    )


def aggregate_by_metric(cells: Sequence[CellStats]) -> tuple[MetricStats, ...]:
    """Per-metric summaries, in the order each metric first appears in ``cells``."""
    grouped: dict[str, list[CellStats]] = {}
    for c in cells:
        grouped.setdefault(c.metric_id, []).append(c)
    return tuple(aggregate_metric(m, cs) for m, cs in grouped.items())
