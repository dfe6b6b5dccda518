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
:class:`GitHubError`. The token travels only in the ``Authorization`` header: it is not in
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
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal

from empath_gate import __version__
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
        URL. Raises GitHubError for an HTTP error status or an unreachable server, ValueError
        for a URL on another origin."""
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
        try:
            with _OPENER.open(req, timeout=self.timeout) as resp:
                raw = resp.read()
                headers = {k.lower(): v for k, v in resp.headers.items()}
                return Response(resp.status, headers, json.loads(raw) if raw.strip() else None)
        except urllib.error.HTTPError as exc:
            try:
                payload = json.loads(exc.read() or b"{}")
                message = str(payload.get("message", "")) if isinstance(payload, dict) else ""
            except ValueError:
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

    def paginate(self, path: str) -> list[Any]:
        """Every item of a list endpoint, following ``Link: <...>; rel="next"`` (same origin
        only) up to :data:`MAX_PAGES` pages."""
        items: list[Any] = []
        url: str | None = path
        pages = 0
        while url is not None and pages < MAX_PAGES:
            resp = self.request("GET", url)
            pages += 1
            if isinstance(resp.data, list):
                items.extend(resp.data)
            url = next_link(resp.headers.get("link"))
            if url is not None and not self.same_origin(url):
                url = None
        return items


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
    for c in client.paginate(f"/repos/{repo}/issues/{pr}/comments?per_page={PER_PAGE}"):
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
    if existing is not None and existing.get("id") is not None:
        path = f"/repos/{repo}/issues/comments/{int(existing['id'])}"
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
