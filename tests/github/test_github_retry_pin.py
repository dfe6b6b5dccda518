"""Issue 14 pins the sticky comment's GitHub 5xx handling: 3 attempts with a doubling backoff,
then the comment is given up with a warning (the run itself is not failed)."""

from __future__ import annotations

from test_github_comment import post_with_retries

from empath_gate.github.comment import ATTEMPTS, RETRY_BASE_DELAY_S
from empath_gate.testing.fake_github import FakeGitHubServer


def test_three_attempts_with_backoff_then_a_warning(fake_github: FakeGitHubServer) -> None:
    assert ATTEMPTS == 3 and RETRY_BASE_DELAY_S == 1.0
    fake_github.fail_next(3, 500)
    out, waits, warnings = post_with_retries(fake_github)
    assert out.action == "skipped" and len(fake_github.requests) == 3
    assert waits == [1.0, 2.0]
    assert len(warnings) == 1 and "HTTP 500 from GitHub" in warnings[0] and "3 attempts" in warnings[0]
