"""The false discovery rate across a suite's regression tests: which tests form the family,
and the weighted Benjamini-Hochberg adjustment.

1. **Family** (:func:`tarone_family`). A permutation test on a few conversations is discrete:
   its p-value cannot fall below the probability of the single most extreme arrangement
   (``min_p``). A test whose ``min_p`` exceeds the level it would need can never be a
   discovery, yet counting it would raise every other test's bar. Tarone's rule keeps the
   ``m(K)`` tests with ``min_p <= alpha / K`` for the smallest ``K`` with ``m(K) <= K``
   (Tarone 1990, *Biometrics* 46:515-522); Gilbert applies Benjamini-Hochberg to that family
   and shows the false discovery rate stays at ``alpha`` (Gilbert 2005, *JRSS C* 54:143-158).
   ``min_p`` is taken conditional on the observed runs (the permutation test's own support);
   under no change it carries no information about the test's outcome, so selecting by it is
   an *independent filter* and keeps the FDR control (Bourgon, Gentleman & Huber 2010, *PNAS*
   107:9546-9551).
2. **Weights** (:func:`weighted_bh`). Within the family, each test's weight is its
   information, the run replicates per metric it speaks for (a metric: its runs; a dimension
   pool of k metrics: its runs / k), divided by the family's mean (weights average 1, fixed
   before any p-value is looked at): the tests that carry more runs are the ones a real drop
   is likeliest to reach, and a pool, whose discovery is shared by k metrics, does not
   outweigh the metrics large enough to stand alone. Benjamini-Hochberg on ``p_i / w_i`` controls the FDR at
   ``alpha`` for any such weights (Genovese, Roeder & Wasserman 2006, *Biometrika* 93:509-524),
   for independent p-values and under positive regression dependency (one-sided tests of
   positively correlated scores on shared transcripts: Benjamini & Yekutieli 2001, *Ann.
   Statist.* 29:1165-1188). The Benjamini-Hochberg step itself is
   ``scipy.stats.false_discovery_control`` (Benjamini & Hochberg 1995, *JRSS B* 57:289-300).
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence
from typing import TypeVar

import numpy as np
from scipy import stats as sps

K = TypeVar("K", bound=Hashable)

TOLERANCE = 1e-9
"""Relative slack of ``min_p <= level`` (an exact 1/20 must count as reaching 0.05)."""


def reaches(p: float, level: float) -> bool:
    """``p <= level`` up to :data:`TOLERANCE` (relative)."""
    return p <= level * (1.0 + TOLERANCE)


def tarone_k(min_ps: Sequence[float], alpha: float) -> int:
    """Tarone's ``K``: the smallest ``K >= 1`` such that at most ``K`` of ``min_ps`` reach
    ``alpha / K`` (``len(min_ps)`` always qualifies; 1 for an empty list)."""
    m = len(min_ps)
    for k in range(1, m + 1):
        if sum(1 for p in min_ps if reaches(p, alpha / k)) <= k:
            return k
    return max(m, 1)


def tarone_family(min_ps: Mapping[K, float], alpha: float) -> tuple[tuple[K, ...], float]:
    """The ids whose ``min_p`` reaches ``alpha / K`` (in input order) and that level."""
    k = tarone_k(list(min_ps.values()), alpha)
    level = alpha / k
    return tuple(i for i, p in min_ps.items() if reaches(p, level)), level


def weighted_bh(p_values: Mapping[K, float], information: Mapping[K, float]) -> dict[K, tuple[float, float]]:
    """Weighted Benjamini-Hochberg adjusted p-values: id -> ``(adjusted p, weight)``, the weight
    being ``information[id]`` (run replicates per metric the test speaks for) over the
    family's mean (module docstring); adjusted values are capped at 1. Raises ValueError when
    an id has no positive information."""
    ids = list(p_values)
    if not ids:
        return {}
    n = np.array([information[i] for i in ids], dtype=np.float64)
    if np.any(n <= 0):
        raise ValueError("every test of the family needs at least one run replicate")
    weights = n / n.mean()
    q = np.minimum(1.0, np.array([p_values[i] for i in ids], dtype=np.float64) / weights)
    adjusted = np.minimum(1.0, np.atleast_1d(sps.false_discovery_control(q, method="bh")))
    return {i: (float(a), float(w)) for i, a, w in zip(ids, adjusted, weights, strict=True)}
