"""Cell statistics of a whole plan at once: the numeric fast path (numpy, column-wise), giving
the same cells as :func:`~empath_gate.analysis.stats.build.compute_cell_stats`."""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from empath_gate.analysis.base import paused_gc
from empath_gate.analysis.stats.build import _build_cell
from empath_gate.analysis.stats.cells import CellStats, parse_transcript_id
from empath_gate.instrument.models import ResolvedThresholds, Thresholds
from empath_gate.judging.verdict import MetricVerdict


def compute_all_cell_stats(
    verdicts: Iterable[MetricVerdict],
    *,
    conversations: Mapping[str, tuple[str, str]],
    thresholds: Thresholds,
    suite_id: str | None = None,
    expected_runs: int | None = None,
    transcript_errors: Mapping[str, str] | None = None,
) -> tuple[CellStats, ...]:
    """Cell statistics of a whole plan; the same result as :func:`compute_cell_stats` per cell.

    ``conversations`` maps every conversation id to ``(seed_id, persona_id)``; thresholds are
    resolved per metric for ``suite_id`` (``min_mean`` and ``critical``). ``expected_runs``
    and ``transcript_errors`` as in :func:`compute_cell_stats` (a cell the plan asked for
    without any verdict is not known here: make it with :func:`empty_cell`). Cells come out in
    the order their first verdict appears in ``verdicts`` (deterministic for a file-ordered
    input). Re-judgings are ignored. Raises ValueError for a transcript id of another shape, a
    conversation missing from ``conversations``, or a run judged twice for one metric.

    The summary figures are computed column-wise with numpy over all verdicts at once (25k
    transcripts x 19 metrics: ``bench/bench_gate.py``); cells with missing runs or stopped
    transcripts take the per-cell path.
    """
    with paused_gc():
        return _compute_all(verdicts, conversations, thresholds, suite_id, expected_runs, transcript_errors)


_STATUS_CODE: dict[str, int] = {"scored": 0, "na": 1, "criteria_only": 2, "judge_failure": 3}

IntArray = npt.NDArray[np.int64]
FloatArray = npt.NDArray[np.float64]


@dataclass(frozen=True, slots=True)
class _Rows:
    """First judgings as parallel columns in input order: ``keys[cell]`` is the cell's
    ``(conversation_id, metric_id)``; ``crit_pos``/``jf_pos`` are row positions with a
    critical-criterion FAIL / a JudgeFailure."""

    keys: list[tuple[str, str]]
    cell: Sequence[int]
    run: Sequence[int]
    status: Sequence[str]
    score: Sequence[int | None]
    refs: Sequence[MetricVerdict]
    crit_pos: list[int]
    jf_pos: list[int]


@dataclass(frozen=True, slots=True)
class _Figures:
    """Column-wise figures per cell (index = cell), and the row ``order`` (by cell, then run)
    with the sorted ``cells``/``runs``; ``starts``/``counts`` delimit each cell's rows in it."""

    order: npt.NDArray[np.intp]
    cells: npt.NDArray[np.intp]
    runs: IntArray
    counts: IntArray
    starts: IntArray
    n_judged: IntArray
    n_na: IntArray
    n_co: IntArray
    n_jf: IntArray
    n_pass: IntArray
    mean: FloatArray
    var: FloatArray
    flip: FloatArray
    lows: FloatArray
    highs: FloatArray
    median: FloatArray


def _compute_all(
    verdicts: Iterable[MetricVerdict],
    conversations: Mapping[str, tuple[str, str]],
    thresholds: Thresholds,
    suite_id: str | None,
    expected_runs: int | None,
    transcript_errors: Mapping[str, str] | None,
) -> tuple[CellStats, ...]:
    """The fast path in stages: collect the rows, check them, compute the figures column-wise,
    then build each cell (cells that need the per-cell path go through ``_build_cell``)."""
    rows = _collect(verdicts)
    if rows is None:
        return ()
    for conv, _ in rows.keys:
        if conv not in conversations:
            raise ValueError(f"conversation {conv!r} is not in the plan's conversations")
    resolved: dict[str, ResolvedThresholds] = {}
    for _, metric in rows.keys:
        if metric not in resolved:
            resolved[metric] = thresholds.resolve(metric, suite_id)
    min_mean = np.array([resolved[m].min_mean for _, m in rows.keys], dtype=np.float64)
    critical = [resolved[m].critical for _, m in rows.keys]
    fig = _figures(rows, min_mean)
    slow = _slow_cells(rows, fig, expected_runs, transcript_errors)
    return _assemble(rows, fig, min_mean.tolist(), critical, slow, conversations, expected_runs,
                     transcript_errors)


