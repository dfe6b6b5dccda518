"""The scheduling bench's CPU verdict (bench/bench_engine.py): decided on the paired differences'
interval, never on one lucky pair."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest

BENCH = Path(__file__).resolve().parents[1] / "bench" / "bench_engine.py"


@pytest.fixture(scope="module")
def bench() -> ModuleType:
    spec = importlib.util.spec_from_file_location("bench_engine_under_test", BENCH)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def test_tight_pairs_below_the_limit_are_met(bench: ModuleType) -> None:
    verdict = bench.cpu_verdict([0.2, 0.3, 0.25, 0.4, 0.1])
    assert verdict.startswith("met (mean +0.25 ms")
    assert "over 5 pairs" in verdict


def test_tight_pairs_above_the_limit_are_not_met(bench: ModuleType) -> None:
    assert bench.cpu_verdict([2.0, 2.5, 1.8, 2.2]).startswith("NOT met (mean +2.12 ms")


def test_a_mean_below_the_limit_with_a_wide_spread_cannot_tell(bench: ModuleType) -> None:
    """The four bench runs of 2026-12-03 (medians' differences): the mean is under +1 ms, but
    the interval reaches past it, so neither verdict is printed."""
    verdict = bench.cpu_verdict([0.08, 0.81, 1.17, 1.68])
    assert verdict.startswith("cannot tell (mean +0.93 ms, 90 % interval +0.14 to +1.73 ms")
    # (t x sd / |mean - 1 ms|)^2 = (1.58 / 0.065)^2 from unrounded figures, rounded up
    assert "about 593 pairs would decide" in verdict


def test_one_pair_never_decides(bench: ModuleType) -> None:
    assert bench.cpu_verdict([0.1]).startswith("cannot tell from one pair")
    assert bench.cpu_verdict([5.0]).startswith("cannot tell from one pair")
    assert bench.cpu_verdict([]).startswith("cannot tell")


def test_pairs_are_engine_minus_bare_per_call(bench: ModuleType) -> None:
    bare = [{"cpu_s": 3.0, "server_calls": 600}, {"cpu_s": 4.2, "server_calls": 600}]
    engine = [{"cpu_s": 3.6, "server_calls": 600}, {"cpu_s": 4.2, "server_calls": 600}]
    assert bench.paired_diffs(bare, engine) == pytest.approx([1.0, 0.0])


def test_the_repeats_cycle_through_every_order_of_the_rows(bench: ModuleType) -> None:
    rows = [("bare", "bare litellm"), ("bare-paced", bench.PACED), ("engine", "engine")]
    orders = [tuple(row for row, _ in bench.repeat_order(rows, i)) for i in range(6)]
    assert len(set(orders)) == 6  # all 3! orders
    for position in range(3):
        assert sorted(order[position] for order in orders) == sorted([r for r, _ in rows] * 2)
    for first, second in (("bare", "engine"), ("bare", "bare-paced"), ("bare-paced", "engine")):
        assert sum(order.index(first) < order.index(second) for order in orders) == 3
    assert bench.repeat_order(rows, 6) == bench.repeat_order(rows, 0)
    two = rows[::2]
    assert [[r for r, _ in bench.repeat_order(two, i)] for i in range(4)] == [
        ["bare", "engine"], ["engine", "bare"], ["engine", "bare"], ["bare", "engine"]]


def test_mean_interval_says_when_it_has_no_spread(bench: ModuleType) -> None:
    assert bench.mean_interval([]) == "no repeat"
    assert bench.mean_interval([0.62]) == "one repeat: +0.62 ms"
    text = bench.mean_interval([0.5, 0.7, 0.6, 0.6])
    assert text.startswith("mean +0.60 ms, 90 % interval +0.")
    assert text.endswith("over 4 repeats")
    low, high = bench.t_interval([0.5, 0.7, 0.6, 0.6], 0.90)
    assert low < 0.60 < high and high - 0.60 == pytest.approx(0.60 - low)


def test_the_paced_bare_row_makes_every_call_through_the_engine_slots(bench: ModuleType) -> None:
    """The paced bare row is bare litellm with the engine's call slots around each call: the same
    calls reach the server, never more than the concurrency at once."""
    import asyncio

    from empath_gate.testing import FakeOpenAIServer

    with FakeOpenAIServer(latency_s=0.05) as server:
        server.on(bench.MODEL, bench.REPLY)
        limiter = server.limit(bench.MODEL, rps=1000.0, concurrent=2)  # a third at once: 429
        out = asyncio.run(bench._bare(server.base_url, 3, 2, paced=True))
        assert out["paced"] > 0  # the second call of the first round waits for the pacer
        assert out["calls"] == 3 * bench.TURNS
        assert len(server.requests) == 3 * bench.TURNS
        assert limiter.refused == 0
