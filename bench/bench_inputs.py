"""Benchmark: ``empath-gate validate`` on large team layers and on a YAML alias bomb.

Writes three layers into a temporary folder and runs ``empath-gate validate --suites DIR`` on
each in a fresh process, printing the layer's size, the exit status, the wall time, the CPU
time (user + system: the figure to read on a busy machine) and the process's peak resident
memory (``wait4``; the layers are written by another process, so its memory is not counted):

* ``realistic``: about 1,400 seeds copied from the shipped ones (new ids and scenarios, most
  script words changed so no two scripts are near-duplicates), about 3 MB;
* ``minimal``: 40,000 seeds with only the required keys, about 3 MB;
* ``bomb``: a seed file of nested YAML aliases ("billion laughs", under 1 KB).

Targets (issue 14): each valid layer validates in under 5 s; the bomb ends with exit 2 within
2 s and under 200 MB.

    python bench/bench_inputs.py [--realistic 1400] [--minimal 40000]
"""

from __future__ import annotations

import argparse
import copy
import os
import subprocess
import sys
import tempfile
import time
import zlib
from pathlib import Path
from typing import Any

import yaml

from empath_gate.resources import shipped_suites_dir

BOMB = """seeds:
  - &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]
  - &b [*a,*a,*a,*a,*a,*a,*a,*a,*a]
  - &c [*b,*b,*b,*b,*b,*b,*b,*b,*b]
  - &d [*c,*c,*c,*c,*c,*c,*c,*c,*c]
  - &e [*d,*d,*d,*d,*d,*d,*d,*d,*d]
  - &f [*e,*e,*e,*e,*e,*e,*e,*e,*e]
  - &g [*f,*f,*f,*f,*f,*f,*f,*f,*f]
  - &h [*g,*g,*g,*g,*g,*g,*g,*g,*g]
  - &i [*h,*h,*h,*h,*h,*h,*h,*h,*h]
"""
"""Nine levels of nine aliases: 9**9 (about 387 million) strings once expanded."""


def _respell(text: str, k: int) -> str:
    """``text`` with about 70% of its words given the suffix ``k`` (deterministic)."""
    return " ".join(w + str(k) if zlib.crc32(f"{w}{k}".encode()) % 10 < 7 else w for w in text.split())


def realistic_seeds(n: int) -> list[dict[str, Any]]:
    """``n`` seeds copied from the shipped ones with new ids, scenarios and respelled scripts."""
    shipped: list[dict[str, Any]] = []
    for path in sorted((shipped_suites_dir() / "seeds").glob("*.yaml")):
        shipped += yaml.safe_load(path.read_text(encoding="utf-8"))["seeds"]
    out = []
    for i in range(n):
        seed = copy.deepcopy(shipped[i % len(shipped)])
        k = i // len(shipped) + 1  # the copy's number
        seed["id"] = f"{seed['id']}-b{k}"
        seed["scenario"] = f"{seed['scenario']}-b{k}"
        seed["script"] = [_respell(t, k) for t in seed["script"]]
        seed.pop("review", None)
        out.append(seed)
    return out


def minimal_seeds(n: int) -> list[dict[str, Any]]:
    """``n`` valid seeds with only the required keys: the shortest instruction and script allowed."""
    return [{"id": f"m{i:05d}", "locale": "en-US", "scenario": f"m{i:05d}",
             "instruction": f"You ask for help with worry {i:05d}.", "primary_metrics": ["crisis_detection"],
             "risk": {"level": "none"}, "script": [f"w{i}", f"x{i}"]}
            for i in range(n)]


def write_layer(root: Path, name: str, text: str) -> Path:
    """A layer ``root/name`` holding ``seeds/bench.yaml`` with ``text``; returns the layer."""
    (root / name / "seeds").mkdir(parents=True)
    (root / name / "seeds" / "bench.yaml").write_text(text, encoding="utf-8")
    return root / name


def validate(layer: Path) -> tuple[int, float, float, float]:
    """``(exit status, wall seconds, CPU seconds, peak MB)`` of ``empath-gate validate --suites layer``."""
    start = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-m", "empath_gate.cli", "validate", "--suites", str(layer)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, status, usage = os.wait4(proc.pid, 0)
    seconds = time.perf_counter() - start
    proc.returncode = os.waitstatus_to_exitcode(status)
    return proc.returncode, seconds, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024


def write_layers(root: Path, realistic: int, minimal: int) -> None:
    """The three layers of the module docstring, under ``root``."""
    write_layer(root, "realistic", yaml.safe_dump(
        {"seeds": realistic_seeds(realistic)}, allow_unicode=True, sort_keys=False, width=100))
    write_layer(root, "minimal", yaml.safe_dump(
        {"seeds": minimal_seeds(minimal)}, allow_unicode=True, sort_keys=False, width=200,
        default_flow_style=None))
    write_layer(root, "bomb", BOMB)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--realistic", type=int, default=1400, help="seeds of the realistic layer")
    parser.add_argument("--minimal", type=int, default=40_000, help="seeds of the minimal layer")
    parser.add_argument("--write", type=Path, help=argparse.SUPPRESS)  # the writing child process
    args = parser.parse_args()
    if args.write is not None:
        write_layers(args.write, args.realistic, args.minimal)
        return 0
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        subprocess.run([sys.executable, __file__, "--write", str(root), "--realistic", str(args.realistic),
                        "--minimal", str(args.minimal)], check=True)
        head = ("layer", "bytes", "seeds", "exit", "wall s", "CPU s", "peak MB")
        print("{:<10} {:>10} {:>6} {:>4} {:>7} {:>6} {:>8}".format(*head))
        for name, count in (("realistic", args.realistic), ("minimal", args.minimal), ("bomb", 0)):
            layer = root / name
            size = (layer / "seeds" / "bench.yaml").stat().st_size
            code, wall, cpu, peak = validate(layer)
            print(f"{name:<10} {size:>10,} {count:>6} {code:>4} {wall:>7.2f} {cpu:>6.2f} {peak:>8.0f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
