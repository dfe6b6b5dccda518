"""The seeker's own feeling as a third signal beside the user's and the bot's labels (pure).

In LLM-auditor mode the simulated help-seeker reports, with each message, how it feels right
now: ``feeling_0_100`` (0 the worst, 100 the best; :mod:`empath_gate.conversation.feeling`).
It is never shown to the target, the judge or the annotator. Here it becomes a trajectory like
the valence one: the feelings of the user messages that carry one, in order, resampled to
:data:`~empath_gate.analysis.dynamics.archetypes.TRAJECTORY_POINTS` points (on the 0-100
scale), and a shape by the same rules as the valence trajectory, applied to the feeling mapped
linearly onto the valence scale (:func:`feeling_valence`: 0 -> -1, 50 -> 0, 100 -> +1), so the
same thresholds mean the same share of the scale. :func:`feeling_agreement` says how far the
two signals agree: Spearman's rank correlation of the feeling with the annotator's valence over
the user messages that have both.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from empath_gate.analysis.base import AnalysisModel
from empath_gate.analysis.dynamics.archetypes import Shape, resample, shape_of

MIN_AGREEMENT_PAIRS = 3
"""Fewest messages with both a feeling and a valence for a rank correlation."""


def feeling_valence(feeling: float) -> float:
    """A feeling 0..100 on the valence scale -1..1 (linear: 0 -> -1, 50 -> 0, 100 -> +1)."""
    return feeling / 50.0 - 1.0


class FeelingTrajectory(AnalysisModel):
    """One conversation's feeling: ``messages`` (user messages that carry a feeling), the
    resampled ``points`` (0-100, rounded to 0.1) and the ``shape`` of the feeling on the valence
    scale (``too_short`` under three messages with a feeling)."""

    messages: int
    points: tuple[float, ...]
    shape: Shape


def feeling_trajectory(feelings: Sequence[int | None]) -> FeelingTrajectory | None:
    """The trajectory of one conversation's per-user-message feelings (``None`` entries: no
    usable feeling on that message, skipped); ``None`` when no message carries one."""
    known = [float(f) for f in feelings if f is not None]
    if not known:
        return None
    return FeelingTrajectory(
        messages=len(known),
        points=tuple(round(float(x), 1) for x in resample(known)),
        shape=shape_of([feeling_valence(f) for f in known]),
    )


def feeling_agreement(pairs: Sequence[tuple[float, float]]) -> float | None:
    """Spearman's rank correlation (-1..1) of ``(feeling, valence)`` pairs; ``None`` with fewer
    than :data:`MIN_AGREEMENT_PAIRS` pairs or when either side is constant."""
    if len(pairs) < MIN_AGREEMENT_PAIRS:
        return None
    a = np.array(pairs, dtype=np.float64)
    if np.all(a[:, 0] == a[0, 0]) or np.all(a[:, 1] == a[0, 1]):
        return None
    from scipy.stats import spearmanr

    rho = float(spearmanr(a[:, 0], a[:, 1]).statistic)
    return None if np.isnan(rho) else round(rho, 4)


def paired_feelings(
    feelings: Sequence[int | None], user_valences: Sequence[float]
) -> list[tuple[float, float]]:
    """``(feeling, valence)`` of each user message that has both (``feelings`` and
    ``user_valences`` are per user message, in order; a length mismatch pairs the common
    prefix)."""
    return [(float(f), v) for f, v in zip(feelings, user_valences, strict=False) if f is not None]
