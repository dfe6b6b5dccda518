"""Test-retest reliability in every results file (``reliability_from_records`` through
``pipeline.evaluate``), its rendering, the results adapter on the real results shape, and the
judge's calibration status (``calibration.status``, ``judge_calibration``, the report footer)."""

from __future__ import annotations

import datetime as dt
import json
import math
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

import pytest

from empath_gate.analysis.reliability import FLOORED_NOTE, NO_REJUDGINGS_NOTE, reliability_from_records
from empath_gate.analysis.stats import CellStats, compute_all_cell_stats
from empath_gate.calibration.pairing import first_judgings
from empath_gate.calibration.readers import results_adapter
from empath_gate.calibration.status import (
    CalibrationStatus,
    calibration_for,
    read_status,
    status_from_agreement,
    write_status,
)
from empath_gate.errors import ConfigError
from empath_gate.instrument.loader import load_instrument
from empath_gate.instrument.models import Instrument
from empath_gate.judging.verdict import JudgeFailure, MetricVerdict
from empath_gate.plan import Plan, build_plan
from empath_gate.report.html import render_html
from empath_gate.report.markdown import render_markdown
from empath_gate.results import Results, ResultsMetadata, RunRecord
from empath_gate.results.evaluate import evaluate
from empath_gate.results.metadata import build_metadata
from empath_gate.settings import load_settings
from empath_gate.settings.profile import resolve_profile

METRIC = "crisis_detection"  # min_mean 8 in the shipped thresholds
Scores = Mapping[str, Sequence[Sequence[int]]]
"""conversation id -> per run, the scores of judging 0, 1, ... of that run's transcript."""


@pytest.fixture(scope="module")
def instrument() -> Instrument:
    return load_instrument()


def _verdict(tid: str, metric: str, score: int | None, k: int = 0) -> MetricVerdict:
    if score is None:
        return MetricVerdict(
            metric_id=metric,
            transcript_id=tid,
            status="judge_failure",
            rejudge=k,
            failure=JudgeFailure(reason="parse_error", detail="prose"),
        )
    return MetricVerdict(
        metric_id=metric,
        transcript_id=tid,
        status="scored",
        score=score,
        raw_score=score,
        rejudge=k,
        judge_model="openai/j",
    )


def _record(
    conv: str,
    run: int,
    verdicts: Sequence[MetricVerdict],
    *,
    content: str | None = None,
    status: str = "complete",
) -> RunRecord:
    return RunRecord(
        transcript_id=f"{conv}-r{run}",
        conversation_id=conv,
        suite="crisis",
        seed_id=conv.split("--")[0],
        persona_id="p",
        locale="en-US",
        run=run,
        status=status,
        content_hash=content if content is not None else f"same-{conv}",
        verdicts=tuple(verdicts),
    )


def _build(
    instrument: Instrument,
    scores: Scores,
    metric: str = METRIC,
    contents: Mapping[tuple[str, int], str] | None = None,
) -> tuple[list[RunRecord], list[CellStats]]:
    records = []
    for conv, runs in scores.items():
        for run, judgings in enumerate(runs):
            vs = [_verdict(f"{conv}-r{run}", metric, s, k) for k, s in enumerate(judgings)]
            records.append(_record(conv, run, vs, content=(contents or {}).get((conv, run))))
    cells = compute_all_cell_stats(
        [v for r in records for v in r.verdicts],
        conversations={c: (c.split("--")[0], "p") for c in scores},
        thresholds=instrument.thresholds,
        expected_runs=max(len(r) for r in scores.values()),
    )
    return records, list(cells)


def _entry(rel: Mapping[str, object], metric: str = METRIC) -> Mapping[str, object]:
    metrics = rel["metrics"]
    assert isinstance(metrics, list)
    return next(e for e in metrics if e["metric_id"] == metric)


# ----------------------------------------------------------------------------- the figures


def test_identical_scores_give_zero_spread(instrument: Instrument) -> None:
    records, cells = _build(instrument, {"a--1": [[9], [9], [9]], "b--1": [[9], [9], [9]]})
    rel = reliability_from_records(records, cells)
    e = _entry(rel)
    assert e["within_sd"] == 0.0 and e["flip_rate"] == 0.0
    assert e["icc_1_1"] is None and e["icc_note"] == "no variance: every score is equal"
    assert e["n_conversations"] == 2 and e["n_runs"] == 6
    assert e["transcripts_differed"] == 0.0 and rel["transcripts_differed"] == 0.0
    assert rel["variance_split"] is False and rel["note"] == NO_REJUDGINGS_NOTE
    assert e["judge_variance"] is None and e["generation_variance"] is None
    json.dumps(rel)  # JSON-able as it is


