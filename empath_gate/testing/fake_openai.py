"""A fake OpenAI-compatible chat-completions server for tests (real HTTP on 127.0.0.1).

It speaks enough of ``POST /v1/chat/completions`` (also ``/chat/completions``) for litellm's
``openai/`` provider and for plain HTTP clients, answers from per-model scripts or callables,
injects provider faults, and records every request it received. It needs no API key and
never reaches the internet.

Usage (copy this into your own tests)::

    from empath_gate.testing import Fault, FakeOpenAIServer

    with FakeOpenAIServer() as server:
        server.script("fake-target", "Hello, I am here with you.", Fault.rate_limit(), "Second reply")
        server.on("fake-auditor", lambda request: "I can't sleep again")  # any number of calls
        settings = server.role_settings("fake-target")   # RoleSettings(model="openai/fake-target", ...)
        ...                                              # run the engine or call litellm
        assert server.requests[0].model == "fake-target"

or, with the pytest fixture (``pytest_plugins = ["empath_gate.testing.fixtures"]``)::

    def test_my_bot(fake_openai):
        fake_openai.script("fake-target", "Hi")

Routing: a request is answered by the responder registered for its body's ``model`` field
(litellm strips the ``openai/`` prefix, so ``openai/fake-target`` arrives as ``fake-target``);
``"*"`` matches any model without its own responder. A scripted queue that runs out fails
loudly: the request gets HTTP 500 with an explanatory message, the problem is appended to
``server.problems``, and leaving the context manager raises ``AssertionError``. A request for
a model with no responder fails the same way.

Replies: a ``str`` (content, ``finish_reason="stop"``), a :class:`Reply` (content,
finish_reason, tool calls, usage, fingerprint, latency), a :class:`Fault`, or a callable
``(FakeRequest) -> str | Reply | Fault``. Usage tokens are reported as whitespace-separated
word counts of the prompt messages and of the reply (a stand-in for a tokenizer, stable
across runs).

Faults (see :class:`Fault`): latency, HTTP 429, HTTP 5xx, any HTTP error with an OpenAI-style
error body (e.g. 400 ``context_length_exceeded``, 401), a timeout (the server sleeps past the
client's timeout), ``content_filter`` (finish_reason ``content_filter``, empty content),
truncated output (finish_reason ``length``), a malformed JSON body, and a dropped connection.

The server is a :class:`http.server.ThreadingHTTPServer` (one thread per connection, HTTP/1.1
keep-alive, listen backlog 1024) and sustains well over 128 concurrent connections each
waiting 1 s of injected latency.
"""

from __future__ import annotations

import contextlib
import hashlib
import itertools
import json
import threading
import time
from collections import deque
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:
    from empath_gate.settings import RoleSettings

FAKE_API_KEY = "sk-empath-fake-key"
"""A dummy key to pass explicitly to clients of the fake server (it never checks keys)."""

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

    * ``Fault.rate_limit()``: HTTP 429 ``rate_limit_exceeded``.
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
    def rate_limit(cls, message: str = "Rate limit reached for requests") -> Fault:
        return cls.http_error(429, message, type="rate_limit_error", code="rate_limit_exceeded")

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
    def last_user(self) -> str:
        """Content of the last ``user`` message ("" when none)."""
        for m in reversed(self.messages):
            if m.get("role") == "user":
                return str(m.get("content") or "")
        return ""


ReplySpec = str | Reply | Fault
Responder = Callable[[FakeRequest], ReplySpec]


class _Route:
    """The answers of one model: a FIFO of scripted replies, then an optional callable."""

    def __init__(self) -> None:
        self.queue: deque[ReplySpec] = deque()
        self.responder: Responder | None = None


