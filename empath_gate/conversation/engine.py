"""The conversation engine: turns (seed, persona, run) into transcripts, a whole plan at once.

:func:`generate` runs every :class:`RunSpec` of a plan concurrently (asyncio over litellm's
async API): up to ``Settings.concurrency`` transcripts at a time, and at most
``RoleSettings.concurrency`` calls in flight per model (a semaphore per model in the client).
Turns within a transcript are sequential: auditor, then target, until ``max_turns`` user
turns (one user message + one target reply each) or until the auditor ends the conversation
(the scripted auditor ends when the seed's script is exhausted).

Per-run seeds: run ``k`` of conversation ``c`` uses
``derive_seed(base, c, k) = int(sha256(f"{base}:{c}:{k}")[:8 hex digits]) & 0x7FFFFFFF`` for
every role that sends a seed (``base`` is the role's ``seed`` or ``Settings.base_seed``), so the
N runs of a conversation are N different samples, never one sample repeated.

States and events:

* An infrastructure error (a provider error after retries, a content filter on the auditor, an
  exception in the team's callable) ends that transcript with ``status="error"`` and the
  reason in ``error`` (plus an ``error`` event); the plan goes on.
* A content filter on the **target** is a safety event: the assistant turn is recorded with
  empty content and a ``filtered`` event, it is never shown to the target again as content,
  and **the conversation continues** (the auditor sees "(no reply)" and writes its next
  message), so the rest of the target's behaviour is still observed.
* ``max_cost_usd``: once the known spend reaches the budget, no new transcript starts; those
  not started are recorded with ``status="budget"`` and a ``budget`` event (transcripts
  already running finish). Unpriced calls (cost unknown) cannot count towards it; the progress
  line says how many there were.
* Every spec yields exactly one transcript, in spec order, across retries and concurrency.

Transcripts are JSONL files, one per run (:func:`write_transcript`):
``<dir>/<suite>/<seed>__<persona>__r<run>.jsonl`` (``__`` cannot occur inside a slug).
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
import os
import tempfile
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from empath_gate.conversation.auditor import Auditor, AuditorFilteredError, make_auditor
from empath_gate.conversation.target import Target, make_target
from empath_gate.conversation.transcript import Event, Transcript, Turn
from empath_gate.errors import ConfigError, ProviderError
from empath_gate.instrument.models import Persona, Seed
from empath_gate.llm.cache import Cache
from empath_gate.llm.classify import redact_secrets
from empath_gate.llm.client import utc_now
from empath_gate.settings import Settings

ProgressFn = Callable[[str], None]


class RunSpec(BaseModel):
    """One transcript to generate: run ``run`` (0-based) of conversation seed x persona in
    ``suite``. ``max_turns`` counts user turns (each followed by one target reply); it is
    ``seed.max_turns`` when set, else the suite's. Ids follow the transcript contract:
    ``conversation_id = <seed>-<persona>``, ``transcript_id = <conversation_id>-r<run>``
    (:meth:`build` makes them). The seed and persona must share a locale."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    suite: str
    seed: Seed
    persona: Persona
    run: int = Field(ge=0)
    max_turns: int = Field(ge=1, le=60)
    conversation_id: str
    transcript_id: str

    @model_validator(mode="after")
    def _same_locale(self) -> RunSpec:
        if self.seed.locale != self.persona.locale:
            seed, persona = self.seed, self.persona
            raise ValueError(f"seed {seed.id} is {seed.locale} but persona {persona.id} is {persona.locale}")
        return self

    @classmethod
    def build(
        cls, suite: str, seed: Seed, persona: Persona, run: int, *, suite_max_turns: int = 8
    ) -> RunSpec:
        """A spec with the contract's ids and ``max_turns = seed.max_turns or suite_max_turns``."""
        cid = f"{seed.id}-{persona.id}"
        return cls(
            suite=suite,
            seed=seed,
            persona=persona,
            run=run,
            max_turns=seed.max_turns or suite_max_turns,
            conversation_id=cid,
            transcript_id=f"{cid}-r{run}",
        )


def derive_seed(base_seed: int, conversation_id: str, run: int) -> int:
    """The seed of run ``run`` of ``conversation_id``: the first 32 bits of
    ``sha256(f"{base_seed}:{conversation_id}:{run}")`` masked to 31 bits (0 <= seed < 2**31,
    accepted by every provider that takes a seed)."""
    digest = hashlib.sha256(f"{base_seed}:{conversation_id}:{run}".encode()).hexdigest()
    return int(digest[:8], 16) & 0x7FFFFFFF


