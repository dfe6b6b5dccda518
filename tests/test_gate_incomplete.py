"""Missing evidence never passes: a run without a verdict (a JudgeFailure, a stopped or lost
transcript) is unknown, so a cell
passes only when it would pass whatever that run scored, fails when no score could rescue it,
and is otherwise incomplete (a failure under pytest, CLI exit 3, never waived)."""

from __future__ import annotations

import datetime as dt

from test_gate import TH, TODAY, cell, make_th, one

from empath_gate.gate.decide import decide, decide_cell
from empath_gate.gate.exit import EXIT_INFRA, PYTEST_FAILED
from empath_gate.instrument.models import Waiver

TWO = make_th(min_judged_runs=2)
"""Two judged runs are enough evidence, so a third run's JudgeFailure is what is unknown."""


def test_a_judge_failure_cannot_turn_a_failing_cell_green() -> None:
    assert one([10, 10, 2], metric="empathy_vs_manipulation", th=TWO).status == "failed"
    d = one([10, 10, "jf"], metric="empathy_vs_manipulation", th=TWO)
    assert d.status == "incomplete"
    assert d.reasons[0].startswith(
        "incomplete: empathy_vs_manipulation: the judge gave no verdict on run(s) 2"
    )


def test_a_cell_that_passes_whatever_the_missing_run_scored_passes() -> None:
    # with min_mean 6, min_run 1 and wide limits, 9, 9 and any third score from 1 to 10 pass
    th = make_th(min_mean=6, min_run=1, max_range=9, max_flip_rate=0.5, min_judged_runs=2)
    assert one([9, 9, "jf"], metric="empathy_vs_manipulation", th=th).status == "passed"


def test_a_cell_that_no_score_could_rescue_fails() -> None:
    th = make_th(min_run=1, max_range=9, max_flip_rate=0.5, min_judged_runs=2)
    d = one([2, 2, "jf"], metric="empathy_vs_manipulation", th=th)  # (2 + 2 + 10) / 3 = 4.67 < 7
    assert d.status == "failed"


def test_an_incomplete_cell_is_never_waived_and_exits_as_not_evaluated() -> None:
    w = Waiver(
        metric="empathy_vs_manipulation",
        reason="under review by the team",
        owner="@safety",
        expires=dt.date(2030, 1, 1),
    )
    c = cell([10, 10, "jf"], metric="empathy_vs_manipulation", th=TWO)
    d = decide([c], TWO, waivers=[w], today=dt.date(2026, 6, 1))
    assert d.cells[0].status == "incomplete" and d.cells[0].waiver is None
    assert d.counts["incomplete"] == 1 and not d.passed
    assert d.cli_exit_code() == EXIT_INFRA and d.pytest_exit_code() == PYTEST_FAILED


def test_stopped_transcripts_and_missing_runs_are_unknown_not_errors() -> None:
    # was: an errored cell; a run without evidence is unknown like a JudgeFailure
    c = cell([9, None, 9], errors={"seed-a-p1-r1": "transcript stopped: budget: max_cost_usd 2.00 reached"})
    d = decide_cell(c, TH.resolve("crisis_detection"), today=TODAY)
    assert d.status == "incomplete" and not d.infrastructure
    assert d.reasons == (
        "incomplete: crisis_detection: run 1 transcript stopped: budget: max_cost_usd 2.00 reached; "
        "those runs could pass or fail this test",
    )
    missing = decide_cell(cell([9, None, 9]), TH.resolve("crisis_detection"), today=TODAY)
    assert missing.status == "incomplete" and "run 1 has no verdict" in missing.reasons[0]


def test_a_lost_run_counts_like_a_judge_failure_but_could_have_been_judged() -> None:
    # passes whatever the lost run scored: decided
    wide = make_th(min_mean=6, min_run=1, max_range=9, max_flip_rate=0.5, min_judged_runs=2)
    assert one([9, 9, None], th=wide).status == "passed"
    # no score could rescue 2, 2: failed, not incomplete
    low = make_th(min_run=1, max_range=9, max_flip_rate=0.5, min_judged_runs=2)
    assert one([2, 2, None], th=low).status == "failed"
    # every run lost: the provider, not the chatbot, is to blame; a JudgeFailure on every run
    # (no run can ever be judged) stays a failure of min_judged_runs
    from empath_gate.analysis.stats import empty_cell

    t = TH.resolve("crisis_detection")
    lost = decide_cell(empty_cell(conversation_id="seed-a-p1", seed_id="seed-a", persona_id="p1",
                                  metric_id="crisis_detection", expected_runs=3, min_mean=t.min_mean),
                       t, today=TODAY)
    assert lost.status == "incomplete"
    assert lost.reasons[0].startswith(
        "incomplete: crisis_detection: run 0 has no verdict; run 1 has no verdict"
    )
    assert one(["jf", "jf", "jf"]).status == "failed"
    # [9, jf, lost] with min_judged_runs 2: the lost run could make up the second judged run
    assert one([9, "jf", None], th=TWO).status == "incomplete"


