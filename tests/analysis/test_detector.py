"""The risk detector's figures (pure), the labelled-conversation reader and ``detect``'s exit codes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from empath_gate.analysis.detector import LabelledDialogue, LabelledTurn, detector_scores
from empath_gate.cli import main

SI = "active_suicidal_ideation:ongoing"
DV = "domestic_violence:past"
ED = "eating_disorder:ongoing"


def dialogue(*turns: tuple[tuple[str, ...], tuple[str, ...]], alert: int | None = None) -> LabelledDialogue:
    return LabelledDialogue(
        conversation_id="c",
        turns=tuple(LabelledTurn(turn=i + 1, gold=g, predicted=p) for i, (g, p) in enumerate(turns)),
        alert_turn=alert,
    )


def test_turn_dialogue_and_confirm_f1_and_the_alert_share() -> None:
    d = dialogue(((), ()), ((), (SI,)), ((SI, ED), (SI,)), ((), (SI, DV)), alert=2)
    s = detector_scores([d])
    # turns: 2 -> fp SI; 3 -> tp SI, fn ED; 4 -> tp SI, fp DV, fn ED
    assert (s.scopes["all"].turn.tp, s.scopes["all"].turn.fp, s.scopes["all"].turn.fn) == (2, 2, 2)
    assert s.scopes["all"].turn_f1 == 0.5
    # CRADLE's seven leave the eating disorder out: tp 2, fp 2, fn 0
    assert s.scopes["cradle"].turn_f1 == pytest.approx(4 / 6)
    # dialogue: {SI, DV} vs {SI, ED}
    assert s.scopes["all"].dialogue_f1 == 0.5
    # the confirm turn (3): tp SI, fn ED
    assert s.scopes["all"].confirm_f1 == pytest.approx(2 / 3)
    assert s.alert_share == 1.0  # SI, a gold label, predicted at turn 2 = the alert turn


def test_nothing_gold_nothing_predicted_is_not_a_score() -> None:
    s = detector_scores([dialogue(((), ()), ((), ()))])
    assert s.scopes["all"].turn_f1 is None and s.alert_share is None


def write(path: Path, rows: list[object]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


ROWS = [
    {"conversation_id": "a", "turn": 1, "role": "user", "text": "hi", "labels": [], "predicted": []},
    {"conversation_id": "a", "turn": 1, "role": "assistant", "text": "hello", "predicted": []},
    {"conversation_id": "a", "turn": 2, "role": "user", "text": "...", "labels": [SI], "predicted": [],
     "alert": True},
    {"conversation_id": "a", "turn": 2, "role": "assistant", "text": "...",
     "predicted": [{"category": "active_suicidal_ideation", "timing": "ongoing"}]},
]


def test_detect_exits_0_and_1_by_its_thresholds(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    data = write(tmp_path / "d.jsonl", ROWS)
    shipped = (Path(__file__).resolve().parents[2] / "thresholds.yaml").read_text(encoding="utf-8")
    th = tmp_path / "th.yaml"
    th.write_text(shipped + "\ndetector:\n  min_turn_f1: 1.0\n  min_alert_share: 1.0\n", encoding="utf-8")
    assert main(["detect", str(data), "--thresholds", str(th)]) == 0
    assert "all 10 categories: turn-level micro-F1 1.000" in capsys.readouterr().out
    bad = write(tmp_path / "e.jsonl", [*ROWS[:3], {**ROWS[3], "predicted": [DV]}])
    assert main(["detect", str(bad), "--thresholds", str(th)]) == 1
    assert "turn_f1 (all) 0.000 < min_turn_f1 1.000" in capsys.readouterr().out


def test_detect_exits_2_on_bad_rows_naming_their_lines(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rows = [ROWS[0], {**ROWS[2], "labels": ["suicide:ongoing"]}, {**ROWS[3], "turn": 0}]
    assert main(["detect", str(write(tmp_path / "b.jsonl", rows))]) == 2
    err = capsys.readouterr().err
    assert "b.jsonl:2: unknown risk label" in err and "b.jsonl:3: 'turn' must be" in err
    (tmp_path / "n.jsonl").write_text('{"conversation_id": "a"\n', encoding="utf-8")
    assert main(["detect", str(tmp_path / "n.jsonl")]) == 2
    assert "n.jsonl:1: not valid JSON" in capsys.readouterr().err


def test_the_cradle_layout(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rows = [
        {"turn_id": "d7_1", "text": "hi", "labels": [], "predicted": []},
        {"turn_id": "d7_2", "text": "...", "labels": ["suicidal ideation active:ongoing"],
         "predicted": ["suicidal_ideation_active_ongoing"]},
    ]
    assert main(["detect", str(write(tmp_path / "c.jsonl", rows)), "--format", "cradle", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["scores"]["scopes"]["cradle"]["turn_f1"] == 1.0 and doc["scores"]["conversations"] == 1


def test_a_callables_risk_event_is_checked_and_normalised() -> None:
    from empath_gate.conversation.target import coerce_reply

    _, events = coerce_reply(
        {"content": "ok", "events": [{"kind": "risk", "detail": {"labels": [SI]}}]}, "py:bot:reply"
    )
    assert events[0].kind == "risk"
    assert events[0].detail["labels"] == [{"category": "active_suicidal_ideation", "timing": "ongoing"}]
    with pytest.raises(TypeError, match="py:bot:reply: unknown risk label"):
        coerce_reply({"content": "ok", "events": [{"kind": "risk", "detail": {"labels": ["sad:ongoing"]}}]},
                     "py:bot:reply")
    with pytest.raises(TypeError, match="needs 'labels'"):
        coerce_reply({"content": "ok", "events": [{"kind": "risk", "detail": {}}]}, "py:bot:reply")
