"""The conversation engine end to end: litellm over real HTTP to the fake OpenAI server."""

from __future__ import annotations

import asyncio
import hashlib
import json
import random
import threading
from pathlib import Path

import pytest
from conv_support import AUDITOR, SCRIPT_EN, TARGET, make_persona, make_seed, model_settings, specs
from pydantic import SecretStr

from empath_gate.conversation.engine import (
    RunSpec,
    derive_seed,
    generate,
    generate_sync,
    read_transcript,
    summarize,
    transcript_path,
    write_transcript,
)
from empath_gate.conversation.transcript import Transcript
from empath_gate.llm.cache import CACHE_FORMAT
from empath_gate.testing import FakeOpenAIServer, FakeRequest, Fault, Reply


def echo_target(req: FakeRequest) -> str:
    return f"I hear you: {req.last_user[:30]}"


def test_scripted_transcript_records_every_turn(fake_openai: FakeOpenAIServer, tmp_path: Path) -> None:
    fake_openai.on(TARGET, echo_target)
    settings = model_settings(fake_openai, tmp_path, prompt="You are a careful support bot.")
    [t] = generate_sync(specs(1, 1, max_turns=8), settings=settings)
    assert t.status == "complete" and t.error is None
    assert t.auditor == "scripted" and t.target == f"openai/{TARGET}"
    assert t.target_prompt_hash == hashlib.sha256(b"You are a careful support bot.").hexdigest()
    assert [x.role for x in t.turns] == ["user", "assistant"] * 3  # script of 3 < max_turns 8
    assert [x.content for x in t.turns[::2]] == list(SCRIPT_EN)
    assert [x.source for x in t.turns] == ["script", "target"] * 3
    assert [x.index for x in t.turns] == list(range(6))
    bot = t.turns[1]
    assert bot.content == f"I hear you: {SCRIPT_EN[0][:30]}"
    assert (bot.model, bot.finish_reason, bot.system_fingerprint, bot.cache) == (
        TARGET,
        "stop",
        "fp_empath_fake",
        "miss",
    )
    assert bot.usage.prompt_tokens is not None and bot.usage.completion_tokens is not None
    assert bot.cost_usd is None and bot.started_at and bot.ended_at
    # the target sees its system prompt and the whole dialogue so far, in order
    last = fake_openai.requests[-1].messages
    assert last[0] == {"role": "system", "content": "You are a careful support bot."}
    assert [m["content"] for m in last[1:]] == [x.content for x in t.turns[:5]]


def test_max_turns_stops_the_loop(fake_openai: FakeOpenAIServer, tmp_path: Path) -> None:
    fake_openai.on(TARGET, "ok")
    [t] = generate_sync(specs(1, 1, max_turns=2), settings=model_settings(fake_openai, tmp_path))
    assert len(t.turns) == 4 and t.max_turns == 2
    assert len(fake_openai.requests) == 2


def test_seeds_differ_per_run_and_repeat_within_a_run(fake_openai: FakeOpenAIServer, tmp_path: Path) -> None:
    fake_openai.on(TARGET, "ok")
    fake_openai.on(AUDITOR, lambda r: f"still here {len(r.messages)}")
    settings = model_settings(fake_openai, tmp_path, auditor=True, base_seed=99)
    run_specs = specs(1, 3, max_turns=2)
    generate_sync(run_specs, settings=settings)
    by_role: dict[str, dict[int, set[int]]] = {TARGET: {}, AUDITOR: {}}
    for req in fake_openai.requests:
        body = req.body or {}
        conv = "seed-0-dana"
        seed = body["seed"]
        run = next(r for r in range(3) if derive_seed(99, conv, r) == seed)
        by_role[str(req.model)].setdefault(run, set()).add(seed)
    for model in (TARGET, AUDITOR):
        seeds = by_role[model]
        assert sorted(seeds) == [0, 1, 2]
        assert all(len(s) == 1 for s in seeds.values())  # one seed per run, on every turn
        assert len({next(iter(s)) for s in seeds.values()}) == 3  # never one seed for all runs
    assert derive_seed(99, "seed-0-dana", 0) != derive_seed(100, "seed-0-dana", 0)
    assert 0 <= derive_seed(0, "x", 0) < 2**31


