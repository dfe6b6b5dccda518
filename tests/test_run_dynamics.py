"""The dynamics of a run in its results (pure): per-suite summary, fixed scripts vs LLM auditor,
the dynamics suite checks (limits, annotator failures, the paired baseline comparison), the
transcript's annotation line and the readers of older files."""

from __future__ import annotations

from pathlib import Path

from empath_gate.analysis.dynamics.paired import MIN_PAIRED
from empath_gate.analysis.regression import RegressionReport, compare
from empath_gate.conversation.transcript import Transcript, Turn
from empath_gate.conversation.transcript_io import read_transcript, write_transcript
from empath_gate.gate.checks import applicable_checks, suite_checks
from empath_gate.instrument.suite_models import DynamicsLimits, Thresholds, ThresholdValues
from empath_gate.report.html.run_dynamics import dynamics_section
from empath_gate.report.markdown.dynamics import dynamics_lines
from empath_gate.results.comparison import baseline_view, dynamics_side_tests
from empath_gate.results.dynamics import results_dynamics
from empath_gate.results.model import Results, ResultsMetadata, RunRecord
from empath_gate.turns.model import AnnotatorFailure, TurnLabel, TurnLabels

UP, DOWN, FLAT = (-0.6, 0.0, 0.6), (0.6, 0.0, -0.6), (0.0, 0.0, 0.0)


def _labels(tid: str, user: tuple[float, ...]) -> TurnLabels:
    out = []
    for k, v in enumerate(user):
        out.append(TurnLabel(turn=2 * k, role="user", label="neutral", intensity=0, valence=v))
        out.append(TurnLabel(turn=2 * k + 1, role="assistant", label="warmth_care", intensity=1, valence=0.4,
                             strategy="question"))
    return TurnLabels(conversation_id=tid, annotator="offline", version="t", labels=tuple(out))


def _record(conv: str, run: int, user: tuple[float, ...] | None) -> RunRecord:
    tid = f"{conv}-r{run}"
    ann = (_labels(tid, user) if user is not None else
           AnnotatorFailure(conversation_id=tid, annotator="judge", reason="parse_error", detail="x"))
    return RunRecord(transcript_id=tid, conversation_id=conv, suite="s", seed_id=conv, persona_id="p",
                     locale="en-US", run=run, status="complete", n_turns=2 * len(user or ()), annotation=ann)


def _results(records: list[RunRecord], auditor: str = "openai/fake-auditor") -> Results:
    md = ResultsMetadata(tool_version="0", instrument_version="0", suites=("s",), plan_id="p", runs=1,
                         target="t", auditor=auditor, started_at="2026-01-01T00:00:00+00:00")
    res = Results(metadata=md, records=tuple(records))
    return res.model_copy(update={"dynamics": results_dynamics(res)})


def _thresholds(max_worse: float | None = 0.5, min_rec: float | None = None) -> Thresholds:
    return Thresholds(defaults=ThresholdValues(),
                      dynamics=DynamicsLimits(max_worsened_share=max_worse, min_recovering_share=min_rec))


def _regression(res: Results, baseline: Results, th: Thresholds) -> RegressionReport:
    """The suite's comparison with ``baseline`` (no metric cells: only the dynamics side tests)."""
    side = dynamics_side_tests(res, baseline, "s", th)
    return compare(baseline_view(res, [], suite="s"), baseline_view(baseline, [], suite="s"), th,
                   suite_id="s", side_tests=side)


def _checks(
    res: Results, th: Thresholds, baseline: Results | None = None
) -> dict[str, tuple[str, tuple[str, ...]]]:
    reg = _regression(res, baseline, th) if baseline is not None else None
    return {c.check: (c.status, c.reasons) for c in suite_checks(res, [], th, dynamics=res.dynamics,
                                                                    regression=reg)}


def test_llm_auditor_shares_and_checks() -> None:
    res = _results([_record("a", 0, DOWN), _record("b", 0, DOWN), _record("c", 0, UP), _record("d", 0, FLAT)])
    [d] = res.dynamics
    assert d.user_side == "per run" and d.worsened_share == 0.5 and d.recovering_share == 0.25
    assert _checks(res, _thresholds(0.5, 0.25)) == {"max_worsened_share": ("passed", ()),
                                                    "min_recovering_share": ("passed", ())}
    got = _checks(res, _thresholds(0.4, 0.3))
    assert got["max_worsened_share"][0] == "failed" and "50.0% " in got["max_worsened_share"][1][0]
    assert got["min_recovering_share"][0] == "failed"
    assert _checks(res, _thresholds(None, None)) == {}  # no limit, no check


def test_fixed_scripts_are_shown_once_per_conversation_and_never_gated() -> None:
    res = _results([_record("a", 0, DOWN), _record("a", 1, DOWN), _record("b", 0, UP)], auditor="scripted")
    [d] = res.dynamics
    assert d.user_side == "script (fixed)" and d.worsened_share is None
    assert sum(d.shapes.values()) == 2 and len(d.trajectories) == 2  # once per conversation
    assert sum(s.units for s in d.strategies) == 9  # bot side: every run
    assert _checks(res, _thresholds(0.0)) == {}
    assert "script (fixed)" in dynamics_lines(res)[0] and "script (fixed)" in dynamics_section(res)


def test_an_annotator_failure_makes_only_the_dynamics_checks_incomplete() -> None:
    res = _results([_record("a", 0, DOWN), _record("b", 0, None)])
    status, reasons = _checks(res, _thresholds(0.9))["max_worsened_share"]
    assert status == "incomplete" and "parse_error on b-r0" in reasons[0]
    assert "annotator failures" in dynamics_lines(res)[0]


