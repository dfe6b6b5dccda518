"""The plugin's options, selection and states on a tiny team suite (three conversations, two
runs), mostly offline with a Python callable as the target (no model at all), run the way users
run pytest: through pytester, in this process unless a fresh interpreter is the point."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest
from plugin_support import environment, gate_env, program, read_json, write_bot, write_tiny_suite

from empath_gate.testing import FakeOpenAIServer
from empath_gate.testing.scenarios import ScoringJudge

pytest_plugins = ["pytester"]
pytestmark = [
    pytest.mark.filterwarnings("ignore:Item.* using the .ReadOnly. qualifier:UserWarning"),
    # the fake auditor and judge are both "openai/..." models: the hygiene warning is expected
    pytest.mark.filterwarnings("ignore::empath_gate.judging.llm_judge.JudgeHygieneWarning"),
]

DETECT = "cs-detect-mx-dormir-no-despertar-mx-lupita-estudiante-unam-crisis_detection"
RESOURCE = "cs-resource-us-dv-borrowed-phone-us-tanya-server-las-vegas-crisis_resource_provision"
ACTIONS = "tq-mx-entrevista-nervios-mx-beto-deportado-zacatecas-therapeutic_actions"
TINY = ("--empath-suite", "tiny", "--empath-suites-dir", "suites-team")
OFFLINE = (*TINY, "--empath-offline")


@pytest.fixture()
def project(pytester: pytest.Pytester) -> pytest.Pytester:
    """A project with its own test, the tiny team suite and two callable bots."""
    write_tiny_suite(pytester.path)
    write_bot(pytester.path, "safe", "bot_safe")
    write_bot(pytester.path, "unsafe", "bot_unsafe")
    pytester.makepyfile(test_mine="def test_mine():\n    assert 1 + 1 == 2\n")
    pytester.syspathinsert()
    return pytester


def offline(pytester: pytest.Pytester, bot: str, *args: str) -> pytest.RunResult:
    """An offline run (scripted auditor, criteria-only judge) of the tiny suite on ``bot``."""
    with environment({"EMPATH_TARGET": f"py:{bot}:reply"}):
        return pytester.runpytest(*OFFLINE, "-rfEsxX", *args)


def text(result: pytest.RunResult) -> str:
    return "\n".join(result.outlines + result.errlines)


# --------------------------------------------------------------------------- without / with a suite


def test_without_a_suite_the_plugin_adds_nothing_and_imports_nothing_heavy(project: pytest.Pytester) -> None:
    project.makeconftest(
        """
        import sys

        def pytest_terminal_summary(terminalreporter):
            heavy = [m for m in ("litellm", "empath_gate.run", "empath_gate.instrument.loader",
                                 "empath_gate.llm.client") if m in sys.modules]
            terminalreporter.write_line(f"HEAVY-MODULES {heavy}")
        """
    )
    with environment({}):
        result = project.runpytest_subprocess()
    assert result.ret == 0
    result.assert_outcomes(passed=1)
    out = text(result)
    assert "HEAVY-MODULES []" in out
    assert "empath/" not in out
    assert not [line for line in result.outlines if line.startswith("empath-gate")]


def test_a_suite_without_paths_runs_only_its_items_and_with_a_path_both(project: pytest.Pytester) -> None:
    result = offline(project, "bot_safe")
    result.assert_outcomes(skipped=3)  # offline, nothing failed a critical check: skipped, never passed
    assert "test_mine" not in text(result)
    both = offline(project, "bot_safe", "test_mine.py")
    both.assert_outcomes(passed=1, skipped=3)


# --------------------------------------------------------------------------- offline: criteria only


def test_offline_critical_fail_fails_and_the_rest_is_skipped_never_passed(project: pytest.Pytester) -> None:
    result = offline(project, "bot_unsafe")
    assert result.ret == 1
    result.assert_outcomes(failed=1, skipped=2)
    out = text(result)
    assert f"FAILED empath/tiny/{RESOURCE.rsplit('-', 1)[0]}::{RESOURCE}" in out
    assert "crisis_resource_provision: a critical criterion FAILED in run(s) 0, 1" in out
    assert "crisis_detection: needs a judge model for a score" in out
    assert "therapeutic_actions: needs a judge model for a score" in out
    assert "a judge model is needed" in out  # the header and the summary say so plainly
    doc = read_json(project.path / "empath-results" / "results.json")
    assert doc["metadata"]["offline_roles"] == ["auditor", "judge"]
    assert "passed" not in {d["status"] for d in doc["decisions"]}
    assert set(doc["summary"]["criteria_only_metrics"]) >= {"crisis_detection", "therapeutic_actions"}


# --------------------------------------------------------------------------- waivers


def test_a_waiver_turns_the_failure_into_xfail_with_its_reason(project: pytest.Pytester) -> None:
    project.path.joinpath("team-waivers.yaml").write_text(
        "waivers:\n"
        "  - metric: crisis_resource_provision\n"
        "    seed: cs-resource-us-dv-borrowed-phone\n"
        "    reason: resource card ships in release 2.4\n"
        "    owner: safety-team\n"
        "    expires: 2099-12-31\n",
        encoding="utf-8",
    )
    result = offline(project, "bot_unsafe", "--empath-waivers", "team-waivers.yaml")
    assert result.ret == 0
    result.assert_outcomes(xfailed=1, skipped=2)
    reason = "waived: resource card ships in release 2.4 (owner safety-team, expires 2099-12-31)"
    assert reason in text(result)
    doc = read_json(project.path / "empath-results" / "results.json")
    assert [w["owner"] for w in doc["waivers"]] == ["safety-team"]


def test_an_expired_waiver_is_a_usage_error_naming_the_file(project: pytest.Pytester) -> None:
    project.path.joinpath("waivers.yaml").write_text(
        "waivers:\n"
        "  - metric: crisis_resource_provision\n"
        "    reason: resource card ships in release 2.4\n"
        "    owner: safety-team\n"
        "    expires: 2020-01-31\n",
        encoding="utf-8",
    )
    result = offline(project, "bot_unsafe")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    out = text(result)
    assert "waivers.yaml" in out and "2020-01-31" in out


# --------------------------------------------------------------------------- bad options, CI


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("--empath-runs", "zero"), "--empath-runs: 'zero' is not an integer; fix the value of 'runs'"),
        (("--empath-runs", "0"), "--empath-runs: Input should be greater than or equal to 1"),
        (("--empath-fail-on", "maybe"), "--empath-fail-on: Input should be 'threshold', 'regression'"),
        (("--empath-shard", "3/2"), "shard '3/2': K must be between 1 and N"),
        (("--empath-shard", "half"), "shard 'half' is not of the form K/N"),
        (("--empath-max-cost", "-5"), "--empath-max-cost: Input should be greater than 0"),
    ],
)
def test_a_bad_option_value_exits_4_saying_what_to_fix(
    project: pytest.Pytester, args: tuple[str, str], message: str
) -> None:
    result = offline(project, "bot_safe", *args)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert message in text(result)


def test_an_unknown_suite_exits_4_with_a_suggestion(project: pytest.Pytester) -> None:
    with environment({"EMPATH_TARGET": "py:bot_safe:reply"}):
        result = project.runpytest("--empath-suite", "smok", "--empath-offline")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert "unknown suite 'smok' — did you mean 'smoke'?" in text(result)


def test_ci_without_auditor_and_judge_models_exits_4_unless_offline(project: pytest.Pytester) -> None:
    with environment({"CI": "true", "EMPATH_TARGET": "py:bot_safe:reply"}):
        refused = project.runpytest(*TINY)
        allowed = project.runpytest(*TINY, "--empath-offline")
    assert refused.ret == pytest.ExitCode.USAGE_ERROR
    assert ("CI=true but no model is configured for: auditor (--empath-auditor / EMPATH_AUDITOR_MODEL), "
            "judge (--empath-judge / EMPATH_JUDGE_MODEL)") in text(refused)
    assert allowed.ret == 0
    allowed.assert_outcomes(skipped=3)


# --------------------------------------------------------------------------- selection


def test_k_and_markers_select_items(project: pytest.Pytester) -> None:
    by_k = offline(project, "bot_unsafe", "-k", "crisis_resource_provision")
    by_k.assert_outcomes(failed=1, deselected=2)
    critical = offline(project, "bot_unsafe", "-m", "critical")
    critical.assert_outcomes(failed=1, skipped=1, deselected=1)
    spanish = offline(project, "bot_unsafe", "-m", "es_mx")
    spanish.assert_outcomes(skipped=2, deselected=1)
    not_crisis = offline(project, "bot_unsafe", "-m", "empath and not crisis_safety")
    not_crisis.assert_outcomes(skipped=1, deselected=2)
    # a deselected conversation is not generated, decided or counted (never an error)
    doc = read_json(project.path / "empath-results" / "results.json")
    assert {r["seed_id"] for r in doc["records"]} == {"tq-mx-entrevista-nervios"}
    assert [d["metric_id"] for d in doc["decisions"]] == ["therapeutic_actions"]
    assert doc["summary"]["counts"]["error"] == 0
    assert "tests: 0 passed, 0 failed, 0 waived, 1 skipped, 0 errors" in text(not_crisis)


def test_last_failed_reruns_only_the_failed_item(project: pytest.Pytester) -> None:
    first = offline(project, "bot_unsafe")
    first.assert_outcomes(failed=1, skipped=2)
    again = offline(project, "bot_unsafe", "--lf")
    again.assert_outcomes(failed=1, deselected=2)
    assert "run-last-failure: rerun previous 1 failure" in text(again)
    assert "collected 3 items / 2 deselected / 1 selected" in text(again)
    assert "tests: 0 passed, 1 failed, 0 waived, 0 skipped, 0 errors" in text(again)


# --------------------------------------------------------------------------- infrastructure


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
    return port


def test_an_unreachable_provider_makes_the_tests_incomplete(
    project: pytest.Pytester, fake: FakeOpenAIServer, tmp_path: Path
) -> None:
    program(fake, judge=ScoringJudge())
    env = gate_env(fake, tmp_path / "cache", target=f"http://127.0.0.1:{_closed_port()}/v1")
    # the fake is the session's: earlier tests' target requests are in its log
    target_requests = len(fake.requests_for("empath-target"))
    with environment(env):
        result = project.runpytest(*TINY, "--empath-no-cache")
    assert result.ret == 1
    # transcripts that never got a reply are no evidence: the tests are incomplete, a failure
    # under pytest; the suite check tiny::judge_failure_rate is skipped (no verdict to rate)
    result.assert_outcomes(failed=3, skipped=1)
    out = text(result)
    assert "incomplete: crisis_detection: run 0 transcript stopped: error: target" in out
    assert "Connection error" in out
    assert "INFRASTRUCTURE ERROR" in out
    assert len(fake.requests_for("empath-target")) == target_requests  # none reached the fake


def test_runs_below_min_judged_runs_warn_once_and_a_lost_run_is_incomplete_not_failed(
    project: pytest.Pytester, fake: FakeOpenAIServer, tmp_path: Path
) -> None:
    program(fake, judge=ScoringJudge())
    env = gate_env(fake, tmp_path / "cache", target=f"http://127.0.0.1:{_closed_port()}/v1")
    warning = ("empath-gate: warning: runs 1 is below min_judged_runs 2 of metrics crisis_detection, "
               "crisis_resource_provision, therapeutic_actions: their tests cannot pass; "
               "use --empath-runs 2 or more")
    with environment(env):
        header = project.runpytest(*TINY, "--empath-runs", "1", "--collect-only")  # in the header
        result = project.runpytest(*TINY, "--empath-runs", "1", "--empath-no-cache", "-q")  # no header
    assert header.ret == 0 and text(header).count(warning) == 1, text(header)
    out = text(result)
    assert out.count(warning) == 1, out
    # the one run of each test never got a reply: incomplete, never failed on min_judged_runs
    assert result.ret == 1
    result.assert_outcomes(failed=3, skipped=1)
    assert "incomplete: crisis_detection: run 0 transcript stopped: error: target" in out
    assert "judged runs 0 < min_judged_runs" not in out
