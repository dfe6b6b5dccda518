"""The model client: the only module that imports litellm.

:func:`complete` makes one chat call for a role (target, auditor or judge): it normalises the
messages for the provider, looks the reply up in the cache, calls ``litellm.acompletion``
(bounded by a per-model semaphore), retries 429/5xx/connection/timeout failures with
exponential backoff and full jitter, classifies every failure into a
:class:`~empath_gate.errors.ProviderError`, prices the call from litellm's cost map, and
returns a frozen :class:`Completion`.

litellm is imported lazily on the first call (it takes seconds), with
``LITELLM_LOCAL_MODEL_COST_MAP=True`` set first (it would otherwise try to download its price
list and retry for seconds when offline) and its telemetry and debug output off.

Custom providers: :func:`register_chat_provider` exposes a plain chat function to litellm as
``<name>/<model>`` so it goes through this same call path, cache and cost accounting (its cost
is unknown: ``None``). The provider ``local`` is pre-registered and resolves lazily to
:func:`empath_gate.llm.local.chat` (the embedded model, ``local/smollm2``).
"""

from __future__ import annotations

import asyncio
import datetime as dt
import inspect
import os
import random
import threading
import time
import weakref
from collections.abc import Awaitable, Callable, Mapping
from typing import Any, Literal, cast

from pydantic import BaseModel, ConfigDict, Field

from empath_gate.conversation.transcript import Event, Usage
from empath_gate.errors import ProviderError
from empath_gate.llm.cache import Cache
from empath_gate.llm.classify import classify, redact_secrets
from empath_gate.llm.normalize import normalize_messages, rules_for
from empath_gate.settings import RoleSettings

Role = Literal["target", "auditor", "judge"]
CacheStatus = Literal["hit", "miss", "off"]

ChatFn = Callable[..., Mapping[str, Any] | Awaitable[Mapping[str, Any]]]
"""A chat function for :func:`register_chat_provider`:
``fn(model, messages, *, temperature, max_tokens, seed) -> {"content", "finish_reason",
"prompt_tokens", "completion_tokens"}`` (sync, run in a worker thread, or async)."""


def utc_now() -> str:
    """Now as ISO-8601 UTC with milliseconds (the transcript timestamps)."""
    return dt.datetime.now(dt.timezone.utc).isoformat(timespec="milliseconds")


class Completion(BaseModel):
    """The outcome of one :func:`complete` call.

    * ``content``: the reply text (``None`` or empty when filtered or tool-call only);
      ``tool_calls``: OpenAI-style tool-call dicts of the reply.
    * ``finish_reason``: as the provider said (``stop``, ``length``, ``content_filter``…).
    * ``model``: the model id the provider reported (else the requested one).
    * ``usage``: tokens; ``cost_usd``: USD spent by this call from litellm's cost map,
      ``None`` when the model has no price there (never a guess), ``0.0`` on a cache hit.
    * ``cache``: ``hit`` (served from the cache, no provider call), ``miss`` (called, then
      stored), ``off`` (called, cache not used).
    * ``events``: ``retry`` events (one per retried failure: attempt, kind, status, delay) and
      a ``system_folded`` event when the system prompt was folded into the first user turn.
    * ``mode``: the structured-output mode requested (``json_schema``, ``json_object``) or None.
    * ``attempts``: provider attempts made (0 on a hit); ``latency_s``: wall time of the call.
    * ``started_at``/``ended_at``: ISO-8601 UTC.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    role: Role
    content: str | None
    finish_reason: str | None = None
    model: str | None = None
    usage: Usage = Usage()
    cost_usd: float | None = None
    system_fingerprint: str | None = None
    cache: CacheStatus = "off"
    events: tuple[Event, ...] = ()
    tool_calls: tuple[dict[str, Any], ...] = ()
    mode: str | None = None
    system_folded: bool = False
    attempts: int = Field(default=0, ge=0)
    latency_s: float = 0.0
    cache_key: str | None = None
    started_at: str | None = None
    ended_at: str | None = None

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


def _lib() -> Any:
    """The litellm module, imported once with the cost map local and telemetry off."""
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
    return _litellm


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
        entries.append({"provider": name, "custom_handler": _make_handler(lib, fn or _resolve_local)})
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
    if _litellm is not None:
        _sync_providers()


def _make_handler(lib: Any, fn: ChatFn) -> Any:
    class _ChatFnHandler(lib.CustomLLM):  # type: ignore[misc]
        async def acompletion(
            self,
            model: str,
            messages: list[dict[str, Any]],
            api_base: Any,
            custom_prompt_dict: Any,
            model_response: Any,
            print_verbose: Any,
            encoding: Any,
            api_key: Any,
            logging_obj: Any,
            optional_params: dict[str, Any],
            *args: Any,
            **kwargs: Any,
        ) -> Any:
            call_kw = {
                "temperature": optional_params.get("temperature"),
                "max_tokens": optional_params.get("max_tokens"),
                "seed": optional_params.get("seed"),
            }
            if inspect.iscoroutinefunction(fn):
                out = await fn(model, messages, **call_kw)
            else:
                out = await asyncio.to_thread(fn, model, messages, **call_kw)
                if inspect.isawaitable(out):
                    out = await out
            model_response.choices[0].message.content = out.get("content")
            model_response.choices[0].finish_reason = out.get("finish_reason") or "stop"
            model_response.model = model
            pt, ct = out.get("prompt_tokens"), out.get("completion_tokens")
            model_response.usage = lib.Usage(
                prompt_tokens=pt or 0, completion_tokens=ct or 0, total_tokens=(pt or 0) + (ct or 0)
            )
            return model_response

        def completion(self, *args: Any, **kwargs: Any) -> Any:  # pragma: no cover - sync path unused
            return asyncio.run(self.acompletion(*args, **kwargs))

    return _ChatFnHandler()


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
    cost map, for estimates (``empath-gate run --dry-run``); makes no call. None for models the
    map does not price, for custom providers (``local/…``) and on any error."""
    if not model or model.split("/", 1)[0] in _providers:
        return None
    try:
        prompt_cost, completion_cost = _lib().cost_per_token(
            model=model, prompt_tokens=prompt_tokens, completion_tokens=completion_tokens
        )
        return float(prompt_cost) + float(completion_cost)
    except Exception:
        return None


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