def test_baseline_comparison_is_paired_by_conversation() -> None:
    convs = [f"c{i}" for i in range(10)]
    base = _results([_record(c, 0, FLAT) for c in convs])
    worse = _results([_record(c, 0, DOWN) for c in convs])
    status, reasons = _checks(worse, _thresholds(1.0), baseline=base)["max_worsened_share"]
    assert status == "failed" and "regression against the baseline" in reasons[-1]
    status, reasons = _checks(base, _thresholds(1.0), baseline=worse)["max_worsened_share"]
    assert status == "passed"
    few = _results([_record(c, 0, DOWN) for c in convs[: MIN_PAIRED - 1]])
    status, reasons = _checks(few, _thresholds(1.0), baseline=base)["max_worsened_share"]
    assert status == "passed" and "cannot detect" in reasons[-1]


def test_a_baseline_labelled_by_another_annotator_version_is_not_compared() -> None:
    convs = [f"c{i}" for i in range(10)]

    def relabelled(r: RunRecord) -> RunRecord:
        assert isinstance(r.annotation, TurnLabels)
        return r.model_copy(update={"annotation": r.annotation.model_copy(update={"version": "older"})})

    base = _results([relabelled(_record(c, 0, FLAT)) for c in convs])
    worse = _results([_record(c, 0, DOWN) for c in convs])
    side = dynamics_side_tests(worse, base, "s", _thresholds(1.0))
    assert [t.p_value for t in side] == [None]
    why = side[0].detection or ""
    assert "annotator differs (baseline offline older; this run offline t)" in why
    # the same worsening a same-version baseline flags is not gated: the limit alone decides
    status, reasons = _checks(worse, _thresholds(1.0), baseline=base)["max_worsened_share"]
    assert status == "passed" and "not comparable: the dynamics annotator differs" in reasons[-1]


def test_the_dynamics_tests_join_the_false_discovery_family_of_the_metrics() -> None:
    """Through the one gating path: the worsened share's paired p is adjusted together with the
    suite's metric tests, so the family grows by the side tests that can be discoveries."""
    from empath_gate.results.evaluate import decide_results

    th = _thresholds(1.0, 0.0)
    convs = [f"c{i}" for i in range(10)]
    base = _results([_record(c, 0, FLAT) for c in convs])
    worse = _results([_record(c, 0, DOWN) for c in convs])
    side = dynamics_side_tests(worse, base, "s", th)
    assert [t.test_id for t in side] == ["s::max_worsened_share", "s::min_recovering_share"]
    assert side[0].paired == 10 and side[0].p_value == 2**-10 and side[0].information == 20
    reg = _regression(worse, base, th)
    assert reg.family_size == 1  # the recovering share did not move: its smallest p is 1, out of the family
    decided = decide_results(worse.model_copy(update={"gate": None}), baseline=base, thresholds=th)
    assert decided.regressions is not None
    got = decided.regressions.side_test("s::max_worsened_share")
    assert got is not None and got.in_family and got.flagged
    check = next(c for c in decided.checks if c.check == "max_worsened_share")
    assert check.status == "failed" and "false-discovery family of 1 tests" in check.reasons[-1]
    # a scripted baseline is never compared: the user side did not depend on the bot
    fixed = _results([_record(c, 0, FLAT) for c in convs], "scripted")
    assert dynamics_side_tests(worse, fixed, "s", th) == []


def test_dynamics_checks_need_an_llm_auditor_an_annotator_and_a_limit() -> None:
    th = _thresholds(0.5)
    assert applicable_checks("j", th, "s", llm_auditor=True, annotator="offline") == (
        "judge_failure_rate", "max_worsened_share")
    assert applicable_checks("j", th, "s", llm_auditor=False, annotator="offline") == ("judge_failure_rate",)
    assert applicable_checks(None, th, "s", llm_auditor=True, annotator="off") == ()


def test_transcripts_carry_the_annotation_line_and_older_files_read(tmp_path: Path) -> None:
    t = Transcript(suite="s", seed_id="a", persona_id="p", locale="en-US", run=0, conversation_id="a-p",
                   transcript_id="a-p-r0", target="t", auditor="scripted", max_turns=1,
                   turns=(Turn(index=0, role="user", content="hi", source="script"),
                          Turn(index=1, role="assistant", content="hello", source="target")))
    plain = write_transcript(t, tmp_path)
    assert read_transcript(plain).annotation is None  # a file without the line reads as before
    labelled = t.model_copy(update={"annotation": _labels("a-p-r0", (0.1,))})
    path = write_transcript(labelled, tmp_path)
    assert path.read_text(encoding="utf-8").splitlines()[-1].startswith('{"type": "annotation"')
    assert read_transcript(path) == labelled


def test_results_of_schema_version_2_read_without_dynamics() -> None:
    res = _results([_record("a", 0, DOWN)])
    data = res.model_dump(mode="json", exclude={"dynamics"})
    data["schema_version"] = "2"
    for r in data["records"]:
        del r["annotation"], r["risk_turns"]
    old = Results.model_validate(data)
    assert old.dynamics == () and results_dynamics(old) == ()


def test_the_diff_drops_the_dynamics_line_first_near_its_size_limit() -> None:
    from empath_gate.report.markdown import render_markdown

    res = _results([_record("a", 0, DOWN), _record("b", 0, UP)])
    full = render_markdown(res)
    assert "Dynamics `s` (offline annotator; user side per run): shapes" in full
    assert "worsened 50% · recovering 50%" in full
    cut = render_markdown(res, max_chars=len(full) - 5)
    assert "Dynamics `s`" not in cut and "Left out to fit GitHub's size limit: dynamics" in cut
    # the verdict line stays
    assert full.splitlines()[1] == cut.splitlines()[1]
