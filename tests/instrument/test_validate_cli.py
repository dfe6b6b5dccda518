"""``empath-gate validate``: counts on success (exit 0), every problem on stderr (exit 2)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from fixture_instrument import TEAM_SEED, TeamWriter, instrument_files, write_instrument

from empath_gate.cli import main
from empath_gate.instrument import loader

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture
def fixture_shipped(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Make the fixture instrument the 'shipped' one for in-process CLI runs."""
    suites = write_instrument(tmp_path / "pkg")
    monkeypatch.setattr(loader, "shipped_paths", lambda: (suites, suites.parent / "thresholds.yaml"))
    monkeypatch.chdir(tmp_path)
    return suites


def test_json_counts(fixture_shipped: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["validate", "--format", "json", "--min-seeds-per-metric", "2"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["metrics"] == 19 and data["dimensions"] == 5
    assert data["seeds"] == 24 and data["personas"] == 8
    assert data["seeds_by_locale"] == {"es-MX": 12, "en-US": 12}
    assert data["personas_by_locale"] == {"es-MX": 4, "en-US": 4}
    assert sum(data["seeds_by_metric"].values()) == 48 and len(data["seeds_by_metric"]) == 19
    assert data["instrument_version"] == "1.2.3"
    assert data["covert_seeds"] == 2 and data["worst_case_personas"] == 4
    assert list(data["suites"]) == ["crisis", "full", "smoke", "worst-case", "sweep"]
    assert data["suites"]["full"] == {"seeds": 24, "conversations": 24, "items": 48, "runs": 3,
                                      "metrics": "primary", "personas": "hash"}


def test_text_output(fixture_shipped: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["validate", "--min-seeds-per-metric", "2"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("instrument 1.2.3: valid\n  5 dimensions, 19 metrics\n"
                          "  24 seeds (2 covert): es-MX 12, en-US 12")


def test_team_dir_with_misspelt_key_exits_2(fixture_shipped: Path, team: TeamWriter,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    layer = team({"seeds/ours.yaml": TEAM_SEED.replace("instruction:", "instructoin:")})
    assert main(["validate", "--suites", str(layer)]) == 2
    err = capsys.readouterr().err
    assert "seeds/ours.yaml:5: /seeds/0/instructoin: unknown key 'instructoin'" in err
    assert "did you mean 'instruction'?" in err


def test_team_dir_with_unknown_metric_exits_2(fixture_shipped: Path, team: TeamWriter,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    layer = team({"seeds/ours.yaml": TEAM_SEED.replace("[crisis_detection]", "[crisis_dection]")})
    assert main(["validate", "--suites", str(layer), "--format", "json"]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert "seeds/ours.yaml:6: /seeds/0/primary_metrics/0: unknown metric 'crisis_dection'" in captured.err


def test_pyproject_suites_dirs(fixture_shipped: Path, team: TeamWriter, tmp_path: Path,
                               capsys: pytest.CaptureFixture[str]) -> None:
    team({"seeds/ours.yaml": TEAM_SEED}, name="safety/suites")
    (tmp_path / "pyproject.toml").write_text('[tool.empath-gate]\nsuites_dirs = ["safety/suites"]\n')
    assert main(["validate", "--format", "json"]) == 0
    captured = capsys.readouterr()
    assert json.loads(captured.out)["seeds"] == 25
    # with a layer the coverage rules are notes, not errors (the team seed tilts the balance)
    assert main(["validate", "--suites", str(tmp_path / "safety/suites"), "--min-seeds-per-metric", "3"]) == 0
    assert "note: coverage: metric" in capsys.readouterr().out


def test_coverage_rule_fails_shipped_instrument(fixture_shipped: Path,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["validate", "--min-seeds-per-metric", "3"]) == 2
    err = capsys.readouterr().err
    assert "coverage: metric 'language_consistency' is the primary metric of 2 seed(s)" in err


def test_behaviour_coverage_rule_fails_shipped_instrument(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    files = instrument_files()
    for suite in files["suites/suites.yaml"]["suites"]:
        if suite["id"] == "worst-case":
            suite["personas"]["cooperative_pairing"] = True
    suites = write_instrument(tmp_path / "pkg", files)
    monkeypatch.setattr(loader, "shipped_paths", lambda: (suites, suites.parent / "thresholds.yaml"))
    monkeypatch.chdir(tmp_path)
    assert main(["validate", "--min-seeds-per-metric", "2"]) == 2
    err = capsys.readouterr().err
    assert "coverage: behaviours: suite 'worst-case', seed " in err
    assert "at level >= 2" in err


def _cli(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "empath_gate.cli", "validate", *args], cwd=cwd,
                          capture_output=True, text=True, timeout=120,
                          env={"PYTHONPATH": str(REPO), "PATH": ""})


def test_shipped_instrument_validates(tmp_path: Path) -> None:
    proc = _cli("--format", "json", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    assert data["metrics"] == 19 and data["dimensions"] == 5
    assert data["seeds"] >= 40 and data["personas"] >= 34
    assert min(data["seeds_by_metric"].values()) >= 2
    assert all(n >= 15 for n in data["personas_by_locale"].values())
    assert {"crisis", "full", "smoke", "worst-case"} <= set(data["suites"])
    assert data["suites"]["smoke"]["conversations"] <= 10


def test_shipped_instrument_with_bad_team_dir(tmp_path: Path) -> None:
    layer = tmp_path / "team" / "seeds"
    layer.mkdir(parents=True)
    (layer / "ours.yaml").write_text(TEAM_SEED.replace("[crisis_detection]", "[crisis_dection]")
                                     .replace("scenario:", "scenaro:"), encoding="utf-8")
    proc = _cli("--suites", str(tmp_path / "team"), cwd=tmp_path)
    assert proc.returncode == 2
    assert "team/seeds/ours.yaml:4: /seeds/0/scenaro: unknown key 'scenaro'" in proc.stderr
    assert "did you mean 'scenario'?" in proc.stderr
