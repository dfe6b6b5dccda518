"""Target adapters: how the chatbot under test is called, chosen by the target string.

* ``py:package.module:function`` → :class:`CallableTarget`: the function receives the
  dialogue (``[{"role": "user"|"assistant", "content": str}, ...]``, no system message: the
  team's code owns its prompt) and a conversation id, sync or async, and returns the reply.
* ``http://…`` / ``https://…`` → :class:`HttpTarget`: an OpenAI-compatible chat endpoint (the
  URL is the base, e.g. ``https://bot.example/v1``, or the full ``…/chat/completions``).
* ``http://…`` with ``target_template`` set → a bot with its own JSON API
  (:mod:`empath_gate.conversation.template_target`).
* anything else → :class:`ModelTarget`: a litellm model with the team's system-prompt file.

**The conversation id** given to callables and sent to HTTP targets is the transcript id
(``<seed>-<persona>-r<run>``): stable across re-runs, different for each run, so a stateful
bot starts every run from a fresh session.

**Replies** may be plain text or structured: a mapping or object with ``content`` (str or
None) and ``events`` (a list of ``{"kind": "handoff"|"tool_call"|"filtered"|"risk"|"triage",
"detail": {...}}`` or :class:`Event`), and optionally ``tool_calls`` (each becomes a
``tool_call`` event). A hand-off is recorded as an event the judge sees (it is often the right
action). A ``risk`` event is the target's own risk detector on that turn: ``{"labels":
[{"category": ..., "timing": "ongoing"|"past"}]}`` (:mod:`empath_gate.instrument.risk_labels`;
an empty list: no risk); a ``triage`` event carries the level its triage classifier gave:
``{"level": "non_urgent"|"urgent"|"emergency"}`` (:mod:`empath_gate.instrument.crisis_levels`;
any other level ends the transcript as an error, as an unknown risk label does).

**HTTP headers** come from the environment at call time, never from settings files:
``EMPATH_TARGET_HEADERS`` (a JSON object) and ``EMPATH_TARGET_HEADER_<NAME>=value`` (``_`` in
the name becomes ``-``). Every request also carries ``X-Empath-Conversation-Id`` and the
synthetic-traffic header (``Settings.synthetic_header``, value ``1``) so the backend can keep
generated crisis traffic away from real counsellors. Never point the tool at a production
deployment that routes to people. No provider key from the environment is ever sent to an
HTTP target (the OpenAI client gets a placeholder key; authenticate through the headers).

**Caching**: model targets are cached (the system prompt's sha256 is in the target's key,
with the endpoint). Callable and HTTP targets are cached only when ``Settings.target_version``
is set, because their code can change behind an unchanged prompt; an HTTP target's key holds
its URL without credentials and the names and value digests of its non-secret headers
(:mod:`empath_gate.llm.keying`). A reply a content filter blocked is cached like any other: it
is evidence of the target's behaviour. A reply that raised is never cached.

**Reply size**: a reply longer than ``max_field_chars`` (:mod:`empath_gate.bounded`) ends
the transcript as an error (a :class:`ProviderError`), never a truncated reply.
"""

from __future__ import annotations

import asyncio
import hashlib
import importlib
import inspect
import json
import os
from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, SecretStr

from empath_gate.bounded import InputLimitError, check_body
from empath_gate.conversation.transcript import Event, Usage
from empath_gate.errors import ConfigError, ProviderError
from empath_gate.llm.cache import Cache
from empath_gate.llm.client import CacheStatus, Completion, complete, utc_now
from empath_gate.llm.keying import endpoint_identity
from empath_gate.llm.slots import call_slot
from empath_gate.settings import RoleSettings, Settings, redact_url

CONVERSATION_ID_HEADER = "X-Empath-Conversation-Id"
TARGET_EVENT_KINDS = frozenset({"handoff", "tool_call", "filtered", "risk", "triage"})
_HTTP_PLACEHOLDER_KEY = "empath-no-key"


