"""Compare the llama.cpp bindings for the embedded bot: install time, main-job time, replies.

Run: ``python bench/bench_bindings.py [--runs 2] [--install]``.

For each installed binding (``xllamacpp`` from the ``local`` extra, ``llama-cpp-python`` from
``local-source``), runs the README's main job (``pytest --empath-suite crisis --empath-offline``)
``--runs`` times, each on a cold model cache in its own folder, and prints per binding:

- the main job's wall time per run;
- whether the target's replies are identical across the runs (same transcript, same turn);
- the repetition rate: the share of the bot's replies in which some run of four words occurs
  twice or more, or that repeat an earlier reply of the same transcript word for word (a 135M
  model that loops shows up here);
- the share of replies cut at the token limit, and the main job's exit status (1 expected).

With ``--install`` it also times a cold ``pip install --no-cache-dir`` of each binding into a
fresh virtual environment (llama-cpp-python compiles llama.cpp; xllamacpp is a prebuilt wheel).
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BINDINGS = {
    "xllamacpp": ("xllamacpp", "xllamacpp>=2026.10,<2027"),
    "llama-cpp-python": ("llama_cpp", "llama-cpp-python>=0.3,<0.4"),
}
MAIN_JOB = ["-m", "pytest", "--empath-suite", "crisis", "--empath-offline", "-q", "--no-header"]


def main_job(binding: str, folder: Path) -> tuple[float, int, dict[tuple[str, int], str]]:
    """Run the main job once on a cold cache; return (wall seconds, exit status, replies)."""
    env = {
        **os.environ,
        "EMPATH_LOCAL_BACKEND": binding,
        "EMPATH_CACHE_DIR": str(folder / "cache"),
        "EMPATH_RESULTS": str(folder / "results" / "results.json"),
    }
    t = time.perf_counter()
    proc = subprocess.run(
        [sys.executable, *MAIN_JOB, "-p", "no:cacheprovider"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
    )
    wall = time.perf_counter() - t
    return wall, proc.returncode, replies(folder / "results" / "transcripts")


def replies(transcripts: Path) -> dict[tuple[str, int], str]:
    """(transcript file stem, turn index) -> the target's reply, over every JSONL transcript."""
    out: dict[tuple[str, int], str] = {}
    for path in sorted(transcripts.glob("**/*.jsonl")):
        for line in path.read_text(encoding="utf-8").splitlines():
            row = json.loads(line)
            if row.get("role") in ("target", "assistant") and isinstance(row.get("content"), str):
                out[(path.stem, int(row.get("index", len(out))))] = row["content"]
    return out


def repetition_rate(by_turn: dict[tuple[str, int], str]) -> float:
    """Share of replies with a repeated 4-word run, or equal to an earlier reply of its transcript."""
    if not by_turn:
        return float("nan")
    seen: dict[str, set[str]] = {}
    looping = 0
    for (stem, _turn), text in sorted(by_turn.items()):
        words = re.findall(r"\w+", text.lower())
        grams = [" ".join(words[i : i + 4]) for i in range(len(words) - 3)]
        earlier = seen.setdefault(stem, set())
        if len(grams) != len(set(grams)) or text.strip() in earlier:
            looping += 1
        earlier.add(text.strip())
    return looping / len(by_turn)


def install_seconds(requirement: str) -> float:
    """Wall seconds of a cold ``pip install --no-cache-dir`` of ``requirement`` into a new venv."""
    with tempfile.TemporaryDirectory() as tmp:
        subprocess.run([sys.executable, "-m", "venv", tmp], check=True)
        env = {**os.environ, "CMAKE_ARGS": "-DGGML_NATIVE=OFF"}
        t = time.perf_counter()
        subprocess.run(
            [f"{tmp}/bin/python", "-m", "pip", "install", "--quiet", "--no-cache-dir", requirement],
            check=True,
            env=env,
        )
        return time.perf_counter() - t


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runs", type=int, default=2, help="cold main-job runs per binding (default 2)")
    ap.add_argument("--install", action="store_true", help="also time a cold install of each binding")
    args = ap.parse_args()
    installed = [b for b, (module, _) in BINDINGS.items() if importlib.util.find_spec(module) is not None]
    if not installed:
        sys.exit("no llama.cpp binding installed: pip install -e '.[local]' (or '.[local-source]')")
    print(f"bindings installed: {', '.join(installed)}; {args.runs} cold main-job run(s) each")
    for binding in BINDINGS:
        if args.install:
            print(f"{binding}: cold install {install_seconds(BINDINGS[binding][1]):.0f} s")
        if binding not in installed:
            print(f"{binding}: not installed, main job not measured")
            continue
        runs = []
        with tempfile.TemporaryDirectory() as tmp:
            for k in range(args.runs):
                runs.append(main_job(binding, Path(tmp) / f"run{k}"))
        walls = ", ".join(f"{w:.0f} s" for w, _, _ in runs)
        first = runs[0][2]
        same = all(r[2] == first for r in runs[1:])
        print(f"{binding}: main job {walls}; exit {', '.join(str(c) for _, c, _ in runs)}")
        print(f"  {len(first)} replies; identical across runs: {'yes' if same else 'NO'}")
        print(f"  repetition rate: {repetition_rate(first):.1%}")


if __name__ == "__main__":
    main()