def test_role_seed_overrides_base_seed(fake_openai: FakeOpenAIServer, tmp_path: Path) -> None:
    fake_openai.on(TARGET, "ok")
    settings = model_settings(fake_openai, tmp_path, base_seed=1)
    settings = settings.model_copy(
        update={"target_role": settings.target_role.model_copy(update={"seed": 555})}
    )
    generate_sync(specs(1, 1, max_turns=1), settings=settings)
    assert (fake_openai.requests[0].body or {})["seed"] == derive_seed(555, "seed-0-dana", 0)


def test_unchanged_plan_makes_zero_calls_on_rerun(fake_openai: FakeOpenAIServer, tmp_path: Path) -> None:
    fake_openai.on(TARGET, echo_target)
    fake_openai.on(AUDITOR, lambda r: f"still awake, message {len(r.messages)}")
    settings = model_settings(fake_openai, tmp_path, auditor=True)
    first = generate_sync(specs(2, 2, max_turns=3), settings=settings)
    n = len(fake_openai.requests)
    assert n == 2 * 2 * 3 * 2
    second = generate_sync(specs(2, 2, max_turns=3), settings=settings)
    assert len(fake_openai.requests) == n  # zero provider calls
    assert [[x.content for x in t.turns] for t in second] == [[x.content for x in t.turns] for t in first]
    assert all(x.cache == "hit" for t in second for x in t.turns)
    stats = summarize(second)
    assert (stats.calls, stats.cache_hits) == (0, 24)


def test_runs_are_independent_samples_in_the_cache(fake_openai: FakeOpenAIServer, tmp_path: Path) -> None:
    """Three runs of one conversation, seeds not sent: the run index alone keeps them apart."""
    fake_openai.on(TARGET, "same")
    settings = model_settings(fake_openai, tmp_path)
    settings = settings.model_copy(
        update={"target_role": settings.target_role.model_copy(update={"send_seed": False})}
    )
    transcripts = generate_sync(specs(1, 3, max_turns=3), settings=settings)
    assert len(fake_openai.requests) == 9  # no run is served from another run's cache entry
    assert all(x.cache == "miss" for t in transcripts for x in t.turns if x.role == "assistant")


def test_changing_the_system_prompt_reruns_target_and_downstream(
    fake_openai: FakeOpenAIServer, tmp_path: Path
) -> None:
    fake_openai.on(TARGET, lambda r: f"{r.messages[0]['content']} Reply to {r.last_user[:15]}")
    fake_openai.on(AUDITOR, lambda r: f"hmm, {r.last_user[:40]}")
    plan = specs(1, 1, max_turns=3)
    v1 = model_settings(fake_openai, tmp_path, auditor=True, prompt="Prompt version one.")
    generate_sync(plan, settings=v1)
    assert len(fake_openai.requests) == 6
    generate_sync(plan, settings=v1)
    assert len(fake_openai.requests) == 6
    v2 = model_settings(fake_openai, tmp_path, auditor=True, prompt="Prompt version two.")
    [t] = generate_sync(plan, settings=v2)
    new = fake_openai.requests[6:]
    # every target call re-runs; the auditor's first message (before any target reply) is
    # cached, its later messages depend on the new replies and re-run
    assert [r.model for r in new] == [TARGET, AUDITOR, TARGET, AUDITOR, TARGET]
    assert [x.cache for x in t.turns] == ["hit", "miss", "miss", "miss", "miss", "miss"]
    assert t.target_prompt_hash == hashlib.sha256(b"Prompt version two.").hexdigest()


def test_refresh_mode_calls_again(fake_openai: FakeOpenAIServer, tmp_path: Path) -> None:
    fake_openai.on(TARGET, "ok")
    settings = model_settings(fake_openai, tmp_path)
    generate_sync(specs(1, 1), settings=settings)
    generate_sync(specs(1, 1), settings=settings.model_copy(update={"cache_mode": "refresh"}))
    assert len(fake_openai.requests) == 6
    generate_sync(specs(1, 1), settings=settings.model_copy(update={"cache_mode": "off"}))
    assert len(fake_openai.requests) == 9


