"""One rule for the special kinds of seed (voice, multi-party, imported upstream): a suite draws
one only when it names it, by id, by tag or by its kind; ``all``, ``metrics`` and ``dimensions``
never do."""

from __future__ import annotations

from typing import Any

import pytest

from empath_gate.instrument.loader import load_instrument
from empath_gate.instrument.models import Seed, Suite
from empath_gate.instrument.selection import UPSTREAM_TAG, special_kinds, suite_seeds

DIMENSION_OF = {"crisis_detection": "crisis_safety", "validation": "empathy"}


def seed(sid: str, *, tags: tuple[str, ...] = (), **kw: Any) -> Seed:
    return Seed.model_validate({
        "id": sid, "locale": "en-US", "scenario": sid, "tags": list(tags),
        "instruction": "You failed an exam and feel you let your parents down.",
        "primary_metrics": ["crisis_detection"], "risk": {"level": "none"},
        "script": ["hi", "I failed again"], **kw,
    })


PLAIN = seed("sd-plain")
VOICE = seed("sd-voice", tags=("voice",))
PARTY = seed("sd-party", tags=("multi-party",), participants=[
    {"id": "ana", "name": "Ana", "relation": "mother"}, {"id": "leo", "name": "Leo", "relation": "son"}],
    speakers=["ana", "leo"])
UPSTREAM = seed("sd-upstream", tags=(UPSTREAM_TAG, "crisis_safety"), auditor="llm", script=[],
                risk={"level": "unknown"})
VOICE_PARTY = seed("sd-voice-party", tags=("voice", "multi-party"), participants=PARTY.participants,
                   speakers=PARTY.speakers)
SEEDS = (PLAIN, VOICE, PARTY, UPSTREAM, VOICE_PARTY)


def drawn(seeds: dict[str, Any], *, voice: bool = False) -> list[str]:
    suite = Suite.model_validate({"id": "s", "label": "S", "description": "a suite under test",
                                  "seeds": seeds, "voice": voice})
    return [s.id for s in suite_seeds(suite, SEEDS, DIMENSION_OF)]


def test_each_seed_knows_its_special_kinds() -> None:
    assert special_kinds(PLAIN) == frozenset()
    assert special_kinds(VOICE) == {"voice"}
    assert special_kinds(PARTY) == {"multi-party"}
    assert special_kinds(UPSTREAM) == {"upstream"}
    assert special_kinds(VOICE_PARTY) == {"voice", "multi-party"}


@pytest.mark.parametrize("broad", [{"all": True}, {"metrics": ["crisis_detection"]},
                                   {"dimensions": ["crisis_safety"]}])
def test_broad_selections_draw_no_special_seed(broad: dict[str, Any]) -> None:
    assert drawn(broad) == ["sd-plain"]
    # a voice suite names the voice kind, so its broad selection draws plain voice seeds only
    assert drawn(broad, voice=True) == ["sd-voice"]


def test_ids_and_tags_name_special_seeds() -> None:
    assert drawn({"ids": ["sd-party", "sd-upstream"]}) == ["sd-party", "sd-upstream"]
    assert drawn({"tags": [UPSTREAM_TAG]}) == ["sd-upstream"]
    assert drawn({"tags": ["multi-party"]}) == ["sd-party"]
    # an upstream tag that is also a dimension's name is a tag: it names the seed
    assert drawn({"tags": ["crisis_safety"]}) == ["sd-upstream"]
    # a voice seed runs only in a voice suite, even when named
    assert drawn({"ids": ["sd-voice"]}) == []
    assert drawn({"tags": ["multi-party"]}, voice=True) == ["sd-voice-party"]


def test_no_shipped_suite_draws_a_special_seed_it_does_not_name() -> None:
    shipped = load_instrument()
    dimension_of = {m.id: m.dimension for m in shipped.metrics if m.dimension is not None}
    for suite in shipped.suites:
        chosen = suite_seeds(suite, shipped.seeds, dimension_of)
        named = set(suite.seeds.ids) | {i for sel in suite.also_seeds for i in sel.ids}
        tags = set(suite.seeds.tags) | {t for sel in suite.also_seeds for t in sel.tags}
        for s in chosen:
            extra = special_kinds(s) - ({"voice"} if suite.voice else set())
            assert not extra or s.id in named or tags & set(s.tags), (suite.id, s.id)