# --------------------------------------------------------------------------- concurrency

_semaphores: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, dict[str, asyncio.Semaphore]] = (
    weakref.WeakKeyDictionary()
)


def _semaphore(model: str, limit: int) -> asyncio.Semaphore:
    """One semaphore per (event loop, model): at most ``limit`` calls in flight to a model.
    The first caller's limit sizes it."""
    loop = asyncio.get_running_loop()
    per_loop = _semaphores.get(loop)
    if per_loop is None:
        per_loop = {}
        _semaphores[loop] = per_loop
    sem = per_loop.get(model)
    if sem is None:
        sem = asyncio.Semaphore(limit)
        per_loop[model] = sem
    return sem


def backoff_delay(attempt: int, settings: RoleSettings, rng: random.Random | None = None) -> float:
    """Seconds to wait before retry ``attempt`` (0-based): full jitter over
    ``min(retry_max_delay_s, retry_base_delay_s * 2**attempt)`` (the "full jitter" scheme of
    exponential backoff, AWS Architecture Blog, 2015)."""
    cap = min(settings.retry_max_delay_s, settings.retry_base_delay_s * (2**attempt))
    return (rng or random).uniform(0, cap)


# --------------------------------------------------------------------------- the call

_RESERVED_KEY_PARTS = frozenset({"role", "model", "params", "seed", "messages"})


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
) -> Completion:
    """One chat completion for ``role`` with ``settings`` (model, parameters, retries).

    ``messages``: OpenAI-style ``{"role", "content"}`` dicts (normalised here, see
    :mod:`empath_gate.llm.normalize`). ``seed``: sent when ``settings.send_seed`` (and part of
    the cache key either way). ``cache``: None or a Cache; ``cache_extra``: further key parts
    (system-prompt hash, template version, run index, re-judge index…; JSON values).
    ``response_format``: passed to the provider as is. ``headers``: extra HTTP headers (for
    HTTP targets); never cached, logged or returned.

    Returns a :class:`Completion` (check ``filtered``). Raises :class:`ProviderError` with
    ``kind``/``retryable`` after the last retry, or at once for non-retryable kinds
    (authentication, bad_request, context_exceeded, content_policy, not_found, unknown); raises
    ValueError for a missing model or a clash between ``cache_extra`` and the client's own key
    parts.
    """
    if role not in ("target", "auditor", "judge"):
        raise ValueError(f"role must be target, auditor or judge, not {role!r}")
    role_name = cast(Role, role)
    if not settings.model:
        raise ValueError(f"no model configured for the {role}")
    clash = _RESERVED_KEY_PARTS.intersection(cache_extra)
    if clash:
        raise ValueError(f"cache_extra may not redefine {sorted(clash)}")
    model = settings.model
    rules = rules_for(model, system_role=settings.system_role)
    norm = normalize_messages(messages, rules)
    sent = [dict(m) for m in norm.messages]
    events: list[Event] = []
    if norm.system_folded:
        events.append(Event(kind="system_folded", role=role_name, detail={"model": model}))
    mode = str(response_format.get("type")) if response_format else None
    started = utc_now()
    t0 = time.perf_counter()

    key: str | None = None
    if cache is not None and cache.mode != "off":
        params = {
            "temperature": settings.temperature,
            "max_tokens": settings.max_tokens,
            "extra": settings.extra,
            "response_format": response_format,
            "send_seed": settings.send_seed,
        }
        key = cache.key(
            {
                "role": role,
                "model": model,
                "params": params,
                "seed": seed,
                "messages": sent,
                **cache_extra,
            }
        )
        stored = cache.get(key)
        if stored is not None:
            return Completion(
                role=role_name,
                content=stored.get("content"),
                finish_reason=stored.get("finish_reason"),
                model=stored.get("model"),
                usage=Usage(**(stored.get("usage") or {})),
                cost_usd=0.0,
                system_fingerprint=stored.get("system_fingerprint"),
                cache="hit",
                events=tuple(events),
                tool_calls=tuple(stored.get("tool_calls") or ()),
                mode=mode,
                system_folded=norm.system_folded,
                attempts=0,
                latency_s=time.perf_counter() - t0,
                cache_key=key,
                started_at=started,
                ended_at=utc_now(),
            )

    lib = _lib()
    kwargs: dict[str, Any] = dict(settings.extra)
    kwargs.update(model=model, messages=sent, timeout=settings.timeout_s, max_retries=0, drop_params=True)
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
    secrets = [settings.api_key.get_secret_value()] if settings.api_key is not None else []
    secrets += list((headers or {}).values())

    sem = _semaphore(model, settings.concurrency)
    attempt = 0
    while True:
        try:
            async with sem:
                resp = await asyncio.wait_for(lib.acompletion(**kwargs), settings.timeout_s + 5.0)
            choices = getattr(resp, "choices", None) or []
            if not choices:
                raise ProviderError(f"{model} returned no choices", kind="server", retryable=True)
            break
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            err = classify(exc)
            message = redact_secrets(str(err), extra=secrets)
            if not err.retryable or attempt >= settings.max_retries:
                tries = f" after {attempt + 1} attempts" if attempt else ""
                raise ProviderError(
                    f"{role} call to {model} failed{tries} ({err.kind}): {message}",
                    kind=err.kind,
                    retryable=err.retryable,
                    status_code=err.status_code,
                ) from None
            delay = backoff_delay(attempt, settings)
            events.append(
                Event(
                    kind="retry",
                    role=role_name,
                    detail={
                        "attempt": attempt + 1,
                        "kind": err.kind,
                        "status": err.status_code,
                        "delay_s": round(delay, 3),
                    },
                )
            )
            await asyncio.sleep(delay)
            attempt += 1

    choice = choices[0]
    msg = getattr(choice, "message", None)
    content = getattr(msg, "content", None)
    raw_calls = getattr(msg, "tool_calls", None) or []
    tool_calls = tuple(tc.model_dump() if hasattr(tc, "model_dump") else dict(tc) for tc in raw_calls)
    u = getattr(resp, "usage", None)
    usage = Usage(
        prompt_tokens=getattr(u, "prompt_tokens", None) if u is not None else None,
        completion_tokens=getattr(u, "completion_tokens", None) if u is not None else None,
    )
    completion = Completion(
        role=role_name,
        content=content if isinstance(content, str) or content is None else str(content),
        finish_reason=getattr(choice, "finish_reason", None),
        model=getattr(resp, "model", None) or model,
        usage=usage,
        cost_usd=0.0 if settings.model and settings.model.startswith("local/") else _price(lib, resp),
        system_fingerprint=getattr(resp, "system_fingerprint", None),
        cache="miss" if key is not None else "off",
        events=tuple(events),
        tool_calls=tool_calls,
        mode=mode,
        system_folded=norm.system_folded,
        attempts=attempt + 1,
        latency_s=time.perf_counter() - t0,
        cache_key=key,
        started_at=started,
        ended_at=utc_now(),
    )
    if cache is not None and key is not None:
        cache.put(
            key,
            {
                "content": completion.content,
                "finish_reason": completion.finish_reason,
                "model": completion.model,
                "usage": usage.model_dump(),
                "cost_usd": completion.cost_usd,
                "system_fingerprint": completion.system_fingerprint,
                "tool_calls": list(tool_calls),
            },
        )
    return completion
