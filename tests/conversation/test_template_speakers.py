"""Template (HTTP) targets in multi-party conversations: the speaker reaches the fake bot by
``multi_party_convention``, and a template that cannot carry the name is refused."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
from test_multi_party import party_seed, spec

from empath_gate.conversation.engine import generate
from empath_gate.conversation.target import make_target
from empath_gate.conversation.template_spec import parse_template, placeholder_values, speaker_problem
from empath_gate.conversation.transcript import Transcript
from empath_gate.errors import ConfigError
from empath_gate.settings import RoleSettings, Settings
from empath_gate.testing.fake_bot import FakeBot

TEMPLATE: dict[str, Any] = {
    "body": {"conversation_id": "{{conversation_id}}", "session_id": "{{session_id}}",
             "input": {"text": "{{message}}", "speaker": "{{speaker}}"}, "history": "{{messages}}"},
    "reply_path": "output.text",
    "session": {"id_path": "session.id"},
}
NAMES = {"mom": "Laura", "teen": "Eli"}


def _run(tmp_path: Path, url: str, template: dict[str, Any], convention: str) -> Transcript:
    path = tmp_path / "bot-template.json"
    path.write_text(json.dumps(template), encoding="utf-8")
    role = RoleSettings(retry_base_delay_s=0.01, retry_max_delay_s=0.02, timeout_s=10.0, max_retries=0)
    settings = Settings(target=url, target_template=path, target_role=role, cache_dir=tmp_path / "cache",
                        multi_party_convention=convention)
    target = make_target(settings, env={})
    [t] = asyncio.run(generate([spec(party_seed())], settings=settings, target=target))
    return t


def test_name_convention_sends_the_name_in_speaker_and_messages(tmp_path: Path) -> None:
    seed = party_seed()
    with FakeBot() as bot:
        t = _run(tmp_path, bot.url, TEMPLATE, "name")
        bodies = [r.body for r in bot.requests]
        [session] = bot.sessions.values()
    assert t.status == "complete", t.error
    expected = [NAMES[s] for s in seed.speakers]
    assert [b["input"]["speaker"] for b in bodies if b] == expected
    assert session == list(seed.script)  # the text as written, no "Name: " prefix
    last = bodies[-1]["history"]
    users = [m for m in last if m["role"] == "user"]
    assert [m["name"] for m in users] == expected
    assert all("name" not in m for m in last if m["role"] == "assistant")
    assert [u.speaker.id if u.speaker else None for u in t.turns if u.role == "user"] == list(seed.speakers)


def test_prefix_convention_labels_the_text_and_sends_no_name(tmp_path: Path) -> None:
    seed = party_seed()
    with FakeBot() as bot:
        t = _run(tmp_path, bot.url, TEMPLATE, "prefix")
        bodies = [r.body for r in bot.requests]
        [session] = bot.sessions.values()
    assert t.status == "complete", t.error
    assert session == [f"{NAMES[s]}: {text}" for s, text in zip(seed.speakers, seed.script, strict=True)]
    assert all(b["input"]["speaker"] is None for b in bodies if b)
    assert all("name" not in m for m in bodies[-1]["history"])


def test_a_template_that_cannot_carry_the_name_is_refused(tmp_path: Path) -> None:
    template = {**TEMPLATE, "body": {"conversation_id": "{{conversation_id}}", "session_id": "{{session_id}}",
                                     "input": {"text": "{{message}}"}}}
    with FakeBot() as bot:
        with pytest.raises(ConfigError, match=r"\{\{speaker\}\}.*multi_party_convention = \"prefix\""):
            _run(tmp_path, bot.url, template, "name")
        assert bot.requests == []  # refused before any request
        # under prefix the same template is fine: the name is in the text
        assert _run(tmp_path, bot.url, template, "prefix").status == "complete"


def test_placeholder_values_keep_names() -> None:
    msgs = [{"role": "user", "content": "hi", "name": "Laura"}, {"role": "assistant", "content": "hello"},
            {"role": "user", "content": "yo", "name": "Eli"}]
    values = placeholder_values(msgs, "c", None)
    assert values["speaker"] == "Eli" and values["message"] == "yo"
    assert values["messages"][0] == {"role": "user", "content": "hi", "name": "Laura"}
    one = placeholder_values([{"role": "user", "content": "hi"}], "c", None)
    assert one["speaker"] is None and one["messages"] == [{"role": "user", "content": "hi"}]
    only_message = parse_template({"body": {"t": "{{message}}"}, "reply_path": "r"}, "t.json")
    assert speaker_problem(only_message, msgs) is not None
    assert speaker_problem(only_message, msgs[1:2]) is None
    body = {"t": "{{message}}", "s": "{{speaker}}"}
    with_speaker = parse_template({"body": body, "reply_path": "r"}, "t.json")
    assert speaker_problem(with_speaker, msgs) is None
