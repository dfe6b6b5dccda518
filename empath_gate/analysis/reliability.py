"""Test-retest reliability per target model and metric, and the split of run-to-run variance.

Input: :class:`RunScores`, one per target x conversation x run x metric, holding the scores
of every judging of that run's transcript (re-judgings included) and the transcript's content
hash. Per target and metric, :func:`reliability` reports, in the order the issue asks:

1. ``within_sd``: the pooled within-conversation SD across runs, ``sqrt(mean_i s_i^2)`` over
   conversations with >= 2 judged runs (sample variances, ddof = 1), on each run's first
   judging. It stays meaningful near the ceiling, where the ICC collapses.
2. ``icc_1_1``: ICC(1,1), one-way random effects, single rater (Shrout & Fleiss 1979, Psychol
   Bull 86:420-428): ``(MSB - MSW) / (MSB + (n0 - 1) MSW)`` with conversations as targets and
   runs as raters; ``n0 = (N - sum n_i^2 / N) / (a - 1)`` for unequal run counts (Donner 1986,
   Int Stat Rev 54:67-82; equal to k when balanced). ``None`` with fewer than 2
   conversations, no replication, or no variance at all (every score equal).
3. ``flip_rate``: the mean over conversations of the share of judged runs on the minority side
   of ``min_mean`` (as in :mod:`empath_gate.analysis.stats`).
4. ``transcripts_differed``: the share of conversations (with >= 2 hashed runs) whose runs
   produced more than one distinct transcript.
5. Variance split, from transcripts judged K >= 2 times:
   ``judge_variance`` (sigma^2_judge) = the pooled within-transcript variance of the K
   judgings; ``run_mean_variance`` = the pooled within-conversation variance of the run means
   (each run's mean over its judgings), which estimates sigma^2_gen + sigma^2_judge / K;
   ``generation_variance`` = ``run_mean_variance - mean(sigma^2_judge / K_t)`` (with unequal K
   the mean of ``sigma^2_judge / K_t`` over the transcripts), floored at 0 with
   ``generation_floored`` True when the raw difference was negative (sampling noise: the
   judge's noise then explains all the run-to-run spread seen).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from empath_gate.analysis.base import AnalysisModel
from empath_gate.analysis.stats import parse_transcript_id
from empath_gate.judging.verdict import MetricVerdict

if TYPE_CHECKING:
    from empath_gate.analysis.stats import CellStats
    from empath_gate.results import RunRecord


class RunScores(AnalysisModel):
    """Every judging of one run's transcript for one metric: ``scores`` in re-judge order
    (scored judgings only, 1-10); ``transcript_hash``: content hash of the transcript
    (``None`` when unknown)."""

    target: str
    conversation_id: str
    run: int
    metric_id: str
    scores: tuple[float, ...]
    transcript_hash: str | None = None


class MetricReliability(AnalysisModel):
    """Reliability of one target x metric (module docstring for every figure)."""

    target: str
    metric_id: str
    n_conversations: int
    n_runs: int
    within_sd: float | None
    icc_1_1: float | None
    icc_note: str | None = None
    flip_rate: float | None
    transcripts_differed: float | None
    rejudged_transcripts: int
    judge_variance: float | None
    run_mean_variance: float | None
    generation_variance: float | None
    generation_floored: bool = False


def _var(xs: Sequence[float]) -> float:
    m = sum(xs) / len(xs)
    return sum((x - m) ** 2 for x in xs) / (len(xs) - 1)


def icc_1_1(groups: Sequence[Sequence[float]]) -> tuple[float | None, str | None]:
    """ICC(1,1) of groups of repeated scores (module docstring): ``(value, note)``; ``value``
    is ``None`` with the reason in ``note`` when it is undefined. Empty groups are ignored."""
    gs = [list(g) for g in groups if g]
    a = len(gs)
    n_total = sum(len(g) for g in gs)
    if a < 2:
        return None, "fewer than 2 conversations"
    if n_total <= a:
        return None, "no conversation has 2 or more runs"
    grand = sum(sum(g) for g in gs) / n_total
    msb = sum(len(g) * (sum(g) / len(g) - grand) ** 2 for g in gs) / (a - 1)
    msw = sum((x - sum(g) / len(g)) ** 2 for g in gs for x in g) / (n_total - a)
    n0 = (n_total - sum(len(g) ** 2 for g in gs) / n_total) / (a - 1)
    den = msb + (n0 - 1) * msw
    if den <= 0:
        return None, "no variance: every score is equal"
    return (msb - msw) / den, None


def reliability(
    rows: Sequence[RunScores], *, min_mean: float | Mapping[str, float]
) -> tuple[MetricReliability, ...]:
    """Reliability per target x metric, sorted by target then metric. ``min_mean``: the pass mark
    for the flip rate, one value or per metric id (KeyError for a metric without one)."""
    grouped: dict[tuple[str, str], dict[str, list[RunScores]]] = {}
    for r in rows:
        grouped.setdefault((r.target, r.metric_id), {}).setdefault(r.conversation_id, []).append(r)
    out: list[MetricReliability] = []
    for (target, metric), convs in sorted(grouped.items()):
        mark = min_mean if isinstance(min_mean, (int, float)) else min_mean[metric]
        first_groups: list[list[float]] = []
        flips: list[float] = []
        differed: list[bool] = []
        within: list[float] = []
        judge_vars: list[float] = []
        judge_terms: list[float] = []
        run_mean_vars: list[float] = []
        n_runs = 0
        for conv_rows in convs.values():
            conv_rows = sorted(conv_rows, key=lambda r: r.run)
            firsts = [r.scores[0] for r in conv_rows if r.scores]
            n_runs += len(firsts)
            first_groups.append(firsts)
            if firsts:
                n_pass = sum(1 for x in firsts if x >= mark)
                flips.append(min(n_pass, len(firsts) - n_pass) / len(firsts))
            if len(firsts) >= 2:
                within.append(_var(firsts))
            hashes = [r.transcript_hash for r in conv_rows if r.transcript_hash is not None]
            if len(hashes) >= 2:
                differed.append(len(set(hashes)) > 1)
            rejudged = [r for r in conv_rows if len(r.scores) >= 2]
            for r in rejudged:
                v = _var(r.scores)
                judge_vars.append(v)
                judge_terms.append(v / len(r.scores))
            run_means = [sum(r.scores) / len(r.scores) for r in rejudged]
            if len(run_means) >= 2:
                run_mean_vars.append(_var(run_means))
        icc, note = icc_1_1(first_groups)
        judge_var = sum(judge_vars) / len(judge_vars) if judge_vars else None
        rm_var = sum(run_mean_vars) / len(run_mean_vars) if run_mean_vars else None
        gen: float | None = None
        floored = False
        if rm_var is not None and judge_terms:
            raw = rm_var - sum(judge_terms) / len(judge_terms)
            floored = raw < 0
            gen = max(raw, 0.0)
        out.append(
            MetricReliability(
                target=target,
                metric_id=metric,
                n_conversations=sum(1 for g in first_groups if g),
                n_runs=n_runs,
                within_sd=math.sqrt(sum(within) / len(within)) if within else None,
                icc_1_1=icc,
                icc_note=note,
                flip_rate=sum(flips) / len(flips) if flips else None,
                transcripts_differed=sum(differed) / len(differed) if differed else None,
                rejudged_transcripts=len(judge_vars),
                judge_variance=judge_var,
                run_mean_variance=rm_var,
                generation_variance=gen,
                generation_floored=floored,
            )
        )
    return tuple(out)


def run_scores_from_verdicts(
    verdicts: Iterable[MetricVerdict], *, target: str, transcript_hashes: Mapping[str, str] | None = None
) -> tuple[RunScores, ...]:
    """Group verdicts (first judgings and re-judgings) into :class:`RunScores`, in order of first
    appearance; only scored verdicts count; ``transcript_hashes`` maps transcript id -> hash.
    Raises ValueError for a transcript id not shaped ``<conversation_id>-r<run>``."""
    grouped: dict[tuple[str, str], list[tuple[int, float]]] = {}
    for v in verdicts:
        entry = grouped.setdefault((v.transcript_id, v.metric_id), [])
        if v.score is not None:
            entry.append((v.rejudge, float(v.score)))
    out: list[RunScores] = []
    for (tid, metric), scores in grouped.items():
        conv, run = parse_transcript_id(tid)
        out.append(
            RunScores(
                target=target,
                conversation_id=conv,
                run=run,
                metric_id=metric,
                scores=tuple(s for _, s in sorted(scores, key=lambda x: x[0])),
                transcript_hash=(transcript_hashes or {}).get(tid),
            )
        )
    return tuple(out)


RESULTS_RELIABILITY_VERSION = 1
"""Version of the ``Results.reliability`` shape written by :func:`reliability_from_records`."""

NO_REJUDGINGS_NOTE = (
    "no re-judgings: `empath-gate rejudge RESULTS --times K` judges every transcript K more times "
    "and splits the run-to-run variance into judge noise and generation noise"
)
FLOORED_NOTE = (
    "Var(run means) - sigma2_judge/K was negative, floored at 0: the judge's own noise explains all "
    "the run-to-run spread seen (sampling noise; more runs or re-judgings narrow it)"
)


def _replicated(complete: Sequence[RunRecord]) -> tuple[int, float | None]:
    """Conversations with >= 2 completed, hashed runs, and the share of them whose runs differ
    in content (None when there is none)."""
    by_conv: dict[str, set[str]] = {}
    runs_of: dict[str, int] = {}
    for r in complete:
        if r.content_hash is not None:
            by_conv.setdefault(r.conversation_id, set()).add(r.content_hash)
            runs_of[r.conversation_id] = runs_of.get(r.conversation_id, 0) + 1
    replicated = [c for c, n in runs_of.items() if n >= 2]
    if not replicated:
        return 0, None
    return len(replicated), sum(1 for c in replicated if len(by_conv[c]) > 1) / len(replicated)


def _metric_entries(
    complete: Sequence[RunRecord],
    metric_order: Sequence[str],
    marks: dict[str, set[float]],
    cell_flips: dict[str, list[float]],
) -> list[dict[str, Any]]:
    """One JSON entry per metric with a scored first judging (:func:`reliability_from_records`)."""
    hashes = {r.transcript_id: r.content_hash for r in complete if r.content_hash is not None}
    verdicts = [v for r in complete for v in r.verdicts if v.metric_id in marks]
    rows = run_scores_from_verdicts(verdicts, target="", transcript_hashes=hashes)
    found = {
        m.metric_id: m
        for m in reliability(rows, min_mean={k: min(v) for k, v in marks.items()})
    }
    k_by_metric: dict[str, list[int]] = {}
    for row in rows:
        if len(row.scores) >= 2:
            k_by_metric.setdefault(row.metric_id, []).append(len(row.scores))
    entries: list[dict[str, Any]] = []
    for metric_id in metric_order:
        m = found.get(metric_id)
        if m is None or m.n_runs == 0:
            continue
        entry = m.model_dump(mode="json", exclude={"target"})
        if len(marks[metric_id]) > 1:
            flips = cell_flips[metric_id]
            entry["flip_rate"] = sum(flips) / len(flips) if flips else None
        ks = k_by_metric.get(metric_id)
        entry["judgings_per_transcript"] = sum(ks) / len(ks) if ks else None
        entry["generation_note"] = FLOORED_NOTE if m.generation_floored else None
        entries.append(entry)
    return entries


def reliability_from_records(records: Sequence[RunRecord], cells: Sequence[CellStats]) -> dict[str, Any]:
    """Test-retest reliability of a results document, as the JSON-able ``Results.reliability``.

    ``records``: the run records (their verdicts, first judgings and re-judgings, and content
    hashes; records whose transcript did not complete carry no verdict and are left out);
    ``cells``: the cell statistics of the same plan, which choose the metrics (in the order
    their first cell appears) and give each metric's pass mark ``min_mean`` for the flip rate
    (when a metric's cells were computed with different marks, e.g. two suites, the flip rate is
    the mean of the cells' own flip rates, which is the same formula per cell).

    Shape (``version`` = :data:`RESULTS_RELIABILITY_VERSION`)::

        {
          "version": 1,
          "runs_used": int,                    # completed transcripts the figures read
          "runs_stopped": int,                 # runs sequential gating did not start (not used)
          "conversations": int,                # conversations with >= 2 completed, hashed runs
          "transcripts_differed": float|None,  # share of them whose runs differ in content (0-1)
          "variance_split": bool,              # some transcript was judged K >= 2 times
          "note": str|None,                    # NO_REJUDGINGS_NOTE when there is no split
          "metrics": [                         # one per metric with >= 1 scored first judging
            {"metric_id", "n_conversations", "n_runs",
             "within_sd",            # pooled within-conversation SD, points (first judgings)
             "icc_1_1", "icc_note",  # ICC(1,1) across conversations, or None and why
             "flip_rate",            # 0-0.5
             "transcripts_differed", # share of the metric's conversations, 0-1
             "rejudged_transcripts", # transcripts with K >= 2 scored judgings
             "judgings_per_transcript",  # mean K over them (None without re-judgings)
             "judge_variance",       # sigma2_judge, points^2
             "run_mean_variance",    # Var(run means) = sigma2_gen + sigma2_judge / K
             "generation_variance",  # Var(run means) - sigma2_judge / K, floored at 0
             "generation_floored", "generation_note"}
          ]
        }

    Every figure is defined in the module docstring (:func:`reliability`). Pure; raises
    ValueError for a transcript id not shaped ``<conversation_id>-r<run>``.
    """
    metric_order: list[str] = []
    marks: dict[str, set[float]] = {}
    cell_flips: dict[str, list[float]] = {}
    for c in cells:
        if c.metric_id not in marks:
            metric_order.append(c.metric_id)
            marks[c.metric_id] = set()
            cell_flips[c.metric_id] = []
        marks[c.metric_id].add(c.min_mean)
        if c.flip_rate is not None:
            cell_flips[c.metric_id].append(c.flip_rate)
    complete = [r for r in records if r.status == "complete"]
    entries = _metric_entries(complete, metric_order, marks, cell_flips)
    replicated, differed = _replicated(complete)
    split = any(e["rejudged_transcripts"] for e in entries)
    return {
        "version": RESULTS_RELIABILITY_VERSION,
        "runs_used": len(complete),
        "runs_stopped": sum(1 for r in records if r.status == "stopped"),
        "conversations": replicated,
        "transcripts_differed": differed,
        "variance_split": split,
        "note": None if split else NO_REJUDGINGS_NOTE,
        "metrics": entries,
    }
