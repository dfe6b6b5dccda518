"""Hostile instrument files end quickly with a usage error: a YAML alias bomb in a seed file, a
suites layer and waivers.yaml (CLI exit 2, pytest exit 4), an oversize file, an overlong value."""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
from pathlib import Path

import pytest

from empath_gate.testing.hostile_inputs import (
    ALIAS_BOMB,
    alias_bomb,
    minimal_seed_lines,
    minimal_seeds_fitting,
    realistic_seeds,
    seeds_yaml,
    write_layer,
)

REPO = Path(__file__).resolve().parents[2]

SEED = """seeds:
  - id: team-01
    locale: en-US
    scenario: team-scenario
    instruction: {instruction}
    primary_metrics: [crisis_detection]
    risk:
      level: none
    script:
      - I can't sleep again
      - it's the third night this week
"""

_MEMORY_CAP = 2 * 1024**3
"""Address-space cap of each child: an expanding bomb fails the test instead of the machine."""


def _limit_memory() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (_MEMORY_CAP, _MEMORY_CAP))


def _run(args: list[str], cwd: Path, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, *args], cwd=cwd, capture_output=True, text=True, timeout=90,
                          preexec_fn=_limit_memory,
                          env={"PYTHONPATH": str(REPO), "PATH": os.environ.get("PATH", ""), **env})


