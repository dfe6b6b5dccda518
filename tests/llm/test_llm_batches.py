"""Provider batch results are read fail-closed, request bodies carry no credential, and the ledger
counts what the cache and a batch saved."""

from __future__ import annotations

import asyncio
import json

import pytest
from pydantic import SecretStr

from empath_gate.llm.accounting import Ledger, ledger_session, scope
from empath_gate.llm.batches import (
    BATCH_PRICE_FACTOR,
    BatchStatus,
    batch_body,
    batch_lines,
    poll,
    read_results,
    submit,
)
from empath_gate.llm.loop import run_calls
from empath_gate.settings import RoleSettings
from empath_gate.testing.fake_openai import FAKE_API_KEY, FakeOpenAIServer

OK = {"choices": [{"message": {"role": "assistant", "content": "{}"}, "finish_reason": "stop"}],
      "model": "gpt-4o-mini", "usage": {"prompt_tokens": 1000, "completion_tokens": 100}}


def _line(cid: str, status: int = 200, body: object = OK, error: object = None) -> str:
    response = None if error else {"status_code": status, "body": body}
    return json.dumps({"custom_id": cid, "response": response, "error": error})


def test_results_are_replies_or_reasons_never_defaults() -> None:
    text = "\n".join([
        _line("a"),
        _line("b", status=429, body={"error": {"message": "slow down"}}),
        _line("c", error={"code": "server_error", "message": "boom"}),
        _line("d", body={"object": "chat.completion"}),
    ])
    got = read_results(text, ["a", "b", "c", "d", "e"], "openai/gpt-4o-mini", "test")
    reply = got["a"]
    assert isinstance(reply, dict) and reply["content"] == "{}" and reply["finish_reason"] == "stop"
    assert reply["usage"] == {"prompt_tokens": 1000, "completion_tokens": 100, "cached_prompt_tokens": None}
    assert reply["cost_usd"] is not None and reply["cost_usd"] > 0
    live = reply["cost_usd"] / BATCH_PRICE_FACTOR
    assert abs(reply["batch_saved_usd"] - live * (1 - BATCH_PRICE_FACTOR)) < 1e-12
    assert got["b"] == 'the provider answered HTTP 429: {"error": {"message": "slow down"}}'
    assert isinstance(got["c"], str) and got["c"].startswith("the provider answered an error:")
    assert got["d"] == "the result is not a chat completion (no choices)"
    assert got["e"] == "the batch has no result line for this request"
    assert read_results("{not json", ["a"], "openai/gpt-4o-mini", "f")["a"].startswith("unreadable")


def test_the_request_body_has_no_credential_and_the_providers_model_name() -> None:
    role = RoleSettings(model="openai/gpt-4o-mini", api_key=SecretStr("sk-secret-value-123456"),
                        api_base="http://127.0.0.1:1/v1", temperature=0.0, max_tokens=50,
                        extra={"top_p": 0.5})
    body = batch_body(role, [{"role": "user", "content": "hi"}], 7, None)
    assert body == {"top_p": 0.5, "model": "gpt-4o-mini", "messages": [{"role": "user", "content": "hi"}],
                    "temperature": 0.0, "max_tokens": 50, "seed": 7}
    line = json.loads(batch_lines([("k1", body)]))
    assert line == {"custom_id": "k1", "method": "POST", "url": "/v1/chat/completions", "body": body}
    assert "sk-secret" not in batch_lines([("k1", body)]).decode()
    unsent = batch_body(role.model_copy(update={"send_seed": False}), [], 7, None)
    assert "seed" not in unsent


def test_the_ledger_counts_cache_and_batch_savings_apart_from_calls() -> None:
    with ledger_session(None) as ledger:
        assert isinstance(ledger, Ledger)
        with scope("t-r0"):
            ledger.hit("judge", 0.02)
            ledger.hit("judge", None)
            ledger.batched("judge", 0.01, 0.01)
            ledger.batched("judge", None, None)
    judge = ledger.by_role["judge"]
    assert (judge.calls, judge.cache_hits, judge.batch_calls) == (0, 2, 2)
    assert judge.cache_saved_usd == 0.02 and judge.batch_cost_usd == 0.01 and judge.batch_saved_usd == 0.01
    assert ledger.spent_usd == 0.01 and ledger.scope_tally("t-r0")["judge"].batch_calls == 2


def test_polling_a_completed_batch_leaves_no_download_running_behind_the_run(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # litellm's success logging of a poll that finds a batch completed would download its output
    # file (to price the batch) in a task of its own, which the run's loop cancels when it ends,
    # mid-connect: "coroutine 'connect_tcp.<locals>.try_connect' was never awaited"
    monkeypatch.setenv("OPENAI_API_KEY", FAKE_API_KEY)
    with FakeOpenAIServer() as fake:
        fake.on("fake-judge", "{}")
        fake.batch_pending_polls = 0
        role = RoleSettings(model="openai/fake-judge", api_base=fake.base_url)
        store = fake.batch_store
        read: list[str] = []
        real = store.file_content

        def counting(fid: str) -> bytes | None:
            read.append(fid)
            return real(fid)

        monkeypatch.setattr(store, "file_content", counting)

        async def scenario() -> BatchStatus:
            body = batch_body(role, [{"role": "user", "content": "hi"}], None, None)
            batch_id, _ = await submit(role, [("k1", body)])
            status = await poll(role, batch_id)
            for _ in range(100):  # time for any task the poll left behind to fetch the file
                await asyncio.sleep(0.02)
            return status

        status = run_calls(scenario())
    assert status.done and status.output_file_id
    assert status.output_file_id not in read  # nobody downloaded the results but the collect pass
