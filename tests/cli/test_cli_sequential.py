"""Sequential gating on the fake server: ``run --sequential-gating`` stops settled conversations
early, makes fewer provider calls than all N runs, decides every test as all N runs do, and its
results and diff say which runs were not started and why."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from cli_support import TINY, Project
from plugin_support import environment, gate_env, program, read_json

from empath_gate.cli import main as cli_main
from empath_gate.testing.scenarios import ScoringJudge

pytestmark = [pytest.mark.filterwarnings("ignore::empath_gate.judging.llm_judge.JudgeHygieneWarning")]

RUNS = ("--runs", "5")


def _run(project: Project, cache: Path, *args: str, score: int = 10) -> tuple[int, int, dict[str, Any], str]:
    """``empath-gate run`` of the tiny suite at 5 runs on a cold cache of its own, fixed-script
    mode, every metric judged ``score``: (exit code, requests the server answered, results.json,
    diff.md)."""
    program(project.fake, judge=ScoringJudge(default=score, seeds=project.seeds))
    before = project.fake.request_count
    with environment(gate_env(project.fake, cache, auditor=False)), pytest.MonkeyPatch.context() as mp:
        mp.chdir(project.path)
        mp.syspath_prepend(str(project.path))
        code = cli_main(["run", *TINY, *RUNS, *args])
    out = project.path / "empath-results"
    return (code, project.fake.request_count - before, read_json(out / "results.json"),
            (out / "diff.md").read_text(encoding="utf-8"))


def _decisions(results: dict[str, Any]) -> dict[tuple[str, str], str]:
    return {(d["conversation_id"], d["metric_id"]): d["status"] for d in results["decisions"]}


def test_sequential_gating_stops_settled_conversations_with_the_full_runs_decisions(
    project: Project, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code_full, calls_full, full, _ = _run(project, tmp_path / "cache-full")
    code_seq, calls_seq, seq, diff = _run(project, tmp_path / "seq", "--sequential-gating", "sequential")
    assert code_full == code_seq == 0
    assert _decisions(seq) == _decisions(full) and set(_decisions(seq).values()) == {"passed"}

    stopped = [r for r in seq["records"] if r["status"] == "stopped"]
    assert stopped and all(r["error"].startswith("settled: stochastic curtailment") for r in stopped)
    assert not any(r["status"] == "stopped" for r in full["records"])
    # a critical conversation never stops before its third judged run
    critical = {i["conversation_id"] for i in seq["items"] if i["critical"]}
    ran: dict[str, int] = {}
    for r in seq["records"]:
        if r["status"] == "complete":
            ran[r["conversation_id"]] = ran.get(r["conversation_id"], 0) + 1
    assert critical and all(ran[c] >= 3 for c in critical)
    assert any(ran[c] < 5 for c in critical)
    assert seq["summary"]["transcripts_stopped"] == len(stopped)
    assert seq["summary"]["transcripts_failed"] == 0
    assert seq["reliability"]["runs_stopped"] == len(stopped)

    # fewer provider calls, as counted by the server and by the results
    assert calls_seq < calls_full
    assert seq["metadata"]["cost"]["calls"] == calls_seq
    with capsys.disabled():
        print(f"\nsequential gating on the fake server: {1 - calls_seq / calls_full:.0%} fewer calls "
              f"({calls_seq} of {calls_full})")
    assert "of 5 (stopped: settled)" in diff
    assert f"{len(stopped)} runs not started: stopped as settled" in diff
    capsys.readouterr()


def test_exact_gating_never_stops_a_passing_conversation_a_low_run_could_still_fail(
    project: Project, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # every run scores 10, but a remaining run could score 1 (below min_run): nothing is settled
    code, _, res, diff = _run(project, tmp_path / "cache-exact", "--sequential-gating", "exact")
    assert code == 0
    assert not [r for r in res["records"] if r["status"] == "stopped"]
    assert "stopped: settled" not in diff
    capsys.readouterr()


def test_exact_gating_stops_conversations_that_fail_whatever_comes_with_the_full_runs_decisions(
    project: Project, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # every run scores 2, below every min_run: failed for good once the floors are reached
    code_full, calls_full, full, _ = _run(project, tmp_path / "full", score=2)
    code, calls, res, diff = _run(project, tmp_path / "exact", "--sequential-gating", "exact", score=2)
    assert code_full == code == 1
    assert _decisions(res) == _decisions(full) and set(_decisions(res).values()) == {"failed"}
    stopped = [r for r in res["records"] if r["status"] == "stopped"]
    assert stopped and all(r["error"].startswith("settled: no score of the remaining runs") for r in stopped)
    critical = {i["conversation_id"] for i in res["items"] if i["critical"]}
    ran = {c: sum(1 for r in res["records"] if r["conversation_id"] == c and r["status"] == "complete")
           for c in {r["conversation_id"] for r in res["records"]}}
    assert all(ran[c] == (3 if c in critical else 2) for c in ran)  # the floors, then stopped
    assert calls < calls_full and "of 5 (stopped: settled)" in diff
    capsys.readouterr()
