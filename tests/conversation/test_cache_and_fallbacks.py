"""The engine end to end over the fake server: what the reply cache keeps and keys on for each
role, and how a degraded LLM auditor is recorded (fallbacks and why, refusals retried)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conv_support import AUDITOR, SCRIPT_EN, TARGET, model_settings, specs

from empath_gate.conversation.engine import generate_sync, summarize
from empath_gate.conversation.target import HttpTarget
from empath_gate.conversation.transcript import auditor_tally
from empath_gate.runner import record_for
from empath_gate.settings import Settings
from empath_gate.testing import FakeOpenAIServer, FakeRequest, Fault

HTTP_MODEL = "empath-target"


def test_http_target_key_holds_non_secret_headers_never_credentials(
    fake_openai: FakeOpenAIServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fake_openai.on(HTTP_MODEL, lambda req: f"reply for {req.headers.get('x-env')} deployment")
    settings = Settings(target=fake_openai.base_url, target_version="v1", cache_dir=tmp_path / "cache")

    def run(token: str, env: str) -> list[str]:
        monkeypatch.setenv("EMPATH_TARGET_HEADERS", json.dumps({"Authorization": token, "X-Env": env}))
        [t] = generate_sync(specs(1, 1, max_turns=1), settings=settings)
        return [x.cache for x in t.turns if x.role == "assistant"]

    assert run("Bearer token-one-abc", "staging") == ["miss"]
    assert run("Bearer token-two-def", "staging") == ["hit"]  # a rotated credential: same bot
    assert run("Bearer token-one-abc", "canary") == ["miss"]  # another deployment: asked again
    assert len(fake_openai.requests) == 2
    text = " ".join(p.read_text(encoding="utf-8") for p in (tmp_path / "cache").rglob("*.seg"))
    assert text.count("\n") == 2  # the two replies asked for
    assert "token-one" not in text and "token-two" not in text


def test_http_target_url_is_keyed_without_credentials(tmp_path: Path) -> None:
    settings = Settings(target="https://bot.example/v1", cache_dir=tmp_path, target_version="v1")
    plain = HttpTarget("https://bot.example/v1", settings)
    with_user = HttpTarget("https://ops:hunter2-secret@bot.example/v1/chat/completions", settings)
    assert plain.key_name == with_user.key_name == "https://bot.example/v1"
    other = HttpTarget("https://bot.example/v2", settings)
    assert other._key_parts(0, "c-r0")["target"] != plain._key_parts(0, "c-r0")["target"]


def test_a_target_content_filter_is_cached_as_evidence(fake_openai: FakeOpenAIServer, tmp_path: Path) -> None:
    fake_openai.script(TARGET, Fault.content_filter())
    settings = model_settings(fake_openai, tmp_path)
    [first] = generate_sync(specs(1, 1, max_turns=1), settings=settings)
    [again] = generate_sync(specs(1, 1, max_turns=1), settings=settings)
    assert len(fake_openai.requests) == 1  # the filtered reply was replayed, not asked again
    assert [e.kind for e in again.turns[1].events] == ["filtered"] == [e.kind for e in first.turns[1].events]
    assert (again.turns[1].cache, again.target_filtered) == ("hit", 1)


def test_an_auditor_content_filter_is_not_cached(fake_openai: FakeOpenAIServer, tmp_path: Path) -> None:
    fake_openai.script(AUDITOR, Fault.content_filter(), Fault.content_filter())
    fake_openai.on(AUDITOR, "i can't sleep")
    fake_openai.on(TARGET, "I'm here.")
    settings = model_settings(fake_openai, tmp_path, auditor=True)
    [broken] = generate_sync(specs(1, 1, max_turns=1), settings=settings)
    assert broken.status == "error" and (broken.error or "").startswith("auditor: filtered")
    [fine] = generate_sync(specs(1, 1, max_turns=1), settings=settings)
    assert fine.status == "complete" and fine.turns[0].content == "i can't sleep"
    assert len(fake_openai.requests_for(AUDITOR)) == 3


def test_the_old_key_format_line_reaches_the_progress(fake_openai: FakeOpenAIServer, tmp_path: Path) -> None:
    settings = model_settings(fake_openai, tmp_path)
    old = settings.cache_dir / "v1" / "ab"
    old.mkdir(parents=True)
    for i in range(4):
        (old / f"ab{i:062x}.json").write_text('{"content": "an old reply"}', encoding="utf-8")
    fake_openai.on(TARGET, "new reply")
    lines: list[str] = []
    [t] = generate_sync(specs(1, 1, max_turns=1), settings=settings, progress=lines.append)
    assert t.turns[1].content == "new reply"
    old_lines = [line for line in lines if "old key format" in line]
    assert old_lines == [lines[0]] and "ignoring 4 entries" in lines[0]
    generate_sync(specs(1, 1, max_turns=1), settings=settings, progress=lines.append)
    assert len([line for line in lines if "old key format" in line]) == 1  # once per process


# --------------------------------------------------------------------------- a degraded auditor


def _auditor_program(replies: list[str]) -> object:
    queue = list(replies)

    def respond(req: FakeRequest) -> str:
        return queue.pop(0) if queue else "ok"

    return respond


def test_fallbacks_and_retried_refusals_are_recorded_apart(
    fake_openai: FakeOpenAIServer, tmp_path: Path
) -> None:
    refusal = "I'm sorry, but I can't role-play someone thinking about suicide."
    fake_openai.on(AUDITOR, _auditor_program([
        "*sighs* i can't sleep", "i can't sleep",  # turn 0: a break, retried successfully
        refusal, "work is awful",  # turn 1: a refusal, retried successfully
        refusal, "[crying] I'm sorry, I can't",  # turn 2: refusal then narration: the script's turn
    ]))
    fake_openai.on(TARGET, "I'm listening.")
    settings = model_settings(fake_openai, tmp_path, auditor=True)
    lines: list[str] = []
    [t] = generate_sync(specs(1, 1, max_turns=3), settings=settings, progress=lines.append)
    assert [x.source for x in t.turns if x.role == "user"] == ["auditor", "auditor", "fallback"]
    assert t.turns[4].content == SCRIPT_EN[2]
    events = [e for x in t.turns for e in x.events]
    kinds = [(e.kind, e.detail.get("outcome")) for e in events if e.kind != "feeling_unparsed"]
    # plain-text replies: each turn the auditor wrote says its feeling could not be read
    unparsed = [sum(e.kind == "feeling_unparsed" for e in x.events) for x in t.turns if x.role == "user"]
    assert unparsed == [1, 1, 0]
    assert kinds == [("auditor_break", "retried"), ("auditor_refusal", "retried"),
                     ("auditor_refusal", "fallback"), ("auditor_break", "fallback"), ("fallback", None)]
    fallback = t.turns[4].events[-1]
    assert fallback.detail == {"user_turn": 2, "reason": "narration", "cause": "break",
                               "reasons": ["refusal", "narration"]}
    record = record_for(t, [], None)
    assert (record.auditor_turns, record.auditor_fallbacks, record.auditor_refusals) == (3, 1, 1)
    assert record.auditor_fallback_reasons == {"narration": 1}
    tally = auditor_tally(t)
    assert (tally.breaks_recovered, tally.fallback_share) == (1, pytest.approx(1 / 3))
    assert "auditor: 1 refusals, 1 fallbacks" in lines[-1]
    totals = summarize([t])
    assert (totals.auditor_refusals, totals.auditor_fallbacks) == (1, 1)


def test_a_fallback_that_ends_the_conversation_counts_as_a_turn(
    fake_openai: FakeOpenAIServer, tmp_path: Path
) -> None:
    bad = "How can I help you?"
    fake_openai.on(AUDITOR, _auditor_program(["one", "two", "three", bad, bad]))
    fake_openai.on(TARGET, "mm")
    settings = model_settings(fake_openai, tmp_path, auditor=True)
    [t] = generate_sync(specs(1, 1, max_turns=6), settings=settings)
    record = record_for(t, [], None)
    assert (record.auditor_turns, record.auditor_fallbacks) == (4, 1)
    assert record.auditor_fallback_reasons == {"assistant_voice": 1}
    assert t.events[-1].detail["ended"] == "script exhausted"


def test_the_scripted_auditor_records_nothing(fake_openai: FakeOpenAIServer, tmp_path: Path) -> None:
    fake_openai.on(TARGET, "ok")
    [t] = generate_sync(specs(1, 1, max_turns=2), settings=model_settings(fake_openai, tmp_path))
    record = record_for(t, [], None)
    assert (record.auditor_turns, record.auditor_fallbacks, record.auditor_refusals) == (0, 0, 0)
