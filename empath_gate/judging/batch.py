"""Judging a batch of transcripts concurrently: the one path the run and ``rejudge`` share.

A job is a transcript, the metric ids its tests need and a re-judge index (0 for the first
judging; each index has its own cache key and judge seed). A transcript that did not complete
gets no verdict (its cells error in the gate, never a score); without a judge model only the
deterministic criteria run (:func:`~empath_gate.judging.llm_judge.check_only`).

Every judge call (re-asks and truncation retries included) is counted on the active ledger
(:mod:`empath_gate.llm.accounting`) under the transcript's id, and obeys its budget: a job whose
next call the budget refuses has no verdict; its transcript id is added to ``budget_stopped``.
Under batch judging (:mod:`empath_gate.judging.batch_mode`) a job whose request waits in a
provider batch has no verdict either; its transcript id is added to ``pending``.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from empath_gate.errors import BudgetExceeded
from empath_gate.llm.accounting import scope
from empath_gate.llm.deferred import JudgePending

if TYPE_CHECKING:
    from empath_gate.conversation.transcript import Transcript
    from empath_gate.instrument.models import Instrument
    from empath_gate.judging.verdict import MetricVerdict
    from empath_gate.llm.cache import Cache
    from empath_gate.settings.model import Settings


@dataclass(frozen=True)
class JudgeJob:
    """One judging: ``transcript`` on ``metric_ids`` at re-judge index ``rejudge``."""

    transcript: Transcript
    metric_ids: tuple[str, ...]
    rejudge: int = 0


def judge_cache(settings: Settings) -> Cache | None:
    """The reply cache the judge reads and writes, or None when caching is off or no judge
    model is configured (deterministic checks are not cached)."""
    if not settings.judge.model or settings.cache_mode == "off":
        return None
    from empath_gate.llm.cache import Cache

    return Cache(settings.cache_dir, mode=settings.cache_mode)


async def judge_batch(
    jobs: Sequence[JudgeJob],
    *,
    instrument: Instrument,
    settings: Settings,
    mode: Literal["scripted", "llm"],
    cache: Cache | None,
    budget_stopped: set[str] | None = None,
    finished: dict[str, list[MetricVerdict]] | None = None,
    pending: set[str] | None = None,
) -> list[list[MetricVerdict]]:
    """The verdicts of every job, in job order; at most ``judge_concurrency`` judge calls at once.
    ``mode``: how the transcripts were generated (the deterministic checks read it).
    ``budget_stopped``: receives the transcript id of each job the budget stopped (its verdict
    list is empty); without it, BudgetExceeded propagates. ``finished``: transcript id -> its
    verdicts, set as soon as a job is judged (what an interrupted caller keeps). ``pending``:
    receives the transcript id of each job whose judge request waits in a provider batch (its
    verdict list is empty); without it, JudgePending propagates."""
    from empath_gate.judging.llm_judge import check_only, judge_transcript

    sem = asyncio.Semaphore(max(1, settings.judge.concurrency))

    async def one(job: JudgeJob) -> list[MetricVerdict]:
        t = job.transcript
        if t.status != "complete":
            return []
        seed = instrument.seed(t.seed_id)
        if not settings.judge.model:
            return check_only(t, seed, list(job.metric_ids), instrument=instrument, mode=mode)
        async with sem:
            try:
                with scope(t.transcript_id):
                    return await judge_transcript(
                        t, seed, list(job.metric_ids), instrument=instrument, settings=settings,
                        cache=cache, rejudge=job.rejudge,
                    )
            except BudgetExceeded:
                if budget_stopped is None:
                    raise
                budget_stopped.add(t.transcript_id)
                return []
            except JudgePending:
                if pending is None:
                    raise
                pending.add(t.transcript_id)
                return []

    async def kept(job: JudgeJob) -> list[MetricVerdict]:
        verdicts = await one(job)
        if finished is not None:
            finished[job.transcript.transcript_id] = verdicts
        return verdicts

    from empath_gate.llm.adaptive import adaptive_session

    with adaptive_session(settings.adaptive_concurrency):
        return list(await asyncio.gather(*(kept(j) for j in jobs)))
