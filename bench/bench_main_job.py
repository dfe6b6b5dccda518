"""Where the main job's time goes: the embedded bot's replies against everything else.

Run: ``python bench/bench_main_job.py [pytest args]`` (default: the README's main job,
``--empath-suite crisis --empath-offline``, on a cold model cache in a temporary folder).

Runs pytest in this process with the embedded model's calls wrapped and prints:

- the job's wall and CPU seconds (this process: the scripted auditor, criteria, annotation, the
  report), and the share of CPU spent inside the model's replies;
- replies, CPU seconds per reply, generated tokens per reply, the share cut at the token limit;
- prompt tokens per reply and how many of them llama.cpp evaluated (the rest it reused from the
  previous call's cache: a conversation's next turn shares its earlier turns as a prefix);
- prompt and generation speed (tokens/s of llama.cpp's own timings; xllamacpp only), the thread
  count and the OpenMP wait settings.

The machine's load changes wall time, not CPU seconds per reply much: compare those, and print
``uptime`` beside a wall figure.
"""

from __future__ import annotations

import os
import resource
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import pytest

from empath_gate.llm import local

MAIN_JOB = ["--empath-suite", "crisis", "--empath-offline", "-q", "--no-header", "-p", "no:cacheprovider"]


def cpu_seconds() -> float:
    """User + system CPU seconds of this process (all its threads) so far."""
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def main() -> None:
    rows: list[dict[str, Any]] = []
    timings: list[dict[str, Any]] = []
    chat = local._chat

    def timed_chat(model: str, messages: list[dict[str, Any]], **kw: Any) -> dict[str, Any]:
        wall, cpu = time.perf_counter(), cpu_seconds()
        out = chat(model, messages, **kw)
        rows.append({"wall": time.perf_counter() - wall, "cpu": cpu_seconds() - cpu, **out})
        return out

    complete = local._Xllamacpp.complete

    def timed_complete(self: Any, messages: list[dict[str, Any]], **kw: Any) -> dict[str, Any]:
        out = complete(self, messages, **kw)
        timings.append(dict(out.get("timings") or {}))
        return out

    local._chat = timed_chat
    local._Xllamacpp.complete = timed_complete  # type: ignore[method-assign]
    args = sys.argv[1:] or MAIN_JOB
    with tempfile.TemporaryDirectory() as tmp:
        os.environ.setdefault("EMPATH_CACHE_DIR", str(Path(tmp) / "cache"))
        os.environ.setdefault("EMPATH_RESULTS", str(Path(tmp) / "results" / "results.json"))
        wall, cpu = time.perf_counter(), cpu_seconds()
        code = pytest.main(args)
        wall, cpu = time.perf_counter() - wall, cpu_seconds() - cpu
    n = len(rows)
    print(f"\nmain job: exit {int(code)}, {wall:.0f} s wall, {cpu:.0f} s CPU "
          f"(backend {local.backend_name()}, {local._threads()} threads, "
          f"OMP_WAIT_POLICY={os.environ.get('OMP_WAIT_POLICY', '-')}, "
          f"GOMP_SPINCOUNT={os.environ.get('GOMP_SPINCOUNT', '-')}, load {os.getloadavg()[0]:.1f})")
    if not n:
        print("no embedded-model reply was made (a cached run, or another target)")
        return
    reply_cpu = sum(r["cpu"] for r in rows)
    gen = sum(r["completion_tokens"] or 0 for r in rows)
    prompt = sum(r["prompt_tokens"] or 0 for r in rows)
    cut = sum(r["finish_reason"] == "length" for r in rows)
    print(f"replies: {n}; {reply_cpu:.0f} s CPU in replies = {reply_cpu / cpu:.0%} of the job's CPU; "
          f"{reply_cpu / n:.2f} s CPU and {sum(r['wall'] for r in rows) / n:.2f} s wall per reply")
    print(f"tokens per reply: {gen / n:.1f} generated ({cut} of {n} replies cut at the limit), "
          f"{prompt / n:.0f} in the prompt")
    if timings:
        evaluated = sum(t.get("prompt_n", 0) for t in timings)
        reused = sum(t.get("cache_n", 0) for t in timings)
        p_ms = sum(t.get("prompt_ms", 0.0) for t in timings)
        g_ms = sum(t.get("predicted_ms", 0.0) for t in timings)
        print(f"prompt tokens evaluated per reply: {evaluated / n:.0f} "
              f"(reused from the cache: {reused / n:.0f})")
        print(f"llama.cpp time: prompt {p_ms / 1000:.0f} s ({evaluated / max(p_ms, 1) * 1000:.0f} tokens/s), "
              f"generation {g_ms / 1000:.0f} s ({gen / max(g_ms, 1) * 1000:.0f} tokens/s); "
              f"generation is {g_ms / max(p_ms + g_ms, 1):.0%} of the model's time")
    print(f"CPU outside the replies: {cpu - reply_cpu:.0f} s "
          "(plan, scripted auditor, criteria, annotation, report)")


if __name__ == "__main__":
    main()
