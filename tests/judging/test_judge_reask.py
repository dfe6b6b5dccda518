"""Re-asking the judge, and what the cache keeps of its replies (end to end over the fake server).

An unparseable or refused judge reply is asked again up to twice with a new seed, and every ask
is recorded on the verdict; only replies that parse are cached, so a re-run after a failure asks
again instead of replaying it."""

from __future__ import annotations

import json
from pathlib import Path

from judge_server import ASKS, RISK_ES, JudgeServer, judge, verdict_json
from judging_support import make_transcript

from empath_gate.conversation.runspec import derive_seed
from empath_gate.instrument.models import Instrument
from empath_gate.judging.judge_call import MAX_REASKS, judge_run_seed, reask_seed
from empath_gate.llm.cache import Cache
from empath_gate.testing import scenarios
from empath_gate.testing.fake_openai import FakeRequest, Fault

PROSE = "The assistant did well overall, I'd say 8 out of 10."


def _seeds(server: JudgeServer) -> list[int]:
    return [r.body["seed"] for r in server.requests() if r.body]


def test_unparseable_twice_then_valid_is_a_verdict_with_three_attempts(
    instrument: Instrument, server: JudgeServer
) -> None:
    good = json.dumps(verdict_json(instrument, {"crisis_detection": 6}))
    server.script(PROSE, "{not json", good)
    t = make_transcript("risk-es", "es-MX", RISK_ES)
    settings = server.settings()
    [v] = judge(instrument, t, ["crisis_detection"], settings)
    assert (v.status, v.score, v.failure) == ("scored", 6, None)
    first = judge_run_seed(settings, t)
    expected = [first, reask_seed(first, 1), reask_seed(first, 2)]
    assert len(set(expected)) == 3  # every re-ask is a new sample
    assert [(a.seed, a.failure) for a in v.judge_attempts] == [
        (expected[0], "parse_error"), (expected[1], "parse_error"), (expected[2], None)]
    assert _seeds(server) == expected  # the seeds recorded are the seeds sent


def test_unparseable_three_times_is_a_parse_error(instrument: Instrument, server: JudgeServer) -> None:
    server.script(PROSE, PROSE, PROSE)
    t = make_transcript("risk-es", "es-MX", RISK_ES)
    [v] = judge(instrument, t, ["crisis_detection"], server.settings())
    assert v.status == "judge_failure" and v.score is None
    assert v.failure is not None and v.failure.reason == "parse_error"
    assert [a.failure for a in v.judge_attempts] == ["parse_error"] * 3
    seeds = ", ".join(str(s) for s in _seeds(server))
    assert v.failure.detail.endswith(f"(asked 3 times, seeds {seeds})")
    assert len(server.requests()) == 1 + MAX_REASKS


def test_a_refusal_then_a_reply_is_a_verdict(instrument: Instrument, server: JudgeServer) -> None:
    good = json.dumps(verdict_json(instrument, {"harmful_response": 9}))
    server.script(Fault.content_policy(), Fault.content_filter(), good)
    t = make_transcript("risk-es", "es-MX", RISK_ES)
    [v] = judge(instrument, t, ["harmful_response"], server.settings())
    assert (v.status, v.score, v.critical_fail) == ("scored", 9, False)
    assert [a.failure for a in v.judge_attempts] == ["content_policy", "content_policy", None]


def test_every_metric_of_the_call_records_the_asks(instrument: Instrument, server: JudgeServer) -> None:
    good = json.dumps(verdict_json(instrument, {"crisis_detection": 7, "harmful_response": 10}))
    server.script(PROSE, good)
    t = make_transcript("risk-es", "es-MX", RISK_ES)
    verdicts = judge(instrument, t, ["crisis_detection", "harmful_response"], server.settings())
    assert [(v.score, len(v.judge_attempts)) for v in verdicts] == [(7, 2), (10, 2)]


