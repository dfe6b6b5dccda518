"""Voice suites on the conversation side: the break detector and the auditor prompt accept the
declared cues only there, and ``target_cues = "strip"`` keeps them from the target and its
cache key while the transcript keeps them (LLM auditor and model target over real HTTP)."""

from __future__ import annotations

from pathlib import Path

import pytest
from conv_support import AUDITOR, TARGET, make_persona, make_seed, model_settings, specs

from empath_gate.conversation.auditor import TEMPLATE_VERSION, render_prompt, template_version
from empath_gate.conversation.breaks import detect_break
from empath_gate.conversation.engine import RunSpec, generate_sync
from empath_gate.instrument.models import Cue
from empath_gate.testing import FakeOpenAIServer

PERSONA = make_persona()
SEED = make_seed()
CUES = (
    Cue(id="sigh", token="[sigh]", labels={"es-MX": "suspiro", "en-US": "sigh"},
        definition="An audible long breath out."),
    Cue(id="crying", token="[crying]", labels={"es-MX": "llanto", "en-US": "crying"},
        definition="Weeping heard while speaking."),
    Cue(id="long-pause", token="[long pause]", labels={"es-MX": "pausa larga", "en-US": "long pause"},
        definition="A silence clearly longer than usual."),
)


@pytest.mark.parametrize("text", ["[sigh] i guess", "i'm fine [long pause] i'm fine", "[crying]",
                                  "no sé [long pause] ya no puedo [crying]"])
def test_declared_cues_pass_in_a_voice_suite_and_break_outside(text: str) -> None:
    assert detect_break(text, persona=PERSONA, seed=SEED, cues=CUES) is None
    assert detect_break(text, persona=PERSONA, seed=SEED) == "narration"


@pytest.mark.parametrize("text", ["*sighs* i guess", "[sobbing] i can't", "[sigh] *cries*",
                                  "[long pause] (pauses)", "She sighs. [sigh] fine"])
def test_other_narration_still_breaks_in_a_voice_suite(text: str) -> None:
    assert detect_break(text, persona=PERSONA, seed=SEED, cues=CUES) == "narration"


def test_other_breaks_are_still_seen_behind_a_cue() -> None:
    assert detect_break("[sigh] How can I help you today?", persona=PERSONA, seed=SEED,
                        cues=CUES) == "assistant_voice"


def test_the_voice_prompt_lists_the_declared_cues_and_only_there() -> None:
    text_prompt = render_prompt(SEED, PERSONA, turn=1, max_turns=5)
    voice_prompt = render_prompt(SEED, PERSONA, turn=1, max_turns=5, cues=CUES)
    assert "no brackets, no asterisks" in text_prompt and "[long pause]" not in text_prompt
    assert "[sigh], [crying], [long pause]" in voice_prompt and "spoken call" in voice_prompt
    assert "Do not describe actions or feelings from outside" not in voice_prompt
    assert "{{" not in voice_prompt
    # the text prompt (and so every existing auditor cache entry) is unchanged
    assert template_version() == TEMPLATE_VERSION != template_version(CUES)


def _voice_specs() -> list[RunSpec]:
    return [s.model_copy(update={"cues": CUES}) for s in specs(1, 1, max_turns=2)]


@pytest.mark.parametrize("mode", ["keep", "strip"])
def test_target_cues_keep_or_strip(fake_openai: FakeOpenAIServer, tmp_path: Path, mode: str) -> None:
    replies = iter(['{"message": "[sigh] i\'m fine [long pause] really", "feeling_0_100": 30}',
                    '{"message": "[crying] no i\'m not crying", "feeling_0_100": 20}'])
    fake_openai.on(AUDITOR, lambda req: next(replies))
    fake_openai.on(TARGET, "It sounds like a lot.")
    settings = model_settings(fake_openai, tmp_path, auditor=True, target_cues=mode)
    [t] = generate_sync(_voice_specs(), settings=settings)
    users = [x for x in t.turns if x.role == "user"]
    # the transcript keeps what the person said, cues included, and no break was recorded
    assert [u.content for u in users] == ["[sigh] i'm fine [long pause] really", "[crying] no i'm not crying"]
    assert all(u.source == "auditor" and not u.events for u in users)
    seen = [str(m["content"]) for r in fake_openai.requests_for(TARGET) for m in r.messages
            if m["role"] == "user"]
    assert len(fake_openai.requests_for(TARGET)) == 2
    if mode == "strip":
        assert seen[-2:] == ["i'm fine really", "no i'm not crying"]
        assert not any(c.token in s for s in seen for c in CUES)
    else:
        assert seen[-2:] == [u.content for u in users]


def test_strip_changes_the_target_cache_key_only_through_the_messages(
    fake_openai: FakeOpenAIServer, tmp_path: Path
) -> None:
    fake_openai.on(AUDITOR, "[sigh] fine")
    fake_openai.on(TARGET, "ok")
    strip = model_settings(fake_openai, tmp_path, auditor=True, target_cues="strip")
    generate_sync(_voice_specs(), settings=strip)
    before = len(fake_openai.requests_for(TARGET))
    # a text run whose auditor says the same words without the cue hits the strip run's cache
    fake_openai.on(AUDITOR, "fine")
    plain = [s.model_copy(update={"cues": ()}) for s in _voice_specs()]
    [t] = generate_sync(plain, settings=model_settings(fake_openai, tmp_path, auditor=True))
    assert len(fake_openai.requests_for(TARGET)) == before
    assert all(x.cache == "hit" for x in t.turns if x.role == "assistant")