def test_three_runs_by_hand(instrument: Instrument) -> None:
    contents = {("a--1", 2): "another transcript"}
    records, cells = _build(instrument, {"a--1": [[8], [8], [9]], "b--1": [[4], [5], [4]]}, contents=contents)
    e = _entry(reliability_from_records(records, cells))
    # within variances 1/3 and 1/3; MSB = 3 * (2^2 + 2^2) = 24, MSW = (2/3 + 2/3) / 4 = 1/3, n0 = 3
    assert e["within_sd"] == pytest.approx(math.sqrt(1 / 3))
    assert e["icc_1_1"] == pytest.approx((24 - 1 / 3) / (24 + 2 / 3))
    # pass mark 8: a passes 3 of 3 (0 flips); b fails 3 of 3 (0 flips)
    assert e["flip_rate"] == 0.0
    assert e["transcripts_differed"] == 0.5


def test_flip_rate_and_failures(instrument: Instrument) -> None:
    # a: 9, 7, failure -> 1 of 2 judged runs on the minority side: 0.5; b: 8, 8, 3 -> 1/3
    records, cells = _build(instrument, {"a--1": [[9], [7], [None]], "b--1": [[8], [8], [3]]})
    e = _entry(reliability_from_records(records, cells))
    assert e["flip_rate"] == pytest.approx((0.5 + 1 / 3) / 2)
    assert e["n_runs"] == 5, "a judge failure is no score"


def test_variance_split(instrument: Instrument) -> None:
    # run transcripts judged 3 times: [6, 8, 7] and [9, 9, 9]: judge variances 1 and 0 (mean 0.5);
    # run means 7 and 9: variance 2; generation = 2 - mean(1/3, 0/3) = 2 - 1/6
    records, cells = _build(instrument, {"a--1": [[6, 8, 7], [9, 9, 9]], "b--1": [[5, 5, 5], [5, 5, 5]]})
    rel = reliability_from_records(records, cells)
    e = _entry(rel)
    assert rel["variance_split"] is True and rel["note"] is None
    assert e["rejudged_transcripts"] == 4 and e["judgings_per_transcript"] == 3
    assert e["judge_variance"] == pytest.approx(0.25)  # mean of 1, 0, 0, 0
    assert e["run_mean_variance"] == pytest.approx(1.0)  # mean of 2 (a) and 0 (b)
    assert e["generation_variance"] == pytest.approx(1.0 - (1 / 3) / 4)
    assert e["generation_floored"] is False and e["generation_note"] is None
    # first judgings only in the SD: a = 6, 9; b = 5, 5
    assert e["within_sd"] == pytest.approx(math.sqrt((4.5 + 0) / 2))


def test_negative_generation_variance_is_floored_with_a_note(instrument: Instrument) -> None:
    # judge noise larger than the run-to-run spread: run means are equal
    records, cells = _build(instrument, {"a--1": [[5, 9], [9, 5]], "b--1": [[7, 7], [7, 7]]})
    e = _entry(reliability_from_records(records, cells))
    assert e["run_mean_variance"] == 0.0
    assert e["generation_variance"] == 0.0 and e["generation_floored"] is True
    assert e["generation_note"] == FLOORED_NOTE


def test_stopped_transcripts_and_other_metrics(instrument: Instrument) -> None:
    records, cells = _build(instrument, {"a--1": [[9], [9]], "b--1": [[9], [9]]})
    stopped = _record("b--1", 2, [], content="partial", status="error")
    stray = _record("c--1", 0, [_verdict("c--1-r0", "sycophancy", 2)])
    rel = reliability_from_records([*records, stopped, stray], cells)
    assert rel["transcripts_differed"] == 0.0, "a stopped transcript does not count as a different one"
    assert [e["metric_id"] for e in rel["metrics"]] == [METRIC], "only the cells' metrics"


def test_flip_rate_follows_each_cells_pass_mark(instrument: Instrument) -> None:
    records, cells = _build(instrument, {"a--1": [[9], [7]], "b--1": [[9], [7]]})
    assert _entry(reliability_from_records(records, cells))["flip_rate"] == 0.5  # mark 8
    # the same metric under another suite's mark of 7 on one conversation: that cell never flips
    relaxed = [cells[0], cells[1].model_copy(update={"min_mean": 7.0, "n_pass": 2, "flip_rate": 0.0})]
    assert _entry(reliability_from_records(records, relaxed))["flip_rate"] == 0.25


# ----------------------------------------------------------------------------- through evaluate


def _metadata(plan: Plan, instrument: Instrument) -> ResultsMetadata:
    return ResultsMetadata(
        tool_version="0",
        instrument_version=instrument.version,
        suites=plan.suites,
        plan_id=plan.plan_id,
        runs=plan.runs,
        target="openai/bot",
        auditor="scripted",
        started_at="2026-01-01T00:00:00+00:00",
    )


