"""Each conversation's user valence trajectory and its rule-based shape (pure).

**Trajectory.** The valences (-1..1) of the user messages, in order, resampled to
:data:`TRAJECTORY_POINTS` = 10 points at equal steps from the first to the last user message
by linear interpolation, so conversations of different lengths compare point by point. One
user message gives a flat line at its valence; two give the straight line between them; none
gives no trajectory.

**Shape.** One label per conversation, the first rule that applies, in this order (``start``
= mean of the first three resampled points, ``end`` = mean of the last three, ``dip`` = the
lowest of points 3..8, ``mean`` = mean of all ten):

1. ``too_short``: fewer than :data:`MIN_USER_TURNS` = 3 user messages (one or two points say
   nothing about a shape);
2. ``volatile``: the raw user valences change direction at least :data:`MIN_REVERSALS` = 2
   times, counting only moves of at least :data:`SWING` = 0.3 between consecutive user
   messages (e.g. down, up, down);
3. ``u_shaped``: ``start - dip >= DELTA`` and ``end - dip >= DELTA`` (a dip that comes back);
4. ``recovering``: ``end - start >= DELTA``;
5. ``deteriorating``: ``start - end >= DELTA``;
6. ``persistently_negative``: ``mean <= NEGATIVE_MEAN`` = -0.3 (no net change, low
   throughout);
7. ``stable``: anything else (no net change, not negative). Not one of the five shapes the
   literature names, but needed so that a flat neutral or positive conversation is not
   called any of them.

:data:`DELTA` = :data:`SWING` = 0.3 and :data:`NEGATIVE_MEAN` = -0.3 are project choices: 0.3
is 15 % of the valence range, about one step between neighbouring labels of the label set
(e.g. sadness to fear, neutral to relief), so a shape needs at least a one-label change.
Clusters of trajectories are in :mod:`empath_gate.analysis.dynamics.clusters`; gates and the
diff use only the shape label.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

import numpy as np

TRAJECTORY_POINTS = 10
"""Points every trajectory is resampled to (issue #16)."""

MIN_USER_TURNS = 3
"""Fewest user messages for a shape other than ``too_short``."""

DELTA = 0.3
"""Net change (end - start, or out of a dip) that makes a shape; valence units (module docstring)."""

SWING = 0.3
"""Smallest move between consecutive user messages that counts towards ``volatile``."""

MIN_REVERSALS = 2
"""Direction changes among large moves that make a trajectory ``volatile``."""

NEGATIVE_MEAN = -0.3
"""Mean valence at or below which a trajectory without net change is ``persistently_negative``."""

Shape = Literal[
    "recovering", "persistently_negative", "deteriorating", "volatile", "u_shaped", "stable", "too_short"
]
SHAPES: tuple[Shape, ...] = (
    "recovering",
    "u_shaped",
    "stable",
    "volatile",
    "persistently_negative",
    "deteriorating",
    "too_short",
)
"""Every shape label, in the order reports list them (better outcomes first)."""


def resample(values: Sequence[float], points: int = TRAJECTORY_POINTS) -> np.ndarray:
    """``values`` (one per user message, in order) linearly interpolated at ``points`` equal
    steps from the first to the last; a single value gives a flat line. ValueError when
    ``values`` is empty or ``points < 2``."""
    if not values:
        raise ValueError("no values to resample")
    if points < 2:
        raise ValueError(f"points must be >= 2, got {points}")
    v = np.asarray(values, dtype=float)
    if len(v) == 1:
        return np.full(points, v[0])
    out: np.ndarray = np.interp(np.linspace(0.0, 1.0, points), np.linspace(0.0, 1.0, len(v)), v)
    return out


def reversals(values: Sequence[float], swing: float = SWING) -> int:
    """Direction changes among the moves of at least ``swing`` between consecutive values."""
    moves = np.diff(np.asarray(values, dtype=float))
    big = np.sign(moves[np.abs(moves) >= swing - 1e-9])
    return int(np.count_nonzero(big[1:] != big[:-1])) if len(big) > 1 else 0


def shape_of(values: Sequence[float]) -> Shape:
    """The shape label of a user valence series (the rules of the module docstring)."""
    if len(values) < MIN_USER_TURNS:
        return "too_short"
    if reversals(values) >= MIN_REVERSALS:
        return "volatile"
    r = resample(values)
    start, end = float(r[:3].mean()), float(r[-3:].mean())
    dip = float(r[2:8].min())
    eps = 1e-9  # valences come rounded; a change of exactly DELTA counts
    if start - dip >= DELTA - eps and end - dip >= DELTA - eps:
        return "u_shaped"
    if end - start >= DELTA - eps:
        return "recovering"
    if start - end >= DELTA - eps:
        return "deteriorating"
    if float(r.mean()) <= NEGATIVE_MEAN + eps:
        return "persistently_negative"
    return "stable"
