"""What the fake server answers (:class:`Reply`, :class:`Fault`) and what it records
(:class:`FakeRequest`)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

FaultKind = Literal["http_error", "timeout", "content_filter", "truncated", "malformed", "disconnect"]


@dataclass(frozen=True)
class Reply:
    """A successful chat completion.

    ``content`` may be ``None`` (e.g. with ``tool_calls``); ``finish_reason`` is sent as given;
    ``tool_calls`` is a list of OpenAI tool-call dicts; ``usage`` overrides the word-count
    usage (``{"prompt_tokens": int, "completion_tokens": int}``); ``latency_s`` delays this
    reply (added to the server-wide latency); ``extra_message`` adds keys to the message.
    """

    content: str | None = ""
    finish_reason: str = "stop"
    tool_calls: list[dict[str, Any]] | None = None
    usage: Mapping[str, int] | None = None
    system_fingerprint: str | None = "fp_empath_fake"
    latency_s: float = 0.0
    extra_message: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Fault:
    """An injected provider failure. Build with the class methods:

    * ``Fault.rate_limit(retry_after=None)``: HTTP 429 ``rate_limit_exceeded`` (with a
      ``Retry-After`` header of that many seconds when given).
    * ``Fault.server_error(status=500)``: HTTP 5xx.
    * ``Fault.http_error(status, message, type=..., code=...)``: any status with an OpenAI-style
      error body, e.g. ``Fault.context_exceeded()`` (400 ``context_length_exceeded``),
      ``Fault.auth()`` (401), ``Fault.content_policy()`` (400 ``content_policy_violation``).
    * ``Fault.timeout(seconds=30)``: sleep that long before answering (past the client's
      timeout), then answer 504.
    * ``Fault.content_filter()``: 200, ``finish_reason="content_filter"``, empty content.
    * ``Fault.truncated(content)``: 200, ``finish_reason="length"``.
    * ``Fault.malformed()``: 200 with a body that is not JSON.
    * ``Fault.disconnect()``: close the connection without answering.
    """

    kind: FaultKind
    status: int = 500
    message: str = ""
    error_type: str | None = None
    code: str | None = None
    seconds: float = 0.0
    content: str = ""
    headers: Mapping[str, str] = field(default_factory=dict)

    @classmethod
    def http_error(
        cls,
        status: int,
        message: str,
        *,
        type: str | None = None,
        code: str | None = None,
        headers: Mapping[str, str] | None = None,
    ) -> Fault:
        """An HTTP error with an OpenAI-style ``{"error": {...}}`` body."""
        return cls(
            "http_error",
            status=status,
            message=message,
            error_type=type,
            code=code,
            headers=dict(headers or {}),
        )

    @classmethod
    def rate_limit(
        cls, message: str = "Rate limit reached for requests", *, retry_after: int | None = None
    ) -> Fault:
        """HTTP 429; ``retry_after``: also send ``Retry-After: <seconds>`` (RFC 9110 §10.2.3)."""
        headers = {"Retry-After": str(retry_after)} if retry_after is not None else None
        return cls.http_error(
            429, message, type="rate_limit_error", code="rate_limit_exceeded", headers=headers
        )

    @classmethod
    def server_error(
        cls, status: int = 500, message: str = "The server had an error processing your request."
    ) -> Fault:
        return cls.http_error(status, message, type="server_error")

    @classmethod
    def auth(cls, message: str = "Incorrect API key provided.") -> Fault:
        return cls.http_error(401, message, type="invalid_request_error", code="invalid_api_key")

    @classmethod
    def bad_request(cls, message: str = "Invalid value for 'messages'.") -> Fault:
        return cls.http_error(400, message, type="invalid_request_error", code="invalid_value")

    @classmethod
    def context_exceeded(cls) -> Fault:
        return cls.http_error(
            400,
            "This model's maximum context length is 8192 tokens. However, your messages resulted in "
            "9000 tokens. Please reduce the length of the messages.",
            type="invalid_request_error",
            code="context_length_exceeded",
        )

    @classmethod
    def content_policy(cls) -> Fault:
        return cls.http_error(
            400,
            "Your request was rejected as a result of our safety system (content_policy_violation).",
            type="invalid_request_error",
            code="content_policy_violation",
        )

    @classmethod
    def timeout(cls, seconds: float = 30.0) -> Fault:
        return cls("timeout", status=504, seconds=seconds, message="upstream timed out")

    @classmethod
    def content_filter(cls) -> Fault:
        return cls("content_filter", status=200)

    @classmethod
    def truncated(cls, content: str = "I hear how hard this") -> Fault:
        return cls("truncated", status=200, content=content)

    @classmethod
    def malformed(cls) -> Fault:
        return cls("malformed", status=200)

    @classmethod
    def disconnect(cls) -> Fault:
        return cls("disconnect", status=0)


@dataclass(frozen=True)
class FakeRequest:
    """One request the server received. ``headers`` are lower-cased and never include
    ``authorization`` (nor any header whose name contains ``api-key``); ``body`` is the parsed
    JSON (``None`` when it was not JSON); ``model`` is ``body["model"]``.
    ``authorization_sha256`` is the sha256 of the ``Authorization`` header's value (None when
    absent): enough to tell which credential a client sent without keeping it."""

    path: str
    body: dict[str, Any] | None
    headers: dict[str, str]
    model: str | None
    received_at: float
    authorization_sha256: str | None = None

    @property
    def messages(self) -> list[dict[str, Any]]:
        """The request's ``messages`` list (empty when absent)."""
        body = self.body or {}
        msgs = body.get("messages")
        return list(msgs) if isinstance(msgs, list) else []

    @property
    def system(self) -> str:
        """Text of the leading ``system`` message ("" when none); a content list's text blocks
        are joined (the judge's stable part is its system message)."""
        msgs = self.messages
        if not msgs or msgs[0].get("role") != "system":
            return ""
        content = msgs[0].get("content")
        if isinstance(content, list):
            return "".join(str(b.get("text") or "") for b in content if isinstance(b, dict))
        return str(content or "")

    @property
    def last_user(self) -> str:
        """Content of the last ``user`` message ("" when none)."""
        for m in reversed(self.messages):
            if m.get("role") == "user":
                return str(m.get("content") or "")
        return ""


ReplySpec = str | Reply | Fault
Responder = Callable[[FakeRequest], ReplySpec]
