"""Agreement between two scorings of the same items (two judges, or a judge and a person).

Ordinal scores (1-10), pooled and per metric, each with a bootstrap 95 % interval over items
(:mod:`empath_gate.analysis.bootstrap`: seeded, 2000 resamples, percentile):

* ``exact``: share of items scored identically; ``within_one``: share with ``|a - b| <= 1``;
  ``mean_abs_diff``: mean of ``|a - b|`` in points.
* ``pearson`` and ``spearman``: correlation coefficients (``scipy.stats.pearsonr`` /
  ``spearmanr``; undefined, hence ``None``, when either side is constant).
* ``kappa_quadratic``: Cohen's weighted kappa with quadratic weights (Cohen 1968, Psychol Bull
  70:213-220), ``1 - sum(w * O) / sum(w * E)`` over the confusion matrix ``O`` of the integer
  scale spanned by the data, ``E`` the outer product of the marginals, ``w_ij = (i - j)^2``
  (the usual ``/(k-1)^2`` normalisation cancels in the ratio). Equivalently
  ``1 - mean((a-b)^2) / (mean(a^2) + mean(b^2) - 2 mean(a) mean(b))``, the form used for the
  bootstrap replicates.
* ``krippendorff_alpha``: Krippendorff's alpha, ordinal level (Krippendorff 2004, *Content
  Analysis*, ch. 11), computed by the ``krippendorff`` package.

Per-metric figures need :data:`MIN_N` pairs; below that a metric is reported as "too few" and
only the pooled figures are given.

Categorical judgements (which of two systems is preferred) use Gwet's AC1 (Gwet 2008, Br J
Math Stat Psychol 61:29-48) over rated **items** (one judgement per rater and item, never one
per row of a file): with ``p_a`` the observed agreement, ``Q`` categories and ``pi_q`` the mean
of the two raters' shares of category ``q``, chance agreement is
``p_e = sum_q pi_q (1 - pi_q) / (Q - 1)`` and ``AC1 = (p_a - p_e) / (1 - p_e)``.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Protocol, TypeVar

import krippendorff
import numpy as np
import numpy.typing as npt
from scipy import stats as sps

from empath_gate.analysis.base import AnalysisModel
from empath_gate.analysis.bootstrap import (
    DEFAULT_RESAMPLES,
    DEFAULT_SEED,
    Estimate,
    FloatArray,
    estimate,
    resample_indices,
)

MIN_N = 10
"""Fewest pairs for per-metric figures (issue 8: a figure over three values is not evidence)."""


class PairedScore(AnalysisModel):
    """Two scores of the same item and metric: ``a`` (first judge, or the judge in
    calibration) and ``b`` (second judge, or the gold label), on the 1-10 scale.
    ``item_id`` names the scored thing (a transcript id, or ``<model>/<metric>``);
    ``group`` is an optional grouping such as the target model."""

    item_id: str
    metric_id: str
    a: float
    b: float
    group: str | None = None


class AgreementFigures(AnalysisModel):
    """Agreement over ``n`` pairs (module docstring); ``exact_count``/``within_one_count`` are
    the counts behind the two shares."""

    n: int
    exact_count: int
    within_one_count: int
    exact: Estimate
    within_one: Estimate
    mean_abs_diff: Estimate
    pearson: Estimate
    spearman: Estimate
    kappa_quadratic: Estimate
    krippendorff_alpha: Estimate


class MetricAgreement(AnalysisModel):
    """One metric's pairs: ``figures`` when ``n >= min_n``, else ``None`` with ``note`` "too few"."""

    metric_id: str
    n: int
    figures: AgreementFigures | None
    note: str | None = None


class AgreementReport(AnalysisModel):
    """Pooled and per-metric agreement; metrics in sorted id order."""

    pooled: AgreementFigures
    metrics: tuple[MetricAgreement, ...]
    min_n: int
    n_resamples: int
    seed: int


