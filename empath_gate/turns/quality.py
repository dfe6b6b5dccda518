"""How well an annotator's turn labels match a gold standard, and how well two annotators agree.
Pure functions over plain sequences; the gold file and the bench are elsewhere
(:mod:`empath_gate.turns.gold`, :mod:`empath_gate.turns.gold_eval`).

A **missing prediction** (``None``: the annotator returned an
:class:`~empath_gate.turns.model.AnnotatorFailure` for the dialogue, or left the turn out) is
never turned into a label. It is counted (``failures``) and scored as a miss: it lowers the
recall of the gold label and adds a false positive to no label, so an annotator cannot look
better by failing on hard items. Correlations and kappa use only the items with a value on
both sides and report how many were left out (``excluded``).

Definitions (each figure is ``None`` when undefined, never a default number):

* per label: ``precision = correct / predicted``, ``recall = correct / support``,
  ``F1 = 2PR / (P + R)`` (0 when either is undefined or both are 0, as is usual for averaging);
* **macro-F1**: the unweighted mean of the per-label F1 over the labels with gold support in
  the items scored (a label absent from the gold of a half neither helps nor hurts);
* **majority baseline**: every item predicted as the most frequent gold label of the tune half
  (ties: the earlier label in the label set's order), scored by the same definitions;
* **Spearman / Pearson** (``scipy.stats.spearmanr`` / ``pearsonr``), over pairs with both
  values; ``None`` below :data:`MIN_CORRELATION_N` pairs or when either side is constant;
* **interval of Spearman's rho** (:func:`spearman_interval`): the 2.5th and 97.5th
  percentiles of rho over :data:`BOOTSTRAP_RESAMPLES` cluster-bootstrap resamples (whole
  conversations drawn with replacement, because the turns of one conversation are not
  independent; Field & Welsh 2007, "Bootstrapping clustered data", JRSS B 69:369-390), with a
  fixed seed so the figure repeats;
* **Cohen's kappa** (Cohen 1960, Educ Psychol Meas 20:37-46), unweighted, for nominal labels:
  ``(p_o - p_e) / (1 - p_e)`` with ``p_o`` the observed agreement and ``p_e = sum_k a_k b_k``
  the chance agreement from the two raters' label shares. ``scipy.stats`` has no Cohen's
  kappa (its ``kappa3``/``kappa4`` are distribution names); the package's ordinal
  ``quadratic_weighted_kappa`` (:mod:`empath_gate.calibration.agreement`) weighs distance on a
  scale, which nominal labels do not have.
"""

from __future__ import annotations

import math
import warnings
from collections import Counter
from collections.abc import Sequence

from scipy import stats as sps

from empath_gate.analysis.base import AnalysisModel
from empath_gate.turns.model import Annotation, AnnotatorFailure, TurnLabel

VALENCE_SPEARMAN_FLOOR = 0.5
"""Least valence Spearman of an annotator against the gold's held-out half (issue 16)."""

MACRO_F1_MARGIN_FLOOR = 0.15
"""Least margin of macro-F1 over the majority-label baseline on the held-out half (issue 16)."""

MIN_CORRELATION_N = 3
"""Fewest pairs for a correlation (with two pairs any rank correlation is +-1)."""


class LabelScore(AnalysisModel):
    """One label's figures: ``support`` gold items with the label, ``predicted`` items the
    annotator gave it, ``correct`` both; ``precision``/``recall`` in 0..1 (``None`` when the
    denominator is 0); ``f1`` in 0..1."""

    label: str
    support: int
    predicted: int
    correct: int
    precision: float | None
    recall: float | None
    f1: float


class ClassScores(AnalysisModel):
    """Classification figures over ``n`` gold items: ``failures`` items without a prediction
    (scored as misses); ``accuracy`` the share correct; ``labels`` per label (the label set's
    order, then any other label the annotator predicted); ``macro_f1`` the mean F1 over labels
    with support (``None`` when no item was scored)."""

    n: int
    failures: int
    accuracy: float | None
    labels: tuple[LabelScore, ...]
    macro_f1: float | None

    def label(self, label: str) -> LabelScore | None:
        """The figures of ``label`` (``None`` when it is neither in the set nor predicted)."""
        return next((s for s in self.labels if s.label == label), None)


