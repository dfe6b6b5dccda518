"""Sequential gating (pure parts): the exact rule never changes a decision, the sequential rule's
floors and fail-closed cases, and stopped runs as not run in the results, the diff and the
test-retest figures."""

from __future__ import annotations

import itertools
import random
from collections.abc import Sequence

import pytest

from empath_gate.analysis.stats import compute_cell_stats
from empath_gate.gate.decide import decide_cell
from empath_gate.gate.sequential import (
    CRITICAL_FLOOR,
    SETTLED_EXACT,
    STOPPED,
    ConversationLimits,
    conversation_limits,
    settle_reason,
    stop_rule,
)
from empath_gate.gate.settle import MAX_ENUMERATED, exact_settled, reversal_probability
from empath_gate.instrument.loader import load_instrument
from empath_gate.instrument.models import Instrument, ResolvedThresholds
from empath_gate.judging.verdict import JudgeFailure, MetricVerdict
from empath_gate.plan import build_plan
from empath_gate.report.markdown import render_markdown
from empath_gate.results import Results, ResultsMetadata, RunRecord
from empath_gate.results.evaluate import evaluate


@pytest.fixture(scope="module")
def instrument() -> Instrument:
    return load_instrument()


def _status(scores: Sequence[int], t: ResolvedThresholds, metric: str = "m") -> str:
    verdicts = [
        MetricVerdict(metric_id=metric, transcript_id=f"c-r{i}", status="scored", score=s, raw_score=s)
        for i, s in enumerate(scores)
    ]
    stats = compute_cell_stats(verdicts, min_mean=t.min_mean, seed_id="c", persona_id="p",
                               critical=t.critical, expected_runs=len(scores))
    return decide_cell(stats, t).status


def _draw(rng: random.Random, n: int) -> list[int]:
    """Scores as runs give them: mostly near 8-9, sometimes anywhere on the scale."""
    mean = rng.uniform(5, 10)
    return [rng.randint(1, 10) if rng.random() < 0.25 else max(1, min(10, round(rng.gauss(mean, 1.2))))
            for _ in range(n)]


def test_the_exact_rule_never_settles_a_decision_the_remaining_runs_could_change(
    instrument: Instrument,
) -> None:
    """Property: whenever the exact rule settles k scores of N, every completion (each remaining
    run 1-10) gives the gate's decision on the k scores; checked exhaustively on random vectors."""
    # the gate's decision depends on the order of the scores only through its messages
    rng = random.Random(19)
    settled = 0
    for metric in ("crisis_detection", "empathy_vs_manipulation"):
        t = instrument.thresholds.resolve(metric, "crisis")
        for _ in range(300):
            n = rng.randint(2, 5)
            scores = _draw(rng, n)
            for k in range(1, n):
                if not exact_settled(scores[:k], n - k, t, "both"):
                    continue
                settled += 1
                now = _status(scores[:k], t, metric)
                # the decision reads the scores as a multiset: each multiset of the rest once
                for rest in itertools.combinations_with_replacement(range(1, 11), n - k):
                    assert _status([*scores[:k], *rest], t, metric) == now, (scores[:k], rest)
    assert settled > 20  # the property was exercised, not vacuous


def test_the_exact_rule_settles_what_nothing_undoes_and_never_a_pass_a_low_run_could_break(
    instrument: Instrument,
) -> None:
    t = instrument.thresholds.resolve("crisis_detection", "crisis")  # min_run 6, max_range 3
    assert exact_settled([9, 9, 2], 2, t, "both")  # below min_run: failed whatever comes
    assert not exact_settled([10, 10, 10], 2, t, "both")  # a 1 could still fail it
    assert exact_settled([10, 10, 10], 2, t, "regression")  # thresholds do not gate
    assert exact_settled([10, 10, 10], 0, t, "both")


def test_past_the_enumerated_runs_only_a_failure_no_run_can_undo_settles(instrument: Instrument) -> None:
    t = instrument.thresholds.resolve("crisis_detection", "crisis")
    many = MAX_ENUMERATED + 1
    assert exact_settled([9, 9, 2], many, t, "both") and exact_settled([6, 10, 10], many, t, "both")
    assert not exact_settled([10, 10, 10], many, t, "both")
    assert not exact_settled([7, 7, 7], many, t, "both")  # a low mean can still be rescued
    assert reversal_probability([10, 10, 10], many, t, "both") == 1.0
    assert reversal_probability([9, 9, 2], many, t, "both") == 0.0


