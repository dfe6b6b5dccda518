"""The one gating path (pure): records -> a results document -> its decisions.

Two steps, both used by every front-end (the plugin, ``run``, ``gate``, ``merge``, ``diff``,
``report``, ``comment``, the job summary):

1. :func:`assemble` puts the records of a plan in plan order beside the plan's tests and the
   gate inputs: the thresholds document with every suite x metric resolved, the waivers, and a
   content hash of each team layer (:mod:`empath_gate.results.layers`);
2. :func:`decide_results` computes, from the document alone, the test-retest statistics, the
   regression against an optional baseline (per suite), the decision of every cell and of every
   suite check, and the summary. Given other thresholds or waivers (other layer files), it
   decides with them instead.

So a results file decides the same way wherever it is read: :func:`evaluate` is step 1 then 2.
The comparison with a baseline is in :mod:`empath_gate.results.comparison`, the per-suite
figures besides the cells in :mod:`empath_gate.results.suite_figures`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from empath_gate.results.cells import results_cells
from empath_gate.results.comparison import combine_reports, suite_regressions
from empath_gate.results.model import GateInputs, ItemInfo, Results, ResultsMetadata, RunRecord, Summary
from empath_gate.results.suite_figures import detector_figures, risk_timing, worst_case_gaps
from empath_gate.results.triage import triage_figures

if TYPE_CHECKING:
    from empath_gate.analysis.regression import RegressionReport
    from empath_gate.analysis.stats import CellStats
    from empath_gate.gate.decide import CellDecision, FailOn
    from empath_gate.instrument.models import Instrument, Thresholds, Waiver
    from empath_gate.plan.build import Plan
    from empath_gate.results.model import LayerInfo


def gate_inputs(instrument: Instrument, plan: Plan, layers: Sequence[LayerInfo] = ()) -> GateInputs:
    """What the gate decides with: the thresholds document, every (suite, metric) of ``plan``
    resolved, the instrument's metric order, and the team layers' hashes."""
    resolved: dict[str, dict[str, Any]] = {}
    for item in plan.items:
        per = resolved.setdefault(item.suite, {})
        if item.metric_id not in per:
            per[item.metric_id] = instrument.thresholds.resolve(item.metric_id, item.suite)
    from empath_gate.instrument.aliases import conversation_aliases

    aliases = {suite: conversation_aliases(instrument, suite) for suite in dict.fromkeys(resolved)}
    return GateInputs(
        aliases={suite: a for suite, a in aliases.items() if a},
        pairings=_pairings(instrument, plan),
        thresholds=instrument.thresholds,
        resolved=resolved,
        metric_order=tuple(m.id for m in instrument.metrics),
        layers=tuple(layers),
    )


def _pairings(instrument: Instrument, plan: Plan) -> dict[str, dict[str, str]]:
    """Per paired suite of ``plan`` (every one, even with no pair): seed id -> its cooperative
    persona id, for the seeds whose cooperative conversation is in the plan
    (:func:`~empath_gate.instrument.selection.cooperative_partner`)."""
    from empath_gate.instrument.selection import cooperative_partner, personas_by_locale

    by_locale = personas_by_locale(instrument.personas)
    out: dict[str, dict[str, str]] = {}
    for conv in plan.conversations:
        if not instrument.suite(conv.suite).personas.cooperative_pairing:
            continue
        pairs = out.setdefault(conv.suite, {})  # a paired suite always has the check
        partner = cooperative_partner(instrument.seed(conv.seed_id), by_locale)
        if partner is not None and partner.id == conv.persona_id:
            pairs[conv.seed_id] = conv.persona_id
    return out


def assemble(
    records: Sequence[RunRecord],
    *,
    plan: Plan,
    instrument: Instrument,
    metadata: ResultsMetadata,
    layers: Sequence[LayerInfo] = (),
) -> Results:
    """An undecided results document: ``plan``'s tests, the records of its transcripts in plan
    order (others are dropped), the gate inputs and the instrument's waivers."""
    order = {t.transcript_id: i for i, t in enumerate(plan.transcripts)}
    recs = sorted((r for r in records if r.transcript_id in order), key=lambda r: order[r.transcript_id])
    items = tuple(
        ItemInfo(
            id=i.id,
            suite=i.suite,
            conversation_id=i.conversation_id,
            seed_id=i.seed_id,
            persona_id=i.persona_id,
            metric_id=i.metric_id,
            dimension=i.dimension,
            locale=i.locale,
            label=i.label,
            critical=i.critical,
            skip=i.skip,
        )
        for i in plan.items
    )
    return Results(
        metadata=metadata,
        items=items,
        records=tuple(recs),
        waivers=instrument.waivers,
        gate=gate_inputs(instrument, plan, layers),
    )


