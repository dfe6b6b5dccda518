"""A temporary project with a suites layer and a callable target (``py:module:reply``), run
through the library (``prepare`` -> ``run_plan`` -> ``evaluate_run``): the harness the
risk-timing and triage end-to-end tests share."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

import pytest

from empath_gate import evaluate_run, load_settings, prepare, run_plan
from empath_gate.results.model import Results

SHIPPED_THRESHOLDS = Path(__file__).resolve().parents[2] / "thresholds.yaml"


def make_project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, suites_yaml: str) -> Path:
    """``tmp_path`` as the working directory and import path, with ``suites-team/suites.yaml``
    holding ``suites_yaml`` and no ``EMPATH_*`` variable set; returns ``tmp_path``."""
    team = tmp_path / "suites-team"
    team.mkdir()
    (team / "suites.yaml").write_text(suites_yaml, encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    for key in [k for k in os.environ if k.startswith("EMPATH_")]:
        monkeypatch.delenv(key)
    return tmp_path


def run_callable(
    folder: Path, module: str, source: str, suite: str, *,
    thresholds_extra: str | None = None, judge_env: Mapping[str, str] | None = None,
) -> Results:
    """Write ``source`` to ``folder/<module>.py`` and run suite ``suite`` of ``folder``'s
    ``suites-team`` layer against ``py:<module>:reply``, one run per conversation, the cache in
    ``folder/cache``. ``thresholds_extra`` (YAML text) is appended to the shipped
    ``thresholds.yaml`` in ``folder/thresholds.yaml``, which the run then uses. Offline unless
    ``judge_env`` (environment variables naming a judge) is given; ``CI`` is unset either way (a
    judged run with the scripted auditor is a local run: CI=true would demand an auditor model).
    Returns the evaluated results."""
    (folder / f"{module}.py").write_text(source, encoding="utf-8")
    overrides: dict[str, object] = {
        "target": f"py:{module}:reply", "offline": judge_env is None, "runs": 1,
        "suites_dirs": (folder / "suites-team",), "cache_dir": folder / "cache",
    }
    if thresholds_extra is not None:
        path = folder / "thresholds.yaml"
        path.write_text(SHIPPED_THRESHOLDS.read_text(encoding="utf-8") + thresholds_extra, encoding="utf-8")
        overrides["thresholds"] = path
    with pytest.MonkeyPatch.context() as mp:
        mp.delenv("CI", raising=False)
        for key, value in (judge_env or {}).items():
            mp.setenv(key, value)
        settings = load_settings(overrides=overrides)
        setup = prepare(settings, [suite])
        return evaluate_run(setup, run_plan(setup))
