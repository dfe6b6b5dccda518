"""Provider batch APIs through litellm: upload a JSONL of chat requests, create a batch, poll it,
read its results (the one module that calls litellm's Files and Batches functions).

A batch line is OpenAI's format: ``{"custom_id", "method": "POST", "url":
"/v1/chat/completions", "body": {...}}``; the body is what the client would send for the call
(:func:`batch_body`), never a credential. litellm routes the calls to the role's provider
(``custom_llm_provider`` from the model string) and endpoint (``api_base``); the key comes from
the provider's environment variable, or the role's explicit ``api_key``.

Results are read fail-closed (:func:`read_results`): a line whose ``response`` is not a 200 chat
completion, an ``error`` line, and a request without a line are *errors* with their reason,
never replies. A reply is priced at the batch rate: :data:`BATCH_PRICE_FACTOR` of the live
price from litellm's cost map (None when the map does not price the model).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from empath_gate.bounded import InputLimitError, JsonLineError, iter_jsonl
from empath_gate.errors import ProviderError
from empath_gate.secrets import redact as redact_secrets

if TYPE_CHECKING:
    from empath_gate.settings import RoleSettings

CHAT_ENDPOINT = "/v1/chat/completions"
COMPLETION_WINDOW = "24h"
"""The only completion window OpenAI's Batch API offers (its batch guide)."""
BATCH_PRICE_FACTOR = 0.5
"""Batch price as a share of the live price: OpenAI's Batch API and Anthropic's Message Batches
both bill 50% of the standard price (their pricing pages)."""
DONE = frozenset({"completed"})
FAILED = frozenset({"failed", "expired", "cancelled", "cancelling"})
"""Batch statuses (OpenAI's batch object): ``completed`` has results; these never will."""


@dataclass(frozen=True)
class BatchStatus:
    """One poll of a batch: ``status`` as the provider says (``validating``, ``in_progress``,
    ``finalizing``, ``completed``, ``failed``, ``expired``, ``cancelled``…), the result files'
    ids (None until completed), and the request counts (total, completed, failed)."""

    batch_id: str
    status: str
    output_file_id: str | None
    error_file_id: str | None
    total: int
    completed: int
    failed: int

    @property
    def done(self) -> bool:
        """True when the results can be read."""
        return self.status in DONE

    @property
    def dead(self) -> bool:
        """True when the batch ended without results (failed, expired, cancelled)."""
        return self.status in FAILED


_QUIET_POLL = {"batch_ignore_default_logging": True}
"""litellm metadata of a poll: no success logging of the batch. Else, when the poll finds the
batch completed, litellm's logging downloads its output file to price it, in a task of its own
that nobody awaits: a second download of the results, and the run's loop cancels it when the run
ends, mid-connect ("coroutine ... connect_tcp ... was never awaited"). The collect pass reads and
prices the results itself (:func:`read_results`)."""


def _lib() -> Any:
    from empath_gate.llm.client import litellm_module

    return litellm_module()


def provider_of(model: str) -> tuple[str, str]:
    """(provider, the provider's own model name) of a litellm model string, e.g.
    ``("openai", "gpt-4o-mini")``. Raises ProviderError (kind ``bad_request``) when litellm
    cannot tell."""
    try:
        name, provider, _key, _base = _lib().get_llm_provider(model)
    except Exception as exc:
        raise ProviderError(f"judge batch: litellm cannot tell the provider of {model!r}: {exc}",
                            kind="bad_request") from None
    return str(provider), str(name)


def batch_body(
    settings: RoleSettings,
    messages: list[dict[str, Any]],
    seed: int | None,
    response_format: dict[str, Any] | None,
) -> dict[str, Any]:
    """The OpenAI chat request body of one call of ``settings`` (the provider's model name, the
    normalised ``messages``, temperature, max_tokens, seed when sent, response_format, the
    role's ``extra`` parameters); no credential and no header."""
    body: dict[str, Any] = dict(settings.extra)
    body.update(model=provider_of(settings.model or "")[1], messages=messages)
    if settings.temperature is not None:
        body["temperature"] = settings.temperature
    if settings.max_tokens is not None:
        body["max_tokens"] = settings.max_tokens
    if seed is not None and settings.send_seed:
        body["seed"] = seed
    if response_format is not None:
        body["response_format"] = response_format
    return body


def batch_lines(requests: Iterable[tuple[str, Mapping[str, Any]]]) -> bytes:
    """The JSONL input file of ``(custom_id, body)`` pairs (UTF-8, one request per line)."""
    return "".join(
        json.dumps({"custom_id": cid, "method": "POST", "url": CHAT_ENDPOINT, "body": dict(body)},
                   ensure_ascii=False) + "\n"
        for cid, body in requests
    ).encode("utf-8")


def _route(settings: RoleSettings) -> dict[str, Any]:
    """litellm's keyword arguments naming the provider, endpoint and (explicit) key."""
    provider, _name = provider_of(settings.model or "")
    kwargs: dict[str, Any] = {"custom_llm_provider": provider}
    if settings.api_base:
        kwargs["api_base"] = settings.api_base
    if settings.api_key is not None:
        kwargs["api_key"] = settings.api_key.get_secret_value()
    return kwargs


def _failed(what: str, exc: Exception, settings: RoleSettings) -> ProviderError:
    secrets = [settings.api_key.get_secret_value()] if settings.api_key is not None else []
    text = redact_secrets(f"judge batch: {what} failed: {type(exc).__name__}: {exc}", secrets)
    return ProviderError(text, kind="batch")


