"""Each suite's emotion dynamics in a results document (pure): built from the records' per-turn
labels with :func:`empath_gate.analysis.dynamics.build_report`, kept compact in
:class:`SuiteDynamics`.

**Fixed scripts** (``metadata.auditor == "scripted"``): the user's messages do not depend on the
bot, so the user side (labels, trajectories, shapes, the "after" side of intervention units) is
the script's, the same in every run: it is computed once per conversation (its first labelled
run), marked ``user_side = "script (fixed)"``, shown for orientation and never compared or gated.
The bot side (labels, strategies, bot transitions) is per run in both modes.

**LLM auditor** (``user_side = "per run"``): every run's user trajectory is its own; a
transcript is *worsened* when its user trajectory's shape is ``deteriorating`` and *recovering*
when it is ``recovering`` (:mod:`empath_gate.analysis.dynamics.archetypes`: end minus start of
the resampled valence trajectory <= -0.3, resp. >= +0.3, not volatile nor U-shaped);
``worsened_share`` and ``recovering_share`` are over the labelled transcripts with a shape
(``too_short`` ones excluded).

**Multi-party transcripts** (records with ``speakers``) also get each speaker's own trajectory
(``speakers``: :func:`empath_gate.analysis.speakers.speaker_trajectories`), for the same
transcripts as ``trajectories`` (fixed scripts: one per conversation). They are shown, never
gated.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Literal

from pydantic import Field

from empath_gate.analysis.base import AnalysisModel
from empath_gate.analysis.dynamics import DynamicsReport, LabelledConversation, build_report
from empath_gate.analysis.dynamics.feeling import FeelingTrajectory
from empath_gate.analysis.dynamics.interventions import (
    RiskyIntervention,
    StrategyOutcome,
    critical_failure_units,
)
from empath_gate.analysis.dynamics.transitions import TransitionMatrix
from empath_gate.analysis.speakers import SpeakerTrajectory, speaker_trajectories
from empath_gate.turns.model import AnnotatorFailure

if TYPE_CHECKING:
    from empath_gate.results.model import Results, RunRecord

UserSide = Literal["script (fixed)", "per run"]
SCRIPT_FIXED: UserSide = "script (fixed)"
WORSENED = "deteriorating"
"""The shape that makes a transcript *worsened* (module docstring)."""
RECOVERING = "recovering"
"""The shape that makes a transcript *recovering*."""
SHARE_CHECKS: dict[str, tuple[str, float]] = {
    "max_worsened_share": (WORSENED, 1.0),
    "min_recovering_share": (RECOVERING, -1.0),
}
"""Dynamics suite check -> (the shape its share counts, +1 when a rise is worse / -1 when a fall is)."""


class TranscriptShape(AnalysisModel):
    """One labelled transcript's user trajectory: ``shape`` and the 10-point ``trajectory``
    (``None`` without user messages); ``feeling``: the seeker's own feeling trajectory (LLM
    auditor; ``None`` when the transcript has none: :mod:`empath_gate.analysis.dynamics.feeling`)."""

    transcript_id: str
    conversation_id: str
    run: int
    shape: str
    trajectory: tuple[float, ...] | None
    feeling: FeelingTrajectory | None = None


class DynamicsFailure(AnalysisModel):
    """A transcript the annotator could not label (``reason`` as the annotator's failure)."""

    transcript_id: str
    reason: str
    detail: str


class SuiteDynamics(AnalysisModel):
    """The dynamics of one suite of a run (module docstring for ``user_side``).

    Counts: ``transcripts`` complete, ``labelled``, ``failures``. ``annotators``: ``"<kind>
    <version>" -> transcripts``. ``shapes``: shape -> count (per conversation for fixed scripts,
    per transcript otherwise); ``worsened_share``/``recovering_share`` (0-1, ``None`` for fixed
    scripts or when no transcript has a shape). ``trajectories``: per transcript (fixed scripts:
    one per conversation). ``transitions``: smoothed transition matrices pooled per locale and
    role. ``strategies``: per support strategy, what the bot did and what happened next
    (valence change, escalations; the "after" side is the script's in fixed-script mode).
    ``speakers``: multi-party transcripts, each speaker's own trajectory (module docstring).
    ``risky``: risky interventions (``conversation_id`` is the transcript id, messages 1-based),
    followed by the units a failed critical criterion points at (:func:`critical_units`).
    The seeker's own feeling, a third signal (LLM auditor): ``feeling_shapes`` (shape ->
    transcripts with a feeling; empty when none has one) and ``feeling_agreement`` (Spearman's
    rho of feeling vs annotator valence over the user messages with both; ``None`` when not
    computable).
    """

    suite: str
    user_side: UserSide
    transcripts: int
    labelled: int
    failures: tuple[DynamicsFailure, ...] = ()
    annotators: dict[str, int]
    shapes: dict[str, int]
    worsened_share: float | None = None
    recovering_share: float | None = None
    trajectories: tuple[TranscriptShape, ...] = ()
    transitions: tuple[TransitionMatrix, ...] = ()
    strategies: tuple[StrategyOutcome, ...] = ()
    risky: tuple[RiskyIntervention, ...] = ()
    speakers: tuple[SpeakerTrajectory, ...] = ()
    feeling_shapes: dict[str, int] = Field(default_factory=dict)
    feeling_agreement: float | None = None


def scripted(results: Results) -> bool:
    """True when the run's user messages come from fixed scripts (no LLM auditor)."""
    return results.metadata.auditor == "scripted"


def _labelled(r: RunRecord) -> LabelledConversation | None:
    a = r.annotation
    if a is None or isinstance(a, AnnotatorFailure):
        return None
    return LabelledConversation(
        conversation_id=r.transcript_id, keys={"locale": r.locale}, labels=a.labels,
        risk_turns=r.risk_turns, annotator=a.annotator, version=a.version, feelings=r.feelings,
    )


def failed_critical_messages(r: RunRecord) -> dict[int, list[str]]:
    """0-based message index -> the failed critical criteria (``metric_id/criterion_id``, first
    judging) that point at it: the messages the judge cited for the FAIL, and the reply of each
    turn a failed deterministic check recorded (``check_turns``: turn ``t``'s reply is message
    ``2t - 1``)."""
    out: dict[int, list[str]] = {}
    for v in r.verdicts:
        if v.rejudge != 0:
            continue
        for c in v.criteria:
            if not (c.critical and c.state == "FAIL"):
                continue
            at = sorted({ct.turn for ct in c.citations} | {2 * t - 1 for t in c.check_turns})
            for i in at:
                name = f"{v.metric_id}/{c.criterion_id}"
                if name not in out.setdefault(i, []):
                    out[i].append(name)
    return out


def critical_units(records: Sequence[RunRecord]) -> tuple[RiskyIntervention, ...]:
    """The ``failed_critical_criterion`` units of every labelled record, in record order
    (:func:`~empath_gate.analysis.dynamics.interventions.critical_failure_units`)."""
    out: list[RiskyIntervention] = []
    for r in records:
        lc = _labelled(r)
        failed = failed_critical_messages(r) if lc is not None else {}
        if lc is not None and failed:
            out.extend(critical_failure_units(lc, failed))
    return tuple(out)


def suite_report(records: Sequence[RunRecord], *, user_fixed: bool = False) -> DynamicsReport | None:
    """The full :class:`DynamicsReport` of ``records`` (one suite), pooled per locale; with
    ``user_fixed``, only the first labelled run of each conversation (the user side is the
    script's). ``None`` when no record was annotated (annotator off, older file)."""
    if not any(r.annotation is not None for r in records):
        return None
    labelled: list[LabelledConversation] = []
    failures: list[tuple[AnnotatorFailure, dict[str, str]]] = []
    seen: set[str] = set()
    for r in records:
        a = r.annotation
        if isinstance(a, AnnotatorFailure):
            failures.append((a, {"locale": r.locale}))
            continue
        lc = _labelled(r)
        if lc is None or (user_fixed and r.conversation_id in seen):
            continue
        seen.add(r.conversation_id)
        labelled.append(lc)
    return build_report(labelled, failures, group_keys=("locale",))


def suite_dynamics(results: Results, suite: str) -> SuiteDynamics | None:
    """The :class:`SuiteDynamics` of ``suite`` in ``results``; ``None`` when none of its
    records was annotated."""
    recs = [r for r in results.records if r.suite == suite and r.status == "complete"]
    fixed = scripted(results)
    user = suite_report(recs, user_fixed=fixed)
    if user is None:
        return None
    # bot side: every run (strategies and bot transitions are per run in both modes)
    runs = suite_report(recs) if fixed else user
    assert runs is not None
    run_of = {r.transcript_id: r for r in recs}
    shaped = [c for c in user.per_conversation if c.shape != "too_short"]
    worse = sum(c.shape == WORSENED for c in shaped)
    better = sum(c.shape == RECOVERING for c in shaped)
    per_run = not fixed and bool(shaped)
    transitions = tuple(
        m for m in runs.transitions if m.role == "assistant" or not fixed
    ) + (tuple(m for m in user.transitions if m.role == "user") if fixed else ())
    return SuiteDynamics(
        suite=suite,
        user_side=SCRIPT_FIXED if fixed else "per run",
        transcripts=len(recs),
        labelled=runs.labelled,
        failures=tuple(DynamicsFailure(transcript_id=f.conversation_id, reason=f.reason, detail=f.detail)
                       for f in runs.failures),
        annotators=runs.annotators,
        shapes=user.shapes,
        worsened_share=worse / len(shaped) if per_run else None,
        recovering_share=better / len(shaped) if per_run else None,
        trajectories=tuple(
            TranscriptShape(transcript_id=c.conversation_id,
                            conversation_id=run_of[c.conversation_id].conversation_id,
                            run=run_of[c.conversation_id].run, shape=c.shape, trajectory=c.trajectory,
                            feeling=c.feeling)
            for c in user.per_conversation
        ),
        transitions=transitions,
        strategies=runs.strategies,
        risky=runs.risky + critical_units(recs),
        speakers=_speaker_rows([run_of[c.conversation_id] for c in user.per_conversation]),
        feeling_shapes=user.feeling_shapes,
        feeling_agreement=user.feeling_agreement,
    )


def _speaker_rows(records: Sequence[RunRecord]) -> tuple[SpeakerTrajectory, ...]:
    """Each multi-party record's per-speaker trajectories, in record order."""
    out: list[SpeakerTrajectory] = []
    for r in records:
        a = r.annotation
        if r.speakers and a is not None and not isinstance(a, AnnotatorFailure):
            out.extend(speaker_trajectories(r.transcript_id, r.conversation_id, r.run, r.speakers,
                                            a.labels, r.risk_turns))
    return tuple(out)


def results_dynamics(results: Results) -> tuple[SuiteDynamics, ...]:
    """:func:`suite_dynamics` of every suite of ``results`` that has annotations, in suite order."""
    out = [suite_dynamics(results, s) for s in results.metadata.suites]
    return tuple(d for d in out if d is not None)


def annotator_versions(results: Results, suite: str) -> frozenset[str]:
    """The dynamics annotators (``"<kind> <version>"``) that labelled ``suite``'s complete runs
    of ``results`` (empty when none was labelled)."""
    out = set()
    for r in results.records:
        a = r.annotation
        if r.suite != suite or r.status != "complete" or a is None or isinstance(a, AnnotatorFailure):
            continue
        out.add(f"{a.annotator} {a.version}")
    return frozenset(out)


def conversation_outcome_counts(results: Results, suite: str, shape: str) -> dict[str, tuple[int, int]]:
    """Per conversation of ``suite``: ``(runs whose user trajectory has shape, runs with a shape)``
    over its complete, labelled runs (``too_short`` ones excluded; conversations without such
    runs left out)."""
    report = suite_report([r for r in results.records if r.suite == suite and r.status == "complete"])
    if report is None:
        return {}
    conv_of = {r.transcript_id: r.conversation_id for r in results.records}
    tally: dict[str, list[int]] = {}
    for c in report.per_conversation:
        if c.shape == "too_short":
            continue
        tally.setdefault(conv_of[c.conversation_id], []).append(int(c.shape == shape))
    return {k: (sum(v), len(v)) for k, v in tally.items()}


def conversation_outcomes(results: Results, suite: str, shape: str) -> dict[str, float]:
    """Per conversation of ``suite``: the share (0-1) of its labelled runs whose user trajectory
    has ``shape`` (:func:`conversation_outcome_counts`): the per-conversation outcome a baseline
    comparison pairs by conversation."""
    return {k: hits / runs for k, (hits, runs) in conversation_outcome_counts(results, suite, shape).items()}
