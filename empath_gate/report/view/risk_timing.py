"""Risk-response timing as every report shows it: one line per suite (pure)."""

from __future__ import annotations

from empath_gate.analysis.risk_timing import SuiteRiskTiming
from empath_gate.report.view.format import plural
from empath_gate.results.model import Results

TIMING_LABEL = {"pre_alert": "pre-alert", "early": "early", "on_time": "on time", "late": "late",
                "missed": "missed", "not_reached": "not reached"}
"""Display label of each timing class."""


def _pct(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.0%}"


def timing_line(t: SuiteRiskTiming) -> str:
    """One suite's timing in one line, e.g. "crisis: 12 risk transcripts: early or on time 75%,
    early 50% (of 10 with alert before confirm), late 17%, missed 8%, pre-alert 0%; median lag
    -1 turn; false alarms 0% of 6 no-risk"."""
    apart = t.risk_transcripts - t.same_turn
    lag = "n/a" if t.median_lag is None else f"{t.median_lag:+g} user turn(s)"
    parts = [
        f"{t.suite}: {t.risk_transcripts} risk transcript(s): "
        f"early or on time {_pct(t.early_or_on_time_rate)}",
        f"early {_pct(t.early_rate)} (of {apart} with alert before confirm)",
        f"late {_pct(t.late_rate)}",
        f"missed {_pct(t.missed_rate)}",
        f"pre-alert {_pct(t.pre_alert_rate)}",
    ]
    line = ", ".join(parts) + f"; median lag {lag}"
    if t.no_risk_transcripts:
        line += f"; false alarms {_pct(t.false_alarm_rate)} of {t.no_risk_transcripts} no-risk"
    else:
        line += "; no no-risk conversation (a constant footer cannot be told from a response)"
    if t.counts.get("not_reached"):
        line += f"; {t.counts['not_reached']} ended before the confirm turn"
    return line


def timing_lines(results: Results) -> list[str]:
    """:func:`timing_line` of every suite with risk timing (none in files before schema 3)."""
    return [timing_line(t) for t in results.risk_timing]


MAX_NAMED_SPEAKERS = 3
"""Speakers named as never answered, and as answered late, in one line; the rest are counted
(project choice: a line)."""


def _named(tallies: list[tuple[tuple[str, str], tuple[int, int]]]) -> str:
    """``Sam (teenager) in 2 of 3 transcripts, Leo in 1 of 1 transcript, 2 more``: at most
    :data:`MAX_NAMED_SPEAKERS` of ``(name, relation) -> (transcripts with the outcome,
    transcripts with a risk turn of theirs)``, in the order given, the rest counted."""
    named = [f"{name}{f' ({rel})' if rel else ''} in {m} of {plural(n, 'transcript')}"
             for (name, rel), (m, n) in tallies[:MAX_NAMED_SPEAKERS]]
    if len(tallies) > MAX_NAMED_SPEAKERS:
        named.append(f"{len(tallies) - MAX_NAMED_SPEAKERS} more")
    return ", ".join(named)


def speaker_text(t: SuiteRiskTiming) -> str | None:
    """One suite's per-speaker timing (multi-party transcripts) in a sentence, e.g. "2 speakers
    with a risk turn, in 3 speaker-transcripts: 1 answered in the reply to their first risk turn
    or the next, 1 later, 1 never; never answered: Sam (teenager) in 1 of 2 transcripts;
    answered later: Sam (teenager) in 1 of 2 transcripts".

    A speaker is a distinct (name, relation) over the suite's transcripts that reached their
    confirm turn; the tallies are ``speaker_counts``'s, one per speaker per transcript (a
    speaker of a conversation run 3 times counts 3 times), so they add up to the
    speaker-transcripts. The speakers never answered, then those answered later than the next
    reply, are named by name and relation with the transcripts where that happened (of those
    where they carried risk), at most :data:`MAX_NAMED_SPEAKERS` each, most often first. None
    without speakers."""
    c = t.speaker_counts
    if not c:
        return None
    # (name, relation) -> [never answered, answered late, transcripts with a risk turn]
    seen: dict[tuple[str, str], list[int]] = {}
    for tr in t.transcripts:
        if tr.timing == "not_reached":
            continue
        for s in tr.speakers:
            tally = seen.setdefault((s.name, s.relation), [0, 0, 0])
            tally[0] += s.first_response is None
            tally[1] += s.lag is not None and s.lag > 1
            tally[2] += 1
    total, within = c.get("speakers", 0), c.get("answered_within_one_turn", 0)
    never = c.get("never_answered", 0)
    people = plural(len(seen), "speaker") if seen else "speakers"
    text = (f"{people} with a risk turn, in {total} speaker-transcripts: {within} answered in the reply "
            f"to their first risk turn or the next, {total - within - never} later, {never} never")
    for label, k in (("never answered", 0), ("answered later", 1)):
        tallies = sorted(((key, (v[k], v[2])) for key, v in seen.items() if v[k]), key=lambda kv: -kv[1][0])
        if tallies:
            text += f"; {label}: {_named(tallies)}"
    return text


def speaker_lines(results: Results) -> list[str]:
    """``<suite>: <speaker_text>`` of every suite with multi-party risk transcripts."""
    return [f"{t.suite}: {text}" for t in results.risk_timing if (text := speaker_text(t)) is not None]


def detector_lines(results: Results) -> list[str]:
    """The target's own risk detector per suite, one line each (none in files before schema 3)."""
    from empath_gate.analysis.detector import format_scores

    out = []
    for d in results.detector:
        line = f"{d.suite}: " + "; ".join(format_scores(d.scores))
        if d.left_out:
            line += f"; {len(d.left_out)} transcript(s) without gold labels left out"
        out.append(line)
    return out
