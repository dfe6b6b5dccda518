"""The scheduler's parts: the driver (window, spec order, stop rule), call slots per role and
provider, and the budget under call-level concurrency."""

from __future__ import annotations

import asyncio
import threading
import time
from pathlib import Path

import pytest
from conv_support import TARGET, model_settings, specs

from empath_gate.conversation.engine import generate_sync
from empath_gate.conversation.runspec import RunSpec
from empath_gate.conversation.scheduler import call_slots, drive, open_window
from empath_gate.llm.slots import CallSlots, Ticket, call_slot, slot_role, slot_session, ticket_session
from empath_gate.testing import FakeOpenAIServer
from empath_gate.testing.fake_openai import FakeRequest, Reply


def test_the_driver_keeps_at_most_the_window_open_and_answers_in_spec_order() -> None:
    plan = specs(5, 2)
    open_now, peak = 0, 0

    async def step(spec: RunSpec) -> str:
        nonlocal open_now, peak
        open_now += 1
        peak = max(peak, open_now)
        await asyncio.sleep(0.001 * (len(plan) - plan.index(spec)))  # later specs finish first
        open_now -= 1
        return spec.transcript_id

    out = asyncio.run(drive(plan, step, window=3))
    assert out == [s.transcript_id for s in plan]
    assert peak == 3


def test_a_stop_rule_makes_runs_sequential_and_stops_the_rest() -> None:
    plan = specs(2, 4)
    started: list[tuple[str, int]] = []

    async def step(spec: RunSpec) -> tuple[str, int]:
        started.append((spec.conversation_id, spec.run))
        await asyncio.sleep(0)
        return spec.conversation_id, spec.run

    def stop(conversation_id: str, done: list[tuple[str, int]]) -> str | None:
        assert [r for _, r in done] == list(range(len(done)))
        return "settled" if len(done) == 3 else None

    out = asyncio.run(drive(plan, step, window=8, stop=stop, stopped=lambda s, why: (why, s.run)))
    assert out[3] == ("settled", 3) and out[7] == ("settled", 3)
    assert sorted(started) == sorted((s.conversation_id, s.run) for s in plan if s.run < 3)
    for c in {s.conversation_id for s in plan}:
        assert [r for cid, r in started if cid == c] == [0, 1, 2]
    with pytest.raises(ValueError, match="stopped"):
        asyncio.run(drive(plan, step, window=2, stop=stop))


def test_call_slots_hold_each_role_and_the_total_apart() -> None:
    slots = CallSlots({"target": 2, "judge": 1, "annotator": 1}, total=3)

    async def call(role: str, annotator: bool = False) -> None:
        if annotator:
            with slot_role("annotator"):
                async with call_slot(role):
                    await asyncio.sleep(0.01)
        else:
            async with call_slot(role):
                await asyncio.sleep(0.01)

    async def main() -> None:
        with slot_session(slots):
            await asyncio.gather(*(call("target") for _ in range(6)), *(call("judge") for _ in range(3)),
                                 *(call("judge", annotator=True) for _ in range(2)))

    asyncio.run(main())
    assert slots.peak == {"target": 2, "judge": 1, "annotator": 1}
    assert slots.peak_total <= 3 and slots.calls == {"target": 6, "judge": 3, "annotator": 2}
    with pytest.raises(ValueError):
        CallSlots({"target": 0})


def test_settings_give_the_window_and_the_limits(tmp_path: Path) -> None:
    with FakeOpenAIServer() as server:
        settings = model_settings(server, tmp_path, concurrency=5, provider_concurrency={"openai": 3})
    assert open_window(settings) == 10
    slots = call_slots(settings)
    assert slots.total == 5 and slots.role_limits["annotator"] == settings.judge.concurrency
    assert call_slots(settings.model_copy(update={"annotator_concurrency": 2})).role_limits["annotator"] == 2
    assert slots.model_limit("openai/x", 8) == 8 and slots.provider_semaphore("anthropic/y") is None
    with pytest.raises(ValueError, match="provider_concurrency"):
        settings.model_validate({**settings.model_dump(), "provider_concurrency": {"openai": 0}})


