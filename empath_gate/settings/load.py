"""Loading settings: ``[tool.empath-gate]`` < ``EMPATH_*`` environment < options.

Precedence, lowest first (:func:`load_settings`):

1. ``[tool.empath-gate]`` in ``pyproject.toml`` (relative paths are relative to that file);
2. environment variables ``EMPATH_<KEY>`` (``<KEY>`` = the setting name upper-cased;
   ``EMPATH_TARGET_MODEL`` is accepted for ``EMPATH_TARGET``);
3. ``overrides`` (command-line or pytest options, keyed by setting name; ``None`` is ignored).

The keys and their kinds are the option table's (:mod:`empath_gate.settings.options`); role
settings are ``<role>_<field>`` (``auditor_model``, ``judge_api_base``, ``target_max_tokens``…),
and ``max_retries``, ``request_timeout_s``, ``retry_base_delay_s`` and ``retry_max_delay_s``
give every role's field a default. HTTP-target headers are not settings: they are read at call
time from ``EMPATH_TARGET_HEADERS`` / ``EMPATH_TARGET_HEADER_<NAME>`` (they often hold
credentials).

Secrets: loading registers the secrets of the environment (header values, credential-looking
variables, :mod:`empath_gate.secrets`) so every output takes them out, and refuses a target URL
or ``<role>_api_base`` that carries user-info (``http://user:password@host``): a credential in
a URL is shown wherever the URL is, so it is a configuration error at start.
"""

from __future__ import annotations

import difflib
import json
import os
import re
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from empath_gate.bounded import InputLimits, configure_limits
from empath_gate.errors import ConfigError
from empath_gate.secrets import redact_url, register, register_environment, url_userinfo
from empath_gate.settings.model import ROLES, RoleSettings, Settings, is_secret_name
from empath_gate.settings.options import GLOBAL_ROLE_DEFAULTS, KEY_ALIASES, SETTING_KINDS, Kind, env_names

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib  # type: ignore[import-not-found,unused-ignore]

KNOWN_KEYS: dict[str, str] = dict(SETTING_KINDS)
"""Every setting name (file key / option name) and its kind; env var = ``EMPATH_`` + upper."""
_ROLE_FIELDS = frozenset(f for f in RoleSettings.model_fields if f != "api_key")

_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off", ""}


def convert(value: object, kind: Kind, source: str, key: str, base_dir: Path | None) -> object:
    """Convert a raw file/env/option value to the type of ``kind``; ConfigError naming ``source``."""

    def bad(expected: str) -> ConfigError:
        return ConfigError(f"{source}: {value!r} is not {expected}; fix the value of {key!r}")

    if kind == "str":
        if not isinstance(value, str):
            raise bad("a string")
        return value
    if kind == "int":
        if isinstance(value, bool):
            raise bad("an integer")
        if isinstance(value, int):
            return value
        if isinstance(value, str) and re.fullmatch(r"\s*-?\d+\s*", value):
            return int(value)
        raise bad("an integer")
    if kind == "float":
        if isinstance(value, bool):
            raise bad("a number")
        if isinstance(value, (int, float)):
            return float(value)
        if isinstance(value, str):
            try:
                return float(value)
            except ValueError:
                raise bad("a number") from None
        raise bad("a number")
    if kind == "bool":
        if isinstance(value, bool):
            return value
        if isinstance(value, str) and value.strip().lower() in _TRUE | _FALSE:
            return value.strip().lower() in _TRUE
        raise bad("true or false")
    if kind == "path":
        if not isinstance(value, (str, os.PathLike)):
            raise bad("a path")
        p = Path(value)
        return base_dir / p if base_dir is not None and not p.is_absolute() else p
    if kind == "paths":
        items: list[object]
        if isinstance(value, str):
            items = [s for s in value.split(os.pathsep) if s]
        elif isinstance(value, (list, tuple)):
            items = list(value)
        else:
            raise bad(f"a list of paths (or a string separated by {os.pathsep!r})")
        return tuple(convert(i, "path", source, key, base_dir) for i in items)
    # json
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except json.JSONDecodeError as exc:
            raise ConfigError(f"{source}: not a JSON object ({exc}); fix the value of {key!r}") from None
    if not isinstance(value, dict):
        raise bad("a table / JSON object")
    return value


def _check_key(key: str, source: str) -> str:
    if is_secret_name(key) and key not in KNOWN_KEYS:
        raise ConfigError(
            f"{source}: {key!r} looks like a credential. API keys are never settings: export the "
            "provider's standard variable (e.g. OPENAI_API_KEY) instead, and remove this entry"
        )
    key = KEY_ALIASES.get(key, key)
    if key not in KNOWN_KEYS:
        close = difflib.get_close_matches(key, list(KNOWN_KEYS), n=1)
        hint = f" (did you mean {close[0]!r}?)" if close else ""
        raise ConfigError(f"{source}: unknown setting {key!r}{hint}; see empath_gate.settings for the list")
    return key


def _read_pyproject(path: Path) -> dict[str, Any]:
    try:
        with path.open("rb") as fh:
            doc = tomllib.load(fh)
    except FileNotFoundError:
        return {}
    except (tomllib.TOMLDecodeError, OSError) as exc:
        raise ConfigError(f"{path}: cannot read it as TOML ({exc}); fix the file") from None
    tool = doc.get("tool", {})
    section = tool.get("empath-gate", {}) if isinstance(tool, dict) else {}
    if not isinstance(section, dict):
        raise ConfigError(f"{path}: [tool.empath-gate] must be a table")
    return section


