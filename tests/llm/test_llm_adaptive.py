"""Adaptive concurrency: the AIMD arithmetic (pure), the gate, and the retry loop on a
rate-limited fake server."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from empath_gate.errors import ProviderError
from empath_gate.llm.adaptive import (
    DECREASE,
    PROBE_AFTER_WINDOWS,
    AdaptiveGate,
    AimdState,
    adaptive_session,
    gate_for,
    gates,
)
from empath_gate.llm.client import complete
from empath_gate.testing import FakeOpenAIServer


def _window(st: AimdState, now: float = 0.0) -> None:
    """Start and succeed one window's worth of calls (as many as the limit), one at a time."""
    for _ in range(st.limit):
        st.end(st.start(), "ok", now)


def test_state_starts_at_the_ceiling_and_never_exceeds_it() -> None:
    st = AimdState(ceiling=4)
    assert st.limit == 4
    for _ in range(5):
        _window(st)
    assert st.limit == 4 and st.increases == 0
    with pytest.raises(ValueError):
        AimdState(ceiling=0)


def test_429_halves_the_limit_once_per_window_not_per_429() -> None:
    st = AimdState(ceiling=16)
    tickets = [st.start() for _ in range(16)]
    for t in tickets[8:]:  # a burst of 8 429s from calls admitted together
        st.end(t, "throttled", now=1.0)
    assert st.limit == int(16 * DECREASE) == 8
    assert st.decreases == 1 and st.throttled == 8
    # a call admitted after the cut that is throttled cuts again
    st.end(st.start(), "throttled", now=1.1)
    assert st.limit == 4 and st.decreases == 2


def test_floor_is_one() -> None:
    st = AimdState(ceiling=2)
    for i in range(5):
        st.end(st.start(), "throttled", now=float(i))
    assert st.limit == 1 and st.decreases == 5


def test_additive_increase_one_per_window_of_successes() -> None:
    st = AimdState(ceiling=10, limit=3)
    for _ in range(2):  # a window of 3 successes short by one: no increase yet
        st.end(st.start(), "ok", 0.0)
    assert st.limit == 3
    st.end(st.start(), "ok", 0.0)
    assert st.limit == 4
    _window(st)
    assert st.limit == 5 and st.increases == 2
    st.end(st.start(), "failed", 0.0)  # other failures neither raise nor cut
    assert st.limit == 5 and st.decreases == 0 and st.in_flight == 0


def test_after_a_cut_it_recovers_fast_to_the_proven_level_holds_then_probes() -> None:
    st = AimdState(ceiling=16, limit=8)
    _window(st)  # 8 proven, limit 9
    assert (st.limit, st.proven) == (9, 8)
    st.end(st.start(), "throttled", now=0.0)  # 9 drew a 429
    assert st.limit == 4 and st.proven == 8
    for _ in range(4):  # one step per success back up to the proven level
        st.end(st.start(), "ok", 0.0)
    assert st.limit == 8
    for _ in range(PROBE_AFTER_WINDOWS):
        _window(st)
        assert st.limit == 8  # held at the proven level
    _window(st)
    assert st.limit == 9  # then probes one above


def test_a_429_at_or_below_the_proven_level_lowers_it() -> None:
    st = AimdState(ceiling=16, limit=8)
    _window(st)
    st.end(st.start(), "throttled", 0.0)  # cut at 9: proven stays 8
    for _ in range(4):
        st.end(st.start(), "ok", 0.0)
    assert st.limit == 8
    st.end(st.start(), "throttled", 0.0)  # the provider's capacity dropped: 8 is no longer proven
    assert st.limit == 4 and st.proven == 7


def test_retry_after_pauses_new_calls_until_then() -> None:
    st = AimdState(ceiling=4)
    t = st.start()
    assert st.can_start(10.0)
    st.end(t, "throttled", now=10.0, retry_after_s=2.5)
    assert st.paused_until == 12.5
    assert not st.can_start(12.4) and st.can_start(12.5)
    # an older, shorter Retry-After never shortens the pause
    st.end(st.start(), "throttled", now=11.0, retry_after_s=0.5)
    assert st.paused_until == 12.5


def test_gate_admits_at_most_the_limit_and_waits_out_the_pause() -> None:
    now = [0.0]

    async def scenario() -> tuple[int, int]:
        gate = AdaptiveGate("p m", 2, clock=lambda: now[0])
        a, b = await gate.acquire(), await gate.acquire()
        third = asyncio.ensure_future(gate.acquire())
        await asyncio.sleep(0.01)
        blocked = int(not third.done())
        gate.release(a, "ok")
        await asyncio.sleep(0.01)
        admitted = int(third.done())
        gate.release(b, "throttled", retry_after_s=0.05)
        gate.release(third.result(), "ok")
        now[0] = 0.0  # the fake clock stays put: the gate sleeps the pause itself
        ticket = asyncio.ensure_future(gate.acquire())
        await asyncio.sleep(0.01)
        assert not ticket.done()
        now[0] = 1.0  # time passes beyond the pause
        await ticket
        return blocked, admitted

    blocked, admitted = asyncio.run(scenario())
    assert blocked == 1 and admitted == 1


def test_gate_for_is_off_in_a_session_that_turns_it_off() -> None:
    async def scenario() -> tuple[bool, bool, int]:
        with adaptive_session(False):
            off = gate_for("p m", 4) is None
        on = gate_for("p m", 4)
        assert on is not None
        again = gate_for("p m", 6)
        return off, on is again, on.state.ceiling

    off, same, ceiling = asyncio.run(scenario())
    assert off and same and ceiling == 6


def _run_plan(server: FakeOpenAIServer, *, adaptive: bool, concurrency: int, calls: int) -> dict[str, Any]:
    settings = server.role_settings(
        "limited", concurrency=concurrency, max_retries=20, retry_base_delay_s=0.01, retry_max_delay_s=0.2
    )

    async def one(i: int) -> bool:
        try:
            await complete(
                "target", settings, [{"role": "user", "content": f"m{i}"}], seed=None, cache=None,
                cache_extra={},
            )
        except ProviderError:
            return False
        return True

    async def plan() -> dict[str, Any]:
        with adaptive_session(adaptive):
            ok = await asyncio.gather(*(one(i) for i in range(calls)))
        states = {k: g.state for k, g in gates().items()}
        return {"ok": sum(ok), "states": states}

    return asyncio.run(plan())


def test_aimd_on_a_limited_server_completes_with_fewer_429s_than_a_fixed_limit_twice_too_high() -> None:
    counts = {}
    for adaptive in (False, True):
        with FakeOpenAIServer(latency_s=0.1) as server:
            server.on("limited", "ok")
            server.limit("limited", rps=1000, concurrent=3)
            out = _run_plan(server, adaptive=adaptive, concurrency=6, calls=30)
            assert out["ok"] == 30  # every call completed
            counts[adaptive] = server.throttled
            if adaptive:
                (state,) = out["states"].values()
                assert state.decreases >= 1 and state.limit <= 6
            else:
                assert out["states"] == {}
    assert counts[False] > 0
    assert counts[True] < counts[False]
