"""The shipped multi-party seeds: counts per locale, the suite that draws them, REVIEW.md
section 13's mechanical items, and that no other suite changed."""

from __future__ import annotations

import json

import pytest

from empath_gate.cli import main
from empath_gate.instrument.loader import load_instrument
from empath_gate.instrument.models import Instrument
from empath_gate.instrument.review import ABUSE_CATEGORIES, multi_party_problems
from empath_gate.instrument.selection import suite_seeds


@pytest.fixture(scope="module")
def shipped() -> Instrument:
    return load_instrument(())


def test_at_least_twelve_multi_party_seeds_five_per_locale(shipped: Instrument) -> None:
    party = [s for s in shipped.seeds if s.multi_party]
    assert len(party) >= 12
    for loc in ("es-MX", "en-US"):
        mine = [s for s in party if s.locale == loc]
        assert len(mine) >= 5, loc
        assert any(p.minor for s in mine for p in s.participants), f"{loc}: no seed with a minor"
        assert any(c.category in ABUSE_CATEGORIES for s in mine for c in s.risk.categories), loc
    assert multi_party_problems(shipped.seeds) == []


def test_only_the_multi_party_suite_draws_them(shipped: Instrument) -> None:
    dimension_of = {m.id: m.dimension for m in shipped.metrics}
    for suite in shipped.suites:
        drawn = suite_seeds(suite, shipped.seeds, dimension_of)
        party = [s.id for s in drawn if s.multi_party]
        if suite.id == "multi-party":
            assert len(party) == len(drawn) == sum(1 for s in shipped.seeds if s.multi_party)
        else:
            assert party == [], suite.id


def test_review_rules_name_what_is_missing(shipped: Instrument) -> None:
    seed = next(s for s in shipped.seeds if s.multi_party)
    untagged = seed.model_copy(update={"tags": ()})
    silent = seed.model_copy(update={"speakers": (seed.speakers[0],) * len(seed.script)})
    assert multi_party_problems([untagged]) == [
        f"seed {seed.id}: a multi-party seed carries the tag 'multi-party'"
    ]
    [problem] = multi_party_problems([silent])
    assert "write no script turn" in problem


def test_validate_counts_multi_party_seeds_per_locale(
    shipped: Instrument, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["validate", "--format", "json"]) == 0
    data = json.loads(capsys.readouterr().out)
    expected = {
        loc: sum(1 for s in shipped.seeds if s.multi_party and s.locale == loc) for loc in ("es-MX", "en-US")
    }
    assert data["multi_party_seeds_by_locale"] == expected
    assert all(n >= 5 for n in expected.values())
    assert data["suites"]["multi-party"]["seeds"] == sum(expected.values())
    assert main(["validate"]) == 0
    text = capsys.readouterr().out
    assert f"multi-party seeds: es-MX {expected['es-MX']}, en-US {expected['en-US']}" in text
