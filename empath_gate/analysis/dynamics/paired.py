"""The change of a dynamics share against a baseline, tested on per-conversation outcomes paired
by conversation (pure).

Each conversation's outcome is the share (0-1) of its runs whose user trajectory has a shape
(``deteriorating`` for the worsened share, ``recovering`` for the recovering share), in the
candidate and in the baseline; conversations with an outcome on both sides are paired. The
one-sided test of the mean paired difference in the worse direction is a sign-flip permutation
test (``scipy.stats.permutation_test`` with ``permutation_type="samples"``: exact when ``2**n``
is at most :data:`RESAMPLES`, else that many random sign flips with seed :data:`SEED`).
``min_p`` is the smallest p-value those differences could give (all signs worse: ``2**-k`` for
``k`` non-zero differences, at least ``1 / (RESAMPLES + 1)`` when resampled), which decides
whether the test can join the suite's false-discovery family
(:func:`empath_gate.analysis.multiplicity.tarone_family`). Fewer than :data:`MIN_PAIRED`
paired conversations: no test ("cannot detect").
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
from scipy import stats as sps

from empath_gate.analysis.base import AnalysisModel

MIN_PAIRED = 8
"""Fewest paired conversations for a baseline comparison (a project choice, issue #16): with
fewer, the sign-flip test of mostly 0/1 per-conversation shares can only detect a change in
nearly every conversation (with 7 pairs, one that does not move already costs p >= 2/128)."""
RESAMPLES = 9999
"""Random sign flips when the exact test would need more."""
SEED = 20240611
"""Seed of the random sign flips (an arbitrary fixed number: results must be reproducible)."""


class PairedShareTest(AnalysisModel):
    """The test of one share's change: ``paired`` conversations; ``p_value`` one-sided toward
    worse and ``min_p`` (both ``None`` with fewer than :data:`MIN_PAIRED` pairs); ``mean_change``
    = mean of candidate - baseline outcomes (0-1 share points; ``None`` without pairs)."""

    paired: int
    p_value: float | None
    min_p: float | None
    mean_change: float | None


def paired_share_test(
    current: Mapping[str, float], baseline: Mapping[str, float], worse_sign: float
) -> PairedShareTest:
    """The test of ``current - baseline`` per shared conversation id (module docstring);
    ``worse_sign`` +1 when an increase is worse (worsened share), -1 when a decrease is
    (recovering share). ValueError for another ``worse_sign``."""
    if worse_sign not in (1.0, -1.0):
        raise ValueError(f"worse_sign must be +1 or -1, got {worse_sign}")
    keys = sorted(set(current) & set(baseline))
    change = [current[k] - baseline[k] for k in keys]
    mean = float(np.mean(change)) if keys else None
    if len(keys) < MIN_PAIRED:
        return PairedShareTest(paired=len(keys), p_value=None, min_p=None, mean_change=mean)
    diff = worse_sign * np.array(change, dtype=np.float64)
    nonzero = int(np.count_nonzero(diff))
    exact = 2 ** len(keys) <= RESAMPLES
    min_p = 0.5**nonzero if exact else max(0.5**nonzero, 1.0 / (RESAMPLES + 1))
    if not nonzero:
        return PairedShareTest(paired=len(keys), p_value=1.0, min_p=1.0, mean_change=mean)
    res = sps.permutation_test(
        (diff,), np.mean, permutation_type="samples", alternative="greater",
        n_resamples=RESAMPLES, random_state=SEED,
    )
    return PairedShareTest(paired=len(keys), p_value=float(res.pvalue), min_p=min_p, mean_change=mean)
