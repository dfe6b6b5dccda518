"""Reliability: ICC(1,1) against the ANOVA definition, within-SD, hashes, and the variance split."""

from __future__ import annotations

import math

import numpy as np
import pytest

from empath_gate.analysis.reliability import RunScores, icc_1_1, reliability, run_scores_from_verdicts
from empath_gate.judging.verdict import MetricVerdict


def test_icc_balanced_matches_shrout_fleiss() -> None:
    # Shrout & Fleiss (1979) Table 2 data: 6 targets x 4 judges; ICC(1,1) = 0.17
    data = [[9, 2, 5, 8], [6, 1, 3, 2], [8, 4, 6, 8], [7, 1, 2, 6], [10, 5, 6, 9], [6, 2, 4, 7]]
    value, note = icc_1_1(data)
    assert note is None and value == pytest.approx(0.1657, abs=1e-4)


def test_icc_undefined_cases() -> None:
    assert icc_1_1([[9, 9]]) == (None, "fewer than 2 conversations")
    assert icc_1_1([[9], [8]]) == (None, "no conversation has 2 or more runs")
    assert icc_1_1([[9, 9], [9, 9]]) == (None, "no variance: every score is equal")


def _rows(
    scores: dict[str, list[list[float]]], hashes: dict[str, list[str]] | None = None
) -> list[RunScores]:
    out = []
    for conv, runs in scores.items():
        for r, judged in enumerate(runs):
            h = hashes[conv][r] if hashes else None
            out.append(
                RunScores(
                    target="bot",
                    conversation_id=conv,
                    run=r,
                    metric_id="m",
                    scores=tuple(judged),
                    transcript_hash=h,
                )
            )
    return out


def test_within_sd_flip_and_transcript_changes() -> None:
    rows = _rows(
        {"a": [[9], [7], [8]], "b": [[5], [5], [5]]}, hashes={"a": ["x", "y", "x"], "b": ["z", "z", "z"]}
    )
    (m,) = reliability(rows, min_mean=7)
    assert m.within_sd == pytest.approx(math.sqrt((1.0 + 0.0) / 2))
    assert m.flip_rate == 0.0
    assert m.transcripts_differed == 0.5
    assert m.n_conversations == 2 and m.n_runs == 6
    assert m.judge_variance is None and m.generation_variance is None


def test_variance_split_recovers_simulated_components() -> None:
    rng = np.random.default_rng(7)
    n_conv, n_runs, k = 300, 4, 3
    sd_gen, sd_judge = 1.0, 0.8
    scores = {}
    for c in range(n_conv):
        level = rng.normal(7, 1)
        runs = []
        for _ in range(n_runs):
            g = level + rng.normal(0, sd_gen)
            runs.append(list(g + rng.normal(0, sd_judge, k)))
        scores[f"c{c}"] = runs
    (m,) = reliability(_rows(scores), min_mean=7)
    assert m.judge_variance == pytest.approx(sd_judge**2, rel=0.1)
    assert m.generation_variance == pytest.approx(sd_gen**2, rel=0.15)
    assert not m.generation_floored
    assert m.rejudged_transcripts == n_conv * n_runs


def test_generation_variance_is_floored_at_zero() -> None:
    # run means identical while judgings vary: raw generation variance is negative
    rows = _rows({"a": [[6, 8], [8, 6]], "b": [[5, 7], [7, 5]]})
    (m,) = reliability(rows, min_mean=7)
    assert m.generation_variance == 0.0 and m.generation_floored


def test_run_scores_from_verdicts() -> None:
    vs = [
        MetricVerdict(metric_id="m", transcript_id="s-p-r0", status="scored", score=8, rejudge=1),
        MetricVerdict(metric_id="m", transcript_id="s-p-r0", status="scored", score=9, rejudge=0),
        MetricVerdict(metric_id="m", transcript_id="s-p-r1", status="na"),
    ]
    rows = run_scores_from_verdicts(vs, target="bot", transcript_hashes={"s-p-r0": "h0"})
    assert rows[0].scores == (9.0, 8.0) and rows[0].transcript_hash == "h0" and rows[0].run == 0
    assert rows[1].scores == () and rows[1].run == 1
