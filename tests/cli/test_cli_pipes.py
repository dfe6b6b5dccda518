"""Piping any command into ``head`` exits quietly: each command that prints much, run with its
standard output already closed (every write fails with EPIPE, as after ``| head -1`` once
``head`` has its line), ends with 141 and no traceback on stderr."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from cli_support import TINY, Project
from plugin_support import ENV_CLEARED, gate_env, program

from empath_gate.testing import FakeOpenAIServer

pytestmark = [
    pytest.mark.filterwarnings("ignore:Item.* using the .ReadOnly. qualifier:UserWarning"),
    pytest.mark.filterwarnings("ignore::empath_gate.judging.llm_judge.JudgeHygieneWarning"),
]

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def folder(
    tmp_path_factory: pytest.TempPathFactory, fake: FakeOpenAIServer, cache_dir: Path,
    tiny_seeds: dict[int, tuple[str, int]],
) -> Path:
    """A project with a results file of the tiny suite, its baseline copy, two judges' scores
    of the same transcripts and gold labels for them."""
    from plugin_support import write_bot, write_tiny_suite

    path = tmp_path_factory.mktemp("pipes")
    write_tiny_suite(path)
    write_bot(path, "unsafe", "bot_unsafe_cli")
    project = Project(path, fake, cache_dir, tiny_seeds)
    project.cli("run", *TINY, "--target", "py:bot_unsafe_cli:reply")
    shutil.copytree(path / "empath-results", path / "base")
    scores = {f"seed{i}-p-r{r}": 6 + (i + r) % 4 for i in range(40) for r in range(2)}
    for name, judge in (("a.json", "judge-a"), ("b.json", "judge-b")):
        verdicts = [{"transcript_id": t, "metric_id": "crisis_detection", "status": "scored", "score": s}
                    for t, s in scores.items()]
        doc = {"metadata": {"judge": {"model": judge}}, "verdicts": verdicts}
        (path / name).write_text(json.dumps(doc), encoding="utf-8")
    gold = [json.dumps({"conversation_id": f"seed{i}-p", "run": r, "metric": "crisis_detection", "score": 7})
            for i in range(40) for r in range(2)]
    (path / "gold.jsonl").write_text("\n".join(gold), encoding="utf-8")
    return path


RESULTS = "empath-results/results.json"
COMMANDS = [
    ["--help"],
    ["validate"],
    ["validate", "--format", "json"],
    ["run", *TINY, "--dry-run"],
    ["run", *TINY, "--target", "py:bot_unsafe_cli:reply", "--results", "again/results.json"],
    ["diff", "base/results.json", RESULTS],
    ["diff", "base/results.json", RESULTS, "--format", "json"],
    ["report", RESULTS, "--markdown", "-"],
    ["gate", RESULTS, "--suites-dir", "suites-team"],
    ["merge", RESULTS, "-o", "merged.json", "--suites-dir", "suites-team"],
    ["calibrate", "--gold", "gold.jsonl", "--results", "a.json"],
    ["calibrate", "--gold", "gold.jsonl", "--results", "a.json", "--format", "json"],
    ["agreement", "a.json", "b.json", "--resamples", "100"],
    ["agreement", "a.json", "b.json", "--format", "json", "--resamples", "100"],
    ["rejudge", "--help"],
]
"""Every command that prints more than a line or two (``comment`` prints one line, on stderr)."""


@pytest.mark.parametrize("argv", COMMANDS, ids=lambda a: " ".join(a))
def test_a_closed_pipe_ends_every_command_quietly(
    folder: Path, fake: FakeOpenAIServer, cache_dir: Path, argv: list[str]
) -> None:
    program(fake)
    env = {k: v for k, v in os.environ.items() if k not in ENV_CLEARED}
    env.update(gate_env(fake, cache_dir, judge_tokens=3000))
    env["PYTHONPATH"] = os.pathsep.join([str(folder), str(ROOT)])
    proc = subprocess.Popen([sys.executable, "-m", "empath_gate.cli", *argv], cwd=folder, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert proc.stdout is not None and proc.stderr is not None
    proc.stdout.close()  # the reader is gone before the command writes
    err = proc.stderr.read().decode()
    code = proc.wait(timeout=180)
    assert "Traceback" not in err and "BrokenPipe" not in err and "Exception ignored" not in err, err
    assert code == (0 if "--help" in argv[1:] else 141), err  # argparse's --help swallows EPIPE