def _evaluated(
    instrument: Instrument,
    score_of: Callable[[str, int], int | None],
    *,
    differ: frozenset[str] = frozenset(),
) -> Results:
    plan = build_plan(instrument, ["crisis"], runs=3)
    metrics_for = plan.metrics_for()
    records = []
    for t in plan.transcripts:
        conv = plan.conversation(t.conversation_id)
        vs = [
            _verdict(t.transcript_id, m, score_of(t.conversation_id, t.run))
            for m in metrics_for[t.conversation_id]
        ]
        content = (
            f"{conv.conversation_id}-{t.run}" if conv.conversation_id in differ else conv.conversation_id
        )
        records.append(
            RunRecord(
                transcript_id=t.transcript_id,
                conversation_id=t.conversation_id,
                suite=conv.suite,
                seed_id=conv.seed_id,
                persona_id=conv.persona_id,
                locale=conv.locale,
                run=t.run,
                status="complete",
                content_hash=content,
                verdicts=tuple(vs),
            )
        )
    return evaluate(records, plan=plan, instrument=instrument, metadata=_metadata(plan, instrument))


def test_evaluate_fills_reliability_for_a_three_run_result(instrument: Instrument) -> None:
    res = _evaluated(instrument, lambda conv, run: 9)
    rel = res.reliability
    assert rel is not None and rel["metrics"]
    assert [e["metric_id"] for e in rel["metrics"]] == list(dict.fromkeys(c.metric_id for c in res.cells))
    for e in rel["metrics"]:
        assert e["within_sd"] == 0.0 and e["flip_rate"] == 0.0 and e["n_runs"] % 3 == 0
    assert rel["conversations"] == 51 and rel["transcripts_differed"] == 0.0
    Results.model_validate_json(res.model_dump_json())  # survives the results schema round trip


def test_reliability_is_rendered_per_metric(instrument: Instrument) -> None:
    plan = build_plan(instrument, ["crisis"], runs=3)
    first = plan.conversations[0].conversation_id
    res = _evaluated(instrument, lambda conv, run: 9 if run != 1 else 6, differ=frozenset({first}))
    rel = res.reliability
    assert rel is not None
    md = render_markdown(res)
    assert "#### Test-retest reliability" in md
    section = md.split("#### Test-retest reliability", 1)[1]
    for e in rel["metrics"]:
        row = next(line for line in section.splitlines() if f"`{e['metric_id']}`" in line)
        cells = [c.strip() for c in row.strip("|").split("|")]
        assert cells[1] == "1.73"  # SD of 9, 6, 9
        assert cells[3] == "0.33"  # one run of three below the pass mark
    html = render_html(res)
    assert 'id="reliability"' in html
    for e in rel["metrics"]:
        assert f'<tr data-metric="{e["metric_id"]}">' in html


# ----------------------------------------------------------------------------- readers


def test_results_adapter_reads_the_real_results_shape(instrument: Instrument) -> None:
    res = _evaluated(instrument, lambda conv, run: 8)
    doc = json.loads(res.model_dump_json())
    doc["metadata"]["judge"]["model"] = "openai/j"
    rec = doc["records"][0]
    rec["verdicts"].append({**rec["verdicts"][0], "score": 3, "raw_score": 3, "rejudge": 1})
    got = results_adapter(doc, source="r.json")
    assert got.judge_model == "openai/j"
    assert len(got.scores) == sum(len(r["verdicts"]) for r in doc["records"])
    firsts = first_judgings(got)
    assert firsts[(rec["transcript_id"], rec["verdicts"][0]["metric_id"])] == 8.0, (
        "the re-judging is left out"
    )


# ----------------------------------------------------------------------------- calibration status


def _status(model: str = "openai/j", rubric: str | None = "strict") -> CalibrationStatus:
    return CalibrationStatus(
        judge_model=model,
        rubric=rubric,
        kind="gold",
        against="gold labels gold.jsonl",
        reference="gold.jsonl",
        date="2026-03-01",
        n=40,
        figures={"bias": 0.2, "mae": 0.5, "within_1": 0.925, "spearman": 0.7},
        inflated_vs_gold=("sycophancy",),
        tool_version="0",
    )


