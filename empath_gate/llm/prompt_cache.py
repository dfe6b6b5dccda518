"""Provider prompt caching: marking a request's stable prefix, and what cached input costs (pure).

Providers bill a prompt prefix they have seen recently at a lower price. OpenAI (and the
OpenAI-compatible servers that copy it) do so on their own for prompts of 1,024 tokens or more
and report the share as ``usage.prompt_tokens_details.cached_tokens``; Anthropic does so only
for blocks marked ``cache_control: {"type": "ephemeral"}`` (its prompt-caching documentation),
and litellm maps its ``cache_read_input_tokens`` onto the same ``cached_tokens`` field.

:func:`mark_cache_prefix` marks the leading system message for providers in
:data:`CACHE_CONTROL_PROVIDERS`; the client (:mod:`empath_gate.llm.client`) applies it to what
it sends, never to the reply-cache key, so a cached reply stays valid whichever provider serves
the model. The judge's prompt puts its stable part (instructions, rubric, metrics) in that
system message (:mod:`empath_gate.judging.prompts`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

CACHE_CONTROL_PROVIDERS: frozenset[str] = frozenset({"anthropic"})
"""litellm provider names whose API takes ``cache_control`` marks on content blocks and passes
them on (litellm's Anthropic messages transformation keeps a system block's ``cache_control``)."""

EPHEMERAL: dict[str, str] = {"type": "ephemeral"}
"""The mark itself: Anthropic's only cache type (a five-minute lifetime by default)."""


def mark_cache_prefix(messages: Sequence[dict[str, Any]], provider: str | None) -> list[dict[str, Any]]:
    """``messages`` with the leading system message's text marked as a cacheable prefix when
    ``provider`` (a litellm provider name, or None when unknown) is in
    :data:`CACHE_CONTROL_PROVIDERS`: its string content becomes one text block with
    ``cache_control`` :data:`EPHEMERAL`. Otherwise (another provider, no leading system message,
    content already a list) the messages are returned unchanged. Never mutates its input."""
    out = [dict(m) for m in messages]
    if provider not in CACHE_CONTROL_PROVIDERS or not out:
        return out
    first = out[0]
    content = first.get("content")
    if first.get("role") != "system" or not isinstance(content, str) or not content:
        return out
    first["content"] = [{"type": "text", "text": content, "cache_control": dict(EPHEMERAL)}]
    return out
