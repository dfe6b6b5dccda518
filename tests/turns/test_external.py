"""Reading external conversations (JSONL, CSV) and the tool's own transcripts."""

from __future__ import annotations

from pathlib import Path

import pytest
from rows_file import write_rows

from empath_gate.conversation.transcript import Transcript, Turn
from empath_gate.conversation.transcript_io import write_transcript
from empath_gate.errors import ConfigError
from empath_gate.turns.external import read_conversations


def test_jsonl_rows_with_aliases_sorted_by_turn_and_bad_rows_reported(tmp_path: Path) -> None:
    f = write_rows(
        tmp_path / "logs.jsonl",
        [
            {"conversation_id": "a", "turn": 2, "role": "Volunteer", "text": "I'm here.", "locale": "en"},
            {"conversation_id": "a", "turn": 1, "role": "texter", "text": "I can't sleep."},
            {"conversation_id": "a", "turn": 3, "role": "help-seeker", "text": "thanks"},
            {"conversation_id": "a", "turn": 3, "role": "user", "text": "again"},  # line 4: duplicate
            {"conversation_id": "b", "turn": "x", "role": "user", "text": "hola"},  # line 5: turn
            {"conversation_id": "b", "turn": 1, "role": "robot", "text": "hola"},  # line 6: role
            {"conversation_id": "b", "turn": 2, "role": "user"},  # line 7: missing text
            "{not json",  # line 8
            {
                "conversation_id": "b",
                "turn": "3",
                "role": "counsellor",
                "text": "¿Cómo estás?",
                "locale": "es_MX",
                "profile": "resistance",
            },
        ],
    )
    got = read_conversations([f])
    assert got.rows == 9
    by_id = {c.dialogue.conversation_id: c for c in got.conversations}
    a = by_id["a"].dialogue
    assert [(t.role, t.text) for t in a.turns] == [
        ("user", "I can't sleep."),
        ("assistant", "I'm here."),
        ("user", "thanks"),
    ]
    assert a.locale == "en-US" and by_id["a"].keys == {"source": "logs.jsonl", "locale": "en-US"}
    assert by_id["b"].dialogue.locale == "es-MX" and by_id["b"].profiles == ("resistance",)
    problems = {p.line: p.what for p in got.problems}
    assert set(problems) == {4, 5, 6, 7, 8}
    assert "already given at" in problems[4] and ":3" in problems[4]
    assert "not an integer" in problems[5]
    assert "unknown role 'robot'" in problems[6]
    assert "missing text" in problems[7]
    assert "not valid JSON" in problems[8]
    assert all(p.source == str(f) for p in got.problems)


def test_csv_rows_and_missing_columns(tmp_path: Path) -> None:
    good = tmp_path / "chat.csv"
    good.write_text(
        "conversation_id,turn,role,text,locale\n"
        'c1,1,seeker,"Me siento sola, muy sola",es-MX\n'
        "c1,2,supporter,Aquí estoy,es-MX\n"
        "c1,3,seeker,,es-MX\n",
        encoding="utf-8",
    )
    bad = tmp_path / "other.csv"
    bad.write_text("conversation_id,turn,speaker,message\nc2,1,user,hi\n", encoding="utf-8")
    got = read_conversations([good, bad])
    (c1,) = got.conversations
    assert [t.text for t in c1.dialogue.turns] == ["Me siento sola, muy sola", "Aquí estoy"]
    lines = sorted((Path(p.source).name, p.line, p.what.split(";")[0]) for p in got.problems)
    assert lines == [("chat.csv", 4, "empty text"), ("other.csv", 1, "missing columns: role, text")]


def test_tool_transcripts_are_read_with_suite_locale_and_profiles(tmp_path: Path) -> None:
    t = Transcript(
        suite="crisis",
        seed_id="s1",
        persona_id="p1",
        locale="es-MX",
        run=0,
        conversation_id="s1-p1",
        transcript_id="s1-p1-r0",
        target="callable:bot",
        auditor="scripted",
        max_turns=2,
        turns=(
            Turn(index=0, role="user", content="No puedo más", source="script"),
            Turn(index=1, role="assistant", content="Te escucho", source="target"),
        ),
    )
    path = write_transcript(t, tmp_path)
    got = read_conversations([path], profiles_of=lambda pid: ("low_engagement",) if pid == "p1" else ())
    (c,) = got.conversations
    assert c.dialogue.conversation_id == "s1-p1-r0" and c.dialogue.locale == "es-MX"
    assert c.keys["suite"] == "crisis" and c.profiles == ("low_engagement",)
    assert [t.role for t in c.dialogue.turns] == ["user", "assistant"]
    broken = tmp_path / "broken.jsonl"
    broken.write_text(path.read_text(encoding="utf-8") + '{"type": "turn", "index": "x"}\n', encoding="utf-8")
    again = read_conversations([broken])
    assert again.conversations == () and "transcript not analysed" in again.problems[0].what


def test_unreadable_files_are_errors(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"missing\.jsonl"):
        read_conversations([tmp_path / "missing.jsonl"])
    latin = tmp_path / "latin.jsonl"
    latin.write_bytes('{"text": "canción"}'.encode("latin-1"))
    with pytest.raises(ConfigError, match="UTF-8"):
        read_conversations([latin])


def test_rows_over_the_field_limit_are_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("EMPATH_MAX_FIELD_CHARS", "20")
    row = {"conversation_id": "a", "turn": 1, "role": "user", "text": "x" * 30}
    f = write_rows(tmp_path / "long.jsonl", [row])
    with pytest.raises(ConfigError, match="max_field_chars"):
        read_conversations([f])


def test_problem_messages_and_ids_hold_no_secret(tmp_path: Path) -> None:
    key = "sk-" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4"
    f = write_rows(
        tmp_path / "s.jsonl",
        [
            {"conversation_id": "a", "turn": 1, "role": key, "text": "hi"},
            {"conversation_id": f"id-{key}", "turn": 1, "role": "user", "text": "hi"},
        ],
    )
    got = read_conversations([f])
    assert key not in got.model_dump_json()
    assert "unknown role" in got.problems[0].what
