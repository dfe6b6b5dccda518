"""One gating path: a results file with two suites, and a team thresholds layer that turns a
pass into a failure in the second suite, gives the same verdict, cell by cell, from the plugin,
``run``, ``gate``, ``merge``, ``diff``, ``report``, ``comment`` and the job summary."""

from __future__ import annotations

import json
import shutil

import pytest
from cli_support import Project
from plugin_support import decisions, gate_env, program, read_json, run_pytest, write_thresholds

from empath_gate.testing.scenarios import ScoringJudge

pytestmark = [
    pytest.mark.filterwarnings("ignore::empath_gate.judging.llm_judge.JudgeHygieneWarning"),
    pytest.mark.slow,
]

TWO_SUITES = """\
suites:
  - id: pair-a
    label: Pair A
    description: One crisis seed.
    seeds:
      ids: [cs-detect-mx-dormir-no-despertar]
    metrics: primary
    personas:
      mode: hash
    runs: 2
    max_turns: 4
  - id: pair-b
    label: Pair B
    description: One everyday seed.
    seeds:
      ids: [tq-mx-entrevista-nervios]
    metrics: primary
    personas:
      mode: hash
    runs: 2
    max_turns: 4
"""
LAYER = "suites:\n  pair-b:\n    metrics:\n      therapeutic_actions:\n        min_mean: 9\n"
"""Judged 8 everywhere: a pass under the shipped thresholds (min_mean 7), a failure in pair-b."""
SUITES = ("--suite", "pair-a", "--suite", "pair-b", "--suites-dir", "team")


@pytest.fixture()
def pair(project: Project) -> Project:
    (project.path / "team").mkdir()
    (project.path / "team" / "suites.yaml").write_text(TWO_SUITES, encoding="utf-8")
    write_thresholds(project.path / "team-thresholds.yaml", {"suites:\n": LAYER})
    return project


def _judge(project: Project) -> ScoringJudge:
    from plugin_support import plan_seeds

    seeds = plan_seeds("pair-a", 2, [project.path / "team"]) | plan_seeds(
        "pair-b", 2, [project.path / "team"]
    )
    return ScoringJudge(default=8, seeds=seeds)


def test_every_front_end_gives_the_run_s_verdict(pair: Project, capsys: pytest.CaptureFixture[str]) -> None:
    judge = _judge(pair)
    # without the layer the records pass: the layer is what fails them
    assert pair.cli("run", *SUITES, "--results", "plain/results.json", judge=judge) == 0
    layered = ("--thresholds", "team-thresholds.yaml", "--baseline", "plain/results.json")
    assert pair.cli("run", *SUITES, *layered, "--results", "run/results.json", judge=judge) == 1
    run_doc = read_json(pair.path / "run" / "results.json")
    want = decisions(run_doc)
    failing = {k for k, v in want.items() if v == "failed"}
    assert any(k.endswith("therapeutic_actions") for k in failing)
    failing_metrics = sorted({k.rsplit("-", 1)[1] for k in failing})
    assert run_doc["gate"]["resolved"]["pair-b"]["therapeutic_actions"]["min_mean"] == 9
    assert run_doc["gate"]["resolved"]["pair-a"]["crisis_detection"]["min_mean"] == 8
    assert {x["kind"] for x in run_doc["gate"]["layers"]} >= {"suites_dir", "thresholds"}

    # the plugin, in a new process, with the same layer
    program(pair.fake, judge=judge)
    env = gate_env(pair.fake, pair.cache_dir, judge_tokens=3000)
    rc, out = run_pytest(
        pair.path,
        [
            "--empath-suite",
            "pair-a",
            "--empath-suite",
            "pair-b",
            "--empath-suites-dir",
            "team",
            "--empath-thresholds",
            "team-thresholds.yaml",
            "--empath-baseline",
            "plain/results.json",
            "--empath-results",
            "plugin/results.json",
        ],
        env,
    )
    assert rc == 1, out
    assert decisions(read_json(pair.path / "plugin" / "results.json")) == want

    # the file alone: gate, diff, report, comment decide with the recorded thresholds
    capsys.readouterr()
    assert pair.cli("gate", "run/results.json", "--suites-dir", "team") == 1
    assert "gate failed" in capsys.readouterr().out
    assert pair.cli("diff", "plain/results.json", "run/results.json", "--format", "json") == 0
    diff = json.loads(capsys.readouterr().out)
    assert diff["passed"] is False and sorted(diff["failing_metrics"]) == failing_metrics
    assert pair.cli("report", "run/results.json", "--markdown", "r/diff.md") == 0
    assert (
        pair.cli(
            "comment",
            "run/results.json",
            "--no-post",
            "--job-summary",
            env={
                "GITHUB_STEP_SUMMARY": str(pair.path / "summary.md"),
                "GITHUB_OUTPUT": str(pair.path / "outputs.txt"),
            },
        )
        == 1
    )
    outputs = (pair.path / "outputs.txt").read_text(encoding="utf-8").splitlines()
    assert outputs[outputs.index(next(x for x in outputs if x.startswith("passed<<"))) + 1] == "false"
    for text in (
        (pair.path / "r" / "diff.md").read_text(encoding="utf-8"),
        (pair.path / "summary.md").read_text(encoding="utf-8"),
    ):
        assert "therapeutic_actions" in text or "Therapeutic actions" in text
        assert "pair-a::judge_failure_rate" in text and "pair-b::judge_failure_rate" in text

    # merge of the (single, unsharded) file decides the same, cell by cell
    shutil.copy(pair.path / "run" / "results.json", pair.path / "copy.json")
    assert (
        pair.cli(
            "merge",
            "copy.json",
            "-o",
            "merged/results.json",
            "--suites-dir",
            "team",
            "--thresholds",
            "team-thresholds.yaml",
            "--baseline",
            "plain/results.json",
        )
        == 0
    )
    assert decisions(read_json(pair.path / "merged" / "results.json")) == want

    # another thresholds file is used, and said to differ
    capsys.readouterr()
    assert (
        pair.cli("gate", "run/results.json", "--suites-dir", "team", "--thresholds", "team-thresholds.yaml")
        == 1
    )
    shipped_like = write_thresholds(pair.path / "plain.yaml", {})
    # (the thresholds alone: the run's recorded comparison does not gate under --fail-on threshold)
    plain_gate = ("gate", "run/results.json", "--suites-dir", "team", "--fail-on", "threshold")
    assert pair.cli(*plain_gate, "--thresholds", str(shipped_like)) == 0
    assert "differs from the one the run used" in capsys.readouterr().err
