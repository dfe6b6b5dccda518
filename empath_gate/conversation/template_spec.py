"""The request template of an HTTP bot that is not OpenAI-compatible, and reading its replies.

A template file is one JSON object (read through :mod:`empath_gate.bounded`)::

    {
      "method": "POST",
      "headers": {"X-Client": "empath-gate"},
      "body": {"session": "{{session_id}}", "text": "{{message}}", "history": "{{messages}}"},
      "reply_path": "data.reply",
      "events": {"handoff": "data.handoff"},
      "session": {"id_path": "session.id", "header": "X-Session-Id"},
      "stream": false
    }

(a streaming bot adds ``"stream": true`` and, optionally, ``"stream_error": "$.error"``).

* ``body`` (required): any JSON value. A **placeholder** is a whole JSON string value, replaced
  by a JSON value when a request is built (:func:`fill`): ``"{{message}}"`` the last user
  message (a string), ``"{{messages}}"`` the chat so far (an array of ``{"role": "user" |
  "assistant", "content": str}``, oldest first; a multi-party user message also carries
  ``"name"`` under ``multi_party_convention = "name"``), ``"{{speaker}}"`` that ``name`` of the
  last user message (``null`` for one user or under ``prefix``, where ``Name: `` starts the
  content instead), ``"{{conversation_id}}"`` an id unique to this
  generation of the transcript (a string), ``"{{session_id}}"`` the bot's session id from its
  first response (``null`` on the first turn). A ``{{…}}`` anywhere else (inside a longer
  string, an unknown name) is refused when the file is read.
* ``reply_path`` (required): where the reply text is (:mod:`empath_gate.conversation.json_paths`:
  dotted or JSONPath); with a wildcard (``$.messages[*].text``) the texts found are joined by a
  blank line. With ``"stream": true`` it is read from every server-sent event's ``data`` (a
  ``data`` that is not JSON counts as a JSON string, so ``"$"`` reads plain-text chunks) and
  the pieces are concatenated until ``data: [DONE]`` (``stream_done``) or the end of the stream
  (a surrogate pair split between two events, as from a server slicing text by UTF-16 units,
  is joined into its character; a lone surrogate becomes U+FFFD). One byte order mark
  starting the stream is dropped, as the SSE specification says.
* ``stream_error`` (``"stream": true`` only): where an event reports a failure, a path like
  the others (``"$.error"``). A stream that breaks off says so only inside itself (its status
  was 200 before the first piece): when any event has a value there (present and not ``null``,
  ``false``, ``""``, ``[]`` or ``{}``), or any event is an ``event: error`` (with or without
  this field; the stream is read no further), the turn fails as a ``server`` ProviderError
  naming the template and quoting the error (its first 300 characters), never a cut-off reply
  judged as the bot's whole answer. It is **retried** for a stateless bot (it gets the whole
  chat again, as after a 5xx) and **not** for a stateful one (it had begun to answer, so it may
  keep the turn in its session and would hear the user twice); ``stream_error_retry``
  (``true``/``false``) overrides that.
* ``events``: ``{kind: path}``; when the value at ``path`` is present and not ``null``,
  ``false``, ``""``, ``[]`` or ``{}``, the turn records an event of ``kind`` (a kind of
  :data:`empath_gate.llm.events.EventKind` a target may report: see :data:`TARGET_KINDS`)
  with ``{"path", "value"}`` as its detail.
* ``session``: ``id_path`` where the session id is in a response (the first one must carry
  it; a later one may replace it); sent back on later turns in the ``header`` named here
  and/or wherever the body holds ``"{{session_id}}"``.
* ``headers``: fixed, non-secret headers. A credential-looking name (``Authorization``,
  ``X-Api-Key``, ``Cookie``…) is refused: credentials come from the environment
  (``EMPATH_TARGET_HEADER_<NAME>``), never from a file.
* ``method``: ``POST`` (default) or ``PUT``.

A bot is **stateful** (:attr:`TargetTemplate.stateful`) when it keeps the dialogue itself: it
has a session, or its body does not send ``"{{messages}}"`` (it sees only the last message and
must remember the rest, e.g. by ``{{conversation_id}}``).

**Speakers** (multi-party seeds, :mod:`empath_gate.conversation.speakers`): under the ``name``
convention the speaker travels only in ``{{messages}}`` items and ``{{speaker}}``; a template
with neither would drop it silently, so such a request is refused (:func:`speaker_problem`).
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Literal, get_args

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from empath_gate.bounded import read_json
from empath_gate.conversation.json_paths import find_all, parse_path
from empath_gate.errors import ConfigError
from empath_gate.llm.events import EventKind
from empath_gate.llm.keying import is_secret_header
from empath_gate.settings import Settings

PLACEHOLDERS = ("message", "messages", "speaker", "conversation_id", "session_id")
"""The placeholder names a template may use (module docstring)."""

_ENGINE_KINDS = frozenset(
    {"retry", "auditor_break", "auditor_refusal", "fallback", "system_folded", "error", "budget", "filtered"}
)
"""Event kinds only the engine, the client or the auditor record: a template may not claim them."""

TARGET_KINDS: tuple[str, ...] = tuple(k for k in get_args(EventKind) if k not in _ENGINE_KINDS)
"""Event kinds a template's ``events`` may name: every :data:`EventKind` but those the engine,
the client and the auditor own (so a kind added there is usable here at once)."""

_PLACEHOLDER = re.compile(r"^\{\{\s*([A-Za-z_]+)\s*\}\}$")
_BRACES = re.compile(r"\{\{.*?\}\}")
_HEADER_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9-]*$")


class SessionSpec(BaseModel):
    """Where a bot's session id is (``id_path``) and the header that sends it back (optional)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    id_path: str
    header: str | None = Field(None, pattern=_HEADER_NAME.pattern)


