"""``empath-gate merge`` and ``empath-gate gate`` on real shard results of the tiny team suite
(made by ``empath-gate run --shard K/N`` against the fake OpenAI server)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from cli_support import TINY, Project
from plugin_support import comparable, read_json

from empath_gate.testing.scenarios import ScoringJudge

pytestmark = [
    pytest.mark.filterwarnings("ignore:Item.* using the .ReadOnly. qualifier:UserWarning"),
    pytest.mark.filterwarnings("ignore::empath_gate.judging.llm_judge.JudgeHygieneWarning"),
]


@dataclass
class Shards:
    project: Project
    whole: Path
    shard1: Path
    shard2: Path


@pytest.fixture()
def shards(project: Project) -> Shards:
    """The tiny suite whole and in two shards, judged 5 on crisis_detection (a gate failure)."""
    judge = ScoringJudge({"crisis_detection": 5}, default=10, seeds=project.seeds)
    assert project.cli("run", *TINY, "--results", "warm-up/results.json", judge=judge, tokens=3001) == 1
    codes = [project.cli("run", *TINY, "--shard", f"{k}/2", "--results", f"s{k}/results.json", judge=judge,
                         tokens=3001) for k in (1, 2)]
    assert sorted(codes) == [0, 1]
    # the reference, from the same warm cache as the shards (a cold run counts its calls)
    assert project.cli("run", *TINY, "--results", "whole/results.json", judge=judge, tokens=3001) == 1
    p = project.path
    return Shards(project, p / "whole" / "results.json", p / "s1" / "results.json", p / "s2" / "results.json")


def _altered(src: Path, dst: Path, **metadata: Any) -> Path:
    data = json.loads(src.read_text(encoding="utf-8"))
    for key, value in metadata.items():
        if key == "judge_model":
            data["metadata"]["judge"]["model"] = value
        else:
            data["metadata"][key] = value
    dst.parent.mkdir(parents=True, exist_ok=True)
    dst.write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")
    return dst


def test_shards_merge_to_the_unsharded_result_and_gate_gives_its_exit_code(
    shards: Shards, capsys: pytest.CaptureFixture[str]
) -> None:
    project = shards.project
    merged = project.path / "merged" / "results.json"
    merge = ("merge", str(shards.shard2), str(shards.shard1), "-o", str(merged))
    assert project.cli(*merge) == 2  # the plan needs the team suite the run used
    assert "cannot rebuild its plan: unknown suite 'tiny'" in capsys.readouterr().err
    assert project.cli(*merge, "--suites-dir", "suites-team") == 0
    assert "wrote" in capsys.readouterr().out
    doc = read_json(merged)
    assert comparable(doc) == comparable(read_json(shards.whole))
    assert doc["metadata"]["shard"] is None
    for record in doc["records"]:  # transcript paths now lead from the merged file to the shards' files
        assert (merged.parent / record["transcript_path"]).is_file()
    assert {"diff.md", "report.html"} <= {p.name for p in merged.parent.iterdir()}
    assert project.cli("gate", str(merged), "--suites-dir", "suites-team") == 1
    assert "exit 1 (gate failed)" in capsys.readouterr().out
    assert project.cli("gate", str(shards.whole), "--suites-dir", "suites-team") == 1
    assert project.cli("gate", str(merged), "--suites-dir", "suites-team", "--fail-on", "never") == 0


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"plan_id": "0" * 64}, "differ in plan_id"),
        ({"runs": 3}, "differ in run count (2 vs 3)"),
        ({"judge_model": "openai/judge-b"}, "differ in judge model (openai/fake-judge vs openai/judge-b)"),
        ({"instrument_version": "9.0.0"}, "differ in instrument version"),
        ({"shard": "2/3"}, "split the plan differently"),
    ],
)
def test_merge_refuses_shards_of_different_runs_naming_the_files(
    shards: Shards, capsys: pytest.CaptureFixture[str], change: dict[str, Any], message: str
) -> None:
    project = shards.project
    other = _altered(shards.shard2, project.path / "other" / "results.json", **change)
    code = project.cli("merge", str(shards.shard1), str(other), "-o", "merged.json")
    err = capsys.readouterr().err
    assert code == 2
    assert message in err
    if "differ" in message:
        assert str(shards.shard1) in err and str(other) in err
    assert not (project.path / "merged.json").exists()


def test_merge_refuses_missing_and_overlapping_shards(
    shards: Shards, capsys: pytest.CaptureFixture[str]
) -> None:
    project = shards.project
    assert project.cli("merge", str(shards.shard1), "-o", "merged.json") == 2
    assert f"missing shard(s) 2/2 of 2: got {shards.shard1} (1/2)" in capsys.readouterr().err
    assert project.cli("merge", str(shards.shard1), str(shards.shard1), "-o", "merged.json") == 2
    assert "both hold transcripts" in capsys.readouterr().err
    files = (str(shards.shard1), str(shards.shard2), str(shards.whole))
    assert project.cli("merge", *files, "-o", "m.json") == 2
    err = capsys.readouterr().err
    assert str(shards.whole) in err and "both hold transcripts" in err


def test_gate_recomputes_the_regression_against_a_baseline(
    project: Project, capsys: pytest.CaptureFixture[str]
) -> None:
    base = ScoringJudge(default=10, seeds=project.seeds)
    assert project.cli("run", *TINY, "--results", "base/results.json", judge=base) == 0
    # 8 clears every threshold of crisis_detection, but is 2 below the baseline's 10
    cand = ScoringJudge({"crisis_detection": 8}, default=10, seeds=project.seeds)
    assert project.cli("run", *TINY, "--results", "cand/results.json", judge=cand, tokens=3002) == 0
    capsys.readouterr()
    gate = ("gate", "cand/results.json", "--suites-dir", "suites-team")
    assert project.cli(*gate) == 0
    assert project.cli(*gate, "--baseline", "base/results.json") == 1
    assert "crisis_detection: non-inferiority not shown" in capsys.readouterr().out
    assert project.cli(*gate, "--baseline", "base/results.json", "--fail-on", "threshold") == 0


def test_gate_needs_the_instrument_the_run_used(shards: Shards, capsys: pytest.CaptureFixture[str]) -> None:
    project = shards.project
    assert project.cli("gate", str(shards.whole)) == 2  # the team suite is not layered
    assert "cannot rebuild its plan: unknown suite 'tiny'" in capsys.readouterr().err
    assert project.cli("gate", "no-such-file.json") == 2
    assert "results file not found" in capsys.readouterr().err
