"""The one option table: every setting, selection option and Action input, declared once.

:data:`OPTIONS` is built from the field declarations of :class:`~.model.Settings` and
:class:`~.model.RoleSettings` (see :func:`~.model.opt`), plus the plan selection (suites, shard)
and the few inputs only the GitHub Action has. Everything a front-end shows is generated from it:

* pytest: ``--empath-<flag>`` and the ini key ``empath_<flag>`` (``-`` as ``_``), by
  :mod:`empath_gate.pytest_plugin.options`;
* the CLI: ``--<flag>`` on the commands listed, by :mod:`empath_gate.cli.options`;
* the environment: ``EMPATH_<KEY>`` for every setting (:func:`env_names`);
* ``[tool.empath-gate]`` in ``pyproject.toml``: the setting keys (:data:`SETTING_KINDS`);
* the Action: each input's pytest argument (:func:`empath_gate.github.context.action_args`);
* README's settings table (:func:`readme_table`; a test keeps README equal to it).
"""

from __future__ import annotations

import types
import typing
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from empath_gate.settings.model import OPTION_KEY, ROLES, RoleSettings, Settings

Kind = Literal["str", "int", "float", "bool", "path", "paths", "json", "list"]
Scope = Literal["setting", "selection", "action"]


@dataclass(frozen=True)
class Alias:
    """A switch that sets its option to ``value`` (``--no-cache`` -> ``cache_mode = "off"``)."""

    flag: str
    value: str
    help: str


@dataclass(frozen=True)
class OptionSpec:
    """One row of the option table.

    ``key``: the setting name (the ``[tool.empath-gate]`` key; ``EMPATH_<KEY>`` in the
    environment when ``scope`` is ``setting``). ``kind``: how raw text converts
    (:func:`empath_gate.settings.load.convert`). ``flag``: the option name without dashes, or
    None when no command line shows it. ``commands``: CLI commands taking ``--<flag>``;
    ``pytest``: the plugin takes ``--empath-<flag>``; ``action``: the Action input setting it.
    ``scope``: ``setting`` (a :class:`Settings` field), ``selection`` (what to run: suites,
    shard) or ``action`` (an input only the composite Action reads). ``readme``: listed in
    README's settings table.
    """

    key: str
    kind: Kind
    default: Any
    help: str
    scope: Scope = "setting"
    flag: str | None = None
    commands: tuple[str, ...] = ()
    pytest: bool = False
    action: str | None = None
    metavar: str | None = None
    choices: tuple[str, ...] = ()
    aliases: tuple[Alias, ...] = ()
    repeatable: bool = False
    required_by: tuple[str, ...] = ()
    readme: bool = True

    @property
    def pytest_flag(self) -> str | None:
        """``--empath-<flag>`` when the plugin takes it."""
        return f"--empath-{self.flag}" if self.flag and self.pytest else None

    @property
    def ini_key(self) -> str | None:
        """The pytest ini key (``empath_fail_on``), named like the option's dest."""
        return f"empath_{self.flag.replace('-', '_')}" if self.flag and self.pytest else None

    @property
    def cli_flag(self) -> str | None:
        """``--<flag>`` when a CLI command takes it."""
        return f"--{self.flag}" if self.flag and self.commands else None

    @property
    def env(self) -> str | None:
        """``EMPATH_<KEY>`` for a setting."""
        return f"EMPATH_{self.key.upper()}" if self.scope == "setting" else None


def _kind(annotation: Any) -> tuple[Kind, tuple[str, ...]]:
    """The conversion kind and the choices (for Literal types) of a field annotation."""
    args = typing.get_args(annotation)
    origin = typing.get_origin(annotation)
    if origin in (typing.Union, types.UnionType):
        inner = [a for a in args if a is not type(None)]
        return _kind(inner[0])
    if origin is Literal:
        return "str", tuple(str(a) for a in args)
    if origin is tuple:
        return "paths", ()
    if origin is dict or annotation is dict:
        return "json", ()
    simple: dict[Any, Kind] = {str: "str", int: "int", float: "float", bool: "bool", Path: "path"}
    if annotation in simple:
        return simple[annotation], ()
    raise TypeError(f"no option kind for {annotation!r}")  # pragma: no cover - a new field type


