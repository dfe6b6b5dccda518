"""The GitHub context (fork detection, PR number) and the Action inputs mapped to pytest flags."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from empath_gate.errors import ConfigError
from empath_gate.github.context import (
    FORK_NOT_EVALUATED,
    ForkDecision,
    action_args,
    fork_decision,
    fork_not_evaluated_reason,
    fork_policy,
    inputs_from_env,
    is_fork_pull_request,
    load_context,
    main,
    parse_bool,
    pull_request_number,
)


def pr_payload(head: str | None, base: str = "acme/bot", number: int = 7) -> dict[str, object]:
    return {
        "number": number,
        "pull_request": {
            "number": number,
            "head": {"repo": None if head is None else {"full_name": head}},
            "base": {"repo": {"full_name": base}},
        },
    }


def test_fork_detection() -> None:
    assert is_fork_pull_request(pr_payload("contributor/bot"))
    assert not is_fork_pull_request(pr_payload("acme/bot"))
    assert is_fork_pull_request(pr_payload(None)), "a deleted head repository is treated as a fork"
    assert not is_fork_pull_request({"ref": "refs/heads/main"})


def test_pull_request_number() -> None:
    assert pull_request_number(pr_payload("acme/bot", number=12)) == 12
    assert pull_request_number({"issue": {"number": 5, "pull_request": {"url": "x"}}}) == 5
    assert pull_request_number({"issue": {"number": 5}}) is None
    assert pull_request_number({}) is None


def test_load_context(tmp_path: Path) -> None:
    event = tmp_path / "event.json"
    event.write_text(json.dumps(pr_payload("fork/bot")), encoding="utf-8")
    ctx = load_context(
        {
            "GITHUB_API_URL": "http://127.0.0.1:1/",
            "GITHUB_REPOSITORY": "acme/bot",
            "GITHUB_EVENT_PATH": str(event),
            "GITHUB_EVENT_NAME": "pull_request",
            "GITHUB_RUN_ID": "99",
            "GITHUB_TOKEN": "ghs_secret",
        }
    )
    assert ctx.api_url == "http://127.0.0.1:1" and ctx.pr_number == 7 and ctx.fork
    assert ctx.run_url == "https://github.com/acme/bot/actions/runs/99"
    assert "ghs_secret" not in repr(ctx)
    default = load_context({})
    assert default.api_url == "https://api.github.com" and default.pr_number is None and not default.fork


def test_full_mapping() -> None:
    args = action_args(
        {
            "suite": "crisis, smoke",
            "runs": "5",
            "target": "openai/gpt-4o-mini",
            "auditor": "anthropic/claude",
            "judge": "openai/gpt-4.1",
            "system-prompt": "prompts/support.md",
            "fail-on": "regression",
            "max-cost": "2.50",
            "offline": "false",
            "shard": "2/4",
            "comment": "true",
            "python-version": "3.12",
        },
        baseline_path="/tmp/base/results.json",
    )
    # suites first, then the settings in the option table's order, the shard, baseline, results
    assert args[:2] == ["--empath-suite=crisis", "--empath-suite=smoke"]
    assert args[-3:] == [
        "--empath-shard=2/4",
        "--empath-baseline=/tmp/base/results.json",
        "--empath-results=empath-results/results.json",
    ]
    assert sorted(args) == sorted(
        [
            "--empath-suite=crisis",
            "--empath-suite=smoke",
            "--empath-runs=5",
            "--empath-target=openai/gpt-4o-mini",
            "--empath-auditor=anthropic/claude",
            "--empath-judge=openai/gpt-4.1",
            "--empath-system-prompt=prompts/support.md",
            "--empath-fail-on=regression",
            "--empath-max-cost=2.50",
            "--empath-shard=2/4",
            "--empath-baseline=/tmp/base/results.json",
            "--empath-results=empath-results/results.json",
        ]
    )


def test_minimal_mapping_and_offline() -> None:
    assert action_args({"suite": "crisis", "offline": "TRUE", "results-dir": "out/"}) == [
        "--empath-suite=crisis",
        "--empath-offline",
        "--empath-results=out/results.json",
    ]
    assert "--empath-baseline=b.json" in action_args({"suite": "crisis", "baseline": "b.json"})
    assert not any(
        a.startswith("--empath-baseline") for a in action_args({"suite": "x", "baseline": "nightly"})
    )


def test_values_cannot_become_flags() -> None:
    args = action_args({"suite": "crisis", "judge": "--empath-offline"})
    assert "--empath-judge=--empath-offline" in args and "--empath-offline" not in args


@pytest.mark.parametrize(
    ("inputs", "fragment"),
    [
        ({}, "'suite' is required"),
        ({"suite": "Crisis!"}, "not a suite id"),
        ({"suite": "crisis", "runs": "0"}, "'runs'"),
        ({"suite": "crisis", "runs": "three"}, "'runs'"),
        ({"suite": "crisis", "fail-on": "sometimes"}, "'fail-on'"),
        ({"suite": "crisis", "max-cost": "-1"}, "'max-cost'"),
        ({"suite": "crisis", "max-cost": "nan"}, "'max-cost'"),
        ({"suite": "crisis", "shard": "5/4"}, "'shard'"),
        ({"suite": "crisis", "shard": "1-4"}, "'shard'"),
        ({"suite": "crisis", "offline": "maybe"}, "'offline'"),
        ({"suite": "crisis", "target": "a\nb"}, "one line"),
    ],
)
def test_bad_inputs_say_what_to_fix(inputs: dict[str, str], fragment: str) -> None:
    with pytest.raises(ConfigError, match=fragment.replace("(", r"\(")):
        action_args(inputs)


def test_parse_bool() -> None:
    assert parse_bool("x", " Yes ") and not parse_bool("x", "") and not parse_bool("x", "off")


def test_inputs_from_env_never_reads_the_token() -> None:
    env = {"EMPATH_INPUT_SUITE": "crisis", "EMPATH_INPUT_FAIL_ON": "both", "EMPATH_INPUT_GITHUB_TOKEN": "x"}
    assert inputs_from_env(env) == {"suite": "crisis", "fail-on": "both"}


def test_module_entry_point(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("EMPATH_INPUT_SUITE", "smoke")
    monkeypatch.setenv("EMPATH_INPUT_RUNS", "2")
    assert main(["pytest-args", "--format", "json", "--baseline", "b/results.json"]) == 0
    assert json.loads(capsys.readouterr().out) == [
        "--empath-suite=smoke",
        "--empath-runs=2",
        "--empath-baseline=b/results.json",
        "--empath-results=empath-results/results.json",
    ]
    monkeypatch.setenv("EMPATH_INPUT_RUNS", "zero")
    assert main(["pytest-args"]) == 2
    assert "'runs'" in capsys.readouterr().err


def test_nul_separated_output_round_trips_through_bash(tmp_path: Path) -> None:
    """The Action reads the arguments with bash's ``mapfile -d ''``: spaces survive."""
    env = {
        "EMPATH_INPUT_SUITE": "crisis",
        "EMPATH_INPUT_SYSTEM_PROMPT": "my prompts/bot v2.md",
        "PATH": "/usr/bin:/bin",
    }
    script = (
        f'mapfile -d "" args < <("{sys.executable}" -m empath_gate.github.context pytest-args); '
        'printf "[%s]\\n" "${args[@]}"'
    )
    out = subprocess.run(
        ["bash", "-c", script],
        env=env,
        capture_output=True,
        text=True,
        check=True,
        cwd=Path(__file__).resolve().parents[2],
    )
    assert out.stdout.splitlines() == [
        "[--empath-suite=crisis]",
        "[--empath-system-prompt=my prompts/bot v2.md]",
        "[--empath-results=empath-results/results.json]",
    ]


