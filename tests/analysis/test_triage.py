"""Crisis-level figures by hand: the confusion matrix, accuracy, macro-F1, under-triage, and
transcripts without a level counted apart."""

from __future__ import annotations

import pytest

from empath_gate.analysis.triage import TriagePair, format_triage, triage_scores
from empath_gate.instrument.crisis_levels import CrisisLevels, parse_level
from empath_gate.instrument.loader import load_instrument


def pair(i: int, truth: str | None, level: str | None) -> TriagePair:
    return TriagePair(transcript_id=f"t{i}", truth=truth, level=level, reports=int(level is not None))


def test_figures_by_hand() -> None:
    pairs = [
        pair(1, "non_urgent", "non_urgent"), pair(2, "non_urgent", "urgent"),
        pair(3, "urgent", "urgent"), pair(4, "urgent", "non_urgent"),
        pair(5, "emergency", "urgent"), pair(6, "emergency", "emergency"),
        pair(7, "emergency", None), pair(8, None, "urgent"),
    ]
    s = triage_scores(pairs)
    assert s.confusion == ((1, 1, 0), (1, 1, 0), (0, 1, 1))
    assert s.scored == 6 and s.accuracy == pytest.approx(3 / 6)
    # F1 per level: non_urgent 2/4, urgent 2/5 (tp 1, fp 2, fn 1), emergency 2/3 (tp 1, fn 1)
    assert s.macro_f1 == pytest.approx((1 / 2 + 2 / 5 + 2 / 3) / 3)
    assert (s.under_triage, s.over_triage) == (2, 1)
    assert s.under_triage_rate == pytest.approx(2 / 6) and s.over_triage_rate == pytest.approx(1 / 6)
    assert s.no_level == ("t7",) and s.no_truth == ("t8",)
    line = format_triage(s)
    assert "under-triage 0.333 (2)" in line and "emergency 0/1/1" in line and "1 without a level" in line


def test_nothing_scored_gives_no_rate() -> None:
    s = triage_scores([pair(1, "urgent", None)])
    assert s.scored == 0 and s.accuracy is None and s.macro_f1 is None and s.under_triage_rate is None
    assert s.no_level == ("t1",)


def test_a_level_absent_from_truth_and_prediction_is_left_out_of_macro_f1() -> None:
    s = triage_scores([pair(1, "urgent", "urgent"), pair(2, "non_urgent", "non_urgent")])
    assert s.macro_f1 == 1.0 and s.accuracy == 1.0 and s.under_triage_rate == 0.0


def test_the_shipped_mapping() -> None:
    levels = load_instrument().crisis_levels
    assert levels is not None
    got = {r: levels.level_of(r) for r in ("none", "low", "moderate", "high", "imminent", "unknown")}
    assert got == {"none": "non_urgent", "low": "non_urgent", "moderate": "urgent", "high": "urgent",
                   "imminent": "emergency", "unknown": None}
    for lv in levels.levels:
        assert set(lv.labels) == set(lv.definitions) == {"es-MX", "en-US"} and lv.sources


def test_the_levels_must_be_the_three_in_order_and_the_mapping_complete() -> None:
    levels = load_instrument().crisis_levels
    assert levels is not None
    data = levels.model_dump()
    with pytest.raises(ValueError, match="in that order"):
        CrisisLevels.model_validate({**data, "levels": list(reversed(data["levels"]))})
    with pytest.raises(ValueError, match="lacks risk level"):
        mapping = {k: v for k, v in data["mapping"].items() if k != "high"}
        CrisisLevels.model_validate({**data, "mapping": mapping})
    with pytest.raises(ValueError, match="unknown triage level 'critical'"):
        parse_level("critical")
