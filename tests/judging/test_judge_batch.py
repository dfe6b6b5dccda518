"""Batch judging in two phases against the fake server's /v1/files and /v1/batches: submit leaves
the tests pending and writes the state file; collect finishes judging from the batch results
through the judge's own parser with no live judge call; both resume after a crash."""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from empath_gate import evaluate_run, load_settings, prepare, run_plan
from empath_gate.gate.exit import EXIT_INFRA, summary_exit_code
from empath_gate.judging.batch_state import read_state
from empath_gate.report.markdown import render_markdown
from empath_gate.report.terminal import render_terminal
from empath_gate.report.view import overall_verdict
from empath_gate.results.model import Results, RunRecord
from empath_gate.testing.fake_openai import FAKE_API_KEY, FakeOpenAIServer
from empath_gate.testing.scenarios import ScoringJudge
from empath_gate.testing.scenarios.wiring import JUDGE_MODEL, seed_table

SEEDS = ("cs-detect-us-took-too-much", "cv-context-us-relocation-quiz")
RUNS = 2
SUITE = f"""\
suites:
  - id: batchy
    label: Batchy
    description: Two conversations judged in a provider batch.
    seeds:
      ids: [{", ".join(SEEDS)}]
    metrics: primary
    personas:
      mode: hash
    runs: {RUNS}
    max_turns: 3
"""
BOT = "def reply(messages, *args, **kwargs):\n    return 'I hear you. You can call 988 any time.'\n"


