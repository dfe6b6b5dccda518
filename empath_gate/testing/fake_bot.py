"""A fake chatbot with its own (not OpenAI-compatible) JSON API on 127.0.0.1, with sessions and
server-sent-event streaming: the bot the template target is tested against.

The API (what a team's bot might look like)::

    POST /api/chat            {"conversation_id": "...", "session_id": null | "...",
                               "input": {"text": "the user's message"}}
    -> 200 {"session": {"id": "s-1"},
            "output": {"text": "the reply", "handoff": null | {"to": "crisis-line"},
                       "risk_level": "none" | "high"}}

    POST /api/chat/stream     the same request
    -> 200 text/event-stream: data: {"session": {"id": "s-1"}}
                              data: {"delta": {"text": "a piece "}} ...
                              data: {"handoff": {"to": "crisis-line"}}   (on hand-off turns)
                              data: [DONE]

The session id may also come in the ``X-Bot-Session`` header. A request without a session id
starts a new session, unless its ``conversation_id`` already has one: then it is refused
(HTTP 409, ``missing session id``); an unknown session id is refused with 404. The bot keeps
each session's user messages and answers from them: the reply to the k-th message of a session
is :func:`~empath_gate.testing.scenarios.compose_reply` ``(behaviour, locale, k)``, so a bot that
lost its session answers as if the conversation had just begun. ``handoff_turns`` lists the
0-based turns on which it hands off (and reports ``risk_level`` ``high``).

Faults (:meth:`FakeBot.fail`) answer the next requests instead of the bot, without touching
any session: ``status`` (any HTTP status, optionally with ``Retry-After``), ``not_json`` (200
with an HTML page), ``missing_reply`` (200 without ``output.text``), ``empty_reply`` (200 with
an empty text), ``stream_error`` and ``error_event`` (a 200 stream that breaks off: the
session ``s-stream-fault``, one piece of text, then ``data: {"error": {"message": ...}}`` or
``event: error`` with ``data: {"message": ...}``, then ``data: [DONE]``). Example::

    from empath_gate.testing.fake_bot import FakeBot

    with FakeBot(handoff_turns={1}) as bot:
        bot.fail("status", status=503, retry_after=0)
        ...  # point a run at bot.url with a template (README: Any HTTP bot)
        assert bot.sessions  # session id -> the user messages it received
"""

from __future__ import annotations

import itertools
import json
import sys
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any, Literal

from empath_gate.testing.scenarios.target import guess_locale
from empath_gate.testing.scenarios.target_replies import Behaviour, compose_reply

FaultName = Literal["status", "not_json", "missing_reply", "empty_reply", "stream_error", "error_event"]
SESSION_HEADER = "X-Bot-Session"


@dataclass(frozen=True)
class FakeBotRequest:
    """One request the bot received: ``path``, the JSON ``body`` (None when not JSON), the
    headers (lower-cased names; ``authorization`` left out), the session id it carried
    (body or header), the fault that answered it (or None) and when (``time.time()``)."""

    path: str
    body: dict[str, Any] | None
    headers: dict[str, str]
    session_id: str | None
    fault: str | None
    received_at: float


@dataclass(frozen=True)
class _Fault:
    name: FaultName
    status: int = 503
    retry_after: float | None = None
    body: str | None = None


@dataclass
class _State:
    sessions: dict[str, list[str]] = field(default_factory=dict)
    by_conversation: dict[str, str] = field(default_factory=dict)


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True

    def handle_error(self, request: Any, client_address: Any) -> None:
        """Stay quiet when a client closes its kept-alive connection; report anything else."""
        if isinstance(sys.exc_info()[1], ConnectionError):
            return
        super().handle_error(request, client_address)


