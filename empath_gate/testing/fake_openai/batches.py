"""The fake server's Files and Batch APIs: upload a JSONL of chat requests, create a batch, poll
it, download its output (OpenAI's batch format, enough for the ``openai`` client and litellm).

* ``POST /v1/files`` (multipart: ``purpose``, ``file``) stores the bytes and answers a file
  object (``id`` ``file-fake-<n>``); ``GET /v1/files/<id>`` the object, ``GET
  /v1/files/<id>/content`` the bytes.
* ``POST /v1/batches`` (``input_file_id``, ``endpoint``, ``completion_window``) answers every
  line of the input file at once through the server's own chat route (scripted replies,
  responders, faults: each line is a recorded request), writes the output file (one line per
  request: ``custom_id``, ``response.status_code`` and ``response.body``, or ``error``) and
  answers the batch object ``in_progress``. ``GET /v1/batches/<id>`` answers ``in_progress``
  for the first :attr:`~empath_gate.testing.FakeOpenAIServer.batch_pending_polls` polls, then
  ``completed`` with ``output_file_id`` and ``request_counts``.
"""

from __future__ import annotations

import itertools
import json
import threading
import time
from email.parser import BytesParser
from email.policy import HTTP
from typing import TYPE_CHECKING, Any

from empath_gate.bounded import InputLimitError, JsonLineError, iter_jsonl
from empath_gate.testing.fake_openai.replies import FakeRequest, Fault, Reply

if TYPE_CHECKING:
    from empath_gate.testing.fake_openai.server import FakeOpenAIServer


def parse_multipart(content_type: str, raw: bytes) -> dict[str, tuple[str | None, bytes]]:
    """The fields of a ``multipart/form-data`` body: name -> (filename or None, bytes)."""
    msg = BytesParser(policy=HTTP).parsebytes(b"Content-Type: " + content_type.encode() + b"\r\n\r\n" + raw)
    fields: dict[str, tuple[str | None, bytes]] = {}
    for part in msg.iter_parts():
        name = part.get_param("name", header="content-disposition")
        payload = part.get_payload(decode=True)
        if isinstance(name, str) and isinstance(payload, bytes):
            fields[name] = (part.get_filename(), payload)
    return fields


class BatchStore:
    """Files and batches of one fake server (thread-safe)."""

    def __init__(self) -> None:
        self.files: dict[str, dict[str, Any]] = {}
        self.batches: dict[str, dict[str, Any]] = {}
        self._polls: dict[str, int] = {}
        self._ids = itertools.count(1)
        self._lock = threading.Lock()

    def add_file(self, data: bytes, filename: str, purpose: str) -> dict[str, Any]:
        """Store ``data``; the file object."""
        with self._lock:
            fid = f"file-fake-{next(self._ids)}"
            obj = {"id": fid, "object": "file", "bytes": len(data), "created_at": int(time.time()),
                   "filename": filename, "purpose": purpose, "status": "processed"}
            self.files[fid] = {**obj, "_data": data}
        return obj

    def file_object(self, fid: str) -> dict[str, Any] | None:
        with self._lock:
            f = self.files.get(fid)
        return {k: v for k, v in f.items() if k != "_data"} if f else None

    def file_content(self, fid: str) -> bytes | None:
        with self._lock:
            f = self.files.get(fid)
        return f["_data"] if f else None

    def create(self, fake: FakeOpenAIServer, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        """Run the batch of ``body`` (see the module docstring); (HTTP status, batch or error)."""
        data = self.file_content(str(body.get("input_file_id")))
        if data is None:
            return 404, {"error": {"message": "no such input file", "type": "invalid_request_error"}}
        try:
            lines = [obj for _, obj in iter_jsonl(data.decode("utf-8"), "fake batch input")]
        except (InputLimitError, JsonLineError, UnicodeDecodeError) as exc:
            return 400, {"error": {"message": f"bad input file: {exc}", "type": "invalid_request_error"}}
        out: list[dict[str, Any]] = []
        failed = 0
        for n, line in enumerate(lines):
            result = _answer(fake, line, n)
            failed += result["error"] is not None or result["response"]["status_code"] != 200
            out.append(result)
        output = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in out).encode("utf-8")
        out_file = self.add_file(output, "batch_output.jsonl", "batch_output")
        with self._lock:
            bid = f"batch_fake_{next(self._ids)}"
            self.batches[bid] = {
                "id": bid, "object": "batch", "endpoint": body.get("endpoint"),
                "input_file_id": body.get("input_file_id"),
                "completion_window": body.get("completion_window"),
                "status": "in_progress", "output_file_id": None, "error_file_id": None,
                "created_at": int(time.time()), "metadata": body.get("metadata"),
                "request_counts": {"total": len(out), "completed": len(out) - failed, "failed": failed},
                "_output": out_file["id"],
            }
            self._polls[bid] = 0
        return 200, self._view(bid, pending=True)

    def retrieve(self, fake: FakeOpenAIServer, bid: str) -> dict[str, Any] | None:
        """The batch object after one more poll, or None for an unknown id."""
        with self._lock:
            if bid not in self.batches:
                return None
            self._polls[bid] += 1
            pending = self._polls[bid] <= fake.batch_pending_polls
        return self._view(bid, pending=pending)

    def _view(self, bid: str, *, pending: bool) -> dict[str, Any]:
        with self._lock:
            b = dict(self.batches[bid])
        out = b.pop("_output")
        if not pending:
            b.update(status="completed", output_file_id=out, completed_at=int(time.time()))
        return b


def _answer(fake: FakeOpenAIServer, line: Any, n: int) -> dict[str, Any]:
    """One output line for input ``line`` (a batch request object)."""
    custom_id = line.get("custom_id") if isinstance(line, dict) else None
    body = line.get("body") if isinstance(line, dict) else None
    result: dict[str, Any] = {"id": f"batch_req_fake_{n}", "custom_id": custom_id, "response": None,
                              "error": None}
    if not isinstance(body, dict):
        result["error"] = {"code": "invalid_request", "message": "the line has no body object"}
        return result
    model = body.get("model")
    req = FakeRequest(path=str(line.get("url") or ""), body=body, headers={},
                      model=str(model) if model is not None else None, received_at=time.time())
    fake._record(req)
    spec = fake._next_reply(req)
    reply = Reply(content=spec) if isinstance(spec, str) else spec
    if reply is None:
        status, payload = 500, {"error": {"message": fake.problems[-1], "type": "fake_server_error"}}
    elif isinstance(reply, Reply):
        status, payload = 200, fake._completion_body(req, reply)
    else:
        status, payload = _fault_body(fake, req, reply)
    result["response"] = {"status_code": status, "request_id": f"req_fake_{n}", "body": payload}
    return result


def _fault_body(fake: FakeOpenAIServer, req: FakeRequest, fault: Fault) -> tuple[int, dict[str, Any]]:
    if fault.kind == "http_error":
        error = {"message": fault.message, "type": fault.error_type, "code": fault.code}
        return fault.status, {"error": error}
    if fault.kind == "content_filter":
        return 200, fake._completion_body(req, Reply(content="", finish_reason="content_filter"))
    if fault.kind == "truncated":
        return 200, fake._completion_body(req, Reply(content=fault.content, finish_reason="length"))
    return 500, {"error": {"message": f"fake {fault.kind} fault", "type": "server_error", "code": None}}


__all__ = ["BatchStore", "parse_multipart"]
