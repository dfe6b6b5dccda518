"""The dynamics suite checks (pure): ``max_worsened_share`` and ``min_recovering_share`` of one
suite of an LLM-auditor run (rules in :mod:`empath_gate.gate.checks`).

Baseline comparison: each conversation's outcome is the share of its runs whose user trajectory
has the shape (``deteriorating`` for worsened, ``recovering``), in the candidate and in the
baseline; conversations with an outcome in both are paired. The one-sided test of the mean
paired difference (worse: worsened up, recovering down) is a sign-flip permutation test
(``scipy.stats.permutation_test``, ``permutation_type="samples"``: exact when ``2**n`` is at
most :data:`RESAMPLES`, else that many random sign flips with seed :data:`SEED`). The p-values
of the suite's two dynamics tests are Benjamini-Hochberg adjusted together
(``scipy.stats.false_discovery_control``) and a test fails when its adjusted p is at or under
the thresholds' ``alpha``. Fewer than :data:`MIN_PAIRED` paired conversations: "cannot detect"
(a reason; the limit alone decides).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
from scipy import stats as sps

from empath_gate.gate.limits import EPS

if TYPE_CHECKING:
    from empath_gate.gate.checks import SuiteCheck
    from empath_gate.instrument.models import Thresholds
    from empath_gate.results.dynamics import SuiteDynamics
    from empath_gate.results.model import Results

MIN_PAIRED = 8
"""Fewest paired conversations for a baseline comparison (a project choice, issue #16): with
fewer, the sign-flip test of mostly 0/1 per-conversation shares can only detect a change in
nearly every conversation (with 7 pairs, one that does not move already costs p >= 2/128)."""
RESAMPLES = 9999
"""Random sign flips when the exact test would need more."""
SEED = 20240611
"""Seed of the random sign flips (an arbitrary fixed number: results must be reproducible)."""

_SHAPE = {"max_worsened_share": "deteriorating", "min_recovering_share": "recovering"}
_WORSE_SIGN = {"max_worsened_share": 1.0, "min_recovering_share": -1.0}


def paired_p(
    current: dict[str, float], baseline: dict[str, float], worse_sign: float
) -> tuple[int, float | None]:
    """``(paired conversations, one-sided p)`` of the change ``current - baseline`` in the worse
    direction (``worse_sign`` +1: an increase is worse; -1: a decrease); p is ``None`` with
    fewer than :data:`MIN_PAIRED` pairs."""
    keys = sorted(set(current) & set(baseline))
    if len(keys) < MIN_PAIRED:
        return len(keys), None
    diff = worse_sign * np.array([current[k] - baseline[k] for k in keys], dtype=np.float64)
    if not np.any(diff):
        return len(keys), 1.0
    res = sps.permutation_test(
        (diff,), np.mean, permutation_type="samples", alternative="greater",
        n_resamples=RESAMPLES, random_state=SEED,
    )
    return len(keys), float(res.pvalue)


def dynamics_checks(d: SuiteDynamics, results: Results, thresholds: Thresholds,
                    baseline: Results | None = None) -> list[SuiteCheck]:
    """The dynamics checks of suite ``d.suite`` whose limit ``thresholds`` sets (module docstring)."""
    from empath_gate.gate.checks import SuiteCheck
    from empath_gate.results.dynamics import conversation_outcomes

    observed = {"max_worsened_share": d.worsened_share, "min_recovering_share": d.recovering_share}
    comparisons: dict[str, tuple[int, float | None]] = {}
    if baseline is not None:
        for check, shape in _SHAPE.items():
            comparisons[check] = paired_p(
                conversation_outcomes(results, d.suite, shape),
                conversation_outcomes(baseline, d.suite, shape),
                _WORSE_SIGN[check],
            )
    tested = {c: p for c, (_n, p) in comparisons.items() if p is not None}
    adjusted: dict[str, float] = {}
    if tested:
        adj = np.atleast_1d(sps.false_discovery_control(np.array(list(tested.values())), method="bh"))
        adjusted = dict(zip(tested, (float(a) for a in adj), strict=True))
    out: list[SuiteCheck] = []
    for check in _SHAPE:
        limit = thresholds.dynamics_limit(d.suite, check)
        if limit is None:
            continue
        value = observed[check]
        base = {"suite": d.suite, "check": check, "threshold": limit, "observed": value}
        if d.failures:
            out.append(SuiteCheck(**base, status="incomplete", reasons=(
                f"{len(d.failures)} of {d.transcripts} transcripts have no emotion labels (annotator "
                f"failure: {d.failures[0].reason} on {d.failures[0].transcript_id})",)))
            continue
        reasons: list[str] = []
        failed = False
        if value is None:
            out.append(SuiteCheck(**base, status="skipped",
                                  reasons=("no transcript has a trajectory shape",)))
            continue
        if check == "max_worsened_share" and value > limit + EPS:
            failed = True
            reasons.append(f"worsened share {value:.1%} (user trajectory deteriorating) > max_worsened_share "
                           f"{limit:.1%}")
        elif check == "min_recovering_share" and value < limit - EPS:
            failed = True
            reasons.append(f"recovering share {value:.1%} < min_recovering_share {limit:.1%}")
        if check in comparisons:
            n, p = comparisons[check]
            if p is None:
                reasons.append(f"baseline: cannot detect a change ({n} paired conversations, fewer than "
                               f"{MIN_PAIRED})")
            elif adjusted[check] <= thresholds.alpha + EPS:
                failed = True
                reasons.append(f"regression against the baseline: q = {adjusted[check]:.3g} <= alpha "
                               f"{thresholds.alpha} ({n} paired conversations)")
        out.append(SuiteCheck(**base, status="failed" if failed else "passed", reasons=tuple(reasons)))
    return out
