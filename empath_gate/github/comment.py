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
see) skips the comment with a warning. Other HTTP errors raise :class:`GitHubError`. The
token travels only in the ``Authorization`` header: it is not in any message, log line,
exception or ``repr``.

Endpoints: GitHub REST API v2022-11-28, "Issue comments" (list, create, update) and
"Users" (get the authenticated user). Uses ``urllib`` (no new dependency).
"""

from __future__ import annotations

import json
import re
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
    """An HTTP error from the GitHub API: ``status`` and GitHub's ``message`` (never the token)."""

    def __init__(self, status: int, message: str, *, method: str = "", path: str = "") -> None:
        self.status = status
        self.message = message
        super().__init__(f"GitHub API {method} {path}: HTTP {status}: {message}".replace("  ", " "))


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
            raise GitHubError(exc.code, message or exc.reason or "error", method=method, path=shown) from None
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


@dataclass(frozen=True)
class CommentOutcome:
    """What happened: ``created``/``updated`` (with the comment ``id`` and ``url``) or
    ``skipped`` with the ``reason`` (a fork, a 403, commenting disabled, no pull request)."""

    action: Literal["created", "updated", "skipped"]
    reason: str = ""
    id: int | None = None
    url: str | None = None


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
) -> CommentOutcome:
    """Create or update the sticky comment of ``suite`` (module docstring). ``body`` must
    already contain the suite's marker (``render_markdown`` puts it first); it is added when
    missing. ``warn`` receives the warning when the comment is skipped.

    Raises GitHubError for HTTP errors other than 403/404, ValueError for a malformed
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
    try:
        login = author or bot_login(client)
        existing = find_sticky_comment(client, repo, pr, suite, login)
        if existing is not None and existing.get("id") is not None:
            resp = client.request(
                "PATCH", f"/repos/{repo}/issues/comments/{int(existing['id'])}", {"body": body}
            )
            action: Literal["created", "updated"] = "updated"
        else:
            resp = client.request("POST", f"/repos/{repo}/issues/{pr}/comments", {"body": body})
            action = "created"
    except GitHubError as exc:
        if exc.status in (403, 404):
            return skip(
                f"HTTP {exc.status} from GitHub ({exc.message or 'forbidden'}); the token may lack "
                "pull-requests: write"
            )
        raise
    data = resp.data if isinstance(resp.data, dict) else {}
    cid = data.get("id")
    return CommentOutcome(
        action,
        id=int(cid) if isinstance(cid, int) else None,
        url=str(data.get("html_url")) if data.get("html_url") else None,
    )