def test_reversal_probability_is_small_for_steady_high_runs_and_large_at_the_pass_mark(
    instrument: Instrument,
) -> None:
    t = instrument.thresholds.resolve("crisis_detection", "crisis")  # min_mean 8
    steady = reversal_probability([10, 10, 10], 2, t, "both")
    edge = reversal_probability([8, 8, 8], 2, t, "both")
    assert 0 < steady < 0.05 < edge
    assert reversal_probability([9, 9, 2], 2, t, "both") == 0  # already failed for good
    assert reversal_probability([10, 10, 10], 0, t, "both") == 0


def _record(conv: str, run: int, scores: dict[str, int | None], *, status: str = "complete",
            suite: str = "crisis", fallbacks: int = 0) -> RunRecord:
    tid = f"{conv}-r{run}"
    verdicts = tuple(
        MetricVerdict(metric_id=m, transcript_id=tid, status="scored", score=s, raw_score=s) if s is not None
        else MetricVerdict(metric_id=m, transcript_id=tid, status="judge_failure",
                           failure=JudgeFailure(reason="parse_error", detail="prose"))
        for m, s in scores.items()
    ) if status == "complete" else ()
    return RunRecord(transcript_id=tid, conversation_id=conv, suite=suite, seed_id=conv, persona_id="p",
                     locale="en-US", run=run, status=status, verdicts=verdicts,
                     auditor_turns=4 if fallbacks else 0, auditor_fallbacks=fallbacks)


def _limits(instrument: Instrument, *metrics: str, runs: int = 5) -> ConversationLimits:
    return ConversationLimits(runs=runs, metrics=tuple((m, instrument.thresholds.resolve(m, "crisis"))
                                                       for m in metrics))


def test_a_critical_metric_never_settles_before_three_judged_runs(instrument: Instrument) -> None:
    lim = _limits(instrument, "crisis_detection")
    recs = [_record("c", r, {"crisis_detection": 10}) for r in range(4)]
    assert settle_reason(lim, recs[:CRITICAL_FLOOR - 1], mode="sequential", error_rate=0.5) is None
    reason = settle_reason(lim, recs[:CRITICAL_FLOOR], mode="sequential", error_rate=0.05)
    assert reason is not None and reason.startswith("settled: stochastic curtailment")
    # a failed run settles nothing before the floor either, then settles exactly
    low = [_record("c", 0, {"crisis_detection": 2}), *recs[1:]]
    assert settle_reason(lim, low[:2], mode="exact") is None
    assert settle_reason(lim, low[:3], mode="exact") == SETTLED_EXACT


def test_a_non_critical_metric_waits_for_min_judged_runs(instrument: Instrument) -> None:
    t = instrument.thresholds.resolve("empathy_vs_manipulation", "crisis")
    lim = _limits(instrument, "empathy_vs_manipulation")
    recs = [_record("c", r, {"empathy_vs_manipulation": 2}) for r in range(3)]
    assert settle_reason(lim, recs[: t.min_judged_runs - 1], mode="exact") is None
    assert settle_reason(lim, recs[: t.min_judged_runs], mode="exact") == SETTLED_EXACT


@pytest.mark.parametrize("bad", ["judge_failure", "error", "degraded"])
def test_missing_evidence_settles_nothing(instrument: Instrument, bad: str) -> None:
    lim = _limits(instrument, "crisis_detection")
    recs = [_record("c", r, {"crisis_detection": 2}) for r in range(3)]  # failed for good...
    if bad == "judge_failure":
        recs[1] = _record("c", 1, {"crisis_detection": None})
    elif bad == "error":
        recs[1] = _record("c", 1, {}, status="error")
    else:
        recs[1] = _record("c", 1, {"crisis_detection": 2}, fallbacks=4)
    for mode in ("exact", "sequential"):
        assert settle_reason(lim, recs, mode=mode) is None  # ...but one run is no evidence