def _rowwise_pearson(x: FloatArray, y: FloatArray) -> FloatArray:
    xc = x - x.mean(axis=-1, keepdims=True)
    yc = y - y.mean(axis=-1, keepdims=True)
    den = np.sqrt((xc * xc).sum(axis=-1) * (yc * yc).sum(axis=-1))
    with np.errstate(invalid="ignore", divide="ignore"):
        out: FloatArray = np.where(den > 0, (xc * yc).sum(axis=-1) / np.where(den > 0, den, 1.0), np.nan)
    return out


def _rowwise_kappa(x: FloatArray, y: FloatArray) -> FloatArray:
    observed = ((x - y) ** 2).mean(axis=-1)
    expected = (x * x).mean(axis=-1) + (y * y).mean(axis=-1) - 2 * x.mean(axis=-1) * y.mean(axis=-1)
    with np.errstate(invalid="ignore", divide="ignore"):
        out: FloatArray = np.where(
            expected > 0, 1.0 - observed / np.where(expected > 0, expected, 1.0), np.nan
        )
    return out


def quadratic_weighted_kappa(
    a: Sequence[float] | FloatArray, b: Sequence[float] | FloatArray
) -> float | None:
    """Cohen's (1968) quadratic-weighted kappa through the confusion matrix over the integer
    scale ``min..max`` of the data; ``None`` when the expected disagreement is 0 (both raters
    constant on the same value). Scores are rounded to integers for the matrix."""
    x = np.rint(np.asarray(a, dtype=np.float64)).astype(int)
    y = np.rint(np.asarray(b, dtype=np.float64)).astype(int)
    if x.size == 0:
        return None
    low = int(min(x.min(), y.min()))
    k = int(max(x.max(), y.max())) - low + 1
    observed = np.zeros((k, k))
    np.add.at(observed, (x - low, y - low), 1.0)
    observed /= x.size
    expected = np.outer(observed.sum(axis=1), observed.sum(axis=0))
    idx = np.arange(k)
    weights = (idx[:, None] - idx[None, :]) ** 2
    den = float((weights * expected).sum())
    if den == 0:
        return None
    return 1.0 - float((weights * observed).sum()) / den


def _krippendorff(x: FloatArray, y: FloatArray) -> float:
    if np.unique(np.concatenate([x, y])).size < 2:
        return float("nan")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            return float(
                krippendorff.alpha(reliability_data=np.vstack([x, y]), level_of_measurement="ordinal")
            )
        except (ValueError, ZeroDivisionError):
            return float("nan")


def agreement_figures(
    a: Sequence[float] | FloatArray,
    b: Sequence[float] | FloatArray,
    *,
    n_resamples: int = DEFAULT_RESAMPLES,
    seed: int = DEFAULT_SEED,
) -> AgreementFigures:
    """Every ordinal agreement figure of paired scores ``a[i]``, ``b[i]`` with bootstrap 95 %
    intervals over items. Raises ValueError when the lengths differ or there is no pair."""
    x = np.asarray(a, dtype=np.float64)
    y = np.asarray(b, dtype=np.float64)
    if x.shape != y.shape or x.ndim != 1:
        raise ValueError("paired scores must be two 1-D sequences of the same length")
    n = int(x.size)
    if n == 0:
        raise ValueError("no paired scores")
    d = np.abs(x - y)
    idx = resample_indices(n, n_resamples=n_resamples, seed=seed)
    xb, yb = x[idx], y[idx]
    db = np.abs(xb - yb)
    pearson = _rowwise_pearson(x, y)
    spearman = _rowwise_pearson(sps.rankdata(x), sps.rankdata(y))
    kappa = quadratic_weighted_kappa(x, y)
    alpha = _krippendorff(x, y)
    alpha_b = np.array([_krippendorff(xb[i], yb[i]) for i in range(n_resamples)]) if n > 1 else None
    boot = n > 1
    return AgreementFigures(
        n=n,
        exact_count=int((d == 0).sum()),
        within_one_count=int((d <= 1).sum()),
        exact=estimate(float((d == 0).mean()), (db == 0).mean(axis=1) if boot else None),
        within_one=estimate(float((d <= 1).mean()), (db <= 1).mean(axis=1) if boot else None),
        mean_abs_diff=estimate(float(d.mean()), db.mean(axis=1) if boot else None),
        pearson=estimate(float(pearson), _rowwise_pearson(xb, yb) if boot else None),
        spearman=estimate(
            float(spearman),
            _rowwise_pearson(sps.rankdata(xb, axis=1), sps.rankdata(yb, axis=1)) if boot else None,
        ),
        kappa_quadratic=estimate(kappa, _rowwise_kappa(xb, yb) if boot else None),
        krippendorff_alpha=estimate(alpha, alpha_b),
    )