class TargetTemplate(BaseModel):
    """A parsed, validated template file (module docstring). ``source`` names the file."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    method: Literal["POST", "PUT"] = "POST"
    headers: dict[str, str] = Field(default_factory=dict)
    body: Any
    reply_path: str
    events: dict[str, str] = Field(default_factory=dict)
    session: SessionSpec | None = None
    stream: bool = False
    stream_done: str = "[DONE]"
    stream_error: str | None = None
    stream_error_retry: bool | None = None
    source: str = ""

    @field_validator("headers")
    @classmethod
    def _headers(cls, v: dict[str, str]) -> dict[str, str]:
        for name in v:
            if not _HEADER_NAME.match(name):
                raise ValueError(f"header name {name!r} is not a valid HTTP header name")
            if is_secret_header(name):
                env = "EMPATH_TARGET_HEADER_" + name.upper().replace("-", "_")
                raise ValueError(
                    f"header {name!r} looks like a credential: never put it in a file; set the "
                    f"environment variable {env} (or EMPATH_TARGET_HEADERS) instead"
                )
        return v

    @field_validator("events")
    @classmethod
    def _events(cls, v: dict[str, str]) -> dict[str, str]:
        for kind in v:
            if kind not in TARGET_KINDS:
                raise ValueError(f"event kind {kind!r} is not one of {list(TARGET_KINDS)}")
        return v

    @property
    def placeholders(self) -> frozenset[str]:
        """The placeholder names the body uses."""
        return frozenset(_placeholders(self.body))

    @property
    def stateful(self) -> bool:
        """True when the bot keeps the dialogue (module docstring): a session, or no
        ``{{messages}}`` in the body."""
        return self.session is not None or "messages" not in self.placeholders

    @property
    def stream_error_retried(self) -> bool:
        """Whether a stream's error is retried: ``stream_error_retry``, else only for a
        stateless bot (module docstring)."""
        return not self.stateful if self.stream_error_retry is None else self.stream_error_retry

    def digest(self) -> str:
        """sha256 hex of the template's canonical JSON (``source`` left out, and the stream
        error fields when unset, so older templates keep their digest): part of its replies'
        cache keys, so an edited template never replays old replies."""
        unset = {k for k in ("stream_error", "stream_error_retry") if getattr(self, k) is None}
        data = self.model_dump(mode="json", exclude={"source", *unset})
        text = json.dumps(data, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
        return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _placeholders(value: Any) -> list[str]:
    """Every placeholder name in ``value``; ValueError for a misplaced or unknown one."""
    out: list[str] = []
    stack = [(value, "")]
    while stack:
        v, ptr = stack.pop()
        if isinstance(v, str):
            m = _PLACEHOLDER.match(v)
            if m:
                if m.group(1) not in PLACEHOLDERS:
                    raise ValueError(
                        f"body{ptr or '/'}: unknown placeholder {v!r} (known: {list(PLACEHOLDERS)})"
                    )
                out.append(m.group(1))
            elif _BRACES.search(v):
                raise ValueError(
                    f"body{ptr or '/'}: {v!r}: a placeholder must be a whole string value, e.g. "
                    '"text": "{{message}}"'
                )
        elif isinstance(v, dict):
            stack.extend((x, f"{ptr}/{k}") for k, x in v.items())
        elif isinstance(v, list):
            stack.extend((x, f"{ptr}/{i}") for i, x in enumerate(v))
    return out


def _problems(t: TargetTemplate) -> list[str]:
    problems: list[str] = []
    paths = [("reply_path", t.reply_path)] + [(f"events.{k}", p) for k, p in t.events.items()]
    if t.session is not None:
        paths.append(("session.id_path", t.session.id_path))
    if t.stream_error is not None:
        paths.append(("stream_error", t.stream_error))
    for name in ("stream_error", "stream_error_retry"):
        if getattr(t, name) is not None and not t.stream:
            problems.append(f'{name}: needs "stream": true (it reads server-sent events)')
    for where, path in paths:
        try:
            parse_path(path)
        except ValueError as exc:
            problems.append(f"{where}: {exc}")
    try:
        names = _placeholders(t.body)
    except ValueError as exc:
        return [*problems, str(exc)]
    if "message" not in names and "messages" not in names:
        problems.append('body: no "{{message}}" or "{{messages}}": the bot would never see the user')
    if "session_id" in names and t.session is None:
        problems.append('body: "{{session_id}}" needs a "session" with an "id_path"')
    if t.session is not None and t.session.header is None and "session_id" not in names:
        problems.append('session: set "header", or put "{{session_id}}" in the body, so the id is sent back')
    return problems


def parse_template(data: Any, source: str) -> TargetTemplate:
    """A :class:`TargetTemplate` of parsed JSON ``data``; ConfigError naming ``source`` and
    every problem (unknown field, bad path, misplaced placeholder, credential header)."""
    if not isinstance(data, dict):
        raise ConfigError(f"{source}: a target template must be a JSON object with 'body' and 'reply_path'")
    try:
        t = TargetTemplate.model_validate({**data, "source": source})
    except ValidationError as exc:
        lines = [f"{'.'.join(str(p) for p in e['loc']) or '(top)'}: {e['msg']}" for e in exc.errors()]
        raise ConfigError(f"{source}: invalid target template:\n  " + "\n  ".join(lines)) from None
    problems = _problems(t)
    if problems:
        raise ConfigError(f"{source}: invalid target template:\n  " + "\n  ".join(problems))
    return t


def load_template(path: Path) -> TargetTemplate:
    """Read and validate the template file ``path`` (bounded read). Raises ConfigError naming
    the file and what to fix (missing, not JSON, invalid)."""
    try:
        data = read_json(path)
    except OSError as exc:
        raise ConfigError(
            f"target_template: cannot read {path} ({exc.strerror}); fix the path (setting "
            "target_template / EMPATH_TARGET_TEMPLATE)"
        ) from None
    except (ValueError, UnicodeDecodeError) as exc:
        if isinstance(exc, ConfigError):
            raise
        raise ConfigError(f"{path}: the target template is not valid JSON ({exc})") from None
    return parse_template(data, str(path))


def template_of(settings: Settings) -> TargetTemplate | None:
    """The template ``settings.target_template`` names, read and validated; None when unset.
    Raises ConfigError when it is invalid or the target is not the bot's http(s) URL (checked
    when a run is prepared, before any test or call)."""
    if settings.target_template is None:
        return None
    if settings.target_kind != "http":
        raise ConfigError(
            f"target_template {settings.target_template} needs the bot's http(s) URL as the target "
            "(setting target / EMPATH_TARGET / --target)"
        )
    return load_template(settings.target_template)


# --------------------------------------------------------------------------- requests


def fill(value: Any, values: Mapping[str, Any]) -> Any:
    """``value`` (the template body) with every placeholder string replaced by its JSON value
    from ``values`` (a name missing from ``values`` becomes ``null``); a new structure, the
    template is never changed."""
    if isinstance(value, str):
        m = _PLACEHOLDER.match(value)
        return values.get(m.group(1)) if m else value
    if isinstance(value, dict):
        return {k: fill(v, values) for k, v in value.items()}
    if isinstance(value, list):
        return [fill(v, values) for v in value]
    return value


def placeholder_values(
    messages: Sequence[Mapping[str, Any]], conversation_id: str, session_id: str | None
) -> dict[str, Any]:
    """The placeholder values of one request: ``messages`` is the dialogue so far (user and
    assistant turns, the last one the user's; a message's ``name``, when it has one, is kept)."""
    chat: list[dict[str, str]] = []
    for m in messages:
        item = {"role": str(m.get("role")), "content": str(m.get("content") or "")}
        if m.get("name"):
            item["name"] = str(m["name"])
        chat.append(item)
    last = next((m for m in reversed(chat) if m["role"] == "user"), {})
    return {"message": last.get("content", ""), "messages": chat, "speaker": last.get("name"),
            "conversation_id": conversation_id, "session_id": session_id}


def speaker_problem(template: TargetTemplate, messages: Sequence[Mapping[str, Any]]) -> str | None:
    """Why ``template`` cannot send the speakers of ``messages`` (a user message with a ``name``,
    i.e. ``multi_party_convention = "name"``, and a body with neither ``{{messages}}`` nor
    ``{{speaker}}``), or None when it can or there is no speaker to send."""
    if not any(m.get("name") for m in messages if m.get("role") == "user"):
        return None
    if template.placeholders & {"messages", "speaker"}:
        return None
    where = template.source or "target_template"
    return (f"{where}: multi_party_convention = \"name\" sends each speaker's name, but the "
            "template's body has neither \"{{speaker}}\" nor \"{{messages}}\", so the bot would not "
            "see who wrote; add \"{{speaker}}\" to the body or set multi_party_convention = \"prefix\"")


# --------------------------------------------------------------------------- responses


def _present(v: Any) -> bool:
    """False for ``null``, ``false``, ``""``, ``[]`` and ``{}`` (0 is a value)."""
    if v is None or v is False:
        return False
    return not (isinstance(v, (str, list, dict)) and not v)


class MissingPath(ValueError):
    """A response lacks a required path (the reply, or the first response's session id)."""


def reply_text(document: Any, template: TargetTemplate) -> str:
    """The reply text in a parsed response. Raises MissingPath when the reply path finds
    nothing, TypeError when it finds something other than text (``null`` counts as empty)."""
    found = find_all(document, parse_path(template.reply_path))
    if not found:
        raise MissingPath(f"no reply at {template.reply_path!r}")
    texts: list[str] = []
    for v in found:
        if v is None:
            continue
        if not isinstance(v, str):
            raise TypeError(f"the reply at {template.reply_path!r} is {type(v).__name__}, not text")
        texts.append(v)
    return "\n\n".join(t for t in texts if t)


def events_of(document: Any, template: TargetTemplate) -> list[tuple[str, dict[str, Any]]]:
    """``(kind, detail)`` for every configured event present in a parsed response."""
    out: list[tuple[str, dict[str, Any]]] = []
    for kind, path in template.events.items():
        found = [v for v in find_all(document, parse_path(path)) if _present(v)]
        if found:
            value = found[0] if len(found) == 1 else found
            out.append((kind, {"path": path, "value": value}))
    return out


def stream_error_of(document: Any, template: TargetTemplate) -> Any:
    """The error an event reports at the template's ``stream_error`` path (the value found,
    or a list of them), or None when there is none or no such path."""
    if template.stream_error is None:
        return None
    found = [v for v in find_all(document, parse_path(template.stream_error)) if _present(v)]
    if not found:
        return None
    return found[0] if len(found) == 1 else found


def session_of(document: Any, template: TargetTemplate) -> str | None:
    """The session id in a parsed response (a string or a number, as text), or None."""
    if template.session is None:
        return None
    for v in find_all(document, parse_path(template.session.id_path)):
        if isinstance(v, bool) or v is None:
            continue
        if isinstance(v, (str, int)) and str(v).strip():
            return str(v)
    return None


__all__ = [
    "PLACEHOLDERS",
    "TARGET_KINDS",
    "MissingPath",
    "SessionSpec",
    "TargetTemplate",
    "events_of",
    "fill",
    "load_template",
    "parse_template",
    "placeholder_values",
    "reply_text",
    "session_of",
    "speaker_problem",
    "stream_error_of",
    "template_of",
]
