"""Settings: each role's model and parameters, the target, the cache, the budget.

Precedence, lowest first (``load_settings``):

1. ``[tool.empath-gate]`` in ``pyproject.toml`` (relative paths are relative to that file);
2. environment variables ``EMPATH_<KEY>`` (``<KEY>`` = the setting name upper-cased);
3. ``overrides`` (command-line or pytest options, same names as the file keys; ``None`` values
   are ignored).

Every setting has one flat name, the same in the file, in pytest ini options, and (upper-cased,
prefixed ``EMPATH_``) in the environment:

=========================  ==================================================================
key                        meaning
=========================  ==================================================================
``target``                 the target: ``py:pkg.mod:fn`` | ``http(s)://…`` | a litellm model
                           (env also ``EMPATH_TARGET_MODEL``; file also ``target_model``)
``target_system_prompt``   system-prompt file of a model target (its sha256 keys the cache)
``target_version``         version of a callable/HTTP target; enables caching their replies
``target_http_model``      ``model`` field sent to an HTTP target (default ``empath-target``)
``base_seed``              int; per-run seeds derive from it (default 0)
``runs``                   runs per conversation, overriding the suite's (``EMPATH_RUNS``)
``cache_dir``              default ``.empath-cache``
``cache_mode``             ``use`` | ``off`` | ``refresh``
``max_cost_usd``           budget: no new transcript starts once spent (> 0)
``synthetic_header``       header marking generated traffic to HTTP targets
``judge_rubric``           ``strict`` | ``standard``
``judge_granularity``      ``transcript`` | ``metric``
``judge_calibration``      path of the judge's calibration status (``calibrate``/``agreement
                           --save``), shown in the results (``empath_gate.calibration_status``)
``offline``                bool: scripted auditor, criteria-only judge
``strict_families``        bool: a judge of the auditor's model family is an error
``suites_dirs``            list of extra suite directories (env: ``os.pathsep``-separated)
``thresholds``, ``waivers``, ``baseline``, ``results``, ``transcripts_dir``: paths
``fail_on``                ``threshold`` | ``regression`` | ``both`` | ``never``
``concurrency``            transcripts generated at once (plan level, default 8)
``max_retries``, ``request_timeout_s``, ``retry_base_delay_s``, ``retry_max_delay_s``:
                           defaults for every role
``<role>_<field>``         role = ``target`` | ``auditor`` | ``judge``; field = ``model``
                           (not for target: use ``target``), ``temperature``, ``max_tokens``,
                           ``seed``, ``send_seed``, ``api_base``, ``extra`` (table / JSON
                           object of extra litellm parameters), ``concurrency``, ``timeout_s``,
                           ``max_retries``, ``retry_base_delay_s``, ``retry_max_delay_s``,
                           ``system_role`` (bool: does the model accept a system message)
=========================  ==================================================================

So the environment variables are ``EMPATH_TARGET``/``EMPATH_TARGET_MODEL``,
``EMPATH_TARGET_SYSTEM_PROMPT``, ``EMPATH_AUDITOR_MODEL``, ``EMPATH_JUDGE_MODEL``,
``EMPATH_AUDITOR_API_BASE``, ``EMPATH_JUDGE_TEMPERATURE``, ``EMPATH_RUNS``,
``EMPATH_MAX_COST_USD``, ``EMPATH_CACHE_DIR``, ``EMPATH_CACHE_MODE`` … one per key.
HTTP-target headers are not settings: they are read at call time from
``EMPATH_TARGET_HEADERS`` / ``EMPATH_TARGET_HEADER_<NAME>`` (they often hold credentials).

API keys are never settings: providers read them from their standard variables
(``OPENAI_API_KEY``, ``ANTHROPIC_API_KEY``…). A key-like name in the file or in ``extra``
is a :class:`ConfigError`. :meth:`RoleSettings.api_key` exists only for code that passes a key
explicitly (e.g. tests against the fake server); it is excluded from every dump.
"""

from __future__ import annotations

import difflib
import functools
import json
import os
import re
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal
from urllib.parse import urlsplit, urlunsplit

from pydantic import BaseModel, ConfigDict, Field, SecretStr, ValidationError, field_validator

from empath_gate.errors import ConfigError

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib  # type: ignore[import-not-found,unused-ignore]

