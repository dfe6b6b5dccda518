"""Batch judging in two phases (``judge_batch``: ``submit`` then ``collect``) around the one
judging pass.

* **submit** generates the transcripts as usual; every judge request the reply cache cannot
  answer is recorded instead of called (:mod:`empath_gate.llm.deferred`), then sent as one
  provider batch per :data:`MAX_BATCH_REQUESTS` requests (:mod:`empath_gate.llm.batches`), and
  the state file (:mod:`empath_gate.judging.batch_state`) is written after each batch. The
  transcripts whose judging waits are ``pending`` records: their tests are incomplete (never
  passed). Running submit again sends only requests no batch in the state file holds.
* **collect** runs the same plan (the model cache replays the transcripts: keep it with the
  state file), polls every batch of the state file once and reads the results of the completed
  ones. Judge requests the cache cannot answer take their batch result, which goes through the
  judge's own parser and, when it parses, into the reply cache, so the pass makes no live judge
  call and a later run hits the cache. An error result, a missing line, a batch that failed or
  expired, or a request no batch holds is a visible judge failure (``provider_error``), an
  unparseable reply a ``parse_error`` (not asked again); a batch still running leaves its
  transcripts ``pending`` (incomplete), and collect can be run again. Requests no batch holds
  (the plan or the judge settings changed since the submit) are counted in one line at the end
  of the pass, which says to submit them.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from empath_gate.errors import ConfigError
from empath_gate.judging.batch_state import BatchEntry, BatchState, RequestEntry, read_state, write_state
from empath_gate.llm.deferred import BatchSession, batch_session

if TYPE_CHECKING:
    from empath_gate.settings import Settings

MAX_BATCH_REQUESTS = 50_000
"""Most requests per provider batch (OpenAI's Batch API limit per batch, its batch guide)."""
XDIST_MESSAGE = ("--empath-judge-batch runs in one process: every pytest-xdist worker would write the same "
                 "state file; run it without -n")
"""Why batch judging refuses pytest-xdist workers."""


@dataclass
class BatchPass:
    """One judging pass under batch judging: the ``session`` the judge calls go through (None:
    judging is live), the ``state_file``, the batch ids pending per transcript after the pass
    (``pending``) and the lines to show the user (``notes``)."""

    session: BatchSession | None
    state_file: Path
    pending: dict[str, str] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)

    def pending_error(self, transcript_id: str) -> str:
        """The error text of a ``pending`` record."""
        batch = self.pending.get(transcript_id) or "the judge batch"
        return (f"judging pending in {batch} (state file {self.state_file}): finish with "
                "--judge-batch collect once the batch has completed")


def _now() -> str:
    import datetime as dt

    return dt.datetime.now(dt.timezone.utc).replace(microsecond=0).isoformat()


def _check(settings: Settings, state_file: Path) -> None:
    if not settings.judge.model:
        raise ConfigError("--judge-batch needs a judge model (judge_model / EMPATH_JUDGE_MODEL)")
    if settings.cache_mode != "use":
        raise ConfigError(f"--judge-batch needs the model cache (cache_mode = \"use\", not "
                          f"{settings.cache_mode!r}): the collect run finds the batch results through it")


def check_batch_settings(settings: Settings, state_file: Path) -> BatchState | None:
    """Check, without calling a provider, that ``settings.judge_batch`` can run with
    ``state_file``, and return the state it holds (None: no file, or batch judging off). The
    front-ends call it before the first transcript, so these are usage errors up front, and
    :func:`batch_pass` calls it again. Raises ConfigError: no judge model, the cache off, a
    pytest-xdist worker, a state file unreadable or written for another judge model, collect
    without a state file."""
    mode = settings.judge_batch
    if mode == "off":
        return None
    _check(settings, state_file)
    if os.environ.get("PYTEST_XDIST_WORKER"):
        raise ConfigError(XDIST_MESSAGE)
    state = read_state(state_file)
    if state is not None and state.judge_model != settings.judge.model:
        raise ConfigError(f"{state_file}: its batches were submitted for the judge {state.judge_model}, not "
                          f"{settings.judge.model}; use that judge, or another state file")
    if mode == "collect" and state is None:
        raise ConfigError(f"{state_file}: no judge-batch state file to collect; run with --judge-batch "
                          "submit first (or point --judge-batch-state at its file)")
    return state


