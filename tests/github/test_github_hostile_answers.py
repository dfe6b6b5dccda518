"""GitHub API answers that are too big, too slow, not JSON or too deep end in a GitHubError
(the comment command's warning), never a crash, a hang or an exhausted memory."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator

import pytest

from empath_gate import bounded
from empath_gate.github.comment import CommentOutcome, GitHubClient, GitHubError, post_sticky_comment
from empath_gate.report.markdown import marker
from empath_gate.testing.fake_github import FakeGitHubServer

REPO = "acme/support-bot"
PR = 7


@pytest.fixture(autouse=True)
def _limits_from_the_environment() -> Iterator[None]:
    """The EMPATH_MAX_* variables a test sets apply (loading settings elsewhere configures limits)."""
    bounded.configure_limits(None)
    yield
    bounded.configure_limits(None)


def post(gh: FakeGitHubServer, **client_kw: float) -> CommentOutcome:
    c = GitHubClient(gh.base_url, "ghs_fake_installation", **client_kw)
    return post_sticky_comment(f"{marker('crisis')}\nreport", client=c, repo=REPO, pr=PR, suite="crisis",
                               sleep=lambda s: None)


def test_an_answer_over_the_size_limit_is_refused(
    fake_github: FakeGitHubServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("EMPATH_MAX_JSON_BYTES", "10000")
    fake_github.answer_raw_next(json.dumps([{"body": "x" * 20_000}]).encode(), methods=("GET",))
    with pytest.raises(GitHubError) as info:
        post(fake_github)
    assert "unusable answer" in str(info.value) and "10,000 bytes" in str(info.value)
    assert fake_github.comments(REPO, PR) == []  # nothing posted on an answer it could not read


@pytest.mark.parametrize(
    ("raw", "says"),
    [
        (b"<html>502 Bad Gateway</html>", "not JSON"),
        (b"\xff\xfe not utf-8", "not JSON"),
        (b"[" * 5000 + b"]" * 5000, "max_input_depth"),
        (json.dumps({"login": "x" * 300}).encode(), "max_field_chars"),
    ],
)
def test_a_malformed_answer_is_a_clear_error(
    fake_github: FakeGitHubServer, monkeypatch: pytest.MonkeyPatch, raw: bytes, says: str
) -> None:
    monkeypatch.setenv("EMPATH_MAX_FIELD_CHARS", "200")
    fake_github.answer_raw_next(raw, methods=("GET",))
    with pytest.raises(GitHubError, match="unusable answer") as info:
        post(fake_github)
    assert says in str(info.value) and info.value.status == 200


def test_a_trickled_answer_is_given_up_at_the_read_deadline(fake_github: FakeGitHubServer) -> None:
    # 200 KiB at 1 KiB per 50 ms would take 10 s; the client allows 1 s for the whole answer
    fake_github.answer_raw_next(b"[" + b" " * 200 * 1024 + b"]", methods=("GET",), chunk_delay_s=0.05)
    started = time.monotonic()
    with pytest.raises(GitHubError, match="still arriving after 1 s"):
        post(fake_github, read_s=1.0)
    assert time.monotonic() - started < 5


def test_a_huge_error_body_is_read_only_in_part(fake_github: FakeGitHubServer) -> None:
    payload = json.dumps({"message": "Validation Failed", "pad": "x" * 2_000_000}).encode()
    fake_github.answer_raw_next(payload, status=422, methods=("POST",))
    with pytest.raises(GitHubError) as info:
        post(fake_github)
    # over ERROR_BODY_BYTES: the message cannot be read, the status still says what happened
    assert info.value.status == 422 and "HTTP 422" in str(info.value)


def test_a_comment_with_a_hostile_id_is_not_patched(fake_github: FakeGitHubServer) -> None:
    listed = [{"id": ["1"], "user": {"login": "github-actions[bot]"}, "body": marker("crisis")}]
    fake_github.answer_raw_next(json.dumps(listed).encode(), methods=("GET",))
    out = post(fake_github)
    assert out.action == "created"
    assert len(fake_github.comments(REPO, PR)) == 1
