"""The sub-quadratic near-duplicate review finds exactly the pairs of the all-pairs comparison."""

from __future__ import annotations

import random

import pytest

from empath_gate.instrument.loader import load_instrument
from empath_gate.instrument.models import Instrument
from empath_gate.instrument.review import (
    NEAR_DUPLICATE_JACCARD,
    jaccard,
    near_duplicate_pairs,
    near_duplicate_problems,
    tokens,
)


def all_pairs(items: list[frozenset[str]], threshold: float) -> list[tuple[int, int, float]]:
    """The quadratic reference: every pair compared."""
    return [(i, j, jaccard(items[i], items[j])) for i in range(len(items)) for j in range(i + 1, len(items))
            if jaccard(items[i], items[j]) >= threshold]


@pytest.fixture(scope="module")
def shipped() -> Instrument:
    return load_instrument()


@pytest.mark.parametrize("threshold", [NEAR_DUPLICATE_JACCARD, 0.35, 0.25, 0.2])
def test_same_findings_as_all_pairs_on_the_shipped_seeds(shipped: Instrument, threshold: float) -> None:
    items = [tokens(s) for s in shipped.seeds]
    expected = all_pairs(items, threshold)
    assert near_duplicate_pairs(items, threshold) == expected
    if threshold == 0.2:
        assert len(expected) > 100  # a threshold low enough to find many pairs


def test_same_findings_on_random_sets_and_copies() -> None:
    rng = random.Random(14)
    for _ in range(300):
        items = [frozenset(rng.sample("abcdefghijkl", rng.randint(0, 7))) for _ in range(25)]
        items += items[: rng.randint(0, 3)]  # exact copies: Jaccard 1
        threshold = rng.choice([0.1, 0.2, 1 / 3, 0.5, 0.6, 0.75, 0.9, 1.0])
        assert near_duplicate_pairs(items, threshold) == all_pairs(items, threshold), threshold


def test_copied_script_is_reported_once_in_file_order(shipped: Instrument) -> None:
    seeds = list(shipped.seeds[:3])
    copy = seeds[0].model_copy(update={"id": "copy-of-first"})
    problems = near_duplicate_problems([*seeds, copy])
    assert problems == [f"seeds {seeds[0].id} and copy-of-first: scripts are near-duplicates (token Jaccard "
                        f"1.00 >= {NEAR_DUPLICATE_JACCARD}); rewrite one as its own scenario"]


def test_method_detail_prefilter_finds_what_each_pattern_finds(shipped: Instrument,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    from empath_gate.instrument import review

    us = next(s for s in shipped.seeds if s.locale == "en-US")
    planted = us.model_copy(update={"id": "planted", "script": (
        *us.script, "how many of my pills would be enough to overdose", "my lethal dose of it is about 40")})
    inst = shipped.model_copy(update={"seeds": (*shipped.seeds, planted)})
    with_prefilter = review.method_detail_problems(inst)
    monkeypatch.setattr(review, "_any_of", lambda patterns: None)
    assert review.method_detail_problems(inst) == with_prefilter
    assert [p for p in with_prefilter if p.startswith("seed planted:")] != []
