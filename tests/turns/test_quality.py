"""Annotator quality figures: per-label F1, macro-F1, the majority baseline, correlations,
Cohen's kappa, and failures counted as misses (never as a label)."""

from __future__ import annotations

import math

import pytest

from empath_gate.turns.model import AnnotatorFailure, TurnLabel, TurnLabels
from empath_gate.turns.quality import (
    baseline_scores,
    classification_scores,
    cohen_kappa,
    correlation,
    floor_checks,
    labels_for,
    majority_label,
    side_scores,
    spearman_interval,
)

LABELS = ("a", "b", "c")


def _label(turn: int, label: str, valence: float = 0.0, intensity: int = 1, strategy: str | None = None,
           role: str = "user") -> TurnLabel:
    return TurnLabel(turn=turn, role=role, label=label, intensity=intensity, valence=valence,
                     strategy=strategy)


def test_per_label_precision_recall_f1_by_hand() -> None:
    gold = ["a", "a", "a", "b", "b", "c"]
    pred = ["a", "a", "b", "b", "c", "c"]
    s = classification_scores(gold, pred, LABELS)
    a, b, c = (s.label(x) for x in LABELS)
    assert a is not None and b is not None and c is not None
    assert (a.support, a.predicted, a.correct) == (3, 2, 2)
    assert a.precision == 1.0 and a.recall == pytest.approx(2 / 3) and a.f1 == pytest.approx(0.8)
    assert b.precision == 0.5 and b.recall == 0.5 and b.f1 == pytest.approx(0.5)
    assert c.precision == 0.5 and c.recall == 1.0 and c.f1 == pytest.approx(2 / 3)
    assert s.macro_f1 == pytest.approx((0.8 + 0.5 + 2 / 3) / 3)
    assert s.accuracy == pytest.approx(4 / 6) and s.failures == 0


def test_macro_f1_averages_only_labels_with_gold_support() -> None:
    s = classification_scores(["a", "a", "b"], ["a", "a", "b"], LABELS)
    assert s.label("c") is not None and s.label("c").support == 0  # type: ignore[union-attr]
    assert s.macro_f1 == 1.0  # c has no gold item in this half: it neither helps nor hurts


def test_a_predicted_label_outside_the_set_is_reported_and_costs_recall() -> None:
    s = classification_scores(["a", "b"], ["a", "zzz"], LABELS)
    extra = s.label("zzz")
    assert extra is not None and extra.predicted == 1 and extra.support == 0
    assert s.label("b").recall == 0.0  # type: ignore[union-attr]
    assert s.macro_f1 == pytest.approx(0.5)


def test_failures_are_counted_and_scored_as_misses_never_as_a_label() -> None:
    gold = ["a", "b", "b"]
    s = classification_scores(gold, ["a", None, "b"], LABELS)
    assert s.failures == 1
    b = s.label("b")
    assert b is not None and b.recall == 0.5 and b.precision == 1.0 and b.predicted == 1
    assert sum(x.predicted for x in s.labels) == 2  # the failure predicted nothing
    assert s.accuracy == pytest.approx(2 / 3)
    # failing on the hard item never scores better than getting it wrong-free
    assert s.macro_f1 is not None and s.macro_f1 < 1.0


def test_undefined_precision_is_none_not_zero_and_f1_zero() -> None:
    s = classification_scores(["a", "b"], ["a", "a"], LABELS)
    b = s.label("b")
    assert b is not None and b.precision is None and b.recall == 0.0 and b.f1 == 0.0


def test_length_mismatch_raises() -> None:
    with pytest.raises(ValueError):
        classification_scores(["a"], [], LABELS)
    with pytest.raises(ValueError):
        correlation([1.0], [])
    with pytest.raises(ValueError):
        cohen_kappa(["a"], [])


def test_majority_label_and_its_tie_break() -> None:
    assert majority_label(["b", "c", "c", "b", "a"], LABELS) == "b"  # tie b/c: b comes first in the set
    assert majority_label(["c", "c", "a"], LABELS) == "c"
    with pytest.raises(ValueError):
        majority_label([], LABELS)


def test_majority_baseline_macro_f1() -> None:
    gold = ["a", "a", "a", "b"]
    base = baseline_scores(gold, "a", LABELS)
    # a: P 3/4, R 1, F1 6/7; b: F1 0 -> macro 3/7
    assert base.macro_f1 == pytest.approx((6 / 7) / 2)


def test_correlation_matches_known_values_and_excludes_missing() -> None:
    c = correlation([0.1, 0.2, 0.3, 0.4, None], [1.0, 3.0, 2.0, 4.0, 5.0])
    assert c.n == 4 and c.excluded == 1
    assert c.spearman == pytest.approx(0.8)
    assert c.pearson == pytest.approx(0.8)
    assert correlation([0.1, 0.1, 0.1], [0.2, 0.3, 0.4]).spearman is None  # constant side
    assert correlation([0.1, 0.2], [0.2, 0.3]).spearman is None  # too few pairs


