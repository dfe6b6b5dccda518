"""The settings of a run, each declared once with everything the front-ends need.

Every field of :class:`Settings` (and of :class:`RoleSettings`, once per role) carries its help
text, and where a front-end shows it its flag (``flag="runs"`` gives ``--runs`` to the CLI,
``--empath-runs`` and the ini key ``empath_runs`` to pytest), the CLI commands that take it and
its GitHub Action input. :mod:`empath_gate.settings.options` turns these declarations into the
one option table from which the pytest options, the CLI arguments, the environment variables
(``EMPATH_<KEY>``), the ``[tool.empath-gate]`` keys and the Action's input mapping are built.

API keys are never settings: providers read them from their standard variables
(``OPENAI_API_KEY``, ``ANTHROPIC_API_KEY``…). A key-like name in the file or in ``extra``
is a :class:`~empath_gate.errors.ConfigError`. :attr:`RoleSettings.api_key` exists only for code
that passes a key explicitly (e.g. tests against the fake server); it is excluded from every dump.
"""

from __future__ import annotations

import functools
import json
import re
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, SecretStr, field_validator

from empath_gate.bounded import InputLimits
from empath_gate.secrets import redact_url as redact_url

_LIMITS = InputLimits()
"""The input limits' defaults (their reasons: :class:`~empath_gate.bounded.InputLimits`)."""

OPTION_KEY = "empath_option"
LAYER_COMMANDS: tuple[str, ...] = ("run", "gate", "merge", "diff", "report", "comment", "rejudge")
"""Commands that load the instrument and so take the team layer options."""
"""Key of a field's option declaration inside its ``json_schema_extra``."""