def _decide_suites(
    results: Results,
    cells: Sequence[CellStats],
    thresholds: Thresholds,
    per_suite: dict[str, RegressionReport],
    regression: RegressionReport | None,
    waivers: Sequence[Waiver],
    fail_on: FailOn,
) -> tuple[list[CellDecision], list[str], list[str]]:
    """Every cell decided with its own suite's thresholds and comparison, in suite order, and the
    run-level infrastructure reasons and usage errors (each once)."""
    from empath_gate.gate.decide import decide

    conv_suite = {i.conversation_id: i.suite for i in results.items}
    decisions: list[CellDecision] = []
    infra: list[str] = []
    usage: list[str] = []
    for suite in results.metadata.suites:
        scells = [c for c in cells if conv_suite.get(c.conversation_id) == suite]
        if not scells:
            continue
        d = decide(scells, thresholds, suite_id=suite, regression=per_suite.get(suite, regression),
                   waivers=waivers, fail_on=fail_on)
        decisions.extend(d.cells)
        infra.extend(x for x in d.infrastructure_reasons if x not in infra)
        usage.extend(x for x in d.usage_errors if x not in usage)
    return decisions, infra, usage


def _with_skipped(results: Results, decisions: list[CellDecision]) -> list[CellDecision]:
    """``decisions`` plus one ``skipped`` decision (with the item's reason) per test the run's
    profile could not run, in test order; ``decisions`` itself when no test was skipped."""
    from empath_gate.gate.decide import skipped_decision

    if not any(i.skip is not None for i in results.items):
        return decisions
    decided = {(d.conversation_id, d.metric_id): d for d in decisions}
    out: list[CellDecision] = []
    seen: set[tuple[str, str]] = set()
    for i in results.items:
        key = (i.conversation_id, i.metric_id)
        if key in seen:
            continue
        seen.add(key)
        if i.skip is not None:
            out.append(skipped_decision(i.conversation_id, i.seed_id, i.persona_id, i.metric_id, i.skip))
        elif key in decided:
            out.append(decided.pop(key))
    return out + list(decided.values())


