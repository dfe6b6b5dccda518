"""``empath-gate diff``, ``report`` and ``comment`` end to end: results files on disk, the
comment through the fake GitHub server, the job summary and outputs in files like a runner's."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from report_factory import baseline_scores, build_results, candidate_scores, write_transcripts

from empath_gate.cli import main
from empath_gate.report.view import overall_verdict
from empath_gate.results import read_results, write_results
from empath_gate.testing.fake_github import ACTIONS_BOT, FakeGitHubServer
from empath_gate.verdict import verdict_of

REPO = "acme/support-bot"


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    folder = tmp_path_factory.mktemp("results")
    base = build_results(baseline_scores, git_sha="base123")
    cand = build_results(candidate_scores)
    (folder / "base").mkdir()
    write_results(base, folder / "base" / "results.json")
    write_results(cand, folder / "results.json")
    write_transcripts(cand, folder)
    return folder / "base" / "results.json", folder / "results.json"


@pytest.fixture
def actions_env(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fake_github: FakeGitHubServer
) -> dict[str, Path]:
    event = tmp_path / "event.json"
    event.write_text(
        json.dumps(
            {
                "pull_request": {
                    "number": 7,
                    "head": {"repo": {"full_name": REPO}},
                    "base": {"repo": {"full_name": REPO}},
                }
            }
        ),
        encoding="utf-8",
    )
    paths = {"event": event, "summary": tmp_path / "summary.md", "output": tmp_path / "output.txt"}
    for k, v in {
        "GITHUB_API_URL": fake_github.base_url,
        "GITHUB_REPOSITORY": REPO,
        "GITHUB_EVENT_PATH": str(event),
        "GITHUB_EVENT_NAME": "pull_request",
        "GITHUB_RUN_ID": "42",
        "GITHUB_TOKEN": "ghs_fake_installation",
        "GITHUB_STEP_SUMMARY": str(paths["summary"]),
        "GITHUB_OUTPUT": str(paths["output"]),
        "GITHUB_ACTIONS": "true",
    }.items():
        monkeypatch.setenv(k, v)
    monkeypatch.delenv("GH_TOKEN", raising=False)
    return paths


def test_diff_prints_the_markdown(files: tuple[Path, Path], capsys: pytest.CaptureFixture[str]) -> None:
    base, head = files
    assert main(["diff", str(base), str(head)]) == 0
    out = capsys.readouterr().out
    assert out.startswith("<!-- empath-gate:suite=crisis -->\n### ❌")
    assert "compared with baseline `base123`" in out and "#### By metric" in out
    assert "regressed" in out


def test_diff_json(files: tuple[Path, Path], capsys: pytest.CaptureFixture[str]) -> None:
    base, head = files
    assert main(["diff", str(base), str(head), "--format", "json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["verdict"] == "failed" and data["passed"] is False
    assert "crisis_detection" in data["failing_metrics"]
    reg = {m["metric_id"]: m for m in data["regressions"]["metrics"]}
    assert reg["crisis_detection"]["regressed"] is True and reg["crisis_detection"]["effect"] < 0


def test_diff_missing_file_is_a_usage_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["diff", str(tmp_path / "a.json"), str(tmp_path / "b.json")]) == 2
    assert "not found" in capsys.readouterr().err


def test_report_writes_html_and_markdown(files: tuple[Path, Path], tmp_path: Path) -> None:
    base, head = files
    html, md = tmp_path / "out" / "report.html", tmp_path / "out" / "diff.md"
    assert (
        main(["report", str(head), "--html", str(html), "--markdown", str(md), "--baseline", str(base)]) == 0
    )
    page = html.read_text(encoding="utf-8")
    assert page.startswith("<!DOCTYPE html>") and 'data-status="failed"' in page
    assert page.count('class="turn ') >= 6, "transcripts were read relative to the results file"
    assert md.read_text(encoding="utf-8").startswith("<!-- empath-gate:suite=crisis -->")
    assert main(["report", str(head)]) == 2


def test_comment_creates_then_updates_one(
    files: tuple[Path, Path],
    actions_env: dict[str, Path],
    fake_github: FakeGitHubServer,
    capsys: pytest.CaptureFixture[str],
) -> None:
    base, head = files
    assert main(["comment", str(head), "--baseline", str(base)]) == 1, "exit status follows the gate"
    assert main(["comment", str(head), "--baseline", str(base)]) == 1
    comments = fake_github.comments(REPO, 7)
    assert len(comments) == 1 and comments[0]["user"]["login"] == ACTIONS_BOT
    assert comments[0]["body"].startswith("<!-- empath-gate:suite=crisis -->")
    assert "https://github.com/acme/support-bot/actions/runs/42" in comments[0]["body"]
    assert [r.method for r in fake_github.requests].count("PATCH") == 1
    assert "ghs_fake_installation" not in capsys.readouterr().out


def test_comment_job_summary_outputs_and_annotations(
    files: tuple[Path, Path], actions_env: dict[str, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    base, head = files
    assert main(["comment", str(head), "--baseline", str(base), "--job-summary", "--no-post"]) == 1
    summary = actions_env["summary"].read_text(encoding="utf-8")
    assert summary.startswith("<!-- empath-gate:suite=crisis -->") and len(summary.encode()) < 1024 * 1024
    output = actions_env["output"].read_text(encoding="utf-8")
    assert "passed<<" in output and "\nfalse\n" in output
    assert "regressions<<" in output and "crisis_detection" in output
    assert "results-path<<" in output and str(head) in output
    stdout = capsys.readouterr().out
    errors = [line for line in stdout.splitlines() if line.startswith("::error ")]
    decided = verdict_of(read_results(head), baseline=read_results(base)).results
    failing = overall_verdict(decided).failing_metrics
    assert "crisis_detection" in failing
    assert len(errors) == len(failing), "one annotation per failing metric"
    for metric, line in zip(failing, errors, strict=True):
        assert f"metric {metric} failed::" in line


def test_comment_on_fork_is_skipped_and_exit_follows_gate(
    files: tuple[Path, Path],
    actions_env: dict[str, Path],
    fake_github: FakeGitHubServer,
    capsys: pytest.CaptureFixture[str],
) -> None:
    actions_env["event"].write_text(
        json.dumps(
            {
                "pull_request": {
                    "number": 7,
                    "head": {"repo": {"full_name": "someone/support-bot"}},
                    "base": {"repo": {"full_name": REPO}},
                }
            }
        ),
        encoding="utf-8",
    )
    _, head = files
    assert main(["comment", str(head)]) == 1
    assert fake_github.requests == []
    assert "::warning" in capsys.readouterr().out


def test_comment_on_403_is_skipped(
    files: tuple[Path, Path],
    actions_env: dict[str, Path],
    fake_github: FakeGitHubServer,
    capsys: pytest.CaptureFixture[str],
) -> None:
    fake_github.forbid("writes")
    _, head = files
    assert main(["comment", str(head)]) == 1
    assert fake_github.comments(REPO, 7) == []
    assert "403" in capsys.readouterr().out


def test_comment_exit_zero_for_a_passing_gate(
    tmp_path: Path, actions_env: dict[str, Path], fake_github: FakeGitHubServer
) -> None:
    res = build_results(lambda c, m, r: 9)
    write_results(res, tmp_path / "results.json")
    assert main(["comment", str(tmp_path / "results.json"), "--job-summary"]) == 0
    assert "\ntrue\n" in actions_env["output"].read_text(encoding="utf-8")
    assert len(fake_github.comments(REPO, 7)) == 1


def test_comment_survives_a_github_outage_with_a_warning(
    files: tuple[Path, Path],
    actions_env: dict[str, Path],
    fake_github: FakeGitHubServer,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    waits: list[float] = []
    monkeypatch.setattr("empath_gate.github.comment.time.sleep", waits.append)
    fake_github.fail_next(10, 502)
    _, head = files
    assert main(["comment", str(head)]) == 1, "exit status follows the gate, not the API"
    out = capsys.readouterr().out
    warning = "::warning ::empath-gate: PR comment skipped: HTTP 502 from GitHub (Bad Gateway)"
    assert f"{warning} on each of 3 attempts" in out
    assert len(fake_github.requests) == 3 and waits == [1.0, 2.0]
    assert fake_github.comments(REPO, 7) == []


def test_comment_survives_an_unusable_answer_with_a_warning(
    files: tuple[Path, Path],
    actions_env: dict[str, Path],
    fake_github: FakeGitHubServer,
    capsys: pytest.CaptureFixture[str],
) -> None:
    fake_github.answer_raw_next(b"<html>not the API</html>", methods=("GET",), count=5)
    _, head = files
    assert main(["comment", str(head)]) == 1, "exit status follows the gate, not the API"
    out = capsys.readouterr().out
    assert "::warning ::empath-gate: PR comment failed: GitHub API GET" in out
    assert "unusable answer: the answer is not JSON" in out
    assert fake_github.comments(REPO, 7) == []
