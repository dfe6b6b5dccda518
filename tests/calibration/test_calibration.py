"""Calibration against gold and the standard-vs-strict comparison."""

from __future__ import annotations

import pytest

from empath_gate.calibration.agreement import PairedScore
from empath_gate.calibration.calibrate import RubricRow, calibrate, calibration_figures, standard_vs_strict


def test_bias_interval_and_inflation_flag() -> None:
    judge = [9, 9, 10, 9, 8, 9, 10, 9, 9, 10, 9, 8]
    gold = [7, 7, 8, 7, 6, 8, 8, 7, 7, 8, 8, 6]
    f = calibration_figures(judge, gold)
    assert f.bias.value == pytest.approx(sum(j - g for j, g in zip(judge, gold, strict=True)) / 12)
    assert f.bias.ci_low is not None and f.bias.ci_low >= 1
    assert f.inflated_vs_gold
    assert f.mae == pytest.approx(f.bias.value) and f.within_one == pytest.approx(2 / 12)
    # a point estimate above 1 with a wide interval is not evidence
    wide = calibration_figures([10, 10, 5], [6, 6, 7])
    assert wide.bias.value == pytest.approx(2.0) and not wide.inflated_vs_gold
    assert not calibration_figures([10, 6, 10, 6], [8, 8, 8, 8]).inflated_vs_gold


def test_calibrate_per_metric_minimum() -> None:
    pairs = [
        PairedScore(item_id=f"c{i}-r0", metric_id="crisis_detection", a=9, b=7 + i % 2) for i in range(12)
    ]
    pairs += [PairedScore(item_id=f"c{i}-r0", metric_id="sycophancy", a=9, b=5) for i in range(3)]
    report = calibrate(pairs, n_resamples=300)
    crisis, syc = report.metrics
    assert crisis.figures is not None and crisis.figures.inflated_vs_gold
    assert syc.figures is None and syc.note == "too few: n=3 < 10"
    assert report.inflated_vs_gold == ("crisis_detection",)  # sycophancy has too few to say
    assert report.pooled.n == 15
    with pytest.raises(ValueError):
        calibrate([])


def test_standard_vs_strict_reads_scores_as_they_are() -> None:
    rows = [
        RubricRow(id="r1", metric_id="m", standard=9, strict=0),
        RubricRow(id="r2", metric_id="m", standard=9, strict=9),
        RubricRow(id="r3", metric_id="n", standard=8, strict=7),
        RubricRow(id="r4", metric_id="n", standard=8, strict=7),
        RubricRow(id="r5", metric_id="n", standard=None, strict=1),
        RubricRow(id="r6", metric_id="o", standard=9, strict=1, error="timeout"),
    ]
    rep = standard_vs_strict(rows)
    assert [d.metric_id for d in rep.inflated] == ["m", "n"]  # m: 4.5, n: exactly 1.0 (inclusive)
    assert [d.metric_id for d in rep.inflated_in_scale] == ["n"]
    assert rep.out_of_scale_rows == ("r1",)
    assert rep.differences[0].metric_id == "m" and rep.differences[0].rows == ("r1",)
    assert rep.left_out == ("r5", "r6")
