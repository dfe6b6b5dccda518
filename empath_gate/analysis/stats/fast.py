"""Cell statistics of a whole plan at once: the numeric fast path (numpy, column-wise), giving
the same cells as :func:`~empath_gate.analysis.stats.build.compute_cell_stats`."""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence

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


def _compute_all(
    verdicts: Iterable[MetricVerdict],
    conversations: Mapping[str, tuple[str, str]],
    thresholds: Thresholds,
    suite_id: str | None,
    expected_runs: int | None,
    transcript_errors: Mapping[str, str] | None,
) -> tuple[CellStats, ...]:
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
    n_cells = len(keys)
    if not n_cells:
        return ()
    cell_t, run_t, status_l, score_l, refs = zip(*rows, strict=True)
    cell_l: Sequence[int] = cell_t
    run_l: Sequence[int] = run_t
    for conv, _ in keys:
        if conv not in conversations:
            raise ValueError(f"conversation {conv!r} is not in the plan's conversations")
    resolved: dict[str, ResolvedThresholds] = {}
    for _, metric in keys:
        if metric not in resolved:
            resolved[metric] = thresholds.resolve(metric, suite_id)

    cell = np.asarray(cell_l, dtype=np.intp)
    run = np.asarray(run_l, dtype=np.int64)
    order = np.lexsort((run, cell))
    cs, rs = cell[order], run[order]
    dup = np.flatnonzero((cs[1:] == cs[:-1]) & (rs[1:] == rs[:-1]))
    if dup.size:
        p = int(order[dup[0] + 1])
        conv, metric = keys[cell_l[p]]
        raise ValueError(f"{conv}-r{run_l[p]} / {metric}: run {run_l[p]} judged twice")
    code = np.fromiter((_STATUS_CODE[st] for st in status_l), dtype=np.int8, count=len(status_l))[order]
    raw = np.fromiter((0 if x is None else x for x in score_l), dtype=np.float64, count=len(score_l))[order]
    scored = code == 0
    counts = np.bincount(cs, minlength=n_cells)
    starts = np.concatenate(([0], np.cumsum(counts)[:-1]))

    def tally(mask: npt.NDArray[np.bool_]) -> npt.NDArray[np.int64]:
        return np.bincount(cs, weights=mask, minlength=n_cells).astype(np.int64)

    n_judged = tally(scored)
    n_na, n_co, n_jf = tally(code == 1), tally(code == 2), tally(code == 3)
    min_mean = np.array([resolved[m].min_mean for _, m in keys], dtype=np.float64)
    critical = [resolved[m].critical for _, m in keys]
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = np.bincount(cs, weights=np.where(scored, raw, 0.0), minlength=n_cells) / n_judged
        dev = np.where(scored, raw - mean[cs], 0.0)
        var = np.bincount(cs, weights=dev * dev, minlength=n_cells) / (n_judged - 1)
        n_pass = tally(scored & (raw >= min_mean[cs]))
        flip = np.minimum(n_pass, n_judged - n_pass) / n_judged
    high = np.where(scored, raw, np.inf)
    lows = np.minimum.reduceat(high, starts)
    highs = np.maximum.reduceat(np.where(scored, raw, -np.inf), starts)
    ranked = high[np.lexsort((high, cs))]
    has = n_judged > 0
    mid_lo = np.where(has, starts + (n_judged - 1) // 2, 0)
    mid_hi = np.where(has, starts + n_judged // 2, 0)
    median = (ranked[mid_lo] + ranked[mid_hi]) / 2.0

    # sparse per-run notes
    cell_crit: dict[int, list[int]] = {}
    for p in crit_pos:
        cell_crit.setdefault(cell_l[p], []).append(run_l[p])
    cell_jf: dict[int, list[tuple[int, str]]] = {}
    cell_crit_jf: dict[int, list[int]] = {}
    for p in jf_pos:
        ci, r, failure = cell_l[p], run_l[p], refs[p].failure
        if failure is not None:
            cell_jf.setdefault(ci, []).append((r, failure.reason))
        if critical[ci] or r in cell_crit.get(ci, ()):
            cell_crit_jf.setdefault(ci, []).append(r)
    slow: set[int] = set()
    if expected_runs is not None:
        last = np.maximum.reduceat(rs, starts)
        slow.update(np.flatnonzero((counts != expected_runs) | (last >= expected_runs)).tolist())
    if transcript_errors:
        stopped = {parse_transcript_id(t)[0] for t, why in transcript_errors.items() if why}
        slow.update(i for i, (conv, _) in enumerate(keys) if conv in stopped)

    order_l = order.tolist()
    runs_sorted = rs.tolist()
    status_sorted = [status_l[i] for i in order_l]
    score_sorted = [score_l[i] for i in order_l]
    counts_l, starts_l = counts.tolist(), starts.tolist()
    nj_l, na_l, co_l, jf_l, pass_l = (a.tolist() for a in (n_judged, n_na, n_co, n_jf, n_pass))
    mean_l, var_l, flip_l, med_l = mean.tolist(), var.tolist(), flip.tolist(), median.tolist()
    low_l, high_l, mm_l = lows.tolist(), highs.tolist(), min_mean.tolist()
    out: list[CellStats] = []
    trusted = CellStats.trusted
    for i, (conv, metric) in enumerate(keys):
        seed_id, persona_id = conversations[conv]
        s0, n_runs = starts_l[i], counts_l[i]
        s1 = s0 + n_runs
        if i in slow:
            by_run = {runs_sorted[p]: refs[order_l[p]] for p in range(s0, s1)}
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