class Correlation(AnalysisModel):
    """Correlation over ``n`` pairs with both values; ``excluded`` pairs left out (a value
    missing on either side); ``spearman``/``pearson`` in -1..1 or ``None`` (module docstring)."""

    n: int
    excluded: int
    spearman: float | None
    pearson: float | None


class Kappa(AnalysisModel):
    """Cohen's kappa over ``n`` items both raters labelled (``excluded``: items where either
    has no label); ``observed`` and ``expected`` agreement in 0..1; ``kappa`` in -1..1, or
    ``None`` when there is no item or chance agreement is 1 (both raters constant on one label)."""

    n: int
    excluded: int
    observed: float | None
    expected: float | None
    kappa: float | None


def _ratio(num: int, den: int) -> float | None:
    return num / den if den else None


def classification_scores(gold: Sequence[str], predicted: Sequence[str | None],
                          labels: Sequence[str]) -> ClassScores:
    """Per-label precision, recall and F1, accuracy and macro-F1 of ``predicted`` against
    ``gold`` (same length; ``None`` a missing prediction, scored as a miss); ``labels`` the
    label set (its order is the report's). ValueError when the lengths differ."""
    if len(gold) != len(predicted):
        raise ValueError(f"{len(gold)} gold labels but {len(predicted)} predictions")
    support = Counter(gold)
    made = Counter(p for p in predicted if p is not None)
    correct = Counter(g for g, p in zip(gold, predicted, strict=True) if g == p)
    order = list(labels) + sorted((set(support) | set(made)) - set(labels))
    scores = []
    for label in order:
        precision = _ratio(correct[label], made[label])
        recall = _ratio(correct[label], support[label])
        p, r = precision or 0.0, recall or 0.0
        f1 = 2 * p * r / (p + r) if p + r > 0 else 0.0
        scores.append(LabelScore(label=label, support=support[label], predicted=made[label],
                                 correct=correct[label], precision=precision, recall=recall, f1=f1))
    present = [s.f1 for s in scores if s.support > 0]
    return ClassScores(
        n=len(gold), failures=sum(p is None for p in predicted),
        accuracy=_ratio(sum(correct.values()), len(gold)), labels=tuple(scores),
        macro_f1=sum(present) / len(present) if present else None)


def majority_label(tune_gold: Sequence[str], labels: Sequence[str]) -> str:
    """The most frequent label of ``tune_gold`` (ties: the earlier one in ``labels``, then by
    name). ValueError when ``tune_gold`` is empty."""
    if not tune_gold:
        raise ValueError("the tune half has no gold label to take the majority of")
    counts = Counter(tune_gold)
    rank = {label: i for i, label in enumerate(labels)}
    return min(counts, key=lambda lab: (-counts[lab], rank.get(lab, len(rank)), lab))


def baseline_scores(gold: Sequence[str], majority: str, labels: Sequence[str]) -> ClassScores:
    """The majority-label baseline: :func:`classification_scores` with every item predicted
    as ``majority``."""
    return classification_scores(gold, [majority] * len(gold), labels)


def _finite(value: float) -> float | None:
    return value if math.isfinite(value) else None


def correlation(a: Sequence[float | None], b: Sequence[float | None]) -> Correlation:
    """Spearman and Pearson correlation of ``a`` and ``b`` (same length) over the pairs where
    neither is ``None``. ValueError when the lengths differ."""
    if len(a) != len(b):
        raise ValueError(f"{len(a)} values against {len(b)}")
    pairs = [(x, y) for x, y in zip(a, b, strict=True) if x is not None and y is not None]
    n, excluded = len(pairs), len(a) - len(pairs)
    xs, ys = [p[0] for p in pairs], [p[1] for p in pairs]
    if n < MIN_CORRELATION_N or len(set(xs)) < 2 or len(set(ys)) < 2:
        return Correlation(n=n, excluded=excluded, spearman=None, pearson=None)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        rho = float(sps.spearmanr(xs, ys).statistic)
        r = float(sps.pearsonr(xs, ys).statistic)
    return Correlation(n=n, excluded=excluded, spearman=_finite(rho), pearson=_finite(r))