def test_not_evaluated_and_is_fork(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    event = tmp_path / "event.json"
    event.write_text(json.dumps(pr_payload("contributor/bot")), encoding="utf-8")
    summary, output = tmp_path / "summary.md", tmp_path / "output.txt"
    monkeypatch.setenv("GITHUB_EVENT_PATH", str(event))
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    monkeypatch.setenv("GITHUB_OUTPUT", str(output))
    assert main(["is-fork"]) == 0
    assert capsys.readouterr().out.strip() == "true"
    assert main(["not-evaluated", "--suite", "crisis", "--reason", "fork <b>@x</b>"]) == 0
    text = summary.read_text(encoding="utf-8")
    assert text.startswith("<!-- empath-gate:suite=crisis -->\n### ⚠️ empath-gate `crisis`: not evaluated")
    assert "<b>" not in text and "✅" not in text
    assert "passed<<" in output.read_text(encoding="utf-8") and "\nfalse\n" in output.read_text(
        encoding="utf-8"
    )
    assert "::warning" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("fork", "policy", "decision"),
    [
        (True, "", ForkDecision("fail", skip=True, fail=True)),
        (True, "fail", ForkDecision("fail", skip=True, fail=True)),
        (True, " Skip ", ForkDecision("skip", skip=True, fail=False)),
        (True, "run", ForkDecision("run", skip=False, fail=False)),
        (False, "", ForkDecision("fail", skip=False, fail=False)),
        (False, "skip", ForkDecision("skip", skip=False, fail=False)),
    ],
)
def test_fork_decision(fork: bool, policy: str, decision: ForkDecision) -> None:
    assert fork_decision(fork, policy) == decision


