"""The sticky comment against the fake GitHub server: create, update, pagination past 100
comments, both token kinds, 403, fork, and GitHub 5xx retried with backoff."""

from __future__ import annotations

import pytest

from empath_gate.github.comment import (
    ACTIONS_BOT,
    ATTEMPTS,
    MAX_RETRY_WAIT_S,
    CommentOutcome,
    GitHubClient,
    GitHubError,
    bot_login,
    next_link,
    post_sticky_comment,
    retry_after_seconds,
)
from empath_gate.report.markdown import marker
from empath_gate.testing.fake_github import FakeGitHubServer

REPO = "acme/support-bot"
PR = 7


def body(suite: str, text: str) -> str:
    return f"{marker(suite)}\n{text}"


def client(gh: FakeGitHubServer, token: str = "ghs_fake_installation") -> GitHubClient:
    return GitHubClient(gh.base_url, token)


def test_create_then_update_exactly_one(fake_github: FakeGitHubServer) -> None:
    c = client(fake_github)
    first = post_sticky_comment(body("crisis", "v1"), client=c, repo=REPO, pr=PR, suite="crisis")
    assert first.action == "created" and first.id is not None
    second = post_sticky_comment(body("crisis", "v2"), client=c, repo=REPO, pr=PR, suite="crisis")
    assert second.action == "updated" and second.id == first.id
    comments = fake_github.comments(REPO, PR)
    assert len(comments) == 1
    assert comments[0]["body"].endswith("v2") and comments[0]["user"]["login"] == ACTIONS_BOT


def test_one_comment_per_suite(fake_github: FakeGitHubServer) -> None:
    c = client(fake_github)
    post_sticky_comment(body("crisis", "a"), client=c, repo=REPO, pr=PR, suite="crisis")
    post_sticky_comment(body("smoke", "b"), client=c, repo=REPO, pr=PR, suite="smoke")
    post_sticky_comment(body("crisis", "c"), client=c, repo=REPO, pr=PR, suite="crisis")
    bodies = sorted(x["body"] for x in fake_github.comments(REPO, PR))
    assert bodies == [body("crisis", "c"), body("smoke", "b")]


def test_marker_added_when_missing(fake_github: FakeGitHubServer) -> None:
    out = post_sticky_comment("no marker here", client=client(fake_github), repo=REPO, pr=PR, suite="crisis")
    assert out.action == "created"
    assert fake_github.comments(REPO, PR)[0]["body"].startswith(marker("crisis"))


def test_finds_its_comment_past_the_first_100(fake_github: FakeGitHubServer) -> None:
    for i in range(150):
        fake_github.add_comment(REPO, PR, f"comment {i}", login="someone")
    # someone else quoting the marker must not be taken for ours
    fake_github.add_comment(REPO, PR, body("crisis", "a human quoting the marker"), login="someone")
    for i in range(60):
        fake_github.add_comment(REPO, PR, f"later {i}", login="someone")
    mine = fake_github.add_comment(REPO, PR, body("crisis", "old"), login=ACTIONS_BOT)
    out = post_sticky_comment(
        body("crisis", "new"), client=client(fake_github), repo=REPO, pr=PR, suite="crisis"
    )
    assert out.action == "updated" and out.id == mine["id"]
    lists = [r for r in fake_github.requests if r.method == "GET" and r.path.endswith("/comments")]
    assert [r.query.get("page", "1") for r in lists] == ["1", "2", "3"]
    assert all(r.query["per_page"] == "100" for r in lists)
    assert len(fake_github.comments(REPO, PR)) == 212
    assert fake_github.comments(REPO, PR)[-1]["body"] == body("crisis", "new")


def test_user_token_comments_as_its_user(fake_github: FakeGitHubServer) -> None:
    c = client(fake_github, "ghp_fake_user")
    assert bot_login(c) == "empath-bot"
    assert bot_login(client(fake_github)) == ACTIONS_BOT
    fake_github.add_comment(REPO, PR, body("crisis", "by the actions bot"), login=ACTIONS_BOT)
    out = post_sticky_comment(body("crisis", "x"), client=c, repo=REPO, pr=PR, suite="crisis")
    assert out.action == "created", "another author's comment is not ours to update"
    assert [x["user"]["login"] for x in fake_github.comments(REPO, PR)] == [ACTIONS_BOT, "empath-bot"]


def test_403_skips_with_a_warning(fake_github: FakeGitHubServer) -> None:
    fake_github.forbid("writes")
    warnings: list[str] = []
    out = post_sticky_comment(
        body("crisis", "x"),
        client=client(fake_github),
        repo=REPO,
        pr=PR,
        suite="crisis",
        warn=warnings.append,
    )
    assert out.action == "skipped" and "403" in out.reason
    assert len(warnings) == 1 and "skipped" in warnings[0]
    assert fake_github.comments(REPO, PR) == []


def test_fork_is_skipped_before_any_request(fake_github: FakeGitHubServer) -> None:
    warnings: list[str] = []
    out = post_sticky_comment(
        body("crisis", "x"),
        client=client(fake_github),
        repo=REPO,
        pr=PR,
        suite="crisis",
        fork=True,
        warn=warnings.append,
    )
    assert out.action == "skipped" and "fork" in out.reason
    assert fake_github.requests == [] and warnings


