"""One HTTP request to a bot that is not OpenAI-compatible: the only module that imports httpx.

:func:`send` makes one request and returns its status, headers and body, read under a byte
limit; in stream mode a 2xx response is read as server-sent events (:class:`SseReader`) until a
``data`` equal to the done marker (``[DONE]``), an ``error`` event or the end of the stream.
It never retries and never classifies: :func:`empath_gate.llm.direct.call_direct` does both,
as for every model call. httpx's own exceptions (a refused connection, a timeout, a dropped
stream) propagate; the classification reads them by class name.
"""

from __future__ import annotations

import codecs
import json
import ssl
import threading
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import httpx

from empath_gate.bounded import well_formed
from empath_gate.errors import ProviderError


@dataclass(frozen=True)
class HttpRequest:
    """What to send: ``body`` is a JSON value (sent UTF-8, not ASCII-escaped); ``headers``
    are sent as given (credentials included: never log this object)."""

    method: str
    url: str
    headers: Mapping[str, str]
    body: Any
    stream: bool = False
    stream_done: str = "[DONE]"


@dataclass(frozen=True)
class SseEvent:
    """One server-sent event: its ``data`` and its ``type`` (the ``event:`` field, else
    ``message``)."""

    data: str
    type: str = "message"

    @property
    def error(self) -> bool:
        """True for an ``event: error`` (the server says the stream failed)."""
        return self.type == "error"


@dataclass(frozen=True)
class HttpResult:
    """What came back. ``headers``: lower-cased names; ``text``: the body (an error body too),
    ``""`` for a stream read as events; ``events``: each server-sent event up to the done
    marker, or up to and with the first ``error`` event (stream mode, 2xx only); ``done``: the
    done marker arrived (else the stream ended or broke off with an error); ``size``: bytes
    read."""

    status: int
    reason: str
    headers: dict[str, str] = field(default_factory=dict)
    text: str = ""
    events: tuple[SseEvent, ...] = ()
    done: bool = False
    size: int = 0

    @property
    def ok(self) -> bool:
        """True for a 2xx status."""
        return 200 <= self.status < 300


class SseReader:
    """An incremental reader of a ``text/event-stream`` (WHATWG HTML, "Server-sent events"):
    :meth:`feed` takes decoded text in any chunks and returns each :class:`SseEvent` it
    completed (the ``data:`` lines of one event joined by ``\\n``, one leading space of a value
    dropped; its type from the ``event:`` field; comments and the ``id``/``retry`` fields
    ignored). As the specification says, one U+FEFF (a UTF-8 byte order mark) starting the
    stream is dropped, and an event without ``data`` is not dispatched, except an ``error``
    event: a failure is never dropped. :meth:`close` ends the last event at the end of the
    stream."""

    def __init__(self) -> None:
        self._buffer = ""
        self._data: list[str] = []
        self._type = ""
        self._started = False

    def _line(self, line: str, out: list[SseEvent]) -> None:
        if not line:
            if self._data or self._type == "error":
                out.append(SseEvent("\n".join(self._data), self._type or "message"))
            self._data = []
            self._type = ""
            return
        if line.startswith(":"):
            return
        name, _, value = line.partition(":")
        value = value[1:] if value.startswith(" ") else value
        if name == "data":
            self._data.append(value)
        elif name == "event":
            self._type = value

    def feed(self, text: str) -> list[SseEvent]:
        """The events completed by ``text``."""
        out: list[SseEvent] = []
        if not self._started and text:
            self._started = True
            text = text.removeprefix("\ufeff")  # one BOM, only at the very start of the stream
        text = self._buffer + text
        hold = "\r" if text.endswith("\r") else ""  # may be the first half of a CRLF
        if hold:
            text = text[:-1]
        *lines, rest = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
        self._buffer = rest + hold
        for line in lines:
            self._line(line, out)
        return out

    def close(self) -> list[SseEvent]:
        """The events still open at the end of the stream."""
        out: list[SseEvent] = []
        for line in self._buffer.replace("\r\n", "\n").replace("\r", "\n").split("\n"):
            self._line(line, out)
        self._buffer = ""
        self._line("", out)
        return out


_ssl_lock = threading.Lock()
_ssl_context: ssl.SSLContext | None = None


def _tls() -> ssl.SSLContext:
    """httpx's default TLS context (certifi's roots, or ``SSL_CERT_FILE``/``SSL_CERT_DIR``),
    built once: building it loads the certificate bundle, about 85 ms a request otherwise
    (bench/bench_template_target.py)."""
    global _ssl_context
    with _ssl_lock:
        if _ssl_context is None:
            _ssl_context = httpx.create_ssl_context()
        return _ssl_context


def _too_large(url_shown: str, max_bytes: int) -> ProviderError:
    return ProviderError(
        f"the response of {url_shown} is over max_json_bytes = {max_bytes:,} bytes; raise "
        "max_json_bytes ([tool.empath-gate] key or EMPATH_MAX_JSON_BYTES) if that is expected",
        kind="bad_request",
        retryable=False,
    )


async def send(req: HttpRequest, *, timeout_s: float, max_bytes: int, url_shown: str) -> HttpResult:
    """Make ``req`` and read its response under ``max_bytes`` (a longer body or stream is a
    ProviderError, not retryable; ``url_shown`` is the URL as messages show it). Raises httpx's
    exceptions for transport failures (connection, timeout, protocol)."""
    content = well_formed(json.dumps(req.body, ensure_ascii=False)).encode("utf-8")
    headers = {"Content-Type": "application/json", **dict(req.headers)}
    if req.stream:
        headers.setdefault("Accept", "text/event-stream")
    async with (
        httpx.AsyncClient(timeout=timeout_s, follow_redirects=False, verify=_tls()) as client,
        client.stream(req.method, req.url, headers=headers, content=content) as resp,
    ):
        names = {k.lower(): v for k, v in resp.headers.items()}
        size = 0
        decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        if req.stream and 200 <= resp.status_code < 300:
            reader = SseReader()
            events: list[SseEvent] = []

            def ended(new: list[SseEvent]) -> bool | None:
                """Take ``new`` events: True at the done marker, False at an error event."""
                for event in new:
                    if not event.error and event.data.strip() == req.stream_done:
                        return True
                    events.append(event)
                    if event.error:
                        return False
                return None

            end: bool | None = None
            async for chunk in resp.aiter_bytes():
                size += len(chunk)
                if size > max_bytes:
                    raise _too_large(url_shown, max_bytes)
                if (end := ended(reader.feed(decoder.decode(chunk)))) is not None:
                    break
            if end is None:
                end = ended(reader.feed(decoder.decode(b"", final=True)) + reader.close())
            done = bool(end)
            return HttpResult(resp.status_code, resp.reason_phrase, names, "", tuple(events), done, size)
        parts: list[str] = []
        async for chunk in resp.aiter_bytes():
            size += len(chunk)
            if size > max_bytes:
                raise _too_large(url_shown, max_bytes)
            parts.append(decoder.decode(chunk))
        parts.append(decoder.decode(b"", final=True))
        return HttpResult(resp.status_code, resp.reason_phrase, names, "".join(parts), (), False, size)


__all__ = ["HttpRequest", "HttpResult", "SseEvent", "SseReader", "send"]