# --------------------------------------------------------------------------- progress


@dataclass
class PlanStats:
    """Running totals of a plan (a mutable accumulator). ``calls``: provider attempts made
    (cache hits excluded); ``cost_usd``: known spend in USD; ``unpriced_calls``: provider-served
    turns whose price is unknown; ``not_started``: transcripts the budget stopped."""

    total: int = 0
    done: int = 0
    calls: int = 0
    cache_hits: int = 0
    cost_usd: float = 0.0
    unpriced_calls: int = 0
    errors: int = 0
    not_started: int = 0
    auditor_refusals: int = 0
    auditor_fallbacks: int = 0
    target_filtered: int = 0

    def cost_text(self) -> str:
        """``$X`` when every call was priced, else ``≥ $X, k calls unpriced``."""
        if self.unpriced_calls:
            return f"≥ ${self.cost_usd:.4f}, {self.unpriced_calls} calls unpriced"
        return f"${self.cost_usd:.4f}"

    def line(self) -> str:
        """The progress line, e.g. ``transcripts 12/100 · 73 calls, 5 cached · ≥ $0.0123, 4 calls
        unpriced``."""
        parts = [
            f"transcripts {self.done}/{self.total}",
            f"{self.calls} calls, {self.cache_hits} cached",
            self.cost_text(),
        ]
        if self.errors:
            parts.append(f"{self.errors} errors")
        if self.target_filtered:
            parts.append(f"{self.target_filtered} target replies filtered")
        if self.auditor_fallbacks or self.auditor_refusals:
            parts.append(f"auditor: {self.auditor_refusals} refusals, {self.auditor_fallbacks} fallbacks")
        if self.not_started:
            parts.append(f"budget reached: {self.not_started} not started")
        return "empath-gate: " + " · ".join(parts)


# --------------------------------------------------------------------------- one transcript


def _dialogue(turns: Sequence[Turn]) -> list[dict[str, str]]:
    return [{"role": t.role, "content": t.content} for t in turns]


