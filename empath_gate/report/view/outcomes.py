"""The tests behind a verdict, one entry per test, grouped by outcome (pure).

Reports list "Why tests failed (N)" with N the number of failed tests, and beside it the
errored tests, the incomplete tests, the waived tests and the tests whose failed conditions did not gate under
``fail_on``; each entry is one test (``<seed>-<persona>-<metric>``) with all of its
messages, so no two tests share a line and no count mixes tests with messages.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal

from empath_gate.report.view.format import reply_index, turns_text
from empath_gate.report.view.rows import metric_order
from empath_gate.results import Results

OutcomeGroup = Literal["failed", "error", "incomplete", "xfail", "advisory"]
OUTCOME_GROUPS: tuple[OutcomeGroup, ...] = ("failed", "error", "incomplete", "xfail", "advisory")
"""The groups in report order: failed, errored, incomplete (missing evidence), waived, not gated."""


@dataclass(frozen=True)
class CellOutcome:
    """One test (a conversation x metric cell) worth explaining: ``test_id`` is the pytest
    id ``<seed>-<persona>-<metric>``; ``messages``: the gate's reasons (for ``advisory``, the
    messages of the failed conditions that did not gate), then one per failed deterministic
    check that names its turns (:func:`check_failures`)."""

    test_id: str
    conversation_id: str
    metric_id: str
    group: OutcomeGroup
    messages: tuple[str, ...]


def check_failures(results: Results) -> dict[tuple[str, str], tuple[str, ...]]:
    """(conversation id, metric id) -> one line per failed deterministic check (first judging of
    each run) whose detail names turns, e.g. ``run 0: locale_resource_given failed its check at
    turn 4 (reply)``: the turns the check recorded (``CriterionVerdict.check_turns``)."""
    out: dict[tuple[str, str], list[str]] = {}
    for rec in results.records:
        for v in rec.verdicts:
            if v.rejudge != 0:
                continue
            for c in v.criteria:
                turns = tuple(reply_index(t) for t in c.check_turns) if c.check == "FAIL" else ()
                if turns:
                    out.setdefault((rec.conversation_id, v.metric_id), []).append(
                        f"run {rec.run}: {c.criterion_id} failed its check at {turns_text(turns)}"
                    )
    return {k: tuple(v) for k, v in out.items()}


def cell_outcomes(results: Results) -> Mapping[OutcomeGroup, tuple[CellOutcome, ...]]:
    """Every failed, errored, incomplete and waived test, and every other test with a failed
    condition that did not gate, by group (every key present), in metric order then plan order."""
    rank = {m: i for i, m in enumerate(metric_order(results))}
    decisions = sorted(
        enumerate(results.decisions), key=lambda p: (rank.get(p[1].metric_id, len(rank)), p[0])
    )
    out: dict[OutcomeGroup, list[CellOutcome]] = {g: [] for g in OUTCOME_GROUPS}
    checks = check_failures(results)
    for _, d in decisions:
        group: OutcomeGroup
        if d.status in ("failed", "error", "incomplete", "xfail"):
            group, messages = d.status, d.reasons
        elif d.advisories:
            not_gating = tuple(f.message for f in d.failures if f.kind not in d.failed_kinds)
            group, messages = "advisory", not_gating or d.advisories
        else:
            continue
        messages = (*messages, *checks.get((d.conversation_id, d.metric_id), ()))
        out[group].append(CellOutcome(d.test_id, d.conversation_id, d.metric_id, group, messages))
    return {g: tuple(v) for g, v in out.items()}
