"""Benchmark: build the plan of the full instrument with every metric and every persona.

Loads the shipped instrument, adds in memory a suite selecting every seed with ``metrics: all``
and ``personas: {mode: all}`` (the largest plan the instrument allows), builds its plan and
shards it, and prints items, seconds and peak memory. Target (issue 5): collecting ~45k items
in well under 15 s and 500 MB.

    python bench/bench_collect.py [--repeat 3] [--personas-factor 1] [--base SUITES_DIR]

``--personas-factor F`` multiplies the personas (copies with new ids) to reach the target size
while the persona bank is still small.
"""

from __future__ import annotations

import argparse
import resource
import sys
import time
import tracemalloc
from pathlib import Path

from empath_gate.instrument.loader import load_instrument
from empath_gate.instrument.models import Instrument, PersonaSelector, SeedSelector, Suite
from empath_gate.plan import build_plan, shard


def widened(instrument: Instrument, factor: int) -> Instrument:
    """The instrument plus suite ``bench-all`` (all seeds, all metrics, all personas), with the
    personas copied ``factor`` times."""
    suite = Suite(id="bench-all", label="bench", description="every seed x persona x metric",
                  seeds=SeedSelector(all=True), metrics="all", personas=PersonaSelector(mode="all"))
    personas = list(instrument.personas)
    for k in range(1, factor):
        personas += [p.model_copy(update={"id": f"{p.id}-x{k}"}) for p in instrument.personas]
    return instrument.model_copy(update={"suites": (*instrument.suites, suite), "personas": tuple(personas)})


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--personas-factor", type=int, default=1)
    parser.add_argument("--base", type=Path, default=None,
                        help="a suites directory instead of the shipped one")
    args = parser.parse_args()

    t0 = time.perf_counter()
    instrument = load_instrument(base_dir=args.base)
    load_s = time.perf_counter() - t0
    big = widened(instrument, args.personas_factor)
    print(f"instrument {instrument.version}: {len(instrument.seeds)} seeds, {len(big.personas)} personas, "
          f"{len(instrument.metrics)} metrics; load {load_s:.2f} s")

    best = float("inf")
    plan = None
    for _ in range(args.repeat):
        t = time.perf_counter()
        plan = build_plan(big, ["bench-all"])
        best = min(best, time.perf_counter() - t)
    assert plan is not None
    tracemalloc.start()
    plan = build_plan(big, ["bench-all"])
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    t = time.perf_counter()
    shards = [shard(plan, k, 8) for k in range(1, 9)]
    shard_s = time.perf_counter() - t
    unit = 1024 * 1024 if sys.platform == "darwin" else 1024  # ru_maxrss: bytes on macOS, KiB on Linux
    rss_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / unit
    print(f"items {len(plan.items)}  conversations {len(plan.conversations)}  "
          f"transcripts {len(plan.transcripts)}")
    print(f"build_plan best of {args.repeat}: {best:.2f} s  ({len(plan.items) / best:,.0f} items/s)")
    print(f"peak traced memory while building: {peak / 1e6:.0f} MB; process max RSS {rss_mb:.0f} MB")
    print(f"8 shards: {shard_s:.2f} s, sizes {[len(s.items) for s in shards]}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
