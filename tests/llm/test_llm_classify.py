"""Classification of provider failures from class names, status codes and known strings."""

from __future__ import annotations

import pytest

from empath_gate.errors import ProviderError
from empath_gate.llm.classify import classify, classify_message, redact_secrets


def named(name: str, base: type[Exception] = Exception, **attrs: object) -> type[Exception]:
    """An exception class named like a litellm/httpx one (classification matches names)."""
    return type(name, (base,), dict(attrs))


# Class hierarchy shaped like litellm's: ContextWindowExceededError(BadRequestError) etc.
APIError = named("APIError")
BadRequestError = named("BadRequestError", APIError)
ContextWindowExceededError = named("ContextWindowExceededError", BadRequestError)
RateLimitError = named("RateLimitError", APIError)
InternalServerError = named("InternalServerError", APIError)
APIConnectionError = named("APIConnectionError", APIError)
Timeout = named("Timeout", APIConnectionError)


def exc(cls: type[Exception], message: str, status: int | None = None) -> Exception:
    e = cls(message)
    if status is not None:
        e.status_code = status  # type: ignore[attr-defined]
    return e


@pytest.mark.parametrize(
    ("error", "kind", "retryable"),
    [
        (exc(RateLimitError, "slow down", 429), "rate_limit", True),
        (exc(InternalServerError, "boom", 500), "server", True),
        (exc(Timeout, "Request timed out", 408), "timeout", True),
        (exc(APIConnectionError, "Connection error."), "connection", True),
        (exc(ContextWindowExceededError, "too long", 400), "context_exceeded", False),
        (exc(BadRequestError, "Invalid value for 'messages'", 400), "bad_request", False),
        # a 400 echoing the request's headers is not a timeout (nor any transient kind)
        (exc(BadRequestError, "unsupported header 'x-stainless-read-timeout'", 400), "bad_request", False),
        (exc(APIError, "Error code: 400 - header x-stainless-read-timeout: 600", 400), "bad_request", False),
        (exc(APIError, "Error code: 422 - field 'timeout' rate limit exceeded", 422), "bad_request", False),
        # litellm does not always raise its specific class: the strings decide
        (
            exc(BadRequestError, "This model's maximum context length is 8192 tokens", 400),
            "context_exceeded",
            False,
        ),
        (
            exc(BadRequestError, "rejected as a result of our safety system (content_policy_violation)", 400),
            "content_policy",
            False,
        ),
        (exc(APIError, "Incorrect API key provided", 401), "authentication", False),
        (exc(APIError, "Error code: 503 - Service Unavailable", 503), "server", True),
        (exc(APIError, "upstream said 429 Too Many Requests"), "rate_limit", True),
        (exc(APIError, "Expecting value: line 1 column 63 (char 62)", 500), "server", True),
        (exc(APIError, "The model `x` does not exist", 404), "not_found", False),
        (exc(Exception, "Overloaded"), "rate_limit", True),
        (TimeoutError("deadline"), "timeout", True),
        (ConnectionRefusedError("[Errno 111] Connection refused"), "connection", True),
        (exc(Exception, "something odd happened"), "unknown", False),
        (exc(APIError, "weird", 502), "server", True),
        (exc(APIError, "weird", 403), "authentication", False),
    ],
)
def test_classify(error: Exception, kind: str, retryable: bool) -> None:
    err = classify(error)
    assert isinstance(err, ProviderError)
    assert (err.kind, err.retryable) == (kind, retryable)


def test_status_is_kept_and_provider_error_passes_through() -> None:
    assert classify(exc(RateLimitError, "x", 429)).status_code == 429
    original = ProviderError("m", kind="server", retryable=True)
    assert classify(original) is original


@pytest.mark.parametrize(
    ("message", "kind"),
    [
        ("context_length_exceeded", "context_exceeded"),
        ("prompt is too long: 210000 tokens > 200000 maximum", "context_exceeded"),
        (
            "Azure OpenAI: The response was filtered due to the prompt triggering content management policy",
            "content_policy",
        ),
        ("Rate limit reached for gpt-4o", "rate_limit"),
        ("RESOURCE_EXHAUSTED", "rate_limit"),
        ("Server disconnected without sending a response.", "connection"),
        ("Bad Gateway", "server"),
        ("all good", None),
    ],
)
def test_known_strings(message: str, kind: str | None) -> None:
    assert classify_message(message) == kind


def test_messages_are_redacted(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SOMEPROVIDER_API_KEY", "planted-credential-123456")
    err = classify(
        exc(APIError, "Incorrect API key provided: sk-abc123456789xyz; env planted-credential-123456", 401)
    )
    assert "sk-abc123456789xyz" not in str(err)
    assert "planted-credential-123456" not in str(err)
    assert "<redacted>" in str(err)
    assert (
        redact_secrets("Authorization: Bearer abcdefghijkl", extra=["zzzzzzzzzz"])
        == "Authorization: <redacted>"
    )
    assert redact_secrets('{"api_key": "hunter22"}') == '{"api_key": "<redacted>"}'
