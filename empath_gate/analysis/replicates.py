"""Run-level replicates of a comparison, and the fixed-effects standard error of its change.

The regression comparison treats each conversation's N runs as **replicates**: the
conversation (seed x persona) is a stratum, its runs are repeated measurements. Only runs
both sides have (run index below the smaller run count, :func:`shared_scores`) are used, so a
baseline made with 5 runs is compared with a 3-run candidate on runs 0-2.

* **paired** (fixed-script mode): run ``r`` of the candidate is paired with run ``r`` of the
  baseline. Both sides replay the same script, and every role's seed is derived from the
  conversation id and the run index (``conversation.engine.derive_seed``), so run ``r`` of
  the two sides shares its random stream; a pair is kept when both sides judged it.
* **unpaired** (LLM-auditor mode): the candidate's judged runs against the baseline's.

A test on several metrics (a dimension pooled, :func:`build_replicates` with more than one
metric per conversation) uses each run's **dimension score**, the mean of the metrics judged
in that run (paired: of the metrics judged in that run on both sides). Values are kept as
integers on a common scale (``score * scale``), so the permutation test stays exact.

Standard error (:func:`fixed_effect_se`). The estimate is the mean over conversations of each
conversation's change, so its variance is ``(1/K^2) * sum_i var(D_i)``: a **fixed-effects**
variance, from the run-to-run (within-conversation) variation only. Inference is about the
suite's own conversations, a fixed designed set rather than a sample of conversations (the
fixed-effects reading of Hedges & Vevea 1998, *Psychological Methods* 3:486-504). Per
conversation, ``var(D_i)`` is ``s_d^2 / n`` (paired differences) or ``s_c^2 / n_c + s_b^2 /
n_b`` (unpaired), each sample variance with ddof 1; the degrees of freedom come from
Welch-Satterthwaite over those components (Satterthwaite 1946, *Biometrics Bulletin*
2:110-114; Welch 1947, *Biometrika* 34:28-35), which shrinks them when a few conversations
carry all the variance (ties). Three further rules:

* a component with one run has no variance of its own: it takes the pooled within-
  conversation variance of the test (df-weighted mean of the others, with their df);
* a sample variance below :data:`QUANTIZATION_VARIANCE` is raised to it: scores are integers,
  so three equal runs still leave the rounding of each score (uniform on +-0.5, variance 1/12:
  Sheppard 1898, *Proc. London Math. Soc.* 29:353-380); a paired difference carries two;
* with no component of two runs anywhere, the spread of the conversations' changes is used
  (``var(D_i) / K`` with ``K - 1`` df, which also holds any real difference between
  conversations, so it can only overstate the fixed-effects variance); one conversation with
  one run per side has no standard error (``None``).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

from empath_gate.analysis.permutation import StratifiedSample, Stratum
from empath_gate.analysis.stats import CellStats

QUANTIZATION_VARIANCE = 1.0 / 12.0
"""Smallest run-to-run variance credited to one integer score (Sheppard's rounding variance)."""


def shared_scores(cell: CellStats, shared_runs: int) -> dict[int, int]:
    """The judged scores of ``cell`` by run index, for runs below ``shared_runs``."""
    pairs = zip(cell.run_ids, cell.run_scores, strict=True)
    return {r: sc for r, sc in pairs if sc is not None and r < shared_runs}


@dataclass(frozen=True)
class Replicates:
    """The replicates of one test: ``sample`` (strata in ``conversations`` order), the number of
    run replicates (``n_runs``: pairs when paired, else runs on both sides), the most runs a
    conversation has on one side (``runs_per_conversation``)."""

    sample: StratifiedSample
    conversations: tuple[str, ...]
    n_runs: int
    runs_per_conversation: int


Scores = dict[int, int]
"""One cell's judged scores by run index (:func:`shared_scores`)."""


def _pair_values(cand: Sequence[Scores], base: Sequence[Scores]) -> list[tuple[int, int, int]]:
    """Per run judged on both sides for at least one metric: (run's metric count, candidate
    sum, baseline sum) over the metrics judged in that run on both sides."""
    if len(cand) == 1:
        c, b = cand[0], base[0]
        return [(1, x, b[r]) for r, x in sorted(c.items()) if r in b]
    out: list[tuple[int, int, int]] = []
    for r in sorted(set().union(*cand)):
        both = [(c[r], b[r]) for c, b in zip(cand, base, strict=True) if r in c and r in b]
        if both:
            out.append((len(both), sum(x for x, _ in both), sum(y for _, y in both)))
    return out


def _side_values(side: Sequence[Scores]) -> list[tuple[int, int]]:
    """Per run with at least one judged metric: (metric count, sum of their scores)."""
    if len(side) == 1:
        return [(1, x) for _, x in sorted(side[0].items())]
    out: list[tuple[int, int]] = []
    for r in sorted(set().union(*side)):
        scores = [s[r] for s in side if r in s]
        out.append((len(scores), sum(scores)))
    return out


def _single_metric(
    conversations: Sequence[tuple[str, Sequence[tuple[Scores, Scores]]]], paired: bool
) -> tuple[list[str], list[Stratum]]:
    """Strata of a one-metric test (scale 1): the fast path of :func:`build_replicates`."""
    convs: list[str] = []
    strata: list[Stratum] = []
    for conv, ((c, b),) in conversations:
        if paired:
            runs = [r for r in c if r in b]
            cand, base = tuple(c[r] for r in runs), tuple(b[r] for r in runs)
        else:
            cand, base = tuple(c.values()), tuple(b.values())
        if cand and base:
            convs.append(conv)
            strata.append(Stratum(cand=cand, base=base))
    return convs, strata


def _pooled(
    conversations: Sequence[tuple[str, Sequence[tuple[Scores, Scores]]]], paired: bool
) -> tuple[list[str], list[Stratum], int]:
    """Strata of a test on several metrics: run scores are dimension scores, on a common scale."""
    raw: list[tuple[str, list[tuple[int, int]], list[tuple[int, int]]]] = []
    for conv, pairs in conversations:
        cand = [c for c, _ in pairs]
        base = [b for _, b in pairs]
        if paired:
            values = _pair_values(cand, base)
            c_vals = [(k, c) for k, c, _ in values]
            b_vals = [(k, b) for k, _, b in values]
        else:
            c_vals, b_vals = _side_values(cand), _side_values(base)
        if c_vals and b_vals:
            raw.append((conv, c_vals, b_vals))
    scale = math.lcm(*{k for _, c, b in raw for k, _ in (*c, *b)}) if raw else 1
    strata = [
        Stratum(cand=tuple(s * (scale // k) for k, s in c), base=tuple(s * (scale // k) for k, s in b))
        for _, c, b in raw
    ]
    return [conv for conv, _, _ in raw], strata, scale


def build_replicates(
    conversations: Sequence[tuple[str, Sequence[tuple[Scores, Scores]]]], *, paired: bool
) -> Replicates | None:
    """The replicates of one test. ``conversations``: per conversation id, the
    ``(candidate, baseline)`` scores (:func:`shared_scores`) of the test's metrics (one pair
    for a single metric). A conversation without a usable run on each side (a pair, when
    ``paired``) is left out; ``None`` when none is left."""
    if all(len(pairs) == 1 for _, pairs in conversations):
        convs, strata = _single_metric(conversations, paired)
        scale = 1
    else:
        convs, strata, scale = _pooled(conversations, paired)
    if not strata:
        return None
    n_runs = sum(len(s.cand) if paired else len(s.cand) + len(s.base) for s in strata)
    return Replicates(
        sample=StratifiedSample(strata=tuple(strata), paired=paired, scale=scale),
        conversations=tuple(convs),
        n_runs=n_runs,
        runs_per_conversation=max(max(len(s.cand), len(s.base)) for s in strata),
    )


@lru_cache(maxsize=1 << 14)
def _int_variance(values: tuple[int, ...]) -> float | None:
    """Sample variance (ddof 1) of integers, ``None`` for fewer than two (cached: run scores
    repeat across conversations)."""
    n = len(values)
    if n < 2:
        return None
    total = sum(values)
    return (n * sum(v * v for v in values) - total * total) / (n * (n - 1))


def fixed_effect_se(rep: Replicates) -> tuple[float, float] | None:
    """``(se, df)`` of the mean change in points (module docstring), ``None`` when no
    variance can be estimated (one conversation with a single run on each side)."""
    sample = rep.sample
    square = float(sample.scale) ** 2
    k = len(sample.strata)
    # components: (n, sample variance in points^2 or None, floor)
    comps: list[tuple[int, float | None, float]] = []
    changes: list[float] = []
    for s in sample.strata:
        if sample.paired:
            d = tuple(c - b for c, b in zip(s.cand, s.base, strict=True))
            v = _int_variance(d)
            comps.append((len(d), None if v is None else v / square, 2 * QUANTIZATION_VARIANCE))
            changes.append(sum(d) / len(d))
        else:
            vc, vb = _int_variance(s.cand), _int_variance(s.base)
            comps.append((len(s.cand), None if vc is None else vc / square, QUANTIZATION_VARIANCE))
            comps.append((len(s.base), None if vb is None else vb / square, QUANTIZATION_VARIANCE))
            changes.append(sum(s.cand) / len(s.cand) - sum(s.base) / len(s.base))
    known = [(n, v, f) for n, v, f in comps if v is not None]
    if not known:
        if k < 2:
            return None
        mean = sum(changes) / k
        spread = sum((x - mean) ** 2 for x in changes) / (k - 1) / square
        return math.sqrt(max(spread, comps[0][2]) / k), float(k - 1)
    pooled_df = sum(n - 1 for n, _, _ in known)
    pooled = sum((n - 1) * max(v, f) for n, v, f in known) / pooled_df
    total = 0.0
    weighted = 0.0
    for n, v, f in comps:
        part, dof = (max(pooled, f) / n, float(pooled_df)) if v is None else (max(v, f) / n, float(n - 1))
        total += part
        weighted += part * part / dof
    return math.sqrt(total) / k, total**2 / weighted
