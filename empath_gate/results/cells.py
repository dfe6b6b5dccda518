"""The cell statistics of a results document (pure): every (conversation, metric) its tests ask
for, over the runs each conversation ran."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from empath_gate.analysis.stats import CellStats
    from empath_gate.instrument.models import Thresholds
    from empath_gate.results.model import Results, RunRecord


def runs_started(records: Sequence[RunRecord], runs: int) -> dict[str, int]:
    """Conversation id -> the runs it was given, for each conversation with ``stopped`` records
    (sequential gating: its runs after the first ``runs - stopped`` were not started).
    Conversations without a stopped run have all ``runs`` and are not listed."""
    stopped: dict[str, int] = {}
    for r in records:
        if r.status == "stopped":
            stopped[r.conversation_id] = stopped.get(r.conversation_id, 0) + 1
    return {conv: max(0, runs - n) for conv, n in stopped.items()}


def results_cells(results: Results, thresholds: Thresholds) -> list[CellStats]:
    """Cell statistics of every (conversation, metric) the document's tests ask for, in test order.
    A transcript that is no evidence (stopped on an error or the budget, or its auditor degraded:
    :func:`empath_gate.gate.unknown.unusable_transcripts`) adds no verdict: its runs are
    ``missing``, noted with why. A run sequential gating did not start (status ``stopped``) is no
    run of its cells: such a conversation's cells have the runs it was given
    (:func:`runs_started`), never a missing one for a run not started."""
    from empath_gate.analysis.stats import compute_all_cell_stats, empty_cell
    from empath_gate.gate.unknown import unusable_transcripts

    conv_suite = {i.conversation_id: i.suite for i in results.items}
    conversations = {i.conversation_id: (i.seed_id, i.persona_id) for i in results.items}
    runs = results.metadata.runs
    started = runs_started(results.records, runs)
    errors = unusable_transcripts(results.records, results.metadata.max_auditor_fallback_share)
    groups: dict[tuple[str, int], list[Any]] = {}
    for r in results.records:
        suite = conv_suite.get(r.conversation_id)
        if suite is not None and r.transcript_id not in errors:
            groups.setdefault((suite, started.get(r.conversation_id, runs)), []).extend(r.verdicts)
    found: dict[tuple[str, str], CellStats] = {}
    for (suite, expected), verdicts in groups.items():
        for cell in compute_all_cell_stats(
            verdicts,
            conversations=conversations,
            thresholds=thresholds,
            suite_id=suite,
            expected_runs=expected,
            transcript_errors=errors,
        ):
            found[(cell.conversation_id, cell.metric_id)] = cell
    cells: list[CellStats] = []
    seen: set[tuple[str, str]] = set()
    for item in results.items:
        key = (item.conversation_id, item.metric_id)
        if key in seen or item.skip is not None:  # a skipped test has no evidence to count
            continue
        seen.add(key)
        got = found.get(key)
        if got is not None:
            cells.append(got)
            continue
        th = thresholds.resolve(item.metric_id, item.suite)
        cells.append(
            empty_cell(
                conversation_id=item.conversation_id,
                seed_id=item.seed_id,
                persona_id=item.persona_id,
                metric_id=item.metric_id,
                expected_runs=started.get(item.conversation_id, runs),
                min_mean=th.min_mean,
                critical=th.critical,
                transcript_errors=errors,
            )
        )
    return cells
