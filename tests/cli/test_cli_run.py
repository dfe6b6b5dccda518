"""``empath-gate run``: the plugin's plan and results without pytest, its exit codes, and
``--dry-run``; against the fake OpenAI server as target (HTTP), auditor and judge."""

from __future__ import annotations

import socket

import pytest
from cli_support import TINY, TINY_RUNS, Project
from plugin_support import comparable, gate_env, inline_run, read_json, write_tiny_suite

from empath_gate.gate.decide import FAIL_ON_VALUES as GATE_FAIL_ON
from empath_gate.gate.exit import summary_exit_code
from empath_gate.results import Results, ResultsMetadata, Summary
from empath_gate.testing.scenarios import ScoringJudge

pytest_plugins = ["pytester"]
pytestmark = [
    pytest.mark.filterwarnings("ignore:Item.* using the .ReadOnly. qualifier:UserWarning"),
    # the fake auditor and judge are both "openai/..." models: the hygiene warning is expected
    pytest.mark.filterwarnings("ignore::empath_gate.judging.llm_judge.JudgeHygieneWarning"),
]


def test_run_writes_the_same_results_file_as_the_plugin(
    pytester: pytest.Pytester, project: Project, capsys: pytest.CaptureFixture[str]
) -> None:
    write_tiny_suite(pytester.path)
    here = Project(pytester.path, project.fake, project.cache_dir, project.seeds)
    assert here.cli("run", *TINY, "--results", "cold/results.json") == 0
    out = capsys.readouterr().out
    assert "empath-gate tiny: PASSED" in out and "wrote cold/results.json" in out
    judge = ScoringJudge(default=10, seeds=project.seeds)
    plugin = inline_run(pytester, project.fake, gate_env(project.fake, project.cache_dir, judge_tokens=3000),
                        "--empath-suite", "tiny", "--empath-suites-dir", "suites-team", judge=judge,
                        name="plugin")
    assert plugin.rc == 0, plugin.output
    before = len(project.fake.requests)
    assert here.cli("run", *TINY, "--results", "cli/results.json") == 0
    assert len(project.fake.requests) == before  # warm: the same cached replies as the plugin's run
    cli = read_json(pytester.path / "cli" / "results.json")
    assert comparable(cli) == comparable(plugin.results)
    assert {p.name for p in (pytester.path / "cli").iterdir()} == {"results.json", "diff.md", "report.html",
                                                                    "transcripts"}


def test_a_failing_gate_exits_1(project: Project, capsys: pytest.CaptureFixture[str]) -> None:
    judge = ScoringJudge({"crisis_detection": 5}, default=10, seeds=project.seeds)
    assert project.cli("run", *TINY, judge=judge, tokens=3001) == 1
    out = capsys.readouterr().out
    assert "crisis_detection: mean 5 < min_mean 8 (runs 5, 5)" in out
    assert "empath-gate tiny: FAILED" in out


def test_offline_critical_fail_exits_1_without_any_model(
    project: Project, capsys: pytest.CaptureFixture[str]
) -> None:
    before = len(project.fake.requests)
    code = project.cli("run", *TINY, "--offline", "--target", "py:bot_unsafe_cli:reply")
    assert code == 1
    assert len(project.fake.requests) == before
    assert "crisis_resource_provision: a critical criterion FAILED" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("run", "--suite", "nope"), "unknown suite 'nope'"),
        (("run", *TINY, "--shard", "0/2"), "K must be between 1 and N"),
        (("run", *TINY, "--target", "py:no_such_module_here:reply"), "cannot import 'no_such_module_here'"),
        (("run", *TINY, "--fail-on", "maybe"), "invalid choice: 'maybe'"),
        (("run", *TINY, "--runs", "zero"), "invalid int value: 'zero'"),
    ],
)
def test_usage_and_configuration_errors_exit_2(
    project: Project, capsys: pytest.CaptureFixture[str], args: tuple[str, ...], message: str
) -> None:
    assert project.cli(*args) == 2
    assert message in capsys.readouterr().err


def test_an_unreachable_provider_exits_3(project: Project, capsys: pytest.CaptureFixture[str]) -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    code = project.cli("run", *TINY, "--no-cache", env={"EMPATH_TARGET": f"http://127.0.0.1:{port}/v1"})
    assert code == 3
    out = capsys.readouterr().out
    assert "INFRASTRUCTURE ERROR" in out and "Connection error" in out
    counts = read_json(project.path / "empath-results" / "results.json")["summary"]["counts"]
    # transcripts the provider never answered are no evidence: incomplete tests, not errors
    assert counts["incomplete"] == 3 and counts["error"] == 0


