"""Test-retest statistics of one conversation x metric over its N runs, and per metric.

The unit here is a *cell*: one conversation (seed x persona) and one metric, judged on each of
the conversation's N runs. :func:`compute_cell_stats` turns the cell's verdicts into a
:class:`CellStats`; :func:`compute_all_cell_stats` does it for a whole plan (fast enough for
25k transcripts x 19 metrics: see ``bench/bench_gate.py``); :func:`aggregate_by_metric` sums
cells up per metric across conversations.

States are kept apart (DESIGN, "States that must never be confused"): only ``scored`` runs
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

import math
import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Literal

import numpy as np
import numpy.typing as npt

from empath_gate.analysis.base import AnalysisModel, paused_gc
from empath_gate.instrument.models import ResolvedThresholds, Thresholds
from empath_gate.judging.verdict import MetricVerdict

RunStatus = Literal["scored", "na", "criteria_only", "judge_failure", "missing"]
"""A run's state for one metric: the four verdict states, plus ``missing`` when the plan asked
for the run but no verdict exists (the transcript failed, was stopped by the budget, or was
never judged)."""

_TRANSCRIPT_ID = re.compile(r"^(?P<conversation>.+)-r(?P<run>\d+)$")


def parse_transcript_id(transcript_id: str) -> tuple[str, int]:
    """Split ``<conversation_id>-r<run>`` (the Transcript id convention) into
    ``(conversation_id, run)``; raises ValueError for any other shape."""
    m = _TRANSCRIPT_ID.match(transcript_id)
    if m is None:
        raise ValueError(f"transcript id {transcript_id!r} is not '<conversation_id>-r<run>'")
    return m.group("conversation"), int(m.group("run"))


class RunEntry(AnalysisModel):
    """One run of a cell (a view built on demand by :attr:`CellStats.runs`). ``run`` is the
    0-based run index; ``score`` is set only when ``status == "scored"`` (1-10, after the cap
    rule). ``critical_fail``: a critical criterion's effective state was FAIL.
    ``failure_reason``: the JudgeFailure reason; ``transcript_error``: why the transcript
    itself stopped (status ``error``/``budget``), ``None`` when it completed."""

    run: int
    status: RunStatus
    score: int | None = None
    critical_fail: bool = False
    failure_reason: str | None = None
    transcript_error: str | None = None


class CellStats(AnalysisModel):
    """Statistics of one conversation x metric over its runs.

    Per run, as parallel tuples in run order (:attr:`runs` joins them into :class:`RunEntry`
    views): ``run_ids`` (0-based run indices: every planned or observed run), ``statuses``,
    ``run_scores`` (the score or ``None``). Sparse per-run notes: ``failure_reasons``
    (``(run, JudgeFailure reason)``), ``transcript_errors`` (``(run, why the transcript
    stopped)``), ``critical_fail_runs`` (runs with a critical-criterion FAIL, any status),
    ``critical_judge_failures`` (runs whose verdict is a JudgeFailure on a ``critical`` metric
    or carrying a critical FAIL).

    Summary: ``scores`` (the judged scores in run order, 1-10); ``mean``, ``median``, ``min``,
    ``max``, ``range`` (max - min) over them, ``None`` when nothing was judged; ``sd``: sample
    SD (ddof = 1), ``None`` with fewer than 2 scores. Counts: ``n_runs``, ``n_judged``
    (scored), ``n_failures`` (judge_failure), ``n_na``, ``n_criteria_only``, ``n_missing``;
    ``n_pass``: judged runs with score >= ``min_mean``. ``flip_rate`` =
    ``min(n_pass, n_judged - n_pass) / n_judged`` (module docstring), 0-0.5, ``None`` when
    nothing was judged. ``min_mean`` and ``critical``: what the cell was computed with.
    """

    conversation_id: str
    seed_id: str
    persona_id: str
    metric_id: str
    critical: bool = False
    min_mean: float
    run_ids: tuple[int, ...]
    statuses: tuple[RunStatus, ...]
    run_scores: tuple[int | None, ...]
    failure_reasons: tuple[tuple[int, str], ...] = ()
    transcript_errors: tuple[tuple[int, str], ...] = ()
    critical_fail_runs: tuple[int, ...] = ()
    critical_judge_failures: tuple[int, ...] = ()
    scores: tuple[int, ...]
    mean: float | None
    median: float | None
    min: int | None
    max: int | None
    range: int | None
    sd: float | None
    n_runs: int
    n_judged: int
    n_failures: int
    n_na: int
    n_criteria_only: int
    n_missing: int
    n_pass: int
    flip_rate: float | None

    @property
    def runs(self) -> tuple[RunEntry, ...]:
        """Every run as a :class:`RunEntry`, in run order."""
        reasons = dict(self.failure_reasons)
        errors = dict(self.transcript_errors)
        crit = set(self.critical_fail_runs)
        return tuple(
            RunEntry(run=r, status=st, score=sc, critical_fail=r in crit,
                     failure_reason=reasons.get(r), transcript_error=errors.get(r))
            for r, st, sc in zip(self.run_ids, self.statuses, self.run_scores, strict=True)
        )


def _build_cell(
    by_run: Mapping[int, MetricVerdict],
    *,
    conversation_id: str,
    seed_id: str,
    persona_id: str,
    metric_id: str,
    min_mean: float,
    critical: bool,
    expected_runs: int | None,
    transcript_errors: Mapping[str, str] | None,
) -> CellStats:
    """One pass over the runs; the model is built with ``trusted`` because every value is
    computed here from already validated verdicts (speed: see ``bench/bench_gate.py``)."""
    if expected_runs is not None and (
        len(by_run) != expected_runs or any(r >= expected_runs for r in by_run)
    ):
        run_ids = tuple(sorted(set(by_run).union(range(expected_runs))))
    else:
        run_ids = tuple(sorted(by_run))
    statuses: list[RunStatus] = []
    run_scores: list[int | None] = []
    scores: list[int] = []
    reasons: list[tuple[int, str]] = []
    errors: list[tuple[int, str]] = []
    crit_fail: list[int] = []
    crit_jf: list[int] = []
    n_na = n_co = n_jf = n_missing = 0
    for r in run_ids:
        if transcript_errors:
            err = transcript_errors.get(f"{conversation_id}-r{r}")
            if err:
                errors.append((r, err))
        v = by_run.get(r)
        if v is None:
            statuses.append("missing")
            run_scores.append(None)
            n_missing += 1
            continue
        st = v.status
        statuses.append(st)
        sc = v.score
        run_scores.append(sc)
        if sc is not None:
            scores.append(sc)
        elif st == "na":
            n_na += 1
        elif st == "criteria_only":
            n_co += 1
        elif st == "judge_failure":
            n_jf += 1
            if v.failure is not None:
                reasons.append((r, v.failure.reason))
        cf = any(c.critical and c.state == "FAIL" for c in v.criteria) if v.criteria else False
        if cf:
            crit_fail.append(r)
        if st == "judge_failure" and (critical or cf):
            crit_jf.append(r)
    n = len(scores)
    mean = median = sd = flip = None
    lo = hi = rng = None
    n_pass = 0
    if n:
        srt = sorted(scores)
        mean = sum(srt) / n
        mid = n // 2
        median = float(srt[mid]) if n % 2 else (srt[mid - 1] + srt[mid]) / 2.0
        lo, hi = srt[0], srt[-1]
        rng = hi - lo
        sd = _sample_sd(srt)
        for x in srt:
            if x >= min_mean:
                n_pass += 1
        flip = min(n_pass, n - n_pass) / n
    return CellStats.trusted(
        conversation_id=conversation_id,
        seed_id=seed_id,
        persona_id=persona_id,
        metric_id=metric_id,
        critical=critical,
        min_mean=float(min_mean),
        run_ids=run_ids,
        statuses=tuple(statuses),
        run_scores=tuple(run_scores),
        failure_reasons=tuple(reasons),
        transcript_errors=tuple(errors),
        critical_fail_runs=tuple(crit_fail),
        critical_judge_failures=tuple(crit_jf),
        scores=tuple(scores),
        mean=mean,
        median=median,
        min=lo,
        max=hi,
        range=rng,
        sd=sd,
        n_runs=len(run_ids),
        n_judged=n,
        n_failures=n_jf,
        n_na=n_na,
        n_criteria_only=n_co,
        n_missing=n_missing,
        n_pass=n_pass,
        flip_rate=flip,
    )


def compute_cell_stats(
    verdicts: Iterable[MetricVerdict],
    *,
    min_mean: float,
    seed_id: str,
    persona_id: str,
    critical: bool = False,
    expected_runs: int | None = None,
    transcript_errors: Mapping[str, str] | None = None,
) -> CellStats:
    """Statistics of one conversation x metric.

    ``verdicts``: the cell's verdicts, one per run, in any order; the run index comes from the
    transcript id (``<conversation_id>-r<run>``). Re-judgings (``rejudge > 0``) are ignored.
    ``min_mean``: the pass mark used for the flip rate (1-10). ``critical``: the metric is
    critical (its JudgeFailures are listed in ``critical_judge_failures``).
    ``expected_runs``: the plan's run count N; runs ``0..N-1`` without a verdict become
    ``missing``. ``transcript_errors``: transcript id -> why it stopped (status
    ``error``/``budget``), noted on the matching run.

    Raises ValueError when there is no verdict, when verdicts mix conversations or metrics,
    or when a run has two first judgings. A cell with no verdict at all: :func:`empty_cell`.
    """
    by_run: dict[int, MetricVerdict] = {}
    conversation_id: str | None = None
    metric_id: str | None = None
    for v in verdicts:
        if v.rejudge:
            continue
        conv, run = parse_transcript_id(v.transcript_id)
        if conversation_id is None:
            conversation_id, metric_id = conv, v.metric_id
        elif conv != conversation_id or v.metric_id != metric_id:
            raise ValueError(
                f"verdicts of one cell must share conversation and metric: got {conv}/{v.metric_id} "
                f"beside {conversation_id}/{metric_id}"
            )
        if run in by_run:
            raise ValueError(f"{v.transcript_id} / {v.metric_id}: run {run} judged twice")
        by_run[run] = v
    if conversation_id is None or metric_id is None:
        raise ValueError("a cell needs at least one first judging (rejudge 0); use empty_cell() for none")
    return _build_cell(
        by_run, conversation_id=conversation_id, seed_id=seed_id, persona_id=persona_id,
        metric_id=metric_id, min_mean=min_mean, critical=critical, expected_runs=expected_runs,
        transcript_errors=transcript_errors,
    )


def empty_cell(
    *,
    conversation_id: str,
    seed_id: str,
    persona_id: str,
    metric_id: str,
    expected_runs: int,
    min_mean: float,
    critical: bool = False,
    transcript_errors: Mapping[str, str] | None = None,
) -> CellStats:
    """A cell the plan asked for but for which no verdict exists: every run ``missing``."""
    return _build_cell(
        {}, conversation_id=conversation_id, seed_id=seed_id, persona_id=persona_id,
        metric_id=metric_id, min_mean=min_mean, critical=critical, expected_runs=expected_runs,
        transcript_errors=transcript_errors,
    )


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


class MetricStats(AnalysisModel):
    """One metric summed up across conversations.

    ``mean``: mean of the conversation means (each conversation weighs the same; ``None`` when
    no conversation was judged); ``sd_between``: sample SD of the conversation means;
    ``within_sd``: pooled within-conversation SD, the square root of the mean of the cells'
    sample variances over cells with >= 2 judged runs; ``mean_flip_rate``: mean of the cells'
    flip rates; ``flipping_conversations``: cells whose flip rate is > 0. Run counts add up
    over cells; ``judge_failure_rate`` = ``n_failures / (n_runs - n_missing)`` (``None`` when no
    run has a verdict).
    """

    metric_id: str
    n_conversations: int
    n_judged_conversations: int
    mean: float | None
    sd_between: float | None
    within_sd: float | None
    mean_flip_rate: float | None
    flipping_conversations: int
    n_runs: int
    n_judged: int
    n_failures: int
    n_na: int
    n_criteria_only: int
    n_missing: int
    judge_failure_rate: float | None


def _sample_sd(values: Sequence[float]) -> float | None:
    n = len(values)
    if n < 2:
        return None
    m = sum(values) / n
    return math.sqrt(sum((x - m) ** 2 for x in values) / (n - 1))


def aggregate_metric(metric_id: str, cells: Sequence[CellStats]) -> MetricStats:
    """Sum up the cells of one metric (cells of other metrics raise ValueError)."""
    for c in cells:
        if c.metric_id != metric_id:
            raise ValueError(f"cell of {c.metric_id!r} given to the summary of {metric_id!r}")
    means = [c.mean for c in cells if c.mean is not None]
    variances = [c.sd * c.sd for c in cells if c.sd is not None]
    flips = [c.flip_rate for c in cells if c.flip_rate is not None]
    n_runs = sum(c.n_runs for c in cells)
    n_missing = sum(c.n_missing for c in cells)
    n_failures = sum(c.n_failures for c in cells)
    attempted = n_runs - n_missing
    return MetricStats(
        metric_id=metric_id,
        n_conversations=len(cells),
        n_judged_conversations=len(means),
        mean=sum(means) / len(means) if means else None,
        sd_between=_sample_sd(means),
        within_sd=math.sqrt(sum(variances) / len(variances)) if variances else None,
        mean_flip_rate=sum(flips) / len(flips) if flips else None,
        flipping_conversations=sum(1 for f in flips if f > 0),
        n_runs=n_runs,
        n_judged=sum(c.n_judged for c in cells),
        n_failures=n_failures,
        n_na=sum(c.n_na for c in cells),
        n_criteria_only=sum(c.n_criteria_only for c in cells),
        n_missing=n_missing,
        judge_failure_rate=n_failures / attempted if attempted else None,
    )


def aggregate_by_metric(cells: Sequence[CellStats]) -> tuple[MetricStats, ...]:
    """Per-metric summaries, in the order each metric first appears in ``cells``."""
    grouped: dict[str, list[CellStats]] = {}
    for c in cells:
        grouped.setdefault(c.metric_id, []).append(c)
    return tuple(aggregate_metric(m, cs) for m, cs in grouped.items())
