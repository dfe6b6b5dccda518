"""The worst-case gap (pure): how much lower a suite scores with hard-to-help seekers than with a
cooperative one, metric by metric, paired by seed.

A paired suite (``cooperative_pairing``) runs each seed with one cooperative persona and with
each worst-case persona. For one metric and one seed: the cooperative arm is the mean score of
the cooperative persona's cell, the worst-case arm the mean of the worst-case personas' cell
means (each cell is the mean of its judged runs); the seed's difference is cooperative minus
worst-case. The gap is the mean of the seeds' differences; its 95 % interval is a cluster
bootstrap over seeds (each seed's difference resampled as one unit, :mod:`bootstrap`). A seed
enters only when both arms have a judged score; the rest are counted in ``seeds_without_pair``.
A positive gap means the bot does worse with hard seekers (scores run 1-10, 10 safest).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

import numpy as np

from empath_gate.analysis.base import AnalysisModel
from empath_gate.analysis.bootstrap import (
    DEFAULT_RESAMPLES,
    DEFAULT_SEED,
    Estimate,
    estimate,
    resample_indices,
)

if TYPE_CHECKING:
    from empath_gate.analysis.stats import CellStats


class SeedGap(AnalysisModel):
    """One seed's pair for one metric: arm means (1-10) and their difference (-9..9)."""

    seed_id: str
    cooperative: float
    worst_case: float
    gap: float


class MetricGap(AnalysisModel):
    """The gap of one metric in one suite: ``gap`` (mean of ``seeds``' differences, with its
    cluster-bootstrap interval), the arm means over the paired seeds, and the seeds that had
    only one arm judged."""

    metric_id: str
    cooperative_mean: float | None
    worst_case_mean: float | None
    gap: Estimate
    seeds: tuple[SeedGap, ...] = ()
    seeds_without_pair: tuple[str, ...] = ()


def _mean(values: Sequence[float]) -> float | None:
    return float(sum(values) / len(values)) if values else None


def metric_gaps(
    cells: Sequence[CellStats],
    cooperative: Mapping[str, str],
    *,
    n_resamples: int = DEFAULT_RESAMPLES,
    seed: int = DEFAULT_SEED,
) -> tuple[MetricGap, ...]:
    """The gap of every metric of one suite's ``cells``, in first-seen metric order.

    ``cooperative`` maps seed id -> its cooperative persona id; cells of other personas of that
    seed are the worst-case arm, cells of seeds absent from it are ignored. Resampling is seeded
    (``seed``, ``n_resamples``) so the interval is the same on every machine.
    """
    by_metric: dict[str, dict[str, tuple[list[float], list[float]]]] = {}
    for c in cells:
        coop = cooperative.get(c.seed_id)
        if coop is None:
            continue
        arms = by_metric.setdefault(c.metric_id, {}).setdefault(c.seed_id, ([], []))
        if c.mean is not None:
            arms[0 if c.persona_id == coop else 1].append(c.mean)
    out: list[MetricGap] = []
    for mid, per_seed in by_metric.items():
        pairs: list[SeedGap] = []
        lonely: list[str] = []
        for sid, (co, wc) in per_seed.items():
            a, b = _mean(co), _mean(wc)
            if a is None or b is None:
                lonely.append(sid)
            else:
                pairs.append(SeedGap(seed_id=sid, cooperative=a, worst_case=b, gap=a - b))
        diffs = np.array([p.gap for p in pairs], dtype=np.float64)
        if not pairs:
            gap = Estimate(value=None, note="no seed has both arms judged")
        elif len(pairs) == 1:
            gap = estimate(float(diffs[0]), None, note="one seed: no interval")
        else:
            idx = resample_indices(len(pairs), n_resamples=n_resamples, seed=seed)
            gap = estimate(float(diffs.mean()), diffs[idx].mean(axis=1))
        out.append(MetricGap(
            metric_id=mid,
            cooperative_mean=_mean([p.cooperative for p in pairs]),
            worst_case_mean=_mean([p.worst_case for p in pairs]),
            gap=gap,
            seeds=tuple(pairs),
            seeds_without_pair=tuple(lonely),
        ))
    return tuple(out)
