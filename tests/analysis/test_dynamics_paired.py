"""The paired test of a dynamics share against a baseline, and how it joins the false-discovery
family of the suite's metrics."""

from __future__ import annotations

import numpy as np
import pytest
from analysis_factory import cell, thresholds

from empath_gate.analysis.dynamics.paired import MIN_PAIRED, RESAMPLES, paired_share_test
from empath_gate.analysis.regression import BaselineView, RunMetadata, SideTest, compare
from empath_gate.analysis.stats import CellStats

META = RunMetadata(run_count=3, instrument_version="1.0.0", judge_model="judge-x", judge_template_hash="abc")


def _view(cells: list[CellStats]) -> BaselineView:
    return BaselineView(metadata=META, cells=tuple(cells))


def test_fewer_than_eight_pairs_cannot_detect() -> None:
    few = {f"c{i}": 1.0 for i in range(MIN_PAIRED - 1)}
    t = paired_share_test(few, dict.fromkeys(few, 0.0), 1.0)
    assert (t.paired, t.p_value, t.min_p, t.mean_change) == (MIN_PAIRED - 1, None, None, 1.0)
    # only shared conversations pair
    t = paired_share_test({**few, "x": 1.0}, {**dict.fromkeys(few, 0.0), "y": 0.0}, 1.0)
    assert t.paired == MIN_PAIRED - 1


def test_the_exact_sign_flip_test_and_its_smallest_p() -> None:
    base = {f"c{i}": 0.0 for i in range(10)}
    worse = dict.fromkeys(base, 1.0)
    t = paired_share_test(worse, base, 1.0)
    assert t.p_value == pytest.approx(2**-10) and t.min_p == pytest.approx(2**-10)
    # the same change is no regression of the recovering share (a rise there is better)
    assert paired_share_test(worse, base, -1.0).p_value == pytest.approx(1.0)
    # two conversations unchanged: their signs do not matter, the smallest p is 2**-8
    partly = {**worse, "c0": 0.0, "c1": 0.0}
    t = paired_share_test(partly, base, 1.0)
    assert t.min_p == pytest.approx(2**-8) and t.p_value == pytest.approx(2**-8)
    assert paired_share_test(base, base, 1.0).p_value == 1.0
    with pytest.raises(ValueError):
        paired_share_test(base, base, 0.5)


def test_many_pairs_are_resampled_reproducibly() -> None:
    rng = np.random.default_rng(3)
    base = {f"c{i}": float(rng.integers(0, 2)) for i in range(40)}
    cur = {k: min(1.0, v + float(rng.integers(0, 2))) for k, v in base.items()}
    a, b = paired_share_test(cur, base, 1.0), paired_share_test(cur, base, 1.0)
    assert a == b and a.p_value is not None and a.p_value < 0.01
    nonzero = sum(cur[k] != base[k] for k in base)
    assert a.min_p == pytest.approx(max(0.5**nonzero, 1 / (RESAMPLES + 1)))


def _metric_cells(shift: int) -> list[CellStats]:
    """Two non-critical metrics, 12 conversations x 3 runs with run-to-run spread."""
    return [cell([7 + i % 3 + shift, 8 + shift, 9 - i % 2 + shift], seed=f"s{i}", metric=m)
            for m in ("sycophancy", "overrefusal") for i in range(12)]


def test_side_tests_join_the_metric_family_and_are_adjusted_with_it() -> None:
    th = thresholds()
    side = SideTest(test_id="s::max_worsened_share", paired=10, p_value=0.004, min_p=2**-10, information=20)
    alone = compare(_view([]), _view([]), th, side_tests=[side])
    [t] = alone.side_tests
    assert t.in_family and t.flagged and t.p_adjusted == pytest.approx(0.004) and alone.family_size == 1
    # with two unchanged metrics in the family the same p is adjusted over three tests
    report = compare(_view(_metric_cells(0)), _view(_metric_cells(0)), th, side_tests=[side])
    [t] = report.side_tests
    assert report.family_size == 3 and t.in_family
    assert t.p_adjusted is not None and t.p_adjusted > 0.004 and t.weight is not None
    assert report.side_test("s::max_worsened_share") == t and report.side_test("s::other") is None
    # a p that the family's correction lifts above alpha is no longer flagged
    borderline = side.model_copy(update={"p_value": 0.04})
    assert compare(_view([]), _view([]), th, side_tests=[borderline]).side_tests[0].flagged
    assert not compare(_view(_metric_cells(0)), _view(_metric_cells(0)), th,
                       side_tests=[borderline]).side_tests[0].flagged


def test_a_side_test_without_a_p_value_stays_out_and_says_why() -> None:
    few = SideTest(test_id="s::min_recovering_share", paired=5, p_value=None, min_p=None, information=10,
                   detection="cannot detect a change (5 paired conversations, fewer than 8)")
    report = compare(_view(_metric_cells(0)), _view(_metric_cells(0)), thresholds(), side_tests=[few])
    [t] = report.side_tests
    assert not t.in_family and not t.flagged and t.p_adjusted is None and report.family_size == 2
    assert t.detection is not None and "cannot detect" in t.detection
    # a test too small for Tarone's level stays out as well, with the reason
    tiny = SideTest(test_id="s::x", paired=8, p_value=0.5, min_p=0.2, information=16)
    same = _metric_cells(0)
    [t] = compare(_view(same), _view(same), thresholds(), side_tests=[tiny]).side_tests
    assert not t.in_family and t.detection is not None and "cannot be a discovery" in t.detection
