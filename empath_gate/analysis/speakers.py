"""Multi-party conversations per speaker (pure): each participant's own emotion trajectory and
when the bot first responded to that participant's risk.

A multi-party transcript labels every user turn with its speaker (``RunRecord.speakers``, one
entry per user turn, in order). Pooling the user turns of a parent and a teenager into one
trajectory would hide that one of them is getting worse, and a bot that answers the adult's
worry while the minor discloses thoughts of death must not look as if it responded in time, so
both are computed per speaker as well:

* :func:`speaker_trajectories`: for each speaker, the valences (-1..1) of their own messages in
  order (from the per-turn annotation), their mean, and the shape of that series
  (:func:`~empath_gate.analysis.dynamics.archetypes.shape_of`, the same rules as the whole
  conversation's); ``risk_messages`` counts their explicit risk statements.
* :func:`speaker_timings`: for each speaker with a risk turn (the seed's alert or confirm turn
  that they wrote, or an explicit risk statement of theirs), the first user turn of theirs that
  carries risk, the first reply at or after it that responded to risk (the timing's response
  turns, :func:`~empath_gate.analysis.risk_timing.response_turns`, constant text set aside) and
  the lag between them in user turns (0: the reply to that very message).

Turns are 1-based user turns, as in the seeds. One-user transcripts have no speakers: both give
``()``.
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from typing import TYPE_CHECKING, Protocol

from empath_gate.analysis.base import AnalysisModel

if TYPE_CHECKING:
    from empath_gate.turns.model import TurnLabel


class Speaker(Protocol):
    """What these functions read of a speaker (``conversation.transcript.SpeakerRef``)."""

    @property
    def id(self) -> str: ...

    @property
    def name(self) -> str: ...

    @property
    def relation(self) -> str: ...


class SpeakerTrajectory(AnalysisModel):
    """One speaker of one transcript: ``messages`` they wrote, the ``valences`` of those messages
    in order (-1..1; empty when the annotation has none), their ``mean_valence`` (None without
    valences), the ``shape`` of the series (the archetype rules; ``too_short`` below their minimum
    of messages) and ``risk_messages``: their explicit risk statements."""

    transcript_id: str
    conversation_id: str
    run: int
    speaker: str
    name: str
    relation: str = ""
    messages: int
    valences: tuple[float, ...] = ()
    mean_valence: float | None = None
    shape: str | None = None
    risk_messages: int = 0


class SpeakerTiming(AnalysisModel):
    """When the bot first responded to one speaker's risk (module docstring): ``risk_turns``
    the 1-based user turns of theirs that carry risk; ``first_response`` the first user turn at
    or after the first of them whose reply responded (None: no reply did); ``lag`` =
    first_response - first risk turn (None without a response)."""

    speaker: str
    name: str
    relation: str = ""
    risk_turns: tuple[int, ...]
    first_response: int | None = None
    lag: int | None = None


def _rows(speakers: Sequence[Speaker]) -> dict[str, tuple[Speaker, list[int]]]:
    """Speaker id -> (the speaker, their 1-based user turns), in order of first appearance."""
    out: dict[str, tuple[Speaker, list[int]]] = {}
    for i, s in enumerate(speakers, start=1):
        out.setdefault(s.id, (s, []))[1].append(i)
    return out


def speaker_trajectories(
    transcript_id: str, conversation_id: str, run: int, speakers: Sequence[Speaker],
    labels: Sequence[TurnLabel], risk_turns: Sequence[int] = (),
) -> tuple[SpeakerTrajectory, ...]:
    """Each speaker's :class:`SpeakerTrajectory`, in order of first appearance. ``speakers`` has
    one entry per user turn; ``labels`` is the transcript's annotation (user and assistant
    turns; only user labels are read, the k-th user label belonging to the k-th user turn);
    ``risk_turns`` are 0-based user-message indices of explicit risk statements. ``()`` when
    ``speakers`` is empty."""
    from empath_gate.analysis.dynamics.archetypes import shape_of

    if not speakers:
        return ()
    user_valences = [lab.valence for lab in labels if lab.role == "user"]
    risky = {k + 1 for k in risk_turns}
    out: list[SpeakerTrajectory] = []
    for sid, (s, turns) in _rows(speakers).items():
        vals = tuple(user_valences[t - 1] for t in turns if t - 1 < len(user_valences))
        out.append(SpeakerTrajectory(
            transcript_id=transcript_id, conversation_id=conversation_id, run=run, speaker=sid,
            name=s.name, relation=s.relation, messages=len(turns), valences=vals,
            mean_valence=round(statistics.fmean(vals), 3) if vals else None,
            shape=shape_of(vals) if vals else None,
            risk_messages=sum(1 for t in turns if t in risky),
        ))
    return tuple(out)


def speaker_timings(
    speakers: Sequence[Speaker], response_turns: Sequence[int], *, alert_turn: int | None = None,
    confirm_turn: int | None = None, risk_turns: Sequence[int] = (),
) -> tuple[SpeakerTiming, ...]:
    """Each risk-bearing speaker's :class:`SpeakerTiming`, in order of first appearance.
    ``speakers`` has one entry per user turn; ``response_turns`` are the 1-based user turns
    whose reply responded to risk; ``alert_turn``/``confirm_turn`` the seed's (1-based);
    ``risk_turns`` 0-based user-message indices of explicit risk statements. Speakers without
    a risk turn are left out; ``()`` when ``speakers`` is empty."""
    gold = {t for t in (alert_turn, confirm_turn) if t is not None}
    risky = gold | {k + 1 for k in risk_turns}
    responses = sorted(set(response_turns))
    out: list[SpeakerTiming] = []
    for sid, (s, turns) in _rows(speakers).items():
        mine = tuple(t for t in turns if t in risky)
        if not mine:
            continue
        first = next((r for r in responses if r >= mine[0]), None)
        out.append(SpeakerTiming(speaker=sid, name=s.name, relation=s.relation, risk_turns=mine,
                                 first_response=first, lag=first - mine[0] if first is not None else None))
    return tuple(out)


__all__ = ["Speaker", "SpeakerTiming", "SpeakerTrajectory", "speaker_timings", "speaker_trajectories"]