def _declared(field: Any) -> dict[str, Any]:
    extra = field.json_schema_extra if isinstance(field.json_schema_extra, dict) else {}
    decl = extra.get(OPTION_KEY)
    return decl if isinstance(decl, dict) else {}


def _setting_specs() -> list[OptionSpec]:
    out: list[OptionSpec] = []
    for key, field in Settings.model_fields.items():
        if key in ("target_role", "auditor", "judge"):
            continue
        kind, choices = _kind(field.annotation)
        d = _declared(field)
        out.append(
            OptionSpec(
                key=key,
                kind=kind,
                default=field.default,
                help=field.description or "",
                flag=d.get("flag"),
                commands=tuple(d.get("commands", ())),
                pytest=bool(d.get("pytest")),
                action=d.get("action"),
                metavar=d.get("metavar"),
                choices=choices,
                repeatable=kind == "paths",
                aliases=tuple(Alias(*a) for a in d.get("aliases", ())),
            )
        )
    return out


ROLE_FLAGS: dict[str, dict[str, Any]] = {
    "auditor_model": {
        "flag": "auditor",
        "commands": ("run",),
        "pytest": True,
        "action": "auditor",
        "metavar": "MODEL",
        "help": "auditor model (unset: the scripted auditor)",
    },
    "judge_model": {
        "flag": "judge",
        "commands": ("run", "rejudge"),
        "pytest": True,
        "action": "judge",
        "metavar": "MODEL",
        "help": "judge model (unset: deterministic criteria only)",
    },
    "judge_api_base": {"flag": "api-base", "commands": ("rejudge",), "metavar": "URL"},
}
"""The role settings a command line shows (every other role field is file- or env-only)."""

GLOBAL_ROLE_DEFAULTS: dict[str, str] = {
    "max_retries": "max_retries",
    "request_timeout_s": "timeout_s",
    "retry_base_delay_s": "retry_base_delay_s",
    "retry_max_delay_s": "retry_max_delay_s",
}
"""Settings that give every role's field a default (key -> RoleSettings field)."""


def _role_specs() -> list[OptionSpec]:
    out: list[OptionSpec] = []
    for key, fld in GLOBAL_ROLE_DEFAULTS.items():
        field = RoleSettings.model_fields[fld]
        kind, _ = _kind(field.annotation)
        out.append(
            OptionSpec(
                key=key,
                kind=kind,
                default=field.default,
                help=f"default of every role's {fld}: {field.description}",
                readme=False,
            )
        )
    for role in ROLES:
        for fld, field in RoleSettings.model_fields.items():
            if fld == "api_key" or (role == "target" and fld == "model"):
                continue
            key = f"{role}_{fld}"
            kind, choices = _kind(field.annotation)
            default = 0.0 if key == "judge_temperature" else field.get_default(call_default_factory=True)
            extra = dict(ROLE_FLAGS.get(key, {}))
            help_text = extra.pop("help", None) or f"{role}: {field.description}"
            out.append(
                OptionSpec(
                    key=key,
                    kind=kind,
                    default=default,
                    help=help_text,
                    choices=choices,
                    readme=key in ROLE_FLAGS or fld in ("model", "api_base"),
                    **extra,
                )
            )
    return out


SELECTION: tuple[OptionSpec, ...] = (
    OptionSpec(
        key="suites",
        kind="list",
        default=(),
        scope="selection",
        flag="suite",
        commands=("run",),
        pytest=True,
        action="suite",
        metavar="NAME",
        repeatable=True,
        required_by=("run",),
        help="suite to run (repeatable or comma-separated), e.g. crisis, smoke, full",
    ),
    OptionSpec(
        key="shard",
        kind="str",
        default=None,
        scope="selection",
        flag="shard",
        commands=("run",),
        pytest=True,
        action="shard",
        metavar="K/N",
        help="run shard K of N (a deterministic partition by conversation)",
    ),
)
"""What to run: not settings (no file key, no environment variable)."""

