"""Classify provider failures into :class:`~empath_gate.errors.ProviderError` kinds.

litellm maps most provider errors to its own exception classes, but not always (a proxy's
HTML error page, an OpenAI-compatible server with unusual bodies, a custom provider), so the
classification looks, in order, at: known error strings in the message (most specific), the
exception's class names along its MRO (litellm's and httpx's names, matched by name so this
module never imports them), and the HTTP status code.

Kinds and whether they are retried (the issue's error classes):

==================  =========  ==========================================================
kind                retryable  typical cause
==================  =========  ==========================================================
rate_limit          yes        HTTP 429, "rate limit", "overloaded" quota bursts
server              yes        HTTP 5xx, malformed/unparsable provider body
connection          yes        refused/reset connection, DNS failure (found along the
                               exception chain: litellm calls a refused connection a 500)
timeout             yes        request timed out
authentication      no         HTTP 401/403, bad or missing key, credentials in the URL
bad_request         no         HTTP 400/413/422 other than the three below (its text may
                               name only those, never a retryable kind)
context_exceeded    no         prompt longer than the model's context window
content_policy      no         the provider refused the request for its content policy
not_found           no         HTTP 404, unknown model
unknown             no         anything else (reported as is)
==================  =========  ==========================================================

Messages are passed through :func:`redact_secrets` so a provider echoing part of a key never
puts it in a transcript or a log.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable

from empath_gate.bounded import well_formed
from empath_gate.errors import ProviderError

RETRYABLE_KINDS = frozenset({"rate_limit", "server", "connection", "timeout"})

# (kind, pattern) in priority order; matched case-insensitively against the message.
_STRING_RULES: tuple[tuple[str, re.Pattern[str]], ...] = tuple(
    (kind, re.compile(p, re.I))
    for kind, p in (
        (
            "context_exceeded",
            r"context[_ ]length[_ ]exceeded|maximum context length|context window"
            r"|prompt is too long|too many tokens|input is too long|exceeds the context"
            r"|reduce the length of the messages|string_above_max_length",
        ),
        (
            "content_policy",
            r"content[_ ]policy|content management policy|safety system|responsible ?ai"
            r"|flagged as potentially violating|blocked by .*(safety|filter)",
        ),
        (
            "authentication",
            r"invalid[_ ]api[_ ]key|incorrect api key|authentication|unauthori[sz]ed"
            r"|permission denied|api key not valid|no api key|missing api key"
            r"|credentials encoded in url",
        ),
        ("rate_limit", r"rate[_ ]?limit|too many requests|quota|overloaded|resource[_ ]exhausted|\b429\b"),
        ("timeout", r"timed? ?out|timeout|deadline exceeded"),
        (
            "connection",
            r"connection (?:refused|reset|error|aborted)|connecterror|cannot connect"
            r"|name or service not known|nodename nor servname|server disconnected"
            r"|remote ?protocol ?error|incomplete chunked read|peer closed connection",
        ),
        (
            "server",
            r"internal server error|bad gateway|service unavailable|gateway timeout"
            r"|\b50[0234]\b|jsondecodeerror|expecting value|unterminated string|invalid json"
            r"|unexpected end of|could not parse|unparsable",
        ),
        ("not_found", r"model[_ ]not[_ ]found|does not exist|not found"),
        ("bad_request", r"bad ?request|invalid[_ ]request|unprocessable"),
    )
)

# Class names (litellm's, openai's, httpx's, builtins) -> kind; checked along the MRO.
_CLASS_RULES: dict[str, str] = {
    "ContextWindowExceededError": "context_exceeded",
    "ContentPolicyViolationError": "content_policy",
    "AuthenticationError": "authentication",
    "PermissionDeniedError": "authentication",
    "RateLimitError": "rate_limit",
    "Timeout": "timeout",
    "APITimeoutError": "timeout",
    "TimeoutException": "timeout",
    "ReadTimeout": "timeout",
    "ConnectTimeout": "timeout",
    "TimeoutError": "timeout",
    "APIConnectionError": "connection",
    "ConnectError": "connection",
    "RemoteProtocolError": "connection",
    "ConnectionError": "connection",
    "ServiceUnavailableError": "server",
    "InternalServerError": "server",
    "BadGatewayError": "server",
    "JSONDecodeError": "server",
    "NotFoundError": "not_found",
    "UnprocessableEntityError": "bad_request",
    "BadRequestError": "bad_request",
    "InvalidRequestError": "bad_request",
    "UnsupportedParamsError": "bad_request",
}

# Kinds a generic class may be refined into by a string (a BadRequestError carrying
# "maximum context length" is context_exceeded), and kinds strings may not override.
_SPECIFIC = frozenset({"context_exceeded", "content_policy", "authentication"})


def _status_kind(status: int | None) -> str | None:
    if status is None:
        return None
    if status == 429:
        return "rate_limit"
    if status in (401, 403):
        return "authentication"
    if status == 404:
        return "not_found"
    if status in (408,):
        return "timeout"
    if status in (400, 413, 422):
        return "bad_request"
    if 500 <= status <= 599:
        return "server"
    return None


def status_kind(status: int) -> str:
    """The kind an HTTP status alone points to (the module table); ``unknown`` for a status
    the table does not name (a redirect, 418...)."""
    return _status_kind(status) or "unknown"


def _mro_names(exc: BaseException) -> list[str]:
    return [c.__name__ for c in type(exc).__mro__]


def _status_of(exc: BaseException) -> int | None:
    for attr in ("status_code", "http_status", "status"):
        v = getattr(exc, attr, None)
        if isinstance(v, int) and 100 <= v <= 599:
            return v
    resp = getattr(exc, "response", None)
    v = getattr(resp, "status_code", None)
    return v if isinstance(v, int) else None


def exception_chain(exc: BaseException, limit: int = 12) -> list[BaseException]:
    """``exc`` and the exceptions it was raised from (``__cause__``, else ``__context__``),
    outermost first, at most ``limit`` deep (litellm wraps an httpx/aiohttp error in an
    openai error in its own: the root cause is at the end)."""
    out: list[BaseException] = []
    cur: BaseException | None = exc
    while cur is not None and len(out) < limit and all(cur is not e for e in out):
        out.append(cur)
        cur = cur.__cause__ or cur.__context__
    return out


_DNS = re.compile(
    r"name or service not known|nodename nor servname|temporary failure in name resolution"
    r"|getaddrinfo failed|no address associated with hostname|name resolution",
    re.I,
)


def root_cause(exc: BaseException) -> str | None:
    """``connection refused``, ``DNS failure`` or ``credentials in the URL`` when one of those
    is the root of ``exc`` (anywhere along :func:`exception_chain`), else None. litellm reports
    a refused connection as an ``InternalServerError`` with status 500 ("Connection error."),
    so only the chain tells a dead endpoint from a failing one. Only the client's own errors
    (``OSError``s, httpx's ``ValueError`` for a URL with user-info) are read: a proxy's 502
    body saying "connection refused" is a server error, not a dead endpoint."""
    for e in exception_chain(exc):
        names = _mro_names(e)
        # messages count only on the client's own errors, never on a server's error body
        os_text = str(e) if isinstance(e, OSError) else ""
        if "ConnectionRefusedError" in names or re.search(r"connection refused|errno 111\b", os_text, re.I):
            return "connection refused"
        if "gaierror" in names or "ClientConnectorDNSError" in names or _DNS.search(os_text):
            return "DNS failure"
        if type(e) is ValueError and re.search(r"credentials encoded in url", str(e), re.I):
            return "credentials in the URL"
    return None


_ROOT_KINDS = {
    "connection refused": "connection",
    "DNS failure": "connection",
    "credentials in the URL": "authentication",
}


def classify_message(message: str) -> str | None:
    """The kind a known error string points to, or None (pure; see the module table)."""
    for kind, pattern in _STRING_RULES:
        if pattern.search(message):
            return kind
    return None


def classify(exc: BaseException) -> ProviderError:
    """Turn any exception raised by a provider call into a ProviderError with ``kind``,
    ``retryable`` and ``status_code`` set, its message redacted of secrets. A ProviderError
    passes through unchanged."""
    if isinstance(exc, ProviderError):
        return exc
    message = redact_secrets(f"{type(exc).__name__}: {exc}")
    status = _status_of(exc)
    by_class = next((_CLASS_RULES[n] for n in _mro_names(exc) if n in _CLASS_RULES), None)
    by_string = classify_message(str(exc))
    by_status = _status_kind(status)

    # a 400/413/422 is the request's fault: its text may name a specific kind (context length,
    # content policy, credentials) but never a transient one (a body echoing the request's
    # "x-stainless-read-timeout" header is not a timeout)
    refused = by_class == "bad_request" or by_status == "bad_request"
    kind: str
    if by_string in _SPECIFIC:
        kind = by_string
    elif by_class in _SPECIFIC or (by_class is not None and by_class != "bad_request"):
        kind = by_class
    elif by_string is not None and not refused:
        kind = by_string
    elif by_class is not None:
        kind = by_class
    elif by_status is not None:
        kind = by_status
    else:
        kind = "unknown"
    # A generic class with a clear status (litellm's APIError with 503) follows the status.
    if kind in ("unknown", "bad_request") and by_status in RETRYABLE_KINDS:
        kind = by_status
    # The root cause wins over litellm's wrapper ("InternalServerError: Connection error.").
    cause = root_cause(exc)
    if cause is not None and kind not in _SPECIFIC - {"authentication"}:
        kind = _ROOT_KINDS[cause]
    elif status in (401, 403) and kind not in _SPECIFIC:  # never retried as a server error
        kind = "authentication"
    retryable = kind in RETRYABLE_KINDS
    return ProviderError(well_formed(message), kind=kind, retryable=retryable, status_code=status)


# --------------------------------------------------------------------------- secrets


def redact_secrets(text: str, extra: Iterable[str] = ()) -> str:
    """``text`` with every secret taken out (:func:`empath_gate.secrets.redact`), ``extra``
    values too."""
    from empath_gate.secrets import redact, register_environment

    register_environment(os.environ)
    return redact(text, extra)
