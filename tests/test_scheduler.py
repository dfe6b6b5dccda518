"""The run's scheduler through :func:`empath_gate.runner.execute` on the fake server: call limits
per role and in all, judging as transcripts finish, the stop-rule hook, Ctrl-C, the cache."""

from __future__ import annotations

import signal
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from empath_gate import load_settings, prepare
from empath_gate.conversation.scheduler import StopRule
from empath_gate.results.model import RunRecord
from empath_gate.run import RunSetup
from empath_gate.runner import (
    INTERRUPTED_UNFINISHED,
    INTERRUPTED_UNJUDGED,
    RunInterrupted,
    execute,
    run_specs,
)
from empath_gate.testing import FakeOpenAIServer
from empath_gate.testing.fake_openai import FakeRequest
from empath_gate.testing.scenarios import ScoringJudge, ScriptAuditor, TargetBot
from empath_gate.testing.scenarios.wiring import derive_seed, install, role_env, seed_table

pytestmark = pytest.mark.filterwarnings("ignore::empath_gate.judging.hygiene.JudgeHygieneWarning")


@dataclass
class InFlight:
    """Wraps each role's fake program: counts the requests in flight per model (and in all)
    while each is held for ``hold_s`` seconds."""

    hold_s: float = 0.05
    now: dict[str, int] = field(default_factory=dict)
    peak: dict[str, int] = field(default_factory=dict)
    peak_total: int = 0
    lock: threading.Lock = field(default_factory=threading.Lock)

    def wrap(self, model: str, fn: Callable[[FakeRequest], Any]) -> Callable[[FakeRequest], Any]:
        def held(req: FakeRequest) -> Any:
            with self.lock:
                self.now[model] = self.now.get(model, 0) + 1
                self.peak[model] = max(self.peak.get(model, 0), self.now[model])
                self.peak_total = max(self.peak_total, sum(self.now.values()))
            try:
                time.sleep(self.hold_s)
                return fn(req)
            finally:
                with self.lock:
                    self.now[model] -= 1

        return held


@dataclass
class Env:
    server: FakeOpenAIServer
    root: Path
    judge: ScoringJudge
    flight: InFlight

    def setup(self, **overrides: Any) -> RunSetup:
        values: dict[str, Any] = {"cache_dir": self.root / "cache", "runs": 2,
                                  "results": self.root / "out" / "results.json"}
        values.update(overrides)
        return prepare(load_settings(overrides=values), ["smoke"])

    def run(self, setup: RunSetup, stop_rule: StopRule | None = None, **kw: Any) -> list[RunRecord]:
        specs = run_specs(setup.plan, setup.instrument)
        return execute(specs, setup.plan.metrics_for(), instrument=setup.instrument, settings=setup.settings,
                       transcripts_dir=setup.transcripts_dir, stop_rule=stop_rule, **kw)


@pytest.fixture()
def env(tmp_path: Path) -> Iterator[Env]:
    flight = InFlight()
    judge = ScoringJudge(default=9)
    with FakeOpenAIServer() as server, pytest.MonkeyPatch.context() as mp:
        install(server, target=flight.wrap("target", TargetBot("safe")),
                auditor=flight.wrap("auditor", ScriptAuditor(max_messages=2)),
                judge=flight.wrap("judge", judge))
        for k, v in role_env(server, target="model").items():
            mp.setenv(k, v)
        mp.delenv("CI", raising=False)
        yield Env(server, tmp_path, judge, flight)


def ctrl_c_at_line(n: int) -> Callable[[str], None]:
    """A progress callback that presses Ctrl-C (SIGINT) on the ``n``-th progress line: the run's
    loop then cancels what is in flight."""
    seen: list[str] = []

    def progress(line: str) -> None:
        seen.append(line)
        if len(seen) == n:
            signal.raise_signal(signal.SIGINT)

    return progress


def _seed_of(req: FakeRequest) -> int | None:
    seed = (req.body or {}).get("seed")
    return seed if isinstance(seed, int) else None


def test_calls_in_flight_never_exceed_the_role_and_run_limits(env: Env) -> None:
    setup = env.setup(concurrency=3, target_concurrency=2, auditor_concurrency=2, judge_concurrency=1)
    records = env.run(setup)
    assert {r.status for r in records} == {"complete"} and all(r.verdicts for r in records)
    peak = env.flight.peak
    assert peak["target"] <= 2 and peak["auditor"] <= 2 and peak["judge"] <= 1
    assert env.flight.peak_total <= 3
    # calls, not transcripts, are what is limited: several transcripts' calls overlapped
    assert env.flight.peak_total >= 2


def test_judging_starts_before_the_last_transcript_is_generated(env: Env) -> None:
    setup = env.setup(concurrency=2)
    specs = run_specs(setup.plan, setup.instrument)
    assert len(specs) > 2 * 2  # more transcripts than the window: the last one opens late
    env.run(setup)
    by_model = {m: [r.received_at for r in env.server.requests_for(m)] for m in ("fake-target", "fake-judge")}
    assert min(by_model["fake-judge"]) < max(by_model["fake-target"])


