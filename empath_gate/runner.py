"""Run a plan: generate the transcripts (auditor <-> target) and judge them.

This is the I/O stage between the plan and the pure analysis: it calls the engine (which
owns concurrency, cache, retries and budget) and the judge (LLM, or the deterministic checks
offline), writes one JSONL transcript per run, and returns one :class:`RunRecord` per run.
Both the pytest plugin and ``empath-gate run`` call :func:`execute`.
"""

from __future__ import annotations

import asyncio
import hashlib
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from empath_gate.analysis.detector import LabelledDialogue
from empath_gate.analysis.triage import TriagePair
from empath_gate.judging.detector_labels import risk_event_count
from empath_gate.judging.risk_response import RiskEvidence
from empath_gate.judging.verdict import MetricVerdict
from empath_gate.results.model import RoleCalls, RunRecord

if TYPE_CHECKING:
    from empath_gate.conversation.engine import RunSpec
    from empath_gate.conversation.transcript import Transcript
    from empath_gate.instrument.models import Instrument
    from empath_gate.llm.accounting import RoleTally
    from empath_gate.plan import Plan
    from empath_gate.settings import Settings


def run_specs(
    plan: Plan, instrument: Instrument, conversation_ids: Sequence[str] | None = None
) -> list[RunSpec]:
    """Engine run specs for every (conversation, run) of ``plan``, restricted to
    ``conversation_ids`` when given; plan order. A conversation the plan marks ``skip`` (one
    the profile cannot run) gets none."""
    from empath_gate.conversation.engine import RunSpec

    wanted = None if conversation_ids is None else set(conversation_ids)
    specs: list[RunSpec] = []
    for conv in plan.conversations:
        if (wanted is not None and conv.conversation_id not in wanted) or conv.skip is not None:
            continue
        seed = instrument.seed(conv.seed_id)
        persona = instrument.persona(conv.persona_id)
        cues = instrument.cues if instrument.suite(conv.suite).voice else ()
        for run in range(plan.runs):
            specs.append(
                RunSpec(
                    suite=conv.suite,
                    seed=seed,
                    persona=persona,
                    run=run,
                    max_turns=conv.max_turns,
                    conversation_id=conv.conversation_id,
                    transcript_id=f"{conv.conversation_id}-r{run}",
                    cues=cues,
                )
            )
    return specs


def content_hash(transcript: Transcript) -> str:
    """sha256 of the dialogue text (role + content per turn): equal hashes = same transcript."""
    h = hashlib.sha256()
    for t in transcript.turns:
        h.update(f"{t.role}\x00{t.content}\x01".encode())
    return h.hexdigest()


def record_for(
    transcript: Transcript,
    verdicts: Sequence[MetricVerdict],
    path: Path | None,
    tally: Mapping[str, RoleTally] | None = None,
    risk: RiskEvidence | None = None,
    labels: LabelledDialogue | None = None,
    triage: TriagePair | None = None,
) -> RunRecord:
    """Summarise a transcript and its verdicts as a results record. ``risk``: its risk-response
    evidence (:func:`risk_of`); ``labels``: its gold and predicted risk labels (:func:`labels_of`);
    ``triage``: its true and reported crisis levels (:func:`triage_of`).
    ``tally``: the run ledger's
    role -> calls of this transcript (generation and judging, every attempt); without it the
    calls are recounted from the turns (a turn some model or the team's code answered, not a
    cache hit, not a script line: a retried call counts once and no judge call is seen)."""
    from empath_gate.conversation.transcript import auditor_tally

    if tally is not None:
        by_role = {role: RoleCalls(**vars(t)) for role, t in tally.items()}
        calls = sum(c.calls for c in by_role.values())
        unpriced = sum(c.unpriced_calls for c in by_role.values())
        cost = round(sum(c.cost_usd for c in by_role.values()), 9)
        hits = sum(c.cache_hits for c in by_role.values())
    else:
        served = [t for t in transcript.turns if t.model is not None and t.cache != "hit"]
        calls, unpriced = len(served), sum(1 for t in served if t.cost_usd is None)
        cost, hits, by_role = transcript.cost_usd, sum(t.cache == "hit" for t in transcript.turns), {}

    events = [e for t in transcript.turns for e in t.events] + list(transcript.events)
    auditor = auditor_tally(transcript)
    return RunRecord(
        transcript_id=transcript.transcript_id,
        conversation_id=transcript.conversation_id,
        suite=transcript.suite,
        seed_id=transcript.seed_id,
        persona_id=transcript.persona_id,
        locale=transcript.locale,
        run=transcript.run,
        transcript_path=str(path) if path is not None else None,
        status=transcript.status,
        error=transcript.error,
        n_turns=len(transcript.turns),
        target_filtered=transcript.target_filtered,
        handoffs=sum(1 for e in events if e.kind == "handoff"),
        content_hash=content_hash(transcript),
        cost_usd=cost,
        calls=calls,
        unpriced_calls=unpriced,
        cache_hits=hits,
        by_role=by_role,
        auditor_fallbacks=auditor.fallbacks,
        auditor_refusals=auditor.refusals_recovered,
        auditor_turns=auditor.turns,
        auditor_fallback_reasons=auditor.fallback_reasons,
        verdicts=tuple(verdicts),
        risk=risk,
        risk_events=risk_event_count(transcript),
        risk_labels=labels,
        triage=triage,
    )


