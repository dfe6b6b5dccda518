"""Every command README.md shows is one this project accepts.

The quickstart's two commands (make demo, make test) run in CI: .ci/run calls scripts/test
and scripts/demo. Here every `empath-gate ...` and `pytest ...` line of the README's shell
blocks is checked against the real parsers: the subcommand exists and each option it uses is
one the subcommand (or the pytest plugin) defines. Hosted-model commands cannot run offline;
this keeps them from drifting away from the code.
"""

from __future__ import annotations

import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

README = Path(__file__).resolve().parents[1] / "README.md"


def _shell_lines() -> list[str]:
    text = README.read_text(encoding="utf-8")
    lines: list[str] = []
    for block in re.findall(r"```bash\n(.*?)```", text, flags=re.S):
        for raw in block.splitlines():
            line = raw.split("#", 1)[0].strip()
            if line:
                lines.append(line)
    return lines


def _commands(prefix: str) -> list[list[str]]:
    out = []
    for line in _shell_lines():
        words = shlex.split(line)
        while words and "=" in words[0] and not words[0].startswith("-"):
            words = words[1:]  # leading VAR=value assignments
        if words[:1] == [prefix]:
            out.append(words)
    return out


def _help(args: list[str]) -> str:
    proc = subprocess.run(
        [sys.executable, "-m", "empath_gate.cli", *args, "--help"], capture_output=True, text=True, timeout=60
    )
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def test_the_readme_shows_the_two_quickstart_commands() -> None:
    lines = _shell_lines()
    assert lines[:2] == ["make demo", "make test"], "the quickstart starts with the two commands"
    assert "pytest --empath-suite crisis --empath-offline" in lines
    root = README.parent
    demo = (root / "scripts" / "demo").read_text(encoding="utf-8")
    assert "pytest --empath-suite crisis --empath-offline" in demo
    assert "-m pytest \"$@\"" in (root / "scripts" / "test").read_text(encoding="utf-8")
    make = (root / "Makefile").read_text(encoding="utf-8")
    assert "\tsh scripts/demo" in make and "\tsh scripts/test" in make
    ci = (root / ".ci" / "run").read_text(encoding="utf-8")
    assert "\nsh scripts/test\n" in ci and "\nsh scripts/demo\n" in ci


@pytest.mark.parametrize("words", _commands("empath-gate"), ids=lambda w: " ".join(w[:2]))
def test_every_empath_gate_command_in_the_readme_exists_with_its_options(words: list[str]) -> None:
    sub = words[1]
    helptext = _help([sub])
    for w in words[2:]:
        if w.startswith("--"):
            flag = w.split("=", 1)[0]
            assert flag in helptext, f"README uses {flag} with `empath-gate {sub}`, which does not define it"


def test_every_pytest_option_in_the_readme_exists(pytestconfig: pytest.Config) -> None:
    text = README.read_text(encoding="utf-8")
    used = sorted(set(re.findall(r"--empath-[a-z-]+", text)))
    assert used, "the README documents the plugin's options"
    known = {opt for group in pytestconfig._parser._groups for o in group.options for opt in o.names()}
    missing = [u for u in used if u not in known]
    assert not missing, f"README mentions options the plugin does not define: {missing}"


def test_the_readme_waiver_example_validates(tmp_path: Path) -> None:
    import datetime as dt

    from empath_gate.instrument.loader import load_instrument

    text = README.read_text(encoding="utf-8")
    [block] = [b for b in re.findall(r"```yaml\n(.*?)```", text, flags=re.S) if b.startswith("waivers:")]
    path = tmp_path / "waivers.yaml"
    path.write_text(block, encoding="utf-8")
    instrument = load_instrument(waivers_path=path, today=dt.date(2026, 11, 29))
    assert len(instrument.waivers) == 1