BOOTSTRAP_RESAMPLES = 2000
"""Resamples of :func:`spearman_interval`: 2,000 keeps the Monte Carlo error of a 95%
percentile bound near 0.01 on rho (Efron & Tibshirani 1993, *An Introduction to the Bootstrap*,
ch. 19: 1,000 to 2,000 resamples for percentile intervals)."""


def spearman_interval(a: Sequence[float | None], b: Sequence[float | None], groups: Sequence[str],
                      resamples: int = BOOTSTRAP_RESAMPLES, seed: int = 0) -> tuple[float, float] | None:
    """95% percentile interval ``(low, high)`` of Spearman's rho between ``a`` and ``b`` by a
    cluster bootstrap over ``groups`` (one id per item, e.g. the conversation; module
    docstring), over the pairs where neither value is ``None``. ``None`` with fewer than 2
    groups or when fewer than half the resamples give a defined rho (:func:`correlation`).
    ValueError when the lengths differ."""
    if not len(a) == len(b) == len(groups):
        raise ValueError(f"{len(a)} / {len(b)} values against {len(groups)} groups")
    import numpy as np

    by_group: dict[str, list[tuple[float, float]]] = {}
    for x, y, g in zip(a, b, groups, strict=True):
        if x is not None and y is not None:
            by_group.setdefault(g, []).append((x, y))
    clusters = list(by_group.values())
    if len(clusters) < 2:
        return None
    rng = np.random.default_rng(seed)
    rhos: list[float] = []
    for _ in range(resamples):
        pairs = [p for i in rng.integers(0, len(clusters), len(clusters)) for p in clusters[i]]
        rho = correlation([p[0] for p in pairs], [p[1] for p in pairs]).spearman
        if rho is not None:
            rhos.append(rho)
    if len(rhos) * 2 < resamples:
        return None
    low, high = np.percentile(rhos, [2.5, 97.5])
    return float(low), float(high)


def cohen_kappa(a: Sequence[str | None], b: Sequence[str | None]) -> Kappa:
    """Unweighted Cohen's kappa between two raters' labels of the same items (module
    docstring), over the items both labelled. ValueError when the lengths differ."""
    if len(a) != len(b):
        raise ValueError(f"{len(a)} labels against {len(b)}")
    pairs = [(x, y) for x, y in zip(a, b, strict=True) if x is not None and y is not None]
    n, excluded = len(pairs), len(a) - len(pairs)
    if not n:
        return Kappa(n=0, excluded=excluded, observed=None, expected=None, kappa=None)
    observed = sum(x == y for x, y in pairs) / n
    share_a, share_b = Counter(x for x, _ in pairs), Counter(y for _, y in pairs)
    expected = sum(share_a[k] * share_b[k] for k in share_a) / (n * n)
    kappa = None if expected >= 1.0 else (observed - expected) / (1.0 - expected)
    return Kappa(n=n, excluded=excluded, observed=observed, expected=expected, kappa=kappa)


def labels_for(annotation: Annotation, turns: Sequence[int]) -> list[TurnLabel | None]:
    """The annotator's label of each dialogue turn index in ``turns``: ``None`` for every turn
    when ``annotation`` is an :class:`AnnotatorFailure`, and for a turn the labels leave out."""
    if isinstance(annotation, AnnotatorFailure):
        return [None] * len(turns)
    by_turn = {label.turn: label for label in annotation.labels}
    return [by_turn.get(t) for t in turns]


class SideScores(AnalysisModel):
    """An annotator against the gold on one side (user turns or bot replies) of one half:
    ``labels`` its classification figures; ``majority`` the tune half's most frequent label and
    ``baseline`` that constant prediction's figures; ``margin`` macro-F1 minus the baseline's
    (``None`` when undefined); ``valence`` the correlation of its valence with the gold's;
    ``intensity_mae`` mean absolute intensity error (0..3) over labelled items; ``strategies``
    per-strategy figures (bot side only, else ``None``)."""

    labels: ClassScores
    majority: str
    baseline: ClassScores
    margin: float | None
    valence: Correlation
    intensity_mae: float | None
    strategies: ClassScores | None = None


