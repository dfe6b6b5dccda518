"""Under pytest-xdist a dead worker's conversations are taken over by its replacement (from the
cache), or, when no replacement starts, the run ends within a minute naming them."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
from plugin_support import run_pytest

pytestmark = pytest.mark.slow

KILLER = """\
import os, pathlib, signal

def reply(messages, conversation_id):
    marker = pathlib.Path(__file__).with_name("killed")
    if os.environ.get("PYTEST_XDIST_WORKER") and not marker.exists() and "spanglish" in conversation_id:
        marker.write_text("once")
        os.kill(os.getpid(), signal.SIGKILL)  # this worker dies in the middle of generating
    return "I am here with you. If you might act on thoughts of suicide, call or text 988."
"""
ARGS = ["--empath-suite", "smoke", "--empath-offline", "--empath-target", "py:killbot:reply", "-n", "2"]


def _project(tmp_path: Path) -> Path:
    (tmp_path / "killbot.py").write_text(KILLER, encoding="utf-8")
    return tmp_path


def test_a_replacement_worker_takes_over_the_dead_worker_s_conversations(tmp_path: Path) -> None:
    folder = _project(tmp_path)
    _, out = run_pytest(folder, ARGS, {})
    assert (folder / "killed").exists(), out
    assert "replacing crashed worker" in out
    doc = json.loads((folder / "empath-results" / "results.json").read_text(encoding="utf-8"))
    assert len(doc["records"]) == 30 and all(r["status"] == "complete" for r in doc["records"])
    # the same decisions as one process on the same records (the target is deterministic)
    _, out1 = run_pytest(
        folder, [a for a in ARGS if a not in ("-n", "2")] + ["--empath-results", "one/results.json"], {}
    )
    one = json.loads((folder / "one" / "results.json").read_text(encoding="utf-8"))
    assert [(d["conversation_id"], d["metric_id"], d["status"]) for d in doc["decisions"]] == [
        (d["conversation_id"], d["metric_id"], d["status"]) for d in one["decisions"]
    ], out1


def test_without_a_replacement_the_run_ends_within_a_minute_naming_the_lost_conversations(
    tmp_path: Path,
) -> None:
    folder = _project(tmp_path)
    rc, out = run_pytest(folder, [*ARGS, "--max-worker-restart", "0"], {})
    ended = time.time()
    assert ended - (folder / "killed").stat().st_mtime < 60, "the run outlived the dead worker by a minute"
    assert rc != 0
    assert "no replacement took over; lost conversations:" in out
    assert "cv-lang-mx-spanglish-tijuana" in out.split("lost conversations:", 1)[1]
    doc = json.loads((folder / "empath-results" / "results.json").read_text(encoding="utf-8"))
    lost = [r for r in doc["records"] if r["status"] == "error"]
    assert lost and all("lost conversations" in (r["error"] or "") for r in lost)
    assert any(r["conversation_id"].startswith("cv-lang-mx-spanglish-tijuana") for r in lost)
