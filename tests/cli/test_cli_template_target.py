"""A bot that is not OpenAI-compatible, gated end to end: ``empath-gate run`` and the pytest plugin
against the fake bot (own JSON API, a session id, server-sent events) on 127.0.0.1, with the
auditor and the judge on the fake OpenAI server."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from cli_support import TINY, Project
from plugin_support import gate_env, inline_run, plan_seeds, read_json

from empath_gate.testing.fake_bot import SESSION_HEADER, FakeBot
from empath_gate.testing.scenarios import ScoringJudge

pytest_plugins = ["pytester"]
pytestmark = [
    pytest.mark.filterwarnings("ignore:Item.* using the .ReadOnly. qualifier:UserWarning"),
    pytest.mark.filterwarnings("ignore::empath_gate.judging.llm_judge.JudgeHygieneWarning"),
]

SSE_TEMPLATE: dict[str, Any] = {
    "headers": {"X-Client": "empath-gate-tests"},
    "body": {"conversation_id": "{{conversation_id}}", "input": {"text": "{{message}}"}},
    "reply_path": "$.delta.text",
    "events": {"handoff": "$.handoff"},
    "session": {"id_path": "$.session.id", "header": SESSION_HEADER},
    "stream": True,
}
JSON_TEMPLATE: dict[str, Any] = {
    "body": {"conversation_id": "{{conversation_id}}", "session_id": "{{session_id}}",
             "input": {"text": "{{message}}"}},
    "reply_path": "output.text",
    "events": {"handoff": "output.handoff"},
    "session": {"id_path": "session.id"},
}


@pytest.fixture
def bot() -> Iterator[FakeBot]:
    with FakeBot(handoff_turns={1}) as b:
        yield b


def write_template(folder: Path, template: dict[str, Any]) -> Path:
    path = folder / "bot-template.json"
    path.write_text(json.dumps(template, indent=2), encoding="utf-8")
    return path


def transcripts(folder: Path) -> list[list[dict[str, Any]]]:
    """Each transcript file's turns."""
    out = []
    for path in sorted(folder.rglob("*.jsonl")):
        rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
        out.append([r for r in rows if r.get("type") == "turn"])
    return out


def test_run_gates_a_streaming_session_bot_end_to_end(
    project: Project, bot: FakeBot, capsys: pytest.CaptureFixture[str]
) -> None:
    template = write_template(project.path, SSE_TEMPLATE)
    env = {"EMPATH_TARGET": bot.stream_url, "EMPATH_TARGET_TEMPLATE": str(template),
           "EMPATH_TARGET_VERSION": "bot-1", "EMPATH_CACHE_DIR": str(project.path / "own-cache")}
    assert project.cli("run", *TINY, env=env) == 0
    out = capsys.readouterr().out
    assert "empath-gate tiny: PASSED" in out
    doc = read_json(project.path / "empath-results" / "results.json")
    records = doc["records"]
    assert len(records) == 6 and all(r["status"] == "complete" for r in records)
    assert sum(r["handoffs"] for r in records) == 6  # the bot hands off on its second turn, every run
    turns = transcripts(project.path / "empath-results" / "transcripts")
    sessions = bot.sessions
    assert len(turns) == len(sessions) == 6  # one session per transcript
    heard = sorted(sessions.values())
    said = sorted([t["content"] for t in ts if t["role"] == "user"] for ts in turns)
    assert heard == said  # every bot session holds exactly its transcript's user turns
    assert all(t["content"].strip() for ts in turns for t in ts if t["role"] == "assistant")
    assert all(r.headers.get("x-client") == "empath-gate-tests" for r in bot.requests)
    # warm: the whole transcripts replay from the cache, the bot is not called again
    before = len(bot.requests)
    assert project.cli("run", *TINY, "--results", "warm/results.json", env=env) == 0
    assert len(bot.requests) == before


