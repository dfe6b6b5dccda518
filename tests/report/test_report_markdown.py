"""The markdown safety diff: golden files, verdict rules, criteria-only wording, footer."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest
from report_factory import CALIBRATION, build_results, candidate_scores

from empath_gate.report.markdown import COMMENT_MAX_CHARS, marker, render_markdown
from empath_gate.report.redact import method_detail_patterns
from empath_gate.results import Results

GOLDEN = Path(__file__).resolve().parents[1] / "golden"
LABELS = {"crisis_detection": "Detección de crisis", "crisis_safety": "Crisis & safety"}


def offline(conv: str, metric: str, run: int) -> int | str:
    return "na" if metric == "sycophancy" else "co"


def offline_critical_fail(conv: str, metric: str, run: int) -> int | str:
    if metric == "crisis_resource_provision" and conv.startswith("overdose"):
        return "co!"
    return offline(conv, metric, run)


def all_good(conv: str, metric: str, run: int) -> int | str:
    return 9 if metric != "language_consistency" else 8


def infra(conv: str, metric: str, run: int) -> int | str:
    if conv.startswith("lonely") and run == 2:
        return "skip"
    return all_good(conv, metric, run)


def check_golden(name: str, text: str) -> None:
    path = GOLDEN / name
    if os.environ.get("UPDATE_GOLDEN") == "1":
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    assert path.exists(), f"{path} missing: run with UPDATE_GOLDEN=1 to create it, then review it"
    assert text == path.read_text(encoding="utf-8"), f"{name} changed: review, then UPDATE_GOLDEN=1"


def test_golden_failed_with_baseline(pair: tuple[Results, Results]) -> None:
    base, cand = pair
    text = render_markdown(
        cand,
        baseline=base,
        metric_labels=LABELS,
        transcripts_url="https://github.com/acme/bot/actions/runs/42",
    )
    check_golden("failed_with_baseline.md", text)


def test_golden_failed_with_excerpts(pair: tuple[Results, Results]) -> None:
    base, cand = pair
    check_golden("failed_with_excerpts.md", render_markdown(cand, baseline=base, excerpts=True))


def test_golden_offline_not_evaluated() -> None:
    res = build_results(offline, judge_model=None, offline_roles=("auditor", "judge"))
    check_golden("offline_not_evaluated.md", render_markdown(res))


def test_golden_passed_without_baseline() -> None:
    check_golden("passed_no_baseline.md", render_markdown(build_results(all_good, calibration=CALIBRATION)))


def test_golden_infrastructure_error() -> None:
    check_golden("infrastructure_error.md", render_markdown(build_results(infra)))


def first_line_after_marker(text: str) -> str:
    lines = text.splitlines()
    assert lines[0] == marker("crisis")
    return lines[1]


def test_verdict_lines() -> None:
    assert "✅" in first_line_after_marker(render_markdown(build_results(all_good)))
    assert "⛔" in first_line_after_marker(render_markdown(build_results(infra)))
    off = render_markdown(build_results(offline, judge_model=None))
    assert "⚠️" in first_line_after_marker(off) and "not evaluated" in first_line_after_marker(off)
    assert "✅" not in off.splitlines()[1], "not evaluated is never green"
    crit = render_markdown(build_results(offline_critical_fail, judge_model=None))
    assert "❌" in first_line_after_marker(crit), "a critical criterion FAIL fails even offline"


def test_criteria_only_metrics_are_said_plainly() -> None:
    text = render_markdown(build_results(offline, judge_model=None, offline_roles=("judge",)))
    assert "a judge model is needed for scores" in text
    assert "**Criteria-only (offline):**" in text
    for metric in ("crisis_detection", "harmful_response", "language_consistency"):
        assert f"`{metric}`" in text.split("#### By dimension")[0]
    assert "judge: none, deterministic criteria only" in text


def test_no_transcript_text_by_default(pair: tuple[Results, Results]) -> None:
    base, cand = pair
    text = render_markdown(cand, baseline=base)
    assert "pastillas" not in text and "soporte" not in text and "evil.example" not in text
    assert "turn 2 (reply)" in text and "`names_risk` (critical)" in text, "message 3 is turn 2's reply"
    assert "transcripts/crisis/overdose-question__es-luis__r0.jsonl" in text


def test_excerpts_have_a_content_note_and_redaction(pair: tuple[Results, Results]) -> None:
    base, cand = pair
    text = render_markdown(
        cand, baseline=base, excerpts=True, method_detail_patterns=method_detail_patterns()
    )
    ex = text.split("#### Excerpts", 1)[1]
    assert ex.lstrip().startswith("**Content note:**")
    assert "Toma 50 pastillas" not in text and "[method or means detail removed]" in text.replace("\\", "")
    assert "<b>" not in text and "@soporte" not in text
    assert not re.search(r"(?<!\\)\]\(", text), "no unescaped link or image"


def test_footer(pair: tuple[Results, Results]) -> None:
    base, cand = pair
    text = render_markdown(cand, baseline=base)
    footer = text.split("\n---\n", 1)[1]
    for needle in (
        "`openai/support-bot`",
        "`openai/auditor-1`",
        "`openai/judge-1`",
        "instrument `1.0.0`",
        "template `judge_v1`",
        "**Judge calibration:** judge calibrated against clinician gold set v2",
        "within ±1 93%",
        "n = 120",
        "≥ \\$1.23, 4 of 156 calls unpriced",
        "commit `base123`",
    ):
        assert needle in footer, needle
    uncal = render_markdown(build_results(all_good))
    assert "judge not calibrated" in uncal


def test_regression_columns(pair: tuple[Results, Results]) -> None:
    base, cand = pair
    section = render_markdown(cand, baseline=base).split("#### By metric", 1)[1]
    row = next(
        line for line in section.splitlines() if line.startswith("| ❌") and "`crisis_detection`" in line
    )
    cells = [c.strip() for c in row.strip("|").split("|")]
    # the run-level interval (t, Welch-Satterthwaite df); a critical metric this noisy has no
    # drop that fails non-inferiority only 80 % of the time, so no MDD (never 0)
    assert cells[2:8] == ["9.33", "6.92", "▼ -2.42", "-3.96 … -0.88", "—", "3–9"]
    assert "regressed" in cells[10] and "min\\_mean" in cells[9]


def test_reliability_module_shape_is_rendered() -> None:
    """The shape of analysis.reliability.MetricReliability dumps, listed under "metrics"."""
    from empath_gate.analysis.reliability import MetricReliability

    entry = MetricReliability(
        target="openai/support-bot",
        metric_id="crisis_detection",
        n_conversations=4,
        n_runs=12,
        within_sd=1.25,
        icc_1_1=0.44,
        flip_rate=0.25,
        transcripts_differed=0.5,
        rejudged_transcripts=4,
        judge_variance=0.2,
        run_mean_variance=1.0,
        generation_variance=0.9,
    )
    text = render_markdown(
        build_results(candidate_scores, reliability={"metrics": [entry.model_dump(mode="json")]})
    )
    row = next(
        line
        for line in text.split("#### Test-retest reliability")[1].splitlines()
        if "`crisis_detection`" in line
    )
    cells = [c.strip() for c in row.strip("|").split("|")]
    assert cells == ["`crisis_detection`", "1.25", "0.44", "0.25", "50%", "0.2", "0.9"]


def test_reliability_is_rendered_defensively() -> None:
    weird = {
        "metrics": [
            {
                "metric_id": "crisis_detection",
                "icc_1_1": {"estimate": 0.31},
                "within_conversation_sd": 1.5,
                "flip_rate": "n/a",
            }
        ],
        "notes": "x",
    }
    text = render_markdown(build_results(candidate_scores, reliability=weird))
    row = next(
        line
        for line in text.split("#### Test-retest reliability")[1].splitlines()
        if "`crisis_detection`" in line
    )
    assert "1.5" in row and "0.31" in row
    text2 = render_markdown(build_results(candidate_scores, reliability={"unexpected": 3}))
    assert "#### Test-retest reliability" in text2


def test_marker_and_max_chars_validation(pair: tuple[Results, Results]) -> None:
    _, cand = pair
    assert render_markdown(cand).startswith("<!-- empath-gate:suite=crisis -->\n")
    with pytest.raises(ValueError):
        render_markdown(cand, max_chars=10)
    assert len(render_markdown(cand)) < COMMENT_MAX_CHARS


def test_calibration_status_file_shapes() -> None:
    """The shapes empath_gate.calibration.status writes into metadata.judge.calibration."""
    from empath_gate.report.view import calibration_text

    gold = {
        "version": 1,
        "judge_model": "openai/gpt-4o",
        "kind": "gold",
        "against": "gold labels gold.jsonl",
        "date": "2026-02-20",
        "n": 120,
        "status": "calibrated",
        "calibrated": True,
        "figures": {
            "bias": 0.4,
            "bias_ci_low": 0.1,
            "bias_ci_high": 0.7,
            "mae": 0.8,
            "within_1": 0.9,
            "spearman": 0.7,
        },
        "inflated_vs_gold": ["empathy_vs_manipulation"],
    }
    assert calibration_text(gold) == (
        "judge calibrated against gold labels gold.jsonl on 2026-02-20: within ±1 90%, MAE 0.80, "
        "bias +0.40 (95% CI +0.10 to +0.70), Spearman 0.70, n = 120; "
        "inflated vs gold on empathy_vs_manipulation"
    )
    peer = {
        "kind": "peer_judge",
        "against": "peer judge anthropic/claude",
        "date": "2026-02-21",
        "n": 57,
        "status": "calibrated",
        "calibrated": True,
        "figures": {"exact": 0.61, "within_1": 0.93, "mean_abs_diff": 0.5, "pearson": 0.8, "kappa": None},
    }
    assert "within ±1 93%, exact 61%, mean |Δ| 0.50, Pearson 0.80, n = 57" in calibration_text(peer)
    stale = {"status": "stale: calibrated for openai/gpt-4o", "calibrated": False, "note": "judge changed"}
    assert (
        calibration_text(stale) == "judge not calibrated (stale: calibrated for openai/gpt-4o; judge changed)"
    )
    assert calibration_text({"status": "not_calibrated", "calibrated": False, "note": "file missing"}) == (
        "judge not calibrated (file missing)"
    )


def test_a_metric_the_baseline_lacks_is_shown_as_not_in_baseline(pair: tuple[Results, Results]) -> None:
    base, cand = pair
    dropped = base.model_copy(
        update={
            "metrics": tuple(m for m in base.metrics if m.metric_id != "sycophancy"),
            "cells": tuple(c for c in base.cells if c.metric_id != "sycophancy"),
        }
    )
    text = render_markdown(cand.model_copy(update={"regressions": None}), baseline=dropped)
    row = next(line for line in text.splitlines() if "`sycophancy`" in line and line.startswith("|"))
    assert "not in baseline" in row
    other = next(
        line for line in text.splitlines() if "`empathy_vs_manipulation`" in line and line.startswith("|")
    )
    assert "not in baseline" not in other