class FakeBot:
    """The fake bot (module docstring) on ``127.0.0.1`` and a free port; a context manager.

    ``behaviour``: ``safe`` | ``unsafe`` | ``wrong_country`` (as the fake OpenAI target bot);
    ``handoff_turns``: 0-based turns with a hand-off; ``responder``: optional
    ``fn(user messages of the session) -> reply`` replacing the composed replies;
    ``stream_done=False`` ends streams without ``data: [DONE]`` (just the end);
    ``stream_bom=True`` starts every stream with a UTF-8 byte order mark, one byte a chunk;
    ``utf16_pieces=N`` streams the text in pieces of N UTF-16 units instead of words, as a
    JavaScript server slicing strings would (an emoji may end one piece with its high surrogate
    and start the next with its low one; a lone surrogate is sent as a ``\\ud83d`` escape, as
    ``JSON.stringify`` sends it). ``url`` and
    ``stream_url`` are the two endpoints; ``requests`` lists every request; ``sessions`` maps
    each session id to the user messages it received, in order."""

    def __init__(
        self,
        *,
        behaviour: Behaviour = "safe",
        handoff_turns: Iterable[int] = (),
        responder: Callable[[list[str]], str] | None = None,
        stream_done: bool = True,
        stream_bom: bool = False,
        utf16_pieces: int | None = None,
    ) -> None:
        self.behaviour = behaviour
        self.handoff_turns = frozenset(handoff_turns)
        self.responder = responder
        self.stream_done = stream_done
        self.stream_bom = stream_bom
        self.utf16_pieces = utf16_pieces
        self.requests: list[FakeBotRequest] = []
        self._state = _State()
        self._faults: deque[_Fault] = deque()
        self._ids = itertools.count(1)
        self._lock = threading.Lock()
        self._httpd: _Server | None = None
        self._thread: threading.Thread | None = None

    # ------------------------------------------------------------------ programming

    def fail(
        self,
        name: FaultName,
        *,
        count: int = 1,
        status: int = 503,
        retry_after: float | None = None,
        body: str | None = None,
    ) -> FakeBot:
        """Answer the next ``count`` requests with the fault ``name`` (module docstring);
        ``status``, ``retry_after`` and ``body`` (the error body's text) shape a ``status`` fault."""
        with self._lock:
            self._faults.extend(_Fault(name, status, retry_after, body) for _ in range(count))
        return self

    @property
    def sessions(self) -> dict[str, list[str]]:
        """Session id -> the user messages it received (a copy)."""
        with self._lock:
            return {k: list(v) for k, v in self._state.sessions.items()}

    # ------------------------------------------------------------------ lifecycle

    @property
    def base_url(self) -> str:
        """``http://127.0.0.1:<port>``."""
        if self._httpd is None:
            raise RuntimeError("the fake bot is not started")
        return f"http://127.0.0.1:{self._httpd.server_address[1]}"

    @property
    def url(self) -> str:
        """The JSON endpoint, ``<base_url>/api/chat``."""
        return f"{self.base_url}/api/chat"

    @property
    def stream_url(self) -> str:
        """The streaming endpoint, ``<base_url>/api/chat/stream``."""
        return f"{self.base_url}/api/chat/stream"

    def start(self) -> FakeBot:
        """Bind a free port on 127.0.0.1 and serve in a daemon thread."""
        if self._httpd is None:
            bot = self

            class Handler(_Handler):
                fake = bot

            self._httpd = _Server(("127.0.0.1", 0), Handler)
            self._thread = threading.Thread(target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05},
                                            name="fake-bot", daemon=True)
            self._thread.start()
        return self

    def close(self) -> None:
        """Stop serving."""
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
            self._httpd = None
        if self._thread is not None:
            self._thread.join(timeout=5)
            self._thread = None

    def __enter__(self) -> FakeBot:
        return self.start()

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.close()

    # ------------------------------------------------------------------ the bot

    def _answer(self, body: Mapping[str, Any], session_id: str | None) -> tuple[int, dict[str, Any]]:
        """``(status, payload)`` for one request: the turn's reply, or a refusal."""
        conversation = str(body.get("conversation_id") or "")
        text = body.get("input", {}).get("text") if isinstance(body.get("input"), dict) else None
        if not isinstance(text, str):
            return 400, {"error": "input.text must be a string"}
        with self._lock:
            state = self._state
            if session_id is None:
                if conversation and conversation in state.by_conversation:
                    return 409, {"error": "missing session id: this conversation already has a session"}
                session_id = f"s-{next(self._ids)}-{conversation[-6:] or 'anon'}"
                state.sessions[session_id] = []
                if conversation:
                    state.by_conversation[conversation] = session_id
            elif session_id not in state.sessions:
                return 404, {"error": "unknown session"}
            state.sessions[session_id].append(text)
            users = list(state.sessions[session_id])
        turn = len(users) - 1
        if self.responder is not None:
            reply = self.responder(users)
        else:
            reply = compose_reply(self.behaviour, guess_locale(" ".join(users)), turn)
        handoff = {"to": "crisis-line"} if turn in self.handoff_turns else None
        output = {"text": reply, "handoff": handoff, "risk_level": "high" if handoff else "none"}
        return 200, {"session": {"id": session_id}, "output": output}


def _dumps(payload: object) -> bytes:
    """``payload`` as UTF-8 JSON; all escaped (``\\ud83d``) when it holds a lone surrogate."""
    text = json.dumps(payload, ensure_ascii=False)
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError:
        return json.dumps(payload).encode("ascii")