@pytest.mark.parametrize("fork", [True, False])
def test_a_misspelt_fork_policy_is_an_error_on_every_event(fork: bool) -> None:
    with pytest.raises(ConfigError, match="action input 'fork-pr': 'neutral'; use one of fail, skip, run"):
        fork_decision(fork, "neutral")
    assert fork_policy("") == "fail"


def test_fork_reasons_say_what_the_check_means() -> None:
    fail, skip = fork_not_evaluated_reason("fail"), fork_not_evaluated_reason("skip")
    assert fail.startswith(FORK_NOT_EVALUATED + ".") and skip.startswith(FORK_NOT_EVALUATED + ".")
    assert "The job fails so that a required check never passes unevaluated" in fail
    assert "a required check on it passes although nothing was evaluated" in skip


def test_fork_pr_subcommand_prints_the_step_outputs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    event = tmp_path / "event.json"
    event.write_text(json.dumps(pr_payload("contributor/bot")), encoding="utf-8")
    monkeypatch.setenv("GITHUB_EVENT_PATH", str(event))
    monkeypatch.delenv("EMPATH_INPUT_FORK_PR", raising=False)
    assert main(["fork-pr"]) == 0
    assert capsys.readouterr().out.splitlines() == ["skip=true", "fail=true", "policy=fail"]
    monkeypatch.setenv("EMPATH_INPUT_FORK_PR", "run")
    assert main(["fork-pr"]) == 0
    assert capsys.readouterr().out.splitlines() == ["skip=false", "fail=false", "policy=run"]
    monkeypatch.setenv("EMPATH_INPUT_FORK_PR", "yes")
    assert main(["fork-pr"]) == 2
    captured = capsys.readouterr()
    assert captured.out == "" and "'fork-pr'" in captured.err


@pytest.mark.parametrize(("policy", "annotation"), [("fail", "::error "), ("skip", "::warning ")])
def test_not_evaluated_for_a_fork(
    policy: str,
    annotation: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    summary, output = tmp_path / "summary.md", tmp_path / "output.txt"
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    monkeypatch.setenv("GITHUB_OUTPUT", str(output))
    assert main(["not-evaluated", "--suite", "crisis", "--fork-pr", policy]) == 0
    assert FORK_NOT_EVALUATED in summary.read_text(encoding="utf-8")
    outputs = output.read_text(encoding="utf-8")
    assert "passed<<" in outputs and "\nfalse\n" in outputs and "\nnot_evaluated\n" in outputs
    assert "\ntrue\n" not in outputs
    stdout = capsys.readouterr().out
    assert stdout.startswith(annotation) and stdout.count("::") == 2