class FakeOpenAIServer:
    """A threaded OpenAI-compatible chat server on ``127.0.0.1`` and a free port.

    Use as a context manager (``start()``/``close()`` also work). ``base_url`` is
    ``http://127.0.0.1:<port>/v1``; ``requests`` lists every request received, in arrival
    order; ``latency_s`` delays every reply (seconds; per-reply latency adds to it);
    ``problems`` lists misuse seen while serving (exhausted script, unknown model), raised as
    ``AssertionError`` on exit unless ``strict=False``.
    """

    def __init__(self, *, latency_s: float = 0.0, strict: bool = True) -> None:
        self.latency_s = latency_s
        self.strict = strict
        self.requests: list[FakeRequest] = []
        self.problems: list[str] = []
        self._routes: dict[str, _Route] = {}
        self._lock = threading.Lock()
        self._closing = threading.Event()
        self._ids = itertools.count(1)
        self._httpd: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # ------------------------------------------------------------------ programming replies

    def script(self, model: str, *replies: ReplySpec) -> FakeOpenAIServer:
        """Queue ``replies`` for ``model`` (served in order, one per request). Once the queue is
        empty the model's callable answers if one was set with :meth:`on`; otherwise the
        request fails loudly (HTTP 500 and a recorded problem)."""
        with self._lock:
            route = self._routes.setdefault(model, _Route())
            route.queue.extend(replies)
        return self

    def on(self, model: str, responder: Responder | ReplySpec) -> FakeOpenAIServer:
        """Answer every request for ``model`` (``"*"``: any model without its own route) with
        ``responder`` (a callable of :class:`FakeRequest`, or a fixed reply), after any
        scripted replies queued for it."""
        if callable(responder):
            fn: Responder = responder
        else:
            fixed: ReplySpec = responder

            def fn(_req: FakeRequest) -> ReplySpec:
                return fixed

        with self._lock:
            self._routes.setdefault(model, _Route()).responder = fn
        return self

    def pending(self, model: str) -> int:
        """How many scripted replies of ``model`` have not been served yet."""
        with self._lock:
            route = self._routes.get(model)
            return len(route.queue) if route else 0

    def requests_for(self, model: str) -> list[FakeRequest]:
        """The recorded requests whose body named ``model``, in arrival order."""
        with self._lock:
            return [r for r in self.requests if r.model == model]

    def role_settings(self, model: str, **fields: Any) -> RoleSettings:
        """``RoleSettings`` pointing litellm at this server: model ``openai/<model>``,
        ``api_base=self.base_url``, the dummy key passed explicitly, short retry delays.
        ``fields`` override any RoleSettings field."""
        from pydantic import SecretStr

        from empath_gate.settings import RoleSettings

        values: dict[str, Any] = {
            "model": f"openai/{model}",
            "api_base": self.base_url,
            "api_key": SecretStr(FAKE_API_KEY),
            "retry_base_delay_s": 0.01,
            "retry_max_delay_s": 0.05,
            "timeout_s": 10.0,
        }
        values.update(fields)
        return RoleSettings(**values)

    # ------------------------------------------------------------------ lifecycle

    @property
    def port(self) -> int:
        if self._httpd is None:
            raise RuntimeError("the fake server is not started")
        return int(self._httpd.server_address[1])

    @property
    def base_url(self) -> str:
        """``http://127.0.0.1:<port>/v1`` (litellm's ``api_base``)."""
        return f"http://127.0.0.1:{self.port}/v1"

    def start(self) -> FakeOpenAIServer:
        """Bind a free port on 127.0.0.1 and serve in a daemon thread."""
        if self._httpd is not None:
            return self
        server = self

        class Handler(_Handler):
            fake = server

        httpd = _Server(("127.0.0.1", 0), Handler)
        self._httpd = httpd
        self._thread = threading.Thread(
            target=httpd.serve_forever, kwargs={"poll_interval": 0.05}, name="fake-openai", daemon=True
        )
        self._thread.start()
        return self

    def close(self) -> None:
        """Stop serving; sleeping timeout faults wake up and their connections close."""
        self._closing.set()
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
            self._httpd = None
        if self._thread is not None:
            self._thread.join(timeout=5)
            self._thread = None

    def __enter__(self) -> FakeOpenAIServer:
        return self.start()

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()
        if exc_type is None:
            self.check()

    def check(self) -> None:
        """Raise ``AssertionError`` listing the problems seen (when ``strict``)."""
        if self.strict and self.problems:
            raise AssertionError("fake OpenAI server: " + "; ".join(self.problems))

    # ------------------------------------------------------------------ serving

    def _record(self, req: FakeRequest) -> None:
        with self._lock:
            self.requests.append(req)

    def _next_reply(self, req: FakeRequest) -> ReplySpec | None:
        with self._lock:
            route = self._routes.get(req.model or "") or self._routes.get("*")
            if route is not None and route.queue:
                return route.queue.popleft()
            responder = route.responder if route is not None else None
        if responder is not None:
            return responder(req)
        if route is not None:
            problem = f"the script for model {req.model!r} is exhausted (request {len(self.requests)})"
        else:
            problem = f"no reply programmed for model {req.model!r}"
        with self._lock:
            self.problems.append(problem)
        return None

    def _sleep(self, seconds: float) -> None:
        if seconds > 0:
            self._closing.wait(seconds)

    def _completion_body(self, req: FakeRequest, reply: Reply) -> dict[str, Any]:
        prompt_words = sum(len(str(m.get("content") or "").split()) for m in req.messages)
        completion_words = len((reply.content or "").split())
        usage = {"prompt_tokens": prompt_words, "completion_tokens": completion_words}
        if reply.usage is not None:
            usage.update(reply.usage)
        usage["total_tokens"] = usage["prompt_tokens"] + usage["completion_tokens"]
        message: dict[str, Any] = {"role": "assistant", "content": reply.content}
        if reply.tool_calls:
            message["tool_calls"] = reply.tool_calls
        message.update(reply.extra_message)
        body: dict[str, Any] = {
            "id": f"chatcmpl-fake-{next(self._ids)}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": req.model or "fake",
            "choices": [{"index": 0, "message": message, "finish_reason": reply.finish_reason}],
            "usage": usage,
        }
        if reply.system_fingerprint is not None:
            body["system_fingerprint"] = reply.system_fingerprint
        return body


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 1024
    allow_reuse_address = True


