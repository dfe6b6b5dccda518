"""The sticky pull-request comment: one per suite, updated in place, through GitHub's REST API.

Flow (:func:`post_sticky_comment`):

1. a pull request from a fork is skipped before any request (its token is read-only and the
   run had no secrets; the job summary and artifacts still carry the report);
2. the bot's login: ``GET /user`` answers for a personal or app user token; a workflow's
   ``GITHUB_TOKEN`` (an installation token) gets 403 there and comments as
   ``github-actions[bot]``; ``author`` overrides both;
3. ``GET /repos/{repo}/issues/{pr}/comments?per_page=100``, following ``Link: rel="next"``
   across every page (only to the same scheme and host as the API base, so the token never
   leaves it), looking for a comment by that login whose body contains the suite's hidden
   marker ``<!-- empath-gate:suite=<suite> -->``;
4. ``PATCH /repos/{repo}/issues/comments/{id}`` when found, else ``POST`` a new one.

A 403 (or 404 on the pull request, which GitHub answers for a repository the token cannot
see) skips the comment with a warning. A 5xx answer is transient: steps 2-4 are tried again,
up to :data:`ATTEMPTS` times in all, waiting :data:`RETRY_BASE_DELAY_S` doubled each time (or
the answer's ``Retry-After``, capped at :data:`MAX_RETRY_WAIT_S`); repeating the lookup means
a create that GitHub carried out but answered with a 5xx is found and updated, not made twice.
After the last attempt the comment is skipped with a warning. Other HTTP errors raise
:class:`GitHubError`.

Every answer is read within limits, so a broken or hostile server ends in a
:class:`GitHubError` (the comment command prints it as a warning), never a crash, a hang or an
exhausted memory: a body over the ``max_json_bytes`` input limit (64 MiB by default; a page of
100 comments at GitHub's 65,536-character maximum is under 27 MB) or one still arriving after
:data:`MAX_READ_S` seconds is refused while it is read, and the JSON goes through
:func:`empath_gate.bounded.loads_json` (nesting, entries and text length; malformed JSON is an
error too). Of an error answer only the first :data:`ERROR_BODY_BYTES` are read. Pages are
searched one at a time, not gathered. The token travels only in the ``Authorization`` header: it is not in
any message, log line, exception or ``repr``.

Endpoints: GitHub REST API v2022-11-28, "Issue comments" (list, create, update) and
"Users" (get the authenticated user); retrying server errors with an exponentially growing
wait and honouring ``Retry-After`` follows GitHub's "Best practices for using the REST API".
Uses ``urllib`` (no new dependency).
"""

from __future__ import annotations

import json
import re
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any, Literal

from empath_gate import __version__
from empath_gate.bounded import InputLimitError, current_limits, loads_json
from empath_gate.github.context import DEFAULT_API_URL
from empath_gate.report.markdown import marker

ACTIONS_BOT = "github-actions[bot]"
"""The login GitHub shows for comments made with a workflow's ``GITHUB_TOKEN``."""

API_VERSION = "2022-11-28"
PER_PAGE = 100
"""The REST API's maximum page size for issue comments."""

MAX_PAGES = 1000
"""Stop following ``next`` links after this many pages (100,000 comments): a guard against a
server that links to itself."""

ATTEMPTS = 3
"""Tries of the sticky-comment sequence when GitHub answers 5xx (the first and two retries)."""

RETRY_BASE_DELAY_S = 1.0
"""Seconds before the first retry; doubled before each further one (1 s, then 2 s)."""

MAX_RETRY_WAIT_S = 30.0
"""Longest wait before a retry, in seconds, also when ``Retry-After`` asks for more."""

MAX_READ_S = 120.0
"""Longest time, in seconds, one answer may take to arrive in full (project choice: four times
the per-request timeout). The socket timeout bounds each wait for data, not a server that
trickles its body a byte at a time."""

ERROR_BODY_BYTES = 64 * 1024
"""Bytes read of an error answer's body; only its ``message`` is shown (GitHub's error bodies
are a few hundred bytes)."""

_CHUNK = 64 * 1024

_NEXT = re.compile(r'<([^>]+)>\s*;\s*rel="?next"?')


