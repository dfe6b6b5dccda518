"""Benchmark: ``empath-gate dynamics`` on 10,000 conversations x 20 messages, offline.

Writes a synthetic JSONL of external conversations (deterministic: fixed seed; English and
Mexican Spanish; sadness, fear, hopelessness, relief and hope phrases, some explicit risk
statements, bot replies of several strategies), then runs the command's CLI path
(``empath-gate dynamics FILE -o DIR``) in a fresh process and prints its wall time, CPU time
(user + system: the figure to read on a busy machine), peak resident memory (``wait4``; the
file is written by this process, so its memory is not counted), the sizes of dynamics.json
and dynamics.html, and each against its target (issue 16: under 60 s, under 1 GB, HTML at
most 2 MB).

The real offline annotator (``empath_gate.turns.offline``: the lexicons, negation, intensifiers
and risk phrases) labels every message, as the command does; the load average before and after
is printed, since the machine may be shared (read CPU time against wall time).

    python bench/bench_dynamics.py [--conversations 10000] [--messages 20]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

TARGET_WALL_S = 60.0
TARGET_RSS_MB = 1024.0
TARGET_HTML_BYTES = 2_000_000

USER = {
    "en-US": [
        "I want to die, I can't keep going like this",
        "I feel hopeless, it will never change",
        "I'm so sad since my mom died",
        "I'm scared all the time, my chest is tight",
        "I'm angry at everyone, they never listen",
        "I don't know, I just feel nothing today",
        "I'm a bit better after talking to you",
        "Maybe there is some hope, I called my sister",
    ],
    "es-MX": [
        "Ya no quiero vivir, no aguanto más",
        "Me siento sin esperanza, esto no va a cambiar",
        "Estoy muy triste desde que murió mi mamá",
        "Tengo miedo todo el tiempo, no duermo",
        "Estoy enojada con todos, nadie me escucha",
        "No sé, hoy no siento nada",
        "Me siento un poco mejor después de platicar contigo",
        "Tal vez hay esperanza, le marqué a mi hermana",
    ],
}
"""User messages from the lowest valence to the highest (the generator walks along them)."""
BOT = {
    "en-US": [
        "That sounds really painful. What happened today?",
        "Try going for a short walk and drinking water.",
        "It makes sense that you feel this way after such a loss.",
        "You are not alone; I'm here with you.",
        "If you are in danger, please call or text 988 now.",
        "So you have been carrying this for weeks.",
    ],
    "es-MX": [
        "Suena muy doloroso. ¿Qué pasó hoy?",
        "Intenta salir a caminar un rato y tomar agua.",
        "Tiene sentido que te sientas así después de esa pérdida.",
        "No estás sola; aquí estoy contigo.",
        "Si estás en peligro, llama a la Línea de la Vida al 800 911 2000.",
        "Entonces llevas semanas cargando con esto.",
    ],
}


def write_conversations(path: Path, conversations: int, messages: int, seed: int = 16) -> int:
    """Write the synthetic JSONL; returns its size in bytes."""
    rng = random.Random(seed)
    with path.open("w", encoding="utf-8") as fh:
        for c in range(conversations):
            locale = "es-MX" if c % 2 else "en-US"
            mood, drift = rng.randrange(1, 6), rng.choice((-1, 0, 0, 1))
            for t in range(messages):
                if t % 2 == 0:
                    mood = max(0, min(7, mood + rng.choice((-1, 0, 0, 1, drift, drift))))
                    text, role = USER[locale][mood], "texter"
                else:
                    text, role = rng.choice(BOT[locale]), "volunteer"
                row = {
                    "conversation_id": f"conv-{c:05d}",
                    "turn": t + 1,
                    "role": role,
                    "text": text,
                    "locale": locale,
                }
                fh.write(json.dumps(row, ensure_ascii=False) + "\n")
    return path.stat().st_size


def child(files: list[str], out: str) -> int:
    """The measured process: the command's CLI path with its own (offline) annotator."""
    from empath_gate.cli import main

    return main(["dynamics", *files, "-o", out])


def _load() -> str:
    """The machine's load averages (1, 5, 15 minutes) and cores, as ``uptime`` shows them."""
    one, five, fifteen = os.getloadavg()
    return f"load average {one:.2f}, {five:.2f}, {fifteen:.2f} on {os.cpu_count()} cores"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--conversations", type=int, default=10_000)
    parser.add_argument("--messages", type=int, default=20)
    parser.add_argument("--child", nargs=2, metavar=("FILE", "OUT"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        return child([args.child[0]], args.child[1])
    with tempfile.TemporaryDirectory(prefix="bench-dynamics-") as tmp:
        data = Path(tmp) / "conversations.jsonl"
        size = write_conversations(data, args.conversations, args.messages)
        out = Path(tmp) / "out"
        print(f"input: {args.conversations:,} conversations x {args.messages} messages, "
              f"{size / 1e6:.1f} MB JSONL")
        print("annotator: the offline annotator (empath_gate.turns.offline)")
        print(f"before: {_load()}")
        t = time.perf_counter()
        out_log, err_log = Path(tmp) / "stdout.txt", Path(tmp) / "stderr.txt"
        with out_log.open("w") as so, err_log.open("w") as se:
            proc = subprocess.Popen(
                [sys.executable, __file__, "--child", str(data), str(out)], stdout=so, stderr=se
            )
            _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - t
        stdout, stderr = out_log.read_text(encoding="utf-8"), err_log.read_text(encoding="utf-8")
        code = os.waitstatus_to_exitcode(status)
        cpu = usage.ru_utime + usage.ru_stime
        rss_mb = usage.ru_maxrss / 1024  # KiB on Linux
        print(f"exit status: {code}")
        if code != 0:
            print(stderr[-2000:])
            return 1
        print(stdout.strip().splitlines()[0] if stdout.strip() else "")
        json_size = (out / "dynamics.json").stat().st_size
        html_size = (out / "dynamics.html").stat().st_size
        left = "left-out" in (out / "dynamics.html").read_text(encoding="utf-8")
        print(f"progress lines on stderr: {sum('labelled' in ln for ln in stderr.splitlines())}")
        print(f"wall: {wall:.1f} s (target < {TARGET_WALL_S:.0f} s, ratio {wall / TARGET_WALL_S:.2f})")
        print(f"cpu:  {cpu:.1f} s (user + system)")
        print(
            f"peak RSS: {rss_mb:.0f} MB (target < {TARGET_RSS_MB:.0f} MB, ratio {rss_mb / TARGET_RSS_MB:.2f})"
        )
        print(f"dynamics.json: {json_size / 1e6:.1f} MB")
        print(
            f"dynamics.html: {html_size / 1e6:.2f} MB (target <= {TARGET_HTML_BYTES / 1e6:.0f} MB, ratio "
            f"{html_size / TARGET_HTML_BYTES:.2f}; conversation list cut: {'yes' if left else 'no'})"
        )
        print(f"after: {_load()}")
        ok = wall < TARGET_WALL_S and rss_mb < TARGET_RSS_MB and html_size <= TARGET_HTML_BYTES
        print("within targets" if ok else "OVER A TARGET")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
