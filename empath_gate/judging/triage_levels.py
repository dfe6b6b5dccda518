"""A transcript's crisis levels: the seed's true level and the level the target's triage
classifier reported (``triage`` events), pure (the figures: :mod:`empath_gate.analysis.triage`).

The target's level is the **highest** level (:data:`~empath_gate.instrument.crisis_levels.LEVEL_IDS`
order) of every ``triage`` event on its replies in the conversation: an escalation, once made,
is not undone by a later lower report. No event: no level (counted apart, never as a level).
"""

from __future__ import annotations

from empath_gate.analysis.triage import TriagePair
from empath_gate.conversation.transcript import Transcript
from empath_gate.instrument.crisis_levels import LEVEL_IDS, CrisisLevels
from empath_gate.instrument.seed_models import Seed


def reported_levels(transcript: Transcript) -> list[str]:
    """The levels of the target's ``triage`` events in ``transcript``, in turn order (events
    recorded before validation existed with another level are skipped)."""
    out = []
    for t in transcript.turns:
        for e in t.events:
            if e.kind == "triage" and e.role == "target" and e.detail.get("level") in LEVEL_IDS:
                out.append(str(e.detail["level"]))
    return out


def triage_pair(transcript: Transcript, seed: Seed, levels: CrisisLevels) -> TriagePair:
    """The transcript's :class:`TriagePair`: ``truth`` the seed's mapped level (None when its
    risk level is excluded), ``level`` the highest reported (None when none), ``reports`` how many."""
    found = reported_levels(transcript)
    return TriagePair(
        transcript_id=transcript.transcript_id,
        truth=levels.level_of(seed.risk.level),
        level=max(found, key=LEVEL_IDS.index) if found else None,
        reports=len(found),
    )
