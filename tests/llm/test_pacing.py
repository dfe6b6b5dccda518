"""Pacing of call starts (empath_gate.llm.pacing): pure decisions with injected clocks."""

from __future__ import annotations

import asyncio

import pytest

from empath_gate.llm.pacing import PACE_ALPHA, PACE_SAMPLE_CAP_S, Pacer, next_estimate, pace_delay
from empath_gate.llm.slots import CallSlots


def test_estimate_moves_towards_the_sample_by_alpha() -> None:
    assert next_estimate(0.0, 0.004) == pytest.approx(PACE_ALPHA * 0.004)
    assert next_estimate(0.004, 0.004) == pytest.approx(0.004)
    e = 0.0
    for _ in range(200):
        e = next_estimate(e, 0.005)
    assert e == pytest.approx(0.005, rel=1e-3)


def test_estimate_clamps_each_sample() -> None:
    # a long gap (other work between two calls) counts as the cap; a clock step back as 0
    assert next_estimate(0.0, 10.0) == pytest.approx(PACE_ALPHA * PACE_SAMPLE_CAP_S)
    assert next_estimate(0.004, -1.0) == pytest.approx(0.004 * (1 - PACE_ALPHA))
    e = 0.0
    for _ in range(500):
        e = next_estimate(e, 10.0)
    assert e <= PACE_SAMPLE_CAP_S


def test_a_call_alone_is_never_delayed() -> None:
    assert pace_delay(10.0, 9.0, 0.005) == (0.0, pytest.approx(10.005))
    assert pace_delay(10.0, float("-inf"), 0.005)[0] == 0.0


def test_a_burst_leaves_one_interval_apart_in_order() -> None:
    next_at, delays = float("-inf"), []
    for _ in range(5):
        d, next_at = pace_delay(3.0, next_at, 0.004)
        delays.append(d)
    assert delays == pytest.approx([0.0, 0.004, 0.008, 0.012, 0.016])


def test_pacer_never_delays_calls_that_arrive_no_faster_than_their_cpu() -> None:
    """A provider that answers at once: each call costs ``c`` of loop CPU and as much wall, and
    the next call asks when the previous one is done; the pacer never delays one."""
    pacer, now, cpu, c = Pacer(), 100.0, 5.0, 0.003
    for _ in range(300):
        assert pacer.reserve(now) == 0.0
        pacer.started(cpu)
        now, cpu = now + c, cpu + c
    assert pacer.paced == 0
    assert pacer.cpu_per_call_s == pytest.approx(c, rel=1e-3)


def test_pacer_delay_of_a_cpu_bound_burst_stays_within_its_cpu() -> None:
    """Zero latency, 8 slots granted at one instant, ``c`` of loop CPU per call: the k-th call
    of the burst waits at most k x c, which is when the loop would have finished the k calls
    before it anyway, and never more than k x the cap."""
    c = 0.004
    pacer, now, cpu = Pacer(), 50.0, 1.0
    for _ in range(64):  # learn the CPU per call from calls one after another
        pacer.reserve(now)
        pacer.started(cpu)
        now, cpu = now + c, cpu + c
    assert pacer.cpu_per_call_s <= c + 1e-12
    delays = [pacer.reserve(now) for _ in range(8)]
    for k, d in enumerate(delays):
        assert d <= k * c + 1e-12
        assert d <= k * PACE_SAMPLE_CAP_S
    assert delays[0] == 0.0 and delays == sorted(delays)


def test_the_first_calls_of_a_run_are_not_paced() -> None:
    pacer = Pacer()
    assert [pacer.reserve(7.0) for _ in range(32)] == [0.0] * 32


def test_slots_pace_a_burst_and_learn_the_cpu_per_call() -> None:
    """Through CallSlots.hold: every call of a burst runs, in the order its slot was granted,
    and a pacing delay never exceeds the cap per call ahead."""

    async def main() -> tuple[CallSlots, list[int]]:
        slots = CallSlots({"target": 4}, total=4)
        order: list[int] = []

        async def call(i: int) -> None:
            async with slots.hold("target"):
                order.append(i)
                sum(range(20_000))  # some CPU inside the call
                await asyncio.sleep(0)

        await asyncio.gather(*(call(i) for i in range(24)))
        return slots, order

    slots, order = asyncio.run(main())
    assert sorted(order) == list(range(24)) and order[:4] == [0, 1, 2, 3]
    assert slots.calls == {"target": 24} and slots.in_flight == {"target": 0}
    assert 0.0 < slots.pacer.cpu_per_call_s <= PACE_SAMPLE_CAP_S
    assert slots.pacer.delay_s <= slots.pacer.paced * 4 * PACE_SAMPLE_CAP_S