def test_a_missing_run_never_fails_a_test_on_min_judged_runs() -> None:
    # runs 1 below min_judged_runs 2 and the one transcript errored: the provider is to blame,
    # not the bot; as at runs 2, the test is incomplete (CLI exit 3), never a gate failure
    from empath_gate.analysis.stats import empty_cell

    t = TWO.resolve("crisis_detection")
    lone = empty_cell(conversation_id="seed-a-p1", seed_id="seed-a", persona_id="p1",
                      metric_id="crisis_detection", expected_runs=1, min_mean=t.min_mean)
    assert decide_cell(lone, t, today=TODAY).status == "incomplete"
    assert one([10, None], th=TWO).status == "incomplete"
    three = make_th(min_judged_runs=3)
    d = one([10, "jf", None], th=three)  # the missing run is unknown beside the JudgeFailure
    assert d.status == "incomplete" and d.reasons[0].startswith("incomplete: crisis_detection: the judge")
    assert one([10, 10, None], th=make_th(min_judged_runs=4)).status == "incomplete"
    # fail closed: nothing missing, too few judged runs fail; scores no run rescues still fail
    assert one([10], th=TWO).status == "failed"
    assert one([10, 10, "jf"], th=three).status == "failed"
    low = make_th(min_run=1, max_range=9, max_flip_rate=0.5, min_judged_runs=4)
    assert one([2, 2, None], th=low).status == "failed"
    # and a missing run never passes a test
    assert one([10, 10, None], th=make_th(min_judged_runs=3)).status == "incomplete"


def test_a_lost_run_is_incomplete_even_when_thresholds_do_not_gate() -> None:
    c = cell([9, None, 9])
    t = TH.resolve("crisis_detection")
    for fail_on in ("regression", "never"):
        d = decide_cell(c, t, fail_on=fail_on, today=TODAY)  # type: ignore[arg-type]
        assert d.status == "incomplete", fail_on
    # a JudgeFailure under fail_on=regression leaves nothing undecided that gates
    assert decide_cell(cell([9, "jf", 9], th=TWO), TWO.resolve("crisis_detection"), fail_on="regression",
                       today=TODAY).status == "passed"


def test_an_incomplete_run_exits_3_from_the_cli_summary() -> None:
    from empath_gate.gate.exit import summary_exit_code
    from empath_gate.results.model import Summary

    assert summary_exit_code(Summary(counts={"passed": 4, "incomplete": 1})) == EXIT_INFRA
    assert summary_exit_code(Summary(counts={"failed": 1, "incomplete": 1})) == EXIT_INFRA


def test_a_run_that_decided_nothing_is_not_evaluated_and_exits_3() -> None:
    """Every test skipped (offline, metrics that need a judge model): never exit 0, and the
    verdict says not evaluated; one decided test or suite check decides the run."""
    from empath_gate.gate.exit import EXIT_GATE_FAILED, EXIT_PASS, nothing_decided, summary_exit_code
    from empath_gate.results.model import Summary

    assert nothing_decided({"skipped": 38}) and nothing_decided({})
    assert summary_exit_code(Summary(counts={"skipped": 38})) == EXIT_INFRA
    assert summary_exit_code(Summary(counts={})) == EXIT_INFRA
    assert summary_exit_code(Summary(counts={"skipped": 38}, check_counts={"skipped": 2})) == EXIT_INFRA
    assert summary_exit_code(Summary(counts={"skipped": 3, "passed": 1})) == EXIT_PASS
    assert summary_exit_code(Summary(counts={"skipped": 3, "xfail": 1})) == EXIT_PASS
    assert summary_exit_code(Summary(counts={"skipped": 3}, check_counts={"passed": 1})) == EXIT_PASS
    assert summary_exit_code(Summary(counts={"skipped": 3}, check_counts={"failed": 1})) == EXIT_GATE_FAILED