class _SameOriginRedirects(urllib.request.HTTPRedirectHandler):
    """Follows a redirect only to the origin of the original request: urllib would otherwise
    carry the ``Authorization`` header to any host a 3xx names."""

    def redirect_request(
        self, req: urllib.request.Request, fp: Any, code: int, msg: str, headers: Any, newurl: str
    ) -> urllib.request.Request | None:
        old, new = urllib.parse.urlsplit(req.full_url), urllib.parse.urlsplit(newurl)
        if (old.scheme, old.netloc) != (new.scheme, new.netloc):
            return None
        return super().redirect_request(req, fp, code, msg, headers, newurl)


_OPENER = urllib.request.build_opener(_SameOriginRedirects)


class _Unusable(Exception):
    """An answer body that is too big, too slow or not JSON (the message says which)."""


_SIZE_FIX = "(the input limit max_json_bytes; EMPATH_MAX_JSON_BYTES raises it)"


def _read_capped(fp: Any, max_bytes: int, started: float, allowed_s: float) -> bytes:
    """The body of the answer ``fp``, read in chunks as they arrive; _Unusable once it passes
    ``max_bytes`` (also when its ``Content-Length`` says it will) or ``allowed_s`` seconds
    after ``started`` (a ``time.monotonic()`` value)."""
    declared = fp.headers.get("Content-Length") if getattr(fp, "headers", None) is not None else None
    if declared is not None and declared.strip().isdigit() and int(declared) > max_bytes:
        raise _Unusable(f"the answer is {int(declared):,} bytes, over the limit of {max_bytes:,} bytes "
                        + _SIZE_FIX)
    read = getattr(fp, "read1", None) or fp.read
    chunks: list[bytes] = []
    size = 0
    while True:
        if time.monotonic() - started > allowed_s:
            raise _Unusable(f"the answer was still arriving after {allowed_s:g} s")
        chunk = read(_CHUNK)
        if not chunk:
            return b"".join(chunks)
        size += len(chunk)
        if size > max_bytes:
            raise _Unusable(f"the answer is over the limit of {max_bytes:,} bytes " + _SIZE_FIX)
        chunks.append(chunk)


def _parse_answer(raw: bytes) -> Any:
    """The JSON of an answer body (``None`` for an empty one) through the bounded reader;
    _Unusable for text that is not UTF-8 JSON or breaks an input limit."""
    if not raw.strip():
        return None
    try:
        return loads_json(raw.decode("utf-8"), "the answer")
    except InputLimitError as exc:
        raise _Unusable(f"{exc.what} ({exc.fix})") from None
    except ValueError as exc:  # JSONDecodeError, UnicodeDecodeError
        raise _Unusable(f"the answer is not JSON ({str(exc)[:100]})") from None


class GitHubError(Exception):
    """An HTTP error from the GitHub API: ``status`` (0 when the server was not reached),
    GitHub's ``message`` (never the token) and ``retry_after``, the seconds its
    ``Retry-After`` header asked for (``None`` without one)."""

    def __init__(
        self, status: int, message: str, *, method: str = "", path: str = "", retry_after: float | None = None
    ) -> None:
        self.status = status
        self.message = message
        self.retry_after = retry_after
        super().__init__(f"GitHub API {method} {path}: HTTP {status}: {message}".replace("  ", " "))

    @property
    def transient(self) -> bool:
        """True for a server error (5xx), which a later try may not meet."""
        return 500 <= self.status <= 599


def retry_after_seconds(value: str | None) -> float | None:
    """A ``Retry-After`` header in seconds (RFC 9110 section 10.2.3: delay-seconds; an HTTP-date
    or anything else is ``None``)."""
    if value is None or not value.strip().isdigit():
        return None
    return float(int(value.strip()))


@dataclass(frozen=True)
class Response:
    """An API answer: ``status``, lower-cased ``headers`` and the parsed JSON ``data``."""

    status: int
    headers: dict[str, str]
    data: Any


