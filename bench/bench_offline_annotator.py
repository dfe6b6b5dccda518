"""Throughput of the offline turn annotator (no model): turns per second, and the projected time
for the dynamics bench's 10,000 conversations x 20 turns.

Run: ``python bench/bench_offline_annotator.py [--conversations 500] [--turns 20]``.

Builds dialogues from the shipped seeds' scripts (user turns) alternating with a fixed set of
bot replies in the seed's locale, labels them with ``empath_gate.turns.offline.annotate`` and
prints: the turns labelled, the wall and CPU (process) time, turns per second, microseconds per
turn (user and assistant turns timed apart), and the projection to 200,000 turns. Load the instrument once
before timing (as a command would).
"""

from __future__ import annotations

import argparse
import itertools
import time

from empath_gate.turns.labelset import shipped_instrument
from empath_gate.turns.model import Dialogue, DialogueTurn
from empath_gate.turns.offline import annotate

BOT = {
    "en-US": (
        "I'm really sorry you're going through this. What has been the hardest part?",
        "It sounds like you feel exhausted and alone. You could try writing down what happened today.",
        "If you are in danger, please call or text 988 right now. Are you safe?",
    ),
    "es-MX": (
        "Lamento mucho lo que estás viviendo. ¿Qué ha sido lo más difícil?",
        "Suena a que te sientes agotada y sola. Podrías intentar escribir lo que pasó hoy.",
        "Si estás en peligro, llama a la Línea de la Vida al 800 911 2000. ¿Estás a salvo?",
    ),
}


def dialogues(n: int, turns: int) -> list[Dialogue]:
    """``n`` dialogues of ``turns`` turns from the shipped seeds (scripts repeated to length)."""
    inst = shipped_instrument()
    out = []
    for k, seed in zip(range(n), itertools.cycle(inst.seeds), strict=False):
        users = itertools.cycle(seed.script)
        bots = itertools.cycle(BOT[seed.locale])
        items = [DialogueTurn(role="user", text=next(users)) if i % 2 == 0
                 else DialogueTurn(role="assistant", text=next(bots)) for i in range(turns)]
        out.append(Dialogue(conversation_id=f"c{k}", locale=seed.locale, turns=tuple(items)))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--conversations", type=int, default=500)
    parser.add_argument("--turns", type=int, default=20)
    args = parser.parse_args()
    data = dialogues(args.conversations, args.turns)
    annotate(data[0])  # compile the lexicons once
    def only(role: str) -> list[Dialogue]:
        return [d.model_copy(update={"turns": tuple(t for t in d.turns if t.role == role)}) for d in data]

    user_only, bot_only = only("user"), only("assistant")
    timings = {}
    for name, batch in (("all", data), ("user", user_only), ("assistant", bot_only)):
        t0, c0 = time.perf_counter(), time.process_time()
        for d in batch:
            annotate(d)
        turns = sum(len(d.turns) for d in batch)
        timings[name] = (time.perf_counter() - t0, time.process_time() - c0, turns)
    wall, cpu, n = timings["all"]
    print(f"turns labelled: {n:,} in {wall:.2f} s wall ({cpu:.2f} s CPU): {n / wall:,.0f} turns/s, "
          f"{wall / n * 1e6:.0f} us/turn wall, {cpu / n * 1e6:.0f} us/turn CPU")
    for role in ("user", "assistant"):
        w, c, k = timings[role]
        print(f"  {role} turns: {w / k * 1e6:.0f} us/turn wall, {c / k * 1e6:.0f} us/turn CPU")
    print(f"projected for 10,000 conversations x 20 turns: {200_000 * wall / n:.1f} s wall, "
          f"{200_000 * cpu / n:.1f} s CPU (annotation only; wall > CPU when the machine is shared)")


if __name__ == "__main__":
    main()
