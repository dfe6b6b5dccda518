"""Regression vs baseline: comparability, pairing, non-inferiority, FDR, power and false alarms."""

from __future__ import annotations

import numpy as np
import pytest
from analysis_factory import cell, thresholds

from empath_gate.analysis.regression import (
    BaselineView,
    RunMetadata,
    comparability,
    compare,
    paired_difference_test,
)
from empath_gate.analysis.stats import CellStats, compute_cell_stats
from empath_gate.judging.verdict import MetricVerdict

META = RunMetadata(run_count=3, instrument_version="1.0.0", judge_model="judge-x", judge_template_hash="abc")


def view(cells: list[CellStats], meta: RunMetadata = META) -> BaselineView:
    return BaselineView(metadata=meta, cells=tuple(cells))


def test_comparability_reasons() -> None:
    other = META.model_copy(update={"run_count": 5, "judge_model": None})
    reasons = comparability(other, META)
    assert reasons == (
        "run count differs: candidate 5, baseline 3",
        "judge model differs: candidate unknown, baseline judge-x",
    )
    th = thresholds()
    base = [cell([9, 9, 9], seed=f"s{i}") for i in range(4)]
    cand = [cell([2, 2, 2], seed=f"s{i}") for i in range(4)]
    report = compare(view(cand, other), view(base), th)
    assert not report.comparable and report.reasons == reasons
    m = report.metric("crisis_detection")
    assert m is not None and m.effect == -7 and not m.regressed


def test_added_and_removed_are_listed_not_failed() -> None:
    th = thresholds()
    base = [
        cell([8, 8, 8], seed="a"),
        cell([8, 8, 8], seed="b"),
        cell([8, 8, 8], seed="b", metric="sycophancy"),
    ]
    cand = [
        cell([8, 8, 8], seed="a"),
        cell([8, 8, 8], seed="c"),
        cell([8, 8, 8], seed="a", metric="overrefusal"),
    ]
    report = compare(view(cand), view(base), th)
    assert report.added_conversations == ("c-p1",)
    assert report.removed_conversations == ("b-p1",)
    assert report.added_metrics == ("overrefusal",)
    assert report.removed_metrics == ("sycophancy",)
    assert [m.metric_id for m in report.metrics] == ["crisis_detection"]
    assert not any(m.regressed for m in report.metrics)
    assert [(c.conversation_id, c.change) for c in report.cells] == [("a-p1", 0.0)]


def test_paired_test_figures() -> None:
    res = paired_difference_test([-1.0] * 10)
    assert res.effect == -1 and res.ci_low == -1 and res.ci_high == -1 and res.se == 0
    # exact sign-flip test: all 2^10 patterns, only the two all-equal-sign ones reach |mean| 1
    assert res.p_value == pytest.approx(2 / 1024)
    assert paired_difference_test([]).effect is None
    single = paired_difference_test([-2.0])
    assert single.effect == -2 and single.ci_low is None and single.p_value is None
    zero = paired_difference_test([0.0] * 5)
    assert zero.p_value == 1.0
    rng = np.random.default_rng(3)
    d = rng.normal(0, 1, 40)
    a, b = paired_difference_test(d), paired_difference_test(d)
    assert a == b  # fixed seed: reproducible
    assert a.mdd == pytest.approx((1.959964 + 0.841621) * a.se, rel=1e-5)  # type: ignore[operator]
    assert a.ci_low < a.effect < a.ci_high  # type: ignore[operator]


def test_pairing_by_run_in_fixed_script_mode() -> None:
    th = thresholds(min_judged_runs=1)
    fixed = META.model_copy(update={"fixed_script": True})
    base = [cell([9, 5, "na"], seed=f"s{i}") for i in range(3)]
    cand = [cell([8, "na", 6], seed=f"s{i}") for i in range(3)]
    by_run = compare(view(cand, fixed), view(base, fixed), th)
    assert by_run.paired_by_run
    m = by_run.metric("crisis_detection")
    assert m is not None and m.effect == -1.0  # only run 0 is judged on both sides: 8 - 9
    by_mean = compare(view(cand), view(base), th).metric("crisis_detection")
    assert by_mean is not None and by_mean.effect == pytest.approx(7 - 7)


def test_non_inferiority_for_critical_metrics() -> None:
    th = thresholds(metrics={"crisis_detection": {"critical": True, "max_drop": 1}})
    base = [cell([9, 9, 9], seed=f"s{i}") for i in range(10)]
    small = [cell([9, 9, 9] if i % 2 else [8, 9, 9], seed=f"s{i}") for i in range(10)]  # -0.17 mean, tight
    m = compare(view(small), view(base), th).metric("crisis_detection")
    assert m is not None and m.critical and m.non_inferior and not m.regressed
    wide = [cell([9, 9, 9] if i % 2 else [5, 6, 7], seed=f"s{i}") for i in range(10)]  # -1.5 mean
    m2 = compare(view(wide), view(base), th).metric("crisis_detection")
    assert m2 is not None and m2.non_inferior is False and m2.regressed
    assert m2.ci_low is not None and m2.ci_low <= -1
    one = compare(view([cell([8, 8, 8], seed="s0")]), view([cell([9, 9, 9], seed="s0")]), th)
    m3 = one.metric("crisis_detection")
    assert m3 is not None and m3.non_inferior is True and m3.note is not None and "point estimate" in m3.note