def test_calibration_for(tmp_path: Path) -> None:
    path = write_status(_status(), tmp_path / "cal.json")
    assert read_status(path) == _status()
    ok = calibration_for(path, "openai/j", "strict")
    assert ok is not None and ok["status"] == "calibrated" and ok["calibrated"] is True
    assert ok["against"] == "gold labels gold.jsonl" and ok["file"] == "cal.json"
    stale = calibration_for(path, "openai/k", "strict")
    assert stale is not None and stale["status"] == "stale: calibrated for openai/j"
    assert stale["calibrated"] is False and "openai/k" in stale["note"]
    rubric = calibration_for(path, "openai/j", "standard")
    assert rubric is not None and rubric["calibrated"] is False and "strict rubric" in rubric["status"]
    assert calibration_for(None, "openai/j") is None
    assert calibration_for(path, None) is None, "criteria-only runs have no judge to calibrate"
    missing = calibration_for(tmp_path / "nope.json", "openai/j")
    assert missing is not None and missing["status"] == "not_calibrated" and "not found" in missing["note"]
    assert missing["note"].startswith("nope.json:") and str(tmp_path) not in missing["note"]
    bad = tmp_path / "bad.json"
    bad.write_text('{"judge_model": "x"}', encoding="utf-8")
    with pytest.raises(ConfigError, match="not a calibration status file"):
        read_status(bad)
    invalid = calibration_for(bad, "x")
    assert invalid is not None and invalid["status"] == "not_calibrated" and invalid["calibrated"] is False
    assert "not a calibration status file" in invalid["note"]


def test_status_from_agreement_needs_judge_models(tmp_path: Path) -> None:
    from empath_gate.calibration.agreement import PairedScore, agreement

    report = agreement(
        [PairedScore(item_id=f"t{i}", metric_id="m", a=i % 3 + 7, b=i % 3 + 6) for i in range(12)],
        n_resamples=50,
    )
    a, b, offline = tmp_path / "a.json", tmp_path / "b.json", tmp_path / "o.json"
    a.write_text(
        json.dumps({"metadata": {"judge": {"model": "openai/a", "rubric": "strict"}}}), encoding="utf-8"
    )
    b.write_text(json.dumps({"metadata": {"judge": {"model": "anthropic/b"}}}), encoding="utf-8")
    offline.write_text(json.dumps({"metadata": {"judge": {"model": None}}}), encoding="utf-8")
    s = status_from_agreement(report, results_a=a, results_b=b, today=dt.date(2026, 4, 2))
    assert (s.judge_model, s.kind, s.against, s.date, s.n) == (
        "openai/a",
        "peer_judge",
        "peer judge anthropic/b",
        "2026-04-02",
        12,
    )
    assert s.figures["exact"] == 0.0 and s.figures["within_1"] == 1.0 and s.figures["mean_abs_diff"] == 1.0
    with pytest.raises(ConfigError, match="no judge model"):
        status_from_agreement(report, results_a=offline, results_b=b)


def test_judge_calibration_setting_reaches_the_metadata_and_footer(
    tmp_path: Path, instrument: Instrument
) -> None:
    cal = write_status(_status(), tmp_path / "cal.json")
    env = {"EMPATH_JUDGE_CALIBRATION": str(cal), "EMPATH_JUDGE_MODEL": "openai/j"}
    settings = load_settings(pyproject=None, env=env)
    assert settings.judge_calibration == cal
    toml = tmp_path / "pyproject.toml"
    toml.write_text(
        '[tool.empath-gate]\njudge_calibration = "cal.json"\njudge_model = "openai/j"\n', encoding="utf-8"
    )
    from_file = load_settings(pyproject=toml, env={})
    assert from_file.judge_calibration == tmp_path / "cal.json", "relative to the pyproject"

    plan = build_plan(instrument, ["smoke"], runs=1)
    md = build_metadata(
        resolve_profile(from_file, env={}), plan, instrument, started_at="2026-01-01", fail_on="both"
    )
    assert md.judge.calibration is not None and md.judge.calibration["status"] == "calibrated"
    res = Results(metadata=md)
    footer = render_markdown(res).split("**Judge calibration:**", 1)[1].splitlines()[0]
    assert "judge calibrated against gold labels gold.jsonl on 2026-03-01" in footer
    assert "within ±1 92%" in footer and "bias +0.20" in footer and "n = 40" in footer
    assert "inflated vs gold on sycophancy" in footer

    other = load_settings(pyproject=None, env={**env, "EMPATH_JUDGE_MODEL": "openai/k"})
    md2 = build_metadata(resolve_profile(other, env={}), plan, instrument, started_at="x", fail_on="both")
    assert md2.judge.calibration is not None and md2.judge.calibration["calibrated"] is False
    assert "judge not calibrated (stale: calibrated for openai/j" in render_markdown(Results(metadata=md2))

    none = load_settings(pyproject=None, env={"EMPATH_JUDGE_MODEL": "openai/j"})
    md3 = build_metadata(resolve_profile(none, env={}), plan, instrument, started_at="x", fail_on="both")
    assert md3.judge.calibration is None
    assert "judge not calibrated" in render_markdown(Results(metadata=md3))
