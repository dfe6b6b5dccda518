"""Bench: the same plan through empath-gate, bare litellm and Inspect AI, side by side, on the fake
1-second server.

Plan (as ``bench/bench_engine.py``): 100 transcripts of 6 scripted user turns against a chat
model, 6 sequential target calls each (600 calls), 32 calls in flight at most (Inspect AI: 32
samples, so 32 transcripts, at a time), every call answered by the fake OpenAI-compatible
server (``empath_gate.testing.FakeOpenAIServer``) after 1 s. Each row runs in a fresh child
process, so its CPU time (user + system, every thread) is its own:

* ``empath-gate``: the conversation engine (``empath_gate.conversation.engine.generate``, cache
  on, a fresh cache folder), as ``bench_engine.py --child engine`` runs it;
* ``bare litellm``: ``litellm.acompletion`` with the same calls and sequencing
  (``bench_engine.py --child bare``);
* ``Inspect AI``: an Inspect task with one sample per transcript and a solver that appends each
  scripted user turn and calls ``generate`` (6 turns), ``max_samples`` and ``max_connections``
  at the concurrency, its OpenAI provider pointed at the fake server, logging to a temporary
  folder (what a user of Inspect pays). Inspect AI is installed by this script with pip into a
  throwaway virtual environment under a temporary folder (``--inspect-venv`` reuses one); when
  that fails the row is skipped with the reason.

Printed per row: wall time, its ratio to the ideal (calls x latency / concurrency) and to the
per-transcript sequencing bound (ceil(transcripts / concurrency) x turns x latency), client CPU
per call (the child's CPU time / the calls the server received), and the calls. ``--repeat``
runs every row that many times, interleaved, and tabulates each row's median wall time and median
CPU per call (every repeat is listed too).

Run: ``python bench/compare_peers.py`` (about 2 minutes plus Inspect AI's install);
``--transcripts``, ``--concurrency``, ``--latency``, ``--repeat`` vary it.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
import venv
from pathlib import Path
from typing import Any

BENCH = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH))
from bench_engine import MODEL, REPLY, SCRIPT, SYSTEM_PROMPT, TURNS  # noqa: E402

INSPECT_REQUIREMENTS = ("inspect-ai", "openai")
"""What the throwaway environment gets (Inspect AI's OpenAI provider needs the ``openai`` package)."""
FAKE_KEY = "sk-bench-fake"


def _cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


# --------------------------------------------------------------------------- the Inspect AI child

def _inspect_child(args: argparse.Namespace) -> None:
    """Run the plan as an Inspect AI eval in this (throwaway) interpreter; print one JSON line."""
    from inspect_ai import Task, eval
    from inspect_ai.dataset import Sample
    from inspect_ai.model import ChatMessageSystem, ChatMessageUser
    from inspect_ai.solver import Generate, TaskState, solver

    @solver  # type: ignore[misc]
    def scripted() -> Any:
        async def solve(state: TaskState, generate: Generate) -> TaskState:
            state.messages = [ChatMessageSystem(content=SYSTEM_PROMPT)]
            for k in range(TURNS):
                state.messages.append(ChatMessageUser(content=SCRIPT[k]))
                state = await generate(state)
            return state

        return solve

    samples = [Sample(input=SCRIPT[0], id=f"t{i:04d}") for i in range(args.transcripts)]
    task = Task(dataset=samples, solver=scripted())
    os.environ["OPENAI_API_KEY"] = FAKE_KEY
    cpu0, wall0 = _cpu(), time.perf_counter()
    logs = eval(
        task, model=f"openai/{MODEL}", model_base_url=args.base_url, max_samples=args.concurrency,
        model_args={"responses_api": False},  # chat completions, as the other rows call
        max_connections=args.concurrency, display="none", log_dir=args.cache_dir,
        max_retries=0, timeout=120, log_level="error",
    )
    wall, cpu = time.perf_counter() - wall0, _cpu() - cpu0
    status = logs[0].status if logs else "no log"
    print(json.dumps({"wall_s": wall, "cpu_s": cpu, "status": status}))


def _install_inspect(folder: Path) -> tuple[Path | None, str]:
    """A virtual environment under ``folder`` with Inspect AI; (its python, "") or (None, why not)."""
    venv.EnvBuilder(with_pip=True, clear=True).create(folder)
    python = folder / ("Scripts/python.exe" if os.name == "nt" else "bin/python")
    try:
        proc = subprocess.run(
            [str(python), "-m", "pip", "install", "-q", "--disable-pip-version-check", *INSPECT_REQUIREMENTS],
            capture_output=True, text=True, timeout=1800, check=False,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        return None, f"pip did not finish: {exc}"
    if proc.returncode != 0:
        last = (proc.stderr.strip().splitlines() or ["no output"])[-1]
        return None, f"pip install {' '.join(INSPECT_REQUIREMENTS)} failed (exit {proc.returncode}): {last}"
    return python, ""


# --------------------------------------------------------------------------- the parent

def _child(cmd: list[str]) -> dict[str, Any]:
    proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        raise RuntimeError(proc.stderr.strip()[-2000:] or f"exit {proc.returncode}")
    result: dict[str, Any] = json.loads(proc.stdout.strip().splitlines()[-1])
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--transcripts", type=int, default=100)
    parser.add_argument("--concurrency", type=int, default=32)
    parser.add_argument("--latency", type=float, default=1.0)
    parser.add_argument("--repeat", type=int, default=1, help="interleaved repeats; the median is tabulated")
    parser.add_argument("--inspect-venv", type=Path, help="reuse (or create) Inspect AI's environment here")
    parser.add_argument("--inspect-child", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--base-url", help=argparse.SUPPRESS)
    parser.add_argument("--cache-dir", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.inspect_child:
        _inspect_child(args)
        return

    sys.path.insert(0, str(BENCH.parent))  # run from a checkout without installing
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    from empath_gate.testing import FakeOpenAIServer

    n, conc, lat = args.transcripts, args.concurrency, args.latency
    calls = n * TURNS
    ideal = calls * lat / conc
    bound = math.ceil(n / conc) * TURNS * lat
    print(f"peers side by side: {n} transcripts x {TURNS} turns = {calls} calls, concurrency {conc}, "
          f"fake server latency {lat:g} s, {os.cpu_count()} CPUs")
    print(f"ideal (calls x latency / concurrency) = {ideal:.2f} s; "
          f"per-transcript sequencing bound = {bound:.2f} s")
    with tempfile.TemporaryDirectory(prefix="empath-peers-") as tmp:
        inspect_python: Path | None = None
        if args.inspect_venv is not None and (args.inspect_venv / "bin" / "python").exists():
            inspect_python, why = args.inspect_venv / "bin" / "python", ""
        else:
            t0 = time.perf_counter()
            inspect_python, why = _install_inspect(args.inspect_venv or Path(tmp) / "inspect-venv")
            if inspect_python is not None:
                print(f"Inspect AI installed in a throwaway environment in {time.perf_counter() - t0:.0f} s")
        if inspect_python is None:
            print(f"Inspect AI: skipped: cannot install it into a throwaway environment ({why})")
        rows: dict[str, list[dict[str, Any]]] = {"empath-gate": [], "bare litellm": []}
        if inspect_python is not None:
            rows["Inspect AI"] = []
        with FakeOpenAIServer(latency_s=lat) as server:
            server.on(MODEL, REPLY)
            common = ["--base-url", server.base_url, "--transcripts", str(n), "--concurrency", str(conc)]
            for i in range(args.repeat):
                for name in rows:
                    folder = Path(tmp) / f"{name.replace(' ', '-')}-{i}"
                    folder.mkdir()
                    if name == "Inspect AI":
                        cmd = [str(inspect_python), str(Path(__file__).resolve()), "--inspect-child"]
                    else:
                        row = "engine" if name == "empath-gate" else "bare"
                        cmd = [sys.executable, str(BENCH / "bench_engine.py"), "--child", row]
                    before = len(server.requests)
                    try:
                        result = _child([*cmd, *common, "--cache-dir", str(folder)])
                    except RuntimeError as exc:
                        print(f"{name}: the row failed: {exc}")
                        continue
                    result["server_calls"] = len(server.requests) - before
                    if result.get("status", "success") != "success":
                        print(f"{name}: the eval ended {result['status']}; its figures are left out")
                        continue
                    rows[name].append(result)
    header = f"{'row':<14} {'wall s':>7} {'x ideal':>8} {'x bound':>8} {'CPU ms/call':>12} {'calls':>6}"
    print(header)
    print("-" * len(header))
    best: dict[str, tuple[float, float]] = {}
    for name, results in rows.items():
        if not results:
            print(f"{name:<14} (no result)")
            continue
        wall = statistics.median(r["wall_s"] for r in results)
        cpu = statistics.median(1000 * r["cpu_s"] / max(1, r["server_calls"]) for r in results)
        best[name] = (wall, cpu)
        calls_seen = "/".join(str(r["server_calls"]) for r in results)
        print(f"{name:<14} {wall:>7.2f} {wall / ideal:>8.2f} {wall / bound:>8.2f} {cpu:>12.2f} "
              f"{calls_seen:>6}")
        if len(results) > 1:
            each = ", ".join(f"{r['wall_s']:.1f} s / {1000 * r['cpu_s'] / max(1, r['server_calls']):.2f} ms"
                             for r in results)
            print(f"{'':<14} repeats (wall / CPU per call): {each}")
    if "bare litellm" in best:
        base_wall, base_cpu = best["bare litellm"]
        for name, (wall, cpu) in best.items():
            if name != "bare litellm":
                print(f"{name} / bare litellm: wall {wall / base_wall:.3f}x, "
                      f"CPU per call {cpu - base_cpu:+.2f} ms")


if __name__ == "__main__":
    main()
