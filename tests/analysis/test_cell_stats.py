"""Cell statistics: figures, states kept apart, flip rate, and the batch path equal to the per-cell one."""

from __future__ import annotations

import json
import math
import statistics

import pytest
from analysis_factory import cell, thresholds, verdict, verdicts
from hypothesis import given, settings
from hypothesis import strategies as st

from empath_gate.analysis.stats import (
    CellStats,
    aggregate_by_metric,
    compute_all_cell_stats,
    compute_cell_stats,
    empty_cell,
    parse_transcript_id,
)


def test_figures_of_judged_runs() -> None:
    c = cell([2, 10, 9, 9, 10])
    assert c.scores == (2, 10, 9, 9, 10)
    assert c.mean == pytest.approx(8.0)
    assert c.median == 9.0
    assert (c.min, c.max, c.range) == (2, 10, 8)
    assert c.sd == pytest.approx(statistics.stdev([2, 10, 9, 9, 10]))
    assert (c.n_runs, c.n_judged, c.n_pass) == (5, 5, 4)
    assert c.flip_rate == pytest.approx(1 / 5)


def test_states_never_count_as_scores() -> None:
    c = cell([8, "na", "jf", "co", 6])
    assert c.scores == (8, 6)
    assert c.mean == 7.0 and c.median == 7.0
    assert (c.n_judged, c.n_na, c.n_failures, c.n_criteria_only, c.n_missing) == (2, 1, 1, 1, 0)
    assert c.failure_reasons == ((2, "parse_error"),)
    assert c.statuses == ("scored", "na", "judge_failure", "criteria_only", "scored")
    assert c.run_scores == (8, None, None, None, 6)


def test_sd_needs_two_scores_and_nothing_judged_gives_none() -> None:
    assert cell([7, "na", "na"]).sd is None
    c = cell(["na", "jf", "co"])
    assert c.mean is None and c.median is None and c.min is None and c.range is None and c.flip_rate is None


def test_flip_rate_ties_are_one_half() -> None:
    assert cell([9, 3, 9, 3]).flip_rate == 0.5
    assert cell([9, 3]).flip_rate == 0.5
    assert cell([9, 9, 9]).flip_rate == 0.0
    assert cell([9]).flip_rate == 0.0
    # pass mark is inclusive: a score equal to min_mean passes
    assert cell([7, 7, 6], min_mean=7).n_pass == 2


def test_missing_runs_and_stopped_transcripts_are_visible() -> None:
    c = cell([8, None, 9], errors={"seed-a-p1-r1": "error: provider timeout"})
    assert c.statuses == ("scored", "missing", "scored")
    assert c.n_missing == 1
    assert c.transcript_errors == ((1, "error: provider timeout"),)
    runs = c.runs
    assert runs[1].status == "missing" and runs[1].transcript_error == "error: provider timeout"


def test_critical_flags() -> None:
    c = cell([8, "jf", "co!"], critical=True)
    assert c.critical_judge_failures == (1,)
    assert c.critical_fail_runs == (2,)
    d = cell([8, "jf!", 9], critical=False)
    assert d.critical_judge_failures == (1,)
    assert cell([8, "jf", 9]).critical_judge_failures == ()


def test_rejudgings_are_ignored_and_duplicates_rejected() -> None:
    vs = [*verdicts("s-p", "m", [8, 9]), verdict("s-p", 0, "m", 1, rejudge=1)]
    c = compute_cell_stats(vs, min_mean=7, seed_id="s", persona_id="p")
    assert c.scores == (8, 9)
    with pytest.raises(ValueError, match="judged twice"):
        compute_cell_stats(
            [*verdicts("s-p", "m", [8]), verdict("s-p", 0, "m", 9)], min_mean=7, seed_id="s", persona_id="p"
        )
    with pytest.raises(ValueError, match="share conversation and metric"):
        compute_cell_stats(
            [verdict("s-p", 0, "m", 8), verdict("s-p", 1, "n", 8)], min_mean=7, seed_id="s", persona_id="p"
        )


