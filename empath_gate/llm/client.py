"""The model client: the only module that imports litellm.

:func:`complete` makes one chat call for a role (target, auditor or judge): it normalises the
messages for the provider, looks the reply up in the cache, calls ``litellm.acompletion``
(bounded by a per-model semaphore; litellm's logging skipped while nothing reads it:
:mod:`empath_gate.llm.unread_logging`), retries 429/5xx/connection/timeout failures with
exponential backoff and full jitter (:mod:`empath_gate.llm.retry`), classifies every failure
into a :class:`~empath_gate.errors.ProviderError`, prices the call from litellm's cost map,
counts every attempt and reserves its estimated cost on the run's ledger before it starts
(:mod:`empath_gate.llm.accounting`: the budget), stores the reply in the cache when the caller
says it is usable, and returns a frozen :class:`Completion`.

litellm is imported lazily on the first call (it takes seconds), with
``LITELLM_LOCAL_MODEL_COST_MAP=True`` set first (it would otherwise try to download its price
list and retry for seconds when offline) and its telemetry and debug output off; what the
import leaves alive is then frozen out of the cycle collector (:data:`FREEZE_AFTER_IMPORT`).

Custom providers: :func:`register_chat_provider` exposes a plain chat function to litellm as
``<name>/<model>`` so it goes through this same call path, cache and cost accounting (its cost
is unknown: ``None``). The provider ``local`` is pre-registered and resolves lazily to
:func:`empath_gate.llm.local.chat` (the embedded model, ``local/smollm2``).
"""

from __future__ import annotations

import contextlib
import datetime as dt
import functools
import gc
import os
import threading
import time
from collections.abc import Callable, Mapping
from typing import Any, Literal, cast

from pydantic import ConfigDict, Field

from empath_gate.bounded import well_formed, well_formed_tree
from empath_gate.errors import ProviderError
from empath_gate.llm.accounting import Meter, active_ledger
from empath_gate.llm.batches import batch_body
from empath_gate.llm.cache import Cache
from empath_gate.llm.deferred import active_batch
from empath_gate.llm.events import CacheStatus, CallFields, Event, Usage
from empath_gate.llm.keying import RESERVED_KEY_PARTS, call_key_parts, is_secret_header
from empath_gate.llm.loop import inline_request_building
from empath_gate.llm.normalize import normalize_messages, rules_for
from empath_gate.llm.prompt_cache import mark_cache_prefix
from empath_gate.llm.providers import ChatFn, make_handler
from empath_gate.llm.retry import backoff_delay, call_with_retries
from empath_gate.llm.tokens import reservation_usd
from empath_gate.llm.unread_logging import skip_unread_logging
from empath_gate.secrets import header_secrets
from empath_gate.settings import RoleSettings

Role = Literal["target", "auditor", "judge"]

__all__ = [
    "CacheStatus", "ChatFn", "Completion", "Role", "UsableFn", "backoff_delay", "complete", "estimate_cost",
    "litellm_module", "register_chat_provider", "supports_json_schema", "usable_by_default", "utc_now",
]

def utc_now() -> str:
    """Now as ISO-8601 UTC with milliseconds (the transcript timestamps)."""
    return dt.datetime.now(dt.timezone.utc).isoformat(timespec="milliseconds")


