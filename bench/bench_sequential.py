"""Sequential gating on simulated scores: calls saved and decisions changed, per mode.

Drives the real stop rule (``empath_gate.gate.sequential.settle_reason``, run by run as the
runner asks it) and the real gate (``compute_all_cell_stats`` + ``decide`` with the shipped
thresholds) over the crisis suite's plan at N runs. Scores are drawn per test (conversation x
metric): a true mean uniform in [MEAN_LOW, MEAN_HIGH], each run rounded from a normal of SD 1
and clipped to 1-10, and with probability SWING a run that swings anywhere from 2 to 10 (the
run-to-run picture EMPATH's test-retest analysis describes: means 8-9, SD about 1, occasional
2-to-10 swings). For every simulated run of the suite, each test's decision with the runs its
conversation ran is compared with its decision on all N runs.

Printed per mode: "N% fewer calls" (provider calls: the auditor's and the target's turns and one
judge call per run), the share of tests whose decision differs from all N runs', and the
targets: exact mode never differs; sequential mode saves >= 40% on the crisis suite at 5 runs and
differs at most at its stated error rate.

    python bench/bench_sequential.py [REPLICATES] [RUNS] [ERROR_RATE]   (defaults 40, 5, 0.05)
"""

from __future__ import annotations

import sys
import time
from collections.abc import Sequence

import numpy as np

from empath_gate.analysis.stats import compute_all_cell_stats
from empath_gate.gate.decide import decide
from empath_gate.gate.sequential import conversation_limits, settle_reason
from empath_gate.instrument.loader import load_instrument
from empath_gate.judging.verdict import MetricVerdict
from empath_gate.plan.build import build_plan
from empath_gate.results.model import RunRecord

MEAN_LOW, MEAN_HIGH, SD, SWING = 8.0, 9.0, 1.0, 0.03
SUITE = "crisis"


def _scores(rng: np.random.Generator, n_cells: int, runs: int) -> np.ndarray:
    means = rng.uniform(MEAN_LOW, MEAN_HIGH, size=(n_cells, 1))
    base = np.clip(np.rint(rng.normal(means, SD, size=(n_cells, runs))), 1, 10)
    swing = rng.random(size=(n_cells, runs)) < SWING
    return np.where(swing, rng.integers(2, 11, size=(n_cells, runs)), base).astype(int)


def _records(conv: str, suite: str, metrics: Sequence[str], scores: np.ndarray) -> list[RunRecord]:
    """One complete record per run with a scored verdict per metric (``scores[metric, run]``)."""
    out = []
    for r in range(scores.shape[1]):
        tid = f"{conv}-r{r}"
        verdicts = tuple(
            MetricVerdict.model_construct(metric_id=m, transcript_id=tid, status="scored",
                                          score=int(scores[i, r]), raw_score=int(scores[i, r]),
                                          criteria=(), rejudge=0)
            for i, m in enumerate(metrics)
        )
        out.append(RunRecord.model_construct(
            transcript_id=tid, conversation_id=conv, suite=suite, seed_id=conv, persona_id="p",
            locale="en-US", run=r, status="complete", verdicts=verdicts, auditor_turns=0,
            auditor_fallbacks=0, auditor_fallback_reasons={},
        ))
    return out


def _statuses(records: Sequence[RunRecord], conversations: dict[str, tuple[str, str]], thresholds,
              runs_of: dict[str, int]) -> dict[tuple[str, str], str]:
    """The gate's status per test, each conversation over its first ``runs_of[conv]`` runs."""
    by_runs: dict[int, list[MetricVerdict]] = {}
    for rec in records:
        if rec.run < runs_of[rec.conversation_id]:
            by_runs.setdefault(runs_of[rec.conversation_id], []).extend(rec.verdicts)
    cells = []
    for k, verdicts in by_runs.items():
        cells.extend(compute_all_cell_stats(verdicts, conversations=conversations, thresholds=thresholds,
                                            suite_id=SUITE, expected_runs=k))
    d = decide(cells, thresholds, suite_id=SUITE)
    return {(c.conversation_id, c.metric_id): c.status for c in d.cells}


def main() -> None:
    replicates = int(sys.argv[1]) if len(sys.argv) > 1 else 40
    runs = int(sys.argv[2]) if len(sys.argv) > 2 else 5
    error_rate = float(sys.argv[3]) if len(sys.argv) > 3 else 0.05
    instrument = load_instrument()
    plan = build_plan(instrument, [SUITE], runs=runs)
    limits = conversation_limits(plan, instrument)
    convs = [c for c in plan.conversations if c.skip is None]
    conversations = {c.conversation_id: (c.seed_id, c.persona_id) for c in convs}
    per_run_calls = {c.conversation_id: 2 * c.max_turns + 1 for c in convs}
    full_calls = sum(per_run_calls.values()) * runs
    rng = np.random.default_rng(7)
    tests = sum(len(c.metric_ids) for c in convs)
    print(f"crisis suite: {len(convs)} conversations, {tests} tests, N = {runs} runs; {replicates} simulated "
          f"runs of the suite (means {MEAN_LOW:g}-{MEAN_HIGH:g}, SD {SD:g}, swing rate {SWING:g})")
    totals = {m: [0, 0, 0, 0.0] for m in ("exact", "sequential")}  # calls, differing tests, tests, seconds
    for _ in range(replicates):
        records: list[RunRecord] = []
        for c in convs:
            records.extend(_records(c.conversation_id, SUITE, c.metric_ids,
                                    _scores(rng, len(c.metric_ids), runs)))
        by_conv: dict[str, list[RunRecord]] = {}
        for rec in records:
            by_conv.setdefault(rec.conversation_id, []).append(rec)
        full = _statuses(records, conversations, instrument.thresholds, dict.fromkeys(conversations, runs))
        for mode in ("exact", "sequential"):
            t0 = time.perf_counter()
            runs_of: dict[str, int] = {}
            for conv, recs in by_conv.items():
                k = runs
                for j in range(1, runs):
                    if settle_reason(limits[conv], recs[:j], mode=mode, error_rate=error_rate) is not None:
                        k = j
                        break
                runs_of[conv] = k
            totals[mode][3] += time.perf_counter() - t0
            got = _statuses(records, conversations, instrument.thresholds, runs_of)
            totals[mode][0] += sum(per_run_calls[c] * k for c, k in runs_of.items())
            totals[mode][1] += sum(1 for key, st in full.items() if got[key] != st)
            totals[mode][2] += len(full)
    rows = []
    for mode, (calls, differ, n, secs) in totals.items():
        saved = 1 - calls / (full_calls * replicates)
        rate = differ / n
        rows.append((mode, saved, rate, differ, n, secs))
        print(f"{mode:>10}: {saved:.1%} fewer calls; decisions differing from all {runs} runs: "
              f"{differ} of {n} tests ({rate:.2%}); rule {secs / replicates * 1000:.0f} ms per suite run")
    exact, seq = rows
    print(f"target exact: the full-N decision in every test: {'met' if exact[3] == 0 else 'NOT met'} "
          f"({exact[3]} differ)")
    print(f"target sequential: >= 40% fewer calls: {'met' if seq[1] >= 0.40 else 'NOT met'} ({seq[1]:.1%})")
    print(f"target sequential: differs at most at its error rate {error_rate:g}: "
          f"{'met' if seq[2] <= error_rate else 'NOT met'} ({seq[2]:.2%})")


if __name__ == "__main__":
    main()
