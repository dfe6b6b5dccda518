"""Agreement figures: kappa against the confusion-matrix definition, AC1 by hand, too-few rule, intervals."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats as sps

from empath_gate.calibration.agreement import (
    PairedScore,
    _rowwise_kappa,
    agreement,
    agreement_figures,
    quadratic_weighted_kappa,
)
from empath_gate.calibration.categorical import categorical_agreement, gwet_ac1


def test_weighted_kappa_closed_form_equals_confusion_matrix() -> None:
    rng = np.random.default_rng(5)
    for _ in range(20):
        a = rng.integers(1, 11, 30).astype(float)
        b = np.clip(a + rng.integers(-2, 3, 30), 1, 10)
        k = quadratic_weighted_kappa(a, b)
        assert k is not None
        assert _rowwise_kappa(a[None, :], b[None, :])[0] == pytest.approx(k, abs=1e-12)


def test_weighted_kappa_known_values() -> None:
    assert quadratic_weighted_kappa([1, 2, 3], [1, 2, 3]) == pytest.approx(1.0)
    # hand computation: O = diag over {1,2}, a = [1,1,2,2], b = [1,2,1,2] -> observed = expected
    assert quadratic_weighted_kappa([1, 1, 2, 2], [1, 2, 1, 2]) == pytest.approx(0.0)
    assert quadratic_weighted_kappa([5, 5], [5, 5]) is None


def test_figures_match_scipy_and_counts() -> None:
    a = [9, 8, 7, 10, 6, 9, 4, 8]
    b = [9, 7, 7, 8, 6, 10, 5, 8]
    f = agreement_figures(a, b, n_resamples=500)
    assert f.n == 8 and f.exact_count == 4 and f.within_one_count == 7
    assert f.exact.value == 0.5 and f.within_one.value == 7 / 8
    assert f.mean_abs_diff.value == pytest.approx(np.mean(np.abs(np.subtract(a, b))))
    assert f.pearson.value == pytest.approx(sps.pearsonr(a, b).statistic)
    assert f.spearman.value == pytest.approx(sps.spearmanr(a, b).statistic)
    for e in (f.exact, f.pearson, f.kappa_quadratic, f.krippendorff_alpha):
        assert e.ci_low is not None and e.ci_high is not None and e.ci_low <= e.ci_high
    assert agreement_figures(a, b, n_resamples=500) == f  # seeded


def test_constant_series_have_no_correlation() -> None:
    f = agreement_figures([9, 9, 9], [8, 9, 10], n_resamples=100)
    assert f.pearson.value is None and f.pearson.note
    with pytest.raises(ValueError):
        agreement_figures([1, 2], [1])


def test_per_metric_needs_min_n() -> None:
    pairs = [PairedScore(item_id=f"t{i}", metric_id="m1", a=8, b=8 - i % 2) for i in range(10)]
    pairs += [PairedScore(item_id=f"t{i}", metric_id="m2", a=7, b=7) for i in range(3)]
    report = agreement(pairs, n_resamples=200)
    m1, m2 = report.metrics
    assert m1.metric_id == "m1" and m1.figures is not None and m1.n == 10
    assert m2.figures is None and m2.note == "too few: n=3 < 10"
    assert report.pooled.n == 13


def test_gwet_ac1_by_hand() -> None:
    # 10 items, 7 agreements; A chosen 6+5 times of 20 -> pi_A = 0.55, p_e = 2 * 0.55 * 0.45 = 0.495
    a = list("AAAAAABBBB")
    b = list("AAAAABBBBA")
    pa = 8 / 10
    pi = (6 + 6) / 20
    pe = 2 * pi * (1 - pi)
    assert gwet_ac1(a, b, ["A", "B"]) == pytest.approx((pa - pe) / (1 - pe))
    with pytest.raises(ValueError, match="not one of"):
        gwet_ac1(["A"], ["C"], ["A", "B"])


def test_categorical_agreement_leaves_out_missing_and_ties() -> None:
    ra = {"e1": "A", "e2": "B", "e3": None, "e4": "tie", "e5": "A"}
    rb = {"e1": "A", "e2": "A", "e3": "A", "e4": "B", "e6": "B"}
    r = categorical_agreement(ra, rb, ("A", "B"), rater_a="x", rater_b="y", n_resamples=200)
    assert r.items == ("e1", "e2") and r.n == 2 and r.agreements == 1 and r.left_out == 2
    assert r.agreement == 0.5


def test_cluster_bootstrap_resamples_whole_clusters() -> None:
    # ten transcripts, each with two pairs: one identical, one a point apart
    a = [5.0, 5.0] * 10
    b = [5.0, 6.0] * 10
    clusters = [f"t{i // 2}" for i in range(20)]
    by_cluster = agreement_figures(a, b, clusters=clusters, n_resamples=300)
    by_pair = agreement_figures(a, b, n_resamples=300)
    assert by_cluster.units == 10 and by_pair.units is None
    assert by_cluster.exact.value == by_pair.exact.value == 0.5
    # every cluster holds one exact pair of two: every resample of clusters has share 0.5
    assert (by_cluster.exact.ci_low, by_cluster.exact.ci_high) == (0.5, 0.5)
    assert by_pair.exact.ci_low is not None and by_pair.exact.ci_high is not None
    assert by_pair.exact.ci_low < 0.5 < by_pair.exact.ci_high
    # one cluster per pair is the plain bootstrap, figure for figure
    singletons = agreement_figures(a, b, clusters=[f"p{i}" for i in range(20)], n_resamples=300)
    assert singletons == by_pair
    with pytest.raises(ValueError, match="one cluster label per pair"):
        agreement_figures(a, b, clusters=["x"])


def test_cluster_replicates_match_the_plain_figures_on_each_resample() -> None:
    rng = np.random.default_rng(3)
    a = rng.integers(1, 11, 24).astype(float)
    b = np.clip(a + rng.integers(-2, 3, 24), 1, 10)
    clusters = [f"c{i // 3}" for i in range(24)]
    f = agreement_figures(a, b, clusters=clusters, n_resamples=200)
    assert f.pearson.value == pytest.approx(sps.pearsonr(a, b).statistic)
    assert f.spearman.value == pytest.approx(sps.spearmanr(a, b).statistic)
    for e in (f.exact, f.pearson, f.spearman, f.kappa_quadratic, f.krippendorff_alpha):
        assert e.value is not None and e.ci_low is not None and e.ci_high is not None
        assert e.ci_low <= e.value <= e.ci_high
    assert agreement_figures(a, b, clusters=clusters, n_resamples=200) == f  # seeded


def test_per_metric_minimum_counts_clusters() -> None:
    pairs = [
        PairedScore(item_id=f"t{i // 6}#{i % 6}", metric_id="m", a=8, b=8 - i % 2, cluster=f"t{i // 6}")
        for i in range(24)
    ]
    report = agreement(pairs, n_resamples=100)
    (m,) = report.metrics
    assert m.n == 24 and m.figures is None and m.note == "too few: n=4 clusters < 10"
    assert report.pooled.n == 24 and report.pooled.units == 4