def test_failures_that_a_new_seed_cannot_fix_are_not_asked_again(
    instrument: Instrument, server: JudgeServer
) -> None:
    server.script(Fault.truncated("{"), Fault.truncated('{"metrics"'), Fault.context_exceeded(),
                  Fault.server_error(503))
    t = make_transcript("risk-es", "es-MX", RISK_ES)
    settings = server.settings()
    reasons = []
    for _ in range(3):
        [v] = judge(instrument, t, ["crisis_detection"], settings)
        assert v.failure is not None and len(v.judge_attempts) == 1
        reasons.append(v.failure.reason)
    assert reasons == ["truncated", "context_exceeded", "provider_error"]
    assert len(server.requests()) == 4  # truncation's own retry with twice the budget, nothing more


def test_a_fault_free_rerun_asks_again_instead_of_replaying_the_failure(
    instrument: Instrument, server: JudgeServer, tmp_path: Path
) -> None:
    server.script(PROSE, PROSE, PROSE, Fault.truncated("{"), Fault.truncated("{"))
    cache = Cache(tmp_path, mode="use")
    t = make_transcript("risk-es", "es-MX", RISK_ES)
    settings = server.settings()
    [failed] = judge(instrument, t, ["crisis_detection"], settings, cache=cache)
    [cut] = judge(instrument, t, ["harmful_response"], settings, cache=cache)
    assert failed.failure is not None and failed.failure.reason == "parse_error"
    assert cut.failure is not None and cut.failure.reason == "truncated"
    assert cache.entries() == {}  # nothing unusable was stored
    # the faults are gone: the re-run asks the judge again and gets a verdict
    def answer(req: FakeRequest) -> str:
        metric = "harmful_response" if "## harmful_response" in req.system else "crisis_detection"
        return json.dumps(verdict_json(instrument, {metric: 8}))

    server.on(answer)
    n = len(server.requests())
    [again] = judge(instrument, t, ["crisis_detection"], settings, cache=cache)
    [whole] = judge(instrument, t, ["harmful_response"], settings, cache=cache)
    assert (again.status, again.score, whole.status, whole.score) == ("scored", 8, "scored", 8)
    assert len(server.requests()) == n + 2 and len(again.judge_attempts) == 1
    # and a usable reply is cached: the third run makes no request
    assert judge(instrument, t, ["crisis_detection"], settings, cache=cache) == [again]
    assert len(server.requests()) == n + 2


def test_a_reask_that_succeeds_is_cached_under_its_own_seed(
    instrument: Instrument, server: JudgeServer, tmp_path: Path
) -> None:
    good = json.dumps(verdict_json(instrument, {"crisis_detection": 5}))
    server.script(PROSE, good, good)
    cache = Cache(tmp_path, mode="use")
    t = make_transcript("risk-es", "es-MX", RISK_ES)
    [v] = judge(instrument, t, ["crisis_detection"], server.settings(), cache=cache)
    assert [a.failure for a in v.judge_attempts] == ["parse_error", None]
    assert len(cache.entries()) == 1
    # the re-run asks the first seed again (its failure was not stored): now it parses
    [rerun] = judge(instrument, t, ["crisis_detection"], server.settings(), cache=cache)
    assert [a.failure for a in rerun.judge_attempts] == [None] and len(server.requests()) == 3


def test_the_test_judge_knows_the_run_of_a_reask() -> None:
    assert scenarios.JUDGE_REASKS == MAX_REASKS
    for seed, ask in ((derive_seed(0, "a-b", 1), 1), (12345, 2), (7, 0)):
        assert scenarios.reask_seed(seed, ask) == reask_seed(seed, ask)
    table = scenarios.seed_table(["a-b"], 2)
    judge = scenarios.ScoringJudge(seeds=table)
    first = derive_seed(0, "a-b", 1)
    assert judge._run_of(reask_seed(first, 2)) == ("a-b", 1, 2)
    assert judge._run_of(first) == ("a-b", 1, 0) and judge._run_of(99) is None
    assert ASKS == 3
