"""The CLI's share of the option table: ``--<flag>`` arguments for a command, and the settings
they give (:mod:`empath_gate.settings.options` declares every one of them)."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING, Any

from empath_gate.settings.options import for_command, option_names

if TYPE_CHECKING:
    from empath_gate.settings.model import Settings


_TYPES: dict[str, Any] = {"int": int, "float": float, "path": Path, "paths": Path}
"""argparse conversions of the table's kinds (argparse then names a bad value itself)."""


def add_setting_arguments(parser: argparse.ArgumentParser, command: str) -> None:
    """Add every option the table gives ``command``, plus ``--pyproject``."""
    for o in for_command(command):
        dest, flag = f"opt_{o.key}", f"--{o.flag}"
        kw: dict[str, Any] = {"dest": dest, "default": None, "help": o.help}
        if o.kind == "bool":
            parser.add_argument(flag, action="store_true", **kw)
            continue
        if o.kind in _TYPES:
            kw["type"] = _TYPES[o.kind]
        if o.metavar:
            kw["metavar"] = o.metavar
        if o.choices:
            kw["choices"] = o.choices
        if o.repeatable:
            kw["action"] = "append"
        if command in o.required_by:
            kw["required"] = True
        if o.aliases:
            group = parser.add_mutually_exclusive_group()
            for a in o.aliases:
                group.add_argument(
                    f"--{a.flag}", dest=dest, action="store_const", const=a.value, default=None, help=a.help
                )
            continue
        parser.add_argument(flag, **kw)
    parser.add_argument(
        "--pyproject",
        type=Path,
        default=Path("pyproject.toml"),
        metavar="PATH",
        help="pyproject.toml holding [tool.empath-gate] (default ./pyproject.toml)",
    )


def given(args: argparse.Namespace, key: str) -> Any:
    """The value of the option for setting/selection ``key`` on this command line (None: not given)."""
    return getattr(args, f"opt_{key}", None)


def setting_overrides(args: argparse.Namespace, command: str) -> dict[str, object]:
    """The settings given on the command line, as :func:`~empath_gate.settings.load.load_settings`
    overrides (selection options such as ``--suite`` are not settings and are left out)."""
    out: dict[str, object] = {}
    for o in for_command(command):
        if o.scope != "setting":
            continue
        value = given(args, o.key)
        if value is None or value is False:
            continue
        out[o.key] = value
    return out


def load_command_settings(args: argparse.Namespace, command: str, **extra: object) -> Settings:
    """Settings for ``command``: ``--pyproject`` < ``EMPATH_*`` < its options < ``extra``. A bad
    value's error names the option as typed (``--max-cost``), not the setting key."""
    from empath_gate.errors import ConfigError
    from empath_gate.settings.load import load_settings

    overrides = setting_overrides(args, command)
    overrides.update({k: v for k, v in extra.items() if v is not None})
    try:
        return load_settings(pyproject=args.pyproject, overrides=overrides)
    except ConfigError as exc:
        raise ConfigError(name_options(str(exc), option_names("cli"))) from None


def name_options(message: str, names: dict[str, str]) -> str:
    """``message`` with ``option 'key'`` replaced by the flag the user typed (``--runs``)."""
    for key, flag in names.items():
        message = message.replace(f"option {key!r}", flag)
    return message


def split_suites(values: list[str] | None) -> list[str]:
    """``--suite a,b --suite c`` -> ``["a", "b", "c"]``."""
    return [s.strip() for v in values or () for s in str(v).split(",") if s.strip()]
