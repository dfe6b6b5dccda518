"""The worst-case gap (paired by seed, cluster bootstrap over seeds) and its suite check."""

from __future__ import annotations

import pytest
from analysis_factory import cell, thresholds

from empath_gate.analysis.worst_case_gap import metric_gaps
from empath_gate.gate.checks import applicable_checks, max_worst_case_gap

COOP = {"s1": "coop", "s2": "coop", "s3": "coop"}


def _cells(per_seed: dict[str, tuple[list[int], list[list[int]]]], metric: str = "guided_exploration"):
    out = []
    for seed, (coop, worst) in per_seed.items():
        out.append(cell(coop, metric=metric, seed=seed, persona="coop"))
        out += [cell(runs, metric=metric, seed=seed, persona=f"w{i}") for i, runs in enumerate(worst)]
    return out


def test_gap_is_the_mean_of_per_seed_differences_with_worst_personas_averaged_within_a_seed() -> None:
    cells = _cells({
        "s1": ([9, 9], [[5, 5], [7, 7]]),   # 9 - mean(5, 7) = 3
        "s2": ([8, 8], [[8, 8]]),           # 0
        "s3": ([10, 10], [[4, 4], [6, 6], [8, 8]]),  # 10 - 6 = 4
    })
    (g,) = metric_gaps(cells, COOP)
    assert [s.gap for s in g.seeds] == [3.0, 0.0, 4.0]
    assert g.gap.value == pytest.approx(7 / 3)
    assert g.gap.ci_low is not None and g.gap.ci_high is not None
    assert 0.0 <= g.gap.ci_low <= g.gap.value <= g.gap.ci_high <= 4.0
    # seeds are the resampled unit: the interval only takes values of seed means
    assert g.cooperative_mean == pytest.approx(9.0) and g.worst_case_mean == pytest.approx(20 / 3)


def test_a_seed_missing_an_arm_is_counted_not_paired() -> None:
    cells = _cells({"s1": ([9, 9], [[5, 5]]), "s2": ([8, 8], [])})
    cells.append(cell(["jf", "jf"], metric="guided_exploration", seed="s3", persona="coop"))
    cells.append(cell([6, 6], metric="guided_exploration", seed="s3", persona="w0"))
    (g,) = metric_gaps(cells, COOP)
    assert [s.seed_id for s in g.seeds] == ["s1"]
    assert set(g.seeds_without_pair) == {"s2", "s3"}
    assert g.gap.value == 4.0 and g.gap.ci_low is None  # one seed: no interval


def test_check_fails_above_the_limit_passes_at_it_and_skips_without_pairs() -> None:
    th = thresholds(max_worst_case_gap=2.0)
    over = metric_gaps(_cells({"s1": ([9, 9], [[6, 6]]), "s2": ([9, 9], [[6, 6]])}), COOP)
    chk = max_worst_case_gap("wc", over, th)
    assert chk.status == "failed" and chk.observed == 3.0 and chk.threshold == 2.0
    assert chk.id == "wc::max_worst_case_gap" and "guided_exploration: worst-case gap 3.00" in chk.reasons[0]
    at = metric_gaps(_cells({"s1": ([9, 9], [[7, 7]]), "s2": ([8, 8], [[6, 6]])}), COOP)
    assert max_worst_case_gap("wc", at, th).status == "passed"
    none = metric_gaps(_cells({"s1": ([9, 9], [])}), COOP)
    assert max_worst_case_gap("wc", none, th).status == "skipped"


def test_a_negative_gap_passes_and_per_metric_limits_apply() -> None:
    th = thresholds(max_worst_case_gap=2.0, metrics={"guided_exploration": {"max_worst_case_gap": 0.5}})
    gaps = metric_gaps(_cells({"s1": ([8, 8], [[7, 7]]), "s2": ([8, 8], [[7, 7]])}), COOP)
    chk = max_worst_case_gap("wc", gaps, th)
    assert chk.status == "failed" and chk.threshold == 0.5
    better_with_hard = metric_gaps(_cells({"s1": ([5, 5], [[9, 9]])}), COOP)
    assert max_worst_case_gap("wc", better_with_hard, th).status == "passed"


def test_the_gap_check_exists_only_for_paired_suites_with_a_judge() -> None:
    assert applicable_checks("openai/judge", paired=True) == ("judge_failure_rate", "max_worst_case_gap")
    assert applicable_checks("openai/judge") == ("judge_failure_rate",)
    assert applicable_checks(None, paired=True) == ()
