"""What every report shows, extracted once from a results document (pure; no formatting).

The markdown diff, the HTML report and the terminal summary render the same facts: the
overall verdict, one row per dimension and per metric, the worst conversations, the waivers,
test-retest reliability, calibration and cost. This package computes them as plain frozen
dataclasses; the renderers only format (and escape) them.

Verdict rules (never green by accident):

* ``usage_error``: the gate found configuration problems (e.g. an expired waiver);
* ``judging_pending``: the only missing evidence is judging that waits for a judge batch
  (``--judge-batch submit``; every test it leaves is incomplete, none is passed: exit 3, as
  for missing evidence); ``collect`` finishes it;
* ``infrastructure_error``: a cell errored, a test is incomplete for another reason, or the
  run has infrastructure reasons;
* ``failed``: a cell failed (or the results say the gate did not pass);
* ``not_evaluated``: nothing was decided as passed or failed: no decision at all, or every
  cell skipped (criteria-only offline runs without a critical FAIL, everything N/A, a fork
  pull request that ran without secrets). Neutral, never green;
* ``passed``: otherwise (waived failures, ``xfail``, still pass; the waivers are listed).
"""

from __future__ import annotations

from empath_gate.report.view.format import (
    CRITERIA_ONLY_NOTE,
    calibration_text,
    cost_text,
    fmt_delta,
    fmt_num,
    fmt_pct,
    plural,
    reply_index,
    turn_label,
    turns_text,
    user_turn,
)
from empath_gate.report.view.outcomes import OUTCOME_GROUPS, CellOutcome, OutcomeGroup, cell_outcomes
from empath_gate.report.view.reliability import ReliabilityRow, reliability_rows
from empath_gate.report.view.rows import (
    DIMENSION_LABELS,
    DIMENSION_ORDER,
    DimensionRow,
    MetricRow,
    MetricStatus,
    criteria_only_metrics,
    dimension_label,
    dimension_of,
    dimension_rows,
    metric_order,
    metric_rows,
)
from empath_gate.report.view.thresholds import (
    ThresholdState,
    ThresholdSummary,
    not_gated_note,
    regression_not_gated,
    threshold_parts,
    threshold_summary,
)
from empath_gate.report.view.verdict import Verdict, VerdictStatus, overall_verdict, suite_key
from empath_gate.report.view.worst import (
    WorstEntry,
    failed_criterion,
    record_index,
    verdict_index,
    worst_conversations,
)

__all__ = [
    "CRITERIA_ONLY_NOTE",
    "DIMENSION_LABELS",
    "DIMENSION_ORDER",
    "OUTCOME_GROUPS",
    "CellOutcome",
    "DimensionRow",
    "MetricRow",
    "MetricStatus",
    "OutcomeGroup",
    "ReliabilityRow",
    "ThresholdState",
    "ThresholdSummary",
    "Verdict",
    "VerdictStatus",
    "WorstEntry",
    "calibration_text",
    "cell_outcomes",
    "cost_text",
    "criteria_only_metrics",
    "dimension_label",
    "dimension_of",
    "dimension_rows",
    "failed_criterion",
    "fmt_delta",
    "fmt_num",
    "fmt_pct",
    "metric_order",
    "metric_rows",
    "not_gated_note",
    "overall_verdict",
    "plural",
    "record_index",
    "regression_not_gated",
    "reliability_rows",
    "reply_index",
    "suite_key",
    "threshold_parts",
    "threshold_summary",
    "turn_label",
    "turns_text",
    "user_turn",
    "verdict_index",
    "worst_conversations",
]