ROLES: tuple[str, ...] = ("target", "auditor", "judge")
CacheMode = Literal["use", "off", "refresh"]

_SECRET_NAME = re.compile(
    r"(api[_-]?key|secret|password|passwd|authorization|credential|(^|[_-])token$|^headers$|extra_headers)",
    re.I,
)
_RESERVED_EXTRA = frozenset(
    {
        "model",
        "messages",
        "seed",
        "temperature",
        "max_tokens",
        "api_base",
        "base_url",
        "stream",
        "timeout",
        "num_retries",
        "max_retries",
        "response_format",
        "custom_llm_provider",
    }
)


@functools.lru_cache(maxsize=4096)
def is_secret_name(name: str) -> bool:
    """True for parameter names that may carry credentials (``api_key``, ``*_token``,
    ``authorization``, ``headers``…); such names are refused in settings and redacted in dumps."""
    return bool(_SECRET_NAME.search(name))


def redact_url(url: str) -> str:
    """``url`` without user-info, query and fragment (where tokens tend to hide)."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return "<unparsable url>"
    if not parts.scheme or not parts.netloc:
        return url
    host = parts.hostname or ""
    if parts.port:
        host = f"{host}:{parts.port}"
    return urlunsplit((parts.scheme, host, parts.path, "", ""))


class RoleSettings(BaseModel):
    """One role's model and call parameters (target, auditor or judge).

    * ``model``: a litellm model string (``openai/gpt-4o-mini``, ``anthropic/…``,
      ``local/smollm2``); ``None`` for the auditor means the scripted auditor, for the judge
      the criteria-only judge; ignored for the target (``Settings.target`` names it).
    * ``temperature`` 0-2, ``max_tokens`` >= 1: sent when set, provider default otherwise.
    * ``seed``: base seed of this role's per-run seeds (default: ``Settings.base_seed``);
      ``send_seed=False`` never sends a seed (for providers that reject the parameter).
    * ``api_base``: endpoint of the provider (self-hosted or proxy); ``extra``: further litellm
      parameters (``top_p``…; no credentials, no reserved names).
    * ``concurrency``: calls in flight at once to this role's model (>= 1).
    * ``timeout_s``: per-attempt timeout in seconds; ``max_retries``: retries of retryable
      errors (429, 5xx, connection, timeout) with exponential backoff from
      ``retry_base_delay_s`` (doubling, full jitter, capped at ``retry_max_delay_s``).
    * ``system_role``: whether the model accepts a system message (``None``: the built-in
      provider table in :mod:`empath_gate.llm.normalize` decides).
    * ``api_key``: only for code passing a key explicitly; never loaded from files or the
      environment by :func:`load_settings`, never serialised, never part of a cache key.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    model: str | None = None
    temperature: float | None = Field(default=None, ge=0, le=2)
    max_tokens: int | None = Field(default=None, ge=1)
    seed: int | None = None
    send_seed: bool = True
    api_base: str | None = None
    extra: dict[str, Any] = Field(default_factory=dict)
    concurrency: int = Field(default=8, ge=1, le=1024)
    timeout_s: float = Field(default=120.0, gt=0)
    max_retries: int = Field(default=4, ge=0, le=20)
    retry_base_delay_s: float = Field(default=1.0, ge=0)
    retry_max_delay_s: float = Field(default=30.0, ge=0)
    system_role: bool | None = None
    api_key: SecretStr | None = Field(default=None, exclude=True, repr=False)

    @field_validator("model")
    @classmethod
    def _model_not_blank(cls, v: str | None) -> str | None:
        if v is not None and not v.strip():
            return None
        return v

    @field_validator("extra")
    @classmethod
    def _extra_clean(cls, v: dict[str, Any]) -> dict[str, Any]:
        for k in v:
            if is_secret_name(k):
                raise ValueError(
                    f"extra parameter {k!r} looks like a credential; API keys and headers come only "
                    "from the provider's environment variables"
                )
            if k in _RESERVED_EXTRA:
                raise ValueError(f"extra parameter {k!r} is a setting of its own; set it directly")
        try:
            json.dumps(v, sort_keys=True)
        except (TypeError, ValueError) as exc:
            raise ValueError(f"extra parameters must be JSON values: {exc}") from exc
        return v

    def public_dict(self) -> dict[str, Any]:
        """JSON-able dump for results metadata: no key, URLs without credentials."""
        d = self.model_dump(mode="json")  # api_key is excluded by the field definition
        if d.get("api_base"):
            d["api_base"] = redact_url(d["api_base"])
        return d


