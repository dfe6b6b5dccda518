"""Computing one cell's statistics from its verdicts (the reference path; rules in
:mod:`empath_gate.analysis.stats`)."""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from empath_gate.analysis.stats.cells import CellStats, RunStatus, parse_transcript_id
from empath_gate.judging.verdict import MetricVerdict


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
    """One pass over the runs (:func:`_tally_runs`), then the summary of the judged scores
    (:func:`_score_summary`); the model is built with ``trusted`` because every value is
    computed here from already validated verdicts (speed: see ``bench/bench_gate.py``)."""
    if expected_runs is not None and (
        len(by_run) != expected_runs or any(r >= expected_runs for r in by_run)
    ):
        run_ids = tuple(sorted(set(by_run).union(range(expected_runs))))
    else:
        run_ids = tuple(sorted(by_run))
    runs = _tally_runs(by_run, run_ids, conversation_id, critical, transcript_errors)
    values: dict[str, Any] = {
        "conversation_id": conversation_id,
        "seed_id": seed_id,
        "persona_id": persona_id,
        "metric_id": metric_id,
        "critical": critical,
        "min_mean": float(min_mean),
        "run_ids": run_ids,
        **runs,
        **_score_summary(runs["scores"], min_mean),
    }
    return CellStats.trusted(**{name: values[name] for name in _CELL_FIELDS})


_CELL_FIELDS: tuple[str, ...] = tuple(CellStats.model_fields)
""":class:`CellStats` field names in declaration order (``trusted`` keeps the given order,
which is the order of the serialized fields)."""


def _tally_runs(
    by_run: Mapping[int, MetricVerdict],
    run_ids: tuple[int, ...],
    conversation_id: str,
    critical: bool,
    transcript_errors: Mapping[str, str] | None,
) -> dict[str, Any]:
    """The per-run fields of a :class:`CellStats` (``statuses`` ... ``scores``, in field
    order) and its run counts (``n_runs``, ``n_failures``, ``n_na``, ``n_criteria_only``,
    ``n_missing``), from one pass over ``run_ids``."""
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
    return {
        "statuses": tuple(statuses),
        "run_scores": tuple(run_scores),
        "failure_reasons": tuple(reasons),
        "transcript_errors": tuple(errors),
        "critical_fail_runs": tuple(crit_fail),
        "critical_judge_failures": tuple(crit_jf),
        "scores": tuple(scores),
        "n_runs": len(run_ids),
        "n_failures": n_jf,
        "n_na": n_na,
        "n_criteria_only": n_co,
        "n_missing": n_missing,
    }


def _score_summary(scores: Sequence[int], min_mean: float) -> dict[str, Any]:
    """``mean``, ``median``, ``min``, ``max``, ``range``, ``sd``, ``n_judged``, ``n_pass`` and
    ``flip_rate`` of a cell's judged scores (``None`` figures when nothing was judged; ``sd``
    needs two scores)."""
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
    return {
        "mean": mean,
        "median": median,
        "min": lo,
        "max": hi,
        "range": rng,
        "sd": sd,
        "n_judged": n,
        "n_pass": n_pass,
        "flip_rate": flip,
    }


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


def _sample_sd(values: Sequence[float]) -> float | None:
    n = len(values)
    if n < 2:
        return None
    m = sum(values) / n
    return math.sqrt(sum((x - m) ** 2 for x in values) / (n - 1))
