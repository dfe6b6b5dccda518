"""The xdist controller's progress line tells the whole run: every worker sends its share's
totals over the channel with each progress line, and the controller shows their sum."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any, cast

from empath_gate.conversation.plan_stats import PlanStats
from empath_gate.pytest_plugin.channel import ChannelClient
from empath_gate.pytest_plugin.controller import Controller
from empath_gate.pytest_plugin.worker import progress_message
from empath_gate.report.progress import ThrottledProgress


def _wait(until: Callable[[], bool], timeout_s: float = 10.0) -> None:
    end = time.monotonic() + timeout_s
    while not until():
        assert time.monotonic() < end, "the controller did not show the line in time"
        time.sleep(0.01)


def test_the_controllers_line_adds_up_every_workers_share() -> None:
    shown: list[str] = []
    controller = Controller(cast(Any, None), slots=2, progress=ThrottledProgress(shown.append, every_s=0.0))
    first = ChannelClient(controller.server.address, controller.token)
    second = ChannelClient(controller.server.address, controller.token)
    try:
        share0 = PlanStats(total=4, done=4, calls=35, cache_hits=2, cost_usd=0.5, errors=1)
        first.send(progress_message(0, share0.progress_line(8.0)))
        _wait(lambda: len(shown) == 1)
        assert shown[-1] == share0.line()  # only one share known so far

        second.send(progress_message(1, "empath-gate: a note, not totals"))
        _wait(lambda: len(shown) == 2)
        assert shown[-1] == "empath-gate: a note, not totals"

        share1 = PlanStats(total=2, done=1, calls=10, cost_usd=0.25)
        second.send(progress_message(1, share1.progress_line(4.0)))
        _wait(lambda: len(shown) == 3)
        # 5 of 6 done in 8 s (the longest share's time): about 2 s left for the last one
        assert shown[-1] == ("empath-gate: transcripts 5/6 · 45 calls, 2 cached · $0.7500 · about 2 s left"
                             " · 1 errors")

        # the same slot's later totals replace its earlier ones (a replacement worker redoes it)
        share1 = PlanStats(total=2, done=2, calls=19, cost_usd=0.25)
        second.send(progress_message(1, share1.progress_line(9.0)))
        _wait(lambda: len(shown) == 4)
        assert shown[-1] == "empath-gate: transcripts 6/6 · 54 calls, 2 cached · $0.7500 · 1 errors"
    finally:
        first.close()
        second.close()
        controller.server.close()


def test_the_controller_shows_a_workers_note_at_once_and_throttles_only_the_counts() -> None:
    shown: list[str] = []
    printer = ThrottledProgress(shown.append, every_s=3600.0)  # every count after the first is held
    controller = Controller(cast(Any, None), slots=1, progress=printer)
    worker = ChannelClient(controller.server.address, controller.token)
    note = "empath-gate: judge batch b1: submitted 4 judge requests (state file judge-batch.json)"
    try:
        worker.send(progress_message(0, PlanStats(total=4, done=1, calls=5).progress_line(1.0)))
        _wait(lambda: len(shown) == 1)
        worker.send(progress_message(0, PlanStats(total=4, done=4, calls=9).progress_line(2.0)))  # held
        worker.send(progress_message(0, note))  # inside the window: shown, after the count held
        _wait(lambda: len(shown) == 3)
        assert shown[1:] == ["empath-gate: transcripts 4/4 · 9 calls, 0 cached · $0.0000", note]
        worker.send(progress_message(0, "a cache notice"))
        _wait(lambda: len(shown) == 4)
        assert shown[-1] == "empath-gate: a cache notice"
        worker.send(progress_message(0, PlanStats(total=4, done=4, calls=10).progress_line(3.0)))  # held
        worker.send(progress_message(0, PlanStats(total=4, done=4, calls=11).progress_line(3.0)))  # replaces
        worker.send(progress_message(0, note))
        _wait(lambda: len(shown) == 6)
        # the count held last shows before the note; the one it replaced never shows
        assert shown[4:] == ["empath-gate: transcripts 4/4 · 11 calls, 0 cached · $0.0000", note]
    finally:
        worker.close()
        controller.server.close()


def test_plan_stats_round_trip_and_sum() -> None:
    a = PlanStats(total=3, done=2, calls=7, cache_hits=1, cost_usd=0.125, unpriced_calls=2, stopped=1)
    b = PlanStats(total=5, done=5, calls=1, not_started=2, auditor_fallbacks=3, target_filtered=1)
    assert PlanStats.from_dict(a.to_dict()) == a
    assert PlanStats.from_dict({"done": "3", "calls": True, "other": 1}) == PlanStats()  # junk counts 0
    odd = {"done": float("nan"), "calls": float("inf"), "cost_usd": float("-inf")}
    assert PlanStats.from_dict(odd) == PlanStats()  # NaN and infinities count 0, never raise
    assert PlanStats.combined([a, b]) == PlanStats(
        total=8, done=7, calls=8, cache_hits=1, cost_usd=0.125, unpriced_calls=2, stopped=1, not_started=2,
        auditor_fallbacks=3, target_filtered=1,
    )
    line = a.progress_line(4.0)
    assert line == a.line(elapsed_s=4.0) and line.stats == a and line.stats is not a