class Settings(BaseModel):
    """Every setting of a run, after merging file < environment < options (see the module doc).

    ``target`` grammar: ``py:package.module:function`` (a Python callable), ``http://…`` or
    ``https://…`` (an OpenAI-compatible chat endpoint), anything else a litellm model.
    ``target_role``/``auditor``/``judge`` hold each role's :class:`RoleSettings`
    (``role(name)`` fetches one by name). Paths are as given on the command line or in the
    environment (relative to the working directory) or resolved against the pyproject's
    directory when they came from the file.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    target: str | None = None
    target_system_prompt: Path | None = None
    target_version: str | None = None
    target_http_model: str = "empath-target"
    target_role: RoleSettings = RoleSettings()
    auditor: RoleSettings = RoleSettings()
    judge: RoleSettings = RoleSettings(temperature=0.0)
    base_seed: int = 0
    runs: int | None = Field(default=None, ge=1, le=50)
    cache_dir: Path = Path(".empath-cache")
    cache_mode: CacheMode = "use"
    max_cost_usd: float | None = Field(default=None, gt=0)
    synthetic_header: str = Field(default="X-Empath-Synthetic", pattern=r"^[A-Za-z0-9][A-Za-z0-9-]*$")
    judge_rubric: Literal["strict", "standard"] = "strict"
    judge_granularity: Literal["transcript", "metric"] = "transcript"
    judge_calibration: Path | None = None
    offline: bool = False
    strict_families: bool = False
    suites_dirs: tuple[Path, ...] = ()
    thresholds: Path | None = None
    waivers: Path | None = None
    baseline: Path | None = None
    results: Path = Path("empath-results/results.json")
    transcripts_dir: Path | None = Field(
        default=None, description="where transcripts go; None: a 'transcripts' folder beside the results file"
    )
    fail_on: Literal["threshold", "regression", "both", "never"] = "both"
    concurrency: int = Field(default=8, ge=1, le=4096)

    @field_validator("target")
    @classmethod
    def _target_grammar(cls, v: str | None) -> str | None:
        if v is None or not v.strip():
            return None
        v = v.strip()
        if v.startswith("py:") and not re.fullmatch(r"py:[A-Za-z_][\w.]*:[A-Za-z_]\w*", v):
            raise ValueError(f"target {v!r} must look like py:package.module:function")
        return v

    @property
    def target_kind(self) -> Literal["callable", "http", "model"] | None:
        """``callable`` (``py:``), ``http`` (``http(s)://``), ``model`` (litellm), or None."""
        if self.target is None:
            return None
        if self.target.startswith("py:"):
            return "callable"
        if self.target.startswith(("http://", "https://")):
            return "http"
        return "model"

    def role(self, name: str) -> RoleSettings:
        """The RoleSettings of ``target``, ``auditor`` or ``judge``; KeyError otherwise."""
        if name == "target":
            return self.target_role
        if name in ("auditor", "judge"):
            rs: RoleSettings = getattr(self, name)
            return rs
        raise KeyError(name)

    def public_dict(self) -> dict[str, Any]:
        """JSON-able dump for the results metadata: no API key (never held), URLs stripped of
        user-info and query, paths as strings."""
        d = self.model_dump(mode="json", exclude={"target_role", "auditor", "judge"})
        if self.target_kind == "http" and self.target is not None:
            d["target"] = redact_url(self.target)
        d["roles"] = {r: self.role(r).public_dict() for r in ROLES}
        return d

    def redacted(self) -> dict[str, Any]:
        """Alias of :meth:`public_dict`."""
        return self.public_dict()


# --------------------------------------------------------------------------- loading

_Kind = Literal["str", "int", "float", "bool", "path", "paths", "json"]

_TOP_KEYS: dict[str, _Kind] = {
    "target": "str",
    "target_system_prompt": "path",
    "target_version": "str",
    "target_http_model": "str",
    "base_seed": "int",
    "runs": "int",
    "cache_dir": "path",
    "cache_mode": "str",
    "max_cost_usd": "float",
    "synthetic_header": "str",
    "judge_rubric": "str",
    "judge_granularity": "str",
    "judge_calibration": "path",
    "offline": "bool",
    "strict_families": "bool",
    "suites_dirs": "paths",
    "thresholds": "path",
    "waivers": "path",
    "baseline": "path",
    "results": "path",
    "transcripts_dir": "path",
    "fail_on": "str",
    "concurrency": "int",
}
_ROLE_FIELDS: dict[str, _Kind] = {
    "model": "str",
    "temperature": "float",
    "max_tokens": "int",
    "seed": "int",
    "send_seed": "bool",
    "api_base": "str",
    "extra": "json",
    "concurrency": "int",
    "timeout_s": "float",
    "max_retries": "int",
    "retry_base_delay_s": "float",
    "retry_max_delay_s": "float",
    "system_role": "bool",
}
_GLOBAL_ROLE_DEFAULTS: dict[str, tuple[str, _Kind]] = {
    "max_retries": ("max_retries", "int"),
    "request_timeout_s": ("timeout_s", "float"),
    "retry_base_delay_s": ("retry_base_delay_s", "float"),
    "retry_max_delay_s": ("retry_max_delay_s", "float"),
}
_ALIASES: dict[str, str] = {"target_model": "target"}


def _all_keys() -> dict[str, _Kind]:
    keys: dict[str, _Kind] = dict(_TOP_KEYS)
    for k, (_f, kind) in _GLOBAL_ROLE_DEFAULTS.items():
        keys[k] = kind
    for role in ROLES:
        for f, kind in _ROLE_FIELDS.items():
            if role == "target" and f == "model":
                continue
            keys[f"{role}_{f}"] = kind
    return keys


KNOWN_KEYS: dict[str, str] = dict(_all_keys())
"""Every setting name (file key / option name) and its kind; env var = ``EMPATH_`` + upper."""

_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off", ""}


def _convert(value: object, kind: _Kind, source: str, key: str, base_dir: Path | None) -> object:
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
        return tuple(_convert(i, "path", source, key, base_dir) for i in items)
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
    key = _ALIASES.get(key, key)
    if key not in KNOWN_KEYS:
        close = difflib.get_close_matches(key, list(KNOWN_KEYS), n=1)
        hint = f" (did you mean {close[0]!r}?)" if close else ""
        raise ConfigError(f"{source}: unknown setting {key!r}{hint}; see empath_gate.config for the list")
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
    """
    values: dict[str, object] = {}
    sources: dict[str, str] = {}

    def put(raw_key: str, value: object, source: str, base_dir: Path | None) -> None:
        key = _check_key(raw_key, source)
        kind = KNOWN_KEYS[key]
        values[key] = _convert(value, kind, source, key, base_dir)  # type: ignore[arg-type]
        sources[key] = source

    if pyproject is not None:
        section = _read_pyproject(pyproject)
        base = pyproject.parent
        for k, v in section.items():
            put(str(k), v, f"{pyproject} [tool.empath-gate] key {k!r}", base)

    env_names = {f"EMPATH_{k.upper()}": k for k in KNOWN_KEYS}
    env_names["EMPATH_TARGET_MODEL"] = "target"
    if (
        "EMPATH_TARGET" in env
        and "EMPATH_TARGET_MODEL" in env
        and env["EMPATH_TARGET"] != env["EMPATH_TARGET_MODEL"]
    ):
        raise ConfigError("EMPATH_TARGET and EMPATH_TARGET_MODEL disagree; set only one of them")
    for name in sorted(env_names):
        if name in env:
            put(env_names[name], env[name], f"environment variable {name}", None)

    for k, v in (overrides or {}).items():
        if v is not None:
            put(str(k), v, f"option {k!r}", None)

    return _build(values, sources)


def _build(values: dict[str, object], sources: dict[str, str]) -> Settings:
    roles: dict[str, dict[str, object]] = {r: {} for r in ROLES}
    role_sources: dict[tuple[str, str], str] = {}
    top: dict[str, object] = {}
    for key, value in values.items():
        if key in _GLOBAL_ROLE_DEFAULTS:
            continue
        role, _, fld = key.partition("_")
        if role in ROLES and fld in _ROLE_FIELDS and key not in _TOP_KEYS:
            roles[role][fld] = value
            role_sources[(role, fld)] = sources[key]
        else:
            top[key] = value
    for gkey, (fld, _kind) in _GLOBAL_ROLE_DEFAULTS.items():
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