def test_cohen_kappa_by_hand_and_edge_cases() -> None:
    # 10 items: a/a 4, b/b 3, a/b 2, b/a 1 -> po .7; pa(a)=.6 pb(a)=.5 -> pe .6*.5+.4*.5 = .5
    a = ["a"] * 4 + ["b"] * 3 + ["a"] * 2 + ["b"]
    b = ["a"] * 4 + ["b"] * 3 + ["b"] * 2 + ["a"]
    k = cohen_kappa(a, b)
    assert k.observed == pytest.approx(0.7) and k.expected == pytest.approx(0.5)
    assert k.kappa == pytest.approx(0.4)
    assert cohen_kappa(["a", "b", "c"], ["a", "b", "c"]).kappa == pytest.approx(1.0)
    assert cohen_kappa(["a", "a"], ["a", "a"]).kappa is None  # chance agreement 1
    missing = cohen_kappa(["a", None, "b"], ["a", "b", None])
    assert missing.n == 1 and missing.excluded == 2
    assert cohen_kappa([None], ["a"]).kappa is None


def test_cohen_kappa_agrees_with_the_confusion_matrix_formula() -> None:
    import random

    rng = random.Random(7)
    a = [rng.choice("xyz") for _ in range(200)]
    b = [x if rng.random() < 0.6 else rng.choice("xyz") for x in a]
    n = len(a)
    po = sum(x == y for x, y in zip(a, b, strict=True)) / n
    pe = sum((a.count(k) / n) * (b.count(k) / n) for k in "xyz")
    assert cohen_kappa(a, b).kappa == pytest.approx((po - pe) / (1 - pe))


def test_labels_for_failure_and_missing_turns() -> None:
    failure = AnnotatorFailure(conversation_id="c", annotator="offline", reason="parse_error")
    assert labels_for(failure, [0, 1]) == [None, None]
    got = TurnLabels(conversation_id="c", annotator="offline", version="1",
                     labels=(_label(0, "a"), _label(2, "b")))
    out = labels_for(got, [0, 1, 2])
    assert out[0] is not None and out[0].label == "a" and out[1] is None and out[2] is not None


def test_side_scores_margin_valence_intensity_and_strategies() -> None:
    gold_labels = ["a", "a", "b", "c"]
    pred = [_label(0, "a", -0.9, 3, "question"), _label(1, "a", -0.5, 2, "question"),
            _label(2, "b", 0.1, 1, "other"), None]
    s = side_scores(gold_labels, [-0.8, -0.6, 0.0, 0.7], [3, 1, 1, 2], pred, LABELS, "a",
                    gold_strategies=["question", "other", "other", "information"],
                    strategies=("question", "other", "information"))
    assert s.labels.failures == 1
    assert s.margin == pytest.approx(s.labels.macro_f1 - s.baseline.macro_f1)  # type: ignore[operator]
    assert s.valence.n == 3 and s.valence.excluded == 1 and s.valence.spearman == pytest.approx(1.0)
    assert s.intensity_mae == pytest.approx(1 / 3)
    assert s.strategies is not None
    q = s.strategies.label("question")
    assert q is not None and q.precision == 0.5 and q.recall == 1.0
    info = s.strategies.label("information")
    assert info is not None and info.recall == 0.0 and s.strategies.failures == 1


def test_floor_checks_met_and_not_met() -> None:
    gold = ["a", "b", "c", "a", "b", "c"]
    vals = [-0.9, -0.3, 0.5, -0.8, -0.2, 0.6]
    perfect = [_label(i, g, v) for i, (g, v) in enumerate(zip(gold, vals, strict=True))]
    good = side_scores(gold, vals, [1] * 6, perfect, LABELS, "a")
    assert all(f.met for f in floor_checks(good))
    flat = [_label(i, "a", 0.0) for i in range(6)]
    bad = side_scores(gold, vals, [1] * 6, flat, LABELS, "a")
    rho, margin = floor_checks(bad)
    assert not rho.met and rho.value is None  # a constant valence is undefined, not a pass
    assert not margin.met and margin.value == pytest.approx(0.0)
    failed = side_scores(gold, vals, [1] * 6, [None] * 6, LABELS, "a")
    assert not any(f.met for f in floor_checks(failed))
    assert failed.labels.macro_f1 == 0.0 and not math.isnan(failed.labels.macro_f1)


def test_the_spearman_interval_resamples_whole_conversations_and_holds_the_point_estimate() -> None:
    import random

    rng = random.Random(7)
    gold, pred, groups = [], [], []
    for c in range(40):  # 40 conversations of 6 turns; the annotator tracks gold with noise
        for _ in range(6):
            g = rng.uniform(-1, 1)
            gold.append(g)
            pred.append(g + rng.gauss(0, 0.6))
            groups.append(f"c{c}")
    rho = correlation(gold, pred).spearman
    assert rho is not None
    low, high = spearman_interval(gold, pred, groups) or (math.nan, math.nan)
    assert low < rho < high and 0.05 < high - low < 0.4
    assert spearman_interval(gold, pred, groups) == (low, high)  # fixed seed: the figure repeats
    # a single conversation leaves nothing to resample: undefined, not a number
    assert spearman_interval(gold[:6], pred[:6], groups[:6]) is None
    # a missing prediction is left out, never read as 0
    with_gap = [*pred[:-1], None]
    assert spearman_interval(gold, with_gap, groups) is not None
    with pytest.raises(ValueError):
        spearman_interval(gold, pred, groups[:-1])
