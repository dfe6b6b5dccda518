"""Whether a cell's threshold decision can still change with the runs it has not had (pure).

A cell with ``k`` judged scores (1-10) and ``r`` runs still to come is summarised by the state
``(total, lowest, highest, runs at or above min_mean)``, which is all the threshold conditions
read (:func:`empath_gate.gate.conditions.failed_thresholds`: mean, every run, range, flip rate,
judged runs). Every state the remaining runs can reach is enumerated, one run at a time.

* :func:`exact_settled`: no score of the remaining runs on the 1-10 scale (nor any of them
  being not applicable) changes whether the cell passes its threshold conditions. Exact, no
  model: it settles only what nothing can undo (a run below ``min_run``, a range over
  ``max_range``, a mean no run can rescue), so a passing cell is never settled this way while
  a run could still score below ``min_run``.
* :func:`reversal_probability`: the predictive probability that the remaining runs change the
  decision (stochastic curtailment: Lan, Simon & Halperin 1982, "Stochastically curtailed
  tests in long-term clinical trials", Communications in Statistics C 1(3):207-219; with the
  predictive rather than the conditional probability, as Spiegelhalter, Freedman & Blackburn
  1986, "Monitoring clinical trials: conditional or predictive power?", Controlled Clinical
  Trials 7:8-17). Stopping when it is at most ``e`` keeps the chance that the decision taken
  differs from the one all N runs would give at most ``e`` per cell, under the model below.

The model of a future run's score: a normal distribution rounded to 1-10 (the tails folded onto
1 and 10) with the cell's mean and SD ``max(sample SD, SD_FLOOR)``, mixed with a uniform
"swing" over 1-10 of weight ``SWING_RATE``; the unknown mean is integrated over its normal
posterior (mean of the scores, SD / sqrt(k)) by Gauss-Hermite quadrature (``NODES`` points).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from functools import lru_cache

import numpy as np

from empath_gate.gate.conditions import failed_thresholds
from empath_gate.gate.limits import gates
from empath_gate.instrument.models import ResolvedThresholds

SCORES: tuple[int, ...] = tuple(range(1, 11))
"""The judge's scale (EMPATH: 1-10, 10 the safest)."""
SD_FLOOR = 1.0
"""Least run-to-run SD of the predictive model, in points: this project's assumption, the spread
EMPATH's test-retest analysis describes for one conversation's runs (about 1 point); a sample SD
of 3 runs is too noisy to trust below it. ``bench/bench_sequential.py`` checks the error rate it
gives."""
SWING_RATE = 0.02
"""Weight of the uniform 1-10 "swing" in the predictive model: this project's assumption for the
occasional run that swings across the scale (EMPATH reports 2-to-10 swings between runs of one
conversation); checked by ``bench/bench_sequential.py``."""
NODES = 7
"""Gauss-Hermite points over the unknown mean (exact for polynomials up to degree 13)."""
MAX_STATES = 200_000
"""Most states one step may hold; beyond it the cell counts as not settled (fails safe)."""
MAX_ENUMERATED = 8
"""Most remaining runs whose states are enumerated (a rule asked after every run stays within
milliseconds); beyond, only a failure no run can undo settles (:func:`undoable`)."""

State = tuple[int, int, int, int]
"""``(total, lowest, highest, n_pass)`` of the judged scores."""


def _state(scores: Sequence[int], min_mean: float) -> State:
    return sum(scores), min(scores), max(scores), sum(1 for s in scores if s >= min_mean)


def _step(state: State, score: int, min_mean: float) -> State:
    total, lo, hi, n_pass = state
    return total + score, min(lo, score), max(hi, score), n_pass + (score >= min_mean)


def passes(n: int, state: State, t: ResolvedThresholds, fail_on: str) -> bool:
    """Whether ``n`` judged runs in ``state`` pass the threshold conditions under ``fail_on``
    (always True when thresholds do not gate)."""
    if not gates("threshold", fail_on):
        return True
    total, lo, hi, n_pass = state
    return all(failed_thresholds(n, total / n, lo, hi - lo, min(n_pass, n - n_pass) / n, t))


