"""Every call is counted: the results' call counts against the fake server's request count (HTTP
target, LLM auditor, LLM judge, retries, judge re-asks), and ``run --dry-run``'s call count
against the actual calls on a cold cache."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from cli_support import TINY, Project
from plugin_support import environment, gate_env, program, read_json

from empath_gate.cli import main as cli_main
from empath_gate.testing import Fault
from empath_gate.testing.scenarios import AUDITOR_MODEL, HTTP_TARGET_MODEL, JUDGE_MODEL, ScoringJudge

pytestmark = [pytest.mark.filterwarnings("ignore::empath_gate.judging.llm_judge.JudgeHygieneWarning")]


def _run(
    project: Project, tmp_path: Path, *args: str, auditor: bool = True, judge: ScoringJudge | None = None,
    env: dict[str, str] | None = None,
) -> int:
    """``empath-gate ARGS`` on a cold cache of its own (``auditor=False``: fixed-script mode)."""
    program(project.fake, judge=judge or ScoringJudge(default=10, seeds=project.seeds))
    values = gate_env(project.fake, tmp_path / "cold-cache", auditor=auditor)
    values.update(env or {})
    with environment(values), pytest.MonkeyPatch.context() as mp:
        mp.chdir(project.path)
        mp.syspath_prepend(str(project.path))
        return cli_main(list(args))


def _dry_run_calls(out: str) -> dict[str, int]:
    """role -> expected calls of a ``--dry-run`` text (roles without model calls: 0)."""
    calls = {role: 0 for role in ("target", "auditor", "judge")}
    for role, n in re.findall(r"^  (target|auditor|judge) .*: (\d+) calls \(at most", out, re.M):
        calls[role] = int(n)
    return calls


def test_results_count_every_request_the_server_answered(
    project: Project, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    fake = project.fake
    # one 429 on the auditor and one on the judge: each retried attempt is a request and a call
    fake.script(AUDITOR_MODEL, Fault.rate_limit())
    fake.script(JUDGE_MODEL, Fault.rate_limit())
    # the judge's first ask of every request is prose: each is asked again (a call each)
    judge = ScoringJudge(default=10, seeds=project.seeds, broken=lambda call: call.ask == 0)
    before = fake.request_count
    _run(project, tmp_path, "run", *TINY, judge=judge, env={"EMPATH_MAX_RETRIES": "2"})
    requests = fake.requests[before:]
    cost = read_json(project.path / "empath-results" / "results.json")["metadata"]["cost"]
    assert cost["calls"] == len(requests) == fake.request_count - before
    models = {"target": HTTP_TARGET_MODEL, "auditor": AUDITOR_MODEL, "judge": JUDGE_MODEL}
    by_model = {role: sum(r.model == m for r in requests) for role, m in models.items()}
    assert {role: c["calls"] for role, c in cost["by_role"].items()} == by_model
    # 6 transcripts, one judge request each, asked twice, plus the retried 429
    assert by_model["judge"] == 6 * 2 + 1
    assert cost["cache_hits"] == 0
    records = read_json(project.path / "empath-results" / "results.json")["records"]
    assert sum(r["calls"] for r in records) == len(requests)
    assert all(r["by_role"]["judge"]["calls"] >= 2 for r in records)
    capsys.readouterr()


def test_dry_run_call_count_is_exact_in_fixed_script_mode_on_a_cold_cache(
    project: Project, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert _run(project, tmp_path, "run", *TINY, "--dry-run", auditor=False) == 0
    expected = _dry_run_calls(capsys.readouterr().out)
    assert expected["auditor"] == 0 and expected["target"] > 0 and expected["judge"] > 0
    before = project.fake.request_count
    _run(project, tmp_path, "run", *TINY, auditor=False)
    cost = read_json(project.path / "empath-results" / "results.json")["metadata"]["cost"]
    actual = {role: c["calls"] for role, c in cost["by_role"].items()}
    assert actual == {"target": expected["target"], "judge": expected["judge"]}
    assert sum(expected.values()) == cost["calls"] == project.fake.request_count - before


def test_dry_run_call_count_with_the_llm_auditor_is_within_ten_percent(
    project: Project, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert _run(project, tmp_path, "run", *TINY, "--dry-run") == 0
    expected = sum(_dry_run_calls(capsys.readouterr().out).values())
    before = project.fake.request_count
    _run(project, tmp_path, "run", *TINY)
    actual = project.fake.request_count - before
    assert abs(actual - expected) <= 0.1 * actual, (expected, actual)


def _final_progress(err: str) -> str:
    """The last ``empath-gate: transcripts …`` progress line of a run's stderr."""
    lines = [x for x in err.splitlines() if x.startswith("empath-gate: transcripts ")]
    assert lines, err
    return lines[-1]


def test_the_final_progress_line_counts_every_call_of_the_run_judging_included(
    project: Project, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # the judge runs after each transcript's line: the last transcript's judge calls come after
    # its line, and the run's final line must still count them
    _run(project, tmp_path, "run", *TINY)
    cost = read_json(project.path / "empath-results" / "results.json")["metadata"]["cost"]
    assert cost["by_role"]["judge"]["calls"] > 0
    line = _final_progress(capsys.readouterr().err)
    assert f" · {cost['calls']} calls, {cost['cache_hits']} cached · " in line, (line, cost)


def test_a_callable_target_makes_no_call_and_the_final_line_says_what_the_results_say(
    project: Project, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # a py: target's replies are the team's code, not provider requests: no call, no cost; the
    # LLM judge's calls are the run's calls, on the final line as in the results
    _run(project, tmp_path, "run", *TINY, "--target", "py:bot_unsafe_cli:reply", auditor=False)
    cost = read_json(project.path / "empath-results" / "results.json")["metadata"]["cost"]
    assert cost["by_role"].get("target", {"calls": 0})["calls"] == 0
    assert cost["calls"] == cost["by_role"]["judge"]["calls"] > 0
    line = _final_progress(capsys.readouterr().err)
    assert f" · {cost['calls']} calls, {cost['cache_hits']} cached · " in line, (line, cost)
