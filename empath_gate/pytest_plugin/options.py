"""The plugin's share of the option table: ``--empath-<flag>`` options with their ini twins, and
the settings they give (:mod:`empath_gate.settings.options` declares every one of them)."""

from __future__ import annotations

from typing import Any

import pytest

from empath_gate.settings.options import OptionSpec, option_names, pytest_options


def _ini_type(o: OptionSpec) -> str:
    if o.kind == "bool":
        return "bool"
    return "args" if o.repeatable else "string"


def add_options(parser: pytest.Parser) -> None:
    """One ``empath-gate`` group: every table row the plugin takes, each with an ini key."""
    group = parser.getgroup("empath-gate", "empath-gate safety gate for emotional-support chatbots")
    for o in pytest_options():
        if o.aliases:
            for a in o.aliases:
                dest = f"empath_{a.flag.replace('-', '_')}"
                group.addoption(
                    f"--empath-{a.flag}", dest=dest, action="store_true", default=None, help=a.help
                )
                parser.addini(dest, help=a.help, type="bool", default=None)
            continue
        assert o.pytest_flag is not None and o.ini_key is not None
        if o.kind == "bool":
            group.addoption(o.pytest_flag, dest=o.ini_key, action="store_true", default=None, help=o.help)
        elif o.repeatable:
            group.addoption(
                o.pytest_flag, dest=o.ini_key, action="append", default=None, help=o.help, metavar=o.metavar
            )
        else:
            group.addoption(o.pytest_flag, dest=o.ini_key, default=None, help=o.help, metavar=o.metavar)
        parser.addini(o.ini_key, help=o.help, type=_ini_type(o), default=None)  # type: ignore[arg-type]


def option(config: pytest.Config, dest: str) -> Any:
    """A plugin option: the command line wins over the ini value; None when neither is set."""
    value = config.getoption(dest, default=None)
    if value is None:
        try:
            value = config.getini(dest)
        except ValueError:
            value = None
        if value in ("", []):
            value = None
    return value


def selection(config: pytest.Config, key: str) -> Any:
    """The value of selection option ``key`` (``suites`` or ``shard``)."""
    for o in pytest_options():
        if o.key == key and o.ini_key:
            return option(config, o.ini_key)
    raise KeyError(key)  # pragma: no cover - a key the table does not have


def overrides(config: pytest.Config) -> dict[str, object]:
    """The settings given as plugin options or ini keys, keyed by setting name."""
    out: dict[str, object] = {}
    for o in pytest_options():
        if o.scope != "setting":
            continue
        if o.aliases:
            for a in o.aliases:
                if option(config, f"empath_{a.flag.replace('-', '_')}"):
                    out[o.key] = a.value
            continue
        assert o.ini_key is not None
        value = option(config, o.ini_key)
        if value is None or value is False:
            continue
        out[o.key] = value
    return out


def flag_names() -> dict[str, str]:
    """Setting key -> the plugin option that sets it (for error messages)."""
    return option_names("pytest")