def test_budget_stops_new_calls_and_new_transcripts(fake_openai: FakeOpenAIServer, tmp_path: Path) -> None:
    model = "gpt-4o-mini"  # priced by litellm's cost map, served by the fake
    fake_openai.on(model, Reply("ok", usage={"prompt_tokens": 100_000, "completion_tokens": 10_000}))
    settings = model_settings(
        fake_openai,
        tmp_path,
        target=f"openai/{model}",
        max_cost_usd=0.01,
        concurrency=1,
        target_role=fake_openai.role_settings(model),
    )
    lines: list[str] = []
    transcripts = generate_sync(specs(3, 1, max_turns=3), settings=settings, progress=lines.append)
    # the budget is enforced per call: the first call spent more than the budget, so the
    # first transcript's second target call never started, nor did the second transcript's
    # first (it was open, waiting for the one call slot: its scripted user turn is kept), and
    # the third transcript was never opened
    assert [t.status for t in transcripts] == ["budget", "budget", "budget"]
    first = transcripts[0]
    assert [t.role for t in first.turns] == ["user", "assistant", "user"]
    assert first.cost_usd >= 0.01 and "stopped: target:" in (first.error or "")
    assert first.events[-1].kind == "budget"
    waiting = transcripts[1]
    assert [t.role for t in waiting.turns] == ["user"] and "stopped: target:" in (waiting.error or "")
    stopped = transcripts[2]
    assert stopped.turns == () and "max_cost_usd" in (stopped.error or "")
    assert stopped.events[0].kind == "budget" and stopped.events[0].detail["max_cost_usd"] == 0.01
    assert len(fake_openai.requests) == 1
    assert "budget reached: 1 not started" in lines[-1]
    assert lines[-1].startswith("empath-gate: transcripts 3/3 · 1 calls, 0 cached · $")


def test_progress_line_counts_transcripts_calls_and_unpriced(
    fake_openai: FakeOpenAIServer, tmp_path: Path
) -> None:
    fake_openai.on(TARGET, "ok")
    lines: list[str] = []
    generate_sync(
        specs(2, 2, max_turns=2), settings=model_settings(fake_openai, tmp_path), progress=lines.append
    )
    assert len(lines) == 5  # one per transcript, then the final totals once every call settled
    assert lines[-1] == "empath-gate: transcripts 4/4 · 8 calls, 0 cached · ≥ $0.0000, 8 calls unpriced"
    assert all("transcripts" in line for line in lines)


def test_infrastructure_error_ends_only_that_transcript(
    fake_openai: FakeOpenAIServer, tmp_path: Path
) -> None:
    def target(req: FakeRequest) -> str | Fault:
        return Fault.auth() if "sister" in req.last_user else "ok"

    fake_openai.on(TARGET, target)
    other = make_seed("other", script=("hello there", "all good now", "thanks, bye"))
    plan = [*specs(1, 1, max_turns=3), RunSpec.build("smoke", other, make_persona(), 0)]
    broken, fine = generate_sync(plan, settings=model_settings(fake_openai, tmp_path))
    assert broken.status == "error"
    assert broken.error is not None and broken.error.startswith("target: authentication")
    assert len(broken.turns) == 3  # user, assistant, user whose reply failed
    assert broken.events[-1].kind == "error" and broken.events[-1].detail["phase"] == "target"
    assert fine.status == "complete" and len(fine.turns) == 6


def test_target_content_filter_is_an_event_and_the_conversation_goes_on(
    fake_openai: FakeOpenAIServer, tmp_path: Path
) -> None:
    fake_openai.script(TARGET, "first reply", Fault.content_filter(), "third reply")
    [t] = generate_sync(specs(1, 1), settings=model_settings(fake_openai, tmp_path))
    assert t.status == "complete" and len(t.turns) == 6
    filtered = t.turns[3]
    assert filtered.content == "" and filtered.finish_reason == "content_filter"
    assert [e.kind for e in filtered.events] == ["filtered"] and filtered.events[0].role == "target"
    assert t.target_filtered == 1
    # the empty reply is never sent back as content: the two user turns around it merge
    last = fake_openai.requests[-1].messages
    assert all(str(m["content"]).strip() for m in last)
    assert last[-1] == {"role": "user", "content": f"{SCRIPT_EN[1]}\n\n{SCRIPT_EN[2]}"}


def test_truncated_target_reply_is_recorded(fake_openai: FakeOpenAIServer, tmp_path: Path) -> None:
    fake_openai.script(TARGET, Fault.truncated("I hear how"), "b", "c")
    [t] = generate_sync(specs(1, 1), settings=model_settings(fake_openai, tmp_path))
    assert (t.turns[1].content, t.turns[1].finish_reason) == ("I hear how", "length")


