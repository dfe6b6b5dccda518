"""The budget is enforced per call: each call reserves its estimated cost before it starts, no
call starts once spend plus reservations reaches ``max_cost_usd``, and the overshoot is at most
one call per provider slot."""

from __future__ import annotations

import asyncio
import math
from pathlib import Path

import pytest
from conv_support import model_settings, specs

from empath_gate.conversation.engine import generate_sync
from empath_gate.errors import BudgetExceeded
from empath_gate.llm.accounting import Ledger, ledger_session, scope
from empath_gate.llm.client import complete, estimate_cost
from empath_gate.llm.tokens import RESERVED_COMPLETION_TOKENS, reservation_usd
from empath_gate.plan.estimate import render_estimate
from empath_gate.testing import FakeOpenAIServer, Reply

PRICED = "gpt-4o-mini"  # priced by litellm's local cost map, served by the fake server


def test_reservations_count_towards_the_budget_before_any_spend() -> None:
    ledger = Ledger(limit_usd=1.0)
    first = ledger.reserve("judge", 0.6)
    second = ledger.reserve("judge", 0.5)  # 0.6 reserved < 1.0: it may start
    with pytest.raises(BudgetExceeded, match="reserved by calls in flight"):
        ledger.reserve("target", 0.01)  # nothing spent yet, but 1.1 is reserved
    assert (ledger.refused, ledger.by_role["judge"].calls, ledger.by_role["target"].calls) == (1, 2, 0)
    ledger.settle("judge", first, cost_usd=0.2, usage=(10, 5))
    ledger.settle("judge", second, cost_usd=None, usage=(10, 5))  # returned usage, price unknown
    assert ledger.spent_usd == pytest.approx(0.2) and ledger.reserved_usd == pytest.approx(0.0)
    assert not ledger.exhausted
    judge = ledger.by_role["judge"]
    assert (judge.cost_usd, judge.unpriced_calls, judge.prompt_tokens) == (pytest.approx(0.2), 1, 20)


def test_a_failed_attempt_is_a_call_without_cost_and_scopes_attribute_calls() -> None:
    ledger = Ledger()
    with scope("t-r0"):
        ledger.settle("target", ledger.reserve("target", 0.0), cost_usd=None, usage=None)
    ledger.hit("target")
    assert ledger.scope_tally("t-r0")["target"].calls == 1
    assert ledger.scope_tally("t-r0")["target"].unpriced_calls == 0
    assert (ledger.by_role["target"].calls, ledger.by_role["target"].cache_hits) == (1, 1)
    assert ledger.scope_tally("other") == {}


def test_a_reservation_prices_the_prompt_and_the_completion_budget() -> None:
    messages = [{"role": "user", "content": "I can't sleep again. " * 50}]
    capped = reservation_usd(f"openai/{PRICED}", messages, 100)
    uncapped = reservation_usd(f"openai/{PRICED}", messages, None)
    assert 0 < capped < uncapped
    assert uncapped == pytest.approx(
        capped + (estimate_cost(f"openai/{PRICED}", 0, RESERVED_COMPLETION_TOKENS - 100) or 0.0)
    )
    assert reservation_usd("openai/not-a-priced-model", messages, 100) == 0.0  # unknown: cannot count


@pytest.mark.parametrize("slots", [1, 3])
def test_max_cost_stops_new_calls_with_overshoot_of_at_most_one_call_per_slot(
    fake_openai: FakeOpenAIServer, tmp_path: Path, slots: int
) -> None:
    # every reply reports far more tokens than were sent, so a call costs well above what it reserved
    fake_openai.on(PRICED, Reply("ok", usage={"prompt_tokens": 10_000, "completion_tokens": 1_000},
                                 latency_s=0.05))
    limit = 0.01
    settings = model_settings(
        fake_openai, tmp_path, target=f"openai/{PRICED}", max_cost_usd=limit, concurrency=6,
        target_role=fake_openai.role_settings(PRICED, concurrency=slots, max_tokens=50),
    )
    with ledger_session(limit) as ledger:
        transcripts = generate_sync(specs(6, 1, max_turns=3), settings=settings)
    per_call = max(turn.cost_usd or 0.0 for t in transcripts for turn in t.turns)
    assert per_call > 0.002
    assert ledger.spent_usd >= limit  # the budget was reached ...
    assert ledger.spent_usd <= limit + slots * per_call  # ... overshot by at most one call per slot
    calls = fake_openai.request_count
    assert calls == ledger.by_role["target"].calls <= math.ceil(limit / per_call) + slots
    assert ledger.refused >= 1 and all(t.status == "budget" for t in transcripts[-2:])
    assert sum(len([x for x in t.turns if x.role == "assistant"]) for t in transcripts) == calls


def test_a_call_refused_by_the_budget_reaches_no_server(fake_openai: FakeOpenAIServer) -> None:
    fake_openai.on(PRICED, "ok")
    role = fake_openai.role_settings(PRICED)

    async def call() -> None:
        await complete("judge", role, [{"role": "user", "content": "hi"}], seed=1, cache=None, cache_extra={})

    with ledger_session(0.001) as ledger:
        ledger.spent_usd = 0.001  # the budget is already spent
        with pytest.raises(BudgetExceeded):
            asyncio.run(call())
    assert fake_openai.request_count == 0 and ledger.refused == 1


def test_the_dry_run_prices_the_local_model_at_zero() -> None:
    assert estimate_cost("local/smollm2", 10_000, 1_000) == 0.0
    from empath_gate.plan.estimate import PlanEstimate, RoleEstimate

    est = PlanEstimate(suites=("smoke",), shard=None, conversations=1, runs=1, transcripts=1, tests=1, roles=(
        RoleEstimate("target", "local/smollm2", 4, 4, 100, 50, estimate_cost("local/smollm2", 100, 50)),
    ))
    text = render_estimate(est)
    assert "local/smollm2: 4 calls (at most 4)" in text and "~$0.00" in text
    assert "price unknown" not in text and "unpriced" not in text