def test_run_fails_the_gate_of_an_unsafe_bot_offline(
    project: Project, capsys: pytest.CaptureFixture[str]
) -> None:
    template = write_template(project.path, JSON_TEMPLATE)
    with FakeBot(behaviour="unsafe") as unsafe:
        env = {"EMPATH_TARGET": unsafe.url, "EMPATH_TARGET_TEMPLATE": str(template)}
        code = project.cli("run", *TINY, "--offline", "--no-cache", env=env)
        assert unsafe.requests and all(r.path == "/api/chat" for r in unsafe.requests)
    assert code == 1
    assert "empath-gate tiny: FAILED" in capsys.readouterr().out


def test_a_bot_that_fails_is_an_infrastructure_error_never_a_pass(
    project: Project, bot: FakeBot, capsys: pytest.CaptureFixture[str]
) -> None:
    template = write_template(project.path, JSON_TEMPLATE)
    bot.fail("empty_reply", count=100)
    env = {"EMPATH_TARGET": bot.url, "EMPATH_TARGET_TEMPLATE": str(template)}
    assert project.cli("run", *TINY, "--no-cache", env=env) == 3
    doc = read_json(project.path / "empath-results" / "results.json")
    assert all(r["status"] == "error" and "empty_reply" in (r["error"] or "") for r in doc["records"])
    assert len(bot.requests) == 6  # not retried: one request per transcript


@pytest.mark.parametrize("fault", ["stream_error", "error_event"])
def test_a_stream_that_breaks_off_with_an_error_is_an_infrastructure_error_never_a_pass(
    project: Project, bot: FakeBot, capsys: pytest.CaptureFixture[str], fault: Any
) -> None:
    template = write_template(project.path, {**SSE_TEMPLATE, "stream_error": "$.error"})
    bot.fail(fault, count=100, body="upstream model overloaded")
    env = {"EMPATH_TARGET": bot.stream_url, "EMPATH_TARGET_TEMPLATE": str(template)}
    assert project.cli("run", *TINY, "--offline", "--no-cache", env=env) == 3
    doc = read_json(project.path / "empath-results" / "results.json")
    assert all(r["status"] == "error" and "upstream model overloaded" in (r["error"] or "")
               for r in doc["records"])
    assert len(bot.requests) == 6  # a session bot's broken turn is not sent again


def test_a_broken_template_is_a_usage_error_naming_the_file(
    project: Project, bot: FakeBot, capsys: pytest.CaptureFixture[str]
) -> None:
    template = write_template(project.path, {**JSON_TEMPLATE, "reply_path": "$..text"})
    env = {"EMPATH_TARGET": bot.url, "EMPATH_TARGET_TEMPLATE": str(template)}
    assert project.cli("run", *TINY, env=env) == 2
    err = capsys.readouterr().err
    assert "bot-template.json: invalid target template" in err and "recursive descent" in err
    assert project.cli("run", *TINY, "--dry-run", env=env) == 2  # checked before the estimate too
    assert "recursive descent" in capsys.readouterr().err
    assert bot.requests == []


def test_the_plugin_gates_the_bot_configured_in_pyproject(
    pytester: pytest.Pytester, project: Project, bot: FakeBot
) -> None:
    write_template(pytester.path, SSE_TEMPLATE)
    (pytester.path / "pyproject.toml").write_text(
        f'[tool.empath-gate]\ntarget = "{bot.stream_url}"\ntarget_template = "bot-template.json"\n',
        encoding="utf-8",
    )
    env = gate_env(project.fake, pytester.path / "cache", target=None, judge_tokens=3000)
    judge = ScoringJudge(default=10, seeds=plan_seeds("smoke", 1))
    result = inline_run(pytester, project.fake, env, "--empath-suite", "smoke", "--empath-runs", "1",
                        judge=judge)
    assert result.rc == 0, result.output
    records = result.results["records"]
    assert len(records) == 10 and all(r["status"] == "complete" for r in records)
    assert len(bot.sessions) == 10
    by_conversation: dict[str, list[str | None]] = {}
    for r in bot.requests:
        by_conversation.setdefault(r.headers["x-empath-conversation-id"], []).append(r.session_id)
    assert len(by_conversation) == 10
    for sent in by_conversation.values():  # the first turn opens the session, every later one sends it
        assert sent[0] is None and len(sent) > 1 and len(set(sent[1:])) == 1 and sent[1] in bot.sessions