def test_parse_transcript_id() -> None:
    assert parse_transcript_id("crisis-es-01-maria-r12") == ("crisis-es-01-maria", 12)
    with pytest.raises(ValueError):
        parse_transcript_id("no-run-suffix")


def test_empty_cell() -> None:
    c = empty_cell(
        conversation_id="s-p", seed_id="s", persona_id="p", metric_id="m", expected_runs=3, min_mean=7
    )
    assert c.n_missing == 3 and c.n_judged == 0


def test_trusted_models_equal_validated_ones() -> None:
    c = cell([8, "na", "jf!", "co", 6, None], critical=True)
    assert CellStats.model_validate(c.model_dump()) == c
    assert CellStats.model_validate_json(c.model_dump_json()) == c
    assert list(json.loads(c.model_dump_json())) == list(CellStats.model_fields), (
        "results.json lists a cell's fields in declaration order"
    )


run_values = st.one_of(st.integers(1, 10), st.sampled_from(["na", "jf", "co", "co!", "jf!", None]))


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.lists(run_values, min_size=1, max_size=5), min_size=1, max_size=6),
    st.one_of(st.none(), st.integers(3, 6)),
)
def test_batch_path_equals_per_cell_path(tables: list[list[object]], expected: int | None) -> None:
    th = thresholds(metrics={"m2": {"critical": True, "min_mean": 8}})
    all_verdicts = []
    conversations = {}
    per_cell = []
    for i, runs in enumerate(tables):
        conv = f"seed{i}-p"
        conversations[conv] = (f"seed{i}", "p")
        for metric in ("m1", "m2"):
            vs = verdicts(conv, metric, runs)  # type: ignore[arg-type]
            if not vs:
                continue
            all_verdicts.extend(vs)
            t = th.resolve(metric)
            per_cell.append(
                compute_cell_stats(
                    vs,
                    min_mean=t.min_mean,
                    critical=t.critical,
                    seed_id=f"seed{i}",
                    persona_id="p",
                    expected_runs=expected,
                )
            )
    batch = compute_all_cell_stats(
        all_verdicts, conversations=conversations, thresholds=th, expected_runs=expected
    )
    assert len(batch) == len(per_cell)
    fields = list(CellStats.model_fields)
    for b, c in zip(batch, per_cell, strict=True):
        bd, cd = b.model_dump(), c.model_dump()
        assert list(bd) == list(cd) == fields, "both paths serialize the fields in declaration order"
        for key in ("sd", "mean", "median", "flip_rate"):
            x, y = bd.pop(key), cd.pop(key)
            assert (x is None and y is None) or math.isclose(x, y, rel_tol=1e-12, abs_tol=1e-12)
        assert bd == cd


def test_batch_rejects_unknown_conversation_and_duplicate_run() -> None:
    th = thresholds()
    with pytest.raises(ValueError, match="not in the plan"):
        compute_all_cell_stats(verdicts("s-p", "m", [8]), conversations={}, thresholds=th)
    with pytest.raises(ValueError, match="judged twice"):
        compute_all_cell_stats(
            [verdict("s-p", 0, "m", 8), verdict("s-p", 0, "m", 9)],
            conversations={"s-p": ("s", "p")},
            thresholds=th,
        )


def test_aggregate_by_metric() -> None:
    cells = [cell([8, 8, 8], seed="a"), cell([6, 10, 8], seed="b"), cell(["jf", "na", 5], seed="c")]
    (m,) = aggregate_by_metric(cells)
    assert m.n_conversations == 3
    assert m.mean == pytest.approx((8 + 8 + 5) / 3)
    assert m.within_sd == pytest.approx(math.sqrt((0 + 4) / 2))
    assert m.flipping_conversations == 1
    assert m.judge_failure_rate == pytest.approx(1 / 9)
