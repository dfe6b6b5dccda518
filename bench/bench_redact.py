"""Benchmark: taking secrets out of a large report body (:func:`empath_gate.secrets.redact`).

Builds an HTML-like body of ``--mb`` megabytes from a bot reply that holds a URL and the word
"token" on every line (the slow case: every occurrence is tried as a credential shape), with
``--secrets`` registered values, and prints megabytes, seconds per pass and MB/s. Every write
edge (results, transcripts, cache, HTML, markdown) pays this per byte it writes.

    python bench/bench_redact.py [--mb 5] [--secrets 20] [--repeat 3]
"""

from __future__ import annotations

import argparse
import time

from empath_gate.secrets import redact, register

LINE = (
    "<p>Hola, estoy aquí contigo. Llama a la Línea de la Vida 800 911 2000. "
    "https://x.example/a?b=1 token budget</p>\n"
)


def main() -> None:
    """Parse the options, run the passes, print one line per pass and the best."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--mb", type=float, default=5.0, help="size of the body in megabytes")
    ap.add_argument("--secrets", type=int, default=20, help="registered secret values")
    ap.add_argument("--repeat", type=int, default=3, help="passes")
    args = ap.parse_args()
    register(f"bench-secret-{i:04d}-value" for i in range(args.secrets))
    text = LINE * max(1, int(args.mb * 1e6 / len(LINE.encode("utf-8"))))
    size = len(text.encode("utf-8")) / 1e6
    best = float("inf")
    for n in range(args.repeat):
        t0 = time.perf_counter()
        out = redact(text)
        dt = time.perf_counter() - t0
        best = min(best, dt)
        print(f"pass {n + 1}: {size:.1f} MB in {dt:.2f} s ({size / dt:.1f} MB/s), changed: {out != text}")
    print(f"best: {size:.1f} MB in {best:.2f} s ({size / best:.1f} MB/s)")


if __name__ == "__main__":
    main()
