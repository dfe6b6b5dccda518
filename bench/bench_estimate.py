"""Bench: ``empath-gate run --dry-run``'s estimate against the actual calls and tokens of a run.

For each suite (default: smoke and crisis) and each auditor mode (fixed-script, LLM auditor),
the script prints the dry-run estimate (:func:`empath_gate.plan.estimate.estimate`) and then
runs the plan on a cold cache against the fake OpenAI-compatible server
(``empath_gate.testing.FakeOpenAIServer``, in this process): an HTTP target answered by the
scenario bot (``TargetBot("safe")``), the scenario auditor that plays the seed's script
(``ScriptAuditor``) and a judge that returns valid strict JSON (``ScoringJudge``). Nothing
leaves 127.0.0.1.

Actual calls are the requests the fake server received; actual tokens are counted on what was
really sent and returned (every request's messages, every reply's text) with the same offline
tokenizer the estimate uses (:func:`empath_gate.llm.tokens.tokenizer_name`: tiktoken's
``cl100k_base`` as bundled inside litellm's package, so nothing is downloaded). The fake
server's own ``usage`` figures (word counts) are not used.

Printed per row: suite, mode, calls estimated / actual / ratio, prompt and completion tokens
estimated / actual / ratio. Targets (issue "Verdicts a safety team can trust", item 5): calls
exact in fixed-script mode, within 10 % with an LLM auditor; tokens within 20 %. The target
replies' and judge replies' lengths are the estimate's assumptions (see
``empath_gate.plan.estimate``), so the token ratios say how the fake models' reply lengths
compare with them.

Run: ``python bench/bench_estimate.py`` (``--suite`` to choose, ``--runs`` per conversation,
default 1: the estimate is linear in runs).
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run from a checkout without installing

from tabulate import tabulate

from empath_gate.testing import FakeOpenAIServer, FakeRequest, Fault, Reply
from empath_gate.testing.scenarios import (
    ScoringJudge,
    ScriptAuditor,
    TargetBot,
    install,
    role_env,
    seed_table,
)

Responder = Callable[[FakeRequest], str | Reply | Fault]


class CountingReplies:
    """Wraps a fake model: records the tokens of every reply text it returns."""

    def __init__(self, fn: Responder) -> None:
        self.fn = fn
        self.texts: list[str] = []
        self.lock = threading.Lock()

    def __call__(self, req: FakeRequest) -> str | Reply | Fault:
        out = self.fn(req)
        text = out if isinstance(out, str) else out.content if isinstance(out, Reply) else None
        with self.lock:
            self.texts.append(text or "")
        return out


@contextmanager
def environment(values: dict[str, str]) -> Iterator[None]:
    """``values`` in ``os.environ`` for the block (and every ``EMPATH_*`` of the caller cleared)."""
    saved = dict(os.environ)
    for key in [k for k in os.environ if k.startswith("EMPATH_") or k == "CI"]:
        del os.environ[key]
    os.environ.update(values)
    try:
        yield
    finally:
        os.environ.clear()
        os.environ.update(saved)


def measure(suite: str, *, llm_auditor: bool, runs: int) -> dict[str, Any]:
    """Estimate, then run ``suite`` on a cold cache; the figures of one row."""
    from empath_gate.llm.tokens import count_tokens, message_tokens
    from empath_gate.plan.estimate import estimate
    from empath_gate.run import prepare, run_plan
    from empath_gate.settings import load_settings

    with FakeOpenAIServer(strict=False) as server, tempfile.TemporaryDirectory() as tmp:
        values = role_env(server, target="http", auditor=llm_auditor, judge=True)
        values.update({"EMPATH_CACHE_DIR": str(Path(tmp) / "cache"), "EMPATH_RUNS": str(runs),
                       "EMPATH_RESULTS": str(Path(tmp) / "results.json")})
        with environment(values):
            setup = prepare(load_settings(pyproject=None), [suite])
            est = estimate(setup.plan, setup.instrument, setup.profile)
            ids = [c.conversation_id for c in setup.plan.conversations]
            replies = [CountingReplies(TargetBot("safe")), CountingReplies(ScriptAuditor()),
                       CountingReplies(ScoringJudge(default=9, seeds=seed_table(ids, setup.plan.runs)))]
            install(server, target=replies[0], auditor=replies[1], judge=replies[2])
            run_plan(setup)
        prompt = sum(message_tokens(r.messages) for r in server.requests)
        completion = sum(count_tokens(t) for c in replies for t in c.texts)
        return {
            "suite": suite,
            "mode": "LLM auditor" if llm_auditor else "fixed script",
            "calls": (sum(r.calls for r in est.roles), server.request_count),
            "prompt": (sum(r.prompt_tokens for r in est.roles), prompt),
            "completion": (sum(r.completion_tokens for r in est.roles), completion),
        }


def _cell(pair: tuple[int, int]) -> list[str]:
    est, actual = pair
    ratio = f"{est / actual:.2f}" if actual else "n/a"
    return [f"{est:,}", f"{actual:,}", ratio]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0] if __doc__ else None)
    parser.add_argument("--suite", action="append", help="suite to measure (default: smoke and crisis)")
    parser.add_argument("--runs", type=int, default=1, help="runs per conversation (default 1)")
    args = parser.parse_args(argv)
    from empath_gate.llm.tokens import tokenizer_name

    rows = []
    for suite in args.suite or ["smoke", "crisis"]:
        for llm_auditor in (False, True):
            m = measure(suite, llm_auditor=llm_auditor, runs=args.runs)
            figures = [c for key in ("calls", "prompt", "completion") for c in _cell(m[key])]
            rows.append([m["suite"], m["mode"], *figures])
            print(*rows[-1], file=sys.stderr, flush=True)
    print(f"tokenizer: {tokenizer_name()}; runs per conversation: {args.runs}; cold cache; fake server")
    print(tabulate(rows, headers=[
        "suite", "mode", "calls est", "calls actual", "ratio", "prompt est", "prompt actual", "ratio",
        "completion est", "completion actual", "ratio",
    ], disable_numparse=True))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
