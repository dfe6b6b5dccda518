"""Batch judging through the front-ends: ``pytest --empath-judge-batch submit`` skips every test as
pending (never passed) and writes the state file; ``empath-gate run --judge-batch collect`` on an
unfinished batch says so and exits incomplete (3); once completed, ``pytest --empath-judge-batch
collect`` passes with no live judge call. A judge-batch setting that cannot work (collect without
or with an unreadable state file, the cache off) is a usage error before any transcript: pytest
exits 4 with the message once, the CLI 2."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from plugin_support import ENV_CLEARED, gate_env, plan_seeds, run_pytest, write_bot, write_tiny_suite

from empath_gate.testing import FakeOpenAIServer
from empath_gate.testing.scenarios import JUDGE_MODEL, ScoringJudge, TargetBot, install

ROOT = Path(__file__).resolve().parents[2]
WIDE_THROTTLE = "import empath_gate.report.progress as p\n\np.PROGRESS_EVERY_S = 3600.0\n"
"""A project conftest that puts the whole run inside one progress throttle window."""


def _live_judge_calls(fake: FakeOpenAIServer) -> int:
    return sum(1 for r in fake.requests if r.model == JUDGE_MODEL and r.headers)


def test_submit_skips_as_pending_and_collect_gates(tmp_path: Path) -> None:
    team = write_tiny_suite(tmp_path)
    target = write_bot(tmp_path)
    seeds = plan_seeds("tiny", 2, (team,))
    with FakeOpenAIServer(strict=False) as fake:
        install(fake, target=TargetBot("safe"), judge=ScoringJudge(default=10, seeds=seeds))
        env = gate_env(fake, tmp_path / "cache", target=target, auditor=False)
        env.update(EMPATH_SUITES_DIRS=str(team), EMPATH_TARGET_VERSION="1")
        # the batch's status lines come within the throttle window of a progress line: still shown
        (tmp_path / "conftest.py").write_text(WIDE_THROTTLE, encoding="utf-8")
        env["PYTHONPATH"] = os.pathsep.join([str(tmp_path), str(ROOT)])
        args = ["--empath-suite", "tiny", "-rs"]
        code, out = run_pytest(tmp_path, [*args, "--empath-judge-batch", "submit"], env)
        assert code == 0, out[-3000:]
        assert re.search(r"empath-gate: judge batch \S+: submitted 6 judge requests \(state file ", out), out
        assert "pending: judging submitted in a judge batch" in out
        assert re.search(r"= 4 skipped in ", out), out[-1500:]  # 3 tests and the suite check: none passed
        assert (tmp_path / "empath-results" / "judge-batch.json").is_file()
        assert _live_judge_calls(fake) == 0

        fake.batch_pending_polls = 10**6
        full = {k: v for k, v in os.environ.items() if k not in ENV_CLEARED}
        full.update(env)
        cli = subprocess.run(
            [sys.executable, "-m", "empath_gate.cli", "run", "--suite", "tiny", "--judge-batch", "collect"],
            cwd=tmp_path, env=full, capture_output=True, text=True, timeout=300, check=False,
        )
        assert cli.returncode == 3, cli.stdout[-2000:] + cli.stderr[-2000:]
        assert "not finished; its transcripts stay pending" in cli.stdout + cli.stderr

        fake.batch_pending_polls = 0
        code, out = run_pytest(tmp_path, [*args, "--empath-judge-batch", "collect"], env)
        assert code == 0, out[-3000:]
        assert re.search(r"empath-gate: judge batch \S+: completed, 6 results", out), out
        assert re.search(r"= 4 passed in ", out), out[-1500:]
        assert _live_judge_calls(fake) == 0


CONFIG_CASES = {
    "missing": (["--judge-batch-state", "nope/state.json"],
                "nope/state.json: no judge-batch state file to collect"),
    "corrupt": (["--judge-batch-state", "corrupt.json"],
                "corrupt.json: cannot read the judge-batch state file"),
    "no-cache": (["--no-cache"], "--judge-batch needs the model cache"),
}
"""CLI options of a judge-batch collect that cannot work, and the message that says so."""


def _project(tmp_path: Path, fake: FakeOpenAIServer) -> dict[str, str]:
    team = write_tiny_suite(tmp_path)
    env = gate_env(fake, tmp_path / "cache", target=write_bot(tmp_path), auditor=False)
    env.update(EMPATH_SUITES_DIRS=str(team), EMPATH_TARGET_VERSION="1")
    return env


@pytest.mark.parametrize("case", sorted(CONFIG_CASES))
def test_judge_batch_configuration_errors_are_usage_errors_before_any_call(tmp_path: Path, case: str) -> None:
    (tmp_path / "corrupt.json").write_text("{not json", encoding="utf-8")
    extra, message = CONFIG_CASES[case]
    plugin_extra = [f"--empath-{x[2:]}" if x.startswith("--") else x for x in extra]
    with FakeOpenAIServer(strict=False) as fake:
        env = _project(tmp_path, fake)
        args = ["--empath-suite", "tiny", "--empath-runs", "2", "--empath-judge-batch", "collect",
                *plugin_extra]
        code, out = run_pytest(tmp_path, args, env)
        assert code == 4, out[-3000:]  # a usage error, said once: no test ran, none errored
        assert out.count(message) == 1, out[-3000:]
        assert "ERROR empath" not in out and "FAILED" not in out
        full = {k: v for k, v in os.environ.items() if k not in ENV_CLEARED}
        full.update(env)
        cli = subprocess.run(
            [sys.executable, "-m", "empath_gate.cli", "run", "--suite", "tiny", "--judge-batch", "collect",
             *extra],
            cwd=tmp_path, env=full, capture_output=True, text=True, timeout=300, check=False,
        )
        assert cli.returncode == 2, cli.stdout[-2000:] + cli.stderr[-2000:]
        assert (cli.stdout + cli.stderr).count(message) == 1
        assert not fake.requests  # nothing was generated


def test_judge_batch_under_xdist_workers_is_a_usage_error(tmp_path: Path) -> None:
    with FakeOpenAIServer(strict=False) as fake:
        env = _project(tmp_path, fake)
        args = ["--empath-suite", "tiny", "--empath-judge-batch", "submit", "-n", "2"]
        code, out = run_pytest(tmp_path, args, env)
        assert code == 4, out[-3000:]
        assert out.count("--empath-judge-batch runs in one process") == 1, out[-3000:]
        assert not fake.requests
