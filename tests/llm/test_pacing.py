"""Pacing of call starts (empath_gate.llm.pacing): pure decisions with injected clocks."""

from __future__ import annotations

import asyncio
import threading
import time

import pytest

from empath_gate.llm.pacing import (
    NATIVE_THREAD_PREFIX,
    PACE_ALPHA,
    PACE_PRIOR_S,
    PACE_SAMPLE_CAP_S,
    Pacer,
    next_estimate,
    pace_delay,
    python_cpu_s,
)
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


def test_pacer_never_delays_a_call_alone_and_learns_its_cpu() -> None:
    """A provider that answers at once: each call costs ``c`` of CPU and as much wall, and the
    next call asks when the previous one is done (alone); the pacer never delays one, and its
    estimate moves from the prior to ``c``."""
    pacer, now, cpu, c = Pacer(), 100.0, 5.0, 0.003
    assert pacer.cpu_per_call_s == PACE_PRIOR_S
    for _ in range(300):
        assert pacer.reserve(now, alone=True) == 0.0
        pacer.started(cpu)
        now, cpu = now + c, cpu + c
    assert pacer.paced == 0
    assert pacer.cpu_per_call_s == pytest.approx(c, rel=1e-3)


def test_a_call_alone_starts_at_once_even_right_after_another() -> None:
    pacer = Pacer()
    assert pacer.reserve(7.0) == 0.0
    pacer.started(1.0)
    assert pacer.reserve(7.0001, alone=True) == 0.0
    # but the call after it, asking in the same instant with company, is spaced from it
    assert pacer.reserve(7.0001) == pytest.approx(PACE_PRIOR_S)


def test_pacer_delay_of_a_cpu_bound_burst_stays_within_its_cpu() -> None:
    """Zero latency, 8 slots granted at one instant, ``c`` of CPU per call: once the pacer has
    learnt ``c``, the k-th call of the burst waits at most k x c, which is when the loop would
    have finished the k calls before it anyway, and never more than k x the cap."""
    c = 0.004
    pacer, now, cpu = Pacer(), 50.0, 1.0
    for _ in range(400):  # learn the CPU per call from calls one after another
        pacer.reserve(now, alone=True)
        pacer.started(cpu)
        now, cpu = now + c, cpu + c
    assert pacer.cpu_per_call_s == pytest.approx(c, rel=1e-6)
    delays = [pacer.reserve(now) for _ in range(8)]
    for k, d in enumerate(delays):
        assert d <= k * pacer.cpu_per_call_s + 1e-12
        assert d <= k * PACE_SAMPLE_CAP_S + 1e-12
    assert delays[0] == pytest.approx(0.0, abs=1e-12) and delays == sorted(delays)


def test_the_first_burst_of_a_run_is_paced_at_the_prior() -> None:
    """Before any sample the interval is the prior, so the first round of a run (all its slots
    granted at one instant) leaves one prior apart, not as one clump."""
    pacer = Pacer()
    delays = [pacer.reserve(7.0) for _ in range(4)]
    assert delays == pytest.approx([0.0, PACE_PRIOR_S, 2 * PACE_PRIOR_S, 3 * PACE_PRIOR_S])
    assert pacer.paced == 3


def test_a_saturated_burst_keeps_its_interval() -> None:
    """While every start of a burst is paced, the CPU between two starts is at most the
    interval (the process is busy the whole time): the estimate does not fall, so the
    burst stays spread (the reason the estimate starts at the prior, not at 0)."""
    pacer, now, cpu = Pacer(), 10.0, 2.0
    delays = [pacer.reserve(now) for _ in range(32)]
    start = now
    for d in delays:  # each start after its delay, the process busy in between
        cpu += (now + d) - start
        start = now + d
        pacer.started(cpu)
    assert pacer.cpu_per_call_s == pytest.approx(PACE_PRIOR_S)


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
    assert slots.pacer.cpu_per_call_s != PACE_PRIOR_S  # it sampled
    assert slots.pacer.delay_s <= slots.pacer.paced * 4 * PACE_SAMPLE_CAP_S


