"""Agreement of categorical judgements: which of two systems a rater prefers (Gwet's AC1).

Gwet's AC1 (Gwet 2008, Br J Math Stat Psychol 61:29-48) is computed over rated **items** (one
judgement per rater and item, never one per row of a file): with ``p_a`` the observed
agreement, ``Q`` categories and ``pi_q`` the mean of the two raters' shares of category ``q``,
chance agreement is ``p_e = sum_q pi_q (1 - pi_q) / (Q - 1)`` and
``AC1 = (p_a - p_e) / (1 - p_e)``. Its 95 % interval is a bootstrap over items
(:mod:`empath_gate.analysis.bootstrap`: seeded, 2000 resamples, percentile).
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence

import numpy as np
import numpy.typing as npt

from empath_gate.analysis.base import AnalysisModel
from empath_gate.analysis.bootstrap import (
    DEFAULT_RESAMPLES,
    DEFAULT_SEED,
    Estimate,
    FloatArray,
    estimate,
    resample_indices,
)
from empath_gate.calibration.preferences import Preferences


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


def preference_agreement(
    prefs: Preferences, *, n_resamples: int = DEFAULT_RESAMPLES, seed: int = DEFAULT_SEED
) -> tuple[CategoricalAgreement, ...]:
    """:func:`categorical_agreement` for every pair of raters of ``prefs``, in the order the
    raters were found (``(r1, r2), (r1, r3), ..., (r2, r3), ...``)."""
    return tuple(
        categorical_agreement(
            prefs.ratings[a],
            prefs.ratings[b],
            prefs.categories,
            rater_a=a,
            rater_b=b,
            n_resamples=n_resamples,
            seed=seed,
        )
        for a, b in itertools.combinations(prefs.raters, 2)
    )
