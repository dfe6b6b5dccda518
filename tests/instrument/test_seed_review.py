"""The seed bank against the mechanical items of suites/REVIEW.md (issue: full seed bank)."""

from __future__ import annotations

from pathlib import Path

import pytest

from empath_gate.instrument.coverage import seeds_by_locale, seeds_by_metric
from empath_gate.instrument.loader import load_instrument, shipped_paths
from empath_gate.instrument.models import Instrument, RiskAnnotation, Seed
from empath_gate.instrument.review import (
    checklist_version,
    jaccard,
    method_detail_problems,
    near_duplicate_problems,
    review_field_problems,
    review_problems,
    scenario_problems,
    script_problems,
    tokens,
)


@pytest.fixture(scope="module")
def instrument() -> Instrument:
    return load_instrument()


@pytest.fixture(scope="module")
def current_checklist() -> str:
    suites_dir, _ = shipped_paths()
    version = checklist_version((Path(suites_dir) / "REVIEW.md").read_text(encoding="utf-8"))
    assert version is not None, "REVIEW.md must state its checklist version"
    return version


def _seed(
    sid: str, script: tuple[str, ...], *, scenario: str | None = None, confirm: int | None = None
) -> Seed:
    risk = (
        RiskAnnotation(level="none")
        if confirm is None
        else RiskAnnotation(
            level="high",
            categories=({"category": "active_suicidal_ideation", "timing": "ongoing"},),  # type: ignore[arg-type]
            alert_turn=1,
            confirm_turn=confirm,
        )
    )
    return Seed(
        id=sid, locale="en-US", scenario=scenario or sid, instruction="x" * 40,
        primary_metrics=("crisis_detection",), risk=risk, script=script,
    )


def test_the_shipped_bank_passes_every_mechanical_review_rule(
    instrument: Instrument, current_checklist: str
) -> None:
    assert review_problems(instrument, checklist=current_checklist) == []


def test_bank_size_balance_and_coverage(instrument: Instrument) -> None:
    seeds = instrument.seeds
    assert len(seeds) >= 140
    by_locale = seeds_by_locale(instrument)
    for locale in ("es-MX", "en-US"):
        assert by_locale[locale] / len(seeds) >= 0.40, by_locale
    assert min(seeds_by_metric(instrument).values()) >= 5
    assert sum(1 for s in seeds if s.covert) >= 15


def test_every_risk_category_appears_in_both_locales(instrument: Instrument) -> None:
    from typing import get_args

    from empath_gate.instrument.models import RiskCategory

    for locale in ("es-MX", "en-US"):
        present = {c.category for s in instrument.seeds if s.locale == locale for c in s.risk.categories}
        missing = set(get_args(RiskCategory)) - present
        assert not missing, f"{locale} lacks {sorted(missing)}"


def test_es_mx_seeds_state_their_register(instrument: Instrument) -> None:
    assert all(s.address_form in ("tu", "usted") for s in instrument.seeds if s.locale == "es-MX")


def test_short_script_after_confirm_turn_is_rejected() -> None:
    ok = _seed("ok-seed", ("a", "b", "c", "d"), confirm=2)
    short = _seed("short-seed", ("a", "b", "c"), confirm=2)
    assert script_problems([ok]) == []
    [problem] = script_problems([short])
    assert "short-seed" in problem and "confirm_turn 2" in problem


def test_method_detail_in_a_user_turn_is_rejected(instrument: Instrument) -> None:
    bad = _seed("bad-seed", ("hola", "how many pills would it take to die", "ok"))
    inst = instrument.model_copy(update={"seeds": (bad,)})
    [problem] = method_detail_problems(inst)
    assert "bad-seed" in problem and "turn 2" in problem


def test_near_duplicates_are_rejected_within_and_across_locales() -> None:
    a = _seed("a-seed", ("I can't sleep since the funeral", "my sister keeps calling", "I feel empty"))
    b = _seed("b-seed", ("I cant sleep since the funeral!", "my sister keeps calling me", "i feel so empty"))
    c = _seed("c-seed", ("work is fine", "the commute is long", "my cat is funny"))
    assert jaccard(tokens(a), tokens(b)) >= 0.6
    problems = near_duplicate_problems([a, b, c])
    assert len(problems) == 1 and "a-seed" in problems[0] and "b-seed" in problems[0]


def test_accents_do_not_hide_a_duplicate() -> None:
    a = _seed("a-seed", ("ya no aguanto más", "mañana es el día"))
    b = _seed("b-seed", ("ya no aguanto mas", "manana es el dia"))
    assert jaccard(tokens(a), tokens(b)) == 1.0


def test_a_repeated_scenario_key_is_rejected() -> None:
    a = _seed("a-seed", ("uno dos", "tres"), scenario="lost-job")
    b = _seed("b-seed", ("four five", "six"), scenario="lost-job")
    [problem] = scenario_problems([a, b])
    assert "lost-job" in problem


def test_review_field_must_name_the_current_checklist(current_checklist: str) -> None:
    unreviewed = _seed("u-seed", ("a", "b"))
    [problem] = review_field_problems([unreviewed], current_checklist)
    assert "u-seed" in problem and "review" in problem
