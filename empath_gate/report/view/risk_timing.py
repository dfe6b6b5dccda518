"""Risk-response timing as every report shows it: one line per suite (pure)."""

from __future__ import annotations

from empath_gate.analysis.risk_timing import SuiteRiskTiming
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