@dataclass
class GitHubClient:
    """A minimal REST client: ``api_url`` (no trailing slash) and a ``token`` kept out of
    ``repr``. ``timeout`` in seconds per request."""

    api_url: str = DEFAULT_API_URL
    token: str | None = field(default=None, repr=False)
    timeout: float = 30.0
    read_s: float = MAX_READ_S
    """Seconds one answer may take to arrive in full (:data:`MAX_READ_S`)."""

    def __post_init__(self) -> None:
        self.api_url = self.api_url.rstrip("/")
        parsed = urllib.parse.urlsplit(self.api_url)
        if parsed.scheme not in ("http", "https") or not parsed.netloc:
            raise ValueError(f"GITHUB_API_URL must be an http(s) URL, got {self.api_url!r}")
        self._origin = (parsed.scheme, parsed.netloc)

    def same_origin(self, url: str) -> bool:
        """True when ``url`` has the API base's scheme and host (where the token may go)."""
        p = urllib.parse.urlsplit(url)
        return (p.scheme, p.netloc) == self._origin

    def request(self, method: str, path_or_url: str, body: Any = None) -> Response:
        """Send one request; ``path_or_url`` is a path under the API base or a same-origin
        URL. Raises GitHubError for an HTTP error status, an unreachable server or an unusable
        answer (over the size limit, too slow, not JSON: module docstring), ValueError for a
        URL on another origin."""
        url = path_or_url if path_or_url.startswith(("http://", "https://")) else self.api_url + path_or_url
        if not self.same_origin(url):
            raise ValueError("refusing to send the token to another host than GITHUB_API_URL")
        data = None if body is None else json.dumps(body, ensure_ascii=False).encode("utf-8")
        req = urllib.request.Request(url, data=data, method=method)
        req.add_header("Accept", "application/vnd.github+json")
        req.add_header("X-GitHub-Api-Version", API_VERSION)
        req.add_header("User-Agent", f"empath-gate/{__version__}")
        if data is not None:
            req.add_header("Content-Type", "application/json; charset=utf-8")
        if self.token:
            req.add_header("Authorization", f"Bearer {self.token}")
        shown = urllib.parse.urlsplit(url).path
        started = time.monotonic()
        try:
            with _OPENER.open(req, timeout=self.timeout) as resp:
                status = resp.status
                raw = _read_capped(resp, current_limits().max_json_bytes, started, self.read_s)
                headers = {k.lower(): v for k, v in resp.headers.items()}
                return Response(status, headers, _parse_answer(raw))
        except _Unusable as exc:
            raise GitHubError(status, f"unusable answer: {exc}", method=method, path=shown) from None
        except urllib.error.HTTPError as exc:
            try:
                payload = _parse_answer(_read_capped(exc, ERROR_BODY_BYTES, started, self.read_s))
                message = str(payload.get("message", ""))[:500] if isinstance(payload, dict) else ""
            except (_Unusable, OSError):
                message = ""
            raise GitHubError(
                exc.code,
                message or exc.reason or "error",
                method=method,
                path=shown,
                retry_after=retry_after_seconds(exc.headers.get("Retry-After") if exc.headers else None),
            ) from None
        except (urllib.error.URLError, TimeoutError, OSError) as exc:
            reason = getattr(exc, "reason", exc)
            raise GitHubError(0, f"cannot reach the API: {reason}", method=method, path=shown) from None

    def iter_items(self, path: str) -> Iterator[Any]:
        """The items of a list endpoint, page by page as they are asked for, following
        ``Link: <...>; rel="next"`` (same origin only) up to :data:`MAX_PAGES` pages."""
        url: str | None = path
        pages = 0
        while url is not None and pages < MAX_PAGES:
            resp = self.request("GET", url)
            pages += 1
            if isinstance(resp.data, list):
                yield from resp.data
            url = next_link(resp.headers.get("link"))
            if url is not None and not self.same_origin(url):
                url = None

    def paginate(self, path: str) -> list[Any]:
        """Every item of a list endpoint (:meth:`iter_items`) in one list."""
        return list(self.iter_items(path))


def next_link(link_header: str | None) -> str | None:
    """The ``rel="next"`` URL of a ``Link`` header (RFC 8288), else ``None``."""
    if not link_header:
        return None
    for part in link_header.split(","):
        m = _NEXT.search(part)
        if m:
            return m.group(1)
    return None


def bot_login(client: GitHubClient) -> str:
    """The login comments will be made as: ``GET /user``; a 401/403/404 there (an installation
    token such as ``GITHUB_TOKEN``) means :data:`ACTIONS_BOT`."""
    try:
        resp = client.request("GET", "/user")
    except GitHubError as exc:
        if exc.status in (401, 403, 404):
            return ACTIONS_BOT
        raise
    login = resp.data.get("login") if isinstance(resp.data, dict) else None
    return str(login) if login else ACTIONS_BOT


def find_sticky_comment(
    client: GitHubClient, repo: str, pr: int, suite: str, author: str
) -> dict[str, Any] | None:
    """The first comment on ``repo``'s pull request ``pr`` written by ``author`` whose body
    holds the marker of ``suite``, searched across every page; ``None`` when there is none."""
    mark = marker(suite)
    for c in client.iter_items(f"/repos/{repo}/issues/{pr}/comments?per_page={PER_PAGE}"):
        if not isinstance(c, dict):
            continue
        user = c.get("user")
        login = user.get("login") if isinstance(user, dict) else None
        if login == author and mark in str(c.get("body") or ""):
            return c
    return None


