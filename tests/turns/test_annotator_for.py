"""``annotator_for(model)``: the synchronous LLM annotator ``empath-gate dynamics --judge`` uses,
against the fake OpenAI-compatible server."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from empath_gate import bounded
from empath_gate.commands.dynamics import judge_annotator
from empath_gate.errors import ConfigError
from empath_gate.settings import Settings
from empath_gate.testing.fake_openai import FakeOpenAIServer
from empath_gate.turns.llm_annotator import MAX_REASKS, annotator_for
from empath_gate.turns.model import AnnotatorFailure, Dialogue, DialogueTurn, TurnLabels

DIALOGUE = Dialogue(conversation_id="ext-1", locale="en-US", turns=(
    DialogueTurn(role="user", text="I can't see any way out anymore."),
    DialogueTurn(role="assistant", text="I'm really sorry you're feeling this way. What happened today?"),
))
GOOD = {"turns": [
    {"turn": 0, "role": "user", "label": "hopelessness", "intensity": 3, "valence": -0.9},
    {"turn": 1, "role": "assistant", "label": "warmth_care", "intensity": 2, "valence": 0.5,
     "strategy": "question"},
]}


@pytest.fixture(scope="module")
def fake() -> Iterator[FakeOpenAIServer]:
    with FakeOpenAIServer() as server:
        yield server


def _settings(fake: FakeOpenAIServer) -> Settings:
    role = fake.role_settings("unused", temperature=0.0, max_tokens=800, max_retries=0)
    return Settings(judge=role, cache_mode="off")


def test_annotator_for_labels_with_the_named_model(fake: FakeOpenAIServer) -> None:
    fake.script("annot-for-good", json.dumps(GOOD))
    got = annotator_for("openai/annot-for-good", settings=_settings(fake))(DIALOGUE)
    assert isinstance(got, TurnLabels) and got.annotator == "judge"
    assert [(x.label, x.strategy) for x in got.labels] == [
        ("hopelessness", None), ("warmth_care", "question")]
    assert len(fake.requests_for("annot-for-good")) == 1


def test_annotator_for_makes_an_unparseable_answer_a_visible_failure(fake: FakeOpenAIServer) -> None:
    fake.script("annot-for-bad", *["I would rather not label this."] * (1 + MAX_REASKS))
    got = annotator_for("openai/annot-for-bad", settings=_settings(fake))(DIALOGUE)
    assert isinstance(got, AnnotatorFailure) and got.reason == "parse_error"


def test_the_dynamics_command_finds_the_adapter(
    monkeypatch: pytest.MonkeyPatch, fake: FakeOpenAIServer, tmp_path: Path
) -> None:
    from empath_gate.testing.scenarios.wiring import role_env

    for key, value in role_env(fake, target=None, auditor=False).items():
        monkeypatch.setenv(key, value)
    monkeypatch.setenv("EMPATH_CACHE", "off")
    monkeypatch.chdir(tmp_path)
    fake.script("annot-for-cmd", json.dumps(GOOD))
    # loading the settings configures the input limits: the next tests start from their environment
    monkeypatch.setattr(bounded, "_configured", bounded._configured)
    got = judge_annotator("openai/annot-for-cmd")(DIALOGUE)
    assert isinstance(got, TurnLabels) and got.labels[1].strategy == "question"
    with pytest.raises(ConfigError):
        annotator_for(" ")
