"""A target's reply: the :class:`TargetReply` every target kind returns, and the reading of a
reply a team's code or a provider gave (text, or structured with events; see
:mod:`empath_gate.conversation.target`, "Replies").

A ``risk`` event's detail is checked against :mod:`empath_gate.instrument.risk_labels`, a
``triage`` event's level against :mod:`empath_gate.instrument.crisis_levels`; anything else is a
TypeError naming the source, which ends the transcript as an error. A reply longer than
``max_field_chars`` (:mod:`empath_gate.bounded`) is a ProviderError, never truncated.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from pydantic import BaseModel, ConfigDict

from empath_gate.bounded import InputLimitError, check_body, well_formed_tree
from empath_gate.conversation.transcript import Event, Usage
from empath_gate.errors import ProviderError
from empath_gate.llm.client import CacheStatus, Completion

TARGET_EVENT_KINDS = frozenset({"handoff", "tool_call", "filtered", "risk", "triage"})
"""Event kinds a target may report (module :mod:`empath_gate.conversation.target`)."""


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
        events.append(Event(kind=kind, role="target", detail=well_formed_tree(dict(detail))))
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
                detail=well_formed_tree(dict(call) if isinstance(call, Mapping) else {"call": str(call)}),
            )
        )
    return content or "", tuple(events)


def bounded_reply(content: str, source: str) -> str:
    """``content`` when within ``max_field_chars``; ProviderError (not retryable) otherwise."""
    try:
        return check_body(content, source)
    except InputLimitError as exc:
        raise ProviderError(str(exc), kind="bad_request", retryable=False) from None


def from_completion(c: Completion) -> TargetReply:
    """The :class:`TargetReply` of a model call: a filtered reply becomes empty content plus a
    ``filtered`` event, tool calls become ``tool_call`` events. ProviderError for an oversize reply."""
    events = list(c.events)
    content = bounded_reply(c.content or "", f"target reply of {c.model or 'the target'}")
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


__all__ = [
    "TARGET_EVENT_KINDS", "TargetReply", "bounded_reply", "coerce_reply", "from_completion", "triage_detail",
]