def _collect(verdicts: Iterable[MetricVerdict]) -> _Rows | None:
    """One pass over the verdicts (re-judgings skipped); ``None`` when there is none."""
    cell_of: dict[tuple[str, str], int] = {}
    keys: list[tuple[str, str]] = []
    parsed: dict[str, tuple[str, int]] = {}
    rows: list[tuple[int, int, str, int | None, MetricVerdict]] = []
    crit_pos: list[int] = []
    jf_pos: list[int] = []
    append = rows.append
    for v in verdicts:
        if v.rejudge:
            continue
        tid = v.transcript_id
        key = parsed.get(tid)
        if key is None:
            key = parsed[tid] = parse_transcript_id(tid)
        g = (key[0], v.metric_id)
        ci = cell_of.get(g)
        if ci is None:
            ci = cell_of[g] = len(keys)
            keys.append(g)
        criteria = v.criteria
        if criteria:
            for c in criteria:
                if c.critical and c.state == "FAIL":
                    crit_pos.append(len(rows))
                    break
        if v.failure is not None:
            jf_pos.append(len(rows))
        append((ci, key[1], v.status, v.score, v))
    if not keys:
        return None
    cell_t, run_t, status_t, score_t, refs = zip(*rows, strict=True)
    return _Rows(keys, cell_t, run_t, status_t, score_t, refs, crit_pos, jf_pos)