async def submit(
    settings: RoleSettings, requests: Iterable[tuple[str, Mapping[str, Any]]],
    metadata: Mapping[str, str] | None = None,
) -> tuple[str, str]:
    """Upload ``requests`` (``(custom_id, body)``) and create a batch on the chat endpoint;
    returns (batch id, input file id). Raises ProviderError (kind ``batch``, secrets redacted)."""
    lib = _lib()
    route = _route(settings)
    try:
        file = await lib.acreate_file(file=("empath-judge-batch.jsonl", batch_lines(requests)),
                                      purpose="batch", **route)
    except Exception as exc:
        raise _failed("uploading the requests", exc, settings) from None
    try:
        batch = await lib.acreate_batch(
            completion_window=COMPLETION_WINDOW, endpoint=CHAT_ENDPOINT, input_file_id=file.id,
            metadata=dict(metadata or {}), **route,
        )
    except Exception as exc:
        raise _failed("creating the batch", exc, settings) from None
    return str(batch.id), str(file.id)


async def poll(settings: RoleSettings, batch_id: str) -> BatchStatus:
    """One poll of ``batch_id``. Raises ProviderError (kind ``batch``)."""
    try:
        b = await _lib().aretrieve_batch(batch_id=batch_id, litellm_metadata=dict(_QUIET_POLL),
                                         **_route(settings))
    except Exception as exc:
        raise _failed(f"polling batch {batch_id}", exc, settings) from None
    counts = getattr(b, "request_counts", None)
    return BatchStatus(
        batch_id=batch_id, status=str(getattr(b, "status", "unknown")),
        output_file_id=getattr(b, "output_file_id", None), error_file_id=getattr(b, "error_file_id", None),
        total=int(getattr(counts, "total", 0) or 0), completed=int(getattr(counts, "completed", 0) or 0),
        failed=int(getattr(counts, "failed", 0) or 0),
    )


async def download(settings: RoleSettings, file_id: str) -> str:
    """The text of result file ``file_id``. Raises ProviderError (kind ``batch``)."""
    try:
        content = await _lib().afile_content(file_id=file_id, **_route(settings))
    except Exception as exc:
        raise _failed(f"downloading file {file_id}", exc, settings) from None
    raw = getattr(content, "content", content)
    return raw.decode("utf-8", "replace") if isinstance(raw, (bytes, bytearray)) else str(raw)


def _stored(body: Mapping[str, Any], model: str) -> dict[str, Any] | str:
    """The reply-cache value of a chat completion ``body``, or why it is none."""
    choices = body.get("choices")
    if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
        return "the result is not a chat completion (no choices)"
    message = choices[0].get("message")
    content = message.get("content") if isinstance(message, dict) else None
    if content is not None and not isinstance(content, str):
        return "the result's message content is not text"
    raw_usage = body.get("usage")
    usage: Mapping[str, Any] = raw_usage if isinstance(raw_usage, dict) else {}
    pt, ct = usage.get("prompt_tokens"), usage.get("completion_tokens")
    details = usage.get("prompt_tokens_details")
    cached = details.get("cached_tokens") if isinstance(details, dict) else None
    tokens = {
        "prompt_tokens": pt if isinstance(pt, int) else None,
        "completion_tokens": ct if isinstance(ct, int) else None,
        "cached_prompt_tokens": cached if isinstance(cached, int) else None,
    }
    cost = saved = None
    if isinstance(pt, int) and isinstance(ct, int):
        from empath_gate.llm.client import estimate_cost

        live = estimate_cost(model, pt, ct)
        if live is not None:
            cost, saved = live * BATCH_PRICE_FACTOR, live * (1 - BATCH_PRICE_FACTOR)
    return {
        "content": content, "finish_reason": choices[0].get("finish_reason"),
        "model": body.get("model") or model, "usage": tokens, "cost_usd": cost, "batch_saved_usd": saved,
        "system_fingerprint": body.get("system_fingerprint"), "tool_calls": [],
    }


def read_results(
    text: str, wanted: Iterable[str], model: str, source: str
) -> dict[str, dict[str, Any] | str]:
    """custom_id -> the reply-cache value of its result, or why there is none, for every id in
    ``wanted`` (an id without a line: ``no result line``; lines of other ids are ignored).
    ``model``: the litellm model string (pricing); ``source``: names the file in errors. A file
    that is not JSONL makes every wanted id an error."""
    out: dict[str, dict[str, Any] | str] = {}
    try:
        lines = [obj for _, obj in iter_jsonl(text, source)]
    except (InputLimitError, JsonLineError) as exc:
        return dict.fromkeys(wanted, f"unreadable result file: {exc}")
    for line in lines:
        if not isinstance(line, dict) or not isinstance(line.get("custom_id"), str):
            continue
        cid = line["custom_id"]
        error, response = line.get("error"), line.get("response")
        if error:
            text_of = redact_secrets(json.dumps(error, ensure_ascii=False))[:300]
            out[cid] = f"the provider answered an error: {text_of}"
        elif not isinstance(response, dict) or not isinstance(response.get("body"), dict):
            out[cid] = "the result line has no response body"
        elif response.get("status_code") != 200:
            status = response.get("status_code")
            body = redact_secrets(json.dumps(response["body"], ensure_ascii=False))[:300]
            out[cid] = f"the provider answered HTTP {status}: {body}"
        else:
            out[cid] = _stored(response["body"], model)
    return {cid: out.get(cid, "the batch has no result line for this request") for cid in wanted}


__all__ = [
    "BATCH_PRICE_FACTOR",
    "BatchStatus",
    "batch_body",
    "batch_lines",
    "download",
    "poll",
    "provider_of",
    "read_results",
    "submit",
]