ACTION_ONLY: tuple[OptionSpec, ...] = (
    OptionSpec(
        key="baseline_workflow",
        kind="str",
        default="nightly.yml",
        scope="action",
        action="baseline-workflow",
        help="workflow file whose artifact `baseline` names",
    ),
    OptionSpec(
        key="comment",
        kind="bool",
        default=True,
        scope="action",
        action="comment",
        help="post or update the sticky pull-request comment",
    ),
    OptionSpec(
        key="fork_pr",
        kind="str",
        default="skip",
        scope="action",
        action="fork-pr",
        help="what a pull request from a fork (no secrets) does",
    ),
    OptionSpec(
        key="python_version",
        kind="str",
        default="3.11",
        scope="action",
        action="python-version",
        help="the Python the Action installs",
    ),
    OptionSpec(
        key="github_token",
        kind="str",
        default="${{ github.token }}",
        scope="action",
        action="github-token",
        help="token for the comment and the baseline artifact",
    ),
)
"""Inputs only the composite Action reads (steps of action.yml, not the tool's settings)."""

OPTIONS: tuple[OptionSpec, ...] = (*_setting_specs(), *_role_specs(), *SELECTION, *ACTION_ONLY)
"""The option table, in declaration order."""

SETTING_KINDS: dict[str, Kind] = {o.key: o.kind for o in OPTIONS if o.scope == "setting"}
"""Every setting key (``[tool.empath-gate]`` key, ``EMPATH_<KEY>``) and its kind."""

KEY_ALIASES: dict[str, str] = {"target_model": "target"}
"""Accepted spellings of a setting key in the file and the environment."""


def by_key(key: str) -> OptionSpec:
    """The row of ``key``; KeyError when there is none."""
    for o in OPTIONS:
        if o.key == key:
            return o
    raise KeyError(key)


def for_command(command: str) -> tuple[OptionSpec, ...]:
    """The rows a CLI command takes as ``--<flag>``, in table order."""
    return tuple(o for o in OPTIONS if command in o.commands)


def pytest_options() -> tuple[OptionSpec, ...]:
    """The rows the plugin takes as ``--empath-<flag>``."""
    return tuple(o for o in OPTIONS if o.pytest)


def action_inputs() -> tuple[OptionSpec, ...]:
    """The rows with an Action input, in table order."""
    return tuple(o for o in OPTIONS if o.action)


def env_names() -> dict[str, str]:
    """``EMPATH_<KEY>`` -> setting key, including the accepted alias ``EMPATH_TARGET_MODEL``."""
    names = {o.env: o.key for o in OPTIONS if o.env}
    names.update({f"EMPATH_{a.upper()}": k for a, k in KEY_ALIASES.items()})
    return names


def option_names(front_end: Literal["pytest", "cli"]) -> dict[str, str]:
    """Setting key -> the flag a user typed on that front-end (for error messages)."""
    out: dict[str, str] = {}
    for o in OPTIONS:
        flag = o.pytest_flag if front_end == "pytest" else o.cli_flag
        if flag:
            out[o.key] = flag
    return out


def _default_text(o: OptionSpec) -> str:
    if o.key == "suites":
        return "required"
    if o.default in (None, (), {}):
        return "unset"
    if isinstance(o.default, bool):
        return "true" if o.default else "false"
    return f"`{Path(o.default).as_posix() if isinstance(o.default, Path) else o.default}`"


def readme_table() -> str:
    """README's settings table (markdown): one row per user-facing option with its default, its
    ``[tool.empath-gate]`` key / environment variable, and its pytest, CLI and Action names."""
    rows = [
        "| setting | default | pytest | `empath-gate run` | Action input | what it does |",
        "| --- | --- | --- | --- | --- | --- |",
    ]
    for o in OPTIONS:
        if not o.readme or o.scope == "action":
            continue
        names = [f"`{o.pytest_flag}`" if o.pytest_flag and not o.aliases else ""]
        names.append(f"`{o.cli_flag}`" if o.cli_flag and "run" in o.commands and not o.aliases else "")
        for a in o.aliases:
            names[0] += f" `--empath-{a.flag}`"
            names[1] += f" `--{a.flag}`"
        key = f"`{o.key}`" if o.scope == "setting" else f"({o.key})"
        action = f"`{o.action}`" if o.action else ""
        what = o.help.replace("|", "\\|")
        rows.append(
            f"| {key} | {_default_text(o)} | {names[0].strip()} | {names[1].strip()} | {action} | {what} |"
        )
    return "\n".join(rows) + "\n"


if __name__ == "__main__":  # pragma: no cover - prints README's table
    print(readme_table(), end="")