def test_auditor_content_filter_is_an_infrastructure_error(
    fake_openai: FakeOpenAIServer, tmp_path: Path
) -> None:
    # filtered on the reply and on the one re-ask: no auditor turn, an infrastructure error
    fake_openai.script(AUDITOR, "can't sleep again", Fault.content_filter(), Fault.content_filter())
    fake_openai.on(TARGET, "ok")
    [t] = generate_sync(specs(1, 1), settings=model_settings(fake_openai, tmp_path, auditor=True))
    assert t.status == "error" and (t.error or "").startswith("auditor: filtered")
    assert [e.kind for e in t.events] == ["filtered", "error"]
    assert t.events[0].role == "auditor"
    assert len(t.turns) == 2
    assert t.target_filtered == 0
    assert len(fake_openai.requests_for(AUDITOR)) == 3


def test_an_auditor_content_filter_is_asked_again_with_a_new_seed(
    fake_openai: FakeOpenAIServer, tmp_path: Path
) -> None:
    fake_openai.script(AUDITOR, Fault.content_filter(), "can't sleep again")
    fake_openai.on(TARGET, "ok")
    settings = model_settings(fake_openai, tmp_path, auditor=True)
    [t] = generate_sync(specs(1, 1, max_turns=1), settings=settings)
    assert t.status == "complete" and t.turns[0].content == "can't sleep again"
    first, again = fake_openai.requests_for(AUDITOR)
    assert (again.body or {}).get("seed") != (first.body or {}).get("seed")
    filtered = [e for e in t.turns[0].events if e.kind == "filtered"]
    assert [(e.role, e.detail["outcome"]) for e in filtered] == [("auditor", "retried")]


def test_retries_under_concurrency_record_each_run_exactly_once(
    fake_openai: FakeOpenAIServer, tmp_path: Path
) -> None:
    rng = random.Random(3)
    lock = threading.Lock()

    def flaky(req: FakeRequest) -> str | Fault | Reply:
        with lock:
            roll = rng.random()
        if roll < 0.2:
            return Fault.rate_limit()
        if roll < 0.3:
            return Fault.server_error(502)
        return Reply(f"ok {req.last_user[:10]}", latency_s=rng.random() * 0.02)

    fake_openai.on(TARGET, flaky)
    plan = specs(5, 4, max_turns=3)
    settings = model_settings(fake_openai, tmp_path, concurrency=8, max_retries=10)
    transcripts = generate_sync(plan, settings=settings)
    assert [t.transcript_id for t in transcripts] == [s.transcript_id for s in plan]
    assert all(t.status == "complete" and len(t.turns) == 6 for t in transcripts)
    retries = sum(1 for t in transcripts for x in t.turns for e in x.events if e.kind == "retry")
    assert retries > 0
    assert len(fake_openai.requests) == 5 * 4 * 3 + retries


def test_transcripts_written_as_jsonl_one_file_per_run(fake_openai: FakeOpenAIServer, tmp_path: Path) -> None:
    fake_openai.on(TARGET, "Te escucho, aquí estoy.")
    out = tmp_path / "transcripts"
    plan = specs(1, 2, locale="es-MX")
    transcripts = generate_sync(plan, settings=model_settings(fake_openai, tmp_path), transcripts_dir=out)
    files = sorted(out.rglob("*.jsonl"))
    assert [f.relative_to(out).as_posix() for f in files] == [
        "smoke/seed-0__dana__r0.jsonl",
        "smoke/seed-0__dana__r1.jsonl",
    ]
    text = files[0].read_text(encoding="utf-8")
    assert "aquí" in text and "\\u00ed" not in text
    lines = [json.loads(line) for line in text.splitlines()]
    assert lines[0]["type"] == "header" and lines[0]["transcript_id"] == "seed-0-dana-r0"
    assert [rec["type"] for rec in lines[1:]] == ["turn"] * 6
    assert read_transcript(files[0]) == transcripts[0]
    again = write_transcript(transcripts[1], tmp_path / "other")
    assert again == transcript_path(tmp_path / "other", transcripts[1])
    assert read_transcript(again) == transcripts[1]