class TargetReply(BaseModel):
    """One target reply, ready to become an assistant turn.

    ``content`` is ``""`` when the reply was filtered or carried no text (never ``None``);
    ``filtered`` is True when a provider content filter blocked it (a ``filtered`` event is in
    ``events``). ``calls`` counts provider attempts (0 for a cache hit or a callable).
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    content: str
    events: tuple[Event, ...] = ()
    filtered: bool = False
    model: str | None = None
    usage: Usage = Usage()
    cost_usd: float | None = None
    finish_reason: str | None = None
    system_fingerprint: str | None = None
    cache: CacheStatus = "off"
    calls: int = 0
    started_at: str | None = None
    ended_at: str | None = None


def prompt_hash(path: Path) -> str:
    """sha256 hex digest of the file's bytes; ConfigError when it cannot be read."""
    try:
        return hashlib.sha256(path.read_bytes()).hexdigest()
    except OSError as exc:
        raise ConfigError(
            f"target_system_prompt: cannot read {path} ({exc.strerror}); fix the path "
            "(setting target_system_prompt / EMPATH_TARGET_SYSTEM_PROMPT)"
        ) from None


def _optional_prompt_hash(path: Path | None) -> str | None:
    return prompt_hash(path) if path else None


def target_headers(env: Mapping[str, str] | None = None) -> dict[str, str]:
    """Headers for HTTP targets from ``EMPATH_TARGET_HEADERS`` (JSON object of strings) and
    ``EMPATH_TARGET_HEADER_<NAME>`` (``X_API_TOKEN`` → ``X-Api-Token``); the latter win.
    Raises ConfigError for malformed JSON (without echoing the value). Every value (and the
    credential after a ``Bearer``/``Basic``/``Token`` scheme) of at least 8 characters is
    registered as a secret (:func:`empath_gate.secrets.header_secrets`), whatever the header's
    name, as issue rule "no secret in any output" has it."""
    from empath_gate.secrets import header_secrets, register

    env = os.environ if env is None else env
    headers: dict[str, str] = {}
    raw = env.get("EMPATH_TARGET_HEADERS")
    if raw:
        try:
            parsed = json.loads(raw)
        except json.JSONDecodeError:
            raise ConfigError(
                "EMPATH_TARGET_HEADERS is not valid JSON; set it to an object such as "
                '{"Authorization": "Bearer ..."}'
            ) from None
        if not isinstance(parsed, dict) or not all(isinstance(v, str) for v in parsed.values()):
            raise ConfigError("EMPATH_TARGET_HEADERS must be a JSON object of string values")
        headers.update({str(k): v for k, v in parsed.items()})
    prefix = "EMPATH_TARGET_HEADER_"
    for name in sorted(env):
        if name.startswith(prefix) and len(name) > len(prefix):
            header = "-".join(p.capitalize() for p in name[len(prefix) :].split("_"))
            headers[header] = env[name]
    register(v for value in headers.values() for v in header_secrets(value))
    return headers


def _risk_detail(detail: Mapping[str, Any], source: str) -> dict[str, Any]:
    """A ``risk`` event's detail with its labels checked and written as objects
    (:mod:`empath_gate.instrument.risk_labels`); TypeError naming ``source`` otherwise."""
    from empath_gate.instrument.risk_labels import parse_label

    labels = detail.get("labels")
    if not isinstance(labels, (list, tuple)):
        raise TypeError(f"{source}: a risk event's detail needs 'labels', a list (empty: no risk)")
    try:
        parsed = [parse_label(dict(x) if isinstance(x, Mapping) else x).model_dump() for x in labels]
    except ValueError as exc:
        raise TypeError(f"{source}: {exc}") from None
    return {**detail, "labels": parsed}


def triage_detail(detail: Mapping[str, Any], source: str) -> dict[str, Any]:
    """A ``triage`` event's detail with its ``level`` checked
    (:data:`~empath_gate.instrument.crisis_levels.LEVEL_IDS`); TypeError naming ``source`` otherwise."""
    from empath_gate.instrument.crisis_levels import parse_level

    try:
        level = parse_level(detail.get("level"))
    except ValueError as exc:
        raise TypeError(f"{source}: {exc}") from None
    return {**detail, "level": level}


