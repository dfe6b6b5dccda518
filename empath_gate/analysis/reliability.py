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

from empath_gate.analysis.base import AnalysisModel
from empath_gate.analysis.stats import parse_transcript_id
from empath_gate.judging.verdict import MetricVerdict


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