class _Engine:
    def __init__(
        self,
        settings: Settings,
        target: Target,
        auditor: Auditor,
        cache: Cache | None,
        stats: PlanStats,
        progress: ProgressFn | None,
        transcripts_dir: Path | None,
    ) -> None:
        self.settings = settings
        self.target = target
        self.auditor = auditor
        self.cache = cache
        self.stats = stats
        self.progress = progress
        self.transcripts_dir = transcripts_dir

    def _count(self, calls: int, cost: float | None, cache: str) -> None:
        s = self.stats
        if cache == "hit":
            s.cache_hits += 1
            return
        s.calls += calls
        if calls:
            if cost is None:
                s.unpriced_calls += 1
            else:
                s.cost_usd += cost

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

    def budget_transcript(self, spec: RunSpec) -> Transcript:
        limit = self.settings.max_cost_usd
        detail = {
            "max_cost_usd": limit,
            "spent_usd": round(self.stats.cost_usd, 6),
            "unpriced_calls": self.stats.unpriced_calls,
        }
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

    async def run_one(self, spec: RunSpec) -> Transcript:
        s = self.settings
        tseed = derive_seed(
            s.target_role.seed if s.target_role.seed is not None else s.base_seed,
            spec.conversation_id,
            spec.run,
        )
        aseed = derive_seed(
            s.auditor.seed if s.auditor.seed is not None else s.base_seed, spec.conversation_id, spec.run
        )
        turns: list[Turn] = []
        events: list[Event] = []
        status: Literal["complete", "error"] = "complete"
        error: str | None = None
        started = utc_now()
        phase = "auditor"
        try:
            for k in range(spec.max_turns):
                phase = "auditor"
                at = await self.auditor.next_turn(
                    seed=spec.seed,
                    persona=spec.persona,
                    history=turns,
                    user_turn=k,
                    max_turns=spec.max_turns,
                    run=spec.run,
                    call_seed=aseed,
                    cache=self.cache,
                )
                self._count(at.calls, at.cost_usd, at.cache)
                self.stats.auditor_refusals += sum(1 for e in at.events if e.kind == "auditor_refusal")
                self.stats.auditor_fallbacks += sum(1 for e in at.events if e.kind == "fallback")
                if at.content is None:
                    events.extend(at.events)
                    break
                turns.append(
                    Turn(
                        index=len(turns),
                        role="user",
                        content=at.content,
                        source=at.source,
                        model=at.model,
                        usage=at.usage,
                        cost_usd=at.cost_usd,
                        finish_reason=at.finish_reason,
                        system_fingerprint=at.system_fingerprint,
                        started_at=at.started_at,
                        ended_at=at.ended_at,
                        cache=at.cache,
                        events=at.events,
                    )
                )
                phase = "target"
                tr = await self.target.reply(
                    _dialogue(turns),
                    conversation_id=spec.transcript_id,
                    run=spec.run,
                    seed=tseed,
                    cache=self.cache,
                )
                self._count(tr.calls, tr.cost_usd, tr.cache)
                if tr.filtered:
                    self.stats.target_filtered += 1
                turns.append(
                    Turn(
                        index=len(turns),
                        role="assistant",
                        content=tr.content,
                        source="target",
                        model=tr.model,
                        usage=tr.usage,
                        cost_usd=tr.cost_usd,
                        finish_reason=tr.finish_reason,
                        system_fingerprint=tr.system_fingerprint,
                        started_at=tr.started_at,
                        ended_at=tr.ended_at,
                        cache=tr.cache,
                        events=tr.events,
                    )
                )
        except AuditorFilteredError as exc:
            status, error = "error", f"auditor: filtered: {exc}"
            events.append(Event(kind="filtered", role="auditor", detail={"kind": exc.kind}))
            events.append(Event(kind="error", role="engine", detail={"phase": "auditor", "kind": "filtered"}))
        except ProviderError as exc:
            status, error = "error", f"{phase}: {exc.kind}: {redact_secrets(str(exc))}"
            events.append(
                Event(
                    kind="error",
                    role="engine",
                    detail={"phase": phase, "kind": exc.kind, "status": exc.status_code},
                )
            )
        except (asyncio.CancelledError, KeyboardInterrupt, ConfigError):
            raise
        except Exception as exc:  # the team's callable or an unexpected reply shape
            status, error = "error", f"{phase}: {type(exc).__name__}: {redact_secrets(str(exc))}"
            events.append(
                Event(kind="error", role="engine", detail={"phase": phase, "kind": type(exc).__name__})
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


async def generate(
    runs: Sequence[RunSpec],
    *,
    settings: Settings,
    progress: ProgressFn | None = None,
    target: Target | None = None,
    auditor: Auditor | None = None,
    transcripts_dir: Path | None = None,
) -> list[Transcript]:
    """Generate one transcript per spec (same order), concurrently.

    ``progress`` receives the progress line (:meth:`PlanStats.line`) after each transcript.
    ``target``/``auditor`` default to the adapters ``settings`` selects (``make_target``,
    ``make_auditor``; the auditor is scripted when ``settings.auditor.model`` is None or
    ``settings.offline``). ``transcripts_dir``: when set, each transcript is written there as
    soon as it is finished (:func:`write_transcript`).

    Raises ValueError for duplicate transcript ids, ConfigError for an unusable target
    setting. Provider failures never raise: they become ``error`` transcripts.
    """
    ids = [r.transcript_id for r in runs]
    if len(set(ids)) != len(ids):
        dup = sorted({i for i in ids if ids.count(i) > 1})
        raise ValueError(f"duplicate transcript ids in the plan: {dup[:5]}")
    tgt = target if target is not None else make_target(settings)
    aud = auditor if auditor is not None else make_auditor(settings.auditor, offline=settings.offline)
    cache = None if settings.cache_mode == "off" else Cache(settings.cache_dir, mode=settings.cache_mode)
    stats = PlanStats(total=len(runs))
    engine = _Engine(settings, tgt, aud, cache, stats, progress, transcripts_dir)
    results: list[Transcript | None] = [None] * len(runs)
    next_index = iter(range(len(runs)))

    async def worker() -> None:
        for i in next_index:
            spec = runs[i]
            limit = settings.max_cost_usd
            if limit is not None and stats.cost_usd >= limit:
                transcript = engine.budget_transcript(spec)
                stats.not_started += 1
            else:
                transcript = await engine.run_one(spec)
            if results[i] is not None:  # pragma: no cover - guarded by construction
                raise RuntimeError(f"transcript {spec.transcript_id} recorded twice")
            results[i] = transcript
            if transcripts_dir is not None:
                write_transcript(transcript, transcripts_dir)
            stats.done += 1
            if progress is not None:
                progress(stats.line())

    n_workers = max(1, min(settings.concurrency, len(runs)))
    await asyncio.gather(*(worker() for _ in range(n_workers)))
    missing = [runs[i].transcript_id for i, t in enumerate(results) if t is None]
    if missing:  # pragma: no cover - every index is consumed exactly once
        raise RuntimeError(f"no transcript recorded for {missing[:5]}")
    return [t for t in results if t is not None]


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
        return asyncio.run(generate(runs, settings=settings, progress=progress, **kwargs))
    raise RuntimeError("generate_sync() called inside a running event loop; await generate() instead")


def summarize(transcripts: Sequence[Transcript]) -> PlanStats:
    """Totals of finished transcripts (pure): calls, cache hits, known cost, unpriced calls,
    errors, budget stops, auditor refusals/fallbacks, filtered target replies. ``calls`` counts
    turns served by a provider (a turn whose call was retried counts once)."""
    s = PlanStats(total=len(transcripts), done=len(transcripts))
    for t in transcripts:
        for turn in t.turns:
            if turn.model is None and turn.cache == "off":
                continue  # scripted user turn: no call
            if turn.cache == "hit":
                s.cache_hits += 1
                continue
            s.calls += 1
            if turn.cost_usd is None:
                s.unpriced_calls += 1
            else:
                s.cost_usd += turn.cost_usd
        events = [e for turn in t.turns for e in turn.events] + list(t.events)
        s.auditor_refusals += sum(1 for e in events if e.kind == "auditor_refusal")
        s.auditor_fallbacks += sum(1 for e in events if e.kind == "fallback")
        s.target_filtered += t.target_filtered
        s.errors += t.status == "error"
        s.not_started += t.status == "budget" and not t.turns
    return s


# --------------------------------------------------------------------------- JSONL files


def transcript_path(directory: Path, transcript: Transcript) -> Path:
    """``<directory>/<suite>/<seed>__<persona>__r<run>.jsonl``."""
    name = f"{transcript.seed_id}__{transcript.persona_id}__r{transcript.run}.jsonl"
    return Path(directory) / transcript.suite / name


_UMASK = os.umask(0)
os.umask(_UMASK)
_FILE_MODE = 0o666 & ~_UMASK
"""Mode of written transcripts: what ``open()`` would give under the process umask."""


def write_transcript(transcript: Transcript, directory: Path) -> Path:
    """Write ``transcript`` as JSONL (a header line, then one line per turn; UTF-8, not
    ASCII-escaped) atomically at :func:`transcript_path`; returns the path."""
    path = transcript_path(directory, transcript)
    path.parent.mkdir(parents=True, exist_ok=True)
    header = {"type": "header", **transcript.model_dump(mode="json", exclude={"turns"})}
    lines = [json.dumps(header, ensure_ascii=False)]
    lines += [
        json.dumps({"type": "turn", **t.model_dump(mode="json")}, ensure_ascii=False)
        for t in transcript.turns
    ]
    fd, tmp = tempfile.mkstemp(prefix=f".{path.stem}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write("\n".join(lines) + "\n")
        os.chmod(tmp, _FILE_MODE)  # mkstemp makes 0600; a transcript is read like any report
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    return path


def read_transcript(path: Path) -> Transcript:
    """Read a JSONL transcript written by :func:`write_transcript`. Raises ValueError naming the
    file and line when a line is not JSON, the header is missing, or a record is invalid."""
    header: Mapping[str, Any] | None = None
    turns: list[Turn] = []
    with Path(path).open(encoding="utf-8") as fh:
        for n, line in enumerate(fh, 1):
            if not line.strip():
                continue
            try:
                rec = json.loads(line)
                kind = rec.pop("type", None)
                if n == 1 and kind == "header":
                    header = rec
                elif kind == "turn" and header is not None:
                    turns.append(Turn.model_validate(rec))
                else:
                    raise ValueError(f"unexpected record type {kind!r}")
            except ValueError as exc:  # JSONDecodeError and pydantic's ValidationError are ValueErrors
                raise ValueError(f"{path}:{n}: {exc}") from None
    if header is None:
        raise ValueError(f"{path}: no header line")
    try:
        return Transcript.model_validate({**header, "turns": turns})
    except ValueError as exc:
        raise ValueError(f"{path}:1: {exc}") from None
