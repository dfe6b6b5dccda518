"""The worst-case gap as every report shows it: one row per paired suite x metric (pure)."""

from __future__ import annotations

from dataclasses import dataclass

from empath_gate.results.model import Results


@dataclass(frozen=True)
class GapRow:
    """One metric of a paired suite: arm means over the paired seeds (1-10), the gap
    (cooperative minus worst case, points) with its 95 % cluster-bootstrap interval over seeds
    (None when undefined), the seeds paired, the limit (None when unknown) and whether the gap
    exceeds it."""

    suite: str
    metric_id: str
    cooperative: float | None
    worst_case: float | None
    gap: float | None
    ci_low: float | None
    ci_high: float | None
    seeds: int
    limit: float | None

    @property
    def over(self) -> bool:
        """True when the gap exceeds its limit (the check fails on it)."""
        return self.gap is not None and self.limit is not None and self.gap > self.limit + 1e-9


def gap_rows(results: Results) -> list[GapRow]:
    """Every paired suite's metrics in suite order, then the results' metric order."""
    resolved = results.gate.resolved if results.gate is not None else {}
    out: list[GapRow] = []
    for suite, gaps in results.worst_case_gaps.items():
        for g in gaps:
            th = resolved.get(suite, {}).get(g.metric_id)
            out.append(GapRow(
                suite=suite, metric_id=g.metric_id, cooperative=g.cooperative_mean,
                worst_case=g.worst_case_mean, gap=g.gap.value, ci_low=g.gap.ci_low, ci_high=g.gap.ci_high,
                seeds=len(g.seeds), limit=th.max_worst_case_gap if th is not None else None,
            ))
    return out
