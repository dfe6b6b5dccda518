"""Test-retest statistics of one conversation x metric over its N runs, and per metric.

The unit here is a *cell*: one conversation (seed x persona) and one metric, judged on each of
the conversation's N runs. :func:`compute_cell_stats` turns the cell's verdicts into a
:class:`CellStats`; :func:`compute_all_cell_stats` does it for a whole plan (fast enough for
25k transcripts x 19 metrics: see ``bench/bench_gate.py``); :func:`aggregate_by_metric` sums
cells up per metric across conversations.

States are kept apart (:mod:`empath_gate.judging.verdict`): only ``scored`` runs
count in the mean, median, min, max, range, SD and flip rate; ``na``, ``criteria_only``,
``judge_failure`` and ``missing`` (no verdict at all for a planned run) are counted, never
given a score.

Flip rate. A judged run *passes* when its score >= ``min_mean``. The majority outcome is the
one held by more runs; the flip rate is the share of judged runs whose outcome differs from
it, i.e. ``min(n_pass, n_fail) / n_judged``. With a tie (as many passing as failing runs,
only possible with an even count) either outcome may be called the majority and the formula
gives 0.5 either way, so ties need no arbitrary rule. ``None`` when no run was judged.

Only first judgings (``rejudge == 0``) are used here; re-judgings feed
:mod:`empath_gate.analysis.reliability`.
"""

from __future__ import annotations

from empath_gate.analysis.stats.build import compute_cell_stats, empty_cell
from empath_gate.analysis.stats.cells import CellStats, RunEntry, RunStatus, parse_transcript_id
from empath_gate.analysis.stats.fast import compute_all_cell_stats
from empath_gate.analysis.stats.metrics import MetricStats, aggregate_by_metric, aggregate_metric

__all__ = [
    "CellStats",
    "MetricStats",
    "RunEntry",
    "RunStatus",
    "aggregate_by_metric",
    "aggregate_metric",
    "compute_all_cell_stats",
    "compute_cell_stats",
    "empty_cell",
    "parse_transcript_id",
]
