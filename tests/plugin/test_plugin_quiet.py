"""Quiet output under pytest: the judge-family warning on one line, no "PASSED - passed", no
blank progress lines, and a Ctrl-C after generation (single process and ``-n 2``) still writes
results for every finished transcript, without coroutine warnings."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from plugin_support import ENV_CLEARED, gate_env, program, read_json, run_pytest, write_tiny_suite

from empath_gate.testing import FakeOpenAIServer
from empath_gate.testing.scenarios import ScoringJudge

ROOT = Path(__file__).resolve().parents[2]
SLOW_TESTS = "import time\n\ndef pytest_runtest_call(item):\n    time.sleep(2)\n"
"""A project conftest that makes the test phase last, so the interrupt lands after generation."""


@pytest.mark.parametrize("workers", ["0", "2"])
def test_ctrl_c_after_generation_writes_results_and_output_stays_quiet(
    fake: FakeOpenAIServer, tmp_path: Path, workers: str
) -> None:
    write_tiny_suite(tmp_path)
    (tmp_path / "conftest.py").write_text(SLOW_TESTS, encoding="utf-8")
    program(fake, judge=ScoringJudge(default=10))
    env = {k: v for k, v in os.environ.items() if k not in ENV_CLEARED}
    env.update(gate_env(fake, tmp_path / "cache"))
    env["PYTHONPATH"] = os.pathsep.join([str(tmp_path), str(ROOT)])
    proc = subprocess.Popen(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-v", "-n", workers,
         "--empath-suite", "tiny", "--empath-suites-dir", "suites-team"],
        cwd=tmp_path, env=env, text=True, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        start_new_session=True,  # Ctrl-C reaches the whole process group, workers included
    )
    assert proc.stdout is not None
    seen: list[str] = []
    for line in proc.stdout:
        seen.append(line)
        if " PASSED" in line or " FAILED" in line:  # a test ran: generation is over
            break
    # into the next test's 2 s sleep: an interrupt between two tests can land in a frame whose
    # line number is unknown, where pytest's own traceback formatting fails (exit 1, not 2)
    time.sleep(0.5)
    os.killpg(proc.pid, signal.SIGINT)
    rest, err = proc.communicate(timeout=120)
    out = "".join(seen) + rest + err
    assert proc.returncode == pytest.ExitCode.INTERRUPTED, out
    doc = read_json(tmp_path / "empath-results" / "results.json")
    assert len(doc["records"]) == 6 and all(r["status"] == "complete" for r in doc["records"])
    assert "never awaited" not in out
    # the judge-family warning: once, one line, no Python warning with its source line
    warned = [x for x in out.splitlines() if "are both of the openai family" in x]
    assert len(warned) == 1 and warned[0].startswith("empath-gate: warning: the judge"), out
    assert "JudgeHygieneWarning" not in out and "warnings.warn" not in out
    assert "empath-gate tiny: PASSED\n" in out and "PASSED - passed" not in out


def test_no_blank_progress_lines(fake: FakeOpenAIServer, tmp_path: Path) -> None:
    # conversation ids are long: at 80 columns each conversation's result line reaches the edge,
    # where pytest alone would repeat the progress on an empty line and leave a blank line
    write_tiny_suite(tmp_path)
    program(fake, judge=ScoringJudge(default=10))
    env = {**gate_env(fake, tmp_path / "cache"), "COLUMNS": "80"}
    code, out = run_pytest(tmp_path, ["--empath-suite", "tiny", "--empath-suites-dir", "suites-team"], env)
    assert code == 0, out
    lines = out.splitlines()
    assert any(x.startswith("empath-gate: transcripts ") for x in lines), out  # progress was printed
    first = next(i for i, x in enumerate(lines) if x.startswith("empath/tiny/"))
    last = next(i for i, x in enumerate(lines) if x.rstrip().endswith("[100%]"))
    results = lines[first : last + 1]
    assert len(results) == 4, out  # three conversations and the suite check, one line each
    assert all(re.fullmatch(r"empath/tiny\S* \.+ +\[ *\d+%\]", x) for x in results), out
    assert not any(re.fullmatch(r"\s*\[ *\d+%\]", x) for x in lines), out


WIDE_THROTTLE = "import empath_gate.report.progress as p\n\np.PROGRESS_EVERY_S = 3600.0\n"
"""A project conftest that puts the whole run inside one throttle window."""


@pytest.mark.parametrize("workers", ["0", "2"])
def test_the_last_progress_line_is_shown_once_when_every_line_falls_in_the_throttle_window(
    fake: FakeOpenAIServer, tmp_path: Path, workers: str
) -> None:
    write_tiny_suite(tmp_path)
    (tmp_path / "conftest.py").write_text(WIDE_THROTTLE, encoding="utf-8")
    program(fake, judge=ScoringJudge(default=10))
    env = {**gate_env(fake, tmp_path / "cache"), "PYTHONPATH": os.pathsep.join([str(tmp_path), str(ROOT)])}
    code, out = run_pytest(
        tmp_path, ["-n", workers, "--empath-suite", "tiny", "--empath-suites-dir", "suites-team"], env
    )
    assert code == 0, out
    lines = [x for x in out.splitlines() if x.startswith("empath-gate: transcripts ")]
    assert len(lines) == 2, out  # the first line as it came, and the last at the end
    done = re.match(r"empath-gate: transcripts (\d+)/(\d+) · (\d+) calls, (\d+) cached ", lines[-1])
    # the tiny suite: three conversations, two runs each; under -n 2 the total of both workers
    assert done is not None and done[1] == done[2] == "6", out
    cost = read_json(tmp_path / "empath-results" / "results.json")["metadata"]["cost"]
    assert (int(done[3]), int(done[4])) == (cost["calls"], cost["cache_hits"]), out  # the run's calls
