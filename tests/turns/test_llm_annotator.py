"""The LLM annotator over the fake OpenAI-compatible server: labels fill, failures are visible,
calls are counted as judge calls, the dry-run estimate counts one more call per transcript."""

from __future__ import annotations

import asyncio
import hashlib
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from empath_gate.errors import ConfigError
from empath_gate.judging.prompts import judge_template_hash
from empath_gate.llm.accounting import ledger_session
from empath_gate.llm.cache import Cache
from empath_gate.settings import RoleSettings, Settings
from empath_gate.testing.fake_openai import FakeOpenAIServer
from empath_gate.turns.annotate_parse import AnnotationParseError, parse_annotation_reply
from empath_gate.turns.annotate_prompt import annotate_template_hash, build_annotate_messages
from empath_gate.turns.labelset import label_set
from empath_gate.turns.llm_annotator import MAX_REASKS, annotate_dialogue, annotate_with_judge
from empath_gate.turns.model import AnnotatorFailure, Dialogue, DialogueTurn, TurnLabels

DIALOGUE = Dialogue(conversation_id="seed-a-persona-b", locale="es-MX", turns=(
    DialogueTurn(role="user", text="Ya no puedo más con todo esto."),
    DialogueTurn(role="assistant", text="Siento mucho que estés pasando por esto. ¿Qué pasó?"),
    DialogueTurn(role="user", text="Me siento un poco mejor de contarlo."),
))
GOOD: dict[str, Any] = {"turns": [
    {"turn": 0, "role": "user", "label": "hopelessness", "intensity": 2, "valence": -0.8},
    {"turn": 1, "role": "assistant", "label": "warmth_care", "intensity": 1, "valence": 0.4,
     "strategy": "question"},
    {"turn": 2, "role": "user", "label": "relief_calm", "intensity": 1, "valence": 0.3},
]}


@pytest.fixture(scope="module")
def fake() -> Iterator[FakeOpenAIServer]:
    with FakeOpenAIServer() as server:
        yield server


@pytest.fixture()
def model(request: pytest.FixtureRequest) -> str:
    return "annot-" + hashlib.sha256(request.node.nodeid.encode()).hexdigest()[:12]


def _settings(fake: FakeOpenAIServer, model: str, **kw: Any) -> Settings:
    role = fake.role_settings(model, temperature=0.0, max_tokens=800, max_retries=0)
    return Settings(judge=role, dynamics_annotator="judge", **kw)


def _annotate(settings: Settings, cache: Cache | None = None) -> tuple[Any, Any]:
    async def go() -> tuple[Any, Any]:
        with ledger_session(None) as ledger:
            got = await annotate_with_judge(DIALOGUE, settings=settings, cache=cache)
            return got, ledger
    return asyncio.run(go())


def test_labels_fill_from_the_judge_model_and_count_as_judge_calls(
    fake: FakeOpenAIServer, model: str
) -> None:
    fake.script(model, "```json\n" + json.dumps(GOOD) + "\n```")
    got, ledger = _annotate(_settings(fake, model))
    assert isinstance(got, TurnLabels) and got.annotator == "judge"
    assert [(x.label, x.intensity, x.valence, x.strategy) for x in got.labels] == [
        ("hopelessness", 2, -0.8, None), ("warmth_care", 1, 0.4, "question"), ("relief_calm", 1, 0.3, None)]
    assert got.version.startswith("annotate-v1/" + annotate_template_hash()[:16])
    assert ledger.by_role["judge"].calls == 1 and ledger.by_role["target"].calls == 0
    [req] = fake.requests_for(model)
    prompt = req.messages[-1]["content"]
    assert "[1] ASSISTANT: Siento mucho" in prompt and "hopelessness:" in prompt
    assert "exactly 3 entries" in prompt


@pytest.mark.parametrize(("reply", "reason", "fragment"), [
    ("The user seems sad, then better.", "parse_error", "not a JSON object"),
    (json.dumps({"turns": GOOD["turns"][:2]}), "incomplete", "2 entries for 3 turns"),
    (json.dumps({"turns": [*GOOD["turns"][:2], {**GOOD["turns"][2], "label": "joy"}]}), "parse_error",
     "'joy'"),
])
def test_an_unusable_answer_is_a_visible_failure_after_the_re_asks(
    fake: FakeOpenAIServer, model: str, reply: str, reason: str, fragment: str
) -> None:
    fake.script(model, *([reply] * (1 + MAX_REASKS)))
    got, ledger = _annotate(_settings(fake, model))
    assert isinstance(got, AnnotatorFailure)
    assert (got.reason, got.annotator, got.conversation_id) == (reason, "judge", DIALOGUE.conversation_id)
    assert fragment in got.detail and f"asked {1 + MAX_REASKS} times" in got.detail
    assert ledger.by_role["judge"].calls == 1 + MAX_REASKS
    seeds = [r.body["seed"] for r in fake.requests_for(model) if r.body]
    assert len(set(seeds)) == 1 + MAX_REASKS  # every re-ask is a new sample


