"""What a metric's Threshold and Regression columns say, true under every ``fail_on`` (pure).

The gate records every condition a cell failed (``CellDecision.failures``), also those that
did not gate because ``fail_on`` left their kind out (threshold conditions under
``regression`` or ``never``; the regression condition under ``threshold`` or ``never``).
Per metric the reports count the cells whose threshold conditions failed as *failed* (the
failure gated), *waived* (it gated and a waiver made the test xfail) or *not gated* (an
advisory), and show "mean ≥ 7" only when every cell met every threshold condition.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from empath_gate.gate.decide import CellDecision
from empath_gate.report.view.format import CRITERIA_ONLY_NOTE, fmt_num

if TYPE_CHECKING:
    from empath_gate.report.view.rows import MetricRow

ThresholdState = Literal["error", "failed", "xfail", "advisory", "passed", "skipped", "criteria_only"]
"""The state of one part of a Threshold cell (a renderer picks its icon or style)."""


@dataclass(frozen=True)
class ThresholdSummary:
    """A metric's cells against their thresholds. Counts are cells: ``errored`` (no
    decision on thresholds: infrastructure), ``incomplete`` (undecided: missing evidence),
    ``failed`` (a threshold condition failed and
    gated), ``waived`` (likewise, made xfail by a waiver), ``advisory`` (a threshold condition
    failed but did not gate). ``*_conditions``: the failed threshold conditions' names of
    each group, first-seen order (a failed or waived decision that recorded no conditions
    counts as failed or waived with "unrecorded conditions", never as met).
    ``regression_gated``/``regression_advisory``: cells whose regression condition failed and
    gated / did not gate."""

    errored: int = 0
    incomplete: int = 0
    failed: int = 0
    waived: int = 0
    advisory: int = 0
    failed_conditions: tuple[str, ...] = ()
    waived_conditions: tuple[str, ...] = ()
    advisory_conditions: tuple[str, ...] = ()
    regression_gated: int = 0
    regression_advisory: int = 0


def threshold_summary(decisions: Sequence[CellDecision]) -> ThresholdSummary:
    """Count a metric's decisions into a :class:`ThresholdSummary`."""
    counts = {"error": 0, "incomplete": 0, "failed": 0, "xfail": 0, "advisory": 0, "reg_gated": 0,
              "reg_advisory": 0}
    names: dict[str, list[str]] = {"failed": [], "xfail": [], "advisory": []}
    for d in decisions:
        if d.status in ("error", "incomplete"):
            counts[d.status] += 1
            continue
        if not d.failures and d.status in ("failed", "xfail"):  # a decision without its conditions
            counts[d.status] += 1
            names[d.status].extend(x for x in ("unrecorded conditions",) if x not in names[d.status])
            continue
        failed = [f.name for f in d.failures if f.kind == "threshold"]
        if failed:
            gated = "threshold" in d.failed_kinds and d.status in ("failed", "xfail")
            group = d.status if gated else "advisory"
            counts[group] += 1
            names[group].extend(n for n in failed if n not in names[group])
        if any(f.kind == "regression" for f in d.failures):
            counts["reg_gated" if "regression" in d.failed_kinds else "reg_advisory"] += 1
    return ThresholdSummary(
        errored=counts["error"],
        incomplete=counts["incomplete"],
        failed=counts["failed"],
        waived=counts["xfail"],
        advisory=counts["advisory"],
        failed_conditions=tuple(names["failed"]),
        waived_conditions=tuple(names["xfail"]),
        advisory_conditions=tuple(names["advisory"]),
        regression_gated=counts["reg_gated"],
        regression_advisory=counts["reg_advisory"],
    )


def not_gated_note(fail_on: str) -> str:
    """``not gated (fail-on: <fail_on>)``: the words every report puts beside a failed
    condition that ``fail_on`` does not gate."""
    return f"not gated (fail-on: {fail_on})"


def threshold_parts(row: MetricRow) -> tuple[tuple[ThresholdState, str], ...]:
    """The Threshold cell of a metric as plain-text parts, worst first: errors, incomplete, failed
    cells, waived cells and cells whose failed threshold conditions did not gate, each with
    the conditions' names; when none applies, one part from the metric's status
    (``mean ≥ <min_mean>`` when every threshold held, ``N/A``, skipped, criteria-only)."""
    t, n = row.threshold, row.n_conversations
    parts: list[tuple[ThresholdState, str]] = []
    if t.errored:
        parts.append(("error", f"error in {t.errored}/{n}"))
    if t.incomplete:
        parts.append(("error", f"incomplete in {t.incomplete}/{n}"))
    if t.failed:
        parts.append(("failed", f"{t.failed}/{n} fail ({', '.join(t.failed_conditions)})"))
    if t.waived:
        parts.append(("xfail", f"{t.waived}/{n} waived ({', '.join(t.waived_conditions)})"))
    if t.advisory:
        parts.append((
            "advisory",
            f"{t.advisory}/{n} below threshold ({', '.join(t.advisory_conditions)}), "
            + not_gated_note(row.fail_on),
        ))
    if parts:
        return tuple(parts)
    if row.status == "criteria_only":
        return (("criteria_only", f"criteria-only: {CRITERIA_ONLY_NOTE}"),)
    if row.status == "skipped":
        return (("skipped", "N/A" if row.n_judged == 0 else "skipped"),)
    if row.min_mean is None:
        return (("passed", "thresholds met"),)
    return (("passed", f"mean ≥ {fmt_num(row.min_mean)}"),)


def regression_not_gated(row: MetricRow) -> bool:
    """True when the metric regressed but ``fail_on`` gated none of its regression failures."""
    reg = row.regression
    return (
        reg is not None and reg.regressed and row.threshold.regression_gated == 0
        and (row.threshold.regression_advisory > 0 or row.fail_on in ("threshold", "never"))
    )