def _events_from(value: object, source: str) -> tuple[Event, ...]:
    if value is None:
        return ()
    if not isinstance(value, (list, tuple)):
        raise TypeError(f"{source}: 'events' must be a list")
    events: list[Event] = []
    for item in value:
        if isinstance(item, Event):
            data: Mapping[str, Any] = item.model_dump()
        elif isinstance(item, Mapping):
            data = item
        else:
            raise TypeError(f"{source}: each event must be a mapping with 'kind' and 'detail'")
        kind = data.get("kind")
        if kind not in TARGET_EVENT_KINDS:
            raise TypeError(f"{source}: event kind {kind!r} is not one of {sorted(TARGET_EVENT_KINDS)}")
        detail = data.get("detail") or {}
        if not isinstance(detail, Mapping):
            raise TypeError(f"{source}: event 'detail' must be a mapping")
        if kind == "risk":
            detail = _risk_detail(detail, source)
        elif kind == "triage":
            detail = triage_detail(detail, source)
        events.append(Event(kind=kind, role="target", detail=dict(detail)))
    return tuple(events)


def coerce_reply(value: object, source: str = "target") -> tuple[str, tuple[Event, ...]]:
    """``(content, events)`` from a callable's reply: a str, a mapping, or an object with
    ``content``/``events``/``tool_calls`` attributes. Raises TypeError naming ``source`` for
    anything else (an infrastructure error for the transcript, never a silent empty turn)."""
    if isinstance(value, str):
        return value, ()
    if isinstance(value, Mapping):
        get: Callable[[str], Any] = value.get
    elif hasattr(value, "content"):

        def get(name: str) -> Any:
            return getattr(value, name, None)
    else:
        raise TypeError(f"{source} returned {type(value).__name__}; return a str or an object with 'content'")
    content = get("content")
    if content is not None and not isinstance(content, str):
        raise TypeError(f"{source}: 'content' must be a str or None, not {type(content).__name__}")
    events = list(_events_from(get("events"), source))
    for call in get("tool_calls") or ():
        events.append(
            Event(
                kind="tool_call",
                role="target",
                detail=dict(call) if isinstance(call, Mapping) else {"call": str(call)},
            )
        )
    return content or "", tuple(events)


class RestartTranscript(Exception):
    """Raised by a target whose replies so far came from the cache when the next one is not
    cached and the bot keeps the dialogue itself (a session): going on live would leave the bot
    without the earlier turns. The engine generates the transcript again from its first turn."""


class Target(ABC):
    """A chatbot under test. ``description`` goes into ``Transcript.target`` (never a key);
    ``prompt_hash`` into ``Transcript.target_prompt_hash``; ``cacheable`` tells whether replies
    are cached."""

    kind: str = "target"
    description: str = ""
    prompt_hash: str | None = None
    cacheable: bool = False

    @abstractmethod
    async def reply(
        self,
        messages: Sequence[Mapping[str, Any]],
        *,
        conversation_id: str,
        run: int,
        seed: int | None,
        cache: Cache | None,
    ) -> TargetReply:
        """The target's reply to the dialogue ``messages`` (user/assistant turns, oldest first).
        Raises ProviderError (provider failures) or TypeError/any exception from user code;
        the engine turns either into an ``error`` transcript."""


def _bounded_reply(content: str, source: str) -> str:
    """``content`` when within ``max_field_chars``; ProviderError (not retryable) otherwise."""
    try:
        return check_body(content, source)
    except InputLimitError as exc:
        raise ProviderError(str(exc), kind="bad_request", retryable=False) from None


def _from_completion(c: Completion) -> TargetReply:
    events = list(c.events)
    content = _bounded_reply(c.content or "", f"target reply of {c.model or 'the target'}")
    if c.filtered:
        events.append(
            Event(kind="filtered", role="target", detail={"finish_reason": c.finish_reason, "model": c.model})
        )
        content = ""
    for call in c.tool_calls:
        events.append(Event(kind="tool_call", role="target", detail=dict(call)))
    return TargetReply(
        content=content,
        events=tuple(events),
        filtered=c.filtered,
        model=c.model,
        usage=c.usage,
        cost_usd=c.cost_usd,
        finish_reason=c.finish_reason,
        system_fingerprint=c.system_fingerprint,
        cache=c.cache,
        calls=c.attempts,
        started_at=c.started_at,
        ended_at=c.ended_at,
    )


