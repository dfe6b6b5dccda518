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
    assert verdict.startswith("cannot tell (mean +0.93 ms")
    assert "pairs would decide" in verdict


def test_one_pair_never_decides(bench: ModuleType) -> None:
    assert bench.cpu_verdict([0.1]).startswith("cannot tell from one pair")
    assert bench.cpu_verdict([5.0]).startswith("cannot tell from one pair")
    assert bench.cpu_verdict([]).startswith("cannot tell")


def test_pairs_are_engine_minus_bare_per_call(bench: ModuleType) -> None:
    bare = [{"cpu_s": 3.0, "server_calls": 600}, {"cpu_s": 4.2, "server_calls": 600}]
    engine = [{"cpu_s": 3.6, "server_calls": 600}, {"cpu_s": 4.2, "server_calls": 600}]
    assert bench.paired_diffs(bare, engine) == pytest.approx([1.0, 0.0])
