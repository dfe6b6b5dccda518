"""A reply with a lone surrogate (a ``\\ud83d`` escape in its JSON, e.g. a bot that cut its
text inside an emoji by UTF-16 units) is kept as a turn with U+FFFD in its place: cached,
sent on in the next request and written to the results, never an errored transcript."""

from __future__ import annotations

import json
from pathlib import Path

from conv_support import TARGET, model_settings, specs

from empath_gate.bounded import InputLimits, check_body, well_formed
from empath_gate.conversation.engine import generate_sync
from empath_gate.conversation.target import CallableTarget
from empath_gate.settings import Settings
from empath_gate.testing import FakeOpenAIServer

CUT = "I hear you \ud83d. Tell me more."
KEPT = "I hear you \ufffd. Tell me more."


def test_well_formed_replaces_each_surrogate_and_nothing_else() -> None:
    text = "ok 😀 ñ"
    assert well_formed(text) is text
    assert well_formed("a\ud83d b") == "a\ufffd b"
    assert well_formed("\udc00x\ud800\udfff") == "\ufffdx\ufffd\ufffd"
    assert well_formed(CUT).encode("utf-8") == KEPT.encode("utf-8")
    assert check_body(CUT, "target reply", InputLimits()) == KEPT


def test_model_target_reply_with_a_lone_surrogate_completes_and_is_cached(
    fake_openai: FakeOpenAIServer, tmp_path: Path
) -> None:
    fake_openai.on(TARGET, CUT)
    settings = model_settings(fake_openai, tmp_path)
    [t] = generate_sync(specs(1, 1, max_turns=3), settings=settings)
    assert t.status == "complete", t.error
    replies = [turn.content for turn in t.turns if turn.role == "assistant"]
    assert replies == [KEPT] * 3
    sent = fake_openai.requests_for(TARGET)[-1].body or {}
    assert KEPT in [m["content"] for m in sent["messages"]]
    json.dumps(t.model_dump(mode="json"), ensure_ascii=False).encode("utf-8")  # the results can hold it

    calls = len(fake_openai.requests_for(TARGET))
    [again] = generate_sync(specs(1, 1, max_turns=3), settings=settings)
    assert len(fake_openai.requests_for(TARGET)) == calls
    assert [turn.content for turn in again.turns if turn.role == "assistant"] == replies


def test_callable_target_reply_with_a_lone_surrogate_completes(tmp_path: Path) -> None:
    settings = Settings(target="py:inline:fn", cache_dir=tmp_path / "cache")
    target = CallableTarget("py:inline:fn", settings, fn=lambda _messages, _cid: CUT)
    [t] = generate_sync(specs(1, 1, max_turns=2), settings=settings, target=target)
    assert t.status == "complete", t.error
    assert [turn.content for turn in t.turns if turn.role == "assistant"] == [KEPT, KEPT]