def test_other_errors_raise_without_the_token(fake_github: FakeGitHubServer) -> None:
    c = GitHubClient(fake_github.base_url, "ghp_secret_value_123")
    with pytest.raises(GitHubError) as info:
        post_sticky_comment(body("crisis", "x"), client=c, repo=REPO, pr=PR, suite="crisis", author="me")
    assert info.value.status == 401
    assert "ghp_secret_value_123" not in str(info.value) and "ghp_secret" not in repr(c)


def test_too_long_body_is_rejected_by_the_server(fake_github: FakeGitHubServer) -> None:
    with pytest.raises(GitHubError) as info:
        post_sticky_comment(
            body("crisis", "x" * 70000), client=client(fake_github), repo=REPO, pr=PR, suite="crisis"
        )
    assert info.value.status == 422


def test_no_token_leaves_the_api_origin() -> None:
    c = GitHubClient("http://127.0.0.1:9", "tok")
    with pytest.raises(ValueError):
        c.request("GET", "https://evil.example/repos")
    assert c.same_origin("http://127.0.0.1:9/x") and not c.same_origin("http://127.0.0.1:10/x")
    with pytest.raises(ValueError):
        GitHubClient("ftp://x", "t")


def test_next_link_parsing() -> None:
    header = '<https://api.github.com/x?page=2>; rel="next", <https://api.github.com/x?page=5>; rel="last"'
    assert next_link(header) == "https://api.github.com/x?page=2"
    assert next_link('<https://api.github.com/x?page=1>; rel="prev"') is None
    assert next_link(None) is None


def test_unreachable_server_is_a_github_error() -> None:
    with pytest.raises(GitHubError) as info:
        GitHubClient("http://127.0.0.1:9", "t", timeout=2).request("GET", "/user")
    assert info.value.status == 0


def post_with_retries(gh: FakeGitHubServer, text: str = "x") -> tuple[CommentOutcome, list[float], list[str]]:
    """Post through ``gh`` recording the waits between tries (instead of sleeping) and the warnings."""
    waits: list[float] = []
    warnings: list[str] = []
    out = post_sticky_comment(
        body("crisis", text),
        client=client(gh),
        repo=REPO,
        pr=PR,
        suite="crisis",
        warn=warnings.append,
        sleep=waits.append,
    )
    return out, waits, warnings


def test_a_github_5xx_is_retried_with_backoff(fake_github: FakeGitHubServer) -> None:
    fake_github.fail_next(2, 502, methods=("POST",))
    out, waits, warnings = post_with_retries(fake_github)
    assert out.action == "created"
    assert waits == [1.0, 2.0] and warnings == []
    assert [r.method for r in fake_github.requests].count("POST") == 3
    assert len(fake_github.comments(REPO, PR)) == 1


def test_a_5xx_on_every_attempt_gives_the_comment_up_with_a_warning(fake_github: FakeGitHubServer) -> None:
    fake_github.fail_next(10, 503)
    out, waits, warnings = post_with_retries(fake_github)
    assert out.action == "skipped"
    assert f"HTTP 503 from GitHub (Service Unavailable) on each of {ATTEMPTS} attempts" in warnings[0]
    assert len(waits) == ATTEMPTS - 1 and len(fake_github.requests) == ATTEMPTS
    assert fake_github.comments(REPO, PR) == []


def test_a_create_answered_with_a_5xx_is_found_and_updated_not_made_twice(
    fake_github: FakeGitHubServer,
) -> None:
    fake_github.fail_next(1, 502, methods=("POST",), after_effect=True)
    out, waits, _ = post_with_retries(fake_github, "v1")
    assert out.action == "updated" and waits == [1.0]
    comments = fake_github.comments(REPO, PR)
    assert len(comments) == 1 and comments[0]["body"] == body("crisis", "v1")


def test_retry_after_is_honoured_and_capped(fake_github: FakeGitHubServer) -> None:
    fake_github.fail_next(1, 503, methods=("GET",), retry_after=7)
    fake_github.fail_next(1, 503, methods=("GET",), retry_after=3600)
    out, waits, _ = post_with_retries(fake_github)
    assert out.action == "created" and waits == [7.0, MAX_RETRY_WAIT_S]
    assert retry_after_seconds(" 12 ") == 12.0
    assert retry_after_seconds("Wed, 21 Oct 2015 07:28:00 GMT") is None and retry_after_seconds(None) is None


def test_client_errors_are_not_retried(fake_github: FakeGitHubServer) -> None:
    waits: list[float] = []
    with pytest.raises(GitHubError) as info:
        post_sticky_comment(
            body("crisis", "x" * 70000),
            client=client(fake_github),
            repo=REPO,
            pr=PR,
            suite="crisis",
            sleep=waits.append,
        )
    assert info.value.status == 422 and waits == []
    assert [r.method for r in fake_github.requests].count("POST") == 1