class _Handler(BaseHTTPRequestHandler):
    fake: FakeOpenAIServer
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True  # headers and body go out without a 40 ms delayed-ACK stall

    def log_message(self, format: str, *args: Any) -> None:  # silence the default stderr log
        return

    def _send_json(self, status: int, payload: object, headers: Mapping[str, str] | None = None) -> None:
        data = json.dumps(payload, ensure_ascii=False).encode("utf-8")
        self._send_raw(status, data, "application/json", headers)

    def _send_raw(
        self, status: int, data: bytes, ctype: str, headers: Mapping[str, str] | None = None
    ) -> None:
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(data)))
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(data)

    def _error(
        self,
        status: int,
        message: str,
        etype: str | None = None,
        code: str | None = None,
        headers: Mapping[str, str] | None = None,
    ) -> None:
        self._send_json(
            status, {"error": {"message": message, "type": etype, "param": None, "code": code}}, headers
        )

    def do_GET(self) -> None:
        if self.path.rstrip("/") in ("/v1/models", "/models"):
            with self.fake._lock:
                names = sorted(k for k in self.fake._routes if k != "*")
            self._send_json(200, {"object": "list", "data": [{"id": n, "object": "model"} for n in names]})
        else:
            self._error(404, f"no route {self.path}")

    def do_POST(self) -> None:
        fake = self.fake
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        path = self.path.split("?", 1)[0].rstrip("/")
        try:
            body = json.loads(raw.decode("utf-8")) if raw else None
        except (UnicodeDecodeError, json.JSONDecodeError):
            body = None
        headers = {
            k.lower(): v
            for k, v in self.headers.items()
            if k.lower() != "authorization" and "api-key" not in k.lower()
        }
        model = body.get("model") if isinstance(body, dict) else None
        auth = self.headers.get("Authorization")
        req = FakeRequest(
            path=path,
            body=body if isinstance(body, dict) else None,
            headers=headers,
            model=str(model) if model is not None else None,
            received_at=time.time(),
            authorization_sha256=hashlib.sha256(auth.encode()).hexdigest() if auth else None,
        )
        fake._record(req)
        if path not in ("/v1/chat/completions", "/chat/completions"):
            self._error(404, f"no route {path}", "invalid_request_error")
            return
        if req.body is None:
            self._error(400, "request body is not a JSON object", "invalid_request_error")
            return
        if req.body.get("stream"):
            self._error(400, "the fake server does not stream", "invalid_request_error")
            return
        try:
            spec = fake._next_reply(req)
        except Exception as exc:  # a responder raised: fail loudly, like an exhausted script
            with fake._lock:
                fake.problems.append(f"responder for {req.model!r} raised {exc!r}")
            spec = None
        if spec is None:
            self._error(500, f"fake server: {fake.problems[-1]}", "fake_server_error")
            return
        reply = Reply(content=spec) if isinstance(spec, str) else spec
        extra_latency = reply.latency_s if isinstance(reply, Reply) else 0.0
        fake._sleep(fake.latency_s + extra_latency)
        if isinstance(reply, Reply):
            self._send_json(200, fake._completion_body(req, reply))
            return
        self._fault(req, reply)

    def _fault(self, req: FakeRequest, fault: Fault) -> None:
        fake = self.fake
        if fault.kind == "http_error":
            self._error(fault.status, fault.message, fault.error_type, fault.code, fault.headers)
        elif fault.kind == "timeout":
            fake._sleep(fault.seconds)
            with contextlib.suppress(OSError):  # the client gave up and closed the connection
                self._error(504, fault.message, "timeout")
        elif fault.kind == "content_filter":
            self._send_json(
                200, fake._completion_body(req, Reply(content="", finish_reason="content_filter"))
            )
        elif fault.kind == "truncated":
            self._send_json(
                200, fake._completion_body(req, Reply(content=fault.content, finish_reason="length"))
            )
        elif fault.kind == "malformed":
            self._send_raw(
                200, b'{"id": "chatcmpl-broken", "choices": [{"index": 0, "message": ', "application/json"
            )
        elif fault.kind == "disconnect":
            self.close_connection = True
            with contextlib.suppress(OSError):
                self.connection.shutdown(2)
