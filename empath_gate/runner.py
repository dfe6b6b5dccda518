"""Run a plan: generate the transcripts (auditor <-> target) and judge them.

This is the I/O stage between the plan and the pure analysis: it calls the engine (which
owns concurrency, cache, retries and budget) and the judge (LLM, or the deterministic checks
offline), writes one JSONL transcript per run, and returns one :class:`RunRecord` per run.
Both the pytest plugin and ``empath-gate run`` call :func:`execute`.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from empath_gate.analysis.adherence import BehaviourAdherence
from empath_gate.analysis.detector import LabelledDialogue
from empath_gate.analysis.triage import TriagePair
from empath_gate.judging.detector_labels import risk_event_count
from empath_gate.judging.risk_response import RiskEvidence
from empath_gate.judging.verdict import MetricVerdict
from empath_gate.results.model import RoleCalls, RunRecord

if TYPE_CHECKING:
    from empath_gate.conversation.engine import Generator, RunSpec
    from empath_gate.conversation.transcript import SpeakerRef, Transcript
    from empath_gate.dynamics import RiskMatcher
    from empath_gate.gate.sequential import StopRule
    from empath_gate.instrument.models import Instrument
    from empath_gate.llm.accounting import Ledger, RoleTally
    from empath_gate.plan import Plan
    from empath_gate.settings import Settings


INTERRUPTED_UNJUDGED = "interrupted: the transcript was generated but not judged"
INTERRUPTED_UNFINISHED = "interrupted: the transcript was not finished"


class RunInterrupted(KeyboardInterrupt):
    """Ctrl-C stopped :func:`execute`. ``records`` holds one record per spec, in spec order, as
    :func:`execute` returns them: a transcript that was generated and judged has its full
    record; one generated but not judged (one whose judging waits in a provider batch included:
    an interrupted submit never sends its batch), or not finished, is an ``error`` record without
    verdicts (:data:`INTERRUPTED_UNJUDGED`, :data:`INTERRUPTED_UNFINISHED`), so its cells are
    unknown evidence, never passing (the transcript file of one generated but not judged stays
    referenced, for ``rejudge``). ``finished`` counts the transcripts generated, ``judged`` the
    full records among them. A KeyboardInterrupt, so a caller that does not look for it still
    stops."""

    def __init__(self, records: list[RunRecord], finished: int, judged: int) -> None:
        super().__init__(f"interrupted after {finished} of {len(records)} transcripts")
        self.records = records
        self.finished = finished
        self.judged = judged


def interrupted_record(spec: RunSpec) -> RunRecord:
    """The ``error`` record of a transcript an interrupt stopped before it finished."""
    return RunRecord(
        transcript_id=spec.transcript_id,
        conversation_id=spec.conversation_id,
        suite=spec.suite,
        seed_id=spec.seed.id,
        persona_id=spec.persona.id,
        locale=spec.seed.locale,
        run=spec.run,
        status="error",
        error=INTERRUPTED_UNFINISHED,
    )


def stopped_record(spec: RunSpec, reason: str) -> RunRecord:
    """The record of a run sequential gating did not start: status ``stopped`` with ``reason``
    (no transcript, no verdict, no call: not run, never an error, never a pass)."""
    from empath_gate.gate.sequential import STOPPED

    return RunRecord(
        transcript_id=spec.transcript_id,
        conversation_id=spec.conversation_id,
        suite=spec.suite,
        seed_id=spec.seed.id,
        persona_id=spec.persona.id,
        locale=spec.seed.locale,
        run=spec.run,
        status=STOPPED,
        error=reason,
    )


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
                    behaviours=instrument.behaviours,
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
        annotation=transcript.annotation,
        triage=triage,
        speakers=user_speakers(transcript),
        feelings=feelings_of(transcript),
    )


def user_speakers(transcript: Transcript) -> tuple[SpeakerRef, ...]:
    """The speaker of each user turn of a multi-party ``transcript``, in order; ``()`` when any
    user turn has none (a one-user transcript)."""
    users = [t.speaker for t in transcript.turns if t.role == "user"]
    return tuple(s for s in users if s is not None) if users and None not in users else ()


def feelings_of(transcript: Transcript) -> tuple[int | None, ...]:
    """The auditor's feeling with each user message, in order; ``()`` when none has one (fixed
    scripts, older transcripts)."""
    out = tuple(t.feeling_0_100 for t in transcript.turns if t.role == "user")
    return out if any(f is not None for f in out) else ()


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


def adherence_of(transcript: Transcript, instrument: Instrument) -> BehaviourAdherence | None:
    """The transcript's adherence proxies (:func:`empath_gate.analysis.adherence.adherence`): its
    user turns and feelings against the seed's script, with the persona's levels and, for the
    scripted auditor, the variant it played; None when the seed or persona is unknown, the
    instrument has no behaviour set, or no ``explicit_risk`` patterns for the locale."""
    from empath_gate.analysis.adherence import adherence, compile_patterns
    from empath_gate.errors import SuiteError
    from empath_gate.instrument.identity import script_for
    from empath_gate.instrument.models import BEHAVIOURS
    from empath_gate.instrument.variants import script_variant
    from empath_gate.judging.checks import EXPLICIT_RISK_SET, patterns_for

    behaviours = instrument.behaviours
    try:
        seed, persona = instrument.seed(transcript.seed_id), instrument.persona(transcript.persona_id)
        explicit = patterns_for(instrument, EXPLICIT_RISK_SET, transcript.locale)
    except (KeyError, SuiteError):
        return None
    if behaviours is None or transcript.locale not in behaviours.pushback_patterns:
        return None
    users = [t for t in transcript.turns if t.role == "user"]
    variant = script_variant(seed, persona, behaviours)
    mood = behaviours.mood_patterns[transcript.locale]
    return adherence(
        [t.content for t in users], [t.feeling_0_100 for t in users],
        levels=dict(zip(BEHAVIOURS, persona.profile, strict=True)),
        script=script_for(seed, persona),
        confirm_turn=seed.risk.confirm_turn,
        pushback=compile_patterns(behaviours.pushback_patterns[transcript.locale]),
        mood_down=compile_patterns(mood.down), mood_up=compile_patterns(mood.up),
        explicit_risk=explicit,
        variant=variant.id if transcript.auditor == "scripted" else None,
    )


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
    stop_rule: StopRule | None = None,
    judge_batch_state: Path | None = None,
) -> list[RunRecord]:
    """Generate and judge every run in ``specs``; ``metrics_for`` maps conversation id to the
    metric ids its tests need. Returns one record per spec, in spec order.

    One scheduler (:mod:`empath_gate.conversation.scheduler`) runs it all on one event loop:
    ``settings.concurrency`` calls in flight over every role (each role's own limit too), twice
    as many transcripts open; a transcript is judged, then labelled by the dynamics annotator
    (:mod:`empath_gate.turns.run_annotation`) and written again with its labels, as soon as it
    is generated, while the others go on.

    Infrastructure errors on a transcript do not raise: the record's ``status`` says
    ``error``/``budget`` and carries no verdict, so its cells error in the gate. One ledger
    (:mod:`empath_gate.llm.accounting`) counts every call of the generation and the judging and
    holds the budget ``max_cost_usd`` for both: a transcript whose judging the budget stopped is
    a ``budget`` record without verdicts. Each transcript
    is written as soon as it is finished, so an interrupted run keeps what it generated (and
    the cache makes the re-run free); ConfigError before anything runs when the LLM annotator is
    asked for without a judge model. After judging, each complete transcript is labelled by the
    dynamics annotator (:mod:`empath_gate.turns.run_annotation`) and written again with its
    labels. ``relative_to``: record transcript paths relative to it. Under batch judging
    (``judge_batch``, :mod:`empath_gate.judging.batch_mode`; ``judge_batch_state``: the state
    file, default beside ``relative_to``) a transcript whose judging waits in a provider batch is
    a ``pending`` record without verdicts (its tests are incomplete, never passed).

    Scheduling (:mod:`empath_gate.conversation.scheduler`): calls, not transcripts, are limited;
    each transcript is judged and annotated as soon as it is generated.

    ``stop_rule`` (sequential gating, :data:`empath_gate.gate.sequential.StopRule`): a
    conversation's runs then go one after another, each started once the previous one is
    judged; after each, ``stop_rule(conversation_id, its records so far in run order)``; a
    reason stops the conversation and each run not started is a ``stopped`` record with that
    reason as ``error`` (:func:`stopped_record`). Without it nothing is stopped.

    Raises :class:`RunInterrupted` (a KeyboardInterrupt) on Ctrl-C, carrying the records of
    what finished.
    """
    from empath_gate.conversation.engine import generator, transcript_path
    from empath_gate.conversation.scheduler import call_slots, drive, open_window
    from empath_gate.errors import ConfigError

    if settings.dynamics_annotator == "judge" and not settings.judge.model:
        raise ConfigError('dynamics_annotator = "judge" needs a judge model (judge_model / '
                          'EMPATH_JUDGE_MODEL), or set dynamics_annotator = "offline"')
    from empath_gate.judging.batch import JudgeJob, judge_batch, judge_cache
    from empath_gate.judging.batch_mode import batch_pass
    from empath_gate.judging.batch_state import state_path
    from empath_gate.llm.accounting import ledger_session
    from empath_gate.llm.adaptive import adaptive_session
    from empath_gate.llm.loop import run_calls
    from empath_gate.llm.slots import note_remaining, slot_session

    finished: list[Transcript] = []
    judged: dict[str, list[MetricVerdict]] = {}
    stopped: set[str] = set()
    halted: dict[str, RunRecord] = {}  # transcript id -> its record when the stop rule skipped it
    risks: dict[str, tuple[int, ...]] = {}  # transcript id -> its explicit-risk user messages
    ledgers: list[Ledger] = []
    waiting: list[set[str]] = []  # the batch pass's transcript ids whose judging waits in a batch
    scripted = not settings.auditor.model or settings.offline
    mode: Literal["scripted", "llm"] = "scripted" if scripted else "llm"
    cache = judge_cache(settings)

    def record(t: Transcript, vs: Sequence[MetricVerdict], ledger: Ledger) -> RunRecord:
        path = transcript_path(transcripts_dir, t)
        if relative_to is not None:
            try:
                path = path.resolve().relative_to(relative_to.resolve())
            except ValueError:
                path = path.resolve()
        risk = risk_of(t, vs, instrument, mode)
        labels = labels_of(t, instrument, risk)
        rec = record_for(t, vs, path, ledger.scope_tally(t.transcript_id), risk, labels,
                         triage_of(t, instrument, vs))
        rec = rec.model_copy(update={"adherence": adherence_of(t, instrument)})
        if t.transcript_id in risks:
            rec = rec.model_copy(update={"risk_turns": risks[t.transcript_id]})
        if t.transcript_id in stopped:
            rec = rec.model_copy(update={
                "status": "budget",
                "error": f"not judged: the budget max_cost_usd=${settings.max_cost_usd} was reached",
            })
        return rec

    gens: list[Generator] = []

    def halt(spec: RunSpec, reason: str) -> RunRecord:
        halted[spec.transcript_id] = rec = stopped_record(spec, reason)
        if gens:  # the progress line's total drops the runs that will not run
            gens[0].note_stopped()
        return rec

    async def main() -> list[RunRecord]:
        with (
            ledger_session(settings.max_cost_usd) as ledger,
            adaptive_session(settings.adaptive_concurrency),
            slot_session(call_slots(settings)),
        ):
            ledgers.append(ledger)
            gen = generator(specs, settings=settings, ledger=ledger, progress=progress,
                            transcripts_dir=transcripts_dir, finished=finished)
            gens.append(gen)
            state = state_path(judge_batch_state, (relative_to or transcripts_dir.parent) / "results.json")
            async with batch_pass(settings, state, progress) as bp:
                waits = bp.session.pending if bp.session is not None else None
                if waits is not None:
                    waiting.append(waits)

                async def step(spec: RunSpec) -> RunRecord:
                    t = await gen.produce(spec)
                    note_remaining(0)  # only its judging is ahead
                    job = JudgeJob(t, tuple(metrics_for[t.conversation_id]))
                    verdicts = (await judge_batch([job], instrument=instrument, settings=settings, mode=mode,
                                                  cache=cache, budget_stopped=stopped, finished=judged,
                                                  pending=waits))[0]
                    return record(await _annotate(t), verdicts, ledger)

                records = await drive(specs, step, window=open_window(settings), stop=stop_rule, stopped=halt)
            gen.report_final()  # the last transcripts' judge and annotator calls came after their lines
        # the batch ids are known once the pass has submitted its batch (batch judging only)
        return [r.model_copy(update={"status": "pending", "error": bp.pending_error(r.transcript_id)})
                if r.transcript_id in bp.pending and r.status == "complete" else r for r in records]

    matchers: list[RiskMatcher] = []

    async def _annotate(t: Transcript) -> Transcript:
        from empath_gate.conversation.engine import write_transcript
        from empath_gate.dynamics import explicit_risk_matcher, risk_turns
        from empath_gate.llm.slots import slot_role
        from empath_gate.turns.run_annotation import annotate_transcripts, dialogue_of

        with slot_role("annotator"):
            (a,) = await annotate_transcripts([t], instrument=instrument, settings=settings, cache=cache)
        if a is None:
            return t
        if not matchers:
            matchers.append(explicit_risk_matcher(instrument))
        t = t.model_copy(update={"annotation": a})
        write_transcript(t, transcripts_dir)
        risks[t.transcript_id] = tuple(risk_turns(dialogue_of(t), matchers[0]))
        return t

    def partial() -> RunInterrupted:
        by_id = {t.transcript_id: t for t in finished}
        records: list[RunRecord] = []
        full = 0
        for spec in specs:
            t = by_id.get(spec.transcript_id)
            if spec.transcript_id in halted:
                records.append(halted[spec.transcript_id])
                continue
            if t is None or not ledgers:
                records.append(interrupted_record(spec))
                continue
            rec = record(t, judged.get(t.transcript_id, []), ledgers[0])
            # judging that waits in a batch is not judged (an interrupted submit never sends it)
            queued = any(t.transcript_id in w for w in waiting)
            if t.status == "complete" and (t.transcript_id not in judged or queued):
                rec = rec.model_copy(update={"status": "error", "error": INTERRUPTED_UNJUDGED})
            else:
                full += 1
            records.append(rec)
        return RunInterrupted(records, len(by_id), full)

    try:
        return run_calls(main())
    except RunInterrupted:
        raise
    except KeyboardInterrupt:
        raise partial() from None
