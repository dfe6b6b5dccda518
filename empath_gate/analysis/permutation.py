"""Exact permutation test of a mean change over strata of run-level replicates.

The regression comparison (:mod:`empath_gate.analysis.regression`) turns one metric (or one
pooled dimension) into a :class:`StratifiedSample`: one :class:`Stratum` per conversation,
holding that conversation's run scores on both sides as integers (``value * scale``, so a
pooled dimension score, a mean of k integer scores, is exact too). The statistic is the
**mean over conversations of each conversation's change** (every conversation weighs the
same)::

    T = (1/K) * sum_i D_i,   D_i = mean(candidate runs) - mean(baseline runs)   (unpaired)
                             D_i = mean over pairs of (candidate[r] - baseline[r])  (paired)

Null hypothesis: no change, i.e. within a conversation the candidate's and the baseline's
runs come from the same distribution (runs are independent replicates of the conversation).
Its permutation group (Fisher 1935, *The Design of Experiments*, ch. 21; Pesarin & Salmaso
2010, *Permutation Tests for Complex Data*, ch. 2 on stratified designs):

* **paired** (fixed-script mode, runs paired by index): the two runs of every pair may be
  swapped, independently, so each pair difference keeps or flips its sign with probability 1/2;
* **unpaired** (LLM-auditor mode): the ``n_c + n_b`` runs of a conversation may be relabelled,
  every choice of ``n_c`` of them as the candidate's being equally likely.

Strata are permuted independently, so the null distribution of ``T`` is the convolution of
the strata's distributions. Every value lies on an integer lattice, so the distribution is
computed **exactly** by convolving integer-indexed probability vectors (the shift-algorithm
idea of Streitberg & Röhmel 1986, *Statistical Software Newsletter* 12:10-17): no
resampling, no seed, and ties (scores are integers 1-10) are handled exactly. The p-value is
conditional on the observed runs, so it is valid at every sample size and with any number of
ties. When the lattice would exceed :data:`EXACT_LIMIT` points, or a conversation has more
relabellings than :data:`SUBSET_LIMIT` (large plans only), the exact moments of the same
distribution feed a normal approximation with a continuity correction (the statistic is then a
sum over hundreds of independent strata or over many runs per stratum: Lindeberg's central
limit theorem; Hájek 1960 for sampling without replacement).

The p-value is **one-sided** (a drop: ``P(T* <= T)``), because only drops are regressions.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import cache, lru_cache

import numpy as np
import numpy.typing as npt
from scipy import signal
from scipy import stats as sps

EXACT_LIMIT = 1 << 15
"""Largest exact null distribution, in lattice points (32,768): covers plans of up to a few
hundred conversations per metric at 3-5 runs (about 30-60 points each); beyond it the
statistic sums so many independent strata that the normal approximation is used (a cost
bound, not a statistical constant: ``tests/analysis`` checks the two agree there)."""

SUBSET_LIMIT = 1 << 14
"""Most relabellings enumerated for one conversation (``C(n_c + n_b, n_c)``): 16,384 covers
up to 8 + 8 runs (12,870); more runs per conversation use the normal approximation."""

DIRECT_LIMIT = 1 << 16
"""Largest product of two vector lengths convolved directly; beyond it FFT is faster."""

FloatArray = npt.NDArray[np.float64]


@dataclass(frozen=True)
class Stratum:
    """One conversation's runs as integers (score * the sample's ``scale``). Paired: ``cand``
    and ``base`` are aligned by run (same length, at least 1). Unpaired: any lengths, each at
    least 1."""

    cand: tuple[int, ...]
    base: tuple[int, ...]


@dataclass(frozen=True)
class StratifiedSample:
    """The strata of one test, ``paired`` or not, on a common integer ``scale`` (values are
    ``score * scale``; 1 for single metrics)."""

    strata: tuple[Stratum, ...]
    paired: bool
    scale: int = 1


@dataclass(frozen=True)
class PermutationResult:
    """``p_value``: one-sided ``P(T* <= T)`` under no change (1.0 when every arrangement gives
    the same ``T``). ``min_p``: the smallest p-value these runs could give (every arrangement
    at its most extreme), conditional on the observed values; ``design_min_p``: the same for
    the plan's shape alone (all values distinct), which says whether a plan of this size can
    ever reach a level. ``exact``: the distribution was enumerated (else the normal
    approximation)."""

    p_value: float
    min_p: float
    design_min_p: float
    exact: bool


def stratum_change(s: Stratum, paired: bool) -> float:
    """``D_i`` of one stratum in integer units (divide by the scale for points)."""
    if paired:
        return sum(c - b for c, b in zip(s.cand, s.base, strict=True)) / len(s.cand)
    return sum(s.cand) / len(s.cand) - sum(s.base) / len(s.base)


def mean_change(sample: StratifiedSample) -> float:
    """``T`` in points: the mean over strata of ``D_i``, divided by the scale. Raises
    ValueError for a sample without strata."""
    if not sample.strata:
        raise ValueError("no stratum to compare")
    total = sum(stratum_change(s, sample.paired) for s in sample.strata)
    return total / len(sample.strata) / sample.scale


def design_min_p(sample: StratifiedSample) -> float:
    """Smallest one-sided p-value a plan of this shape can reach: ``2**-pairs`` paired,
    ``prod 1 / C(n_c + n_b, n_c)`` unpaired."""
    if sample.paired:
        return float(2.0 ** -sum(len(s.cand) for s in sample.strata))
    logp = -sum(math.log(math.comb(len(s.cand) + len(s.base), len(s.cand))) for s in sample.strata)
    return math.exp(logp)


@lru_cache(maxsize=1 << 14)
def _min_share(s: Stratum, paired: bool) -> float:
    """Probability of the stratum's most extreme (lowest) arrangement, given its values."""
    if paired:
        return float(2.0 ** -sum(1 for c, b in zip(s.cand, s.base, strict=True) if c != b))
    values = sorted((*s.cand, *s.base))
    n_c, n = len(s.cand), len(s.cand) + len(s.base)
    edge = values[n_c - 1]
    ties_all = values.count(edge)
    ties_in = values[:n_c].count(edge)
    return math.comb(ties_all, ties_in) / math.comb(n, n_c)