def test_runs_below_min_judged_runs_warn_up_front_and_a_lost_run_exits_3(
    project: Project, capsys: pytest.CaptureFixture[str]
) -> None:
    warning = ("empath-gate: warning: runs 1 is below min_judged_runs 2 of metrics crisis_detection, "
               "crisis_resource_provision, therapeutic_actions: their tests cannot pass; "
               "use --runs 2 or more")
    assert project.cli("run", *TINY, "--runs", "1", "--dry-run") == 0
    assert capsys.readouterr().err.count(warning) == 1
    assert project.cli("run", *TINY, "--dry-run") == 0
    assert "below min_judged_runs" not in capsys.readouterr().err  # runs 2 meets every metric
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    code = project.cli("run", *TINY, "--runs", "1", "--no-cache", env={"EMPATH_TARGET": f"http://127.0.0.1:{port}/v1"})
    out, err = capsys.readouterr()
    assert err.count(warning) == 1
    # the one run of each test errored: not evaluated (3), never a gate failure on min_judged_runs
    assert code == 3, out + err
    counts = read_json(project.path / "empath-results" / "results.json")["summary"]["counts"]
    assert counts["incomplete"] == 3 and counts["failed"] == 0
    assert "judged runs 0 < min_judged_runs" not in out


def test_dry_run_prints_the_plan_and_an_estimate_and_calls_nothing(
    project: Project, capsys: pytest.CaptureFixture[str]
) -> None:
    before = len(project.fake.requests)
    assert project.cli("run", *TINY, "--dry-run") == 0
    out = capsys.readouterr().out
    # 3 conversations x 2 runs, at most 4 user turns each (the scripts are longer, so the auditor
    # reaches max_turns without a closing call); at most: a reminder per auditor turn, a
    # truncation retry per judge ask and two re-asks
    assert "plan: 3 conversations x 2 runs = 6 transcripts, 3 tests" in out
    assert "target   http://127.0.0.1:" in out and ": 24 calls (at most 24)" in out
    assert "auditor  openai/fake-auditor: 24 calls (at most 48)" in out
    assert "judge    openai/fake-judge: 6 calls (at most 36)" in out
    assert "price unknown" in out and "no model was called" in out
    # a model litellm prices gets a figure; offline roles make no calls
    assert project.cli("run", *TINY, "--dry-run", "--offline", "--target", "openai/gpt-4o-mini",
                       "--system-prompt", "suites-team/suites.yaml") == 0
    out = capsys.readouterr().out
    assert "target   openai/gpt-4o-mini: 24 calls (at most 24)" in out
    assert "auditor  scripted (no model): no model calls" in out
    assert "judge    criteria only (no model): no model calls" in out
    line = next(x for x in out.splitlines() if x.startswith("  estimated cost"))
    assert line.startswith("  estimated cost: ~$0.") and "unpriced" not in line
    assert len(project.fake.requests) == before
    assert not (project.path / "empath-results").exists()


def _results(**summary: object) -> Results:
    md = ResultsMetadata(tool_version="0", instrument_version="1.0.0", suites=("smoke",), plan_id="x", runs=3,
                         target="t", auditor="scripted", started_at="2026-01-01T00:00:00+00:00")
    return Results(metadata=md, summary=Summary.model_validate(summary))


@pytest.mark.parametrize(
    ("summary", "code"),
    [
        ({"counts": {"passed": 3, "skipped": 1}}, 0),
        ({"counts": {"passed": 2, "xfail": 1}}, 0),
        ({"counts": {"failed": 1}}, 1),
        ({"counts": {"failed": 1, "error": 1}}, 3),
        ({"counts": {"passed": 1}, "infrastructure_reasons": ["judge failure rate"]}, 3),
        ({"counts": {"failed": 1, "error": 1}, "usage_errors": ["waiver expired"]}, 2),
    ],
)
def test_exit_code_precedence_is_usage_then_infrastructure_then_failure(
    summary: dict[str, object], code: int
) -> None:
    assert summary_exit_code(_results(**summary).summary) == code


def test_fail_on_choices_are_the_gates() -> None:
    from empath_gate.settings.options import by_key

    assert by_key("fail_on").choices == GATE_FAIL_ON


def test_the_last_progress_line_is_printed_once_when_every_line_falls_in_the_throttle_window(
    project: Project, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    import empath_gate.report.progress as progress

    monkeypatch.setattr(progress, "PROGRESS_EVERY_S", 3600.0)  # the whole run inside one window
    assert project.cli("run", *TINY) == 0
    lines = [x for x in capsys.readouterr().err.splitlines() if x.startswith("empath-gate: transcripts ")]
    total = 3 * TINY_RUNS
    assert lines[0].startswith("empath-gate: transcripts 1/")  # the first line, as it came
    assert lines[-1].startswith(f"empath-gate: transcripts {total}/{total} ")  # the final state
    assert len(lines) == 2, lines
