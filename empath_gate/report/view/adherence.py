"""Behaviour adherence as the reports show it: per conversation, each behaviour control's level
beside its proxy over the runs, against the seed's script (pure).

The proxies are the records' (:class:`~empath_gate.analysis.adherence.BehaviourAdherence`); a
conversation's value is the mean over its runs that measured it (None when none did). A
behaviour's cell reads ``L<level>: <proxy> (script <value>)``; rigid negative interpretation has
no proxy (:data:`NO_PROXY`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from empath_gate.analysis.adherence import BehaviourAdherence
from empath_gate.instrument.seed_models import BEHAVIOURS
from empath_gate.results.model import Results

NO_PROXY = "no proxy (meaning, not form: the judge's worst-case metrics)"
"""What the rigid-interpretation cell says beside its level."""

LLM_ONLY: tuple[str, ...] = ("limited_self_disclosure", "rigid_negative_interpretation")
"""The behaviours the scripted auditor does not emulate (``scripted: none`` in behaviours.yaml):
with it, their level is shown but not played."""


@dataclass(frozen=True)
class AdherenceRow:
    """One conversation: ``conversation_id``, ``auditor`` (the variant id, or ``LLM auditor``),
    ``runs`` measured, and ``cells``: behaviour -> the text shown beside its level."""

    conversation_id: str
    auditor: str
    runs: int
    levels: tuple[int, ...]
    cells: tuple[tuple[str, str], ...]


def _mean(values: Sequence[float | int | None]) -> float | None:
    got = [float(v) for v in values if v is not None]
    return sum(got) / len(got) if got else None


def _fmt(value: float | None, digits: int = 1) -> str:
    if value is None:
        return "n/a"
    return f"{value:.{digits}f}".rstrip("0").rstrip(".") if digits else f"{value:.0f}"


def _cells(runs: Sequence[BehaviourAdherence], scripted: bool) -> tuple[tuple[str, str], ...]:
    first = runs[0]
    chars = _fmt(_mean([a.mean_user_chars for a in runs]), 0)
    disclosed = [a.disclosure_turn for a in runs]
    missing = sum(1 for d in disclosed if d is None)
    turn = _fmt(_mean(disclosed))
    if missing and first.script_disclosure_turn is not None:
        turn += f" ({missing} of {len(runs)} runs: not stated)"
    sources = sorted({a.mood_source for a in runs if a.mood_source is not None})
    mood = f"{_fmt(_mean([a.mood_reversals for a in runs]))} mood reversals" + (
        f" from {'/'.join(sources)}" if sources else "")
    out = {
        "low_engagement": f"{chars} chars per turn (script {_fmt(first.script_mean_chars, 0)})",
        "resistance": f"{_fmt(_mean([a.pushback_turns for a in runs]))} pushback turns "
                      f"(script {first.script_pushback_turns})",
        "limited_self_disclosure": f"risk stated at turn {turn} "
                                   f"(script {_fmt(first.script_disclosure_turn, 0)})"
        if first.script_disclosure_turn is not None or any(d is not None for d in disclosed)
        else "n/a (the explicit-risk patterns find no statement in the script)",
        "emotional_volatility": f"{mood} (script {first.script_mood_reversals})",
        "rigid_negative_interpretation": NO_PROXY,
    }
    if scripted:
        for b in LLM_ONLY:
            out[b] = "not played by the scripted auditor" + ("" if b == "rigid_negative_interpretation"
                                                             else f"; {out[b]}")
    return tuple((b, out[b]) for b in BEHAVIOURS)


def adherence_rows(results: Results) -> list[AdherenceRow]:
    """One row per conversation whose records carry adherence, in record order; empty for files
    before schema 5."""
    by_conv: dict[str, list[BehaviourAdherence]] = {}
    for r in results.records:
        if r.adherence is not None:
            by_conv.setdefault(r.conversation_id, []).append(r.adherence)
    rows = []
    for cid, runs in by_conv.items():
        first = runs[0]
        scripted = first.variant is not None
        rows.append(AdherenceRow(
            conversation_id=cid,
            auditor=f"scripted: {first.variant}" if scripted else "LLM auditor",
            runs=len(runs),
            levels=tuple(first.levels.get(b, 0) for b in BEHAVIOURS),
            cells=_cells(runs, scripted),
        ))
    return rows
