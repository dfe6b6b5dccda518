"""The wheel ships the instrument: build it, install it into a fresh venv, validate from elsewhere.

The venv gets the wheel alone (``--no-deps``); the dependencies come from the running
environment's site-packages through PYTHONPATH, so the test needs no network. The instrument is
read from the installed ``empath_gate/_data`` (asserted), never from this checkout.
"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
import sysconfig
import zipfile
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]


def _run(cmd: list[str], cwd: Path, env: dict[str, str] | None = None, timeout: int = 300
         ) -> subprocess.CompletedProcess[str]:
    return subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)


def _build_wheel(out: Path) -> Path:
    cmd = [sys.executable, "-m", "build", "--wheel", "--outdir", str(out)]
    if importlib.util.find_spec("hatchling") is not None:
        cmd.append("--no-isolation")  # offline: use the installed backend
    proc = _run(cmd, cwd=REPO)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    wheels = sorted(out.glob("empath_gate-*.whl"))
    assert len(wheels) == 1, wheels
    return wheels[0]


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, dict[str, str]]:
    """(wheel, venv python, env) with the wheel installed into a fresh venv."""
    if importlib.util.find_spec("build") is None:
        pytest.skip("the 'build' package (test extra) is not installed")
    tmp = tmp_path_factory.mktemp("wheel")
    wheel = _build_wheel(tmp / "dist")
    venv = tmp / "venv"
    proc = _run([sys.executable, "-m", "venv", "--without-pip", str(venv)], cwd=tmp)
    assert proc.returncode == 0, proc.stderr
    py = venv / ("Scripts/python.exe" if os.name == "nt" else "bin/python")
    proc = _run([sys.executable, "-m", "pip", "--python", str(py), "install", "--no-deps", "--no-index",
                 "--disable-pip-version-check", str(wheel)], cwd=tmp)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "VIRTUAL_ENV"))}
    env["PYTHONPATH"] = sysconfig.get_paths()["purelib"]
    return wheel, py, env


def test_wheel_contains_instrument_and_schemas(installed: tuple[Path, Path, dict[str, str]]) -> None:
    wheel = installed[0]
    names = set(zipfile.ZipFile(wheel).namelist())
    assert "empath_gate/_data/thresholds.yaml" in names
    assert "empath_gate/_data/suites/instrument.yaml" in names
    for kind in ("instrument", "metrics", "seeds", "personas", "suites", "thresholds", "waivers"):
        assert f"empath_gate/instrument/schemas/{kind}.schema.json" in names
    repo_files = {p.relative_to(REPO / "suites").as_posix() for p in (REPO / "suites").rglob("*.yaml")}
    shipped = {n.removeprefix("empath_gate/_data/suites/") for n in names
               if n.startswith("empath_gate/_data/suites/") and n.endswith(".yaml")}
    assert repo_files == shipped


def test_validate_from_wheel_install(installed: tuple[Path, Path, dict[str, str]], tmp_path: Path) -> None:
    _, py, env = installed
    where = _run([str(py), "-c", "import empath_gate.instrument.loader as l; print(l.shipped_paths()[0])"],
                 cwd=tmp_path, env=env)
    assert where.returncode == 0, where.stderr
    shipped_dir = Path(where.stdout.strip())
    assert shipped_dir.parts[-3:] == ("empath_gate", "_data", "suites")
    assert REPO not in shipped_dir.parents

    installed_run = _run([str(py), "-m", "empath_gate.cli", "validate", "--format", "json"],
                         cwd=tmp_path, env=env)
    repo_run = _run([sys.executable, "-m", "empath_gate.cli", "validate", "--format", "json"], cwd=REPO)
    # the installed copy reads the same instrument as the checkout: same verdict, same counts
    assert installed_run.returncode == repo_run.returncode, installed_run.stderr
    assert installed_run.stdout == repo_run.stdout
    if repo_run.returncode != 0:
        pytest.xfail("the shipped instrument does not validate yet:\n" + repo_run.stderr[-2000:])
    data = json.loads(installed_run.stdout)
    assert data["metrics"] == 19 and data["dimensions"] == 5
    assert data["seeds"] >= 40 and data["personas"] >= 34
