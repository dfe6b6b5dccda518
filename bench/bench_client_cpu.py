"""Bench: the schedule's wall against the client's CPU per call and how that CPU is split.

``bench_engine.py`` finds both HTTP rows (bare litellm and the engine) above 1.05x the ideal
while the schedule alone (a target call that costs no CPU) is at about 1.02x. This bench
separates the two things the HTTP rows add: how much CPU the client spends per call, and in
how many pieces the event loop runs it.

1. **litellm, measured.** Two child processes make the bench's calls over HTTP to the fake
   server (``FakeOpenAIServer``, 1 s latency, 32 calls in flight): ``bare`` (``litellm.acompletion``
   under a semaphore, as ``bench_engine.py``'s bare row) and ``engine`` (``generate``). Each
   prints its CPU per call and its **loop steps per call**: the callbacks the event loop ran
   (``asyncio.Handle._run``, counted) divided by the calls. Every step is a point where another
   call's work can run before this call's next piece.
2. **A modelled client.** The same plan (100 transcripts x 6 turns, 32 calls in flight) against
   an in-process target that spends a set CPU time per call on the event loop (a busy loop on
   the thread's CPU clock, half before the 1 s "provider" wait and half after), either in one
   piece per side or cut into k pieces per side with a yield to the loop between them (k: 3,
   and half of bare litellm's measured loop steps per call; ``--pieces`` to choose). Two
   clients run it: ``simple`` (a semaphore of 32 calls, 64 transcripts open, the bare row's
   schedule) and ``engine`` (the run's scheduler). The CPU set is bare litellm's measured CPU
   per call (``--cpu-ms`` to choose it), and 0.

Each row runs in a child process of its own. What it shows: whether the wall's distance from
1.05x comes from the amount of client CPU or from its interleaving (every call's pieces queue
behind the pieces of the calls that are ready at the same time, so a burst of replies finishes
together, late, instead of one after another).

Run: ``python bench/bench_client_cpu.py`` (about 4 minutes; ``--cpu-ms``, ``--pieces``,
``--transcripts``).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
import bench_engine as be  # the plan, the reply and the HTTP rows

LATENCY_S = 1.0
CONCURRENCY = 32
MEASURE_TRANSCRIPTS = 64
"""Transcripts of each litellm measurement (384 calls): enough calls for the per-call figures,
a third of the full plan's time."""


def _burn(seconds: float) -> None:
    """Spend ``seconds`` of this thread's CPU time (``time.thread_time``) in a busy loop."""
    end = time.thread_time() + seconds
    while time.thread_time() < end:
        pass


async def _spend(seconds: float, pieces: int) -> None:
    """Spend ``seconds`` of CPU on the loop in ``pieces`` parts, yielding to the loop between
    them (``asyncio.sleep(0)``: the next part waits behind every callback ready meanwhile)."""
    for i in range(pieces):
        _burn(seconds / pieces)
        if i < pieces - 1:
            await asyncio.sleep(0)


def _count_steps() -> list[int]:
    """Count every callback the event loop runs from now on (one-element list, updated)."""
    import asyncio.events

    count = [0]
    run = asyncio.events.Handle._run

    def counted(handle: asyncio.events.Handle) -> None:
        count[0] += 1
        run(handle)

    asyncio.events.Handle._run = counted  # type: ignore[method-assign]
    return count


def _measure(args: argparse.Namespace) -> dict[str, Any]:
    """Child: warm up, then make the measurement plan over HTTP; CPU and loop steps per call."""
    from empath_gate.llm import client

    client._lib()

    async def run() -> dict[str, Any]:
        if args.client == "bare":
            await be._warm_bare(args.base_url)
        else:
            await be._warm_engine(args.base_url, CONCURRENCY)
        steps = _count_steps()
        cpu0, wall0 = be._cpu(), time.perf_counter()
        if args.client == "bare":
            out = await be._bare(args.base_url, args.transcripts, CONCURRENCY)
        else:
            out = await be._engine(args.base_url, args.transcripts, CONCURRENCY, args.cache_dir)
        wall, cpu = time.perf_counter() - wall0, be._cpu() - cpu0
        return {"calls": out["calls"], "wall_s": wall, "cpu_s": cpu, "steps": steps[0]}

    return asyncio.run(run())


def _modelled(args: argparse.Namespace) -> dict[str, Any]:
    """Child: the plan against the in-process target that spends ``cpu_ms`` in ``pieces``."""
    from empath_gate.llm import client

    client._lib()  # the same process state as the HTTP rows (litellm imported, frozen)
    half, pieces = args.cpu_ms / 2000, int(args.pieces)

    async def reply(_messages: list[dict[str, Any]], _conversation_id: str) -> str:
        await _spend(half, pieces)
        await asyncio.sleep(LATENCY_S)
        await _spend(half, pieces)
        return be.REPLY

    async def simple() -> int:
        calls_sem, open_sem = asyncio.Semaphore(CONCURRENCY), asyncio.Semaphore(2 * CONCURRENCY)
        calls = 0

        async def transcript() -> None:
            nonlocal calls
            async with open_sem:
                for _ in range(be.TURNS):
                    async with calls_sem:
                        await reply([], "")
                    calls += 1

        await asyncio.gather(*(transcript() for _ in range(args.transcripts)))
        return calls

    async def engine() -> int:
        from empath_gate.conversation.engine import generate
        from empath_gate.conversation.target import CallableTarget
        from empath_gate.settings import RoleSettings, Settings

        settings = Settings(
            target="py:bench_client_cpu:reply", concurrency=CONCURRENCY,
            cache_dir=Path(args.cache_dir) / "cache", target_role=RoleSettings(concurrency=CONCURRENCY),
        )
        target = CallableTarget(settings.target or "", settings, fn=reply)
        transcripts = await generate(be._plan(args.transcripts), settings=settings, target=target)
        return sum(1 for t in transcripts for turn in t.turns if turn.role == "assistant")

    cpu0, wall0 = be._cpu(), time.perf_counter()
    calls = asyncio.run(simple() if args.client == "simple" else engine())
    return {"calls": calls, "wall_s": time.perf_counter() - wall0, "cpu_s": be._cpu() - cpu0}