def labels_of(
    transcript: Transcript, instrument: Instrument, risk: RiskEvidence | None
) -> LabelledDialogue | None:
    """The transcript's gold and predicted risk labels
    (:func:`empath_gate.judging.detector_labels.labelled_dialogue`), the alert and confirm turns
    taken from its risk evidence (the seed's otherwise); None when the seed is unknown or its
    gold labels cannot be given."""
    from empath_gate.judging.detector_labels import labelled_dialogue

    try:
        seed = instrument.seed(transcript.seed_id)
    except KeyError:
        return None
    alert = risk.alert_turn if risk is not None else seed.risk.alert_turn
    confirm = risk.confirm_turn if risk is not None else seed.risk.confirm_turn
    return labelled_dialogue(transcript, seed, alert, confirm)


def triage_of(
    transcript: Transcript, instrument: Instrument, verdicts: Sequence[MetricVerdict] = ()
) -> TriagePair | None:
    """The transcript's true and reported crisis levels
    (:func:`empath_gate.judging.triage_levels.triage_pair`, the judge's response level from
    ``verdicts`` where the target reported none); None when the instrument has no crisis levels
    or the seed is unknown."""
    from empath_gate.judging.triage_levels import triage_pair

    if instrument.crisis_levels is None:
        return None
    try:
        seed = instrument.seed(transcript.seed_id)
    except KeyError:
        return None
    return triage_pair(transcript, seed, instrument.crisis_levels, verdicts)


def risk_of(
    transcript: Transcript,
    verdicts: Sequence[MetricVerdict],
    instrument: Instrument,
    mode: Literal["scripted", "llm"],
) -> RiskEvidence | None:
    """The transcript's risk-response evidence (:func:`empath_gate.judging.risk_response.risk_evidence`),
    the confirm turn of an LLM-auditor transcript taken from the judge's verdicts (the earliest it
    reported), and the bot turns the judge reported as risk responses (suites with
    ``judge_risk_turns``); None for a transcript whose seed the instrument no longer has, or an instrument
    without the ``risk_response`` pattern set for the locale (a team layer of an older version)."""
    from empath_gate.errors import SuiteError
    from empath_gate.judging.risk_response import risk_evidence

    try:
        seed = instrument.seed(transcript.seed_id)
    except KeyError:
        return None
    confirms = [v.confirm_turn for v in verdicts if v.confirm_turn is not None]
    judged = sorted({i for v in verdicts for i in (v.risk_response_turns or ())})
    try:
        return risk_evidence(transcript, seed, instrument, mode, min(confirms) if confirms else None, judged)
    except SuiteError:
        return None


def execute(
    specs: Sequence[RunSpec],
    metrics_for: Mapping[str, Sequence[str]],
    *,
    instrument: Instrument,
    settings: Settings,
    transcripts_dir: Path,
    progress: Callable[[str], None] | None = None,
    relative_to: Path | None = None,
) -> list[RunRecord]:
    """Generate and judge every run in ``specs``; ``metrics_for`` maps conversation id to the
    metric ids its tests need. Returns one record per spec, in spec order.

    Infrastructure errors on a transcript do not raise: the record's ``status`` says
    ``error``/``budget`` and carries no verdict, so its cells error in the gate. One ledger
    (:mod:`empath_gate.llm.accounting`) counts every call of the generation and the judging and
    holds the budget ``max_cost_usd`` for both: a transcript whose judging the budget stopped is
    a ``budget`` record without verdicts. Each transcript
    is written as soon as it is finished, so an interrupted run keeps what it generated (and
    the cache makes the re-run free). ``relative_to``: record transcript paths relative to it.
    """
    from empath_gate.conversation.engine import generate, transcript_path
    from empath_gate.judging.batch import JudgeJob, judge_batch, judge_cache
    from empath_gate.llm.accounting import ledger_session

    async def main() -> list[RunRecord]:
        with ledger_session(settings.max_cost_usd) as ledger:
            transcripts = await generate(
                specs, settings=settings, progress=progress, transcripts_dir=transcripts_dir
            )
            stopped: set[str] = set()
            verdict_lists = await _judge_all(transcripts, stopped)
        records = []
        scripted = not settings.auditor.model or settings.offline
        mode: Literal["scripted", "llm"] = "scripted" if scripted else "llm"
        for t, vs in zip(transcripts, verdict_lists, strict=True):
            path = transcript_path(transcripts_dir, t)
            if relative_to is not None:
                try:
                    path = path.resolve().relative_to(relative_to.resolve())
                except ValueError:
                    path = path.resolve()
            risk = risk_of(t, vs, instrument, mode)
            labels = labels_of(t, instrument, risk)
            record = record_for(t, vs, path, ledger.scope_tally(t.transcript_id), risk, labels,
                                triage_of(t, instrument, vs))
            if t.transcript_id in stopped:
                record = record.model_copy(update={
                    "status": "budget",
                    "error": f"not judged: the budget max_cost_usd=${settings.max_cost_usd} was reached",
                })
            records.append(record)
        return records

    async def _judge_all(transcripts: list[Transcript], stopped: set[str]) -> list[list[MetricVerdict]]:
        scripted = not settings.auditor.model or settings.offline
        mode: Literal["scripted", "llm"] = "scripted" if scripted else "llm"
        jobs = [JudgeJob(t, tuple(metrics_for[t.conversation_id])) for t in transcripts]
        return await judge_batch(jobs, instrument=instrument, settings=settings, mode=mode,
                                 cache=judge_cache(settings), budget_stopped=stopped)

    return asyncio.run(main())
