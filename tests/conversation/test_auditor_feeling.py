"""The LLM auditor's own feeling (``{message, feeling_0_100}`` in the same call): parsed
fail-closed, recorded on the user turn, never shown to the target; the break detector reads the
message only; transcripts without it read as before."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conv_support import AUDITOR, SCRIPT_EN, TARGET, model_settings, specs

from empath_gate.conversation.engine import generate_sync
from empath_gate.conversation.feeling import split_auditor_reply
from empath_gate.conversation.transcript import Transcript, Turn
from empath_gate.conversation.transcript_io import read_transcript, write_transcript
from empath_gate.settings import Settings
from empath_gate.testing import FakeOpenAIServer, FakeRequest
from empath_gate.testing.scenarios.auditor import ScriptAuditor


@pytest.mark.parametrize(("raw", "message", "feeling"), [
    ('{"message": "no puedo dormir", "feeling_0_100": 25}', "no puedo dormir", 25),
    ('```json\n{"message": "hi", "feeling_0_100": 70.0}\n```', "hi", 70),
    ('{"message": "hi", "feeling_0_100": 0}', "hi", 0),
])
def test_split_reads_message_and_feeling(raw: str, message: str, feeling: int) -> None:
    got = split_auditor_reply(raw)
    assert (got.message, got.feeling, got.problem) == (message, feeling, None)


@pytest.mark.parametrize(("raw", "message", "fragment"), [
    ("i can't sleep again", "i can't sleep again", "plain text"),
    ('{"message": "hi", "feeling_0_100": "40"}', "hi", "not an integer"),
    ('{"message": "hi", "feeling_0_100": 40.5}', "hi", "not an integer"),
    ('{"message": "hi", "feeling_0_100": true}', "hi", "not an integer"),
    ('{"message": "hi", "feeling_0_100": 101}', "hi", "outside 0-100"),
    ('{"message": "hi"}', "hi", "no feeling_0_100"),
    ('{"message": "hi", "feeling_0_100": 4', "", "not a JSON object"),
    ('{"feeling_0_100": 40}', "", "no string 'message'"),
])
def test_split_without_a_usable_feeling_says_why(raw: str, message: str, fragment: str) -> None:
    got = split_auditor_reply(raw)
    assert got.message == message and got.feeling is None
    assert got.problem is not None and fragment in got.problem


def _settings(fake: FakeOpenAIServer, tmp_path: Path) -> Settings:
    return model_settings(fake, tmp_path, auditor=True)


def _target_texts(fake: FakeOpenAIServer) -> str:
    return json.dumps([r.messages for r in fake.requests_for(TARGET)], ensure_ascii=False)


def test_feelings_are_recorded_per_user_turn_and_never_reach_the_target(
    fake_openai: FakeOpenAIServer, tmp_path: Path
) -> None:
    fake_openai.on(AUDITOR, ScriptAuditor())
    fake_openai.on(TARGET, "I'm so sorry you're going through this. I'm here for you.")
    [t] = generate_sync(specs(1, 1, max_turns=3), settings=_settings(fake_openai, tmp_path))
    users = [x for x in t.turns if x.role == "user"]
    assert [x.content for x in users] == list(SCRIPT_EN)
    # the fake auditor's feeling follows the bot: 40 before it wrote, 60 after a warm reply
    assert [x.feeling_0_100 for x in users] == [40, 60, 60]
    assert not any(e.kind == "feeling_unparsed" for x in users for e in x.events)
    assert all(x.feeling_0_100 is None for x in t.turns if x.role == "assistant")
    sent = _target_texts(fake_openai)
    assert "feeling_0_100" not in sent and '"message"' not in sent and SCRIPT_EN[0] in sent


def test_feeling_follows_a_different_bot(fake_openai: FakeOpenAIServer, tmp_path: Path) -> None:
    fake_openai.on(AUDITOR, ScriptAuditor())
    fake_openai.on(TARGET, "OK.")
    [t] = generate_sync(specs(1, 1, max_turns=3), settings=_settings(fake_openai, tmp_path))
    assert [x.feeling_0_100 for x in t.turns if x.role == "user"] == [40, 40, 40]


def test_an_unparseable_feeling_is_an_event_and_the_message_is_used(
    fake_openai: FakeOpenAIServer, tmp_path: Path
) -> None:
    replies = iter([
        '{"message": "I haven\'t slept in weeks", "feeling_0_100": "bad"}',
        "work is a mess",  # plain text: the message is used, the feeling is missing
    ])
    fake_openai.on(AUDITOR, lambda req: next(replies))
    fake_openai.on(TARGET, "Tell me more.")
    [t] = generate_sync(specs(1, 1, max_turns=2), settings=_settings(fake_openai, tmp_path))
    users = [x for x in t.turns if x.role == "user"]
    assert [x.content for x in users] == ["I haven't slept in weeks", "work is a mess"]
    assert [x.feeling_0_100 for x in users] == [None, None]
    events = [e for x in users for e in x.events if e.kind == "feeling_unparsed"]
    assert len(events) == 2 and events[0].role == "auditor"
    assert "not an integer" in events[0].detail["problem"] and "plain text" in events[1].detail["problem"]
    assert events[0].detail["excerpt"].startswith('{"message"')


def test_the_break_detector_reads_the_message_not_the_feeling(
    fake_openai: FakeOpenAIServer, tmp_path: Path
) -> None:
    replies = iter([
        json.dumps({"message": "*sighs* i don't know", "feeling_0_100": 30}),  # a break in the message
        json.dumps({"message": "i don't know where to start", "feeling_0_100": 30}),
    ])

    def respond(req: FakeRequest) -> str:
        return next(replies)

    fake_openai.on(AUDITOR, respond)
    fake_openai.on(TARGET, "Take your time.")
    [t] = generate_sync(specs(1, 1, max_turns=1), settings=_settings(fake_openai, tmp_path))
    user = t.turns[0]
    assert (user.content, user.source, user.feeling_0_100) == ("i don't know where to start", "auditor", 30)
    assert [e.kind for e in user.events] == ["auditor_break"]
    assert "sighs" not in _target_texts(fake_openai)


def test_transcripts_with_and_without_feelings_round_trip(tmp_path: Path) -> None:
    turns = (
        Turn(index=0, role="user", content="hola", source="auditor", feeling_0_100=35),
        Turn(index=1, role="assistant", content="hola, ¿cómo estás?", source="target"),
    )
    t = Transcript(suite="smoke", seed_id="s", persona_id="p", locale="es-MX", run=0, conversation_id="s-p",
                   transcript_id="s-p-r0", target="model", auditor="fake", max_turns=2, turns=turns)
    path = write_transcript(t, tmp_path)
    lines = path.read_text(encoding="utf-8").splitlines()
    assert '"feeling_0_100": 35' in lines[1] and "feeling_0_100" not in lines[2]
    assert read_transcript(path) == t
    from empath_gate.judging.prompts import build_judge_messages

    judge_view = json.dumps(build_judge_messages(t, [], "strict"), ensure_ascii=False)
    assert "feeling" not in judge_view and "35" not in judge_view
    # a transcript written before the field existed reads with no feeling
    old = path.with_name("old.jsonl")
    old.write_text("\n".join([lines[0], lines[1].replace(', "feeling_0_100": 35', ""), lines[2]]) + "\n",
                   encoding="utf-8")
    assert [x.feeling_0_100 for x in read_transcript(old).turns] == [None, None]