def opt(
    default: Any,
    help_text: str,
    *,
    flag: str | None = None,
    action: str | None = None,
    metavar: str | None = None,
    commands: tuple[str, ...] = ("run",),
    pytest: bool = True,
    aliases: tuple[tuple[str, str, str], ...] = (),
    hidden: bool = False,
    **constraints: Any,
) -> Any:
    """A settings field with its option declaration (see the module docstring).

    ``flag``: the option's name without dashes (``None``: settable only in the file and the
    environment); ``commands``: the CLI commands that take the flag; ``pytest``: the plugin
    takes it as ``--empath-<flag>``; ``action``: the GitHub Action input that sets it;
    ``aliases``: ``(flag, value, help)`` switches that set the field to ``value``
    (``--no-cache`` sets ``cache_mode`` to ``off``); with ``hidden`` only the aliases are
    shown, not ``--<flag>`` itself. ``constraints``: pydantic ``Field`` bounds.
    """
    decl: dict[str, Any] = {
        "flag": flag,
        "action": action,
        "metavar": metavar,
        "commands": list(commands) if flag else [],
        "pytest": bool(flag) and pytest,
        "aliases": [list(a) for a in aliases],
        "hidden": hidden,
    }
    extra: dict[str, Any] = {OPTION_KEY: decl}
    return Field(default, description=help_text, json_schema_extra=extra, **constraints)


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

    model: str | None = Field(
        None, description="litellm model string; auditor/judge unset: scripted/criteria-only"
    )
    temperature: float | None = Field(
        None, ge=0, le=2, description="sampling temperature (unset: provider's)"
    )
    max_tokens: int | None = Field(None, ge=1, description="reply cap in tokens (unset: provider's)")
    seed: int | None = Field(None, description="base of this role's per-run seeds (unset: base_seed)")
    send_seed: bool = Field(True, description="send the seed parameter (false for providers that reject it)")
    api_base: str | None = Field(None, description="provider endpoint (self-hosted server or proxy)")
    extra: dict[str, Any] = Field(
        default_factory=dict, description="further litellm parameters (JSON object)"
    )
    concurrency: int = Field(8, ge=1, le=1024, description="calls in flight at once to this role's model")
    timeout_s: float = Field(120.0, gt=0, description="per-attempt timeout in seconds")
    max_retries: int = Field(4, ge=0, le=20, description="retries of 429, 5xx, connection errors, timeouts")
    retry_base_delay_s: float = Field(
        1.0, ge=0, description="first backoff delay in seconds (doubling, jitter)"
    )
    retry_max_delay_s: float = Field(30.0, ge=0, description="longest backoff delay in seconds")
    system_role: bool | None = Field(None, description="the model accepts a system message (unset: table)")
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

    target: str | None = opt(
        None,
        "the chatbot: py:pkg.mod:fn, an http(s) OpenAI-compatible URL, or a litellm model; unset: "
        "the embedded example bot",
        flag="target",
        action="target",
        metavar="T",
    )
    target_system_prompt: Path | None = opt(
        None,
        "system-prompt file of a model target (its sha256 keys the target's cache entries)",
        flag="system-prompt",
        action="system-prompt",
        metavar="PATH",
    )
    target_template: Path | None = opt(
        None,
        "JSON file describing an http(s) target that is not OpenAI-compatible: request template and "
        "response paths (README: Any HTTP bot)",
        flag="target-template",
        action="target-template",
        metavar="PATH",
    )
    target_version: str | None = opt(None, "version of a callable/HTTP target; enables caching its replies")
    target_cues: Literal["keep", "strip"] = opt(
        "keep",
        "voice suites: keep | strip the cue tokens ([sigh], [long pause]) of user turns before the "
        "target sees them (and before its cache key); the transcript and the judge keep them",
        flag="target-cues",
        metavar="keep|strip",
    )
    target_http_model: str = opt("empath-target", "the 'model' field sent to an HTTP target")
    multi_party_convention: Literal["prefix", "name"] = opt(
        "prefix",
        "how a multi-party seed's speakers reach the target: prefix ('Name: text' in the content) or "
        "name (the OpenAI 'name' field; different speakers' messages never merge)",
        flag="multi-party-convention",
        action="multi-party-convention",
        metavar="C",
    )
    target_role: RoleSettings = RoleSettings()
    auditor: RoleSettings = RoleSettings()
    judge: RoleSettings = RoleSettings(temperature=0.0)
    base_seed: int = opt(0, "per-run seeds of every role derive from it")
    runs: int | None = opt(
        None,
        "runs per conversation (test-retest N, 1-50); unset: the suite's own",
        flag="runs",
        action="runs",
        metavar="N",
        ge=1,
        le=50,
    )
    cache_dir: Path = opt(Path(".empath-cache"), "folder of the content-addressed model cache")
    cache_mode: CacheMode = opt(
        "use",
        "use | off | refresh: read and write the model cache, bypass it, or overwrite it",
        flag="cache-mode",
        commands=("run", "rejudge"),
        hidden=True,
        aliases=(
            ("no-cache", "off", "do not read or write the model cache"),
            ("refresh-cache", "refresh", "ignore cached replies and overwrite them"),
        ),
    )
    max_cost_usd: float | None = opt(
        None,
        "budget in USD, per call: no call starts once spend plus reservations reaches it",
        flag="max-cost",
        action="max-cost",
        metavar="USD",
        gt=0,
    )
    max_auditor_fallback_share: float = opt(
        0.5,
        "a transcript whose LLM auditor fell back to the script on more than this share of its "
        "turns (0-1) is no evidence: its tests are incomplete",
        flag="max-auditor-fallback-share",
        metavar="SHARE",
        ge=0,
        le=1,
    )
    synthetic_header: str = opt(
        "X-Empath-Synthetic",
        "header marking generated traffic to HTTP targets",
        pattern=r"^[A-Za-z0-9][A-Za-z0-9-]*$",
    )
    judge_rubric: Literal["strict", "standard"] = opt(
        "strict",
        "strict | standard judge rubric",
        flag="rubric",
        commands=("rejudge",),
        pytest=False,
    )
    judge_granularity: Literal["transcript", "metric"] = opt(
        "transcript",
        "one judge call per transcript or per metric",
        flag="granularity",
        commands=("rejudge",),
        pytest=False,
    )
    judge_batch: Literal["off", "submit", "collect"] = opt(
        "off",
        "batch judging for nightly and release runs: submit sends the judge requests as a provider "
        "batch and ends with the tests pending; collect (a later run) finishes judging from its "
        "results; off judges live (README: Batch judging)",
        flag="judge-batch",
        metavar="off|submit|collect",
    )
    judge_batch_state: Path | None = opt(
        None,
        "the judge-batch state file (batch ids, what each request is; no secret); unset: "
        "judge-batch.json beside the results file",
        flag="judge-batch-state",
        metavar="PATH",
    )
    dynamics_annotator: Literal["offline", "judge", "off"] = opt(
        "offline",
        "who labels every turn's emotion and strategy: offline (lexicon, no model) | judge (one more "
        "judge-model call per transcript) | off",
        flag="dynamics-annotator",
        commands=("run",),
    )
    judge_calibration: Path | None = opt(
        None,
        "the judge's calibration status file (calibrate/agreement --save), shown in the results",
    )
    offline: bool = opt(
        False,
        "force the fallbacks: scripted auditor, criteria-only judge",
        flag="offline",
        action="offline",
    )
    strict_families: bool = opt(False, "a judge of the auditor's model family is an error, not a warning")
    suites_dirs: tuple[Path, ...] = opt(
        (),
        "team suites directories layered on the shipped one (repeatable; env: os.pathsep-separated)",
        flag="suites-dir",
        metavar="DIR",
        commands=LAYER_COMMANDS,
    )
    thresholds: Path | None = opt(
        None,
        "thresholds.yaml overriding the shipped one",
        flag="thresholds",
        metavar="PATH",
        commands=LAYER_COMMANDS,
    )
    waivers: Path | None = opt(
        None,
        "waivers.yaml (unset: ./waivers.yaml when present)",
        flag="waivers",
        metavar="PATH",
        commands=LAYER_COMMANDS,
    )
    baseline: Path | None = opt(
        None,
        "baseline results.json to compare with",
        flag="baseline",
        action="baseline",
        metavar="PATH",
        commands=("run", "gate", "merge", "report", "comment"),
    )
    results: Path = opt(
        Path("empath-results/results.json"),
        "where to write results.json (diff.md, report.html beside it)",
        flag="results",
        action="results-dir",
        metavar="PATH",
    )
    transcripts_dir: Path | None = opt(
        None,
        "where transcripts go; unset: a 'transcripts' folder beside the results file",
    )
    fail_on: Literal["threshold", "regression", "both", "never"] = opt(
        "both",
        "which conditions fail the gate: threshold | regression | both | never",
        flag="fail-on",
        action="fail-on",
        commands=("run", "gate"),
    )
    sequential_gating: Literal["off", "exact", "sequential"] = opt(
        "off",
        "run a conversation's runs one after another and stop once every decision it serves is "
        "settled: off | exact (no remaining score can change it) | sequential (stochastic "
        "curtailment at sequential_error_rate); README: Sequential gating",
        flag="sequential-gating",
        metavar="off|exact|sequential",
    )
    sequential_error_rate: float = opt(
        0.05,
        "sequential gating: the largest probability (0-1) that a stopped conversation's decision "
        "differs from the one all its runs would give, per test",
        flag="sequential-error-rate",
        metavar="P",
        gt=0,
        lt=1,
    )
    concurrency: int = opt(
        8,
        "calls in flight at once over every role (each role's own concurrency also applies); "
        "twice as many transcripts are open at once",
        ge=1,
        le=4096,
    )
    annotator_concurrency: int | None = opt(
        None,
        "dynamics annotator calls (judge model) in flight at once; unset: the judge's concurrency",
        ge=1,
        le=1024,
    )
    provider_concurrency: dict[str, int] = opt(
        {},
        'calls in flight at once per provider model ({"openai/gpt-4o-mini": 16}) or per provider '
        '({"anthropic": 8}) over every role; a model not named: the calling role\'s concurrency',
    )
    adaptive_concurrency: bool = opt(
        True,
        "narrow each provider model's calls in flight on 429s and honour Retry-After (AIMD, at most "
        "the role's concurrency); false: a fixed limit of the role's concurrency",
    )
    max_yaml_bytes: int = opt(
        _LIMITS.max_yaml_bytes, "largest YAML file read (instrument, layers, thresholds, waivers), in bytes",
        ge=1,
    )
    max_json_bytes: int = opt(
        _LIMITS.max_json_bytes, "largest JSON, JSONL or CSV file (or GitHub API answer) read, in bytes", ge=1
    )
    max_field_chars: int = opt(
        _LIMITS.max_field_chars,
        "longest text value, CSV cell or target, auditor or judge reply, in characters",
        ge=1,
    )
    max_input_depth: int = opt(
        _LIMITS.max_input_depth, "deepest nesting of lists and mappings in an input file", ge=1
    )
    max_input_rows: int = opt(
        _LIMITS.max_input_rows,
        "most entries of one list or mapping, lines of a JSONL file or rows of a CSV file",
        ge=1,
    )

    @field_validator("provider_concurrency")
    @classmethod
    def _provider_limits(cls, v: dict[str, int]) -> dict[str, int]:
        bad = {k: n for k, n in v.items() if not k.strip() or n < 1 or n > 4096}
        if bad:
            raise ValueError(f"provider_concurrency needs provider names and limits 1-4096, not {bad}")
        return v

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
