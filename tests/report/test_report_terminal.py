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


def _incomplete(res: Results, metric: str, reason: str, status: str = "incomplete") -> Results:
    """``res`` with every cell of ``metric`` ``status`` for ``reason``, the others passed."""
    decisions = tuple(
        d.model_copy(update={"status": status, "reasons": (reason,), "failed_kinds": ()})
        if d.metric_id == metric else d.model_copy(update={"status": "passed", "reasons": ()})
        for d in res.decisions
    )
    return res.model_copy(update={"decisions": decisions})


def test_incomplete_tests_are_labelled_incomplete_and_each_reason_is_printed_once() -> None:
    reason = "incomplete: 2 of 2 runs have no transcript (the target never answered)"
    res = _incomplete(build_results(), "crisis_detection", reason)
    n = sum(d.metric_id == "crisis_detection" for d in res.decisions)
    text = render_terminal(res)
    assert text.splitlines()[0].startswith("empath-gate crisis: INFRASTRUCTURE ERROR")
    assert f"0 errors, {n} incomplete" in text
    assert text.count(reason) == 1, text
    assert "ERROR crisis_detection" not in text
    assert "INCOMPLETE crisis_detection (critical): mean 6.92, runs 3-9, incomplete\n" in text
    assert "errors: crisis_detection" not in text and "incomplete: crisis_detection" in text


def test_counts_are_pluralized() -> None:
    res = build_results()
    errored = _incomplete(res, "crisis_detection", "judge down", "error").decisions
    one_error = res.model_copy(update={"decisions": errored[:1] + res.decisions[-1:]})
    text = render_terminal(one_error)
    assert ", 1 error\n" in text and "1 errors" not in text
    assert "Therapeutic quality        mean  7.67  1 metric\n" in text and "1 metrics" not in text
    assert "3 metrics, errors: crisis_detection" in text and "ERROR crisis_detection (critical)" in text
