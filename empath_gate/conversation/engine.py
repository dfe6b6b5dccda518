"""The conversation engine: turns (seed, persona, run) into transcripts, a whole plan at once.

:func:`generate` runs every :class:`RunSpec` of a plan concurrently (asyncio over litellm's
async API) under the run's scheduler (:mod:`empath_gate.conversation.scheduler`): at most
``Settings.concurrency`` calls in flight over every role and each role's
``RoleSettings.concurrency`` (call slots, :mod:`empath_gate.llm.slots`), at most that many per
model (a semaphore per model in the client, narrowed on 429s when
``Settings.adaptive_concurrency`` is on: :mod:`empath_gate.llm.adaptive`), and twice
``Settings.concurrency`` transcripts open at once. :class:`Generator` is the per-spec step a
caller that also judges (:func:`empath_gate.runner.execute`) schedules itself.
Turns within a transcript are sequential: auditor, then target, until ``max_turns`` user
turns (one user message + one target reply each) or until the auditor ends the conversation
(the scripted auditor ends when the seed's script is exhausted).

Per-run seeds come from :func:`derive_seed` (:mod:`empath_gate.conversation.runspec`), so the
N runs of a conversation are N different samples, never one sample repeated.

States and events:

* An infrastructure error (a provider error after retries, a content filter on the auditor, an
  exception in the team's callable) ends that transcript with ``status="error"`` and the
  reason in ``error`` (plus an ``error`` event); the plan goes on.
* A content filter on the **target** is a safety event: the assistant turn is recorded with
  empty content and a ``filtered`` event, it is never shown to the target again as content,
  and **the conversation continues** (the auditor sees "(no reply)" and writes its next
  message), so the rest of the target's behaviour is still observed.
* An LLM auditor's refusals, breaks and fallbacks are events of the turn (see
  :mod:`empath_gate.conversation.auditor`; counted by
  :func:`~empath_gate.conversation.transcript.auditor_tally`).
* Spoken transcripts (a ``voice: true`` suite, ``RunSpec.cues`` set): the transcript keeps
  every cue token the auditor or the script wrote; with ``Settings.target_cues == "strip"``
  the target (and so its cache key) receives the user turns without them
  (:func:`~empath_gate.instrument.cues.strip_for_target`).
* ``max_cost_usd``: the budget is enforced per call (:mod:`empath_gate.llm.accounting`): each
  call reserves its estimated cost before it starts, and no call starts once known spend plus
  reservations reaches the budget. A transcript whose next call is refused stops with
  ``status="budget"`` (the turns so far are kept); transcripts not started then are recorded with
  ``status="budget"``, no turns and a ``budget`` event. Unpriced calls (cost unknown) cannot
  count towards it; the progress line says how many there were. The ledger is the run's when
  one is active (:func:`empath_gate.runner.execute` shares it with the judge), else this
  generation's own.
* A target that keeps a session and was served from the cache for the first turns only raises
  :class:`~empath_gate.conversation.target.RestartTranscript` at the first uncached turn: the
  transcript is generated again from its first turn (the bot then sees every turn), so a cached
  stateful bot is replayed whole or not at all.
* A multi-party seed's user turns carry their speaker (``Turn.speaker``); the target receives
  them by ``Settings.multi_party_convention`` (:mod:`empath_gate.conversation.speakers`).
* Every spec yields exactly one transcript, in spec order, across retries and concurrency.

Transcripts are JSONL files, one per run (:func:`write_transcript`, in
:mod:`empath_gate.conversation.transcript_io`). The run specs, the progress totals and the file
I/O live in their own modules and are importable from here as well.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, Literal

from empath_gate.bounded import well_formed
from empath_gate.conversation.auditor import Auditor, AuditorFilteredError, AuditorTurn, make_auditor
from empath_gate.conversation.plan_stats import PlanStats, summarize
from empath_gate.conversation.runspec import RunSpec, derive_seed
from empath_gate.conversation.scheduler import call_slots, drive, open_window
from empath_gate.conversation.speakers import speaker_ref, target_dialogue
from empath_gate.conversation.target import RestartTranscript, Target, TargetReply, make_target
from empath_gate.conversation.transcript import Event, Transcript, Turn
from empath_gate.conversation.transcript_io import read_transcript, transcript_path, write_transcript
from empath_gate.errors import BudgetExceeded, ConfigError, ProviderError
from empath_gate.instrument.cues import CueVocabulary, strip_for_target
from empath_gate.instrument.models import Seed
from empath_gate.llm.accounting import Ledger, ledger_session, scope
from empath_gate.llm.adaptive import adaptive_session
from empath_gate.llm.cache import Cache
from empath_gate.llm.classify import redact_secrets
from empath_gate.llm.client import utc_now
from empath_gate.llm.loop import run_calls
from empath_gate.llm.slots import note_remaining, slot_session
from empath_gate.settings import Settings

__all__ = [
    "Generator",
    "PlanStats",
    "ProgressFn",
    "RunSpec",
    "derive_seed",
    "generate",
    "generate_sync",
    "generator",
    "read_transcript",
    "summarize",
    "transcript_path",
    "write_transcript",
]

ProgressFn = Callable[[str], None]


# --------------------------------------------------------------------------- one transcript


def _user_turn(index: int, at: AuditorTurn, seed: Seed) -> Turn:
    assert at.content is not None
    speaker = speaker_ref(seed, at.speaker) if at.speaker is not None else None
    return Turn(
        index=index, role="user", content=at.content, source=at.source, feeling_0_100=at.feeling_0_100,
        speaker=speaker,
        model=at.model, usage=at.usage,
        cost_usd=at.cost_usd, finish_reason=at.finish_reason, system_fingerprint=at.system_fingerprint,
        started_at=at.started_at, ended_at=at.ended_at, cache=at.cache, events=at.events,
    )


def _assistant_turn(index: int, tr: TargetReply) -> Turn:
    return Turn(
        index=index, role="assistant", content=tr.content, source="target", model=tr.model,
        usage=tr.usage, cost_usd=tr.cost_usd, finish_reason=tr.finish_reason,
        system_fingerprint=tr.system_fingerprint, started_at=tr.started_at, ended_at=tr.ended_at,
        cache=tr.cache, events=tr.events,
    )


def _role_seed(role_seed: int | None, settings: Settings, spec: RunSpec) -> int:
    base = role_seed if role_seed is not None else settings.base_seed
    return derive_seed(base, spec.conversation_id, spec.run)


class _Engine:
    def __init__(
        self, settings: Settings, target: Target, auditor: Auditor, cache: Cache | None, stats: PlanStats
    ) -> None:
        self.settings = settings
        self.target = target
        self.auditor = auditor
        self.cache = cache
        self.stats = stats

    def _count_auditor(self, at: AuditorTurn) -> None:
        for e in at.events:
            if e.kind == "fallback":
                self.stats.auditor_fallbacks += 1
            elif e.kind == "auditor_refusal" and e.detail.get("outcome") == "retried":
                self.stats.auditor_refusals += 1

    def _header(self, spec: RunSpec) -> dict[str, Any]:
        return {
            "suite": spec.suite,
            "seed_id": spec.seed.id,
            "persona_id": spec.persona.id,
            "locale": spec.seed.locale,
            "run": spec.run,
            "conversation_id": spec.conversation_id,
            "transcript_id": spec.transcript_id,
            "target": self.target.description,
            "target_prompt_hash": self.target.prompt_hash,
            "auditor": self.auditor.name,
            "max_turns": spec.max_turns,
        }

    def _budget_detail(self) -> dict[str, Any]:
        return {
            "max_cost_usd": self.settings.max_cost_usd,
            "spent_usd": round(self.stats.cost_usd, 6),
            "unpriced_calls": self.stats.unpriced_calls,
        }

    def budget_transcript(self, spec: RunSpec) -> Transcript:
        limit = self.settings.max_cost_usd
        detail = self._budget_detail()
        now = utc_now()
        return Transcript(
            **self._header(spec),
            status="budget",
            error=f"not started: the budget max_cost_usd=${limit} was reached "
            f"(spent {self.stats.cost_text()})",
            events=(Event(kind="budget", role="engine", detail=detail),),
            started_at=now,
            ended_at=now,
        )

    async def _converse(
        self, spec: RunSpec, turns: list[Turn], events: list[Event], phase: list[str]
    ) -> None:
        """Alternate auditor and target turns into ``turns`` until ``max_turns`` or the auditor
        ends; ``phase[0]`` names the role being called (for the error message)."""
        s = self.settings
        tseed = _role_seed(s.target_role.seed, s, spec)
        aseed = _role_seed(s.auditor.seed, s, spec)
        strip = CueVocabulary(spec.cues) if spec.cues and s.target_cues == "strip" else None
        for k in range(spec.max_turns):
            note_remaining(spec.max_turns - k)
            phase[0] = "auditor"
            at = await self.auditor.next_turn(
                seed=spec.seed, persona=spec.persona, history=turns, user_turn=k,
                max_turns=spec.max_turns, run=spec.run, call_seed=aseed, cache=self.cache,
                cues=spec.cues, behaviours=spec.behaviours,
            )
            self._count_auditor(at)
            if at.content is None:
                events.extend(at.events)
                return
            turns.append(_user_turn(len(turns), at, spec.seed))
            phase[0] = "target"
            # the transcript keeps the cues; a strip target gets none
            dialogue = target_dialogue(turns, s.multi_party_convention)
            tr = await self.target.reply(
                dialogue if strip is None else strip_for_target(dialogue, strip),
                conversation_id=spec.transcript_id, run=spec.run, seed=tseed, cache=self.cache,
            )
            self.stats.target_filtered += tr.filtered
            turns.append(_assistant_turn(len(turns), tr))

    async def _converse_whole(
        self, spec: RunSpec, turns: list[Turn], events: list[Event], phase: list[str]
    ) -> None:
        """:meth:`_converse`, once more from the first turn when the target asks for it
        (:class:`RestartTranscript`: a bot with a session whose replies were cached only in part);
        the counts of the abandoned attempt are taken back."""
        counts = (self.stats.auditor_fallbacks, self.stats.auditor_refusals, self.stats.target_filtered)
        try:
            await self._converse(spec, turns, events, phase)
        except RestartTranscript:
            turns.clear()
            events.clear()
            self.stats.auditor_fallbacks, self.stats.auditor_refusals, self.stats.target_filtered = counts
            await self._converse(spec, turns, events, phase)

    async def run_one(self, spec: RunSpec) -> Transcript:
        turns: list[Turn] = []
        events: list[Event] = []
        status: Literal["complete", "error", "budget"] = "complete"
        error: str | None = None
        started = utc_now()
        phase = ["auditor"]
        try:
            with scope(spec.transcript_id):
                await self._converse_whole(spec, turns, events, phase)
        except BudgetExceeded as exc:
            status, error = "budget", f"stopped: {phase[0]}: {exc}"
            events.append(Event(kind="budget", role="engine", detail=self._budget_detail()))
        except AuditorFilteredError as exc:
            status, error = "error", f"auditor: filtered: {exc}"
            events.append(Event(kind="filtered", role="auditor", detail={"kind": exc.kind}))
            events.append(Event(kind="error", role="engine", detail={"phase": "auditor", "kind": "filtered"}))
        except ProviderError as exc:
            status, error = "error", f"{phase[0]}: {exc.kind}: {well_formed(redact_secrets(str(exc)))}"
            detail = {"phase": phase[0], "kind": exc.kind, "status": exc.status_code}
            events.append(Event(kind="error", role="engine", detail=detail))
        except (asyncio.CancelledError, KeyboardInterrupt, ConfigError):
            raise
        except Exception as exc:  # the team's callable or an unexpected reply shape
            text = well_formed(redact_secrets(str(exc)))
            status, error = "error", f"{phase[0]}: {type(exc).__name__}: {text}"
            events.append(
                Event(kind="error", role="engine", detail={"phase": phase[0], "kind": type(exc).__name__})
            )
        if status == "error":
            self.stats.errors += 1
        return Transcript(
            **self._header(spec),
            turns=tuple(turns),
            status=status,
            error=error,
            events=tuple(events),
            started_at=started,
            ended_at=utc_now(),
        )


# --------------------------------------------------------------------------- the plan


class Generator:
    """Generates the transcripts of a plan one spec at a time, for a scheduler
    (:func:`empath_gate.conversation.scheduler.drive`): :meth:`produce` records each transcript
    (written to ``transcripts_dir`` and appended to ``finished`` as soon as it is finished),
    counts it in the plan's progress and reports the progress line. Build it with
    :func:`generator`."""

    def __init__(
        self, engine: _Engine, ledger: Ledger, *, progress: ProgressFn | None,
        transcripts_dir: Path | None, finished: list[Transcript] | None,
    ) -> None:
        self.engine = engine
        self.ledger = ledger
        self.progress = progress
        self.transcripts_dir = transcripts_dir
        self.finished = finished
        self.started = time.monotonic()

    @property
    def stats(self) -> PlanStats:
        """The plan's progress totals so far."""
        return self.engine.stats

    def note_stopped(self, count: int = 1) -> None:
        """Count ``count`` runs sequential gating will not start: they leave the plan's total and
        time left, and the progress line is reported again."""
        self.engine.stats.stopped += count
        if self.progress is not None:
            self.progress(self.engine.stats.progress_line(time.monotonic() - self.started))

    def report_final(self) -> None:
        """Report the plan's final progress line from the ledger's final totals, once every
        call of the run has settled (the judging and annotation of the last transcripts come
        after their own lines); a front-end shows it when it differs from the last line shown
        (:class:`empath_gate.report.progress.ThrottledProgress`)."""
        self.engine.stats.sync(self.ledger)
        if self.progress is not None:
            self.progress(self.engine.stats.progress_line(time.monotonic() - self.started))

    async def produce(self, spec: RunSpec) -> Transcript:
        """The transcript of ``spec``: a ``budget`` transcript without turns when the ledger's
        budget is exhausted before it starts, else generated (provider failures become
        ``error`` transcripts; see the module docstring)."""
        stats, ledger = self.engine.stats, self.ledger
        stats.sync(ledger)
        if ledger.exhausted:
            transcript = self.engine.budget_transcript(spec)
            stats.not_started += 1
        else:
            transcript = await self.engine.run_one(spec)
        if self.transcripts_dir is not None:
            write_transcript(transcript, self.transcripts_dir)
        if self.finished is not None:
            self.finished.append(transcript)
        stats.done += 1
        stats.sync(ledger)
        if self.progress is not None:
            self.progress(stats.progress_line(time.monotonic() - self.started))
        return transcript