class Completion(CallFields):
    """The outcome of one :func:`complete` call (the call's own fields: :class:`CallFields`).

    * ``content``: the reply text (``None`` or empty when filtered or tool-call only);
      ``tool_calls``: OpenAI-style tool-call dicts of the reply.
    * ``finish_reason``: as the provider said (``stop``, ``length``, ``content_filter``…).
    * ``model``: the model id the provider reported (else the requested one).
    * ``usage``: tokens; ``cost_usd``: USD spent by this call from litellm's cost map,
      ``None`` when the model has no price there (never a guess), ``0.0`` on a cache hit.
    * ``cache``: ``hit`` (served from the cache, no provider call), ``miss`` (called; stored
      when the caller found it usable), ``off`` (called, cache not used).
    * ``events``: ``retry`` events (one per retried failure: attempt, kind, status, delay) and
      a ``system_folded`` event when the system prompt was folded into the first user turn.
    * ``mode``: the structured-output mode requested (``json_schema``, ``json_object``) or None.
    * ``attempts``: provider attempts made (0 on a hit); ``latency_s``: wall time of the call.
    * ``started_at``/``ended_at``: ISO-8601 UTC.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    role: Role
    content: str | None
    events: tuple[Event, ...] = ()
    tool_calls: tuple[dict[str, Any], ...] = ()
    mode: str | None = None
    system_folded: bool = False
    attempts: int = Field(default=0, ge=0)
    latency_s: float = 0.0
    cache_key: str | None = None

    @property
    def filtered(self) -> bool:
        """True when a provider content filter blocked the reply (``finish_reason ==
        "content_filter"`` and no text): never forward it as a turn; record a ``filtered``
        event (a safety event on the target, an infrastructure error on auditor/judge)."""
        return self.finish_reason == "content_filter" and not (self.content or "").strip()

    @property
    def truncated(self) -> bool:
        """True when the reply stopped at ``max_tokens`` (``finish_reason == "length"``)."""
        return self.finish_reason == "length"


# --------------------------------------------------------------------------- litellm, lazily

_import_lock = threading.Lock()
_litellm: Any = None
_providers: dict[str, ChatFn | None] = {"local": None}  # None: resolved lazily (local.chat)

FREEZE_AFTER_IMPORT = True
"""Whether :func:`_lib` calls :func:`gc.freeze` after the import (project choice): a full
collection over the ~370,000 objects litellm leaves alive took 0.23-0.27 s on a 2-core host
(:data:`gc.callbacks`, once in ``bench/bench_engine.py``'s 600 calls), stalling the event loop;
``--no-gc-freeze`` there shows the effect. It freezes everything alive at that moment; only
cyclic garbage among it is never reclaimed (a one-time, bounded cost)."""


def _lib() -> Any:
    """The litellm module, imported and set up once (module docstring, :data:`FREEZE_AFTER_IMPORT`)."""
    global _litellm
    if _litellm is not None:
        return _litellm
    with _import_lock:
        if _litellm is None:
            os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
            os.environ.setdefault("LITELLM_TELEMETRY", "False")
            import litellm

            for name, value in (("telemetry", False), ("suppress_debug_info", True), ("set_verbose", False)):
                setattr(litellm, name, value)
            _litellm = litellm
            _sync_providers()
            if FREEZE_AFTER_IMPORT:
                gc.freeze()
    return _litellm


def litellm_module() -> Any:
    """The litellm module, imported and set up once (local cost map, telemetry off)."""
    return _lib()


def _resolve_local(*args: Any, **kwargs: Any) -> Mapping[str, Any]:
    from empath_gate.llm import local

    return local.chat(*args, **kwargs)


def _sync_providers() -> None:
    """Mirror ``_providers`` into ``litellm.custom_provider_map`` (litellm must be imported)."""
    lib = _litellm
    if lib is None:
        return
    entries = [e for e in lib.custom_provider_map if e.get("provider") not in _providers]
    for name, fn in _providers.items():
        entries.append({"provider": name, "custom_handler": make_handler(lib, fn or _resolve_local)})
    lib.custom_provider_map = entries
    # litellm reads the map when it sets itself up; re-run that step for late registrations.
    setup = getattr(lib.utils, "custom_llm_setup", None)
    if setup is not None:
        setup()


def register_chat_provider(name: str, fn: ChatFn) -> None:
    """Expose ``fn`` to litellm as the custom provider ``name`` (models ``name/<model>``).

    Calls to such models go through :func:`complete` like any other: normalisation, cache,
    retries, classification. ``fn`` receives the model name without the provider prefix;
    exceptions it raises are classified by their class and message. Registering a name again
    replaces its function.
    """
    _providers[name] = fn
    _provider_of.cache_clear()
    if _litellm is not None:
        _sync_providers()


def supports_json_schema(model: str | None) -> bool:
    """Whether litellm's model map says ``model`` accepts a JSON-schema ``response_format``.
    False for unknown models and on any error (the judge then asks for JSON in the prompt)."""
    if not model:
        return False
    try:
        return bool(_lib().supports_response_schema(model=model))
    except Exception:
        return False


def estimate_cost(model: str, prompt_tokens: int, completion_tokens: int) -> float | None:
    """USD for ``prompt_tokens`` + ``completion_tokens`` on ``model`` from litellm's (local)
    cost map, for estimates (``empath-gate run --dry-run``, the budget's reservations); makes no
    call. 0.0 for the embedded model (``local/…``: the run prices it at $0); None for models the
    map does not price, for other custom providers and on any error."""
    if model and _is_local(model):
        return 0.0
    if not model or model.split("/", 1)[0] in _providers:
        return None
    try:
        prompt_cost, completion_cost = _lib().cost_per_token(
            model=model, prompt_tokens=prompt_tokens, completion_tokens=completion_tokens
        )
        return float(prompt_cost) + float(completion_cost)
    except Exception:
        return None


@functools.lru_cache(maxsize=256)
def _provider_of(model: str | None) -> str | None:
    """litellm's provider name of ``model`` (e.g. ``anthropic``); None when it cannot tell and for
    a provider registered here (:func:`register_chat_provider`). Remembered per model."""
    try:
        name = str(_lib().get_llm_provider(model)[1])
    except Exception:
        return None
    return None if name in _providers else name


def _is_local(model: str | None) -> bool:
    return bool(model and model.startswith("local/"))


def _cost_of(lib: Any, resp: Any, settings: RoleSettings) -> float | None:
    """USD of one response: 0.0 for the embedded model, else litellm's price (None: unknown);
    litellm prices ``prompt_tokens_details.cached_tokens`` at the model's
    ``cache_read_input_token_cost`` and the rest of the prompt at ``input_cost_per_token``."""
    return 0.0 if _is_local(settings.model) else _price(lib, resp)


def _price(lib: Any, resp: Any) -> float | None:
    hidden = getattr(resp, "_hidden_params", None) or {}
    if "response_cost" in hidden:
        cost = hidden.get("response_cost")
    else:
        try:
            cost = lib.completion_cost(completion_response=resp)
        except Exception:
            cost = None
    if cost is None:
        return None
    try:
        value = float(cost)
    except (TypeError, ValueError):
        return None
    return value if value >= 0 else None


# --------------------------------------------------------------------------- the call

UsableFn = Callable[[Completion], bool]
"""Whether a reply may be stored in (and served from) the cache: ``fn(completion) -> bool``."""


def usable_by_default(role: str) -> UsableFn:
    """The storage rule when the caller gives none: a target reply is always stored (a content
    filter on the target is evidence of the target's behaviour); an auditor or judge reply
    blocked by a content filter is an infrastructure failure and is never stored."""
    if role == "target":
        return lambda _completion: True
    return lambda completion: not completion.filtered


def _provider_kwargs(
    settings: RoleSettings,
    sent: list[dict[str, Any]],
    *,
    seed: int | None,
    response_format: dict[str, Any] | None,
    headers: Mapping[str, str] | None,
) -> dict[str, Any]:
    """The keyword arguments of ``litellm.acompletion`` for this call (credentials included)."""
    kwargs: dict[str, Any] = dict(settings.extra)
    kwargs.update(
        model=settings.model, messages=sent, timeout=settings.timeout_s, max_retries=0, drop_params=True
    )
    if settings.api_base:
        kwargs["api_base"] = settings.api_base
    if settings.api_key is not None:
        kwargs["api_key"] = settings.api_key.get_secret_value()
    if settings.temperature is not None:
        kwargs["temperature"] = settings.temperature
    if settings.max_tokens is not None:
        kwargs["max_tokens"] = settings.max_tokens
    if seed is not None and settings.send_seed:
        kwargs["seed"] = seed
    if response_format is not None:
        kwargs["response_format"] = response_format
    if headers:
        kwargs["extra_headers"] = dict(headers)
    return kwargs


def _from_response(lib: Any, resp: Any, settings: RoleSettings, **meta: Any) -> Completion:
    """A Completion of a provider response (its first choice); ``meta`` fills the call fields."""
    choice = resp.choices[0]
    msg = getattr(choice, "message", None)
    content = getattr(msg, "content", None)
    raw_calls = getattr(msg, "tool_calls", None) or ()
    calls = [tc.model_dump() if hasattr(tc, "model_dump") else dict(tc) for tc in raw_calls]
    u = getattr(resp, "usage", None)
    return Completion(
        content=None if content is None else well_formed(str(content)),
        finish_reason=getattr(choice, "finish_reason", None),
        model=getattr(resp, "model", None) or settings.model,
        usage=Usage(prompt_tokens=getattr(u, "prompt_tokens", None), cached_prompt_tokens=_cached_tokens(u),
                    completion_tokens=getattr(u, "completion_tokens", None)),
        cost_usd=_cost_of(lib, resp, settings),
        system_fingerprint=getattr(resp, "system_fingerprint", None),
        tool_calls=tuple(well_formed_tree(calls)),
        **meta,
    )


def _cached_tokens(usage: Any) -> int | None:
    """``usage.prompt_tokens_details.cached_tokens`` as an int, None when not reported."""
    details = getattr(usage, "prompt_tokens_details", None)
    value = getattr(details, "cached_tokens", None)
    return value if isinstance(value, int) and value >= 0 else None


def _from_stored(stored: Mapping[str, Any], **meta: Any) -> Completion:
    """A Completion served from a cache entry (no provider call, cost 0)."""
    return Completion(
        content=stored.get("content"),
        finish_reason=stored.get("finish_reason"),
        model=stored.get("model"),
        usage=Usage(**(stored.get("usage") or {})),
        cost_usd=0.0,
        system_fingerprint=stored.get("system_fingerprint"),
        cache="hit",
        tool_calls=tuple(stored.get("tool_calls") or ()),
        attempts=0,
        **meta,
    )


def _stored_value(completion: Completion) -> dict[str, Any]:
    return {
        "content": completion.content,
        "finish_reason": completion.finish_reason,
        "model": completion.model,
        "usage": completion.usage.model_dump(),
        "cost_usd": completion.cost_usd,
        "system_fingerprint": completion.system_fingerprint,
        "tool_calls": list(completion.tool_calls),
    }


def _checked_call(role: str, settings: RoleSettings, cache_extra: Mapping[str, object]) -> Role:
    """``role`` as a Role; ValueError for an unknown role, a missing model or a clash between
    ``cache_extra`` and the client's own key parts."""
    if role not in ("target", "auditor", "judge"):
        raise ValueError(f"role must be target, auditor or judge, not {role!r}")
    if not settings.model:
        raise ValueError(f"no model configured for the {role}")
    clash = RESERVED_KEY_PARTS.intersection(cache_extra)
    if clash:
        raise ValueError(f"cache_extra may not redefine {sorted(clash)}")
    return cast(Role, role)


async def complete(
    role: str,
    settings: RoleSettings,
    messages: list[dict[str, Any]],
    *,
    seed: int | None,
    cache: Cache | None,
    cache_extra: Mapping[str, object],
    response_format: dict[str, Any] | None = None,
    headers: Mapping[str, str] | None = None,
    usable: UsableFn | None = None,
    cache_prefix: bool = False,
) -> Completion:
    """One chat completion for ``role`` with ``settings`` (model, parameters, retries).

    ``messages``: OpenAI-style ``{"role", "content"}`` dicts (normalised here, see
    :mod:`empath_gate.llm.normalize`). ``seed``: sent when ``settings.send_seed`` (and part of
    the cache key either way). ``cache``: None or a Cache; ``cache_extra``: further key parts
    (system-prompt hash, template version, run index, re-judge index…; JSON values).
    ``response_format``: passed to the provider as is. ``headers``: extra HTTP headers (for
    HTTP targets); never cached, logged or returned (non-secret ones enter the key as digests).
    ``usable``: whether a reply may be stored in the cache and served from it (default
    :func:`usable_by_default`); an unusable reply is returned but never stored, and an
    unusable stored entry counts as a miss, so the next run asks again. ``cache_prefix``: the
    leading system message is a stable prefix; for providers that need it marked for their
    prompt cache it is sent with ``cache_control`` (:mod:`empath_gate.llm.prompt_cache`; the
    reply-cache key does not change).

    Returns a :class:`Completion` (check ``filtered``). Raises :class:`ProviderError` with
    ``kind``/``retryable`` after the last retry, or at once for non-retryable kinds
    (authentication, bad_request, context_exceeded, content_policy, not_found, unknown); raises
    ValueError for a missing model or a clash between ``cache_extra`` and the client's own key
    parts; ConfigError when the embedded local model is not installed; BudgetExceeded when the
    active ledger's budget refused an attempt (:mod:`empath_gate.llm.accounting`).
    """
    role_name = _checked_call(role, settings, cache_extra)
    accept = usable or usable_by_default(role)
    norm = normalize_messages(messages, rules_for(settings.model, system_role=settings.system_role))
    sent = [well_formed_tree(m) for m in norm.messages]  # new dicts; a surrogate left anywhere: U+FFFD
    events: list[Event] = []
    if norm.system_folded:
        events.append(Event(kind="system_folded", role=role_name, detail={"model": settings.model}))
    meta: dict[str, Any] = {
        "role": role_name,
        "mode": str(response_format.get("type")) if response_format else None,
        "system_folded": norm.system_folded,
        "started_at": utc_now(),
    }
    t0 = time.perf_counter()

    key: str | None = None
    if cache is not None and cache.mode != "off":
        key = cache.key(call_key_parts(
            role, settings, sent, seed=seed, response_format=response_format, headers=headers,
            cache_extra=cache_extra, embedded_local=_providers.get("local") is None,
        ))
        stored = cache.get(key)
        batch = active_batch(role_name) if stored is None else None  # llm/deferred.py: no live call
        if batch is not None:
            stored = batch.answer(key, lambda: batch_body(settings, sent, seed, response_format), cache_extra)
        if stored is not None:
            hit = _from_stored(
                stored, events=tuple(events), cache_key=key, latency_s=time.perf_counter() - t0,
                ended_at=utc_now(), **meta,
            )
            ledger = active_ledger()
            if batch is not None:  # a batch result: stored when usable, returned either way
                if ledger is not None:
                    ledger.batched(role_name, stored.get("cost_usd"), stored.get("batch_saved_usd"))
                if accept(hit):
                    cache.put(key, stored)
                return hit
            if accept(hit):
                if ledger is not None:
                    ledger.hit(role_name, stored.get("cost_usd"))
                return hit
            cache.reject(key)

    lib = _lib()
    to_send = mark_cache_prefix(sent, _provider_of(settings.model)) if cache_prefix else sent
    kwargs = _provider_kwargs(settings, to_send, seed=seed, response_format=response_format, headers=headers)
    secrets = [settings.api_key.get_secret_value()] if settings.api_key is not None else []
    # credential headers only: the conversation id or the synthetic-traffic flag an error body
    # echoes is not a secret (the target's configured headers are registered as secrets anyway)
    secrets += [v for name, value in (headers or {}).items() if is_secret_header(name)
                for v in header_secrets(value)]
    ledger = active_ledger()
    reserve = 0.0
    if ledger is not None and ledger.limit_usd is not None:
        reserve = reservation_usd(settings.model, sent, settings.max_tokens)
    meter = Meter(lib, role_name, reserve, lambda r: _cost_of(lib, r, settings))
    try:
        # only for a provider litellm names: a registered one's function may call litellm itself
        named = _provider_of(settings.model) is not None
        unread = skip_unread_logging(lib, kwargs) if named else contextlib.nullcontext(False)
        with inline_request_building(_provider_of), unread:
            resp, attempts = await call_with_retries(meter, kwargs, settings, role_name, secrets, events)
    except ProviderError:
        if meter.stopped is not None:  # the budget refused an attempt: not a provider failure
            raise meter.stopped from None
        raise
    completion = _from_response(
        lib, resp, settings, cache="miss" if key is not None else "off", events=tuple(events),
        attempts=attempts, latency_s=time.perf_counter() - t0, cache_key=key, ended_at=utc_now(), **meta,
    )
    if cache is not None and key is not None and accept(completion):
        cache.put(key, _stored_value(completion))
    return completion