def test_slots_pace_the_first_burst_but_not_a_caller_alone() -> None:
    """Through CallSlots.hold: 8 calls granted at once on 8 free slots are paced one prior
    apart (all but the first); calls made one after another, each alone, are never paced. The
    reservations read a frozen clock, so a busy machine cannot change the delays."""

    async def burst() -> CallSlots:
        slots = CallSlots({"target": 8}, total=8, clock=lambda: 0.0)

        async def call() -> None:
            async with slots.hold("target"):
                await asyncio.sleep(0.05)

        await asyncio.gather(*(call() for _ in range(8)))
        return slots

    async def one_at_a_time() -> CallSlots:
        slots = CallSlots({"target": 8}, total=8)
        for _ in range(20):
            async with slots.hold("target"):
                await asyncio.sleep(0)
        return slots

    paced = asyncio.run(burst()).pacer
    assert paced.paced == 7
    assert paced.delay_s == pytest.approx(sum(k * PACE_PRIOR_S for k in range(8)))
    alone = asyncio.run(one_at_a_time()).pacer
    assert alone.paced == 0 and alone.delay_s == 0.0


def test_slots_learn_from_their_cpu_clock() -> None:
    """Each start samples ``cpu_clock``: calls costing 4 ms on it move the estimate from the
    prior to 4 ms."""
    ticks = iter(k * 0.004 for k in range(10_000))

    async def main() -> CallSlots:
        slots = CallSlots({"target": 2}, total=2, cpu_clock=lambda: next(ticks))
        for _ in range(300):
            async with slots.hold("target"):
                pass
        return slots

    assert asyncio.run(main()).pacer.cpu_per_call_s == pytest.approx(0.004, rel=1e-3)


def test_calls_cancelled_while_paced_leave_no_trace() -> None:
    """Four calls paced behind one in flight are cancelled in their pacing sleep: the count of
    calls being paced returns to 0, and the next call is spaced from the last real start only
    (one interval), not behind the four void reservations."""

    async def main() -> None:
        slots = CallSlots({"target": 8}, total=8, clock=lambda: 0.0)
        release = asyncio.Event()

        async def call() -> None:
            async with slots.hold("target"):
                await release.wait()

        first = asyncio.create_task(call())
        await asyncio.sleep(0)
        paced = [asyncio.create_task(call()) for _ in range(4)]
        await asyncio.sleep(0)
        assert slots._pacing == 4 and slots.pacer.paced == 4
        for task in paced:
            task.cancel()
        await asyncio.gather(*paced, return_exceptions=True)
        assert slots._pacing == 0
        before = slots.pacer.delay_s
        nxt = asyncio.create_task(call())
        await asyncio.sleep(0)
        assert slots.pacer.delay_s - before == pytest.approx(slots.pacer.cpu_per_call_s)
        release.set()
        await asyncio.gather(first, nxt)
        assert slots.in_flight == {"target": 0}
        # with nothing in flight and nothing paced, a call is alone again
        paced_before = slots.pacer.paced
        async with slots.hold("target"):
            pass
        assert slots.pacer.paced == paced_before

    asyncio.run(main())


@pytest.mark.skipif(not hasattr(time, "pthread_getcpuclockid"), reason="no per-thread CPU clocks here")
def test_python_cpu_counts_python_threads_but_not_the_embedded_models() -> None:
    """A Python thread's CPU counts (it holds the interpreter lock the event loop needs); the
    embedded model's thread, named with NATIVE_THREAD_PREFIX, does not."""

    def seen_while_spinning(name: str, seconds: float = 0.05) -> float:
        spun, done = threading.Event(), threading.Event()

        def spin() -> None:
            end = time.thread_time() + seconds
            while time.thread_time() < end:
                pass
            spun.set()
            done.wait(5)

        thread = threading.Thread(target=spin, name=name)
        before = python_cpu_s()
        thread.start()
        spun.wait(5)
        seen = python_cpu_s() - before
        done.set()
        thread.join()
        return seen

    assert seen_while_spinning("worker") >= 0.045
    assert seen_while_spinning(f"{NATIVE_THREAD_PREFIX}_0") < 0.02
