"""Bench: how much of the judge's input a provider's prompt cache can serve (template ``judge-v2``).

For each suite (default: smoke, crisis, full), every run (``--runs``, default 3) of every
conversation of its plan is judged with one call per transcript (the default granularity).
The judge prompt is built with the real template
(:func:`empath_gate.judging.prompts.build_judge_messages`) on the conversation's known user
turns, with :data:`empath_gate.plan.estimate.TARGET_REPLY_TOKENS` tokens assumed for each
target reply (the dry-run estimate's assumption). Tokens are counted with the offline
tokenizer of :mod:`empath_gate.llm.tokens` (cl100k_base, bundled in litellm).

Printed per suite: judge calls, distinct system messages (stable prefixes), prompt tokens, the
share of prompt tokens in the stable system message, the share a prefix cache can serve (a
system message of at least 1,024 tokens, OpenAI's minimum, sent before in the same run:
every call after the first of its metric group), and the judge's input cost per run with and
without caching at litellm's local prices for ``gpt-4o-mini`` (cached input at
``cache_read_input_token_cost``) and ``claude-haiku-4-5`` (cache reads at
``cache_read_input_token_cost``; the first sight of a prefix written at
``cache_creation_input_token_cost``). Real savings depend on the provider keeping the prefix
(minutes) between calls: a run that judges as transcripts complete keeps it warm.

Run: ``python bench/bench_judge_prefix.py [--suite crisis ...]``.
"""

from __future__ import annotations

import argparse
import os

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

from empath_gate.instrument.identity import script_for
from empath_gate.instrument.loader import load_instrument
from empath_gate.judging.prompts import build_judge_messages
from empath_gate.llm.client import litellm_module
from empath_gate.llm.tokens import MESSAGE_OVERHEAD_TOKENS, count_tokens
from empath_gate.plan.build import build_plan
from empath_gate.plan.estimate import TARGET_REPLY_TOKENS, UNSCRIPTED_USER_TURN, _skeleton

MIN_CACHED = 1024
"""Shortest prefix OpenAI caches (its prompt-caching guide); Anthropic's minimum is 1,024 or
2,048 tokens by model, so the same floor is used for both here."""

MODELS = ("gpt-4o-mini", "claude-haiku-4-5")


def suite_row(suite: str, runs: int) -> dict[str, float]:
    inst = load_instrument()
    plan = build_plan(inst, (suite,))
    seen: set[str] = set()
    calls = system_total = user_total = cacheable = first_writes = 0
    for conv in plan.conversations:
        if not conv.metric_ids:
            continue
        script = script_for(inst.seed(conv.seed_id), inst.persona(conv.persona_id))
        users = list(script[: conv.max_turns]) if script else [UNSCRIPTED_USER_TURN] * conv.max_turns
        system, user = build_judge_messages(
            _skeleton(conv, users), [inst.metric(m) for m in conv.metric_ids], "strict"
        )
        s_tok = count_tokens(system["content"]) + MESSAGE_OVERHEAD_TOKENS
        u_tok = count_tokens(user["content"]) + MESSAGE_OVERHEAD_TOKENS + len(users) * TARGET_REPLY_TOKENS
        for _ in range(runs):  # each run of the conversation is judged with the same prefix
            calls += 1
            system_total += s_tok
            user_total += u_tok
            if s_tok >= MIN_CACHED:
                if system["content"] in seen:
                    cacheable += s_tok
                else:
                    first_writes += s_tok
            seen.add(system["content"])
    row: dict[str, float] = {
        "calls": calls, "prefixes": len(seen), "prompt": system_total + user_total,
        "stable": system_total / max(1, system_total + user_total),
        "cacheable": cacheable / max(1, system_total + user_total),
    }
    cost = litellm_module().model_cost
    for model in MODELS:
        p = cost[model]
        full = row["prompt"] * p["input_cost_per_token"]
        write = p.get("cache_creation_input_token_cost") or p["input_cost_per_token"]
        if not model.startswith("claude"):
            write = p["input_cost_per_token"]  # OpenAI charges no cache write
        cached = ((row["prompt"] - cacheable - first_writes) * p["input_cost_per_token"]
                  + cacheable * p["cache_read_input_token_cost"] + first_writes * write)
        row[f"{model} full"] = full
        row[f"{model} cached"] = cached
    return row


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--suite", action="append", help="suite id (repeatable; default smoke, crisis, full)")
    ap.add_argument("--runs", type=int, default=3, help="runs per conversation (default 3, as shipped)")
    args = ap.parse_args()
    suites = args.suite or ["smoke", "crisis", "full"]
    print(f"runs per conversation: {args.runs}")
    print(f"{'suite':<8} {'calls':>6} {'prefixes':>8} {'prompt tok':>10} {'stable':>7} {'cacheable':>9}  "
          + "  ".join(f"{m} input $ (full -> cached, ratio)" for m in MODELS))
    for suite in suites:
        r = suite_row(suite, args.runs)
        prices = "  ".join(
            f"{r[f'{m} full']:.4f} -> {r[f'{m} cached']:.4f} ({r[f'{m} cached'] / r[f'{m} full']:.2f}x)"
            for m in MODELS
        )
        print(f"{suite:<8} {int(r['calls']):>6} {int(r['prefixes']):>8} {int(r['prompt']):>10} "
              f"{r['stable']:>7.0%} {r['cacheable']:>9.0%}  {prices}")


if __name__ == "__main__":
    main()
