"""The suite's Ctrl-C tests work however the suite is launched: a background job of a shell
without job control starts with SIGINT ignored (tests/conftest.py puts the handler back)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _ignore_sigint() -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # as `sh -c 'make test &'` starts its job


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX signal dispositions (preexec_fn)")
def test_a_ctrl_c_test_passes_when_the_suite_starts_with_sigint_ignored() -> None:
    test = "tests/test_scheduler.py::test_ctrl_c_keeps_the_records_of_what_finished"
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST_")}
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:xdist", test],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=300, preexec_fn=_ignore_sigint,
    )
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-2000:]
    assert "1 passed" in proc.stdout
