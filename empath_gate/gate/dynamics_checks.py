"""The dynamics suite checks (pure): ``max_worsened_share`` and ``min_recovering_share`` of one
suite of an LLM-auditor run (rules in :mod:`empath_gate.gate.checks`).

The limit decides on the run's own share. Against a baseline, each share's change is tested on
per-conversation outcomes paired by conversation
(:mod:`empath_gate.analysis.dynamics.paired`), and that p-value joins the false-discovery family
of the suite's metrics (:func:`empath_gate.analysis.regression.compare`, ``side_tests``): the
comparison's :class:`~empath_gate.analysis.regression.SideTestResult` says whether it is in the
family, its adjusted p and whether it is flagged. A flagged test fails the check when the two
runs are comparable. Fewer than :data:`~empath_gate.analysis.dynamics.paired.MIN_PAIRED`
paired conversations: "cannot detect" (a reason; the limit alone decides).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from empath_gate.gate.limits import EPS

if TYPE_CHECKING:
    from empath_gate.analysis.regression import RegressionReport
    from empath_gate.gate.checks import SuiteCheck
    from empath_gate.instrument.models import Thresholds
    from empath_gate.results.dynamics import SuiteDynamics

CHECKS = ("max_worsened_share", "min_recovering_share")


def _baseline_reason(regression: RegressionReport, test_id: str) -> tuple[bool, str | None]:
    """(failed, reason) of the baseline comparison of one dynamics check (module docstring)."""
    t = regression.side_test(test_id)
    if t is None:
        return False, None
    if not t.in_family or t.p_adjusted is None:
        return False, f"baseline: {t.detection or 'not in the comparison'}"
    where = (f"{t.paired} paired conversations, in the suite's false-discovery family of "
             f"{regression.family_size} tests")
    q, alpha = f"q = {t.p_adjusted:.3g}", regression.alpha
    if not t.flagged:
        return False, f"baseline: no regression ({q} > alpha {alpha}; {where})"
    if not regression.comparable:
        return False, f"baseline: {q} <= alpha {alpha}, not gated: the runs are not comparable"
    return True, f"regression against the baseline: {q} <= alpha {alpha} ({where})"


def dynamics_checks(d: SuiteDynamics, thresholds: Thresholds,
                    regression: RegressionReport | None = None) -> list[SuiteCheck]:
    """The dynamics checks of suite ``d.suite`` whose limit ``thresholds`` sets (module
    docstring); ``regression``: the comparison with a baseline holding the suite's side tests
    (``None``: no baseline)."""
    from empath_gate.gate.checks import SuiteCheck

    observed = {"max_worsened_share": d.worsened_share, "min_recovering_share": d.recovering_share}
    out: list[SuiteCheck] = []
    for check in CHECKS:
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
        if value is None:
            out.append(SuiteCheck(**base, status="skipped",
                                  reasons=("no transcript has a trajectory shape",)))
            continue
        reasons: list[str] = []
        failed = False
        if check == "max_worsened_share" and value > limit + EPS:
            failed = True
            reasons.append(f"worsened share {value:.1%} (user trajectory deteriorating) > max_worsened_share "
                           f"{limit:.1%}")
        elif check == "min_recovering_share" and value < limit - EPS:
            failed = True
            reasons.append(f"recovering share {value:.1%} < min_recovering_share {limit:.1%}")
        if regression is not None:
            regressed, why = _baseline_reason(regression, f"{d.suite}::{check}")
            failed = failed or regressed
            if why is not None:
                reasons.append(why)
        out.append(SuiteCheck(**base, status="failed" if failed else "passed", reasons=tuple(reasons)))
    return out
