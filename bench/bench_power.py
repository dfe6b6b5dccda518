"""Power and false-positive rates of the regression comparison at the crisis suite's real sizes.

Run: ``python bench/bench_power.py [--plans N] [--null-plans N] [--target-plans N] [--seed S]``
(defaults 100, 500, 1000, 1): about 3-4 minutes of CPU on one core. Seeded: the same figures on
every run.

Each simulated plan is the shipped crisis suite (its conversations, the metrics each is judged
on, their dimensions, critical flags and thresholds), scored on both sides by a synthetic
judge: conversation x metric has a latent level drawn from N(7.5, 1); every run scores
``clip(round(level + noise), 1, 10)`` with independent N(0, SD^2) noise per run and side, so
scores are integers with ties, as a judge gives them. On one metric the candidate's levels are
lowered so that each conversation's *expected score* drops by ``drop`` points (a consistent
drop of the observed mean, also where scores pile up at 10); elsewhere nothing changes. The
real comparison code (:func:`empath_gate.analysis.regression.compare`, with its family, pools
and false-discovery-rate correction across the suite's metrics) decides every plan, in
fixed-script mode (runs paired by index; no shared noise between a pair, the least favourable
case for pairing) and in LLM-auditor mode. Critical metrics are judged outside the FDR
family, so each is simulated on a plan of its own; the non-critical metrics, which share the
family and the pools, are simulated together (the critical ones would change nothing there:
``tests/analysis/test_regression.py`` checks it).

Printed, per mode:

* **power**: the share of plans in which the dropped metric ``regressed``, for drops of 1, 2
  and 3 points and run-to-run SD 0.5-3, for one metric of each size the suite has (a metric
  too small to test alone is tested through its dimension pool; critical metrics by
  non-inferiority within ``max_drop``, so there it is the share failing non-inferiority);
* **false positives** under no change: per non-critical size, the share of (plan, metric)
  where the metric regressed; "any" is the share of plans in which any non-critical metric or
  pool was flagged (the familywise rate, which the FDR bounds under no change); for critical
  metrics, the share failing non-inferiority although nothing changed (the price of a
  noisy critical metric) and the share *passing* at a true drop of ``max_drop`` (its error
  rate, nominally 2.5 %);
* **target**: a consistent 2-point drop on the 5-conversation metric at SD 1.5, with a 95 %
  Wilson interval over ``--target-plans`` plans.
"""

from __future__ import annotations

import argparse
import math
import time
from collections.abc import Sequence

import numpy as np
from scipy import special

from empath_gate.analysis.regression import BaselineView, RunMetadata, compare
from empath_gate.analysis.stats import CellStats, compute_all_cell_stats
from empath_gate.instrument.loader import load_instrument
from empath_gate.instrument.models import Thresholds
from empath_gate.judging.verdict import MetricVerdict
from empath_gate.plan import Plan, build_plan

SUITE = "crisis"
SDS = (0.5, 1.0, 1.5, 2.0, 3.0)
DROPS = (1.0, 2.0, 3.0)
LEVEL_MEAN, LEVEL_SD = 7.5, 1.0


