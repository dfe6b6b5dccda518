"""Agreement between two scorings of the same items (two judges, a judge with itself, or a
judge and a person).

Ordinal scores (1-10), pooled and per metric, each with a bootstrap 95 % interval
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
  Analysis*, ch. 11), computed by the ``krippendorff`` package over the pairs (each pair one
  unit rated by two coders).

The bootstrap resamples **units**: each pair is its own unit, unless pairs carry a
``cluster`` (the re-judgings of one transcript x metric give several pairs that are not
independent), in which case whole clusters are resampled with all their pairs (the cluster
bootstrap; Davison & Hinkley 1997, *Bootstrap Methods and their Application*, sec. 3.8).

Per-metric figures need :data:`MIN_N` pairs; below that a metric is reported as "too few" and
only the pooled figures are given. Categorical judgements (which system is preferred):
:mod:`empath_gate.calibration.categorical`.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Iterable, Sequence
from typing import Protocol, TypeVar

import krippendorff
import numpy as np
from scipy import stats as sps

from empath_gate.analysis.base import AnalysisModel
from empath_gate.analysis.bootstrap import (
    DEFAULT_RESAMPLES,
    DEFAULT_SEED,
    Estimate,
    FloatArray,
    IntArray,
    estimate,
    resample_indices,
)

MIN_N = 10
"""Fewest pairs for per-metric figures (issue 8: a figure over three values is not evidence)."""


class PairedScore(AnalysisModel):
    """Two scores of the same item and metric: ``a`` (first judge, or the judge in
    calibration) and ``b`` (second judge, or the gold label), on the 1-10 scale.
    ``item_id`` names the scored thing (a transcript id, or ``<model>/<metric>``);
    ``group`` is an optional grouping such as the target model; ``cluster``, when set, the
    unit the bootstrap resamples (pairs of one cluster are drawn together; module docstring)."""

    item_id: str
    metric_id: str
    a: float
    b: float
    group: str | None = None
    cluster: str | None = None


class AgreementFigures(AnalysisModel):
    """Agreement over ``n`` pairs (module docstring); ``exact_count``/``within_one_count`` are
    the counts behind the two shares; ``units``: the clusters the bootstrap resampled when the
    pairs are clustered (``None``: each pair is a unit)."""

    n: int
    units: int | None = None
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


_FIGURES = (
    "exact",
    "within_one",
    "mean_abs_diff",
    "pearson",
    "spearman",
    "kappa_quadratic",
    "krippendorff_alpha",
)
"""The bootstrapped figures of :class:`AgreementFigures`, in its field order."""


def _replicates_by_pair(x: FloatArray, y: FloatArray, idx: IntArray) -> dict[str, FloatArray]:
    """Every figure on each resample of pairs (``idx``: shape ``(B, n)``), vectorised."""
    xb, yb = x[idx], y[idx]
    db = np.abs(xb - yb)
    return {
        "exact": (db == 0).mean(axis=1),
        "within_one": (db <= 1).mean(axis=1),
        "mean_abs_diff": db.mean(axis=1),
        "pearson": _rowwise_pearson(xb, yb),
        "spearman": _rowwise_pearson(sps.rankdata(xb, axis=1), sps.rankdata(yb, axis=1)),
        "kappa_quadratic": _rowwise_kappa(xb, yb),
        "krippendorff_alpha": np.array([_krippendorff(xb[i], yb[i]) for i in range(idx.shape[0])]),
    }


def _replicates_by_cluster(
    x: FloatArray, y: FloatArray, members: list[IntArray], *, n_resamples: int, seed: int
) -> dict[str, FloatArray]:
    """Every figure on each resample of whole clusters (``members``: the pair indices of each
    cluster); resamples differ in size, so one at a time."""
    picks = resample_indices(len(members), n_resamples=n_resamples, seed=seed)
    out = {k: np.empty(n_resamples, dtype=np.float64) for k in _FIGURES}
    for r, row in enumerate(picks):
        ix = np.concatenate([members[g] for g in row])
        xr, yr = x[ix], y[ix]
        dr = np.abs(xr - yr)
        out["exact"][r] = (dr == 0).mean()
        out["within_one"][r] = (dr <= 1).mean()
        out["mean_abs_diff"][r] = dr.mean()
        out["pearson"][r] = _rowwise_pearson(xr, yr)
        out["spearman"][r] = _rowwise_pearson(_midranks(xr), _midranks(yr))
        out["kappa_quadratic"][r] = _rowwise_kappa(xr, yr)
        out["krippendorff_alpha"][r] = _krippendorff(xr, yr)
    return out


def _midranks(v: FloatArray) -> FloatArray:
    """Ranks 1..n with ties given their mean rank: ``scipy.stats.rankdata(v)`` (method
    ``average``) in one ``numpy.unique``, for the many small replicates of the cluster bootstrap."""
    _, inverse, counts = np.unique(v, return_inverse=True, return_counts=True)
    ranks: FloatArray = (np.cumsum(counts) - (counts - 1) / 2.0).astype(np.float64)
    return ranks[inverse]


def _cluster_members(clusters: Sequence[str | None]) -> list[IntArray]:
    """Pair indices per cluster, clusters in order of first appearance (``None``: a cluster of
    its own)."""
    index: dict[object, list[int]] = {}
    for i, c in enumerate(clusters):
        index.setdefault(("pair", i) if c is None else c, []).append(i)
    return [np.asarray(v, dtype=np.intp) for v in index.values()]


def agreement_figures(
    a: Sequence[float] | FloatArray,
    b: Sequence[float] | FloatArray,
    *,
    clusters: Sequence[str | None] | None = None,
    n_resamples: int = DEFAULT_RESAMPLES,
    seed: int = DEFAULT_SEED,
) -> AgreementFigures:
    """Every ordinal agreement figure of paired scores ``a[i]``, ``b[i]`` with bootstrap 95 %
    intervals over units: pairs, or, with ``clusters`` (one label per pair), whole clusters
    (module docstring). Raises ValueError when the lengths differ or there is no pair."""
    x = np.asarray(a, dtype=np.float64)
    y = np.asarray(b, dtype=np.float64)
    if x.shape != y.shape or x.ndim != 1:
        raise ValueError("paired scores must be two 1-D sequences of the same length")
    n = int(x.size)
    if n == 0:
        raise ValueError("no paired scores")
    if clusters is not None and len(clusters) != n:
        raise ValueError("one cluster label per pair")
    members = _cluster_members(clusters) if clusters is not None else []
    clustered = 0 < len(members) < n
    units = len(members) if clustered else n
    reps: dict[str, FloatArray] | None = None
    if units > 1:
        reps = (
            _replicates_by_cluster(x, y, members, n_resamples=n_resamples, seed=seed)
            if clustered
            else _replicates_by_pair(x, y, resample_indices(n, n_resamples=n_resamples, seed=seed))
        )
    d = np.abs(x - y)
    points: dict[str, float | None] = {
        "exact": float((d == 0).mean()),
        "within_one": float((d <= 1).mean()),
        "mean_abs_diff": float(d.mean()),
        "pearson": float(_rowwise_pearson(x, y)),
        "spearman": float(_rowwise_pearson(sps.rankdata(x), sps.rankdata(y))),
        "kappa_quadratic": quadratic_weighted_kappa(x, y),
        "krippendorff_alpha": _krippendorff(x, y),
    }
    return AgreementFigures(
        n=n,
        units=units if clustered else None,
        exact_count=int((d == 0).sum()),
        within_one_count=int((d <= 1).sum()),
        **{k: estimate(points[k], None if reps is None else reps[k]) for k in _FIGURES},
    )


def too_few(n: int, min_n: int, unit: str | None = None) -> str:
    """The note of a metric below the minimum n (``unit``: what ``n`` counts, when not pairs)."""
    return f"too few: n={n} < {min_n}" if unit is None else f"too few: n={n} {unit} < {min_n}"


def units(pairs: Sequence[PairedScore]) -> int:
    """Independent units among ``pairs``: their distinct clusters, a pair without one counting
    alone (module docstring)."""
    return len({(i, None) if p.cluster is None else (-1, p.cluster) for i, p in enumerate(pairs)})


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
    figures: Callable[[Sequence[PairedScore]], _FiguresT],
    *,
    min_n: int,
) -> list[tuple[str, int, _FiguresT | None, str | None]]:
    """``(metric_id, n, figures, note)`` per metric of ``pairs``, in sorted id order:
    ``figures(metric_pairs)`` when the metric has at least ``min_n`` :func:`units` (pairs, or
    clusters of pairs), else ``None`` with the :func:`too_few` note (agreement and calibration
    alike)."""
    out: list[tuple[str, int, _FiguresT | None, str | None]] = []
    for metric, ps in group_by_metric(pairs):
        k = units(ps)
        if k < min_n:
            out.append((metric, len(ps), None, too_few(k, min_n, None if k == len(ps) else "clusters")))
        else:
            out.append((metric, len(ps), figures(ps), None))
    return out


def agreement(
    pairs: Sequence[PairedScore],
    *,
    min_n: int = MIN_N,
    n_resamples: int = DEFAULT_RESAMPLES,
    seed: int = DEFAULT_SEED,
) -> AgreementReport:
    """Pooled and per-metric agreement of ``pairs`` (module docstring), clustered when pairs
    carry a ``cluster``. Raises ValueError when ``pairs`` is empty."""
    if not pairs:
        raise ValueError("no paired scores to compare")

    def figures(ps: Sequence[PairedScore]) -> AgreementFigures:
        clusters = [p.cluster for p in ps] if any(p.cluster is not None for p in ps) else None
        return agreement_figures(
            [p.a for p in ps], [p.b for p in ps], clusters=clusters, n_resamples=n_resamples, seed=seed
        )

    metrics = tuple(
        MetricAgreement(metric_id=metric, n=n, figures=f, note=note)
        for metric, n, f, note in figures_by_metric(pairs, figures, min_n=min_n)
    )
    return AgreementReport(
        pooled=figures(pairs),
        metrics=metrics,
        min_n=min_n,
        n_resamples=n_resamples,
        seed=seed,
    )
