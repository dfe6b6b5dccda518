"""Bench: adaptive concurrency (AIMD) against fixed limits on a rate-limited fake provider.

The fake OpenAI-compatible server (``empath_gate.testing.FakeOpenAIServer``) limits its model
like a provider at capacity (``server.limit``): a token bucket of R requests per second and C
requests in service at once; above either it answers 429 with ``Retry-After`` /
``retry-after-ms``. Each reply takes L seconds, with L = C / R so that both limits bind at
the same load: C concurrent calls are exactly right.

The same plan (``--calls`` chat calls through ``empath_gate.llm.client.complete``, all
submitted at once, each retried on 429 up to ``--max-retries`` times) runs three ways, each
on a fresh server and event loop:

* ``fixed 2x``: a fixed limit of 2C calls in flight (``adaptive_concurrency`` off);
* ``fixed 1x``: a fixed limit of C (exactly right; off);
* ``aimd``: adaptive concurrency on, starting at (and capped by) 2C.

Printed per row: wall time, 429s the server answered, calls that failed, and the AIMD
limit's decreases and final value. Targets (issue 19, item 4): AIMD has fewer 429s than
fixed 2x and a wall at most fixed 2x's (equal or better), and a wall at most 1.1x fixed 1x.
Wall is the median of ``--repeat`` runs of each row (interleaved), so a busy neighbour on a
shared machine does not decide the comparison.

Run: ``python bench/bench_aimd.py`` (about 2 minutes with the defaults: R=20, C=8, L=0.4 s,
160 calls, 2 repeats).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import time
from pathlib import Path
from typing import Any

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run from a checkout without installing

MODEL = "fake-limited"


async def _plan(settings: Any, calls: int) -> tuple[int, dict[str, Any]]:
    from empath_gate.errors import ProviderError
    from empath_gate.llm.adaptive import gates
    from empath_gate.llm.client import complete

    async def one(i: int) -> bool:
        try:
            await complete(
                "target", settings, [{"role": "user", "content": f"message {i}"}], seed=None, cache=None,
                cache_extra={},
            )
        except ProviderError:
            return False
        return True

    ok = await asyncio.gather(*(one(i) for i in range(calls)))
    states = [g.state for g in gates().values()]
    extra: dict[str, Any] = {}
    if states:
        st = states[0]
        extra = {"decreases": st.decreases, "increases": st.increases, "final_limit": st.limit}
    return sum(1 for x in ok if not x), extra


def _row(adaptive: bool, limit: int, args: argparse.Namespace) -> dict[str, Any]:
    from empath_gate.llm.adaptive import adaptive_session
    from empath_gate.testing import FakeOpenAIServer

    latency = args.concurrent / args.rps
    with FakeOpenAIServer(latency_s=latency) as server:
        server.on(MODEL, "I hear you.")
        server.limit(MODEL, rps=args.rps, concurrent=args.concurrent)
        settings = server.role_settings(
            MODEL, concurrency=limit, max_retries=args.max_retries, retry_base_delay_s=0.05,
            retry_max_delay_s=1.0,
        )

        async def run() -> tuple[int, dict[str, Any]]:
            with adaptive_session(adaptive):
                return await _plan(settings, args.calls)

        t0 = time.perf_counter()
        failed, extra = asyncio.run(run())
        wall = time.perf_counter() - t0
        return {"wall": wall, "throttled": server.throttled, "failed": failed, **extra}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--calls", type=int, default=160)
    ap.add_argument("--rps", type=float, default=20.0, help="R: the server's requests per second")
    ap.add_argument("--concurrent", type=int, default=8, help="C: the server's requests in service")
    ap.add_argument("--max-retries", type=int, default=20)
    ap.add_argument("--repeat", type=int, default=2)
    args = ap.parse_args()
    from empath_gate.llm.client import litellm_module

    litellm_module()  # import litellm once, outside the timings
    c = args.concurrent
    ways = {"fixed 2x": (False, 2 * c), "fixed 1x": (False, c), "aimd": (True, 2 * c)}
    runs: dict[str, list[dict[str, Any]]] = {name: [] for name in ways}
    for _ in range(args.repeat):
        for name, (adaptive, limit) in ways.items():
            runs[name].append(_row(adaptive, limit, args))
    ideal = args.calls / args.rps
    print(f"plan: {args.calls} calls; server limit R={args.rps:g} rps, C={c} concurrent, "
          f"latency {c / args.rps:.2f} s; ideal wall {ideal:.1f} s; median of {args.repeat}")
    print(f"{'way':<9} {'limit':>5} {'wall s':>7} {'x ideal':>7} {'429s':>6} {'failed':>6}  aimd")
    med: dict[str, dict[str, float]] = {}
    for name, rows in runs.items():
        wall = statistics.median(r["wall"] for r in rows)
        throttled = statistics.median(r["throttled"] for r in rows)
        failed = max(r["failed"] for r in rows)
        med[name] = {"wall": wall, "throttled": throttled}
        last = rows[-1]
        aimd = (f"decreases {last['decreases']}, increases {last['increases']}, final limit "
                f"{last['final_limit']}") if "decreases" in last else ""
        print(f"{name:<9} {ways[name][1]:>5} {wall:>7.2f} {wall / ideal:>7.2f} {throttled:>6.0f} "
              f"{failed:>6}  {aimd}")
        print(f"{'':<9} repeats: " + ", ".join(f"{r['wall']:.2f} s / {r['throttled']} 429s" for r in rows))
    a, f2, f1 = med["aimd"], med["fixed 2x"], med["fixed 1x"]

    def met(ok: bool) -> str:
        return "met" if ok else "NOT MET"

    print(f"429s aimd / fixed 2x: {a['throttled']:.0f} / {f2['throttled']:.0f}  "
          f"(target: fewer) {met(a['throttled'] < f2['throttled'])}")
    print(f"wall aimd / fixed 2x: {a['wall'] / f2['wall']:.3f}  (target: <= 1.0) "
          f"{met(a['wall'] <= f2['wall'])}")
    print(f"wall aimd / fixed 1x: {a['wall'] / f1['wall']:.3f}  (target: <= 1.1) "
          f"{met(a['wall'] <= 1.1 * f1['wall'])}")


if __name__ == "__main__":
    main()