def load_settings(
    *,
    pyproject: Path | None = Path("pyproject.toml"),
    env: Mapping[str, str] = os.environ,
    overrides: Mapping[str, object] | None = None,
) -> Settings:
    """Merge ``[tool.empath-gate]`` < ``EMPATH_*`` environment < ``overrides`` into Settings.

    ``pyproject=None`` or a missing file skips the file layer. Keys in the file and in
    ``overrides`` use the names of the module table (``target_model`` is accepted for
    ``target``); ``None`` override values are ignored. Raises :class:`ConfigError` naming the
    file key, environment variable or option at fault and how to fix it (unknown key with a
    suggestion, wrong type, out-of-range value, a credential in the file).
    The input limits (``max_yaml_bytes``...) of the result become the ones every reader uses
    (:func:`empath_gate.bounded.configure_limits`).
    """
    values: dict[str, object] = {}
    sources: dict[str, str] = {}

    def put(raw_key: str, value: object, source: str, base_dir: Path | None) -> None:
        key = _check_key(raw_key, source)
        values[key] = convert(value, SETTING_KINDS[key], source, key, base_dir)
        sources[key] = source

    if pyproject is not None:
        section = _read_pyproject(pyproject)
        base = pyproject.parent
        for k, v in section.items():
            put(str(k), v, f"{pyproject} [tool.empath-gate] key {k!r}", base)

    names = env_names()
    if (
        "EMPATH_TARGET" in env
        and "EMPATH_TARGET_MODEL" in env
        and env["EMPATH_TARGET"] != env["EMPATH_TARGET_MODEL"]
    ):
        raise ConfigError("EMPATH_TARGET and EMPATH_TARGET_MODEL disagree; set only one of them")
    for name in sorted(names):
        if name in env:
            put(names[name], env[name], f"environment variable {name}", None)

    for k, v in (overrides or {}).items():
        if v is not None:
            put(str(k), v, f"option {k!r}", None)

    register_environment(env)
    _refuse_userinfo(values, sources)
    settings = _build(values, sources)
    configure_limits(InputLimits(**{k: getattr(settings, k) for k in InputLimits.model_fields}))
    register(
        rs.api_key.get_secret_value() for rs in (settings.target_role, settings.auditor, settings.judge)
        if rs.api_key is not None
    )
    return settings


def _refuse_userinfo(values: Mapping[str, object], sources: Mapping[str, str]) -> None:
    """ConfigError when the target or a role's ``api_base`` URL carries user-info (the message
    shows the URL without it)."""
    for key in ("target", *(f"{r}_api_base" for r in ROLES)):
        url = values.get(key)
        if isinstance(url, str) and url_userinfo(url):
            raise ConfigError(
                f"{sources.get(key, key)}: the URL {redact_url(url)} carries user-info (user:password@); "
                "a credential in a URL ends up wherever the URL is shown: remove it and send it as "
                "a header instead (EMPATH_TARGET_HEADER_AUTHORIZATION for an HTTP target, the "
                "provider's key variable for a model)"
            )


def _build(values: dict[str, object], sources: dict[str, str]) -> Settings:
    roles: dict[str, dict[str, object]] = {r: {} for r in ROLES}
    role_sources: dict[tuple[str, str], str] = {}
    top: dict[str, object] = {}
    for key, value in values.items():
        if key in GLOBAL_ROLE_DEFAULTS:
            continue
        role, _, fld = key.partition("_")
        if role in ROLES and fld in _ROLE_FIELDS and key not in Settings.model_fields:
            roles[role][fld] = value
            role_sources[(role, fld)] = sources[key]
        else:
            top[key] = value
    for gkey, fld in GLOBAL_ROLE_DEFAULTS.items():
        if gkey in values:
            for role in ROLES:
                if fld not in roles[role]:
                    roles[role][fld] = values[gkey]
                    role_sources[(role, fld)] = sources[gkey]
    for role in ("auditor", "judge"):
        model = roles[role].get("model")
        if isinstance(model, str) and model.strip().lower() in ("", "scripted", "none", "off"):
            roles[role]["model"] = None
    if "temperature" not in roles["judge"]:
        roles["judge"]["temperature"] = 0.0

    role_objs: dict[str, RoleSettings] = {}
    for role in ROLES:
        try:
            role_objs[role] = RoleSettings(**roles[role])  # type: ignore[arg-type,unused-ignore]
        except ValidationError as exc:
            err = exc.errors()[0]
            fld = str(err["loc"][0]) if err["loc"] else "?"
            src = role_sources.get((role, fld), f"{role}_{fld}")
            raise ConfigError(f"{src}: {err['msg']}; fix {role}_{fld}") from None
    try:
        return Settings(
            target_role=role_objs["target"],
            auditor=role_objs["auditor"],
            judge=role_objs["judge"],
            **top,  # type: ignore[arg-type,unused-ignore]
        )
    except ValidationError as exc:
        err = exc.errors()[0]
        fld = str(err["loc"][0]) if err["loc"] else "?"
        src = sources.get(fld, fld)
        raise ConfigError(f"{src}: {err['msg']}; fix {fld}") from None