def side_scores(gold_labels: Sequence[str], gold_valences: Sequence[float], gold_intensities: Sequence[int],
                predicted: Sequence[TurnLabel | None], labels: Sequence[str], majority: str,
                gold_strategies: Sequence[str] | None = None,
                strategies: Sequence[str] = ()) -> SideScores:
    """Score ``predicted`` (one :class:`TurnLabel` or ``None`` per gold item, same order)
    against the gold labels, valences and intensities; with ``gold_strategies`` also the
    strategies (a predicted turn without a strategy is a miss). ValueError on length mismatch."""
    if not len(gold_labels) == len(gold_valences) == len(gold_intensities) == len(predicted):
        raise ValueError("gold labels, valences, intensities and predictions differ in length")
    scores = classification_scores(gold_labels, [p.label if p else None for p in predicted], labels)
    baseline = baseline_scores(gold_labels, majority, labels)
    margin = (scores.macro_f1 - baseline.macro_f1
              if scores.macro_f1 is not None and baseline.macro_f1 is not None else None)
    valence = correlation(list(gold_valences), [p.valence if p else None for p in predicted])
    errors = [abs(p.intensity - g) for g, p in zip(gold_intensities, predicted, strict=True) if p]
    strat = None
    if gold_strategies is not None:
        strat = classification_scores(gold_strategies, [p.strategy if p else None for p in predicted],
                                      strategies)
    return SideScores(labels=scores, majority=majority, baseline=baseline, margin=margin, valence=valence,
                      intensity_mae=sum(errors) / len(errors) if errors else None, strategies=strat)


class FloorCheck(AnalysisModel):
    """One floor: ``name`` (what is compared), ``value`` (``None``: undefined, which is not
    met), ``floor`` and whether it is ``met``."""

    name: str
    value: float | None
    floor: float
    met: bool


def floor_checks(scores: SideScores) -> tuple[FloorCheck, FloorCheck]:
    """The issue's two floors for one side: valence Spearman >= :data:`VALENCE_SPEARMAN_FLOOR`
    and macro-F1 margin over the majority baseline >= :data:`MACRO_F1_MARGIN_FLOOR`."""
    rho, margin = scores.valence.spearman, scores.margin
    return (
        FloorCheck(name="valence Spearman", value=rho, floor=VALENCE_SPEARMAN_FLOOR,
                   met=rho is not None and rho >= VALENCE_SPEARMAN_FLOOR),
        FloorCheck(name="macro-F1 margin over the majority baseline", value=margin,
                   floor=MACRO_F1_MARGIN_FLOOR,
                   met=margin is not None and margin >= MACRO_F1_MARGIN_FLOOR - 1e-12),
    )


class Agreement(AnalysisModel):
    """Two annotators on the same turns: ``kappa`` on the primary label and ``valence``
    correlation (turns a failure left unlabelled by either are excluded and counted)."""

    kappa: Kappa
    valence: Correlation


def agreement(a: Sequence[TurnLabel | None], b: Sequence[TurnLabel | None]) -> Agreement:
    """Agreement of two annotators' labels of the same turns (same order and length)."""
    kappa = cohen_kappa([x.label if x else None for x in a], [y.label if y else None for y in b])
    valence = correlation([x.valence if x else None for x in a], [y.valence if y else None for y in b])
    return Agreement(kappa=kappa, valence=valence)


__all__ = [
    "MACRO_F1_MARGIN_FLOOR",
    "MIN_CORRELATION_N",
    "VALENCE_SPEARMAN_FLOOR",
    "Agreement",
    "ClassScores",
    "Correlation",
    "FloorCheck",
    "Kappa",
    "LabelScore",
    "SideScores",
    "agreement",
    "baseline_scores",
    "classification_scores",
    "cohen_kappa",
    "correlation",
    "floor_checks",
    "labels_for",
    "majority_label",
    "side_scores",
]