def generator(
    runs: Sequence[RunSpec],
    *,
    settings: Settings,
    ledger: Ledger,
    progress: ProgressFn | None = None,
    target: Target | None = None,
    auditor: Auditor | None = None,
    transcripts_dir: Path | None = None,
    finished: list[Transcript] | None = None,
) -> Generator:
    """The :class:`Generator` of ``runs`` (see :func:`generate` for the arguments), its budget
    and counts on ``ledger``. Raises ValueError for duplicate transcript ids, ConfigError for an
    unusable target setting."""
    ids = [r.transcript_id for r in runs]
    if len(set(ids)) != len(ids):
        dup = sorted({i for i in ids if ids.count(i) > 1})
        raise ValueError(f"duplicate transcript ids in the plan: {dup[:5]}")
    tgt = target if target is not None else make_target(settings)
    aud = auditor if auditor is not None else make_auditor(settings.auditor, offline=settings.offline)
    cache = None
    if settings.cache_mode != "off":
        cache = Cache(settings.cache_dir, mode=settings.cache_mode, notice=progress)
    engine = _Engine(settings, tgt, aud, cache, PlanStats(total=len(runs)))
    return Generator(engine, ledger, progress=progress, transcripts_dir=transcripts_dir, finished=finished)


async def generate(
    runs: Sequence[RunSpec],
    *,
    settings: Settings,
    progress: ProgressFn | None = None,
    target: Target | None = None,
    auditor: Auditor | None = None,
    transcripts_dir: Path | None = None,
    finished: list[Transcript] | None = None,
) -> list[Transcript]:
    """Generate one transcript per spec (same order), concurrently: at most
    ``settings.concurrency`` calls in flight (and each role's own limit), twice as many
    transcripts open (:mod:`empath_gate.conversation.scheduler`).

    ``progress`` receives the progress line (:meth:`PlanStats.line`) after each transcript, and
    the cache's one line about entries in an old key format, if any (stderr without
    ``progress``). ``target``/``auditor`` default to the adapters ``settings`` selects
    (``make_target``, ``make_auditor``; the auditor is scripted when ``settings.auditor.model``
    is None or ``settings.offline``). ``transcripts_dir``: when set, each transcript is written
    there as soon as it is finished (:func:`write_transcript`). ``finished``: each transcript is
    appended to it as soon as it is finished, so a caller whose run is interrupted (Ctrl-C
    cancels this coroutine) still has them.

    Raises ValueError for duplicate transcript ids, ConfigError for an unusable target
    setting. Provider failures never raise: they become ``error`` transcripts.
    """
    with (
        ledger_session(settings.max_cost_usd) as ledger,
        adaptive_session(settings.adaptive_concurrency),
        slot_session(call_slots(settings)),
    ):
        gen = generator(runs, settings=settings, ledger=ledger, progress=progress, target=target,
                        auditor=auditor, transcripts_dir=transcripts_dir, finished=finished)
        transcripts = await drive(runs, gen.produce, window=open_window(settings))
        gen.report_final()
        return transcripts


def generate_sync(
    runs: Sequence[RunSpec],
    *,
    settings: Settings,
    progress: ProgressFn | None = None,
    **kwargs: Any,
) -> list[Transcript]:
    """:func:`generate` from synchronous code (runs its own event loop). Raises RuntimeError
    when called from a running event loop (await :func:`generate` there instead)."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return run_calls(generate(runs, settings=settings, progress=progress, **kwargs))
    raise RuntimeError("generate_sync() called inside a running event loop; await generate() instead")
