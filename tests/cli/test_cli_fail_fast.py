"""Failing fast and quietly: a missing extra is a usage error before any transcript, a dead
provider ends the run in seconds, a closed pipe and Ctrl-C end a command with no traceback."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
from cli_support import TINY, Project
from plugin_support import ENV_CLEARED, gate_env, program, read_json

from empath_gate.testing import FakeRequest, Fault, Reply
from empath_gate.testing.scenarios import JUDGE_MODEL, ScoringJudge

pytestmark = [
    pytest.mark.filterwarnings("ignore:Item.* using the .ReadOnly. qualifier:UserWarning"),
    pytest.mark.filterwarnings("ignore::empath_gate.judging.llm_judge.JudgeHygieneWarning"),
]

ROOT = Path(__file__).resolve().parents[2]
NO_EXTRA = "import sys; sys.modules['llama_cpp'] = sys.modules['xllamacpp'] = None; "  # no llama.cpp binding


def _env(extra: dict[str, str] | None = None) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ENV_CLEARED}
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    env.update(extra or {})
    return env


def _closed_url() -> str:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return f"http://127.0.0.1:{s.getsockname()[1]}/v1"


def test_a_missing_local_extra_is_one_usage_line_before_any_transcript(tmp_path: Path) -> None:
    code = NO_EXTRA + "from empath_gate.cli import main; raise SystemExit(main(sys.argv[1:]))"
    proc = subprocess.run([sys.executable, "-c", code, "run", "--suite", "smoke", "--offline"], cwd=tmp_path,
                          env=_env(), capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2, proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and "'local' extra" in lines[0] and 'pip install "empath-gate[local]"' in lines[0]
    assert "Traceback" not in proc.stderr and not (tmp_path / "empath-results").exists()


def test_a_missing_local_extra_is_a_pytest_usage_error(tmp_path: Path) -> None:
    code = NO_EXTRA + "import pytest; raise SystemExit(pytest.main(sys.argv[1:]))"
    proc = subprocess.run(
        [sys.executable, "-c", code, "-p", "no:cacheprovider", "--empath-suite", "smoke", "--empath-offline"],
        cwd=tmp_path, env=_env(), capture_output=True, text=True, timeout=120,
    )
    assert proc.returncode == 4, proc.stdout + proc.stderr
    errors = [x for x in (proc.stdout + proc.stderr).splitlines() if "extra" in x]
    assert len(errors) == 1 and "'local' extra" in errors[0]
    assert "Traceback" not in proc.stderr and "transcripts" not in proc.stdout


def test_every_provider_unreachable_ends_the_run_in_seconds(
    project: Project, capsys: pytest.CaptureFixture[str]
) -> None:
    dead = _closed_url()
    env = {"EMPATH_TARGET": dead, "EMPATH_AUDITOR_API_BASE": dead, "EMPATH_JUDGE_API_BASE": dead,
           "EMPATH_MAX_RETRIES": "4", "EMPATH_RETRY_BASE_DELAY_S": "1", "EMPATH_RETRY_MAX_DELAY_S": "8"}
    t0 = time.perf_counter()
    code = project.cli("run", *TINY, "--runs", "20", "--no-cache", env=env)
    elapsed = time.perf_counter() - t0
    assert code == 3
    assert elapsed < 30
    out = capsys.readouterr().out
    assert f"provider openai at {dead} is unavailable" in out and "connection refused" in out


def test_a_closed_pipe_ends_a_command_quietly(tmp_path: Path) -> None:
    # the reader is gone before the command writes: every write fails with EPIPE
    proc = subprocess.Popen([sys.executable, "-m", "empath_gate.cli", "validate", "--format", "json"],
                            cwd=tmp_path, env=_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert proc.stdout is not None and proc.stderr is not None
    proc.stdout.close()
    err = proc.stderr.read().decode()
    assert proc.wait(timeout=120) == 141
    assert "Traceback" not in err and "BrokenPipe" not in err and "Exception ignored" not in err
    shell = subprocess.run(f"'{sys.executable}' -m empath_gate.cli validate --format json | head -1",
                           shell=True, cwd=tmp_path, env=_env(), capture_output=True, text=True, timeout=120)
    assert shell.stdout == "{\n" and "Traceback" not in shell.stderr and "BrokenPipe" not in shell.stderr


def test_ctrl_c_ends_a_run_with_one_line_and_writes_results_of_what_finished(project: Project) -> None:
    program(project.fake)
    project.fake.latency_s = 0.05
    env = _env(gate_env(project.fake, project.cache_dir))
    proc = subprocess.Popen(
        [sys.executable, "-m", "empath_gate.cli", "run", *TINY, "--runs", "30", "--no-cache",
         "--target", "py:bot_unsafe_cli:reply"],
        cwd=project.path, env={**env, "PYTHONPATH": f"{project.path}{os.pathsep}{env['PYTHONPATH']}"},
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )
    transcripts = project.path / "empath-results" / "transcripts"
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and len(list(transcripts.glob("**/*.jsonl"))) < 2:
        time.sleep(0.1)
    finished = len(list(transcripts.glob("**/*.jsonl")))
    proc.send_signal(signal.SIGINT)
    _out, err = proc.communicate(timeout=60)
    project.fake.latency_s = 0.0
    assert finished >= 2
    assert proc.returncode == 130, err
    assert "never awaited" not in err and "Traceback" not in err and "Task was destroyed" not in err
    lines = [x for x in err.splitlines() if x.strip() and not x.startswith("empath-gate: ")]
    assert len(lines) == 1 and "interrupted" in lines[0], err
    kept = len(list(transcripts.glob("**/*.jsonl")))
    assert kept >= finished
    # the results of what finished: every planned transcript has a record, the unfinished ones
    # (and the generated ones the interrupt kept from the judge) as interrupted errors
    assert "wrote " in lines[0] and lines[0].endswith("results.json"), err
    doc = read_json(project.path / "empath-results" / "results.json")
    records = doc["records"]
    assert len(records) == 3 * 30
    with_file = [r for r in records if r["transcript_path"]]
    assert len(with_file) >= finished and len(with_file) <= kept
    interrupted = [r for r in records if r["status"] == "error" and r["error"].startswith("interrupted: ")]
    assert len(interrupted) >= len(records) - len(with_file) > 0
    assert all(d["status"] != "passed" for d in doc["decisions"]) and doc["decisions"]




def test_ctrl_c_while_judging_keeps_the_judged_and_marks_the_rest(project: Project) -> None:
    judge = ScoringJudge(default=10, seeds=project.seeds)

    def slow_judge(req: FakeRequest) -> str | Reply | Fault:
        out = judge(req)
        return Reply(out, latency_s=2.0) if isinstance(out, str) else out

    program(project.fake)
    project.fake.on(JUDGE_MODEL, slow_judge)
    env = _env(gate_env(project.fake, project.cache_dir, judge_tokens=3100))
    proc = subprocess.Popen(
        [sys.executable, "-m", "empath_gate.cli", "run", *TINY, "--runs", "3",
         "--target", "py:bot_unsafe_cli:reply"],
        cwd=project.path, env={**env, "PYTHONPATH": f"{project.path}{os.pathsep}{env['PYTHONPATH']}"},
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )
    transcripts = project.path / "empath-results" / "transcripts"
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and len(list(transcripts.glob("**/*.jsonl"))) < 9:
        time.sleep(0.05)
    time.sleep(0.5)  # generation is over: the judge is at work (2 s a call)
    proc.send_signal(signal.SIGINT)
    _out, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    assert "never awaited" not in err and "Traceback" not in err, err
    records = read_json(project.path / "empath-results" / "results.json")["records"]
    assert len(records) == 9 and all(r["transcript_path"] for r in records)
    judged = [r for r in records if r["status"] == "complete"]
    unjudged = [r for r in records if r["status"] == "error"]
    assert len(judged) + len(unjudged) == 9 and unjudged, err
    assert all(r["verdicts"] for r in judged)
    assert all(r["error"] == "interrupted: the transcript was generated but not judged" and not r["verdicts"]
               for r in unjudged)
    assert f"9 of 9 transcripts finished, {len(judged)} judged" in err
