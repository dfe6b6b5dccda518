"""The composite action's step logic, executed: every ``run:`` script of action.yml in bash with
the env it declares, a fake event, ``GITHUB_OUTPUT`` and ``GITHUB_STEP_SUMMARY`` (see
``action_runner``). A fork's pull request fails by default, succeeds only under the explicit
``fork-pr: skip`` (still ``passed=false``), and a same-repository pull request runs the suite
(a tiny team suite against the fake model server) and comments through the fake GitHub."""

from __future__ import annotations

import json
import os
import stat
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from action_runner import ActionRun, evaluate, read_outputs, run_action, should_run
from plugin_support import ENV_CLEARED, write_tiny_suite

from empath_gate.github.context import FORK_NOT_EVALUATED
from empath_gate.testing import FakeOpenAIServer
from empath_gate.testing.fake_github import FakeGitHubServer
from empath_gate.testing.scenarios import ScoringJudge, ScriptAuditor, TargetBot, install, role_env

ROOT = Path(__file__).resolve().parents[2]
ACTION = ROOT / "action.yml"
REPO = "acme/support-bot"
TOKEN = "ghs_fake_installation"
FINAL_STEP = "Exit with the gate's status"


def pull_request(head: str, number: int = 7) -> dict[str, Any]:
    return {
        "number": number,
        "pull_request": {
            "number": number,
            "head": {"repo": {"full_name": head}},
            "base": {"repo": {"full_name": REPO}},
        },
        "repository": {"full_name": REPO, "default_branch": "main"},
    }


FORK = pull_request("contributor/support-bot")
SAME_REPO = pull_request(REPO)


@pytest.fixture(scope="module")
def fake_models() -> Iterator[FakeOpenAIServer]:
    with FakeOpenAIServer() as server:
        install(server, target=TargetBot("safe"), auditor=ScriptAuditor(), judge=ScoringJudge(default=9))
        yield server


def shims(folder: Path) -> Path:
    """``python`` and ``empath-gate`` on PATH as the runner would have them after the install
    step: this interpreter, with the package under test first on ``sys.path``."""
    folder.mkdir(parents=True, exist_ok=True)
    for name, command in (("python", '"$@"'), ("empath-gate", '-m empath_gate.cli "$@"')):
        path = folder / name
        path.write_text(f'#!/bin/sh\nexec "{sys.executable}" {command}\n', encoding="utf-8")
        path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return folder


def act(
    tmp_path: Path,
    event: dict[str, Any],
    inputs: dict[str, str],
    github_api: FakeGitHubServer,
    extra_env: dict[str, str] | None = None,
) -> ActionRun:
    """Run action.yml for ``event`` with ``inputs`` in a fresh project folder."""
    project = tmp_path / "project"
    project.mkdir()
    write_tiny_suite(project)
    event_path = tmp_path / "event.json"
    event_path.write_text(json.dumps(event), encoding="utf-8")
    runner_temp = tmp_path / "runner-temp"
    runner_temp.mkdir()
    env = {k: v for k, v in os.environ.items() if k not in ENV_CLEARED and not k.startswith("GITHUB_")}
    env.update(
        {
            "PATH": f"{shims(tmp_path / 'bin')}{os.pathsep}{env.get('PATH', '/usr/bin:/bin')}",
            "PYTHONPATH": f"{ROOT}{os.pathsep}{project}",
            "HOME": str(tmp_path),
            "RUNNER_TEMP": str(runner_temp),
            "GITHUB_ACTIONS": "true",
            "GITHUB_API_URL": github_api.base_url,
            "GITHUB_SERVER_URL": "https://github.com",
            "GITHUB_REPOSITORY": REPO,
            "GITHUB_EVENT_NAME": "pull_request",
            "GITHUB_EVENT_PATH": str(event_path),
            "GITHUB_RUN_ID": "42",
            "EMPATH_SUITES_DIRS": str(project / "suites-team"),
            "EMPATH_CACHE_DIR": str(tmp_path / "cache"),
        }
    )
    env.update(extra_env or {})
    return run_action(
        ACTION,
        inputs=inputs,
        env=env,
        github={"token": TOKEN, "event": event, "repository": REPO},
        workdir=project,
    )


def ran(run: ActionRun) -> list[str]:
    return [s.name for s in run.steps if s.ran]


def test_a_fork_pull_request_fails_by_default(tmp_path: Path, fake_github: FakeGitHubServer) -> None:
    run = act(tmp_path, FORK, {"suite": "crisis"}, fake_github)
    assert run.failed, "a fork's pull request must never end green by default"
    final = run.last_run
    assert final.name == FINAL_STEP and final.exit_code != 0
    assert "Run the suite" not in ran(run) and "Resolve the baseline" not in ran(run)
    assert run.outputs["passed"] == "false" and run.outputs["verdict"] == "not_evaluated"
    assert run.outputs["exit-code"] == "" and run.outputs["results-path"] == ""
    assert f"{FORK_NOT_EVALUATED}." in run.summary
    assert "### ⚠️ empath-gate `crisis`: not evaluated" in run.summary
    assert "The job fails so that a required check never passes unevaluated" in run.summary
    skip = run.step("skip")
    assert "::error title=empath-gate crisis%3A not evaluated::" in skip.stdout
    assert "::warning" not in skip.stdout
    assert fake_github.requests == [], "nothing is posted from a fork's run"
    assert not (tmp_path / "project" / "empath-results").exists()


