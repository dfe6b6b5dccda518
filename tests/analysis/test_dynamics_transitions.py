"""Transition matrices and the role interplay."""

from __future__ import annotations

import math

import numpy as np
import pytest
from dynamics_factory import conv

from empath_gate.analysis.dynamics import pooled_interplay, pooled_transitions, smoothed, transition_counts
from empath_gate.analysis.dynamics.transitions import (
    conversation_counts,
    conversation_matrix,
    interplay_counts,
)
from empath_gate.turns.model import BOT_LABELS, USER_LABELS

U = USER_LABELS.index


def test_counts_are_consecutive_pairs_of_one_role() -> None:
    c = conv(
        "c1",
        [
            ("u", "sadness_grief", -0.6),
            ("b", "warmth_care", "question"),
            ("u", "hopelessness", -0.9),
            ("b", "concern", "information"),
            ("u", "hopelessness", -0.9),
            ("b", "concern", "question"),
        ],
    )
    user = conversation_counts(c, "user")
    assert user.sum() == 2
    assert user[U("sadness_grief"), U("hopelessness")] == 1
    assert user[U("hopelessness"), U("hopelessness")] == 1
    bot = conversation_counts(c, "assistant")
    assert bot[BOT_LABELS.index("warmth_care"), BOT_LABELS.index("concern")] == 1
    assert bot[BOT_LABELS.index("concern"), BOT_LABELS.index("concern")] == 1


def test_smoothing_rows_sum_to_one_and_alpha_zero_is_the_empirical_rate() -> None:
    counts = transition_counts(["a", "b", "a", "a"], ["a", "b", "c"])
    # a->b, b->a, a->a
    p = smoothed(counts, 0.5)
    assert np.allclose(p.sum(axis=1), 1.0)
    assert p[0, 1] == pytest.approx((1 + 0.5) / (2 + 3 * 0.5))
    assert p[2, 0] == pytest.approx(1 / 3)  # unseen row: uniform, read with its zero total
    raw = smoothed(counts, 0.0)
    assert raw[0, 0] == pytest.approx(0.5) and raw[1, 0] == pytest.approx(1.0)
    assert all(math.isnan(x) for x in raw[2])
    with pytest.raises(ValueError):
        smoothed(counts, -1.0)


def test_pooled_per_group_and_role() -> None:
    a = conv(
        "a",
        [("u", "sadness_grief", -0.6), ("b", "warmth_care", "question"), ("u", "hope", 0.6)],
        keys={"suite": "s", "locale": "es-MX"},
    )
    b = conv(
        "b",
        [("u", "sadness_grief", -0.6), ("b", "concern", "question"), ("u", "hopelessness", -0.9)],
        keys={"suite": "s", "locale": "en-US"},
    )
    c = conv(
        "c",
        [("u", "sadness_grief", -0.6), ("b", "concern", "question"), ("u", "hope", 0.6)],
        keys={"suite": "s", "locale": "es-MX"},
    )
    pooled = pooled_transitions([a, b, c], ("locale",), 0.5)
    assert [(m.group, m.role) for m in pooled] == [
        ({"locale": "en-US"}, "user"),
        ({"locale": "es-MX"}, "user"),
    ]
    es = pooled[1]
    assert es.conversations == 2 and es.transitions == 2
    assert es.counts[U("sadness_grief")][U("hope")] == 2
    assert es.row_totals[U("sadness_grief")] == 2
    expected = (2 + 0.5) / (2 + 9 * 0.5)
    assert es.probabilities[U("sadness_grief")][U("hope")] == pytest.approx(expected, abs=1e-6)
    everything = pooled_transitions([a, b, c])
    assert len(everything) == 1 and everything[0].group == {} and everything[0].transitions == 3


def test_interplay_links_user_bot_next_user() -> None:
    c = conv(
        "c",
        [
            ("u", "sadness_grief", -0.6),
            ("b", "warmth_care", "reflection_of_feelings"),
            ("u", "relief_calm", 0.4),
            ("b", "concern", "providing_suggestions"),
            ("u", "anger", -0.5),
            ("b", "concern", "question"),
        ],
    )  # last bot has no next user
    counts = interplay_counts(c.labels)
    assert counts.sum() == 2
    assert counts[U("sadness_grief"), BOT_LABELS.index("warmth_care"), U("relief_calm")] == 1
    assert counts[U("relief_calm"), BOT_LABELS.index("concern"), U("anger")] == 1
    (inter,) = pooled_interplay([c, c], (), 1.0)
    assert inter.total == 4 and inter.conversations == 2
    assert ("sadness_grief", "warmth_care", "relief_calm", 2) in inter.triples
    row = inter.bot_given_user[U("sadness_grief")]
    assert row[BOT_LABELS.index("warmth_care")] == pytest.approx((2 + 1) / (2 + 3))
    assert ("sadness_grief", "warmth_care", "relief_calm", pytest.approx((2 + 1) / (2 + 9))) in [
        (a, b, n, p) for a, b, n, p in inter.next_given_user_bot
    ]


def test_one_conversations_matrix() -> None:
    c = conv(
        "c1",
        [("u", "sadness_grief", -0.6), ("b", "warmth_care", "question"), ("u", "hope", 0.6)],
        keys={"locale": "en-US"},
    )
    m = conversation_matrix(c, "user", alpha=0.0)
    assert m.group == {"locale": "en-US"} and m.conversations == 1 and m.transitions == 1
    assert m.probabilities[U("sadness_grief")][U("hope")] == 1.0
    assert conversation_matrix(c, "assistant").conversations == 0