class ModelTarget(Target):
    """A litellm model with the team's system prompt (optional) prepended to every call."""

    kind = "model"

    def __init__(self, model: str, role: RoleSettings, system_prompt: Path | None) -> None:
        self.role = role.model_copy(update={"model": model})
        self.prompt_hash = _optional_prompt_hash(system_prompt)
        self.system_prompt = system_prompt.read_text(encoding="utf-8") if system_prompt else None
        self.description = model
        self.cacheable = True

    async def reply(
        self,
        messages: Sequence[Mapping[str, Any]],
        *,
        conversation_id: str,
        run: int,
        seed: int | None,
        cache: Cache | None,
    ) -> TargetReply:
        msgs = [dict(m) for m in messages]
        if self.system_prompt is not None:
            msgs.insert(0, {"role": "system", "content": self.system_prompt})
        c = await complete(
            "target",
            self.role,
            msgs,
            seed=seed,
            cache=cache,
            cache_extra={"system_prompt_hash": self.prompt_hash, "run": run},
        )
        return _from_completion(c)


class _VersionedTarget(Target):
    """A target whose code can change behind an unchanged prompt (HTTP, callable): replies are
    cached only when ``Settings.target_version`` is set, keyed by it (module docstring)."""

    def __init__(self, description: str, settings: Settings, key_name: str | None = None) -> None:
        self.description = description
        self.key_name = key_name or description
        self.version = settings.target_version
        self.cacheable = settings.target_version is not None
        self.prompt_hash = _optional_prompt_hash(settings.target_system_prompt)

    def _key_parts(self, run: int, conversation_id: str) -> dict[str, object]:
        """The cache-key parts naming this target's reply in run ``run`` of ``conversation_id``."""
        return {
            "target": self.key_name,
            "target_version": self.version,
            "run": run,
            "conversation_id": conversation_id,
            "system_prompt_hash": self.prompt_hash,
        }


class HttpTarget(_VersionedTarget):
    """An OpenAI-compatible chat endpoint called through the same client (retries, filters)."""

    kind = "http"

    def __init__(self, url: str, settings: Settings, env: Mapping[str, str] | None = None) -> None:
        base = url.rstrip("/")
        if base.endswith("/chat/completions"):
            base = base[: -len("/chat/completions")]
        key = settings.target_role.api_key
        self.role = settings.target_role.model_copy(
            update={
                "model": f"openai/{settings.target_http_model}",
                "api_base": base,
                "api_key": key if key is not None else SecretStr(_HTTP_PLACEHOLDER_KEY),
            }
        )
        super().__init__(redact_url(url), settings, key_name=endpoint_identity(base))
        self.synthetic_header = settings.synthetic_header
        self._env = env
        target_headers(env)  # fail fast (ConfigError) on malformed header variables

    async def reply(
        self,
        messages: Sequence[Mapping[str, Any]],
        *,
        conversation_id: str,
        run: int,
        seed: int | None,
        cache: Cache | None,
    ) -> TargetReply:
        headers = target_headers(self._env)
        headers[CONVERSATION_ID_HEADER] = conversation_id
        headers[self.synthetic_header] = "1"
        c = await complete(
            "target",
            self.role,
            [dict(m) for m in messages],
            seed=seed,
            cache=cache if self.cacheable else None,
            cache_extra=self._key_parts(run, conversation_id),
            headers=headers,
        )
        return _from_completion(c)