def test_skipping_a_fork_is_an_explicit_opt_in_and_still_not_a_pass(
    tmp_path: Path, fake_github: FakeGitHubServer
) -> None:
    run = act(tmp_path, FORK, {"suite": "crisis", "fork-pr": "skip"}, fake_github)
    assert not run.failed
    assert run.last_run.name == FINAL_STEP and run.last_run.exit_code == 0
    assert "Run the suite" not in ran(run)
    assert run.outputs["passed"] == "false", "'not evaluated' is never passed=true"
    assert run.outputs["verdict"] == "not_evaluated"
    assert "### ⚠️ empath-gate `crisis`: not evaluated" in run.summary
    assert "a required check on it passes although nothing was evaluated" in run.summary
    skip = run.step("skip")
    assert "::warning title=empath-gate crisis%3A not evaluated::" in skip.stdout
    assert "::error" not in skip.stdout
    assert fake_github.requests == []


@pytest.mark.parametrize("event", [SAME_REPO, FORK], ids=["same-repository", "fork"])
def test_a_misspelt_fork_policy_fails_every_run(
    tmp_path: Path, fake_github: FakeGitHubServer, event: dict[str, Any]
) -> None:
    run = act(tmp_path, event, {"suite": "crisis", "fork-pr": "skipp"}, fake_github)
    assert run.failed
    fork = run.step("fork")
    assert fork.exit_code == 2 and "action input 'fork-pr': 'skipp'" in fork.stderr
    assert ran(run) == ["Fork pull request?", FINAL_STEP]
    assert run.last_run.exit_code != 0
    assert run.outputs["passed"] != "true"


@pytest.mark.slow
def test_a_same_repository_pull_request_runs_the_suite_and_comments(
    tmp_path: Path, fake_github: FakeGitHubServer, fake_models: FakeOpenAIServer
) -> None:
    run = act(tmp_path, SAME_REPO, {"suite": "tiny"}, fake_github, role_env(fake_models))
    assert "skip" not in [s.id for s in run.steps if s.ran]
    assert {
        "Resolve the baseline",
        "Run the suite",
        "Job summary, outputs, annotations and the PR comment",
    } <= set(ran(run))
    assert not run.failed, run.log[-3000:]
    assert run.outputs["exit-code"] == "0" and run.last_run.exit_code == 0
    assert run.outputs["passed"] == "true" and run.outputs["verdict"] == "passed"
    assert run.outputs["results-path"] == "empath-results/results.json"
    assert run.summary.startswith("<!-- empath-gate:suite=tiny -->\n### ✅")
    comments = fake_github.comments(REPO, 7)
    assert len(comments) == 1 and comments[0]["body"].startswith("<!-- empath-gate:suite=tiny -->")
    results = tmp_path / "project" / "empath-results"
    assert (results / "results.json").is_file() and (results / "report.html").is_file()


def test_a_fork_under_fork_pr_run_goes_down_the_normal_path(
    tmp_path: Path, fake_github: FakeGitHubServer
) -> None:
    """``fork-pr: run`` runs the suite on a fork; a malformed input then stops it at the
    argument mapping (exit 4, pytest's usage error) before any model is called."""
    run = act(tmp_path, FORK, {"suite": "crisis", "fork-pr": "run", "runs": "0"}, fake_github)
    assert "skip" not in [s.id for s in run.steps if s.ran]
    assert {"Resolve the baseline", "Run the suite"} <= set(ran(run))
    assert "action input 'runs'" in run.step("run").stderr
    assert run.outputs["exit-code"] == "4"
    assert run.failed and run.last_run.name == FINAL_STEP and run.last_run.exit_code == 4
    assert run.outputs["passed"] == "" and run.outputs["verdict"] == ""
    assert "::error title=empath-gate::no empath-results/results.json" in run.log
    assert fake_github.requests == []


# ------------------------------------------------------------------ the runner itself


def test_the_runner_reads_the_expressions_the_action_uses() -> None:
    ctx = {
        "steps": {
            "fork": {"outputs": {"skip": "false"}},
            "publish": {"outputs": {}},
            "skip": {"outputs": {"passed": "false"}},
        },
        "inputs": {},
        "github": {},
    }
    assert should_run("steps.fork.outputs.skip == 'false'", ctx, job_failed=False)
    assert not should_run("steps.fork.outputs.skip == 'false'", ctx, job_failed=True), "implied success()"
    assert should_run("always() && steps.fork.outputs.skip == 'FALSE'", ctx, job_failed=True)
    assert not should_run("steps.fork.outputs.skip == 'true'", ctx, job_failed=False)
    assert evaluate("steps.publish.outputs.passed || steps.skip.outputs.passed", ctx) == "false"
    assert evaluate("steps.nope.outputs.x", ctx) is None
    with pytest.raises(ValueError, match="unsupported function"):
        evaluate("format()", ctx)
    with pytest.raises(ValueError):
        evaluate("contains(github.event, 'x')", ctx)
    assert read_outputs("a=1\nb<<EOF\nline 1\nline 2\nEOF\nc=x=y\n") == {
        "a": "1",
        "b": "line 1\nline 2",
        "c": "x=y",
    }
