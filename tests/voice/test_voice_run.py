"""The shipped ``voice`` suite end to end: it validates, runs offline through the CLI, a target
set to ``target_cues = "strip"`` never receives a cue token while the transcripts, the HTML
report and the judge prompt keep them."""

from __future__ import annotations

import asyncio
import importlib
import os
import sys
import textwrap
from pathlib import Path

import pytest

from empath_gate.cli import main as cli_main
from empath_gate.conversation.engine import read_transcript
from empath_gate.instrument.loader import load_instrument
from empath_gate.judging.llm_judge import judge_transcript
from empath_gate.settings import Settings
from empath_gate.testing import FakeOpenAIServer

BOT = "voice_recording_bot"
BOT_SOURCE = textwrap.dedent('''
    RECEIVED = []

    def reply(messages, conversation_id):
        RECEIVED.append((conversation_id, [dict(m) for m in messages]))
        return "Te escucho. Estoy aqui contigo." if "-mx-" in conversation_id else "I hear you. I'm here."
''')


@pytest.fixture(scope="module")
def voice_run(tmp_path_factory: pytest.TempPathFactory
              ) -> tuple[int, Path, list[tuple[str, list[dict[str, str]]]]]:
    """``empath-gate run --suite voice --offline --runs 1 --target-cues strip`` with a recording
    callable target (once per module); returns the exit code, the results folder and what the
    target received."""
    tmp_path = tmp_path_factory.mktemp("voice")
    (tmp_path / f"{BOT}.py").write_text(BOT_SOURCE, encoding="utf-8")
    with pytest.MonkeyPatch.context() as mp:
        for name in [n for n in os.environ if n.startswith("EMPATH_")]:
            mp.delenv(name)
        mp.chdir(tmp_path)
        mp.syspath_prepend(str(tmp_path))
        sys.modules.pop(BOT, None)
        code = cli_main(["run", "--suite", "voice", "--offline", "--runs", "1", "--no-cache",
                         "--target", f"py:{BOT}:reply", "--target-cues", "strip",
                         "--results", "out/results.json"])
        received = importlib.import_module(BOT).RECEIVED
        sys.modules.pop(BOT, None)
    return code, tmp_path / "out", received


def test_the_voice_suite_validates_and_has_its_seeds() -> None:
    inst = load_instrument()
    suite = inst.suite("voice")
    assert suite.voice
    voice = [s for s in inst.seeds if "voice" in s.tags]
    assert len(voice) >= 12
    assert min(sum(s.locale == loc for s in voice) for loc in ("es-MX", "en-US")) >= 5
    vocab = inst.cue_vocabulary()
    assert all(any(vocab.find(t) for t in s.script) for s in voice)


def test_offline_voice_run_strips_cues_for_the_target_and_keeps_them_elsewhere(
    voice_run: tuple[int, Path, list[tuple[str, list[dict[str, str]]]]],
) -> None:
    code, out, received = voice_run
    assert code in (0, 1)  # a gate verdict, neither a usage nor an infrastructure error
    inst = load_instrument()
    vocab = inst.cue_vocabulary()
    tokens = [c.token for c in inst.cues]
    # the target answered every user turn of the 12 scripts and never saw a cue token
    conversations = {cid for cid, _ in received}
    assert len(conversations) == 12
    user_texts = [m["content"] for _, msgs in received for m in msgs if m["role"] == "user"]
    assert user_texts and not any(t in text for text in user_texts for t in tokens)
    # ... while the transcripts keep what the person "said", cues included
    transcripts = [read_transcript(p) for p in sorted((out / "transcripts").rglob("*.jsonl"))]
    assert len(transcripts) == 12
    kept = [t for tr in transcripts for t in tr.turns if t.role == "user" and vocab.find(t.content)]
    assert len(kept) >= 12
    # and the HTML shows cues as badges with their display labels, never as typed tokens
    html = (out / "report.html").read_text(encoding="utf-8")
    viewer = html.split('id="transcript-viewer"', 1)[1]
    assert 'class="badge b-cue cue" data-cue="long-pause"' in viewer
    assert ">pausa larga</span>" in viewer and ">long pause</span>" in viewer
    assert not any(t in viewer for t in tokens)


def test_voice_cues_reach_the_judge_prompt(
    voice_run: tuple[int, Path, list[tuple[str, list[dict[str, str]]]]],
) -> None:
    _, out, _ = voice_run
    inst = load_instrument()
    [path] = list((out / "transcripts").rglob("vc-us-im-fine-flat-voice_*.jsonl"))
    transcript = read_transcript(path)
    seed = inst.seed(transcript.seed_id)
    with FakeOpenAIServer() as fake:
        fake.on("voice-judge", "no verdict here")
        settings = Settings(judge=fake.role_settings("voice-judge", max_retries=0, max_tokens=500))
        verdicts = asyncio.run(judge_transcript(
            transcript, seed, seed.primary_metrics, instrument=inst, settings=settings, cache=None,
        ))
        prompts = ["\n".join(str(m["content"]) for m in r.messages) for r in fake.requests_for("voice-judge")]
    assert prompts and all("[long pause]" in p and "[flat voice]" in p for p in prompts)
    # an unparseable reply is a visible judge failure, never a score
    assert all(v.status == "judge_failure" for v in verdicts)
    # in place, as the person said it
    assert "[long pause] I've been thinking about killing myself" in prompts[0]


def test_voice_seeds_and_cues_change_no_text_suite_hash() -> None:
    from empath_gate.results.suite_hash import suite_content_hashes

    inst = load_instrument()
    text_only = inst.model_copy(update={
        "seeds": tuple(s for s in inst.seeds if "voice" not in s.tags),
        "suites": tuple(s for s in inst.suites if not s.voice),
        "cues": (),
    })
    for suite in text_only.suites:
        assert suite_content_hashes(inst, suite.id, "strict") == \
            suite_content_hashes(text_only, suite.id, "strict"), suite.id