def test_prose_then_json_is_labels_and_only_the_good_reply_is_cached(
    fake: FakeOpenAIServer, model: str, tmp_path: Path
) -> None:
    fake.script(model, "no idea", json.dumps(GOOD))
    cache = Cache(tmp_path, mode="use")
    got, _ = _annotate(_settings(fake, model), cache)
    assert isinstance(got, TurnLabels) and len(fake.requests_for(model)) == 2
    fake.script(model, "still no idea")
    again, ledger = _annotate(_settings(fake, model), cache)
    assert isinstance(again, TurnLabels) and again == got
    # the unparseable first ask was not cached, so it is asked again; the good second one is a hit
    assert len(fake.requests_for(model)) == 3
    assert (ledger.by_role["judge"].calls, ledger.by_role["judge"].cache_hits) == (1, 1)


def test_dispatch_by_setting(fake: FakeOpenAIServer, model: str) -> None:
    off = asyncio.run(annotate_dialogue(DIALOGUE, settings=Settings(dynamics_annotator="off")))
    assert off is None
    offline = asyncio.run(annotate_dialogue(DIALOGUE, settings=Settings()))
    assert isinstance(offline, TurnLabels) and offline.annotator == "offline"
    with pytest.raises(ConfigError, match="needs a judge model"):
        asyncio.run(annotate_dialogue(DIALOGUE, settings=Settings(dynamics_annotator="judge")))
    assert fake.requests_for(model) == []


def test_parser_rejects_what_it_cannot_trust() -> None:
    def bad(change: dict[str, Any], index: int = 1) -> str:
        turns = [dict(t) for t in GOOD["turns"]]
        turns[index].update(change)
        return json.dumps({"turns": turns})

    assert len(parse_annotation_reply(json.dumps(GOOD), DIALOGUE)) == 3
    for reply, fragment in (
        (bad({"label": "hopelessness"}), "not a assistant label"),
        (bad({"strategy": None}), "is not a strategy"),
        (bad({"strategy": "question"}, 0), "user turns have no strategy"),
        (bad({"intensity": 2.5}), "intensity"),
        (bad({"intensity": True}), "intensity"),
        (bad({"valence": 1.5}), "outside -1..1"),
        (bad({"turn": 2}), "expected 1"),
        (bad({"role": "user"}), "is a assistant turn"),
        (json.dumps({"turns": [*GOOD["turns"], GOOD["turns"][0]]}), "4 entries for 3 turns"),
        ('{"turns": [], "turns": []}', "duplicate key"),
        ("[1, 2]", "'turns' list"),
    ):
        with pytest.raises(AnnotationParseError) as err:
            parse_annotation_reply(reply, DIALOGUE)
        assert fragment in str(err.value), (fragment, str(err.value))
    assert parse_annotation_reply(bad({"intensity": 2.0}), DIALOGUE)[1].intensity == 2


def test_own_template_leaves_the_judge_template_alone() -> None:
    messages = build_annotate_messages(DIALOGUE, label_set(), "es-MX")
    assert annotate_template_hash() != judge_template_hash()
    assert "EMPATH" not in messages[0]["content"] and "annotator" in messages[0]["content"]


def test_dry_run_counts_one_more_judge_call_per_transcript() -> None:
    from empath_gate.plan.build import build_plan
    from empath_gate.plan.estimate import estimate
    from empath_gate.settings.profile import resolve_profile
    from empath_gate.turns.labelset import shipped_instrument

    inst = shipped_instrument()
    plan = build_plan(inst, ("smoke",))
    judge = {}
    for mode in ("offline", "judge"):
        s = Settings(judge=RoleSettings(model="openai/gpt-4o-mini"), dynamics_annotator=mode)  # type: ignore[arg-type]
        roles = estimate(plan, inst, resolve_profile(s, env={})).roles
        judge[mode] = next(r for r in roles if r.role == "judge")
    assert judge["judge"].calls == judge["offline"].calls + len(plan.transcripts)
    assert judge["judge"].prompt_tokens > judge["offline"].prompt_tokens
    assert judge["judge"].cost_usd is not None and judge["offline"].cost_usd is not None
    assert judge["judge"].cost_usd > judge["offline"].cost_usd


def test_the_budget_applies_to_the_annotation_call(fake: FakeOpenAIServer, model: str) -> None:
    from empath_gate.errors import BudgetExceeded

    async def go() -> None:
        with ledger_session(1.0) as ledger:
            ledger.spent_usd = 1.0  # the run has spent its budget
            await annotate_with_judge(DIALOGUE, settings=_settings(fake, model))

    with pytest.raises(BudgetExceeded, match="no new judge call starts"):
        asyncio.run(go())
    assert fake.requests_for(model) == []
