"""The one option table: README, action.yml, the plugin and the CLI agree with it."""

from __future__ import annotations

import argparse
import re
from pathlib import Path

import pytest
import yaml

from empath_gate.commands.options import add_setting_arguments
from empath_gate.settings.load import KNOWN_KEYS, load_settings
from empath_gate.settings.options import OPTIONS, action_inputs, env_names, for_command, readme_table

ROOT = Path(__file__).resolve().parents[1]


def test_readme_shows_the_generated_settings_table() -> None:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    block = text.split("<!-- settings-table:start -->\n", 1)[1].split("<!-- settings-table:end -->", 1)[0]
    assert block == readme_table(), "README's settings table is stale: python -m empath_gate.settings.options"
    for o in OPTIONS:
        if o.readme and o.scope != "action":
            assert f"| `{o.key}` |" in block or f"| ({o.key}) |" in block, o.key


def test_every_action_input_is_a_table_row_and_every_row_marked_for_the_action_has_an_input() -> None:
    action = yaml.safe_load((ROOT / "action.yml").read_text(encoding="utf-8"))
    inputs = set(action["inputs"])
    table = {o.action for o in action_inputs()}
    assert inputs == table, f"only in action.yml: {inputs - table}; only in the table: {table - inputs}"


def test_the_plugin_defines_exactly_the_table_options(pytestconfig: pytest.Config) -> None:
    known = {
        name
        for group in pytestconfig._parser._groups
        if group.name == "empath-gate"
        for opt in group.options
        for name in opt.names()
    }
    expected: set[str] = set()
    for o in OPTIONS:
        if not o.pytest:
            continue
        if o.aliases:
            expected.update(f"--empath-{a.flag}" for a in o.aliases)
        else:
            assert o.pytest_flag is not None
            expected.add(o.pytest_flag)
    assert known == expected
    inis = set(pytestconfig._parser._inidict)
    assert {o.ini_key for o in OPTIONS if o.pytest and not o.aliases} <= inis


@pytest.mark.parametrize("command", ["run", "gate", "merge", "diff", "report", "comment", "rejudge"])
def test_each_command_takes_its_table_rows(command: str) -> None:
    parser = argparse.ArgumentParser()
    add_setting_arguments(parser, command)
    flags = {f for a in parser._actions for f in a.option_strings}
    for o in for_command(command):
        names = [f"--{a.flag}" for a in o.aliases] if o.aliases else [f"--{o.flag}"]
        assert set(names) <= flags, (command, o.key)


def test_every_setting_has_an_environment_variable_and_a_file_key(tmp_path: Path) -> None:
    names = env_names()
    for key in KNOWN_KEYS:
        assert f"EMPATH_{key.upper()}" in names
    pyproject = tmp_path / "pyproject.toml"
    pyproject.write_text(
        '[tool.empath-gate]\nruns = 4\nfail_on = "never"\njudge_model = "x/y"\n', encoding="utf-8"
    )
    s = load_settings(pyproject=pyproject, env={"EMPATH_MAX_COST_USD": "2"})
    assert (s.runs, s.fail_on, s.judge.model, s.max_cost_usd) == (4, "never", "x/y", 2.0)


def test_the_readme_documents_the_cli_flags_the_table_gives_run() -> None:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    for o in for_command("run"):
        if o.readme and not o.aliases:
            assert re.search(rf"`--{re.escape(str(o.flag))}`", text), o.flag
