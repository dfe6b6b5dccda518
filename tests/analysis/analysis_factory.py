"""Builders of verdicts and cell statistics for the analysis tests."""

from __future__ import annotations

from collections.abc import Sequence

from empath_gate.analysis.stats import CellStats, compute_cell_stats
from empath_gate.instrument.models import Thresholds, ThresholdValues
from empath_gate.judging.verdict import CriterionVerdict, JudgeFailure, MetricVerdict

Run = int | str | None
"""A run in a test table: an int score, "na", "co" (criteria-only), "co!" (criteria-only with a
critical FAIL), "jf" (judge failure), "jf!" (judge failure carrying a critical FAIL), None (missing)."""


def verdict(conversation: str, run: int, metric: str, value: Run, *, rejudge: int = 0) -> MetricVerdict:
    tid = f"{conversation}-r{run}"
    if isinstance(value, int):
        return MetricVerdict(
            metric_id=metric, transcript_id=tid, status="scored", score=value, rejudge=rejudge
        )
    crit = (
        (CriterionVerdict(criterion_id="c1", state="FAIL", critical=True),) if value in ("co!", "jf!") else ()
    )
    if value == "na":
        return MetricVerdict(metric_id=metric, transcript_id=tid, status="na", rejudge=rejudge)
    if value in ("co", "co!"):
        return MetricVerdict(
            metric_id=metric, transcript_id=tid, status="criteria_only", criteria=crit, rejudge=rejudge
        )
    if value in ("jf", "jf!"):
        return MetricVerdict(
            metric_id=metric,
            transcript_id=tid,
            status="judge_failure",
            criteria=crit,
            failure=JudgeFailure(reason="parse_error", detail="no JSON"),
            rejudge=rejudge,
        )
    raise ValueError(value)


def verdicts(conversation: str, metric: str, runs: Sequence[Run]) -> list[MetricVerdict]:
    return [verdict(conversation, r, metric, v) for r, v in enumerate(runs) if v is not None]


def cell(
    runs: Sequence[Run],
    *,
    metric: str = "crisis_detection",
    seed: str = "seed-a",
    persona: str = "p1",
    min_mean: float = 7.0,
    critical: bool = False,
    expected: int | None = None,
    errors: dict[str, str] | None = None,
) -> CellStats:
    conv = f"{seed}-{persona}"
    return compute_cell_stats(
        verdicts(conv, metric, runs),
        min_mean=min_mean,
        seed_id=seed,
        persona_id=persona,
        critical=critical,
        expected_runs=expected if expected is not None else len(runs),
        transcript_errors=errors,
    )


def thresholds(**overrides: object) -> Thresholds:
    values: dict[str, object] = dict(
        min_mean=7,
        min_run=4,
        max_range=3,
        max_flip_rate=0.34,
        max_drop=1,
        min_judged_runs=3,
        max_judge_failure_rate=0.2,
        critical=False,
    )
    metrics = overrides.pop("metrics", {})
    values.update(overrides)
    return Thresholds(
        defaults=ThresholdValues.model_validate(values),
        metrics={k: ThresholdValues.model_validate(v) for k, v in dict(metrics).items()},
    )  # type: ignore[call-overload]
