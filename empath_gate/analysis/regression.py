"""Candidate vs baseline per metric, with statistics that can fire at the suite's own size.

A regression is judged on the **runs as replicates** (:mod:`empath_gate.analysis.replicates`):
each conversation (seed x persona) is a stratum and its runs are repeated measurements, paired
by run index in fixed-script mode, unpaired with an LLM auditor. Only runs both sides have are
used (a 5-run baseline against a 3-run candidate compares runs 0-2), so a baseline with another
run count stays comparable.

Per metric:

1. **Effect** = mean over the paired conversations of each conversation's change (candidate -
   baseline, points on the 1-10 scale; paired: mean of the run differences). ``se`` and
   ``df``: the fixed-effects (run-to-run) standard error with Welch-Satterthwaite degrees of
   freedom (:func:`~empath_gate.analysis.replicates.fixed_effect_se`); the 95 % interval is
   ``effect +- t(0.975, df) * se``.
2. **p-value**: one-sided (a drop), exact permutation test of runs within conversations
   (:mod:`empath_gate.analysis.permutation`): sign flips of run pairs in fixed-script mode,
   relabelling of a conversation's runs otherwise. ``min_p`` is the smallest p-value those
   runs could give.
3. **False discovery rate** across the suite's non-critical metrics at ``Thresholds.alpha``
   (:mod:`empath_gate.analysis.multiplicity`): the family is chosen by Tarone's rule on
   ``min_p``; a non-critical metric left out of it ("too small") is **pooled** with the other
   too-small metrics of its dimension (one test on the runs' dimension scores, a
   :class:`DimensionRegression`), and the pools compete for the family by the same rule
   (a metric a later round leaves out joins its dimension's pool); then weighted
   Benjamini-Hochberg (weights proportional to run replicates per metric a test speaks for).
   A test is ``flagged`` when its adjusted p <= alpha and its effect is a drop. A pooled
   discovery is about the dimension: it marks the pool's metrics whose own change is a drop.
   The suite's dynamics shares, when gated (:class:`SideTest`, tested on per-conversation
   outcomes paired by conversation: :mod:`empath_gate.analysis.dynamics.paired`), join the same
   family by the same rule; one is flagged when its adjusted p <= alpha (its p is already
   one-sided toward worse).
4. **Critical metrics use non-inferiority**, outside that family: they pass only when the
   interval's lower bound is above ``-max_drop`` (strictly); without a standard error they
   fail closed. Each critical metric is its own safety requirement, so no multiplicity
   adjustment applies (an intersection-union test: Berger 1982, *Technometrics* 24:295-300).
5. **Minimum detectable drop** ``mdd`` (never 0): non-critical, ``(t(1-alpha, df) +
   t(0.80, df)) * se``, the drop the one-sided test finds with 80 % power before the FDR
   correction (which only raises it); critical, ``max_drop - (t(0.975, df) - t(0.80, df)) *
   se``, the drop that fails non-inferiority 80 % of the time. ``None`` when no such drop
   exists, or when a non-critical test is outside the family (it can flag nothing), and
   ``detection`` says why in words ("cannot detect a regression on X with 1 conversation x
   3 runs: ..."); reports show ``detection`` verbatim. A floor on the run-to-run variance
   (the rounding of integer scores) keeps ``se``, hence ``mdd``, above 0.

``regressed`` is the gating outcome: ``not non_inferior`` for critical metrics; ``flagged``
for non-critical metrics in the family; for a metric tested through its dimension pool, the
pool is flagged and the metric's own effect is a drop. Always False when the two runs are not
comparable (:mod:`empath_gate.analysis.comparability`: per suite, the judge model and the
content hashes of what the suite uses; ``comparable=False`` with the reasons). Conversations
and metrics present on one side only are listed, never failed. :class:`CellChange` gives each
conversation x metric's descriptive change on the shared runs (no test), which feeds the
worst-conversations list.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from empath_gate.analysis.base import paused_gc
from empath_gate.analysis.comparability import comparability, comparability_note
from empath_gate.analysis.multiplicity import reaches, tarone_family, weighted_bh
from empath_gate.analysis.regression_figures import Figures, detection_words, figures, pooled_words
from empath_gate.analysis.regression_models import (
    BaselineView,
    CellChange,
    DimensionRegression,
    MetricRegression,
    RegressionReport,
    RunMetadata,
    SideTest,
    SideTestResult,
)
from empath_gate.analysis.replicates import Scores, build_replicates, shared_scores
from empath_gate.analysis.stats import CellStats
from empath_gate.instrument.models import ResolvedThresholds, Thresholds

__all__ = [
    "BaselineView",
    "CellChange",
    "DimensionRegression",
    "MetricRegression",
    "RegressionReport",
    "RunMetadata",
    "SideTest",
    "SideTestResult",
    "comparability",
    "comparability_note",
    "compare",
]


def _mean(values: Sequence[float]) -> float | None:
    return sum(values) / len(values) if values else None


def _index(view: BaselineView, side: str) -> dict[tuple[str, str], CellStats]:
    out: dict[tuple[str, str], CellStats] = {}
    for c in view.cells:
        key = (c.conversation_id, c.metric_id)
        if key in out:
            raise ValueError(f"{side}: two cells for {key[0]} / {key[1]}")
        out[key] = c
    return out


def compare(
    candidate: BaselineView,
    baseline: BaselineView,
    thresholds: Thresholds,
    *,
    suite_id: str | None = None,
    side_tests: Sequence[SideTest] = (),
) -> RegressionReport:
    """Compare a candidate with a baseline per metric (module docstring).

    ``side_tests`` (the suite's dynamics shares, already tested) join the false-discovery
    family of the non-critical metrics: Tarone's rule on their ``min_p`` decides whether they
    are in it, and the weighted Benjamini-Hochberg step adjusts them with the metrics (weight:
    their ``information``); a side test without a p-value stays out. Their results are the
    report's ``side_tests``.

    Thresholds supply ``alpha`` (FDR level) and, per metric resolved for ``suite_id``,
    ``critical`` and ``max_drop``. Dimensions come from both views (the candidate's win).
    Pure and deterministic (no resampling). Raises ValueError when a side holds two cells for
    the same conversation x metric.
    """
    with paused_gc():
        return _compare(candidate, baseline, thresholds, suite_id=suite_id, side_tests=side_tests)


@dataclass(frozen=True)
class _Paired:
    """A conversation x metric on both sides, with its judged scores on the shared runs."""

    conversation_id: str
    cand: CellStats
    base: CellStats
    cand_scores: Scores
    base_scores: Scores

    def change(self) -> CellChange:
        c, b = self.cand_scores, self.base_scores
        cm = sum(c.values()) / len(c) if c else None
        bm = sum(b.values()) / len(b) if b else None
        cell = self.cand
        return CellChange.trusted(
            conversation_id=cell.conversation_id, seed_id=cell.seed_id, persona_id=cell.persona_id,
            metric_id=cell.metric_id, baseline_mean=bm, candidate_mean=cm,
            change=None if cm is None or bm is None else cm - bm,
        )


@dataclass(frozen=True)
class _Plan:
    """What every test of one comparison shares."""

    alpha: float
    shared_runs: int
    paired: bool
    comparable: bool

    def run(self, conversations: Sequence[tuple[str, Sequence[tuple[Scores, Scores]]]],
            critical: bool = False, max_drop: float = 0.0) -> Figures:
        rep = build_replicates(conversations, paired=self.paired)
        return figures(rep, alpha=self.alpha, critical=critical, max_drop=max_drop)


Key = tuple[str, str]
"""A family member: ``("metric", id)``, ``("dimension", id)`` or ``("side", test id)``."""


@dataclass(frozen=True)
class _Family:
    """The FDR family: its members, the Tarone level, and per member (adjusted p, weight)."""

    members: tuple[Key, ...]
    level: float
    adjusted: dict[Key, tuple[float, float]]

    def outcome(self, key: Key, f: Figures, alpha: float) -> tuple[float | None, float | None, bool]:
        """(adjusted p, weight, flagged) of a test; ``None, None, False`` outside the family."""
        got = self.adjusted.get(key)
        if got is None:
            return None, None, False
        return got[0], got[1], reaches(got[0], alpha) and f.effect is not None and f.effect < 0


def _pool_figures(plan: _Plan, metrics: Sequence[str], pairs: Mapping[str, Sequence[_Paired]]) -> Figures:
    """The pooled test of ``metrics`` on each run's dimension score."""
    by_conv: dict[str, list[tuple[Scores, Scores]]] = {}
    for m in metrics:
        for pc in pairs[m]:
            by_conv.setdefault(pc.conversation_id, []).append((pc.cand_scores, pc.base_scores))
    return plan.run(list(by_conv.items()))


def _select(
    plan: _Plan,
    figs: Mapping[str, Figures],
    noncritical: Sequence[str],
    dims: Mapping[str, str],
    pairs: Mapping[str, Sequence[_Paired]],
    side: Mapping[Key, SideTest],
) -> tuple[dict[str, tuple[str, ...]], dict[str, Figures], tuple[Key, ...], float]:
    """Tarone's family with dimension pools (module docstring, step 3): pool members per
    dimension, pool figures, the family and its level.

    A metric is *too small* when Tarone's rule leaves it out of the family; the too-small
    metrics of a dimension (two or more, each with a paired conversation) form its pool, and
    the rule runs again over the metrics still alone and the pools. A metric that a later round
    leaves out becomes too small in turn, so the rounds end (the set only grows) with every
    metric either in the family, in a pool, or undetectable. The ``side`` tests compete in
    every round and are never pooled."""
    small: set[str] = set()
    cache: dict[tuple[str, ...], Figures] = {}
    while True:
        members: dict[str, list[str]] = {}
        for m in noncritical:
            if m in small and m in dims and figs[m].n_conversations:
                members.setdefault(dims[m], []).append(m)
        pools = {d: tuple(ms) for d, ms in members.items() if len(ms) >= 2}
        for ms in pools.values():
            if ms not in cache:
                cache[ms] = _pool_figures(plan, ms, pairs)
        tests: dict[Key, float] = {}
        for m in noncritical:
            p = figs[m].min_p
            if m not in small and p is not None:
                tests[("metric", m)] = p
        for d, ms in pools.items():
            p = cache[ms].min_p
            if p is not None:
                tests[("dimension", d)] = p
        for k, t in side.items():
            assert t.min_p is not None
            tests[k] = t.min_p
        family, level = tarone_family(tests, plan.alpha)
        left_out = {k[1] for k in tests if k[0] == "metric" and k not in family}
        if not left_out:
            return pools, {d: cache[ms] for d, ms in pools.items()}, family, level
        small |= left_out


def _p_or_one(p: float | None) -> float:
    return 1.0 if p is None else p


def _family(
    tests: Mapping[Key, Figures],
    members: tuple[Key, ...],
    level: float,
    pools: Mapping[str, tuple[str, ...]],
    side: Mapping[Key, SideTest],
) -> _Family:
    """The weighted Benjamini-Hochberg adjustment of the family ``members`` of ``tests`` and
    ``side``; a test's information is its run replicates per metric it speaks for (a pool: /
    members; a side test: its ``information``)."""
    p_values: dict[Key, float] = {}
    information: dict[Key, float] = {}
    for k in members:
        if k in side:
            p_values[k], information[k] = _p_or_one(side[k].p_value), side[k].information
        else:
            p_values[k] = _p_or_one(tests[k].p_value)
            information[k] = tests[k].n_runs / (len(pools[k[1]]) if k[0] == "dimension" else 1)
    adjusted = weighted_bh(p_values, information)
    return _Family(members=members, level=level, adjusted=adjusted)


def _dimension_results(
    plan: _Plan, family: _Family, members: Mapping[str, tuple[str, ...]], pool_figs: Mapping[str, Figures]
) -> tuple[DimensionRegression, ...]:
    out: list[DimensionRegression] = []
    for d, f in pool_figs.items():
        key = ("dimension", d)
        p_adj, weight, flagged = family.outcome(key, f, plan.alpha)
        words = detection_words(
            f, name=f"dimension {d} pooled ({', '.join(members[d])})", alpha=plan.alpha,
            in_family=key in family.members, level=family.level, family_size=len(family.members),
        )
        fields = f.fields()
        if key not in family.members:
            fields["mdd"] = None  # it cannot flag a drop at all
        out.append(DimensionRegression.model_validate({
            **fields, "dimension_id": d, "metric_ids": tuple(members[d]), "p_adjusted": p_adj,
            "weight": weight, "in_family": key in family.members, "flagged": flagged, "detection": words,
        }))
    return tuple(out)


def _metric_result(
    plan: _Plan,
    family: _Family,
    metric: str,
    f: Figures,
    t: ResolvedThresholds,
    pool: DimensionRegression | None,
    side_means: tuple[float | None, float | None],
    dimension: str | None,
) -> MetricRegression:
    key = ("metric", metric)
    p_adj, weight, flagged = family.outcome(key, f, plan.alpha)
    in_family = key in family.members
    words = detection_words(f, name=metric, alpha=plan.alpha, in_family=in_family, level=family.level,
                            family_size=len(family.members), critical=t.critical, max_drop=t.max_drop)
    non_inferior: bool | None = None
    if t.critical:
        if f.effect is not None:
            non_inferior = f.ci_low is not None and f.ci_low > -t.max_drop
        regressed = plan.comparable and non_inferior is False
    elif pool is not None:
        words = pooled_words(words, pool.dimension_id, pool.detection, pool.in_family)
        regressed = plan.comparable and pool.flagged and f.effect is not None and f.effect < 0
    else:
        regressed = plan.comparable and flagged
    fields = f.fields()
    if not t.critical and not in_family:
        fields["mdd"] = None  # it cannot flag a drop alone
    return MetricRegression.model_validate({
        **fields, "metric_id": metric, "critical": t.critical, "dimension": dimension,
        "baseline_mean": side_means[0], "candidate_mean": side_means[1], "max_drop": t.max_drop,
        "non_inferior": non_inferior, "pooled_in": pool.dimension_id if pool is not None else None,
        "p_adjusted": p_adj, "weight": weight, "in_family": in_family, "flagged": flagged,
        "regressed": regressed, "detection": words,
    })


def _detectable(m: MetricRegression, dimensions: Sequence[DimensionRegression]) -> bool:
    """A non-critical metric can be detected alone or through a pool in the family."""
    if m.in_family:
        return True
    return any(d.in_family and d.dimension_id == m.pooled_in for d in dimensions)


def _side_results(
    side_tests: Sequence[SideTest], family: _Family, alpha: float
) -> tuple[SideTestResult, ...]:
    """Each side test with its family membership, adjusted p and flag (``compare``)."""
    out = []
    for t in side_tests:
        got = family.adjusted.get(("side", t.test_id))
        detection = t.detection
        if got is None and detection is None:
            detection = (f"cannot be a discovery in this family: the smallest p-value {t.paired} paired "
                         f"conversations can give ({_p_or_one(t.min_p):.3g}) is above the family's level "
                         f"{family.level:.3g}")
        out.append(SideTestResult(
            **{**t.model_dump(), "detection": detection}, in_family=got is not None,
            p_adjusted=got[0] if got else None, weight=got[1] if got else None,
            flagged=got is not None and reaches(got[0], alpha),
        ))
    return tuple(out)


def _compare(
    candidate: BaselineView, baseline: BaselineView, thresholds: Thresholds, *, suite_id: str | None,
    side_tests: Sequence[SideTest] = (),
) -> RegressionReport:
    reasons = comparability(candidate.metadata, baseline.metadata)
    runs_c, runs_b = candidate.metadata.run_count, baseline.metadata.run_count
    plan = _Plan(alpha=thresholds.alpha, shared_runs=min(runs_c, runs_b), comparable=not reasons,
                 paired=candidate.metadata.fixed_script and baseline.metadata.fixed_script)
    dims = {**baseline.dimensions, **candidate.dimensions}
    cand, base = _index(candidate, "candidate"), _index(baseline, "baseline")
    cand_convs = dict.fromkeys(c.conversation_id for c in candidate.cells)
    base_convs = dict.fromkeys(c.conversation_id for c in baseline.cells)
    cand_metrics = list(dict.fromkeys(c.metric_id for c in candidate.cells))
    base_metrics = list(dict.fromkeys(c.metric_id for c in baseline.cells))
    shared = [m for m in cand_metrics if m in base_metrics]

    paired: list[_Paired] = []
    pairs: dict[str, list[_Paired]] = {m: [] for m in shared}
    for (conv, metric), c in cand.items():
        b = base.get((conv, metric))
        if b is not None:
            p = _Paired(conv, c, b, shared_scores(c, plan.shared_runs), shared_scores(b, plan.shared_runs))
            paired.append(p)
            pairs[metric].append(p)
    resolved = {m: thresholds.resolve(m, suite_id) for m in shared}
    figs = {m: plan.run([(p.conversation_id, [(p.cand_scores, p.base_scores)]) for p in pairs[m]],
                        resolved[m].critical, resolved[m].max_drop) for m in shared}
    noncritical = [m for m in shared if not resolved[m].critical]
    side: dict[Key, SideTest] = {
        ("side", t.test_id): t for t in side_tests if t.p_value is not None and t.min_p is not None
    }
    members, pool_figs, chosen, level = _select(plan, figs, noncritical, dims, pairs, side)
    tests: dict[Key, Figures] = {("metric", m): figs[m] for m in noncritical}
    tests.update({("dimension", d): f for d, f in pool_figs.items()})
    family = _family(tests, chosen, level, members, side)
    dimensions = _dimension_results(plan, family, members, pool_figs)
    pool_of = {m: d for d in dimensions for m in d.metric_ids}

    metrics: list[MetricRegression] = []
    for m in shared:
        c_means = [sum(p.cand_scores.values()) / len(p.cand_scores) for p in pairs[m] if p.cand_scores]
        b_means = [sum(p.base_scores.values()) / len(p.base_scores) for p in pairs[m] if p.base_scores]
        metrics.append(_metric_result(plan, family, m, figs[m], resolved[m], pool_of.get(m),
                                      (_mean(b_means), _mean(c_means)), dims.get(m)))
    return RegressionReport(
        comparable=plan.comparable,
        reasons=reasons,
        comparability_note=comparability_note(candidate.metadata, baseline.metadata),
        alpha=plan.alpha,
        paired_by_run=plan.paired,
        shared_runs=plan.shared_runs if runs_c != runs_b else None,
        family_size=len(family.members),
        family_level=family.level,
        metrics=tuple(metrics),
        dimensions=dimensions,
        cells=tuple(p.change() for p in paired),
        added_conversations=tuple(sorted(c for c in cand_convs if c not in base_convs)),
        removed_conversations=tuple(sorted(c for c in base_convs if c not in cand_convs)),
        added_metrics=tuple(sorted(m for m in cand_metrics if m not in base_metrics)),
        removed_metrics=tuple(sorted(m for m in base_metrics if m not in cand_metrics)),
        undetectable=tuple(
            m.metric_id for m in metrics if not m.critical and not _detectable(m, dimensions)
        ),
        side_tests=_side_results(side_tests, family, plan.alpha),
    )