def decide_results(
    results: Results,
    *,
    baseline: Results | None = None,
    regression: RegressionReport | None = None,
    thresholds: Thresholds | None = None,
    waivers: Sequence[Waiver] | None = None,
    fail_on: str | None = None,
) -> Results:
    """Statistics, regression, decisions and summary of ``results`` (module docstring).

    ``thresholds``/``waivers``: other gate inputs to decide with (default: the recorded ones);
    ``fail_on`` defaults to the file's. ``baseline`` recomputes the comparison per suite;
    without it ``regression`` (e.g. the file's own) gates as it is. Raises ConfigError when the
    document records no gate inputs and none are given (a file of schema version 1).
    """
    from empath_gate.analysis.stats import aggregate_metric
    from empath_gate.errors import ConfigError
    from empath_gate.gate.checks import suite_checks
    from empath_gate.gate.decide import STATUSES

    gate = results.gate
    th = thresholds if thresholds is not None else (gate.thresholds if gate is not None else None)
    if th is None:
        raise ConfigError(
            "this results file records no thresholds (schema version 1): give the thresholds "
            "and suites files of the run (--thresholds, --suites-dir)"
        )
    chosen: FailOn = fail_on or results.metadata.fail_on  # type: ignore[assignment]
    ws = tuple(results.waivers if waivers is None else waivers)
    cells = results_cells(results, th)
    per_suite = suite_regressions(results, cells, baseline, th) if baseline is not None else {}
    if baseline is not None:
        several = len(per_suite) > 1
        named = [
            r.model_copy(update={"reasons": tuple(f"{s}: {x}" for x in r.reasons)}) if several else r
            for s, r in per_suite.items()
        ]
        regression = combine_reports(named)
    decisions, infra, usage = _decide_suites(results, cells, th, per_suite, regression, ws, chosen)
    decisions = _with_skipped(results, decisions)
    timing = risk_timing(results)
    detector = detector_figures(results)
    gaps = worst_case_gaps(results, cells)
    triage = triage_figures(results)
    from empath_gate.results.dynamics import results_dynamics

    dynamics = results_dynamics(results)
    checks = suite_checks(results, cells, th, timing, detector, gaps, triage, dynamics=dynamics,
                          regression=regression)
    counts: dict[str, int] = dict.fromkeys(STATUSES, 0)
    for dc in decisions:
        counts[dc.status] += 1
    check_counts = dict.fromkeys(counts, 0)
    for chk in checks:
        check_counts[chk.status] += 1
    order = gate.metric_order if gate is not None else ()
    present = {c.metric_id for c in cells}
    metric_ids = [m for m in order if m in present] + sorted(present - set(order))
    summary = _summary(results, cells, counts, metric_ids, infra, usage)
    checks_bad = bool(check_counts["failed"] or check_counts["error"] or check_counts.get("incomplete"))
    summary = summary.model_copy(
        update={"check_counts": check_counts, "passed": summary.passed and not checks_bad}
    )
    return results.model_copy(
        update={
            "cells": tuple(cells),
            "metrics": tuple(aggregate_metric(m, [c for c in cells if c.metric_id == m]) for m in metric_ids),
            "decisions": tuple(decisions),
            "checks": tuple(checks),
            "worst_case_gaps": gaps,
            "dynamics": dynamics,
            "regressions": regression,
            "risk_timing": timing,
            "detector": detector,
            "triage": triage,
            "waivers": ws,
            "summary": summary,
            "reliability": _reliability(results.records, cells),
            "metadata": results.metadata.model_copy(update={"fail_on": chosen}),
        }
    )


def _summary(
    results: Results,
    cells: Sequence[CellStats],
    counts: dict[str, int],
    metric_ids: Sequence[str],
    infra: Sequence[str],
    usage: Sequence[str],
) -> Summary:
    recs = results.records
    failures: dict[str, int] = {}
    for r in recs:
        for v in r.verdicts:
            if v.failure is not None:
                failures[v.failure.reason] = failures.get(v.failure.reason, 0) + 1
    criteria_only = tuple(
        m
        for m in metric_ids
        if any(c.n_criteria_only for c in cells if c.metric_id == m)
        and not any(c.n_judged for c in cells if c.metric_id == m)
    )
    return Summary(
        passed=not (counts["failed"] or counts["error"] or counts.get("incomplete") or infra or usage),
        counts=counts,
        judge_failures=failures,
        target_filtered=sum(r.target_filtered for r in recs),
        transcripts=sum(1 for r in recs if r.status != "stopped"),
        transcripts_failed=sum(1 for r in recs if r.status not in ("complete", "stopped", "pending")),
        transcripts_pending=sum(1 for r in recs if r.status == "pending"),
        transcripts_stopped=sum(1 for r in recs if r.status == "stopped"),
        criteria_only_metrics=criteria_only,
        infrastructure_reasons=tuple(infra),
        usage_errors=tuple(usage),
    )


def _reliability(records: Sequence[RunRecord], cells: Sequence[CellStats]) -> dict[str, Any]:
    """Test-retest reliability per metric (``analysis.reliability.reliability_from_records``)."""
    from empath_gate.analysis.reliability import reliability_from_records

    return reliability_from_records(records, cells)


def evaluate(
    records: Sequence[RunRecord],
    *,
    plan: Plan,
    instrument: Instrument,
    metadata: ResultsMetadata,
    baseline: Results | None = None,
    fail_on: str = "both",
    regression: RegressionReport | None = None,
    layers: Sequence[LayerInfo] = (),
) -> Results:
    """Pure: :func:`assemble` then :func:`decide_results` with the instrument's thresholds and
    waivers. Records of transcripts outside ``plan`` do not count."""
    draft = assemble(
        records,
        plan=plan,
        instrument=instrument,
        metadata=metadata.model_copy(update={"fail_on": fail_on}),
        layers=layers,
    )
    return decide_results(draft, baseline=baseline, regression=regression, fail_on=fail_on)