def test_read_transcript_rejects_bad_files(tmp_path: Path) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"type": "turn"}\n', encoding="utf-8")
    with pytest.raises(ValueError, match=r"bad\.jsonl:1"):
        read_transcript(bad)
    bad.write_text("", encoding="utf-8")
    with pytest.raises(ValueError, match="no header"):
        read_transcript(bad)


def test_keys_are_never_written(
    fake_openai: FakeOpenAIServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    planted = "sk-planted-9f8e7d6c5b4a3210"
    monkeypatch.setenv("OPENAI_API_KEY", planted)
    monkeypatch.setenv("ANTHROPIC_API_KEY", planted)
    fake_openai.on(
        TARGET,
        lambda r: Fault.auth(f"Incorrect API key provided: {planted}") if "sister" in r.last_user else "ok",
    )
    fake_openai.on(AUDITOR, lambda r: "i can't sleep")
    settings = model_settings(
        fake_openai,
        tmp_path,
        auditor=True,
        target_role=fake_openai.role_settings(TARGET, api_key=SecretStr(planted)),
    )
    out = tmp_path / "transcripts"
    transcripts = generate_sync(specs(1, 2), settings=settings, transcripts_dir=out)
    assert any(t.status == "complete" for t in transcripts) or any(t.status == "error" for t in transcripts)
    written = [p for p in tmp_path.rglob("*") if p.is_file()]
    assert any(p.suffix == ".jsonl" for p in written)
    assert any(p.parent.parent.name == CACHE_FORMAT for p in written)
    for p in written:
        assert planted not in p.read_text(encoding="utf-8"), p
    assert planted not in json.dumps(settings.public_dict())
    assert all(planted not in t.model_dump_json() for t in transcripts)


def test_duplicate_ids_and_running_loop_are_rejected(fake_openai: FakeOpenAIServer, tmp_path: Path) -> None:
    settings = model_settings(fake_openai, tmp_path)
    plan = specs(1, 1)
    with pytest.raises(ValueError, match="duplicate"):
        generate_sync(plan + plan, settings=settings)

    async def inside() -> None:
        generate_sync(plan, settings=settings)

    with pytest.raises(RuntimeError, match="await generate"):
        asyncio.run(inside())


def test_run_spec_contract() -> None:
    [spec] = specs(1, 1)
    assert (spec.conversation_id, spec.transcript_id, spec.max_turns) == ("seed-0-dana", "seed-0-dana-r0", 3)
    es = specs(1, 1, locale="es-MX")[0]
    with pytest.raises(ValueError, match="is es-MX but persona dana is en-US"):
        RunSpec.build("smoke", es.seed, spec.persona, 0)
    with pytest.raises(ValueError, match="surprise"):
        RunSpec(**{**spec.model_dump(), "surprise": 1})


def test_generate_is_awaitable_and_summarize_counts(fake_openai: FakeOpenAIServer, tmp_path: Path) -> None:
    fake_openai.script(TARGET, "a", Fault.content_filter(), "c")
    transcripts: list[Transcript] = asyncio.run(
        generate(specs(1, 1), settings=model_settings(fake_openai, tmp_path))
    )
    stats = summarize(transcripts)
    assert (stats.calls, stats.unpriced_calls, stats.target_filtered, stats.errors) == (3, 3, 1, 0)
    assert stats.cost_text() == "≥ $0.0000, 3 calls unpriced"


def test_the_progress_line_tells_the_time_left_at_the_pace_so_far() -> None:
    from empath_gate.conversation.plan_stats import PlanStats, time_left_text

    assert time_left_text(0, 10, 30.0) is None  # no pace yet
    assert time_left_text(10, 10, 30.0) is None  # done
    assert time_left_text(3, 10, None) is None
    assert time_left_text(5, 10, 20.0) == "about 20 s left"
    assert time_left_text(2, 10, 60.0) == "about 4 min left"
    assert time_left_text(1, 100, 150.0) == "about 4 h 8 min left"
    line = PlanStats(total=4, done=1).line(elapsed_s=10.0)
    assert line.endswith(" · about 30 s left")
    assert "left" not in PlanStats(total=4, done=1).line()
    # runs sequential gating stopped leave the total and the time left
    settled = PlanStats(total=10, done=2, stopped=4).line(elapsed_s=20.0)
    assert "transcripts 2/6" in settled and "4 runs stopped early (settled)" in settled
    assert settled.endswith(" · about 40 s left")