class CallableTarget(_VersionedTarget):
    """A Python function ``fn(messages, conversation_id)`` (sync: run in a worker thread;
    async: awaited) returning a str or a structured reply (see the module doc)."""

    kind = "callable"

    def __init__(self, spec: str, settings: Settings, fn: Callable[..., Any] | None = None) -> None:
        self.spec = spec
        self.fn = fn if fn is not None else load_callable(spec)
        super().__init__(spec, settings)

    async def reply(
        self,
        messages: Sequence[Mapping[str, Any]],
        *,
        conversation_id: str,
        run: int,
        seed: int | None,
        cache: Cache | None,
    ) -> TargetReply:
        msgs = [dict(m) for m in messages]
        started = utc_now()
        key = None
        if cache is not None and self.cacheable and cache.mode != "off":
            key = cache.key({"role": "target", "messages": msgs, **self._key_parts(run, conversation_id)})
        stored = cache.get(key) if cache is not None and key is not None else None
        status: CacheStatus = "off"
        if stored is not None:
            content, events = coerce_reply(stored, self.spec)
            status = "hit"
        else:
            content, events = coerce_reply(await self._call(msgs, conversation_id), self.spec)
            content = _bounded_reply(content, f"target reply of {self.spec}")
            if cache is not None and key is not None:
                try:
                    stored_events = [e.model_dump(mode="json") for e in events]
                    cache.put(key, {"content": content, "events": stored_events})
                    status = "miss"
                except (ValueError, TypeError):  # event details that cannot or must not be stored
                    status = "off"
        return TargetReply(
            content=content,
            events=events,
            cache=status,
            model=self.spec,
            started_at=started,
            ended_at=utc_now(),
        )

    async def _call(self, msgs: list[dict[str, Any]], conversation_id: str) -> object:
        """The user function's raw reply (sync functions run in a worker thread), holding a
        target call slot of the run (:mod:`empath_gate.llm.slots`) while it runs."""
        async with call_slot("target"):
            if inspect.iscoroutinefunction(self.fn):
                return await self.fn(msgs, conversation_id)
            value = await asyncio.to_thread(self.fn, msgs, conversation_id)
            if inspect.isawaitable(value):
                value = await value
            return value


def load_callable(spec: str) -> Callable[..., Any]:
    """Import ``py:package.module:function``; ConfigError saying what is missing."""
    path = spec[3:] if spec.startswith("py:") else spec
    module_name, _, attr = path.partition(":")
    if not module_name or not attr:
        raise ConfigError(f"target {spec!r} must look like py:package.module:function")
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise ConfigError(
            f"target {spec!r}: cannot import {module_name!r} ({exc}); is it on sys.path?"
        ) from None
    fn = getattr(module, attr, None)
    if not callable(fn):
        raise ConfigError(f"target {spec!r}: {module_name} has no callable {attr!r}")
    return fn  # type: ignore[no-any-return]


def make_target(settings: Settings, env: Mapping[str, str] | None = None) -> Target:
    """The adapter for ``settings.target``; ConfigError when no target is set or it cannot
    be loaded. ``env`` (default ``os.environ``) supplies HTTP-target headers. With
    ``target_template`` set, the http(s) target is a
    :class:`~empath_gate.conversation.template_target.TemplateTarget`."""
    kind = settings.target_kind
    if settings.target_template is not None and settings.target is not None:
        from empath_gate.conversation.template_spec import template_of
        from empath_gate.conversation.template_target import TemplateTarget

        template = template_of(settings)
        assert template is not None
        return TemplateTarget(settings.target, template, settings, env)
    if kind is None or settings.target is None:
        raise ConfigError(
            "no target: set 'target' in [tool.empath-gate], EMPATH_TARGET_MODEL, or --empath-target "
            "(py:pkg.mod:fn, an http(s) URL, or a litellm model)"
        )
    if kind == "callable":
        return CallableTarget(settings.target, settings)
    if kind == "http":
        return HttpTarget(settings.target, settings, env)
    return ModelTarget(settings.target, settings.target_role, settings.target_system_prompt)


__all__ = [
    "CONVERSATION_ID_HEADER",
    "CallableTarget",
    "HttpTarget",
    "ModelTarget",
    "ProviderError",
    "RestartTranscript",
    "Target",
    "TargetReply",
    "coerce_reply",
    "load_callable",
    "make_target",
    "prompt_hash",
    "target_headers",
]
