"""Annotating a run's transcripts: the per-turn emotion labels every run carries.

After the transcripts of a run are generated (and judged), each complete one is labelled by
the annotator ``Settings.dynamics_annotator`` names
(:func:`empath_gate.turns.llm_annotator.annotate_dialogue`):
``offline`` (the lexicon annotator, no model: about 0.1 ms per turn), ``judge`` (one call per
transcript to the judge model, counted on the run's ledger under the transcript's id, so it is in
the transcript's calls, the cost and the budget) or ``off`` (no labels). The labels, or the
annotator's visible failure, go into the transcript (its JSONL ``annotation`` line) and its
results record. A transcript that did not complete is not labelled.

A budget stop during annotation is the annotator's ``provider_error`` failure for that
transcript (its verdicts stand; only the dynamics checks become ``incomplete``).
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import TYPE_CHECKING

from empath_gate.errors import BudgetExceeded
from empath_gate.llm.accounting import scope
from empath_gate.turns.model import Annotation, AnnotatorFailure, Dialogue, DialogueTurn

if TYPE_CHECKING:
    from empath_gate.conversation.transcript import Transcript
    from empath_gate.instrument.models import Instrument
    from empath_gate.llm.cache import Cache
    from empath_gate.settings.model import Settings


def dialogue_of(transcript: Transcript) -> Dialogue:
    """The :class:`Dialogue` an annotator reads from ``transcript``: its ``transcript_id`` as
    conversation id, its locale, and each turn's role, text and (multi-party) speaker id
    (nothing else: the auditor's own feeling is never shown to the annotator)."""
    return Dialogue(
        conversation_id=transcript.transcript_id,
        locale=transcript.locale,
        turns=tuple(DialogueTurn(role=t.role, text=t.content, speaker=t.speaker.id if t.speaker else None)
                    for t in transcript.turns),
    )


async def annotate_transcripts(
    transcripts: Sequence[Transcript],
    *,
    instrument: Instrument,
    settings: Settings,
    cache: Cache | None,
) -> list[Annotation | None]:
    """The annotation of each transcript, in order: ``None`` when ``dynamics_annotator`` is
    ``off`` or the transcript did not complete; labels or an :class:`AnnotatorFailure`
    otherwise. LLM calls run at most ``judge_concurrency`` at once, each in the transcript's
    ledger scope. Raises ConfigError when ``judge`` is asked for without a judge model."""
    from empath_gate.turns.llm_annotator import annotate_dialogue

    if settings.dynamics_annotator == "off":
        return [None] * len(transcripts)
    sem = asyncio.Semaphore(max(1, settings.judge.concurrency))

    async def one(t: Transcript) -> Annotation | None:
        if t.status != "complete":
            return None
        dialogue = dialogue_of(t)
        if settings.dynamics_annotator != "judge":
            return await annotate_dialogue(dialogue, settings=settings, instrument=instrument, run=t.run)
        async with sem:
            try:
                with scope(t.transcript_id):
                    return await annotate_dialogue(dialogue, settings=settings, cache=cache,
                                                   instrument=instrument, run=t.run)
            except BudgetExceeded as exc:
                return AnnotatorFailure(conversation_id=t.transcript_id, annotator="judge",
                                        reason="provider_error", detail=f"budget: {exc}")

    return list(await asyncio.gather(*(one(t) for t in transcripts)))