def _tracking(server: FakeOpenAIServer, hold_s: float) -> dict[str, int]:
    seen = {"now": 0, "peak": 0}
    lock = threading.Lock()

    def reply(_req: FakeRequest) -> str:
        with lock:
            seen["now"] += 1
            seen["peak"] = max(seen["peak"], seen["now"])
        time.sleep(hold_s)
        with lock:
            seen["now"] -= 1
        return "ok"

    server.on(TARGET, reply)
    return seen


def test_a_provider_limit_caps_every_model_of_the_provider(
    fake_openai: FakeOpenAIServer, tmp_path: Path
) -> None:
    seen = _tracking(fake_openai, 0.05)
    settings = model_settings(fake_openai, tmp_path, concurrency=6, provider_concurrency={"openai": 2},
                              target_role=fake_openai.role_settings(TARGET, concurrency=6))
    transcripts = generate_sync(specs(4, 2, max_turns=2), settings=settings)
    assert {t.status for t in transcripts} == {"complete"}
    assert 1 <= seen["peak"] <= 2


def test_the_run_limit_caps_calls_not_transcripts(fake_openai: FakeOpenAIServer, tmp_path: Path) -> None:
    seen = _tracking(fake_openai, 0.05)
    settings = model_settings(fake_openai, tmp_path, concurrency=3,
                              target_role=fake_openai.role_settings(TARGET, concurrency=8))
    transcripts = generate_sync(specs(6, 2, max_turns=2), settings=settings)
    assert {t.status for t in transcripts} == {"complete"} and len(fake_openai.requests) == 24
    assert 2 <= seen["peak"] <= 3


def test_the_budget_overshoots_by_at_most_one_call_per_slot(
    fake_openai: FakeOpenAIServer, tmp_path: Path
) -> None:
    model = "gpt-4o-mini"  # priced by litellm's cost map; every call costs more than the budget
    fake_openai.on(model, Reply("ok", usage={"prompt_tokens": 100_000, "completion_tokens": 10_000}))
    settings = model_settings(
        fake_openai, tmp_path, target=f"openai/{model}", max_cost_usd=0.01, concurrency=3,
        target_role=fake_openai.role_settings(model, concurrency=3),
    )
    transcripts = generate_sync(specs(8, 1, max_turns=3), settings=settings)
    assert {t.status for t in transcripts} == {"budget"}
    # the calls in flight when the first reply settled were admitted; none after it
    assert 1 <= len(fake_openai.requests) <= 3
    assert sum(1 for t in transcripts if not t.turns) >= 8 - 2 * 3


def test_a_call_inside_a_call_takes_no_second_slot() -> None:
    slots = CallSlots({"target": 1}, total=1)

    async def main() -> None:
        with slot_session(slots):
            async with call_slot("target"), call_slot("target"):  # the inner one: no second slot
                await asyncio.sleep(0)

    asyncio.run(asyncio.wait_for(main(), 5))
    assert slots.calls == {"target": 1}


def test_a_freed_slot_goes_to_the_oldest_then_to_the_longest_transcript() -> None:
    slots = CallSlots({}, total=1)
    served: list[int] = []

    async def call(t: Ticket) -> None:
        with ticket_session(t):
            async with call_slot("target"):
                served.append(t.order)
                await asyncio.sleep(0)

    async def main(tickets: list[Ticket]) -> None:
        go = asyncio.Event()

        async def hold() -> None:  # holds the one slot while the others queue
            async with call_slot("target"):
                await go.wait()

        with slot_session(slots):
            holder = asyncio.create_task(hold())
            await asyncio.sleep(0)
            tasks = [asyncio.create_task(call(t)) for t in tickets]
            await asyncio.sleep(0.01)
            go.set()
            await asyncio.gather(holder, *tasks)

    tickets = [Ticket(2, remaining=1), Ticket(0, remaining=1), Ticket(1, remaining=6)]
    asyncio.run(main(tickets))
    assert served == [0, 1, 2]  # transcripts still to open: the oldest first
    served.clear()
    slots.all_open = True
    asyncio.run(main(tickets))
    assert served == [1, 0, 2]  # every transcript open: most turns ahead first, then the oldest
