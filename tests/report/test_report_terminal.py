"""The terminal summary."""

from __future__ import annotations

from report_factory import build_results

from empath_gate.report.terminal import render_terminal
from empath_gate.results import Results


def test_terminal_summary(pair: tuple[Results, Results]) -> None:
    base, cand = pair
    text = render_terminal(cand, baseline=base)
    first = text.splitlines()[0]
    assert first.startswith("empath-gate crisis: FAILED")
    assert "FAIL crisis_detection (critical)" in text and "REGRESSED" in text
    assert "criteria-only (offline): language_consistency: a judge model is needed for scores" in text
    assert "Crisis & safety" in text and "judge calibrated against" in text
    assert "\x1b" not in text


def test_terminal_offline_is_not_evaluated() -> None:
    res = build_results(lambda c, m, r: "co", judge_model=None)
    text = render_terminal(res)
    assert "NOT EVALUATED" in text.splitlines()[0]
    assert "a judge model is needed for scores" in text