def _validate(cwd: Path, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    return _run(["-m", "empath_gate.cli", "validate", *args], cwd, **env)


def _collect(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return _run(["-m", "pytest", "--empath-suite", "smoke", "--collect-only", "-q", "-p", "no:cacheprovider",
                 *args], cwd)


def _layer(root: Path, rel: str, text: str) -> Path:
    path = root / "team" / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return root / "team"


@pytest.mark.parametrize(("rel", "text"),
                         [("seeds/bomb.yaml", ALIAS_BOMB), ("suites.yaml", alias_bomb("suites"))],
                         ids=["seed-file", "suites-layer"])
def test_alias_bomb_in_a_layer_is_a_usage_error(tmp_path: Path, rel: str, text: str) -> None:
    layer = _layer(tmp_path, rel, text)
    proc = _validate(tmp_path, "--suites", str(layer))
    assert proc.returncode == 2, proc.stderr
    assert f"{rel}:2: YAML anchor &a is not allowed" in proc.stderr
    assert "anchors and aliases are refused" in proc.stderr
    dry = _run(["-m", "empath_gate.cli", "run", "--suite", "smoke", "--dry-run", "--suites-dir", str(layer)],
               tmp_path)
    assert dry.returncode == 2, dry.stderr
    assert "YAML anchor &a is not allowed" in dry.stderr
    collected = _collect(tmp_path, "--empath-suites-dir", str(layer))
    assert collected.returncode == 4, collected.stdout + collected.stderr
    assert "YAML anchor &a is not allowed" in collected.stdout + collected.stderr


def test_alias_bomb_in_waivers_is_a_usage_error(tmp_path: Path) -> None:
    waivers = tmp_path / "waivers.yaml"
    waivers.write_text(alias_bomb("waivers"), encoding="utf-8")
    proc = _validate(tmp_path, "--waivers", str(waivers))
    assert proc.returncode == 2, proc.stderr
    assert "waivers.yaml:2: YAML anchor &a is not allowed" in proc.stderr
    collected = _collect(tmp_path, "--empath-waivers", str(waivers))
    assert collected.returncode == 4, collected.stdout + collected.stderr
    assert "YAML anchor &a is not allowed" in collected.stdout + collected.stderr


def test_an_alias_without_anchor_is_refused(tmp_path: Path) -> None:
    layer = _layer(tmp_path, "seeds/alias.yaml", "seeds: [*nowhere]\n")
    proc = _validate(tmp_path, "--suites", str(layer))
    assert proc.returncode == 2
    assert "seeds/alias.yaml:1: YAML alias *nowhere is not allowed" in proc.stderr


def test_oversize_file_and_overlong_value_name_the_file_and_the_limit(tmp_path: Path) -> None:
    # 4,599 characters once YAML drops the last space
    long_instruction = "You cannot sleep and ask what to do about it. " * 100
    padding = "# " + "x" * 150_000 + "\n"  # a file over 150,000 bytes, over no other limit
    layer = _layer(tmp_path, "seeds/long.yaml", SEED.format(instruction=long_instruction) + padding)
    proc = _validate(tmp_path, "--suites", str(layer), EMPATH_MAX_FIELD_CHARS="4000")
    assert proc.returncode == 2
    assert ("seeds/long.yaml:5: a value of 4,599 characters is over the limit max_field_chars = 4,000"
            in proc.stderr)
    assert _validate(tmp_path, "--suites", str(layer)).returncode == 0  # within the defaults
    proc = _validate(tmp_path, "--suites", str(layer), EMPATH_MAX_YAML_BYTES="150000")
    assert proc.returncode == 2
    assert "seeds/long.yaml: the file is 15" in proc.stderr
    assert "is over the limit max_yaml_bytes = 150,000" in proc.stderr
    assert "EMPATH_MAX_YAML_BYTES" in proc.stderr


def test_the_generated_large_layers_are_valid_without_seed_notes(tmp_path: Path) -> None:
    """The builders bench/bench_inputs.py times (small counts here): valid, and no two of their
    seeds share a scenario or a near-duplicate script."""
    layers = {"realistic": seeds_yaml(realistic_seeds(150)), "minimal": "".join(minimal_seed_lines(400))}
    for name, text in layers.items():
        layer = write_layer(tmp_path, name, text)
        proc = _validate(tmp_path, "--suites", str(layer), "--format", "json")
        assert proc.returncode == 0, proc.stderr
        notes = json.loads(proc.stdout)["notes"]
        assert not [n for n in notes if "near-duplicates" in n or "share scenario" in n], notes[:3]
    assert len("".join(minimal_seed_lines(minimal_seeds_fitting(3_000_000))).encode()) <= 3_000_000
    assert len("".join(minimal_seed_lines(minimal_seeds_fitting(3_000_000) + 1)).encode()) > 3_000_000


@pytest.mark.parametrize("layer", ["none", "bomb"])
def test_validate_imports_neither_litellm_nor_jsonschema_nor_scipy(tmp_path: Path, layer: str) -> None:
    args = [] if layer == "none" else ["--suites", str(_layer(tmp_path, "seeds/bomb.yaml", ALIAS_BOMB))]
    code = ("import sys; from empath_gate.cli import main; code = main(sys.argv[1:]); "
            "heavy = {'litellm', 'jsonschema', 'scipy'}; "
            "print(code, sorted({m.split('.')[0] for m in sys.modules} & heavy))")
    proc = _run(["-c", code, "validate", *args], tmp_path)
    assert proc.stdout.splitlines()[-1] == ("0 []" if layer == "none" else "2 []"), proc.stdout + proc.stderr


def test_validate_takes_the_limits_from_pyproject(tmp_path: Path) -> None:
    long_instruction = "You cannot sleep and ask what to do about it. " * 100
    layer = _layer(tmp_path, "seeds/long.yaml", SEED.format(instruction=long_instruction))
    (tmp_path / "pyproject.toml").write_text("[tool.empath-gate]\nmax_field_chars = 4000\n", encoding="utf-8")
    proc = _validate(tmp_path, "--suites", str(layer))
    assert proc.returncode == 2, proc.stderr
    assert "a value of 4,599 characters is over the limit max_field_chars = 4,000" in proc.stderr
    # the environment is above the file, as for every command
    assert _validate(tmp_path, "--suites", str(layer), EMPATH_MAX_FIELD_CHARS="5000").returncode == 0
    (tmp_path / "pyproject.toml").write_text("[tool.empath-gate]\nmax_field_chars = 0\n", encoding="utf-8")
    bad = _validate(tmp_path, "--suites", str(layer))
    assert bad.returncode == 2 and "max_field_chars" in bad.stderr


def test_at_most_50_problems_are_printed_and_json_carries_all(tmp_path: Path) -> None:
    seeds = "seeds:\n" + "".join(f"  - {{id: bad-{i:03d}}}\n" for i in range(120))
    layer = _layer(tmp_path, "seeds/many.yaml", seeds)
    text = _validate(tmp_path, "--suites", str(layer))
    assert text.returncode == 2
    shown = [line for line in text.stderr.splitlines() if "seeds/many.yaml:" in line]
    assert len(shown) == 50
    total = int(text.stderr.split(" problems found")[0].rsplit(" ", 1)[1])
    assert total > 120
    assert f"… and {total - 50} more problems" in text.stderr
    as_json = _validate(tmp_path, "--suites", str(layer), "--format", "json")
    assert as_json.returncode == 2 and as_json.stdout == ""
    doc = json.loads(as_json.stderr)
    assert doc["valid"] is False and len(doc["problems"]) == total


def test_run_and_pytest_print_at_most_50_problems(tmp_path: Path) -> None:
    seeds = "seeds:\n" + "".join(f"  - {{id: bad-{i:03d}}}\n" for i in range(120))
    layer = _layer(tmp_path, "seeds/many.yaml", seeds)
    dry = _run(["-m", "empath_gate.cli", "run", "--suite", "smoke", "--dry-run", "--suites-dir", str(layer)],
               tmp_path)
    assert dry.returncode == 2, dry.stderr
    assert len([line for line in dry.stderr.splitlines() if "seeds/many.yaml:" in line]) == 50
    assert " more problems (empath-gate validate --format json lists all)" in dry.stderr
    collected = _collect(tmp_path, "--empath-suites-dir", str(layer))
    out = collected.stdout + collected.stderr
    assert collected.returncode == 4
    assert len([line for line in out.splitlines() if "seeds/many.yaml:" in line]) == 50
    assert " more problems (empath-gate validate --format json lists all)" in out
