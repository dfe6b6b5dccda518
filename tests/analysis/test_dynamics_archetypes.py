"""Trajectories, shape rules and clusters."""

from __future__ import annotations

import numpy as np
import pytest

from empath_gate.analysis.dynamics import cluster_trajectories, resample, shape_of, silhouette
from empath_gate.analysis.dynamics.archetypes import reversals


def test_resample_one_two_and_many_points() -> None:
    assert np.allclose(resample([-0.4]), [-0.4] * 10)
    two = resample([-1.0, 0.8])
    assert two[0] == -1.0 and two[-1] == pytest.approx(0.8)
    assert np.allclose(np.diff(two), 0.2)  # a straight line
    many = resample([0.0, 1.0, 0.0])
    assert many[0] == 0.0 and many[-1] == 0.0 and max(many) < 1.0  # 0.5 is not one of the 10 points
    with pytest.raises(ValueError):
        resample([])


@pytest.mark.parametrize(
    ("values", "shape"),
    [
        ([-0.5, -0.2], "too_short"),
        ([-0.7, -0.6, -0.3, 0.0, 0.2], "recovering"),
        ([0.2, 0.0, -0.3, -0.6, -0.9], "deteriorating"),
        ([-0.7, -0.6, -0.7, -0.6, -0.7], "persistently_negative"),
        ([0.0, 0.1, 0.0, 0.1, 0.0], "stable"),
        ([-0.2, -0.6, -0.9, -0.6, -0.2], "u_shaped"),
        ([-0.2, -0.9, -0.2, -0.9, -0.2], "volatile"),
    ],
)
def test_shape_rules(values: list[float], shape: str) -> None:
    assert shape_of(values) == shape


def test_small_wobbles_are_not_volatile() -> None:
    assert reversals([-0.5, -0.4, -0.5, -0.4, -0.5]) == 0
    assert reversals([-0.2, -0.9, -0.2, -0.9]) == 2
    assert shape_of([-0.5, -0.4, -0.5, -0.4, -0.5]) == "persistently_negative"


def test_silhouette_matches_a_hand_computation() -> None:
    data = np.array([[0.0], [1.0], [10.0]])
    labels = np.array([0, 0, 1])
    # point 0: a = 1, b = 10 -> 0.9; point 1: a = 1, b = 9 -> 8/9; point 2 alone -> 0
    assert silhouette(data, labels) == pytest.approx((0.9 + 8 / 9 + 0) / 3)
    with pytest.raises(ValueError):
        silhouette(data, np.zeros(3, dtype=int))


def test_two_separated_groups_give_two_clusters_deterministically() -> None:
    rng = np.random.default_rng(0)
    up = np.linspace(-0.8, 0.6, 10) + rng.normal(0, 0.03, (30, 10))
    down = np.linspace(0.3, -0.9, 10) + rng.normal(0, 0.03, (30, 10))
    data = np.vstack([up, down])
    first = cluster_trajectories(data)
    assert first.k == 2
    assert sorted(first.sizes) == [30, 30]
    assert len(set(first.assignment[:30])) == 1 and len(set(first.assignment[30:])) == 1
    assert first.silhouettes[2] > 0.8
    assert set(first.silhouettes) <= {2, 3, 4, 5, 6}
    assert cluster_trajectories(data) == first


def test_too_few_or_identical_trajectories_are_not_clustered() -> None:
    few = cluster_trajectories(np.zeros((4, 10)))
    assert few.k is None and "at least" in few.note
    same = cluster_trajectories(np.zeros((40, 10)))
    assert same.k is None and "distinct" in same.note


def test_the_sample_is_capped() -> None:
    rng = np.random.default_rng(1)
    data = rng.uniform(-1, 1, (2500, 10))
    result = cluster_trajectories(data)
    assert result.sample == 2000
    assert sum(result.sizes) == 2500 and len(result.assignment) == 2500
