"""The HTTP side of the fake server: one handler per connection (routes, faults, bodies; the
Files and Batch routes delegate to :mod:`empath_gate.testing.fake_openai.batches`)."""

from __future__ import annotations

import contextlib
import hashlib
import json
import time
from collections.abc import Mapping
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import TYPE_CHECKING, Any

from empath_gate.testing.fake_openai.batches import parse_multipart
from empath_gate.testing.fake_openai.limiter import retry_after_headers
from empath_gate.testing.fake_openai.replies import FakeRequest, Fault, Reply

if TYPE_CHECKING:
    from empath_gate.testing.fake_openai.server import FakeOpenAIServer


def _json_or_none(raw: bytes) -> Any:
    try:
        return json.loads(raw.decode("utf-8")) if raw else None
    except (UnicodeDecodeError, json.JSONDecodeError):
        return None


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
        try:
            data = json.dumps(payload, ensure_ascii=False).encode("utf-8")
        except UnicodeEncodeError:  # a lone surrogate: sent as a \uXXXX escape, as JSON.stringify does
            data = json.dumps(payload).encode("ascii")
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
        path = self.path.split("?", 1)[0].rstrip("/")
        if path.startswith("/v1/files/") or path.startswith("/v1/batches/"):
            self._get_batch_api(path)
            return
        if self.path.rstrip("/") in ("/v1/models", "/models"):
            with self.fake._lock:
                names = sorted(k for k in self.fake._routes if k != "*")
            self._send_json(200, {"object": "list", "data": [{"id": n, "object": "model"} for n in names]})
        else:
            self._error(404, f"no route {self.path}")

    def _get_batch_api(self, path: str) -> None:
        store = self.fake.batch_store
        parts = path.split("/")  # "", "v1", "files"|"batches", id[, "content"]
        if parts[2] == "files" and len(parts) == 5 and parts[4] == "content":
            data = store.file_content(parts[3])
            if data is not None:
                self._send_raw(200, data, "application/jsonl")
                return
        elif parts[2] == "files" and len(parts) == 4:
            obj = store.file_object(parts[3])
            if obj is not None:
                self._send_json(200, obj)
                return
        elif parts[2] == "batches" and len(parts) == 4:
            batch = store.retrieve(self.fake, parts[3])
            if batch is not None:
                self._send_json(200, batch)
                return
        self._error(404, f"no such object {path}", "invalid_request_error")

    def _post_batch_api(self, path: str, raw: bytes, body: Any) -> None:
        store = self.fake.batch_store
        if path == "/v1/files":
            fields = parse_multipart(self.headers.get("Content-Type") or "", raw)
            if "file" not in fields:
                self._error(400, "multipart field 'file' is required", "invalid_request_error")
                return
            filename, data = fields["file"]
            purpose = fields.get("purpose", (None, b"batch"))[1].decode("utf-8", "replace")
            self._send_json(200, store.add_file(data, filename or "upload.jsonl", purpose))
            return
        if not isinstance(body, dict):
            self._error(400, "request body is not a JSON object", "invalid_request_error")
            return
        status, payload = store.create(self.fake, body)
        self._send_json(status, payload)

    def do_POST(self) -> None:
        fake = self.fake
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        path = self.path.split("?", 1)[0].rstrip("/")
        if path in ("/v1/files", "/v1/batches"):
            self._post_batch_api(path, raw, None if path == "/v1/files" else _json_or_none(raw))
            return
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
        limit = fake._limit_for(req.model)
        ticket: int | None = None
        if limit is not None:
            ticket, wait = limit.admit()
            if ticket is None:
                self._error(
                    429, "Rate limit reached for requests (fake server limiter)", "rate_limit_error",
                    "rate_limit_exceeded", retry_after_headers(wait),
                )
                return
        try:
            spec = fake._next_reply(req)
        except Exception as exc:  # a responder raised: fail loudly, like an exhausted script
            with fake._lock:
                fake.problems.append(f"responder for {req.model!r} raised {exc!r}")
            spec = None
        if spec is None:
            if limit is not None and ticket is not None:
                limit.done(ticket)
            self._error(500, f"fake server: {fake.problems[-1]}", "fake_server_error")
            return
        reply = Reply(content=spec) if isinstance(spec, str) else spec
        extra_latency = reply.latency_s if isinstance(reply, Reply) else 0.0
        try:
            fake._sleep(fake.latency_s + extra_latency)
        finally:  # the slot frees before the answer leaves, so the client's next call finds it free
            if limit is not None and ticket is not None:
                limit.done(ticket)
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
