"""A fake GitHub REST API for tests (real HTTP on 127.0.0.1): users and issue comments.

It speaks the part of the API the sticky comment uses (GitHub REST API v2022-11-28):

* ``GET /user``: the login of a user token; an *installation* token (what a workflow's
  ``GITHUB_TOKEN`` is) gets 403 "Resource not accessible by integration", as on GitHub;
  an unknown or missing token gets 401 "Bad credentials";
* ``GET /repos/{owner}/{repo}/issues/{number}/comments?per_page=&page=``: pages of at most
  100 (default 30) with a ``Link`` header (``next``, ``last``, ``prev``, ``first``);
* ``POST /repos/{owner}/{repo}/issues/{number}/comments`` (201) and
  ``PATCH /repos/{owner}/{repo}/issues/comments/{id}`` (200; 404 when absent; 403 when the
  token's user did not write it), both rejecting a body over 65,536 characters with 422.

Faults: :meth:`FakeGitHubServer.forbid` makes writes (or every request) answer 403 with
GitHub's message; :meth:`FakeGitHubServer.fail_next` makes the next requests answer a server
error (5xx, optionally with ``Retry-After``, optionally after carrying the request out, as a
timed-out proxy does); :meth:`FakeGitHubServer.answer_raw_next` makes the next requests answer
given bytes (a huge, malformed or deeply nested body, optionally trickled slowly), as a broken
proxy or a hostile server might; :attr:`FakeGitHubServer.requests` records every request (method, path,
query, the login the token resolved to); tokens themselves are never stored.

Usage::

    from empath_gate.testing.fake_github import FakeGitHubServer

    with FakeGitHubServer() as gh:
        gh.add_user_token("ghp_test", "octo-bot")      # GET /user -> octo-bot
        gh.add_installation_token("ghs_test")          # GET /user -> 403; comments by github-actions[bot]
        gh.add_comment("acme/bot", 7, "hello", login="someone")
        env = {"GITHUB_API_URL": gh.base_url, "GITHUB_TOKEN": "ghs_test"}
        ...
        assert gh.comments("acme/bot", 7)[-1]["body"].startswith("<!-- empath-gate")

or the pytest fixture ``fake_github`` (in a ``conftest.py``:
``from empath_gate.testing.fake_github import fake_github``).
"""

from __future__ import annotations

import itertools
import json
import re
import threading
import time
import urllib.parse
from collections.abc import Iterator
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any, Literal

import pytest

ACTIONS_BOT = "github-actions[bot]"
MAX_BODY = 65536
"""GitHub's limit on a comment body, in characters."""

_COMMENTS = re.compile(r"^/repos/([^/]+/[^/]+)/issues/(\d+)/comments$")
_COMMENT = re.compile(r"^/repos/([^/]+/[^/]+)/issues/comments/(\d+)$")


@dataclass(frozen=True)
class SeenRequest:
    """A request the server received: ``login`` is the user its token resolved to (``None``
    for no or an unknown token); ``body`` is the parsed JSON body (``None`` if none)."""

    method: str
    path: str
    query: dict[str, str]
    login: str | None
    body: Any


@dataclass(frozen=True)
class _Fault:
    status: int
    methods: tuple[str, ...]
    retry_after: int | None
    after_effect: bool
    raw: bytes | None = None
    chunk_delay_s: float = 0.0


@dataclass(frozen=True)
class _Raw:
    """A body sent as given, ``chunk_size`` bytes every ``chunk_delay_s`` seconds."""

    data: bytes
    chunk_delay_s: float
    chunk_size: int = 1024


_SERVER_ERRORS = {500: "Server Error", 502: "Bad Gateway", 503: "Service Unavailable", 504: "Gateway Timeout"}


