"""Clusters of user valence trajectories: descriptive archetypes (pure, deterministic).

k-means (:func:`scipy.cluster.vq.kmeans2`, k-means++ starts) on the 10-point trajectories of
:mod:`~empath_gate.analysis.dynamics.archetypes`. k is chosen among :data:`K_RANGE` (2..6) by
the highest mean silhouette (Rousseeuw 1987, Euclidean distance; a point alone in its cluster
scores 0) on a fixed sample of at most :data:`MAX_SAMPLE` = 2,000 trajectories drawn with
:data:`SEED`; every trajectory is then assigned to its nearest centroid. The result is
descriptive only: no gate, check or diff reads it (they read the rule-based shape label).

Clustering needs at least :data:`MIN_TRAJECTORIES` trajectories with at least 3 distinct ones;
otherwise the result says why there are no clusters.
"""

from __future__ import annotations

import numpy as np
from scipy.cluster.vq import kmeans2, vq
from scipy.spatial.distance import cdist

from empath_gate.analysis.base import AnalysisModel

K_RANGE = range(2, 7)
"""Cluster counts tried (issue #16: 2..6)."""

MAX_SAMPLE = 2000
"""Most trajectories the choice of k looks at (the silhouette costs n^2 distances)."""

SEED = 16
"""Seed of the sample and of the k-means++ starts (fixed, so a report is reproducible)."""

MIN_TRAJECTORIES = 10
"""Fewest trajectories worth clustering (project choice: below this, read the shapes)."""


class Clustering(AnalysisModel):
    """The clusters of a set of trajectories.

    ``k``: the chosen count (``None`` when not clustered; ``note`` says why);
    ``silhouettes``: ``k -> mean silhouette`` on the sample (-1..1, higher = better separated)
    for every k tried; ``sample``: trajectories in the sample; ``seed``: the fixed seed;
    ``centroids[c]``: cluster c's mean trajectory (10 valences); ``sizes[c]``: trajectories
    of all (not only the sample) assigned to c; ``assignment[i]``: the cluster of trajectory i
    (input order)."""

    k: int | None
    silhouettes: dict[int, float]
    sample: int
    seed: int
    centroids: tuple[tuple[float, ...], ...]
    sizes: tuple[int, ...]
    assignment: tuple[int, ...]
    note: str = ""


def silhouette(data: np.ndarray, labels: np.ndarray) -> float:
    """Mean silhouette of ``data`` (n x d) under integer ``labels`` (n): per point
    ``(b - a) / max(a, b)`` with ``a`` the mean distance to the rest of its own cluster and
    ``b`` the lowest mean distance to another cluster; 0 for a point alone in its cluster or
    when ``a = b = 0``. ValueError with fewer than two clusters."""
    clusters = np.unique(labels)
    if len(clusters) < 2:
        raise ValueError("the silhouette needs at least two clusters")
    dist = cdist(data, data)
    n = len(data)
    a = np.zeros(n)
    b = np.full(n, np.inf)
    sizes = {}
    for c in clusters:
        members = labels == c
        sizes[c] = int(members.sum())
        sums = dist[:, members].sum(axis=1)
        own = labels == c
        a[own] = sums[own] / max(sizes[c] - 1, 1)
        other = ~own
        b[other] = np.minimum(b[other], sums[other] / sizes[c])
    denom = np.maximum(a, b)
    s = np.where(denom > 0, (b - a) / np.where(denom > 0, denom, 1.0), 0.0)
    alone = np.array([sizes[c] == 1 for c in labels])
    s[alone] = 0.0
    return float(s.mean())


def cluster_trajectories(trajectories: np.ndarray, *, seed: int = SEED) -> Clustering:
    """Cluster ``trajectories`` (n x 10) as the module docstring says. Never raises for small
    or degenerate inputs: the result then has ``k = None`` and a ``note``."""
    n = len(trajectories)
    none = {"silhouettes": {}, "seed": seed, "centroids": (), "sizes": (), "assignment": ()}
    if n < MIN_TRAJECTORIES:
        return Clustering(
            k=None, sample=n, note=f"{n} trajectories; clustering needs at least {MIN_TRAJECTORIES}", **none
        )
    data = np.asarray(trajectories, dtype=float)
    if len(np.unique(data, axis=0)) < 3:
        return Clustering(k=None, sample=n, note="fewer than 3 distinct trajectories", **none)
    rng = np.random.default_rng(seed)
    idx = np.sort(rng.choice(n, size=min(n, MAX_SAMPLE), replace=False))
    sample = data[idx]
    distinct = len(np.unique(sample, axis=0))
    scores: dict[int, float] = {}
    best: tuple[float, int, np.ndarray] | None = None
    for k in K_RANGE:
        if k >= distinct:
            break
        try:
            centroids, labels = kmeans2(
                sample, k, minit="++", missing="raise", rng=np.random.default_rng(seed)
            )
        except Exception:  # scipy's ClusterError: an empty cluster; this k is skipped
            continue
        if len(np.unique(labels)) < 2:
            continue
        scores[k] = round(silhouette(sample, labels), 6)
        if best is None or scores[k] > best[0]:
            best = (scores[k], k, centroids)
    if best is None:
        return Clustering(
            k=None,
            sample=len(idx),
            note="no k in 2..6 gave non-empty clusters",
            **{**none, "silhouettes": scores},
        )
    _, k, centroids = best
    assignment, _ = vq(data, centroids)
    sizes = np.bincount(assignment, minlength=k)
    return Clustering(
        k=k,
        silhouettes=scores,
        sample=len(idx),
        seed=seed,
        centroids=tuple(tuple(round(float(x), 4) for x in c) for c in centroids),
        sizes=tuple(int(x) for x in sizes),
        assignment=tuple(int(x) for x in assignment),
    )