def _create_or_update(
    client: GitHubClient, repo: str, pr: int, suite: str, body: str, author: str | None
) -> tuple[Literal["created", "updated"], Response]:
    """Steps 2-4 of the module docstring, once."""
    login = author or bot_login(client)
    existing = find_sticky_comment(client, repo, pr, suite, login)
    cid = existing.get("id") if existing is not None else None
    if isinstance(cid, int) and not isinstance(cid, bool):
        path = f"/repos/{repo}/issues/comments/{cid}"
        return "updated", client.request("PATCH", path, {"body": body})
    return "created", client.request("POST", f"/repos/{repo}/issues/{pr}/comments", {"body": body})


@dataclass(frozen=True)
class CommentOutcome:
    """What happened: ``created``/``updated`` (with the comment ``id`` and ``url``) or
    ``skipped`` with the ``reason`` (a fork, a 403, commenting disabled, no pull request, a
    5xx on every attempt)."""

    action: Literal["created", "updated", "skipped"]
    reason: str = ""
    id: int | None = None
    url: str | None = None


def retry_wait(attempt: int, error: GitHubError, base_delay_s: float = RETRY_BASE_DELAY_S) -> float:
    """Seconds to wait after failed try number ``attempt`` (1-based): ``Retry-After`` when the
    answer gave one, else ``base_delay_s * 2 ** (attempt - 1)``; at most
    :data:`MAX_RETRY_WAIT_S`."""
    wait = error.retry_after if error.retry_after is not None else base_delay_s * 2 ** (attempt - 1)
    return min(max(wait, 0.0), MAX_RETRY_WAIT_S)


def post_sticky_comment(
    body: str,
    *,
    client: GitHubClient,
    repo: str,
    pr: int | None,
    suite: str,
    fork: bool = False,
    author: str | None = None,
    warn: Callable[[str], None] | None = None,
    attempts: int = ATTEMPTS,
    base_delay_s: float = RETRY_BASE_DELAY_S,
    sleep: Callable[[float], None] | None = None,
) -> CommentOutcome:
    """Create or update the sticky comment of ``suite`` (module docstring). ``body`` must
    already contain the suite's marker (``render_markdown`` puts it first); it is added when
    missing. ``warn`` receives the warning when the comment is skipped. ``attempts`` (>= 1),
    ``base_delay_s`` and ``sleep`` (default :func:`time.sleep`) shape the retries of a 5xx
    answer (:func:`retry_wait`).

    Raises GitHubError for HTTP errors other than 403/404 and 5xx, ValueError for a malformed
    ``repo``."""

    def skip(reason: str) -> CommentOutcome:
        if warn is not None:
            warn(f"empath-gate: PR comment skipped: {reason}")
        return CommentOutcome("skipped", reason)

    if not re.match(r"^[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+$", repo or ""):
        raise ValueError(f"repository must be owner/name, got {repo!r}")
    if pr is None:
        return skip("not a pull request (no pull-request number)")
    if fork:
        return skip(
            "pull request from a fork: its token cannot comment; the job summary and artifacts carry "
            "the report (see docs/github.md for the workflow_run pattern)"
        )
    mark = marker(suite)
    if mark not in body:
        body = mark + "\n" + body
    for attempt in range(1, max(1, attempts) + 1):
        try:
            action, resp = _create_or_update(client, repo, pr, suite, body, author)
            break
        except GitHubError as exc:
            if exc.status in (403, 404):
                return skip(
                    f"HTTP {exc.status} from GitHub ({exc.message or 'forbidden'}); the token may lack "
                    "pull-requests: write"
                )
            if not exc.transient:
                raise
            if attempt >= attempts:
                return skip(
                    f"HTTP {exc.status} from GitHub ({exc.message or 'server error'}) on each of "
                    f"{attempt} attempts; the job summary and artifacts carry the report"
                )
            (sleep or time.sleep)(retry_wait(attempt, exc, base_delay_s))
    data = resp.data if isinstance(resp.data, dict) else {}
    cid = data.get("id")
    return CommentOutcome(
        action,
        id=int(cid) if isinstance(cid, int) else None,
        url=str(data.get("html_url")) if data.get("html_url") else None,
    )
