"""Benchmark: pytest collection of the largest plan the instrument allows.

Writes a team suites directory with one suite, ``bench-all``: every seed, ``metrics: all``,
every persona of each seed's locale; then runs, in a subprocess,

    pytest --collect-only -q --empath-suite bench-all --empath-suites-dir DIR --empath-offline \\
        --empath-target openai/not-called

and prints the number of items, the wall time and the subprocess's peak RSS. Target (issue 5):
~45k items collected in under 15 s and under 500 MB. Also times a plain ``--collect-only`` of
an empty project with and without the plugin loaded, to show it costs nothing when no suite
is requested.

    python bench/bench_pytest_collect.py
"""

from __future__ import annotations

import os
import re
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

SUITE = """\
suites:
  - id: bench-all
    label: Everything
    description: every seed x every persona of its locale x every metric (benchmark only)
    seeds:
      all: true
    metrics: all
    personas:
      mode: all
    runs: 3
"""


def run(cmd: list[str], cwd: Path) -> tuple[float, str]:
    t = time.perf_counter()
    proc = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, env={**os.environ, "CI": ""})
    wall = time.perf_counter() - t
    if proc.returncode not in (0, 5):
        sys.exit(f"{' '.join(cmd)} failed ({proc.returncode}):\n{proc.stdout[-2000:]}\n{proc.stderr[-2000:]}")
    return wall, proc.stdout


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        team = root / "suites"
        team.mkdir()
        (team / "suites.yaml").write_text(SUITE, encoding="utf-8")
        (root / "test_nothing.py").write_text("def test_ok():\n    pass\n", encoding="utf-8")

        before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
        wall, out = run(
            [sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider",
             "--empath-suite", "bench-all", "--empath-suites-dir", str(team), "--empath-offline",
             # a configured target (never called by --collect-only): the offline subset of the
             # embedded bot does not apply, so the whole plan is collected
             "--empath-target", "openai/not-called"],
            root,
        )
        peak_mb = max(before, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss) / 1024
        m = re.search(r"(\d+) tests? collected", out)
        items = int(m.group(1)) if m else sum(1 for line in out.splitlines() if "::" in line)
        print(f"bench-all: {items} items collected in {wall:.2f} s, peak RSS {peak_mb:.0f} MB "
              f"(target: < 15 s, < 500 MB)")

        plain = [sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider"]
        with_plugin = min(run(plain, root)[0] for _ in range(3))
        without = min(run([*plain, "-p", "no:empath_gate"], root)[0] for _ in range(3))
        print(f"no suite requested: collect-only {with_plugin:.2f} s with the plugin, "
              f"{without:.2f} s without it (best of 3)")


if __name__ == "__main__":
    main()
