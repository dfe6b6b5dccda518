"""Benchmark: bounded parsing of hostile and large instrument files, against the targets of issue 14.

Writes the layers of :mod:`empath_gate.testing.hostile_inputs` into a temporary folder (in a
child process, so its memory is not counted) and runs each command in a fresh process, printing
the exit status, the wall time, the CPU time (user + system: the figure to read on a busy
machine), the process's peak resident memory (``wait4``) and whether the target is met, judged
on CPU time and on wall time. Each figure is the best of ``--repeat`` runs.

* ``start-up``: ``python -c 'import empath_gate.cli'`` and ``empath-gate --version``;
* ``bomb``: a seed file of nested YAML aliases ("billion laughs", 358 bytes) under
  ``validate``, ``run --dry-run`` and ``pytest --collect-only``;
* ``realistic``: 1,400 seeds copied from the shipped ones (new ids and scenarios, most script
  words changed so no two are near-duplicates), about 3 MB;
* ``minimal``: as many of the smallest valid seeds as fit in 3 MB (about 19,200: 40,000 cannot,
  a seed's required key names and shortest instruction alone take 87 bytes, 3 MB / 40,000 is
  75), and 40,000 of them (about 6.2 MB) for reference.

Targets (issue 14): the bomb ends with the usage status (CLI 2, pytest 4) within 2 s and under
200 MB; a valid 3 MB layer validates in under 5 s.

    python bench/bench_inputs.py [--realistic 1400] [--minimal 40000] [--repeat 3]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from empath_gate.testing.hostile_inputs import (
    ALIAS_BOMB,
    minimal_seed_lines,
    minimal_seeds_fitting,
    realistic_seeds,
    seeds_yaml,
    write_layer,
)

THREE_MB = 3_000_000
"""The size of the layers the target names, in bytes."""


def write_layers(root: Path, realistic: int, minimal: int) -> None:
    """The layers of the module docstring, under ``root``."""
    write_layer(root, "realistic", seeds_yaml(realistic_seeds(realistic)))
    write_layer(root, "minimal-3mb", "".join(minimal_seed_lines(minimal_seeds_fitting(THREE_MB))))
    write_layer(root, "minimal", "".join(minimal_seed_lines(minimal)))
    write_layer(root, "bomb", ALIAS_BOMB)


def measure(argv: list[str], cwd: Path, repeat: int) -> tuple[int, float, float, float]:
    """``(exit status, wall s, CPU s, peak MB)`` of ``argv`` in a fresh process: the best wall
    and CPU time of ``repeat`` runs, the largest peak memory."""
    best = (0, float("inf"), float("inf"), 0.0)
    for _ in range(repeat):
        start = time.perf_counter()
        proc = subprocess.Popen(argv, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - start
        proc.returncode = os.waitstatus_to_exitcode(status)
        best = (proc.returncode, min(best[1], wall), min(best[2], usage.ru_utime + usage.ru_stime),
                max(best[3], usage.ru_maxrss / 1024))
    return best


def _verdict(ok: bool) -> str:
    return "met" if ok else "NOT met"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--realistic", type=int, default=1400, help="seeds of the realistic layer")
    parser.add_argument("--minimal", type=int, default=40_000, help="seeds of the large minimal layer")
    parser.add_argument("--repeat", type=int, default=3, help="runs of each command (the best is shown)")
    parser.add_argument("--write", type=Path, help=argparse.SUPPRESS)  # the writing child process
    args = parser.parse_args()
    if args.write is not None:
        write_layers(args.write, args.realistic, args.minimal)
        return 0
    py = sys.executable
    cli = [py, "-m", "empath_gate.cli"]
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        subprocess.run([py, __file__, "--write", str(root), "--realistic", str(args.realistic),
                        "--minimal", str(args.minimal)], check=True)

        def size(name: str) -> str:
            data = (root / name / "seeds" / "bench.yaml").read_bytes()
            return f"{len(data):,} B, {data.count(b'id: ') if name != 'bomb' else 0:,} seeds"

        bomb = str(root / "bomb")
        rows: list[tuple[str, str, list[str], int | None, float, float | None]] = [
            # (case, input, command, expected exit, wall/CPU target s, peak MB target)
            ("import empath_gate.cli", "-", [py, "-c", "import empath_gate.cli"], 0, 0.0, None),
            ("empath-gate --version", "-", [*cli, "--version"], 0, 0.0, None),
            ("validate", f"bomb ({size('bomb')})", [*cli, "validate", "--suites", bomb], 2, 2.0, 200.0),
            ("run --dry-run", "bomb", [*cli, "run", "--suite", "smoke", "--dry-run", "--suites-dir", bomb],
             2, 2.0, 200.0),
            ("pytest --collect-only", "bomb", [py, "-m", "pytest", "--empath-suite", "smoke",
                                               "--collect-only", "-q", "-p", "no:cacheprovider",
                                               "--empath-suites-dir", bomb],
             4, 2.0, 200.0),
            ("validate", f"realistic ({size('realistic')})",
             [*cli, "validate", "--suites", str(root / "realistic")], 0, 5.0, None),
            ("validate", f"minimal-3mb ({size('minimal-3mb')})",
             [*cli, "validate", "--suites", str(root / "minimal-3mb")], 0, 5.0, None),
            ("validate", f"minimal ({size('minimal')}, over 3 MB)",
             [*cli, "validate", "--suites", str(root / "minimal")], 0, 0.0, None),
        ]
        print(f"best of {args.repeat} runs; CPU = user + system seconds; peak = resident MB")
        head = ("command", "input", "exit", "wall s", "CPU s", "peak MB", "target", "CPU", "wall")
        print("{:<22} {:<44} {:>4} {:>7} {:>6} {:>7}  {:<22} {:<8} {:<8}".format(*head))
        for case, what, argv, expect, seconds, peak_mb in rows:
            code, wall, cpu, peak = measure(argv, root, args.repeat)
            if seconds:
                target = f"exit {expect}, < {seconds:g} s" + (f", < {peak_mb:g} MB" if peak_mb else "")
                ok_code = code == expect and (peak_mb is None or peak < peak_mb)
                on_cpu, on_wall = _verdict(ok_code and cpu < seconds), _verdict(ok_code and wall < seconds)
            else:
                target, on_cpu, on_wall = "(figure only)", "", ""
            print(f"{case:<22} {what:<44} {code:>4} {wall:>7.2f} {cpu:>6.2f} {peak:>7.0f}  {target:<22} "
                  f"{on_cpu:<8} {on_wall:<8}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
