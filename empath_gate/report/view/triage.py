"""The target's crisis level (triage) as every report shows it: one line per suite, and the
note when there are no levels (pure)."""

from __future__ import annotations

from empath_gate.results.model import Results

NO_LEVELS = "no triage levels: the target reports none and no judge is configured"
"""What the section says offline when the target reported no ``triage`` event."""
NO_LEVELS_JUDGED = ("no triage levels: the target reports none and no suite asks the judge for the level of "
                    "the bot's response (judge_triage)")
"""What it says when a judge scored but no level came from the target or the judge."""


def triage_lines(results: Results) -> list[str]:
    """``<suite>: <figures>`` per suite with triage figures (none in files before schema 4)."""
    from empath_gate.analysis.triage import format_triage

    return [f"{t.suite}: {format_triage(t.scores)}" for t in results.triage]


def triage_note(results: Results) -> str | None:
    """Why there are no triage figures, when the run could have had them (its records carry
    crisis levels, i.e. schema 4 with an instrument that defines them); None otherwise."""
    if results.triage or not any(r.triage is not None for r in results.records):
        return None
    return NO_LEVELS_JUDGED if results.metadata.judge.model else NO_LEVELS