def test_every_metric_of_the_conversation_must_settle(instrument: Instrument) -> None:
    lim = _limits(instrument, "crisis_detection", "risk_trajectory_monitoring")
    recs = [_record("c", r, {"crisis_detection": 2, "risk_trajectory_monitoring": 8}) for r in range(3)]
    assert settle_reason(lim, recs, mode="exact") is None
    rule = stop_rule({"c": lim}, mode="exact")
    assert rule is not None and rule("c", recs) is None and rule("other", recs) is None
    assert stop_rule({"c": lim}, mode="off") is None


def test_a_baseline_holds_its_metrics_conversations_for_the_runs_the_comparison_uses(
    instrument: Instrument,
) -> None:
    plan = build_plan(instrument, ["crisis"], runs=5)
    base_plan = build_plan(instrument, ["crisis"], runs=3)
    baseline = Results(metadata=_metadata(base_plan, instrument), items=evaluate(
        [], plan=base_plan, instrument=instrument, metadata=_metadata(base_plan, instrument)).items)
    with_base = conversation_limits(plan, instrument, baseline=baseline)
    assert {lim.floor for lim in with_base.values()} == {3}  # min(5, the baseline's 3)
    assert {lim.floor for lim in conversation_limits(plan, instrument).values()} == {0}
    no_gate = conversation_limits(plan, instrument, baseline=baseline, fail_on="threshold")
    assert {lim.floor for lim in no_gate.values()} == {0}


def _metadata(plan: object, instrument: Instrument) -> ResultsMetadata:
    from empath_gate.plan import Plan

    assert isinstance(plan, Plan)
    return ResultsMetadata(tool_version="0", instrument_version=instrument.version, suites=plan.suites,
                           plan_id=plan.plan_id, runs=plan.runs, target="openai/bot", auditor="scripted",
                           started_at="2026-01-01T00:00:00+00:00")


def test_stopped_runs_are_not_run_in_the_results_the_diff_and_test_retest(instrument: Instrument) -> None:
    plan = build_plan(instrument, ["crisis"], runs=5)
    metrics_for = plan.metrics_for()
    first = next(c for c in plan.conversations if "crisis_detection" in c.metric_ids)
    records = []
    for t in plan.transcripts:
        conv = plan.conversation(t.conversation_id)
        stops = conv.conversation_id == first.conversation_id or "role_adherence" in conv.metric_ids
        if t.run >= 3 and stops:
            records.append(RunRecord(transcript_id=t.transcript_id, conversation_id=conv.conversation_id,
                                     suite=conv.suite, seed_id=conv.seed_id, persona_id=conv.persona_id,
                                     locale=conv.locale, run=t.run, status=STOPPED, error=SETTLED_EXACT))
            continue
        scores: dict[str, int | None] = dict.fromkeys(metrics_for[conv.conversation_id], 10)
        rec = _record(conv.conversation_id, t.run, scores, suite=conv.suite)
        records.append(rec.model_copy(update={"seed_id": conv.seed_id, "persona_id": conv.persona_id}))
    res = evaluate(records, plan=plan, instrument=instrument, metadata=_metadata(plan, instrument))
    mine = [c for c in res.cells if c.conversation_id == first.conversation_id]
    assert mine and all(c.n_runs == 3 and c.n_missing == 0 and c.n_judged == 3 for c in mine)
    assert all(d.status == "passed" for d in res.decisions)  # not run: never an error
    stopped = sum(1 for r in records if r.status == STOPPED)
    assert res.summary.transcripts_stopped == stopped > 2 and res.summary.transcripts_failed == 0
    assert res.summary.passed
    rel = res.reliability
    assert rel is not None and rel["runs_stopped"] == stopped and rel["runs_used"] == len(records) - stopped
    diff = render_markdown(res)
    row = next(line for line in diff.splitlines() if "`role_adherence`" in line)
    assert "3 of 5 (stopped: settled)" in row
    assert "3–5 of 5 (stopped: settled)" in diff  # a metric whose conversations ran 3 and 5 runs
    assert f"{stopped} runs not started: stopped as settled" in diff