def test_benjamini_hochberg_adjusts_across_metrics() -> None:
    th = thresholds()
    metrics = ["crisis_detection", "sycophancy", "overrefusal"]
    base, cand = [], []
    rng = np.random.default_rng(0)
    for metric in metrics:
        for i in range(12):
            base.append(cell([8, 8, 8], seed=f"s{i}", metric=metric))
            delta = -1 if metric == "crisis_detection" else int(rng.integers(-1, 2))
            cand.append(cell([8 + delta] * 3, seed=f"s{i}", metric=metric))
    report = compare(view(cand), view(base), th)
    ps = [m.p_value for m in report.metrics]
    adj = [m.p_adjusted for m in report.metrics]
    assert all(a is not None and p is not None and a >= p for a, p in zip(adj, ps, strict=True))
    crisis = report.metric("crisis_detection")
    assert crisis is not None and crisis.flagged and crisis.regressed
    worst = report.worst(3)
    assert all(c.change == -1 for c in worst) and worst[0].metric_id == "crisis_detection"


# ----------------------------------------------------------------------------- simulations

N_CONV, N_RUNS = 20, 3


def _plan(rng: np.random.Generator, levels: np.ndarray, shift: float) -> list[CellStats]:
    """Cells of one metric: conversation i has true level levels[i] (+ shift); runs add noise sd 1.2,
    scores rounded and clipped to 1-10 as a judge would give."""
    noise = rng.normal(0.0, 1.2, size=(N_CONV, N_RUNS))
    scores = np.clip(np.rint(levels[:, None] + shift + noise), 1, 10).astype(int)
    out = []
    for i in range(N_CONV):
        vs = [
            MetricVerdict.model_construct(
                metric_id="empathy_vs_manipulation",
                transcript_id=f"s{i}-p-r{r}",
                status="scored",
                score=int(scores[i, r]),
                criteria=(),
                failure=None,
                rejudge=0,
            )
            for r in range(N_RUNS)
        ]
        out.append(compute_cell_stats(vs, min_mean=7, seed_id=f"s{i}", persona_id="p"))
    return out


def _flag_rate(shift: float, plans: int, seed: int) -> float:
    th = thresholds()
    rng = np.random.default_rng(seed)
    flagged = 0
    for _ in range(plans):
        levels = rng.normal(7.5, 1.0, size=N_CONV)
        base = _plan(rng, levels, 0.0)
        cand = _plan(rng, levels, shift)  # same conversations, run-to-run noise reseeded
        m = compare(view(cand), view(base), th, n_resamples=1000).metric("empathy_vs_manipulation")
        assert m is not None
        flagged += m.regressed
    return flagged / plans


def test_simulation_a_real_two_point_drop_is_flagged() -> None:
    assert _flag_rate(-2.0, plans=50, seed=11) >= 0.9


def test_simulation_noise_alone_is_flagged_at_most_alpha() -> None:
    alpha = thresholds().alpha
    rate = _flag_rate(0.0, plans=200, seed=12)
    # one-sided flags (drops only) from a two-sided test at alpha: expected about alpha / 2;
    # tolerance 0.03 covers the binomial noise of 200 plans (sd of a 0.05 rate is 0.015)
    assert rate <= alpha + 0.03


def test_grouped_resampling_matches_per_unit_resampling(monkeypatch: pytest.MonkeyPatch) -> None:
    from empath_gate.analysis import regression

    rng = np.random.default_rng(21)
    d = rng.choice(np.array([-1.0, -1 / 3, 0.0, 1 / 3, 1.0]), size=80, p=[0.3, 0.2, 0.2, 0.2, 0.1])
    assert regression._grouped(d) is not None
    grouped = paired_difference_test(d, n_resamples=4000)
    monkeypatch.setattr(regression, "_grouped", lambda _d: None)
    per_unit = paired_difference_test(d, n_resamples=4000)
    assert grouped.effect == per_unit.effect
    assert grouped.ci_low == pytest.approx(per_unit.ci_low, abs=0.03)
    assert grouped.ci_high == pytest.approx(per_unit.ci_high, abs=0.03)
    assert grouped.se == pytest.approx(per_unit.se, rel=0.08)
    assert grouped.p_value == pytest.approx(per_unit.p_value, abs=0.01)