def too_few(n: int, min_n: int) -> str:
    """The note of a metric below the minimum n."""
    return f"too few: n={n} < {min_n}"


class _HasMetricId(Protocol):
    @property
    def metric_id(self) -> str: ...


_ItemT = TypeVar("_ItemT", bound=_HasMetricId)
_FiguresT = TypeVar("_FiguresT")


def group_by_metric(items: Iterable[_ItemT]) -> list[tuple[str, list[_ItemT]]]:
    """``items`` grouped by their ``metric_id``: ``(metric_id, items)`` in sorted id order, each
    group's items in input order."""
    grouped: dict[str, list[_ItemT]] = {}
    for item in items:
        grouped.setdefault(item.metric_id, []).append(item)
    return [(metric, grouped[metric]) for metric in sorted(grouped)]


def figures_by_metric(
    pairs: Sequence[PairedScore],
    figures: Callable[[list[float], list[float]], _FiguresT],
    *,
    min_n: int,
) -> list[tuple[str, int, _FiguresT | None, str | None]]:
    """``(metric_id, n, figures, note)`` per metric of ``pairs``, in sorted id order:
    ``figures(a_scores, b_scores)`` of the metric's pairs when there are at least ``min_n`` of
    them, else ``None`` with the :func:`too_few` note (agreement and calibration alike)."""
    out: list[tuple[str, int, _FiguresT | None, str | None]] = []
    for metric, ps in group_by_metric(pairs):
        if len(ps) < min_n:
            out.append((metric, len(ps), None, too_few(len(ps), min_n)))
        else:
            out.append((metric, len(ps), figures([p.a for p in ps], [p.b for p in ps]), None))
    return out


def agreement(
    pairs: Sequence[PairedScore],
    *,
    min_n: int = MIN_N,
    n_resamples: int = DEFAULT_RESAMPLES,
    seed: int = DEFAULT_SEED,
) -> AgreementReport:
    """Pooled and per-metric agreement of ``pairs`` (module docstring). Raises ValueError when
    ``pairs`` is empty."""
    if not pairs:
        raise ValueError("no paired scores to compare")

    def figures(a: list[float], b: list[float]) -> AgreementFigures:
        return agreement_figures(a, b, n_resamples=n_resamples, seed=seed)

    metrics = tuple(
        MetricAgreement(metric_id=metric, n=n, figures=f, note=note)
        for metric, n, f, note in figures_by_metric(pairs, figures, min_n=min_n)
    )
    return AgreementReport(
        pooled=figures([p.a for p in pairs], [p.b for p in pairs]),
        metrics=metrics,
        min_n=min_n,
        n_resamples=n_resamples,
        seed=seed,
    )


# ----------------------------------------------------------------------------- categorical