def _figures(rows: _Rows, min_mean: FloatArray) -> _Figures:
    """Counts, mean, variance, pass count, flip rate, min, max and median of every cell at
    once; raises ValueError when a run of a cell is judged twice."""
    n_cells = len(rows.keys)
    cell = np.asarray(rows.cell, dtype=np.intp)
    run = np.asarray(rows.run, dtype=np.int64)
    order = np.lexsort((run, cell))
    cs, rs = cell[order], run[order]
    dup = np.flatnonzero((cs[1:] == cs[:-1]) & (rs[1:] == rs[:-1]))
    if dup.size:
        p = int(order[dup[0] + 1])
        conv, metric = rows.keys[rows.cell[p]]
        raise ValueError(f"{conv}-r{rows.run[p]} / {metric}: run {rows.run[p]} judged twice")
    status = rows.status
    code = np.fromiter((_STATUS_CODE[st] for st in status), dtype=np.int8, count=len(status))[order]
    raw = np.fromiter((0 if x is None else x for x in rows.score), dtype=np.float64, count=len(status))[order]
    scored = code == 0
    counts = np.bincount(cs, minlength=n_cells)
    starts = np.concatenate(([0], np.cumsum(counts)[:-1]))

    def tally(mask: npt.NDArray[np.bool_]) -> IntArray:
        return np.bincount(cs, weights=mask, minlength=n_cells).astype(np.int64)

    n_judged = tally(scored)
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = np.bincount(cs, weights=np.where(scored, raw, 0.0), minlength=n_cells) / n_judged
        dev = np.where(scored, raw - mean[cs], 0.0)
        var = np.bincount(cs, weights=dev * dev, minlength=n_cells) / (n_judged - 1)
        n_pass = tally(scored & (raw >= min_mean[cs]))
        flip = np.minimum(n_pass, n_judged - n_pass) / n_judged
    high = np.where(scored, raw, np.inf)
    ranked = high[np.lexsort((high, cs))]
    has = n_judged > 0
    mid_lo = np.where(has, starts + (n_judged - 1) // 2, 0)
    mid_hi = np.where(has, starts + n_judged // 2, 0)
    return _Figures(
        order=order, cells=cs, runs=rs, counts=counts, starts=starts,
        n_judged=n_judged, n_na=tally(code == 1), n_co=tally(code == 2), n_jf=tally(code == 3),
        n_pass=n_pass, mean=mean, var=var, flip=flip,
        lows=np.minimum.reduceat(high, starts),
        highs=np.maximum.reduceat(np.where(scored, raw, -np.inf), starts),
        median=(ranked[mid_lo] + ranked[mid_hi]) / 2.0,
    )


def _slow_cells(
    rows: _Rows, fig: _Figures, expected_runs: int | None, transcript_errors: Mapping[str, str] | None
) -> set[int]:
    """Cells that take the per-cell path: runs missing or beyond the plan, or a transcript
    that stopped."""
    slow: set[int] = set()
    if expected_runs is not None:
        last = np.maximum.reduceat(fig.runs, fig.starts)
        slow.update(np.flatnonzero((fig.counts != expected_runs) | (last >= expected_runs)).tolist())
    if transcript_errors:
        stopped = {parse_transcript_id(t)[0] for t, why in transcript_errors.items() if why}
        slow.update(i for i, (conv, _) in enumerate(rows.keys) if conv in stopped)
    return slow


def _notes(
    rows: _Rows, critical: Sequence[bool]
) -> tuple[dict[int, list[int]], dict[int, list[tuple[int, str]]], dict[int, list[int]]]:
    """Sparse per-run notes by cell: critical-criterion FAIL runs, JudgeFailure reasons, and
    JudgeFailures on a critical metric or with a critical FAIL."""
    cell_l, run_l = rows.cell, rows.run
    cell_crit: dict[int, list[int]] = {}
    for p in rows.crit_pos:
        cell_crit.setdefault(cell_l[p], []).append(run_l[p])
    cell_jf: dict[int, list[tuple[int, str]]] = {}
    cell_crit_jf: dict[int, list[int]] = {}
    for p in rows.jf_pos:
        ci, r, failure = cell_l[p], run_l[p], rows.refs[p].failure
        if failure is not None:
            cell_jf.setdefault(ci, []).append((r, failure.reason))
        if critical[ci] or r in cell_crit.get(ci, ()):
            cell_crit_jf.setdefault(ci, []).append(r)
    return cell_crit, cell_jf, cell_crit_jf


def _assemble(
    rows: _Rows,
    fig: _Figures,
    mm_l: Sequence[float],
    critical: Sequence[bool],
    slow: set[int],
    conversations: Mapping[str, tuple[str, str]],
    expected_runs: int | None,
    transcript_errors: Mapping[str, str] | None,
) -> tuple[CellStats, ...]:
    """One :class:`CellStats` per cell, in first-seen order, from plain Python lists."""
    cell_crit, cell_jf, cell_crit_jf = _notes(rows, critical)
    order_l = fig.order.tolist()
    runs_sorted = fig.runs.tolist()
    status_sorted = [rows.status[i] for i in order_l]
    score_sorted = [rows.score[i] for i in order_l]
    counts_l, starts_l = fig.counts.tolist(), fig.starts.tolist()
    nj_l, na_l, co_l, jf_l, pass_l = (a.tolist() for a in (fig.n_judged, fig.n_na, fig.n_co, fig.n_jf,
                                                             fig.n_pass))
    mean_l, var_l, flip_l, med_l = fig.mean.tolist(), fig.var.tolist(), fig.flip.tolist(), fig.median.tolist()
    low_l, high_l = fig.lows.tolist(), fig.highs.tolist()
    out: list[CellStats] = []
    trusted = CellStats.trusted
    for i, (conv, metric) in enumerate(rows.keys):
        seed_id, persona_id = conversations[conv]
        s0, n_runs = starts_l[i], counts_l[i]
        s1 = s0 + n_runs
        if i in slow:
            by_run = {runs_sorted[p]: rows.refs[order_l[p]] for p in range(s0, s1)}
            out.append(_build_cell(
                by_run, conversation_id=conv, seed_id=seed_id, persona_id=persona_id, metric_id=metric,
                min_mean=mm_l[i], critical=critical[i], expected_runs=expected_runs,
                transcript_errors=transcript_errors,
            ))
            continue
        nj = nj_l[i]
        run_scores = tuple(score_sorted[s0:s1])
        lo = int(low_l[i]) if nj else None
        hi = int(high_l[i]) if nj else None
        out.append(trusted(
            conversation_id=conv,
            seed_id=seed_id,
            persona_id=persona_id,
            metric_id=metric,
            critical=critical[i],
            min_mean=mm_l[i],
            run_ids=tuple(runs_sorted[s0:s1]),
            statuses=tuple(status_sorted[s0:s1]),
            run_scores=run_scores,
            failure_reasons=tuple(cell_jf.get(i, ())),
            transcript_errors=(),
            critical_fail_runs=tuple(cell_crit.get(i, ())),
            critical_judge_failures=tuple(cell_crit_jf.get(i, ())),
            scores=run_scores if nj == n_runs else tuple(x for x in run_scores if x is not None),
            mean=mean_l[i] if nj else None,
            median=med_l[i] if nj else None,
            min=lo,
            max=hi,
            range=hi - lo if hi is not None and lo is not None else None,
            sd=math.sqrt(var_l[i]) if nj > 1 else None,
            n_runs=n_runs,
            n_judged=nj,
            n_failures=jf_l[i],
            n_na=na_l[i],
            n_criteria_only=co_l[i],
            n_missing=0,
            n_pass=pass_l[i],
            flip_rate=flip_l[i] if nj else None,
        ))
    return tuple(out)