def test_records_come_in_spec_order_and_a_cached_rerun_makes_no_call(env: Env) -> None:
    setup = env.setup(concurrency=4)
    specs = run_specs(setup.plan, setup.instrument)
    first = env.run(setup)
    assert [r.transcript_id for r in first] == [s.transcript_id for s in specs]
    made = len(env.server.requests)
    again = env.run(env.setup(concurrency=4))
    assert len(env.server.requests) == made  # 0 calls: every reply (target, auditor, judge) cached
    assert [(r.transcript_id, r.content_hash) for r in again] == [
        (r.transcript_id, r.content_hash) for r in first
    ]
    assert [[v.score for v in r.verdicts] for r in again] == [[v.score for v in r.verdicts] for r in first]
    assert sum(r.calls for r in again) == 0 and all(r.cache_hits > 0 for r in again)


def test_a_stop_rule_runs_a_conversations_runs_in_turn_and_stops_it(env: Env) -> None:
    setup = env.setup(concurrency=4, runs=4)
    asked: list[tuple[str, tuple[int, ...]]] = []

    def after_two(conversation_id: str, records: Sequence[RunRecord]) -> str | None:
        asked.append((conversation_id, tuple(r.run for r in records)))
        assert all(r.conversation_id == conversation_id and r.verdicts for r in records)
        return "settled" if len(records) >= 2 else None

    lines: list[str] = []
    records = env.run(setup, stop_rule=after_two, progress=lines.append)
    conversations = [c.conversation_id for c in setup.plan.conversations]
    assert len(records) == 4 * len(conversations)
    # the progress line's total drops the runs that will not run, and says so
    ran = 2 * len(conversations)
    assert f"transcripts {ran}/{ran}" in lines[-1] and f"{ran} runs stopped early (settled)" in lines[-1]
    for r in records:
        if r.run < 2:
            assert r.status == "complete" and r.verdicts and r.transcript_path is not None
        else:
            assert (r.status, r.error, r.verdicts, r.calls) == ("stopped", "settled", (), 0)
    assert sorted(asked) == sorted([(c, (0,)) for c in conversations] + [(c, (0, 1)) for c in conversations])
    # no request for a stopped run, and run 1 of a conversation starts after run 0 is judged
    seeds = seed_table(conversations, 4)
    runs_seen = {seeds[s][1] for req in env.server.requests if (s := _seed_of(req)) in seeds}
    assert runs_seen == {0, 1}
    for c in conversations:
        s0, s1 = derive_seed(0, c, 0), derive_seed(0, c, 1)
        r0 = [q.received_at for q in env.server.requests if _seed_of(q) == s0]
        r1 = [q.received_at for q in env.server.requests if _seed_of(q) == s1]
        judged_r0 = [q.received_at for q in env.server.requests_for("fake-judge") if _seed_of(q) == s0]
        assert judged_r0 and max(r0) == max(judged_r0) < min(r1)


def test_without_a_stop_rule_every_run_is_made(env: Env) -> None:
    records = env.run(env.setup(concurrency=4, runs=3))
    assert {r.status for r in records} == {"complete"} and {r.run for r in records} == {0, 1, 2}


def test_ctrl_c_keeps_the_records_of_what_finished(env: Env) -> None:
    setup = env.setup(concurrency=2)
    specs = run_specs(setup.plan, setup.instrument)
    with pytest.raises(RunInterrupted) as info:
        env.run(setup, progress=ctrl_c_at_line(3))
    exc = info.value
    assert [r.transcript_id for r in exc.records] == [s.transcript_id for s in specs]
    assert exc.finished == 3
    judged = [r for r in exc.records if r.status == "complete"]
    assert len(judged) == exc.judged and all(r.verdicts for r in judged)
    unjudged = [r for r in exc.records if r.error == INTERRUPTED_UNJUDGED]
    unfinished = [r for r in exc.records if r.error == INTERRUPTED_UNFINISHED]
    assert len(unjudged) >= 1  # the third transcript was generated, never judged
    assert len(judged) + len(unjudged) == 3 and len(unfinished) == len(specs) - 3
    assert all(r.status == "error" and not r.verdicts for r in unjudged + unfinished)


def test_ctrl_c_during_a_batch_submit_counts_no_transcript_as_judged(
    env: Env, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With ``judge_batch = "submit"`` a finished transcript's judging waits for the batch, which
    an interrupt leaves unsubmitted: no record is judged, each finished one is unjudged."""
    monkeypatch.delenv("PYTEST_XDIST_WORKER", raising=False)  # this test's own worker, not the run's
    setup = env.setup(concurrency=2, judge_batch="submit")
    with pytest.raises(RunInterrupted) as info:
        env.run(setup, progress=ctrl_c_at_line(3))
    exc = info.value
    assert exc.finished >= 1 and exc.judged == 0
    unjudged = [r for r in exc.records if r.error == INTERRUPTED_UNJUDGED]
    assert len(unjudged) == exc.finished
    assert not any(r.status == "complete" for r in exc.records)
    assert not any(r.path.endswith("batches") for r in env.server.requests)  # nothing was submitted
