"""The worst conversations: the cells worth reading first, and where to read them (pure)."""

from __future__ import annotations

from dataclasses import dataclass, field

from empath_gate.analysis.stats import CellStats
from empath_gate.gate.decide import CellDecision
from empath_gate.judging.verdict import CriterionVerdict, MetricVerdict
from empath_gate.report.view.format import reply_index
from empath_gate.report.view.rows import _STATUS_RANK
from empath_gate.results import Results, RunRecord


@dataclass(frozen=True)
class WorstEntry:
    """A conversation x metric worth reading, and where to read it. ``run``: the run picked
    (lowest score, else the judge failure); ``turns``: 0-based message indices the judge cited, else
    the replies of the turns its failed deterministic check recorded (``check_turns``)
    (shown to people as 1-based turns: :func:`~empath_gate.report.view.format.turn_label`);
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
            turns=tuple(dict.fromkeys(t for t, _ in quotes))
            or (tuple(reply_index(t) for t in crit.check_turns) if crit is not None else ()),
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
