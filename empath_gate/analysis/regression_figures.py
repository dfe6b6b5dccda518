"""The figures of one regression test (a metric or a pooled dimension) and what it can detect,
in words. The methods are described in :mod:`empath_gate.analysis.regression`; this module
computes them from :class:`~empath_gate.analysis.replicates.Replicates`.

The words (``detection``) are for reports to show verbatim, and never give a minimum
detectable drop of 0:

* a test that can flag a drop: "detects a drop of 1.52 points with 80% power (5 conversations
  x 3 runs; one-sided alpha 0.05 before the FDR correction across 6 tests)";
* one that cannot: "cannot detect a regression on X with 1 conversation x 3 runs: the smallest
  p-value such a plan can reach is 0.125, above alpha 0.05" (or the reason: tied scores, or
  a p-value that cannot reach the level the correction across the plan's tests needs);
* a critical metric (non-inferiority): how often an unchanged metric passes and which drop
  fails 80 % of the time.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from scipy import special

from empath_gate.analysis.bootstrap import CONFIDENCE
from empath_gate.analysis.multiplicity import reaches
from empath_gate.analysis.permutation import mean_change, permutation_test
from empath_gate.analysis.replicates import Replicates, fixed_effect_se

POWER = 0.80
"""Power behind the minimum detectable drop (the conventional 80 %, Cohen 1988)."""


@dataclass(frozen=True)
class Figures:
    """One test's figures (see :class:`~empath_gate.analysis.regression.MetricRegression`).
    ``runs_per_conversation``: the most runs a conversation has on one side;
    ``design_min_p``: the smallest p-value a plan of this shape can reach (all scores
    distinct); ``pass_rate``: for a critical metric, how often an unchanged metric passes
    non-inferiority (``None`` otherwise)."""

    n_conversations: int
    n_runs: int
    runs_per_conversation: int
    effect: float | None
    ci_low: float | None
    ci_high: float | None
    se: float | None
    df: float | None
    p_value: float | None
    min_p: float | None
    design_min_p: float | None
    mdd: float | None
    pass_rate: float | None
    note: str | None

    def fields(self) -> dict[str, Any]:
        """The figures the report models store."""
        return {name: getattr(self, name) for name in STORED}


STORED = ("n_conversations", "n_runs", "effect", "ci_low", "ci_high", "se", "df", "p_value", "min_p",
          "mdd", "note")
"""The :class:`Figures` the report models store."""


def _t_quantile(p: float, df: float) -> float:
    """Student's t quantile (``scipy.special.stdtrit``: the same values as ``scipy.stats.t.ppf``
    at a fraction of the call cost)."""
    return float(special.stdtrit(df, p))


def figures(rep: Replicates | None, *, alpha: float, critical: bool, max_drop: float) -> Figures:
    """The figures of one test; every figure ``None`` (with a note) when no conversation was
    judged on both sides."""
    if rep is None:
        return Figures(0, 0, 0, None, None, None, None, None, None, None, None, None, None,
                       "no conversation judged on both sides")
    effect = mean_change(rep.sample)
    perm = permutation_test(rep.sample)
    est = fixed_effect_se(rep)
    ci_low = ci_high = se = df = mdd = pass_rate = None
    note = None
    if est is None:
        note = "one run per side: no run-to-run variance, so no interval"
    else:
        se, df = est
        t_ci = _t_quantile(1 - (1 - CONFIDENCE) / 2, df)
        t_power = _t_quantile(POWER, df)
        ci_low, ci_high = effect - t_ci * se, effect + t_ci * se
        if critical:
            drop = max_drop - (t_ci - t_power) * se
            mdd = drop if drop > 0 else None
            pass_rate = 1.0 - float(special.stdtr(df, t_ci - max_drop / se))
        else:
            mdd = (_t_quantile(1 - alpha, df) + t_power) * se
    return Figures(
        n_conversations=len(rep.sample.strata), n_runs=rep.n_runs,
        runs_per_conversation=rep.runs_per_conversation, effect=effect, ci_low=ci_low,
        ci_high=ci_high, se=se, df=df, p_value=perm.p_value, min_p=perm.min_p,
        design_min_p=perm.design_min_p, mdd=mdd, pass_rate=pass_rate, note=note,
    )


def plan_words(f: Figures) -> str:
    """'5 conversations x 3 runs' (runs per side)."""
    k, r = f.n_conversations, f.runs_per_conversation
    return f"{k} conversation{'s' if k != 1 else ''} x {r} run{'s' if r != 1 else ''}"


def _critical_words(f: Figures, name: str, max_drop: float) -> str:
    margin = f"{max_drop:g}"
    if f.se is None or f.pass_rate is None:
        return (f"cannot show non-inferiority on {name} with {plan_words(f)}: no run-to-run variance "
                "to build an interval, so it fails closed")
    passes = f"an unchanged metric passes {f.pass_rate:.0%} of the time"
    if f.mdd is None:
        return (f"non-inferiority within max_drop {margin} cannot be shown reliably on {name} with "
                f"{plan_words(f)} at this run-to-run noise: {passes}")
    return (f"non-inferiority within max_drop {margin}: a drop of {margin} or more fails; a drop of "
            f"{f.mdd:.2f} fails 80% of the time; {passes} ({plan_words(f)})")


def detection_words(
    f: Figures,
    *,
    name: str,
    alpha: float,
    in_family: bool,
    level: float,
    family_size: int,
    critical: bool = False,
    max_drop: float = 0.0,
) -> str:
    """What the test of ``name`` can detect, in words (module docstring). ``level``: the
    level the family's smallest p-values had to reach (Tarone's ``alpha / K``);
    ``family_size``: tests in the family."""
    if f.n_conversations == 0:
        return f"cannot detect a regression on {name}: no conversation judged on both sides"
    if critical:
        return _critical_words(f, name, max_drop)
    if in_family:
        if f.mdd is None:
            return f"{plan_words(f)}: no run-to-run variance to size the smallest detectable drop"
        tests = f"{family_size} test{'s' if family_size != 1 else ''}"
        return (f"detects a drop of {f.mdd:.2f} points with 80% power ({plan_words(f)}; one-sided alpha "
                f"{alpha:g} before the FDR correction across {tests})")
    design = f.design_min_p if f.design_min_p is not None else 1.0
    min_p = f.min_p if f.min_p is not None else 1.0
    if not reaches(design, alpha):
        return (f"cannot detect a regression on {name} with {plan_words(f)}: the smallest p-value such a "
                f"plan can reach is {design:.3g}, above alpha {alpha:g}")
    if not reaches(min_p, alpha):
        return (f"cannot detect a regression on {name} in these runs: with so many tied scores the "
                f"smallest p-value they can reach is {min_p:.3g}, above alpha {alpha:g}")
    return (f"cannot detect a regression on {name} with {plan_words(f)} beside this plan's other tests: the "
            f"smallest p-value it can reach, {min_p:.3g}, is above the {level:.3g} the correction across "
            "them needs")


def pooled_words(own: str, dimension_id: str, pool_detection: str, pool_in_family: bool) -> str:
    """The words of a metric tested through its dimension's pool: its own reason, then the
    pool's detection."""
    if pool_in_family:
        return f"{own}; tested pooled with its dimension {dimension_id}, which {pool_detection}"
    return f"{own}; pooled with its dimension {dimension_id} it still {pool_detection}"