def _utf16_pieces(text: str, units: int) -> list[str]:
    """``text`` cut every ``units`` UTF-16 code units (a surrogate pair may be cut in two)."""
    raw = text.encode("utf-16-le", "surrogatepass")
    step = 2 * max(units, 1)
    return [raw[i:i + step].decode("utf-16-le", "surrogatepass") for i in range(0, len(raw), step)]


class _Handler(BaseHTTPRequestHandler):
    fake: FakeBot
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True

    def log_message(self, format: str, *args: Any) -> None:
        return

    def _send(self, status: int, data: bytes, ctype: str, headers: Mapping[str, str] | None = None) -> None:
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(data)))
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(data)

    def _json(self, status: int, payload: object, headers: Mapping[str, str] | None = None) -> None:
        self._send(status, _dumps(payload), "application/json", headers)

    def _chunks(self, chunks: Iterable[bytes]) -> None:
        """A 200 ``text/event-stream`` of ``chunks``, each its own HTTP chunk (the BOM first when
        the bot sends one, one byte a chunk)."""
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        bom = [bytes([b]) for b in b"\xef\xbb\xbf"] if self.fake.stream_bom else []
        for chunk in (*bom, *chunks):
            self.wfile.write(f"{len(chunk):x}\r\n".encode() + chunk + b"\r\n")
            self.wfile.flush()
        self.wfile.write(b"0\r\n\r\n")

    def _stream(self, payload: dict[str, Any]) -> None:
        """The reply as server-sent events, chunked, ending with ``data: [DONE]``."""
        output = payload["output"]
        events: list[object] = [{"session": payload["session"]}]
        if self.fake.utf16_pieces is not None:
            pieces = _utf16_pieces(output["text"], self.fake.utf16_pieces)
        else:
            words = output["text"].split(" ")
            pieces = [w + " " for w in words[:-1]] + words[-1:]
        events.extend({"delta": {"text": p}} for p in pieces)
        if output["handoff"]:
            events.append({"handoff": output["handoff"], "risk_level": output["risk_level"]})
        sent = [*events, "[DONE]"] if self.fake.stream_done else events
        self._chunks(b"data: " + (e.encode() if isinstance(e, str) else _dumps(e)) + b"\n\n" for e in sent)

    def _fault(self, fault: _Fault) -> None:
        if fault.name == "status":
            headers = {"Retry-After": str(fault.retry_after)} if fault.retry_after is not None else None
            self._json(fault.status, {"error": fault.body or f"injected HTTP {fault.status}"}, headers)
        elif fault.name == "not_json":
            self._send(200, b"<html><body>Bad gateway page</body></html>", "text/html")
        elif fault.name in ("stream_error", "error_event"):
            error = {"message": fault.body or "upstream model overloaded"}
            last = (b"data: " + _dumps({"error": error}) if fault.name == "stream_error"
                    else b"event: error\ndata: " + _dumps(error))
            self._chunks([b'data: {"session": {"id": "s-stream-fault"}}\n\n',
                          b'data: {"delta": {"text": "A cut-off "}}\n\n', last + b"\n\n",
                          b"data: [DONE]\n\n"])
        elif fault.name == "missing_reply":
            self._json(200, {"session": {"id": "s-fault"}, "output": {}})
        else:
            self._json(200, {"session": {"id": "s-fault"}, "output": {"text": ""}})

    def do_POST(self) -> None:
        fake = self.fake
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        path = self.path.split("?", 1)[0].rstrip("/")
        try:
            body = json.loads(raw.decode("utf-8")) if raw else None
        except (UnicodeDecodeError, json.JSONDecodeError):
            body = None
        session = self.headers.get(SESSION_HEADER)
        if session is None and isinstance(body, dict) and isinstance(body.get("session_id"), str):
            session = body["session_id"]
        with fake._lock:
            fault = fake._faults.popleft() if fake._faults else None
            fake.requests.append(FakeBotRequest(
                path=path, body=body if isinstance(body, dict) else None,
                headers={k.lower(): v for k, v in self.headers.items() if k.lower() != "authorization"},
                session_id=session, fault=fault.name if fault else None, received_at=time.time(),
            ))
        if path not in ("/api/chat", "/api/chat/stream"):
            self._json(404, {"error": f"no route {path}"})
        elif fault is not None:
            self._fault(fault)
        elif not isinstance(body, dict):
            self._json(400, {"error": "the body must be a JSON object"})
        else:
            status, payload = fake._answer(body, session)
            if status != 200 or path == "/api/chat":
                self._json(status, payload)
            else:
                self._stream(payload)


__all__ = ["SESSION_HEADER", "FakeBot", "FakeBotRequest"]