@cache
def _subsets(n: int, k: int) -> npt.NDArray[np.bool_]:
    """Every choice of ``k`` of ``n`` positions, as a boolean matrix (C(n, k) x n)."""
    from itertools import combinations

    out = np.zeros((math.comb(n, k), n), dtype=bool)
    for row, combo in enumerate(combinations(range(n), k)):
        out[row, list(combo)] = True
    out.setflags(write=False)
    return out


@dataclass(frozen=True)
class _Null:
    """A stratum's null distribution of ``z = D_i * factor`` (an integer in units of
    ``1/(scale * Q)``): its observed value, exact variance (the mean is 0), lattice ``step``
    (every difference of two possible values is a multiple of it; 0 when ``z`` cannot move)
    and ``span`` (largest minus smallest value)."""

    stratum: Stratum
    factor: int
    observed: int
    variance: float
    step: int
    span: int


@lru_cache(maxsize=1 << 14)
def _null(s: Stratum, paired: bool, factor: int) -> _Null:
    if paired:
        e = [factor * abs(c - b) for c, b in zip(s.cand, s.base, strict=True)]
        observed = factor * sum(c - b for c, b in zip(s.cand, s.base, strict=True))
        return _Null(s, factor, observed, float(sum(x * x for x in e)), math.gcd(*(2 * x for x in e)),
                     2 * sum(e))
    x = sorted((*s.cand, *s.base))
    n_c, n = len(s.cand), len(x)
    observed = factor * (n * sum(s.cand) - n_c * sum(x))
    # finite-population variance of a sample sum of size n_c (Cochran 1977, *Sampling
    # Techniques*, thm 2.2): n_c (n - n_c) / (n - 1) times the population variance
    mean = sum(x) / n
    pop_var = sum((v - mean) ** 2 for v in x) / n
    var_sum = n_c * (n - n_c) / (n - 1) * pop_var if n > 1 else 0.0
    span = factor * n * (sum(x[n - n_c:]) - sum(x[:n_c]))
    step = factor * n * math.gcd(*(v - x[0] for v in x))
    return _Null(s, factor, observed, (factor * n) ** 2 * var_sum, step, span)