async def _collect_session(
    settings: Settings, state: BatchState, state_file: Path
) -> tuple[BatchSession, list[str]]:
    from empath_gate.llm.batches import download, poll, read_results

    session = BatchSession("collect", submitted=state.by_key())
    notes: list[str] = []
    unfinished: set[str] = set()
    model = settings.judge.model or ""
    for b in state.batches:
        wanted = [r.key for r in state.requests if r.batch_id == b.batch_id]
        st = await poll(settings.judge, b.batch_id)
        if st.done:
            text = ""
            for fid in (st.output_file_id, st.error_file_id):
                if fid:
                    text += await download(settings.judge, fid) + "\n"
            for key, got in read_results(text, wanted, model, f"batch {b.batch_id} results").items():
                if isinstance(got, str):
                    session.errors[key] = f"batch {b.batch_id}: {got}"
                else:
                    session.replies[key] = got
            bad = sum(1 for k in wanted if k in session.errors)
            notes.append(f"empath-gate: judge batch {b.batch_id}: completed, {len(wanted) - bad} results"
                         + (f", {bad} without a usable result (judge failures)" if bad else ""))
        elif st.dead:
            for key in wanted:
                session.errors[key] = f"batch {b.batch_id} ended {st.status} without results"
            notes.append(f"empath-gate: judge batch {b.batch_id}: {st.status}, no results: its {len(wanted)} "
                         "requests are judge failures (submit again with a fresh state file to retry)")
        else:
            unfinished.add(b.batch_id)
            notes.append(f"empath-gate: judge batch {b.batch_id}: {st.status} ({st.completed} of {st.total} "
                         f"done): not finished; its transcripts stay pending, run collect again later")
    session.unfinished = frozenset(unfinished)
    return session, notes


async def _submit_recorded(settings: Settings, session: BatchSession, state: BatchState | None,
                           state_file: Path) -> tuple[BatchState | None, list[str]]:
    from empath_gate.llm.batches import submit
    from empath_gate.llm.keying import endpoint_identity

    new = list(session.recorded.values())
    if state is None:
        if not new:
            return None, []
        state = BatchState(judge_model=settings.judge.model or "",
                           endpoint=endpoint_identity(settings.judge.api_base))
    notes: list[str] = []
    for start in range(0, len(new), MAX_BATCH_REQUESTS):
        chunk = new[start:start + MAX_BATCH_REQUESTS]
        batch_id, file_id = await submit(settings.judge, [(r.key, r.body) for r in chunk],
                                         metadata={"empath_gate": "judge"})
        entries = tuple(RequestEntry(key=r.key, batch_id=batch_id, transcript_id=r.transcript_id,
                                     metrics=r.metrics, rejudge=r.rejudge, template_sha256=r.template_sha256)
                        for r in chunk)
        state = state.model_copy(update={
            "batches": (*state.batches, BatchEntry(batch_id=batch_id, input_file_id=file_id,
                                                   requests=len(chunk), submitted_at=_now())),
            "requests": (*state.requests, *entries),
        })
        write_state(state_file, state)  # after every batch: a crash never forgets a created batch
        for r in chunk:
            session.submitted[r.key] = batch_id
        notes.append(f"empath-gate: judge batch {batch_id}: submitted {len(chunk)} judge requests "
                     f"(state file {state_file})")
    return state, notes


def _unheld_note(session: BatchSession, state_file: Path) -> str | None:
    """Collect: the one line telling how many judge requests no batch of ``state_file`` holds,
    why and what to do; None when every request was held."""
    n = len(session.unheld)
    if not n:
        return None
    tids = len({t for t in session.unheld.values() if t})
    whose = f" of {tids} transcript{'s' if tids != 1 else ''}" if tids else ""
    return (f"empath-gate: judge batch: {n} judge request{'s' if n != 1 else ''}{whose} held by no submitted "
            f"batch: the transcript or the judge settings changed since the submit (e.g. another --runs, "
            f"suite, target or judge prompt), so they are judge failures (provider_error) in this run. "
            f"Submit them: run --judge-batch submit with this plan and state file {state_file} (it sends "
            f"only the requests no batch holds), then collect again; or run without --judge-batch to "
            f"judge them live")


@contextlib.asynccontextmanager
async def batch_pass(settings: Settings, state_file: Path,
                     progress: Callable[[str], None] | None = None) -> AsyncIterator[BatchPass]:
    """The judging pass of ``settings.judge_batch`` (module docstring). Inside the block the
    judge's cache misses go to the session; on leaving it (submit) the recorded requests are
    submitted and the state file written. ``pending`` then maps each transcript whose judging
    waits to its batch id. Off (or without a judge model under ``off``): a pass without a session.
    Raises ConfigError (no judge model, cache off, collect without a state file or with another
    judge model) and ProviderError (kind ``batch``) when the provider's batch API fails."""
    mode = settings.judge_batch
    if mode == "off":
        yield BatchPass(session=None, state_file=state_file)
        return
    state = check_batch_settings(settings, state_file)
    notes: list[str] = []
    if mode == "submit" or state is None:
        session = BatchSession("submit", submitted=state.by_key() if state else {})
    else:
        session, notes = await _collect_session(settings, state, state_file)
    for line in notes:
        if progress is not None:
            progress(line)
    bp = BatchPass(session=session, state_file=state_file, notes=notes)
    with batch_session(session):
        yield bp
    if mode == "submit":
        state, more = await _submit_recorded(settings, session, state, state_file)
    else:
        unheld = _unheld_note(session, state_file)
        more = [unheld] if unheld else []
    bp.notes.extend(more)
    for line in more:
        if progress is not None:
            progress(line)
    batch_of = {r.transcript_id: r.batch_id for r in (state.requests if state else ()) if r.transcript_id}
    bp.pending = {tid: batch_of.get(tid, "the judge batch") for tid in sorted(session.pending)}


__all__ = ["MAX_BATCH_REQUESTS", "XDIST_MESSAGE", "BatchPass", "batch_pass", "check_batch_settings"]