def undoable(scores: Sequence[int], t: ResolvedThresholds, fail_on: str) -> bool:
    """False when ``scores`` already fail a gating condition more runs can only worsen: a run
    below ``min_run`` (the lowest score never rises) or a range over ``max_range`` (it never
    narrows)."""
    if not scores or not gates("threshold", fail_on):
        return True
    lo, hi = min(scores), max(scores)
    _, _, ok_run, ok_range, _ = failed_thresholds(len(scores), float(lo), lo, hi - lo, 0.0, t)
    return ok_run and ok_range


def exact_settled(scores: Sequence[int], remaining: int, t: ResolvedThresholds, fail_on: str) -> bool:
    """True when no scores of ``remaining`` more runs (each 1-10, or not applicable) change
    whether ``scores`` (>= 1 judged scores, 1-10) pass the threshold conditions. ``remaining``
    >= 0; with 0 it is True. Past :data:`MAX_ENUMERATED` remaining runs, True only for a failure
    no run can undo (:func:`undoable`); fails safe (False) past :data:`MAX_STATES`."""
    if not scores:
        return False
    if remaining > MAX_ENUMERATED:
        return not undoable(scores, t, fail_on)
    k = len(scores)
    start = _state(scores, t.min_mean)
    now = passes(k, start, t, fail_on)
    frontier = {start}
    for step in range(1, remaining + 1):
        frontier = {_step(s, x, t.min_mean) for s in frontier for x in SCORES}
        if len(frontier) > MAX_STATES:
            return False
        if any(passes(k + step, s, t, fail_on) != now for s in frontier):
            return False
    return True


@lru_cache(maxsize=4096)
def _run_probs(mu: float, sd: float) -> tuple[float, ...]:
    """P(score = 1..10) of one run: normal(mu, sd) rounded, tails folded, mixed with the swing."""
    def cdf(x: float) -> float:
        return 0.5 * (1.0 + math.erf((x - mu) / (sd * math.sqrt(2.0))))

    edges = [cdf(s + 0.5) for s in SCORES[:-1]]
    normal = [edges[0]] + [b - a for a, b in itertools.pairwise(edges)] + [1.0 - edges[-1]]
    return tuple((1 - SWING_RATE) * p + SWING_RATE / len(SCORES) for p in normal)


def reversal_probability(
    scores: Sequence[int], remaining: int, t: ResolvedThresholds, fail_on: str
) -> float:
    """The predictive probability (0-1) that ``remaining`` more judged runs change whether the
    cell with judged ``scores`` (>= 1, each 1-10) passes its threshold conditions (module
    docstring for the model). 0 when ``remaining`` is 0; past :data:`MAX_ENUMERATED` remaining runs,
    0 for a failure no run can undo and else 1; 1 past :data:`MAX_STATES` (fails safe)."""
    if not scores:
        return 1.0
    k = len(scores)
    start = _state(scores, t.min_mean)
    now = passes(k, start, t, fail_on)
    if remaining <= 0:
        return 0.0
    if remaining > MAX_ENUMERATED:
        return 1.0 if undoable(scores, t, fail_on) else 0.0
    mean = sum(scores) / k
    sample_sd = math.sqrt(sum((x - mean) ** 2 for x in scores) / (k - 1)) if k > 1 else 0.0
    sd = max(sample_sd, SD_FLOOR)
    nodes, weights = np.polynomial.hermite_e.hermegauss(NODES)
    weights = weights / weights.sum()
    n = k + remaining
    verdict: dict[State, bool] = {}
    total = 0.0
    for z, w in zip(nodes.tolist(), weights.tolist(), strict=True):
        probs = _run_probs(round(mean + z * sd / math.sqrt(k), 6), round(sd, 6))
        dist: dict[State, float] = {start: 1.0}
        for _ in range(remaining):
            nxt: dict[State, float] = {}
            for s, p in dist.items():
                for x, q in zip(SCORES, probs, strict=True):
                    key = _step(s, x, t.min_mean)
                    nxt[key] = nxt.get(key, 0.0) + p * q
            if len(nxt) > MAX_STATES:
                return 1.0
            dist = nxt
        flip = 0.0
        for s, p in dist.items():
            got = verdict.get(s)
            if got is None:
                got = verdict[s] = passes(n, s, t, fail_on)
            if got != now:
                flip += p
        total += w * flip
    return min(1.0, max(0.0, total))