def _dense(null: _Null, paired: bool, step: int) -> tuple[int, FloatArray]:
    """The stratum's distribution as ``(smallest value, probabilities on the lattice step)``."""
    s, f = null.stratum, null.factor
    if paired:
        return _paired_dense(tuple(sorted(f * abs(c - b) for c, b in zip(s.cand, s.base, strict=True))), step)
    return _relabel_dense(tuple(sorted((*s.cand, *s.base))), len(s.cand), f, step)


@lru_cache(maxsize=1 << 14)
def _paired_dense(moves: tuple[int, ...], step: int) -> tuple[int, FloatArray]:
    """Sign flips of the pair differences ``moves`` (absolute values; cached: conversations
    share patterns, scores being integers 1-10)."""
    probs = np.ones(1)
    low = 0
    for x in moves:
        if x == 0:
            continue
        low -= x
        two = np.zeros(2 * x // step + 1)
        two[0] = two[-1] = 0.5
        probs = np.convolve(probs, two)
    probs.setflags(write=False)
    return low, probs


@lru_cache(maxsize=1 << 14)
def _relabel_dense(values: tuple[int, ...], n_c: int, factor: int, step: int) -> tuple[int, FloatArray]:
    """Every choice of ``n_c`` of ``values`` as the candidate's runs (cached like
    :func:`_paired_dense`)."""
    x = np.array(values, dtype=np.int64)
    n = x.size
    z = factor * (n * (_subsets(n, n_c) @ x) - n_c * int(x.sum()))
    low = int(z.min())
    probs = np.bincount((z - low) // step).astype(np.float64)
    probs /= probs.sum()
    probs.setflags(write=False)
    return low, probs


def _convolve_all(parts: list[FloatArray]) -> FloatArray:
    """Convolution of probability vectors, pairwise in a balanced tree (direct when small, FFT
    via ``scipy.signal.fftconvolve`` when large); round-off below 0 is clipped and the total
    renormalised."""
    while len(parts) > 1:
        nxt = [
            np.convolve(a, b) if a.size * b.size <= DIRECT_LIMIT else signal.fftconvolve(a, b)
            for a, b in zip(parts[::2], parts[1::2], strict=False)
        ]
        if len(parts) % 2:
            nxt.append(parts[-1])
        parts = nxt
    out: FloatArray = np.clip(parts[0], 0.0, None)
    total = float(out.sum())
    return out / total


def permutation_test(sample: StratifiedSample) -> PermutationResult:
    """One-sided permutation p-value of a drop (module docstring). Raises ValueError for a
    sample without strata or with an empty side in a stratum."""
    if not sample.strata:
        raise ValueError("no stratum to compare")
    for s in sample.strata:
        if not s.cand or not s.base or (sample.paired and len(s.cand) != len(s.base)):
            raise ValueError("every stratum needs runs on both sides (aligned when paired)")
    paired = sample.paired
    q = [len(s.cand) if paired else len(s.cand) * len(s.base) for s in sample.strata]
    common = math.lcm(*q)
    nulls = [_null(s, paired, common // qi) for s, qi in zip(sample.strata, q, strict=True)]
    observed = sum(n.observed for n in nulls)
    min_p = math.prod(_min_share(s, paired) for s in sample.strata)
    design = design_min_p(sample)
    moving = [n for n in nulls if n.step > 0]
    if not moving:
        return PermutationResult(p_value=1.0, min_p=1.0, design_min_p=design, exact=True)
    step = math.gcd(*(n.step for n in moving))
    length = 1 + sum(n.span // step for n in moving)
    feasible = paired or all(
        math.comb(len(n.stratum.cand) + len(n.stratum.base), len(n.stratum.cand)) <= SUBSET_LIMIT
        for n in moving
    )
    if feasible and length <= EXACT_LIMIT:
        offset = sum(n.observed for n in nulls if n.step == 0)
        parts: list[FloatArray] = []
        for n in moving:
            low, probs = _dense(n, paired, step)
            offset += low
            parts.append(probs)
        pmf = _convolve_all(parts)
        p = float(pmf[: (observed - offset) // step + 1].sum())
        return PermutationResult(p_value=min(1.0, p), min_p=min_p, design_min_p=design, exact=True)
    variance = sum(n.variance for n in moving)
    p = float(sps.norm.cdf((observed + step / 2.0) / math.sqrt(variance)))
    return PermutationResult(p_value=min(1.0, max(p, min_p)), min_p=min_p, design_min_p=design, exact=False)