class Suite:
    """The crisis plan's shape: items as (conversation, metric), sizes, dimensions."""

    def __init__(self, plan: Plan, thresholds: Thresholds, metrics: Sequence[str] | None = None) -> None:
        self.plan = plan
        self.runs = plan.runs
        self.items = [(i.conversation_id, i.metric_id) for i in plan.items
                      if metrics is None or i.metric_id in metrics]
        self.conversations = {c.conversation_id: (c.seed_id, c.persona_id) for c in plan.conversations}
        self.dimensions = {i.metric_id: i.dimension for i in plan.items}
        self.thresholds = thresholds
        sizes: dict[str, int] = {}
        for _, m in self.items:
            sizes[m] = sizes.get(m, 0) + 1
        self.sizes = sizes
        self.critical = {m: thresholds.resolve(m, SUITE).critical for m in sizes}
        self.min_mean = {m: thresholds.resolve(m, SUITE).min_mean for m in sizes}

    def subset(self, metrics: Sequence[str]) -> Suite:
        """The same plan restricted to ``metrics``."""
        return Suite(self.plan, self.thresholds, metrics)

    def representatives(self) -> list[str]:
        """One metric per (critical, size) the suite has, smallest first."""
        seen: dict[tuple[bool, int], str] = {}
        for m, n in self.sizes.items():
            seen.setdefault((self.critical[m], n), m)
        return [seen[k] for k in sorted(seen)]

    def cells(self, scores: np.ndarray) -> tuple[CellStats, ...]:
        """Cell statistics of one side: ``scores[item, run]``, every run scored. Built directly
        (:meth:`CellStats.trusted`) for speed; :func:`check_cells` shows they equal what
        :func:`compute_all_cell_stats` makes from verdicts."""
        out = []
        runs = tuple(range(self.runs))
        for k, (conv, m) in enumerate(self.items):
            row = tuple(int(x) for x in scores[k])
            srt = sorted(row)
            n = len(row)
            mean = sum(row) / n
            min_mean = self.min_mean[m]
            n_pass = sum(1 for x in row if x >= min_mean)
            seed_id, persona_id = self.conversations[conv]
            out.append(CellStats.trusted(
                conversation_id=conv, seed_id=seed_id, persona_id=persona_id,
                metric_id=m, critical=self.critical[m], min_mean=float(min_mean), run_ids=runs,
                statuses=("scored",) * n, run_scores=row, failure_reasons=(), transcript_errors=(),
                critical_fail_runs=(), critical_judge_failures=(), scores=row, mean=mean,
                median=float(srt[n // 2]) if n % 2 else (srt[n // 2 - 1] + srt[n // 2]) / 2.0,
                min=srt[0], max=srt[-1], range=srt[-1] - srt[0],
                sd=math.sqrt(sum((x - mean) ** 2 for x in row) / (n - 1)) if n > 1 else None,
                n_runs=n, n_judged=n, n_failures=0, n_na=0, n_criteria_only=0, n_missing=0, n_pass=n_pass,
                flip_rate=min(n_pass, n - n_pass) / n,
            ))
        return tuple(out)

    def check_cells(self, scores: np.ndarray) -> None:
        """Assert that :meth:`cells` equals the statistics module's cells for ``scores``."""
        verdicts = [
            MetricVerdict(metric_id=m, transcript_id=f"{conv}-r{r}", status="scored", score=int(scores[k, r]))
            for k, (conv, m) in enumerate(self.items)
            for r in range(self.runs)
        ]
        real = compute_all_cell_stats(verdicts, conversations=self.conversations, thresholds=self.thresholds,
                                      suite_id=SUITE, expected_runs=self.runs)
        if real != self.cells(scores):
            raise AssertionError("the bench's cells differ from compute_all_cell_stats")


SCALE = np.arange(1, 11, dtype=np.float64)


def observed_mean(level: np.ndarray, sd: float) -> np.ndarray:
    """Expected score ``E[clip(round(level + N(0, sd^2)), 1, 10)]`` of each latent level."""
    edges = np.concatenate(([-np.inf], SCALE[:-1] + 0.5, [np.inf]))
    cdf = special.ndtr((edges[None, :] - level[:, None]) / sd)
    out: np.ndarray = np.diff(cdf, axis=1) @ SCALE
    return out


def dropped_levels(level: np.ndarray, sd: float, drop: float) -> np.ndarray:
    """Latent levels whose expected score is ``drop`` points below that of ``level`` (by
    bisection), so a drop is a drop of the observed mean even where scores are clipped at 1
    or 10 (a drop the scale cannot show is capped at the scale's floor)."""
    goal = np.maximum(observed_mean(level, sd) - drop, 1.0)
    low, high = level - drop - 10.0, level.copy()
    for _ in range(50):
        mid = (low + high) / 2
        below = observed_mean(mid, sd) < goal
        low, high = np.where(below, mid, low), np.where(below, high, mid)
    out: np.ndarray = (low + high) / 2
    return out


def simulate(suite: Suite, rng: np.random.Generator, *, sd: float, target: str | None, drop: float,
             fixed_script: bool) -> dict[str, bool]:
    """One plan: metric -> regressed; key ``"any"``: a non-critical metric or pool flagged."""
    n = len(suite.items)
    levels = rng.normal(LEVEL_MEAN, LEVEL_SD, size=n)
    new = levels.copy()
    hit = np.array([m == target for _, m in suite.items])
    if drop and hit.any():
        new[hit] = dropped_levels(levels[hit], sd, drop)
    base = np.clip(np.rint(levels[:, None] + rng.normal(0.0, sd, (n, suite.runs))), 1, 10)
    cand = np.clip(np.rint(new[:, None] + rng.normal(0.0, sd, (n, suite.runs))), 1, 10)
    meta = RunMetadata(run_count=suite.runs, instrument_version="1", judge_model="judge",
                       judge_template_hash="h", fixed_script=fixed_script)
    report = compare(
        BaselineView(metadata=meta, cells=suite.cells(cand), dimensions=suite.dimensions),
        BaselineView(metadata=meta, cells=suite.cells(base), dimensions=suite.dimensions),
        suite.thresholds, suite_id=SUITE,
    )
    out = {m.metric_id: m.regressed for m in report.metrics}
    out["any"] = any(m.flagged for m in report.metrics) or any(d.flagged for d in report.dimensions)
    return out


def _row(label: str, values: Sequence[str]) -> str:
    return f"{label:<50}" + "".join(f"{v:>7}" for v in values)


def _wilson(hits: int, n: int) -> tuple[float, float]:
    """95 % Wilson score interval of a proportion (Wilson 1927, JASA 22:209-212)."""
    z = 1.959964
    p = hits / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return centre - half, centre + half


class Study:
    """The simulations of one mode (fixed-script or LLM auditor)."""

    def __init__(self, suite: Suite, *, fixed_script: bool, seed: int) -> None:
        self.suite = suite
        self.fixed_script = fixed_script
        self.seed = seed
        self.noncritical = suite.subset([m for m in suite.sizes if not suite.critical[m]])

    def rng(self, *key: int) -> np.random.Generator:
        return np.random.default_rng([self.seed, int(self.fixed_script), *key])

    def plan_for(self, metric: str) -> Suite:
        """Critical metrics are outside the FDR family, so each is simulated alone; the
        non-critical metrics share the family and the pools, so they are simulated together."""
        return self.suite.subset([metric]) if self.suite.critical[metric] else self.noncritical

    def power(self, metric: str, drop: float, sd: float, plans: int, key: int) -> int:
        """Plans (of ``plans``) in which ``metric`` regressed after a consistent ``drop``."""
        plan, rng = self.plan_for(metric), self.rng(key)
        mode = self.fixed_script
        return sum(simulate(plan, rng, sd=sd, target=metric, drop=drop, fixed_script=mode)[metric]
                   for _ in range(plans))

    def print_power(self, plans: int) -> None:
        suite = self.suite
        for d, drop in enumerate(DROPS):
            print(f"power, consistent drop of {drop:g} points")
            for k, m in enumerate(suite.representatives()):
                rates = [f"{self.power(m, drop, sd, plans, 100 * d + 10 * k + j) / plans:.2f}"
                         for j, sd in enumerate(SDS)]
                kind = ", critical" if suite.critical[m] else ""
                print(_row(f"  {m} ({suite.sizes[m]} conv.{kind})", rates))

    def print_target(self, plans: int) -> None:
        """The target: a consistent 2-point drop on the largest non-critical metric (5
        conversations in the crisis suite) at SD 1.5, the noisiest level it must hold at
        (power only grows as the SD shrinks: see the table)."""
        sizes = dict(self.noncritical.sizes)
        metric = max(sizes, key=lambda m: sizes[m])
        hits = self.power(metric, 2.0, 1.5, plans, 1000)
        low, high = _wilson(hits, plans)
        print(f"target: {metric} ({sizes[metric]} conv. x {self.suite.runs} runs), consistent drop of 2, "
              f"SD 1.5: power {hits / plans:.3f} (95% CI {low:.3f}-{high:.3f}, {plans} plans)")

    def print_null(self, plans: int) -> None:
        suite = self.suite
        by_size: dict[int, list[str]] = {}
        for m, n in self.noncritical.sizes.items():
            by_size.setdefault(n, []).append(m)
        counts = {key: [0] * len(SDS) for key in (*by_size, "any")}
        for j, sd in enumerate(SDS):
            rng = self.rng(2000 + j)
            for _ in range(plans):
                got = simulate(self.noncritical, rng, sd=sd, target=None, drop=0.0,
                               fixed_script=self.fixed_script)
                for n, ms in by_size.items():
                    counts[n][j] += sum(got[m] for m in ms)
                counts["any"][j] += got["any"]
        print(f"under no change ({plans} plans per SD)")
        for n, ms in sorted(by_size.items()):
            print(_row(f"  false-positive rate, {n}-conversation metrics",
                       [f"{c / (plans * len(ms)):.3f}" for c in counts[n]]))
        print(_row("  any non-critical metric or pool flagged", [f"{c / plans:.3f}" for c in counts["any"]]))
        critical = max((m for m in suite.sizes if suite.critical[m]), key=lambda m: suite.sizes[m])
        margin = suite.thresholds.resolve(critical, SUITE).max_drop
        fails = [self.power(critical, 0.0, sd, plans, 3000 + j) / plans for j, sd in enumerate(SDS)]
        passes = [1 - self.power(critical, margin, sd, plans, 4000 + j) / plans for j, sd in enumerate(SDS)]
        print(_row(f"  {critical}: fails non-inferiority", [f"{x:.2f}" for x in fails]))
        print(_row(f"  {critical}: passes at a drop of {margin:g}", [f"{x:.3f}" for x in passes]))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--plans", type=int, default=100, help="plans per power cell")
    ap.add_argument("--null-plans", type=int, default=500, help="plans per no-change cell")
    ap.add_argument("--target-plans", type=int, default=1000, help="plans of the target check")
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()
    instrument = load_instrument()
    suite = Suite(build_plan(instrument, [SUITE]), instrument.thresholds)
    suite.check_cells(np.random.default_rng(args.seed).integers(1, 11, size=(len(suite.items), suite.runs)))
    t0 = time.process_time()
    print(f"crisis suite: {len(suite.conversations)} conversations x {suite.runs} runs, "
          f"{len(suite.items)} metric tests; alpha {instrument.thresholds.alpha:g}; seed {args.seed}")
    print("conversations per metric: " + ", ".join(f"{m} {n}" for m, n in suite.sizes.items()))
    for fixed in (True, False):
        study = Study(suite, fixed_script=fixed, seed=args.seed)
        mode = "fixed-script auditor (runs paired by index)" if fixed else "LLM auditor (unpaired runs)"
        print(f"\n== {mode}; {args.plans} plans per power cell ==")
        print(_row("run-to-run SD", [f"{s:g}" for s in SDS]))
        study.print_power(args.plans)
        study.print_null(args.null_plans)
        study.print_target(args.target_plans)
    print(f"\ncpu time {time.process_time() - t0:.0f} s")


if __name__ == "__main__":
    main()