def _child(args: argparse.Namespace, **extra: Any) -> dict[str, Any]:
    """Run this script as a child with ``extra`` as its options; its JSON line."""
    cmd = [sys.executable, __file__, "--transcripts", str(args.transcripts)]
    for key, value in extra.items():
        cmd += [f"--{key.replace('_', '-')}", str(value)]
    return be.run_child(cmd, f"child {extra}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--transcripts", type=int, default=100, help="transcripts of the modelled rows")
    parser.add_argument("--cpu-ms", type=float, help="CPU per call of the modelled client (default: "
                        "bare litellm's, measured)")
    parser.add_argument("--pieces", help="pieces per side of the split rows, comma-separated (default: "
                        "3 and half of bare litellm's loop steps per call)")
    parser.add_argument("--role", choices=("measure", "model"), help=argparse.SUPPRESS)
    parser.add_argument("--client", choices=("bare", "engine", "simple"), help=argparse.SUPPRESS)
    parser.add_argument("--base-url", help=argparse.SUPPRESS)
    parser.add_argument("--cache-dir", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.role:
        print(json.dumps(_measure(args) if args.role == "measure" else _modelled(args)))
        return

    from empath_gate.testing import FakeOpenAIServer

    ideal = be.ideal_wall(args.transcripts * be.TURNS, LATENCY_S, CONCURRENCY)
    print(f"client CPU bench: {CONCURRENCY} calls in flight, latency {LATENCY_S:g} s, "
          f"{os.cpu_count()} CPUs; load average before: {be._load()}")
    measured: dict[str, dict[str, Any]] = {}
    with FakeOpenAIServer(latency_s=LATENCY_S) as server, tempfile.TemporaryDirectory() as tmp:
        server.on(be.MODEL, be.REPLY)
        for name in ("bare", "engine"):
            measured[name] = _child(
                argparse.Namespace(transcripts=MEASURE_TRANSCRIPTS), role="measure", client=name,
                base_url=server.base_url, cache_dir=tmp,
            )
    for name, m in measured.items():
        print(f"  {name:<6} over HTTP ({m['calls']} calls): CPU per call "
              f"{1000 * m['cpu_s'] / m['calls']:.2f} ms, loop steps per call {m['steps'] / m['calls']:.1f}, "
              f"wall {m['wall_s']:.2f} s = "
              f"{m['wall_s'] / be.ideal_wall(m['calls'], LATENCY_S, CONCURRENCY):.3f} x its ideal")
    bare = measured["bare"]
    cpu_ms = args.cpu_ms if args.cpu_ms is not None else round(1000 * bare["cpu_s"] / bare["calls"], 2)
    steps_half = max(1, round(bare["steps"] / bare["calls"] / 2))
    splits = sorted({int(p) for p in args.pieces.split(",")} if args.pieces else {3, steps_half})

    rows: list[tuple[str, float, int, dict[str, Any]]] = []
    with tempfile.TemporaryDirectory() as tmp:
        for cpu, k in ((0.0, 1), (cpu_ms, 1), *((cpu_ms, k) for k in splits)):
            for client_name in ("simple", "engine"):
                fresh = tempfile.mkdtemp(dir=tmp)  # a cache of its own: every row makes its calls
                result = _child(args, role="model", client=client_name, cpu_ms=cpu, pieces=k, cache_dir=fresh)
                rows.append((client_name, cpu, k, result))
                print(f"  {client_name} {cpu:.2f} ms x {k}: {result['wall_s']:.2f} s", flush=True)
    header = f"{'client':<8} {'CPU ms/call set':>16} {'pieces per side':>16} {'calls':>6} {'wall s':>7} " \
             f"{'x ideal':>8} {'CPU ms/call':>12}"
    print(header)
    print("-" * len(header))
    for client_name, cpu, k, r in rows:
        print(f"{client_name:<8} {cpu:>16.2f} {k:>16} {r['calls']:>6} {r['wall_s']:>7.2f} "
              f"{r['wall_s'] / ideal:>8.3f} {1000 * r['cpu_s'] / r['calls']:>12.2f}")
    eng = {(cpu, k): r for name, cpu, k, r in rows if name == "engine"}
    parts = ", ".join(
        f"{eng[(cpu_ms, k)]['wall_s'] / ideal:.3f} x in {k} piece{'s' if k > 1 else ''} per side "
        f"({'within' if eng[(cpu_ms, k)]['wall_s'] / ideal <= 1.05 else 'over'} 1.05 x)"
        for k in (1, *splits)
    )
    print(f"engine with {cpu_ms:.2f} ms of client CPU per call (ideal {ideal:.2f} s): {parts}")
    print(f"load average after: {be._load()}")


if __name__ == "__main__":
    main()
