"""The regression's statistics: exact permutation test, fixed-effects standard error, Tarone
family and weighted Benjamini-Hochberg."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from analysis_factory import cell
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats as sps

from empath_gate.analysis import permutation
from empath_gate.analysis.multiplicity import tarone_family, tarone_k, weighted_bh
from empath_gate.analysis.permutation import (
    StratifiedSample,
    Stratum,
    design_min_p,
    mean_change,
    permutation_test,
)
from empath_gate.analysis.replicates import (
    QUANTIZATION_VARIANCE,
    Replicates,
    build_replicates,
    fixed_effect_se,
    shared_scores,
)


def brute_force_p(sample: StratifiedSample) -> float:
    """P(T* <= T) over every arrangement, enumerated one by one."""
    observed = mean_change(sample)
    options = []
    for s in sample.strata:
        if sample.paired:
            options.append([
                sum(sign * (c - b) for sign, c, b in zip(signs, s.cand, s.base, strict=True)) / len(s.cand)
                for signs in itertools.product((1, -1), repeat=len(s.cand))
            ])
        else:
            x, k = [*s.cand, *s.base], len(s.cand)
            rest = len(x) - k
            options.append([
                sum(x[i] for i in combo) / k - sum(x[i] for i in range(len(x)) if i not in combo) / rest
                for combo in itertools.combinations(range(len(x)), k)
            ])
    totals = [sum(combo) / len(combo) / sample.scale for combo in itertools.product(*options)]
    return sum(1 for t in totals if t <= observed + 1e-9) / len(totals)


scores = st.integers(1, 10)


@st.composite
def samples(draw: st.DrawFn) -> StratifiedSample:
    paired = draw(st.booleans())
    strata = []
    for _ in range(draw(st.integers(1, 3))):
        if paired:
            n = draw(st.integers(1, 3))
            strata.append(Stratum(tuple(draw(st.lists(scores, min_size=n, max_size=n))),
                                  tuple(draw(st.lists(scores, min_size=n, max_size=n)))))
        else:
            strata.append(Stratum(tuple(draw(st.lists(scores, min_size=1, max_size=3))),
                                  tuple(draw(st.lists(scores, min_size=1, max_size=3)))))
    return StratifiedSample(tuple(strata), paired, scale=draw(st.sampled_from([1, 2, 6])))


@settings(max_examples=150, deadline=None)
@given(samples())
def test_exact_p_value_equals_brute_force_enumeration(sample: StratifiedSample) -> None:
    got = permutation_test(sample)
    assert got.exact
    assert got.p_value == pytest.approx(brute_force_p(sample), abs=1e-9)
    assert got.design_min_p <= got.min_p + 1e-12
    assert got.min_p <= got.p_value + 1e-12


def test_smallest_p_values_of_small_plans() -> None:
    drop = StratifiedSample(tuple(Stratum((7, 7, 7), (9, 9, 9)) for _ in range(5)), paired=True)
    assert permutation_test(drop).p_value == pytest.approx(2.0**-15)  # every one of 15 pairs dropped
    unpaired = StratifiedSample(drop.strata, paired=False)
    assert permutation_test(unpaired).p_value == pytest.approx(20.0**-5)  # C(6, 3) = 20 per conversation
    one = StratifiedSample((Stratum((5, 5, 5), (8, 8, 8)),), paired=True)
    assert design_min_p(one) == pytest.approx(0.125)  # 1 conversation x 3 pairs can never reach 0.05
    same = StratifiedSample((Stratum((8, 8, 8), (8, 8, 8)),) * 4, paired=True)
    assert permutation_test(same).p_value == 1.0 and permutation_test(same).min_p == 1.0
    ties = StratifiedSample((Stratum((7, 8, 8), (8, 8, 8)),) * 2, paired=True)
    assert permutation_test(ties).min_p == pytest.approx(0.25)  # only 2 of 6 pairs differ


def test_normal_approximation_of_large_plans_is_close_to_exact(monkeypatch: pytest.MonkeyPatch) -> None:
    rng = np.random.default_rng(4)
    for paired in (True, False):
        strata = tuple(
            Stratum(tuple(rng.integers(4, 10, 3).tolist()), tuple(rng.integers(5, 10, 3).tolist()))
            for _ in range(60)
        )
        sample = StratifiedSample(strata, paired)
        exact = permutation_test(sample)
        monkeypatch.setattr(permutation, "EXACT_LIMIT", 10)
        approx = permutation_test(sample)
        monkeypatch.undo()
        assert exact.exact and not approx.exact
        assert approx.p_value == pytest.approx(exact.p_value, abs=0.01)


def test_fixed_effect_standard_error() -> None:
    unpaired = Replicates(StratifiedSample((Stratum((6, 8, 7), (9, 9, 10)), Stratum((5, 7, 9), (8, 9, 10))),
                                           paired=False), ("a", "b"), 12, 3)
    se, df = fixed_effect_se(unpaired)  # type: ignore[misc]
    parts = [1.0 / 3, 1.0 / 3 / 3, 4.0 / 3, 1.0 / 3]  # s^2 / n per side and conversation
    assert se == pytest.approx(math.sqrt(sum(parts)) / 2)
    assert df == pytest.approx(sum(parts) ** 2 / sum(p * p / 2 for p in parts))
    # three equal runs on both sides still carry the rounding of each score
    flat = Replicates(StratifiedSample((Stratum((7, 7, 7), (9, 9, 9)),), paired=False), ("a",), 6, 3)
    assert fixed_effect_se(flat)[0] == pytest.approx(math.sqrt(2 * QUANTIZATION_VARIANCE / 3))  # type: ignore[index]
    # a side with one run takes the pooled within-conversation variance
    lone = Replicates(StratifiedSample((Stratum((6,), (9, 9, 10)), Stratum((5, 7), (8, 10))), paired=False),
                      ("a", "b"), 8, 3)
    got = fixed_effect_se(lone)
    assert got is not None and got[0] > 0
    # no conversation with two runs: the spread of the conversations' changes
    singles = Replicates(
        StratifiedSample((Stratum((6,), (9,)), Stratum((8,), (9,))), paired=False), ("a", "b"), 4, 1
    )
    se1, df1 = fixed_effect_se(singles)  # type: ignore[misc]
    assert se1 == pytest.approx(math.sqrt(np.var([-3, -1], ddof=1) / 2)) and df1 == 1
    one = Replicates(StratifiedSample((Stratum((6,), (9,)),), paired=False), ("a",), 2, 1)
    assert fixed_effect_se(one) is None


def test_replicates_use_shared_runs_and_pair_by_run() -> None:
    c = cell([8, "na", 6, 9, 9])
    b = cell([9, 5, "na", 2])
    assert shared_scores(c, 3) == {0: 8, 2: 6}
    paired = build_replicates([("x", [(shared_scores(c, 3), shared_scores(b, 3))])], paired=True)
    assert paired is not None and paired.sample.strata == (Stratum((8,), (9,)),)
    unpaired = build_replicates([("x", [(shared_scores(c, 3), shared_scores(b, 3))])], paired=False)
    assert unpaired is not None and unpaired.sample.strata == (Stratum((8, 6), (9, 5)),)
    # a pooled dimension: each run's mean over the metrics judged in it, on a common scale
    other = cell([10, 4, 4])
    o = shared_scores(other, 3)
    two_metrics = [(shared_scores(c, 3), shared_scores(b, 3)), (o, o)]
    pooled = build_replicates([("x", two_metrics)], paired=False)
    assert pooled is not None and pooled.sample.scale == 2
    assert pooled.sample.strata == (Stratum((18, 8, 10), (19, 9, 8)),)  # (8+10)/2, 4, (6+4)/2 ...
    assert mean_change(pooled.sample) == pytest.approx((9 + 4 + 5) / 3 - (9.5 + 4.5 + 4) / 3)


def test_tarone_family() -> None:
    assert tarone_k([], 0.05) == 1
    assert tarone_k([0.001, 0.002], 0.05) == 2
    min_ps = {"big": 3e-5, "four": 2.4e-4, "two-a": 1 / 64, "two-b": 1 / 64, "one": 0.125}
    family, level = tarone_family(min_ps, 0.05)
    # K = 4: only two tests reach 0.05 / 4 = 0.0125; 1/64 = 0.0156 cannot
    assert family == ("big", "four") and level == pytest.approx(0.0125)
    assert tarone_family({"x": 1 / 20}, 0.05)[0] == ("x",)  # exactly alpha reaches alpha


def test_weighted_benjamini_hochberg() -> None:
    ps = {"a": 0.001, "b": 0.02, "c": 0.03, "d": 0.5}
    equal = weighted_bh(ps, dict.fromkeys(ps, 9.0))
    expected = sps.false_discovery_control(list(ps.values()), method="bh")
    assert [equal[k][0] for k in ps] == pytest.approx(list(expected))
    assert all(w == pytest.approx(1.0) for _, w in equal.values())
    weighted = weighted_bh(ps, {"a": 15, "b": 5, "c": 5, "d": 15})
    assert sum(w for _, w in weighted.values()) == pytest.approx(4.0)
    assert weighted["a"][0] < equal["a"][0]  # more runs, more weight, a smaller adjusted p
    assert weighted_bh({}, {}) == {}
    with pytest.raises(ValueError, match="run replicate"):
        weighted_bh({"a": 0.1}, {"a": 0})