@pytest.fixture()
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    team = tmp_path / "suites-team"
    team.mkdir()
    (team / "suites.yaml").write_text(SUITE, encoding="utf-8")
    (tmp_path / "batch_bot.py").write_text(BOT, encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    for key in [k for k in os.environ if k.startswith("EMPATH_")]:
        monkeypatch.delenv(key)
    monkeypatch.delenv("CI", raising=False)  # the scripted auditor with a judge is a local run
    monkeypatch.delenv("PYTEST_XDIST_WORKER", raising=False)  # this test's own worker, not the run's
    monkeypatch.setenv("OPENAI_API_KEY", FAKE_API_KEY)
    yield tmp_path


def run(folder: Path, fake: FakeOpenAIServer, mode: str, **extra: object) -> tuple[Results, list[RunRecord]]:
    overrides: dict[str, object] = {
        "target": "py:batch_bot:reply", "target_version": "1", "runs": RUNS,
        "suites_dirs": (folder / "suites-team",), "cache_dir": folder / "cache",
        "judge_model": f"openai/{JUDGE_MODEL}", "judge_api_base": fake.base_url, "judge_max_retries": 0,
        "judge_batch": mode, **extra,
    }
    setup = prepare(load_settings(overrides=overrides), ["batchy"])
    records = run_plan(setup)
    return evaluate_run(setup, records), records


def judge_seeds(folder: Path) -> dict[int, tuple[str, int]]:
    from empath_gate.instrument.loader import load_instrument
    from empath_gate.plan import build_plan

    plan = build_plan(load_instrument(extra_dirs=(folder / "suites-team",)), ["batchy"], runs=RUNS)
    return seed_table([c.conversation_id for c in plan.conversations], RUNS)


def live_judge_calls(fake: FakeOpenAIServer) -> int:
    return sum(1 for r in fake.requests if r.model == JUDGE_MODEL and r.path.endswith("chat/completions")
               and r.headers)  # a batch line is recorded without HTTP headers


def test_submit_leaves_tests_pending_and_collect_finishes_with_no_live_judge_call(project: Path) -> None:
    with FakeOpenAIServer() as fake:
        judge = ScoringJudge(default=9, seeds=judge_seeds(project))
        fake.on(JUDGE_MODEL, judge)
        fake.batch_pending_polls = 1
        results, records = run(project, fake, "submit")
        state_file = project / "empath-results" / "judge-batch.json"
        state = read_state(state_file)
        assert state is not None and len(state.batches) == 1
        assert {r.status for r in records} == {"pending"}
        assert len(state.requests) == len(records) == 2 * RUNS
        assert {r.transcript_id for r in state.requests} == {r.transcript_id for r in records}
        assert all(r.metrics and r.template_sha256 for r in state.requests)
        assert judge.calls and live_judge_calls(fake) == 0  # answered inside the batch only
        assert results.summary.counts.get("passed", 0) == 0 and results.summary.counts["incomplete"] > 0
        assert all("judging pending in batch_fake_" in (r.error or "") for r in records)
        # waiting for the batch is its own verdict, not an infrastructure error, and still exit 3
        assert (results.summary.transcripts_pending, results.summary.transcripts_failed) == (2 * RUNS, 0)
        verdict = overall_verdict(results)
        assert verdict.status == "judging_pending" and "run --judge-batch collect" in verdict.headline
        assert summary_exit_code(results.summary) == EXIT_INFRA
        terminal = render_terminal(results)
        assert "JUDGING PENDING" in terminal and "INFRASTRUCTURE" not in terminal
        assert render_markdown(results).splitlines()[1].startswith("### ⏳ empath-gate")
        text = state_file.read_text(encoding="utf-8")
        assert FAKE_API_KEY not in text and "api_key" not in text

        # submitting again resubmits nothing
        run(project, fake, "submit")
        again = read_state(state_file)
        assert again is not None and len(again.batches) == 1

        # collect while the batch is in progress: says so, the tests stay incomplete
        fake.batch_pending_polls = 10**6
        results, records = run(project, fake, "collect")
        assert {r.status for r in records} == {"pending"}
        assert results.summary.counts.get("passed", 0) == 0

        # collect once completed: judged from the results, no live judge call
        fake.batch_pending_polls = 0
        results, records = run(project, fake, "collect")
        assert {r.status for r in records} == {"complete"}
        assert all(v.status == "scored" for r in records for v in r.verdicts)
        assert sum(r.by_role["judge"].batch_calls for r in records) == 2 * RUNS
        assert live_judge_calls(fake) == 0 and results.metadata.cost.batch_calls == 2 * RUNS
        assert results.summary.passed

        # collect again (a crash after the first collect stored its replies): all from the cache
        results, records = run(project, fake, "collect")
        assert results.metadata.cost.batch_calls == 0 and results.metadata.cost.calls == 0
        assert results.summary.passed

        # an unchanged plan afterwards: every judge reply from the cache, 0 calls
        results, records = run(project, fake, "off")
        assert results.metadata.cost.calls == 0 and live_judge_calls(fake) == 0
        assert results.summary.passed


def test_an_unparseable_or_missing_batch_result_is_a_visible_judge_failure(project: Path) -> None:
    seeds = judge_seeds(project)
    first = next(iter(seeds.values()))
    with FakeOpenAIServer() as fake:
        # one transcript's reply is prose (fails the judge parser), all others valid
        judge = ScoringJudge(default=9, seeds=seeds,
                             broken=lambda call: (call.conversation_id, call.run) == first)
        fake.on(JUDGE_MODEL, judge)
        run(project, fake, "submit")
        state_file = project / "empath-results" / "judge-batch.json"
        state = read_state(state_file)
        assert state is not None
        # drop one result line from the output file: a missing result
        store = fake.batch_store
        [batch] = store.batches.values()
        out_id = batch["_output"]
        lines = store.files[out_id]["_data"].decode().splitlines()
        dropped = json.loads(lines[-1])["custom_id"]
        store.files[out_id]["_data"] = ("\n".join(lines[:-1]) + "\n").encode()
        fake.batch_pending_polls = 0
        results, records = run(project, fake, "collect")
    assert live_judge_calls(fake) == 0
    failures = {r.transcript_id: {v.failure.reason for v in r.verdicts if v.failure} for r in records}
    broken_id = f"{first[0]}-r{first[1]}"
    assert failures[broken_id] == {"parse_error"}
    dropped_tid = next(r.transcript_id for r in state.requests if r.key == dropped)
    assert dropped_tid != broken_id
    missing = next(r for r in records if r.transcript_id == dropped_tid)
    assert {v.failure.reason for v in missing.verdicts if v.failure} == {"provider_error"}
    assert all("no result line" in (v.failure.detail if v.failure else "") for v in missing.verdicts)
    assert not results.summary.passed


def test_collect_without_a_state_file_is_a_usage_error(project: Path) -> None:
    from empath_gate.errors import ConfigError

    with FakeOpenAIServer() as fake, pytest.raises(ConfigError, match="no judge-batch state file"):
        run(project, fake, "collect")


def test_a_crash_after_one_batch_keeps_it_and_the_rerun_submits_only_the_rest(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import empath_gate.judging.batch_mode as bm

    with FakeOpenAIServer() as fake:
        fake.on(JUDGE_MODEL, ScoringJudge(default=9, seeds=judge_seeds(project)))
        monkeypatch.setattr(bm, "MAX_BATCH_REQUESTS", 1)
        real = bm.write_state
        written: list[int] = []

        def crash_after_first(path: Path, state: object) -> Path:
            out = real(path, state)  # type: ignore[arg-type]
            written.append(1)
            if len(written) == 1:
                raise KeyboardInterrupt  # the process dies right after the first batch's state
            return out

        monkeypatch.setattr(bm, "write_state", crash_after_first)
        with pytest.raises(KeyboardInterrupt):
            run(project, fake, "submit")
        state_file = project / "empath-results" / "judge-batch.json"
        state = read_state(state_file)
        assert state is not None and len(state.batches) == 1 and len(state.requests) == 1
        monkeypatch.setattr(bm, "write_state", real)
        run(project, fake, "submit")
        state = read_state(state_file)
        assert state is not None and len(state.batches) == 2 * RUNS
        assert len({r.key for r in state.requests}) == 2 * RUNS
        fake.batch_pending_polls = 0
        results, records = run(project, fake, "collect")
    assert {r.status for r in records} == {"complete"} and results.summary.passed


def cli(folder: Path, fake: FakeOpenAIServer, monkeypatch: pytest.MonkeyPatch, *args: str) -> int:
    """``empath-gate run --suite batchy ARGS`` in this process, with the fake judge."""
    from empath_gate.cli import main

    for key, value in {
        "EMPATH_TARGET": "py:batch_bot:reply", "EMPATH_TARGET_VERSION": "1",
        "EMPATH_SUITES_DIRS": str(folder / "suites-team"), "EMPATH_CACHE_DIR": str(folder / "cache"),
        "EMPATH_JUDGE_MODEL": f"openai/{JUDGE_MODEL}", "EMPATH_JUDGE_API_BASE": fake.base_url,
        "EMPATH_JUDGE_MAX_RETRIES": "0",
    }.items():
        monkeypatch.setenv(key, value)
    return main(["run", "--suite", "batchy", *args])


def test_every_batch_status_line_is_printed_even_inside_the_progress_throttle(
    project: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import empath_gate.report.progress as progress

    monkeypatch.setattr(progress, "PROGRESS_EVERY_S", 3600.0)  # every line of a run in one window
    with FakeOpenAIServer() as fake:
        fake.on(JUDGE_MODEL, ScoringJudge(default=9, seeds=judge_seeds(project)))
        fake.batch_pending_polls = 1  # each batch reads in_progress on its first poll
        steps = [("2", "submit"), ("2", "collect"), ("3", "submit"), ("3", "collect")]  # all pending
        errs = []
        for runs, mode in steps:
            assert cli(project, fake, monkeypatch, "--runs", runs, "--judge-batch", mode) == 3
            errs.append(capsys.readouterr().err)
    state = read_state(project / "empath-results" / "judge-batch.json")
    assert state is not None
    first, second = state.batches  # in submit order
    assert f"empath-gate: judge batch {first.batch_id}: submitted 4 judge requests" in errs[0]
    assert re.search(f"judge batch {first.batch_id}: in_progress .*: not finished; its transcripts stay "
                     "pending", errs[1])
    assert f"empath-gate: judge batch {second.batch_id}: submitted 2 judge requests" in errs[2]
    # the nightly workflow waits on this line: the first batch completed, the second did not
    lines = [x for x in errs[3].splitlines() if "judge batch" in x]
    assert lines[0] == f"empath-gate: judge batch {first.batch_id}: completed, 4 results", errs[3]
    assert re.match(f"empath-gate: judge batch {second.batch_id}: in_progress .*: not finished; its "
                    "transcripts stay pending", lines[1]), errs[3]


REMEDY = ("Restore judge-batch.json as the submit run wrote it (in CI: from the submit job's artifact, "
          "empath-judge-batch in .github/workflows/nightly.yml), or delete it and run --judge-batch submit "
          "again: the new submit sends every pending judge request")
PRICE = ("again in a new batch, which costs the batch price of those requests again (half the live judge "
         "price); the batches already submitted are billed as well, their results unused")
ENTRY = {"key": "a" * 64, "batch_id": "batch_1", "transcript_id": "t-r0", "metrics": ["m"]}


@pytest.mark.parametrize(("mode", "text", "wrong"), [
    ("collect", "", ["cannot read the judge-batch state file: the file is empty."]),
    ("collect", '{"format": "empath-judge-batch/1", "batches": [', [
        "cannot read the judge-batch state file: not JSON (line 1 column 48: Expecting value)."]),
    ("collect", '{"format": "empath-judge-batch/1"}', [
        "not a valid judge-batch state file (empath-judge-batch/1): judge_model: Field required."]),
    ("submit", json.dumps({"format": "empath-judge-batch/1", "judge_model": f"openai/{JUDGE_MODEL}",
                           "batches": [{"batch_id": "batch_1", "input_file_id": "file_1", "requests": "two"}],
                           "requests": [ENTRY, {**ENTRY, "rejudge": "x", "metrics": "m"}]}), [
        "batches.0.requests: Input should be a valid integer, unable to parse string as an integer; ",
        "batches.0.submitted_at: Field required; ",
        "requests.1.metrics: Input should be a valid tuple; ",
        "requests.1.rejudge: Input should be a valid integer, unable to parse string as an integer. ",
        "request (2 in this file) again"]),
    ("collect", "[]", ["(top level): Input should be a valid dictionary or instance of BatchState."]),
])
def test_a_corrupt_state_file_names_the_file_every_field_and_the_remedy(
    project: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
    mode: str, text: str, wrong: list[str],
) -> None:
    state_file = project / "empath-results" / "judge-batch.json"
    state_file.parent.mkdir()
    state_file.write_text(text, encoding="utf-8")
    with FakeOpenAIServer() as fake:
        assert cli(project, fake, monkeypatch, "--judge-batch", mode) == 2  # a configuration error
        assert not fake.requests  # stopped before any call
    err = " ".join(capsys.readouterr().err.split())  # the message as one line
    shown = Path("empath-results") / "judge-batch.json"
    assert err.startswith(f"empath-gate run: configuration: {shown}: "), err
    for part in [*wrong, REMEDY, PRICE]:
        assert part in err, err


def test_a_state_file_with_many_bad_fields_lists_the_first_ones_and_counts_the_rest(tmp_path: Path) -> None:
    from empath_gate.errors import ConfigError
    from empath_gate.judging.batch_state import MAX_FIELD_ERRORS

    state_file = tmp_path / "judge-batch.json"
    bad = [{"key": "a" * 64} for _ in range(MAX_FIELD_ERRORS + 5)]  # each without its batch_id
    state_file.write_text(json.dumps({"judge_model": "m", "requests": bad}), encoding="utf-8")
    with pytest.raises(ConfigError) as caught:
        read_state(state_file)
    text = str(caught.value)
    assert text.startswith(f"{state_file}: not a valid judge-batch state file")
    assert f"requests.{MAX_FIELD_ERRORS - 1}.batch_id: Field required; and 5 more field errors." in text
    assert f"requests.{MAX_FIELD_ERRORS}.batch_id" not in text
    assert f"every pending judge request ({MAX_FIELD_ERRORS + 5} in this file) again" in text


def test_collect_after_the_plan_changed_says_once_how_many_requests_no_batch_holds_and_to_submit_them(
    project: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    state_file = Path("empath-results") / "judge-batch.json"
    with FakeOpenAIServer() as fake:
        fake.on(JUDGE_MODEL, ScoringJudge(default=9, seeds=judge_seeds(project)))
        fake.batch_pending_polls = 0
        assert cli(project, fake, monkeypatch, "--runs", "2", "--judge-batch", "submit") == 3
        capsys.readouterr()
        # collect with one more run per conversation: its 2 transcripts' judge requests are in no batch
        assert cli(project, fake, monkeypatch, "--runs", "3", "--judge-batch", "collect") != 0
        out = capsys.readouterr()
        notices = [x for x in out.err.splitlines() if "held by no submitted batch" in x]
        assert notices == [
            "empath-gate: judge batch: 2 judge requests of 2 transcripts held by no submitted batch: the "
            "transcript or the judge settings changed since the submit (e.g. another --runs, suite, target "
            "or judge prompt), so they are judge failures (provider_error) in this run. Submit them: run "
            f"--judge-batch submit with this plan and state file {state_file} (it sends only the requests no "
            "batch holds), then collect again; or run without --judge-batch to judge them live"
        ], out.err
        assert "held by no submitted batch" not in out.out  # once, not per test

        # what it says to do: submit sends only those two, and the next collect judges everything
        assert cli(project, fake, monkeypatch, "--runs", "3", "--judge-batch", "submit") == 3
        assert re.search(r"judge batch \S+: submitted 2 judge requests", capsys.readouterr().err)
        assert cli(project, fake, monkeypatch, "--runs", "3", "--judge-batch", "collect") == 0
        assert "held by no submitted batch" not in capsys.readouterr().err
        assert live_judge_calls(fake) == 0


def test_judge_failures_beside_pending_transcripts_are_not_shown_as_judging_pending(project: Path) -> None:
    # collect with one run more than the submit: that run's judge requests are in no batch
    # (judge failures) while the batch still runs; waiting would never fix them
    thresholds = Path(__file__).resolve().parents[2] / "thresholds.yaml"
    text = thresholds.read_text(encoding="utf-8")
    text = text.replace("max_judge_failure_rate: 0.1", "max_judge_failure_rate: 1.0")
    assert "max_judge_failure_rate: 1.0" in text  # the failures stay under the suite's limit
    (project / "thresholds.yaml").write_text(text, encoding="utf-8")
    with FakeOpenAIServer() as fake:
        fake.on(JUDGE_MODEL, ScoringJudge(default=9, seeds=judge_seeds(project)))
        fake.batch_pending_polls = 10**6
        run(project, fake, "submit", thresholds=project / "thresholds.yaml")
        results, _ = run(project, fake, "collect", runs=RUNS + 1, thresholds=project / "thresholds.yaml")
    s = results.summary
    assert s.transcripts_pending and s.judge_failures and not s.infrastructure_reasons
    verdict = overall_verdict(results)
    assert verdict.status == "infrastructure_error", verdict
    assert summary_exit_code(s) == EXIT_INFRA
