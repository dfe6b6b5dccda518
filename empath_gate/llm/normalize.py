"""Pure message normalisation before a chat call, per provider.

Providers disagree on what a message list may look like. Before every call the client applies,
in this order:

1. drop messages with empty or whitespace-only content (and no tool calls): empty content is
   never sent (a filtered target reply is recorded as an empty turn and must not be replayed);
2. fold the system prompt into the first user message when the model rejects the system
   role (the caller records a ``system_folded`` event);
3. merge consecutive messages of the same role (joined by a blank line), except messages whose
   ``name`` fields differ (two speakers of a multi-party conversation stay apart);
4. add an opening user message when the provider requires the dialogue to start with one.

Everything here is a pure function of its arguments; nothing is imported from litellm.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from pydantic import BaseModel, ConfigDict

OPENING_USER_TEXT = "(start)"
"""Content of the opening user message added for providers that require one; the project's
choice, kept short and neutral so it carries no meaning a model could react to."""


class ProviderRules(BaseModel):
    """What a model accepts. ``system_role``: accepts a ``system`` message; ``user_first``:
    the first non-system message must be from the user."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    system_role: bool = True
    user_first: bool = False


_USER_FIRST_PREFIXES: tuple[str, ...] = (
    "anthropic/",
    "claude",
    "gemini/",
    "vertex_ai/",
    "bedrock/",
    "cohere/",
    "cohere_chat/",
)
_USER_FIRST_MODELS: tuple[str, ...] = ("claude", "gemini", "gemma")
"""Providers whose chat APIs require the turns to open with a user message (Anthropic Messages
API, Gemini/Vertex ``contents``, Bedrock Converse, Cohere chat documentation), and model-name
prefixes of those models when served behind an OpenAI-compatible proxy
(``openai/claude-…``)."""

_NO_SYSTEM_MARKERS: tuple[str, ...] = ("o1-mini", "o1-preview", "gemma")
"""Model-name fragments of models that reject a system message: OpenAI's o1-preview/o1-mini
(launch documentation, "system messages are not supported") and Gemma (its chat template has
no system turn; Google AI Studio answers "Developer instruction is not enabled")."""


def rules_for(model: str | None, *, system_role: bool | None = None) -> ProviderRules:
    """Rules of ``model`` (a litellm model string) from the tables above; ``system_role``
    (from RoleSettings) overrides the table when not None. Unknown models accept everything."""
    name = (model or "").lower()
    sys_ok = not any(m in name for m in _NO_SYSTEM_MARKERS)
    if system_role is not None:
        sys_ok = system_role
    bare = name.split("/", 1)[-1]
    user_first = name.startswith(_USER_FIRST_PREFIXES) or bare.startswith(_USER_FIRST_MODELS)
    return ProviderRules(system_role=sys_ok, user_first=user_first)


class Normalized(BaseModel):
    """The messages to send, whether the system prompt was folded, and what changed
    (``dropped_empty``, ``system_folded``, ``merged``, ``opening_user``), in order."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    messages: tuple[dict[str, Any], ...]
    system_folded: bool = False
    changes: tuple[str, ...] = ()


def _is_empty(m: Mapping[str, Any]) -> bool:
    if m.get("tool_calls"):
        return False
    c = m.get("content")
    if c is None:
        return True
    if isinstance(c, str):
        return not c.strip()
    if isinstance(c, (list, tuple)):
        return len(c) == 0
    return False


def normalize_messages(
    messages: Sequence[Mapping[str, Any]],
    rules: ProviderRules,
    *,
    opening_user_text: str = OPENING_USER_TEXT,
) -> Normalized:
    """Normalise ``messages`` (OpenAI-style dicts with ``role`` and ``content``) for ``rules``.

    Never mutates the input; returns copies. Merging applies to string contents only (other
    content shapes are left as separate messages). Raises ValueError when nothing is left to
    send (every message was empty) and when a message has a field name that is not a string
    (names of a ``str`` subclass, such as a string enum, come back as plain ``str``).
    """
    changes: list[str] = []
    msgs = [dict(m) for m in messages if not _is_empty(m)]
    if len(msgs) != len(messages):
        changes.append("dropped_empty")

    folded = False
    if not rules.system_role and any(m.get("role") == "system" for m in msgs):
        system_text = "\n\n".join(str(m["content"]) for m in msgs if m.get("role") == "system")
        msgs = [m for m in msgs if m.get("role") != "system"]
        for m in msgs:
            if m.get("role") == "user" and isinstance(m.get("content"), str):
                m["content"] = f"{system_text}\n\n{m['content']}"
                break
        else:
            msgs.insert(0, {"role": "user", "content": system_text})
        folded = True
        changes.append("system_folded")

    merged: list[dict[str, Any]] = []
    for m in msgs:
        prev = merged[-1] if merged else None
        if (
            prev is not None
            and prev.get("role") == m.get("role")
            and m.get("role") in ("user", "assistant", "system")
            and isinstance(prev.get("content"), str)
            and isinstance(m.get("content"), str)
            and not prev.get("tool_calls")
            and not m.get("tool_calls")
            and prev.get("name") == m.get("name")
        ):
            prev["content"] = f"{prev['content']}\n\n{m['content']}"
            if "merged" not in changes:
                changes.append("merged")
        else:
            merged.append(m)
    msgs = merged

    if rules.user_first:
        first = next((i for i, m in enumerate(msgs) if m.get("role") != "system"), None)
        if first is not None and msgs[first].get("role") != "user":
            msgs.insert(first, {"role": "user", "content": opening_user_text})
            changes.append("opening_user")

    if not msgs:
        raise ValueError("no message left to send: every message had empty content")
    for i, m in enumerate(msgs):  # what validating the model would check, without copying every message
        if not all(type(k) is str for k in m):
            if not all(isinstance(k, str) for k in m):
                raise ValueError(f"message {i}: every field name must be a string, not {list(m)!r}")
            msgs[i] = {str.__str__(k): v for k, v in m.items()}  # a str subclass (an enum) as plain str
    return Normalized.model_construct(messages=tuple(msgs), system_folded=folded, changes=tuple(changes))