class CategoricalAgreement(AnalysisModel):
    """Gwet's AC1 between two raters over the items both rated with one of ``categories``.

    ``n``: items kept; ``agreements``: items with the same category; ``agreement``: their
    share; ``ac1``: with its bootstrap 95 % interval over items; ``left_out``: items rated by
    both but left out because a rating is missing or not one of ``categories`` (e.g. a tie or
    no preference); ``items``: the kept item ids, sorted.
    """

    rater_a: str
    rater_b: str
    categories: tuple[str, ...]
    n: int
    agreements: int
    agreement: float | None
    ac1: Estimate
    left_out: int
    items: tuple[str, ...]


def gwet_ac1(a: Sequence[str], b: Sequence[str], categories: Sequence[str]) -> float | None:
    """Gwet's AC1 of two raters' categorical ratings of the same items (module docstring).

    ``categories``: the Q >= 2 categories of the scheme (every rating must be one of them).
    ``None`` with no item, or when chance agreement is 1. Raises ValueError for a rating
    outside ``categories``, lengths that differ, or fewer than two categories."""
    if len(a) != len(b):
        raise ValueError("both raters must rate the same items")
    cats = list(categories)
    if len(cats) < 2:
        raise ValueError("Gwet's AC1 needs at least two categories")
    index = {c: i for i, c in enumerate(cats)}
    for r in (*a, *b):
        if r not in index:
            raise ValueError(f"rating {r!r} is not one of the categories {cats}")
    n = len(a)
    if n == 0:
        return None
    x = np.array([index[r] for r in a])
    y = np.array([index[r] for r in b])
    return _ac1(x[None, :], y[None, :], len(cats))[0]


def _ac1(x: npt.NDArray[np.int_], y: npt.NDArray[np.int_], q: int) -> list[float | None]:
    n = x.shape[1]
    pa = (x == y).mean(axis=1)
    pe = np.zeros(x.shape[0])
    for k in range(q):
        pi = ((x == k).sum(axis=1) + (y == k).sum(axis=1)) / (2.0 * n)
        pe += pi * (1.0 - pi)
    pe /= q - 1
    return [None if e >= 1.0 else float((p - e) / (1.0 - e)) for p, e in zip(pa, pe, strict=True)]


def categorical_agreement(
    ratings_a: Mapping[str, str | None],
    ratings_b: Mapping[str, str | None],
    categories: Sequence[str],
    *,
    rater_a: str = "a",
    rater_b: str = "b",
    n_resamples: int = DEFAULT_RESAMPLES,
    seed: int = DEFAULT_SEED,
) -> CategoricalAgreement:
    """Gwet's AC1 over the items both raters rated with one of ``categories``.

    ``ratings_a``/``ratings_b``: item id -> category (``None`` or any value outside
    ``categories``, such as ``"tie"`` or ``"none"``, leaves the item out and is counted in
    ``left_out``)."""
    shared = sorted(set(ratings_a) & set(ratings_b))
    cats = tuple(categories)
    kept = [i for i in shared if ratings_a[i] in cats and ratings_b[i] in cats]
    a = [str(ratings_a[i]) for i in kept]
    b = [str(ratings_b[i]) for i in kept]
    n = len(kept)
    agreements = sum(1 for x, y in zip(a, b, strict=True) if x == y)
    value = gwet_ac1(a, b, cats)
    samples: FloatArray | None = None
    if n > 1:
        index = {c: i for i, c in enumerate(cats)}
        x = np.array([index[r] for r in a])
        y = np.array([index[r] for r in b])
        idx = resample_indices(n, n_resamples=n_resamples, seed=seed)
        reps = _ac1(x[idx], y[idx], len(cats))
        samples = np.array([np.nan if r is None else r for r in reps], dtype=np.float64)
    return CategoricalAgreement(
        rater_a=rater_a,
        rater_b=rater_b,
        categories=cats,
        n=n,
        agreements=agreements,
        agreement=agreements / n if n else None,
        ac1=estimate(value, samples, note=None if n else "no item rated by both"),
        left_out=len(shared) - n,
        items=tuple(kept),
    )
