"""The diff's footer says what the run did not spend: calls and cost saved by the cache, by
sequential stopping (records with status ``stopped``) and by a provider batch's discount."""

from __future__ import annotations

from report_factory import build_results

from empath_gate.report.markdown import render_markdown
from empath_gate.report.view.savings import savings_of, savings_text
from empath_gate.results.model import Results, RoleCalls


def _with(results: Results, **cost: object) -> Results:
    md = results.metadata
    new = md.model_copy(update={"cost": md.cost.model_copy(update=cost)})
    return results.model_copy(update={"metadata": new})


def _saved_line(results: Results) -> str | None:
    lines = [ln for ln in render_markdown(results).splitlines() if ln.startswith("**Saved:**")]
    assert len(lines) <= 1
    return lines[0] if lines else None


def test_nothing_saved_shows_no_line() -> None:
    results = build_results()
    assert savings_text(results) is None and _saved_line(results) is None


def test_cache_and_batch_savings_come_from_the_results_tallies() -> None:
    results = _with(build_results(), cache_hits=42, cache_saved_usd=0.3149, batch_calls=8,
                    batch_saved_usd=0.05)
    assert savings_text(results) == (
        "42 calls by the cache ($0.31); $0.05 by the batch discount (8 judge replies from a provider batch)"
    )
    line = _saved_line(results)
    assert line is not None and "42 calls by the cache" in line
    unpriced = _with(build_results(), batch_calls=3)
    assert savings_text(unpriced) == (
        "3 judge replies from a provider batch (discount unknown: the model is not priced)"
    )


def test_stopped_runs_are_estimated_from_the_same_conversations_finished_runs() -> None:
    results = build_results(runs=3)
    conv = results.records[0].conversation_id
    judge = RoleCalls(calls=2, cache_hits=1, cost_usd=0.02, cache_saved_usd=0.01)
    records = []
    for r in results.records:
        if r.conversation_id != conv:
            records.append(r)
        elif r.run == 2:
            records.append(r.model_copy(update={"status": "stopped", "verdicts": (), "calls": 0}))
        else:  # 13 live calls + 1 hit, $0.04 live + $0.01 the hit first cost
            update = {"cost_usd": 0.04, "cache_hits": 1, "by_role": {"judge": judge}}
            records.append(r.model_copy(update=update))
    stopped = results.model_copy(update={"records": tuple(records)})
    s = savings_of(stopped)
    assert s.stopped_runs == 1 and s.stopped_calls == 14 and abs((s.stopped_usd or 0) - 0.05) < 1e-9
    assert savings_text(stopped) == "about 14 calls and $0.05 by sequential stopping (1 run stopped)"
