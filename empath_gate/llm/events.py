"""The call types every model call reports: events (a retry, a filter, a hand-off...) and token
usage. They belong to the model-client layer, which knows nothing of conversations; the
transcript model (:mod:`empath_gate.conversation.transcript`) records them on its turns."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

EventKind = Literal[
    "handoff",        # the target handed the user to a human (often the right action)
    "tool_call",      # the target called a tool
    "filtered",       # a provider content filter blocked a reply (empty content)
    "retry",          # a call was retried (detail: error kind, attempt)
    "auditor_break",  # the LLM auditor broke character; the turn was retried or replaced
    "auditor_refusal",  # the LLM auditor refused to role-play
    "fallback",       # a scripted turn replaced an unusable auditor turn
    "feeling_unparsed",  # the LLM auditor's reply gave no usable feeling_0_100 (its message was used)
    "system_folded",  # the system prompt was folded into the first user turn
    "error",          # an infrastructure error ended the transcript
    "budget",         # the cost budget stopped the run
    "risk",           # the target's own risk detector (detail: labels, each category x timing)
    "triage",         # the target's triage classifier (detail: level)
]


class Event(BaseModel):
    """Something that happened on a turn besides its text. ``role`` names who caused it."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    kind: EventKind
    role: Literal["target", "auditor", "judge", "engine"]
    detail: dict[str, Any] = Field(default_factory=dict)


class Usage(BaseModel):
    """Token usage of one call, as the provider reported it (``None`` when unknown).
    ``cached_prompt_tokens``: how many of ``prompt_tokens`` the provider served from its prompt
    cache (OpenAI's ``usage.prompt_tokens_details.cached_tokens``, which litellm also fills from
    Anthropic's ``cache_read_input_tokens``); billed at the model's cached-input price."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    cached_prompt_tokens: int | None = None


CacheStatus = Literal["hit", "miss", "off"]
"""``hit``: served from the cache (no provider call); ``miss``: called (and stored when usable);
``off``: called, the cache not used."""


class CallFields(BaseModel):
    """What every model call reports, declared once for the call (:class:`~empath_gate.llm.client.Completion`)
    and the turn that records it (:class:`~empath_gate.conversation.transcript.Turn`).

    ``model``: the model id the provider reported (else the requested one); ``usage``: tokens;
    ``cost_usd``: USD from litellm's cost map, ``None`` when the model has no price there (never a
    guess), ``0.0`` on a cache hit; ``finish_reason`` and ``system_fingerprint`` as the provider
    said; ``started_at``/``ended_at``: ISO-8601 UTC; ``cache``: :data:`CacheStatus`.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    model: str | None = None
    usage: Usage = Usage()
    cost_usd: float | None = None
    finish_reason: str | None = None
    system_fingerprint: str | None = None
    started_at: str | None = None
    ended_at: str | None = None
    cache: CacheStatus = "off"
