"""Benchmark: the cost of one target turn for a bot with its own JSON API (template target), as
JSON and as server-sent events, against an OpenAI-compatible HTTP target through litellm.

Runs ``--turns`` sequential turns of each kind against local fakes on 127.0.0.1 (the fake bot
of :mod:`empath_gate.testing.fake_bot`, the fake OpenAI server), no cache, and prints the
milliseconds per turn and the ratio of each template kind to the litellm path. What it
measures is the client side (request building, the retry loop, the ledger, parsing): the fakes
answer at once.

    python bench/bench_template_target.py [--turns 200] [--repeat 3]
"""

from __future__ import annotations

import argparse
import asyncio
import time
from pathlib import Path
from tempfile import TemporaryDirectory
from typing import Any

from empath_gate.conversation.target import HttpTarget, Target
from empath_gate.conversation.template_spec import parse_template
from empath_gate.conversation.template_target import TemplateTarget
from empath_gate.settings import RoleSettings, Settings
from empath_gate.testing import FakeBot, FakeOpenAIServer

BODY = {"conversation_id": "{{conversation_id}}", "session_id": "{{session_id}}",
        "input": {"text": "{{message}}"}}
JSON_T = {"body": BODY, "reply_path": "output.text", "session": {"id_path": "session.id"}}
SSE_T = {"body": BODY, "reply_path": "$.delta.text", "session": {"id_path": "$.session.id"}, "stream": True}


async def turns(target: Target, n: int) -> float:
    """Seconds per turn over ``n`` turns of one growing conversation."""
    msgs: list[dict[str, Any]] = []
    t0 = time.perf_counter()
    for k in range(n):
        msgs.append({"role": "user", "content": f"message number {k}: I can't sleep and I'm worn out."})
        r = await target.reply(msgs, conversation_id="bench-r0", run=0, seed=1, cache=None)
        msgs.append({"role": "assistant", "content": r.content})
    return (time.perf_counter() - t0) / n


def main() -> None:
    """Parse the options, time each kind ``--repeat`` times, print the best of each and ratios."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--turns", type=int, default=200, help="turns per pass")
    ap.add_argument("--repeat", type=int, default=3, help="passes per kind")
    args = ap.parse_args()
    role = RoleSettings(max_retries=0, timeout_s=30.0)
    with FakeBot(responder=lambda users: f"reply {len(users)} " * 20) as bot, FakeOpenAIServer() as oa, \
            TemporaryDirectory() as tmp:
        oa.on("empath-target", lambda _req: "reply " * 20)
        kinds: dict[str, Target] = {
            "template json": TemplateTarget(bot.url, parse_template(JSON_T, "json"),
                                            Settings(target=bot.url, target_role=role), env={}),
            "template sse": TemplateTarget(bot.stream_url, parse_template(SSE_T, "sse"),
                                           Settings(target=bot.stream_url, target_role=role), env={}),
            "openai-compatible (litellm)": HttpTarget(oa.base_url, Settings(
                target=oa.base_url, target_role=role, cache_dir=Path(tmp)), env={}),
        }
        best: dict[str, float] = {}
        for name, target in kinds.items():
            for n in range(args.repeat):
                s = asyncio.run(turns(target, args.turns))
                best[name] = min(best.get(name, s), s)
                print(f"{name:28s} pass {n + 1}: {s * 1000:.2f} ms/turn")
    base = best["openai-compatible (litellm)"]
    for name, s in best.items():
        print(f"best {name:28s} {s * 1000:.2f} ms/turn  ({s / base:.2f}x the litellm path)")


if __name__ == "__main__":
    main()