class FakeGitHubServer:
    """The fake API (module docstring). ``base_url`` is ``http://127.0.0.1:<port>``."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._tokens: dict[str, str] = {}
        self._comments: dict[tuple[str, int], list[dict[str, Any]]] = {}
        self._ids = itertools.count(1001)
        self._forbid: Literal["none", "writes", "all"] = "none"
        self._faults: list[_Fault] = []
        self.requests: list[SeenRequest] = []
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # ------------------------------------------------------------------ setup
    def add_user_token(self, token: str, login: str) -> None:
        """A personal/app user token: ``GET /user`` answers ``login``."""
        self._tokens[token] = login

    def add_installation_token(self, token: str) -> None:
        """An installation token (``GITHUB_TOKEN``): ``GET /user`` is 403; writes are by
        ``github-actions[bot]``."""
        self._tokens[token] = ACTIONS_BOT

    def add_comment(self, repo: str, number: int, body: str, *, login: str) -> dict[str, Any]:
        """Seed a comment written by ``login``; returns it."""
        with self._lock:
            return self._new_comment(repo, number, body, login)

    def comments(self, repo: str, number: int) -> list[dict[str, Any]]:
        """A copy of the comments on ``repo`` issue/PR ``number``, oldest first."""
        with self._lock:
            return [dict(c) for c in self._comments.get((repo, number), [])]

    def forbid(self, what: Literal["none", "writes", "all"] = "writes") -> None:
        """Answer 403 to writes (POST/PATCH), to everything, or to nothing (``none``)."""
        self._forbid = what

    def fail_next(
        self,
        count: int = 1,
        status: int = 502,
        *,
        methods: tuple[str, ...] = (),
        retry_after: int | None = None,
        after_effect: bool = False,
    ) -> None:
        """Answer the next ``count`` requests (only those whose method is in ``methods``, when
        given) with HTTP ``status`` and GitHub's message for it, and ``Retry-After:
        retry_after`` when given. ``after_effect``: carry the request out first (a comment is
        created or updated) and answer the error anyway."""
        with self._lock:
            self._faults.extend(
                _Fault(status, tuple(m.upper() for m in methods), retry_after, after_effect)
                for _ in range(count)
            )

    def answer_raw_next(
        self,
        body: bytes,
        *,
        status: int = 200,
        count: int = 1,
        methods: tuple[str, ...] = (),
        chunk_delay_s: float = 0.0,
    ) -> None:
        """Answer the next ``count`` requests (only those whose method is in ``methods``, when
        given) with HTTP ``status`` and ``body`` as it is (a correct ``Content-Length``), sent
        1 KiB at a time with ``chunk_delay_s`` seconds between the pieces (0: all at once)."""
        with self._lock:
            self._faults.extend(
                _Fault(status, tuple(m.upper() for m in methods), None, False, body, chunk_delay_s)
                for _ in range(count)
            )

    # ------------------------------------------------------------------ lifecycle
    @property
    def base_url(self) -> str:
        if self._server is None:
            raise RuntimeError("server not started")
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}"

    def start(self) -> FakeGitHubServer:
        server = ThreadingHTTPServer(("127.0.0.1", 0), _handler_for(self))
        server.daemon_threads = True
        self._server = server
        self._thread = threading.Thread(
            target=server.serve_forever, kwargs={"poll_interval": 0.05}, name="fake-github", daemon=True
        )
        self._thread.start()
        return self

    def close(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None
        if self._thread is not None:
            self._thread.join(timeout=5)
            self._thread = None

    def __enter__(self) -> FakeGitHubServer:
        return self.start()

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    # ------------------------------------------------------------------ internals
    def _new_comment(self, repo: str, number: int, body: str, login: str) -> dict[str, Any]:
        cid = next(self._ids)
        comment = {
            "id": cid,
            "body": body,
            "user": {"login": login, "type": "Bot" if login.endswith("[bot]") else "User"},
            "html_url": f"https://github.example/{repo}/pull/{number}#issuecomment-{cid}",
            "url": f"{self.base_url}/repos/{repo}/issues/comments/{cid}",
        }
        self._comments.setdefault((repo, number), []).append(comment)
        return comment

    def _find(self, repo: str, cid: int) -> dict[str, Any] | None:
        for (r, _), items in self._comments.items():
            if r != repo:
                continue
            for c in items:
                if c["id"] == cid:
                    return c
        return None

    def _handle(
        self, method: str, raw_path: str, token: str | None, body: Any
    ) -> tuple[int, Any, dict[str, str]]:
        parts = urllib.parse.urlsplit(raw_path)
        query = {k: v[-1] for k, v in urllib.parse.parse_qs(parts.query).items()}
        login = self._tokens.get(token) if token else None
        self.requests.append(SeenRequest(method, parts.path, query, login, body))
        fault = self._take_fault(method)
        if fault is not None and fault.raw is not None:
            return fault.status, _Raw(fault.raw, fault.chunk_delay_s), {}
        if fault is not None:
            headers = {"Retry-After": str(fault.retry_after)} if fault.retry_after is not None else {}
            if fault.after_effect:
                self._answer(method, parts.path, query, login, body)
            return fault.status, {"message": _SERVER_ERRORS.get(fault.status, "Server Error")}, headers
        return self._answer(method, parts.path, query, login, body)

    def _take_fault(self, method: str) -> _Fault | None:
        with self._lock:
            for i, f in enumerate(self._faults):
                if not f.methods or method in f.methods:
                    return self._faults.pop(i)
        return None

    def _answer(
        self, method: str, path: str, query: dict[str, str], login: str | None, body: Any
    ) -> tuple[int, Any, dict[str, str]]:
        if self._forbid == "all" or (self._forbid == "writes" and method in ("POST", "PATCH")):
            return 403, {"message": "Resource not accessible by integration"}, {}
        if login is None:
            return 401, {"message": "Bad credentials"}, {}
        if path == "/user" and method == "GET":
            if login == ACTIONS_BOT:
                return 403, {"message": "Resource not accessible by integration"}, {}
            return 200, {"login": login, "id": 1, "type": "User"}, {}
        m = _COMMENTS.match(path)
        if m:
            repo, number = m.group(1), int(m.group(2))
            if method == "GET":
                return self._list(repo, number, query)
            if method == "POST":
                text = body.get("body") if isinstance(body, dict) else None
                if not isinstance(text, str):
                    return 422, {"message": "body is missing"}, {}
                if len(text) > MAX_BODY:
                    return (
                        422,
                        {
                            "message": f"Validation Failed: body is too long (maximum is {MAX_BODY} "
                            "characters)"
                        },
                        {},
                    )
                with self._lock:
                    return 201, self._new_comment(repo, number, text, login), {}
        m = _COMMENT.match(path)
        if m and method == "PATCH":
            repo, cid = m.group(1), int(m.group(2))
            text = body.get("body") if isinstance(body, dict) else None
            with self._lock:
                c = self._find(repo, cid)
                if c is None:
                    return 404, {"message": "Not Found"}, {}
                if c["user"]["login"] != login:
                    return 403, {"message": "You cannot edit another user's comment"}, {}
                if not isinstance(text, str):
                    return 422, {"message": "body is missing"}, {}
                if len(text) > MAX_BODY:
                    return (
                        422,
                        {
                            "message": f"Validation Failed: body is too long (maximum is {MAX_BODY} "
                            "characters)"
                        },
                        {},
                    )
                c["body"] = text
                return 200, dict(c), {}
        return 404, {"message": "Not Found"}, {}

    def _list(self, repo: str, number: int, query: dict[str, str]) -> tuple[int, Any, dict[str, str]]:
        try:
            per_page = max(1, min(100, int(query.get("per_page", "30"))))
            page = max(1, int(query.get("page", "1")))
        except ValueError:
            return 422, {"message": "Invalid page"}, {}
        with self._lock:
            items = [dict(c) for c in self._comments.get((repo, number), [])]
        last = max(1, -(-len(items) // per_page))
        chunk = items[(page - 1) * per_page : page * per_page]
        base = f"{self.base_url}/repos/{repo}/issues/{number}/comments"
        links = []
        if page < last:
            links.append(f'<{base}?per_page={per_page}&page={page + 1}>; rel="next"')
            links.append(f'<{base}?per_page={per_page}&page={last}>; rel="last"')
        if page > 1:
            links.append(f'<{base}?per_page={per_page}&page={page - 1}>; rel="prev"')
            links.append(f'<{base}?per_page={per_page}&page=1>; rel="first"')
        return 200, chunk, ({"Link": ", ".join(links)} if links else {})


def _handler_for(server: FakeGitHubServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:
            return

        def _serve(self, method: str) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length) if length else b""
            try:
                body = json.loads(raw) if raw else None
            except ValueError:
                self._send(400, {"message": "Problems parsing JSON"}, {})
                return
            auth = self.headers.get("Authorization") or ""
            token = None
            for scheme in ("Bearer ", "token "):
                if auth.startswith(scheme):
                    token = auth[len(scheme) :].strip()
            status, payload, headers = server._handle(method, self.path, token, body)
            self._send(status, payload, headers)

        def _send(self, status: int, payload: Any, headers: dict[str, str]) -> None:
            raw = payload if isinstance(payload, _Raw) else None
            data = raw.data if raw is not None else json.dumps(payload, ensure_ascii=False).encode("utf-8")
            self.send_response(status)
            self.send_header("Content-Type", "application/json; charset=utf-8")
            self.send_header("Content-Length", str(len(data)))
            for k, v in headers.items():
                self.send_header(k, v)
            self.end_headers()
            if raw is None or raw.chunk_delay_s <= 0:
                self.wfile.write(data)
                return
            try:
                for i in range(0, len(data), raw.chunk_size):
                    self.wfile.write(data[i : i + raw.chunk_size])
                    self.wfile.flush()
                    time.sleep(raw.chunk_delay_s)
            except OSError:  # the client gave up
                self.close_connection = True

        def do_GET(self) -> None:
            self._serve("GET")

        def do_POST(self) -> None:
            self._serve("POST")

        def do_PATCH(self) -> None:
            self._serve("PATCH")

    return Handler


@pytest.fixture
def fake_github() -> Iterator[FakeGitHubServer]:
    """A started :class:`FakeGitHubServer` with a user token ``ghp_fake_user`` (login
    ``empath-bot``) and an installation token ``ghs_fake_installation``; stopped at teardown."""
    server = FakeGitHubServer().start()
    server.add_user_token("ghp_fake_user", "empath-bot")
    server.add_installation_token("ghs_fake_installation")
    try:
        yield server
    finally:
        server.close()
