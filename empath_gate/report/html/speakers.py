"""Multi-party runs in the HTML report (pure): each speaker's own trajectory and risk timing,
every speaker named and coloured as on the transcript's turns (``speaker sp-<k>``, ``k`` the
speaker's order of first appearance in the transcript, modulo
:data:`~empath_gate.report.html.transcripts.SPEAKER_CLASSES`)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from empath_gate.analysis.risk_timing import SuiteRiskTiming
from empath_gate.analysis.speakers import SpeakerTrajectory
from empath_gate.report.escape import html_text as h
from empath_gate.report.html.summary import table_html
from empath_gate.results.model import Results


def speaker_order(results: Results) -> dict[str, dict[str, int]]:
    """Transcript id -> speaker id -> its colour class index (order of first appearance)."""
    from empath_gate.report.html.transcripts import SPEAKER_CLASSES

    out: dict[str, dict[str, int]] = {}
    for r in results.records:
        if r.speakers:
            ids = list(dict.fromkeys(s.id for s in r.speakers))
            out[r.transcript_id] = {sid: i % SPEAKER_CLASSES for i, sid in enumerate(ids)}
    return out


def badge(name: str, relation: str, k: int) -> str:
    """A speaker's name in its colour, with the relation as its title."""
    return f'<span class="speaker sp-{k}" title="{h(relation)}">{h(name)}</span>'


def trajectories_table(rows: Sequence[SpeakerTrajectory], order: Mapping[str, Mapping[str, int]]) -> str:
    """The per-speaker trajectories of one suite as a table (``""`` without rows)."""
    if not rows:
        return ""
    body = [
        (f'<tr data-speaker="{h(r.speaker)}">', [
            f"<td><code>{h(r.transcript_id)}</code></td>",
            f"<td>{badge(r.name, r.relation, order.get(r.transcript_id, {}).get(r.speaker, 0))}"
            f' <span class="muted">{h(r.relation)}</span></td>',
            f"<td class=num>{r.messages}</td>",
            f"<td class=num>{'–' if r.mean_valence is None else f'{r.mean_valence:+.2f}'}</td>",
            f"<td>{h(r.shape or '–')}</td>",
            f"<td class=num>{r.risk_messages}</td>",
        ])
        for r in rows
    ]
    head = [f"<th>{t}</th>" for t in ("transcript", "speaker", "messages", "mean valence", "shape",
                                      "risk statements")]
    return "<h4>Each speaker's own trajectory</h4>" + table_html(head, body)


def timing_cell(transcript_id: str, suite: SuiteRiskTiming, order: Mapping[str, Mapping[str, int]]) -> str:
    """One risk transcript's per-speaker timing as a list (``""`` for a one-user transcript)."""
    t = next((x for x in suite.transcripts if x.transcript_id == transcript_id), None)
    if t is None or not t.speakers:
        return ""
    items = []
    for s in t.speakers:
        k = order.get(transcript_id, {}).get(s.speaker, 0)
        turns = ", ".join(str(x) for x in s.risk_turns)
        answer = ("no risk response" if s.first_response is None
                  else f"first response: reply to turn {s.first_response} (lag {s.lag:+d})")
        items.append(f'<li data-speaker="{h(s.speaker)}">{badge(s.name, s.relation, k)}: risk turns '
                     f"{h(turns)}; {h(answer)}</li>")
    return f'<ul class="speaker-timing">{"".join(items)}</ul>'


def counts_line(suite: SuiteRiskTiming) -> str:
    """The suite's per-speaker tallies as a sentence (``""`` without speakers; the wording is
    :func:`~empath_gate.report.view.risk_timing.speaker_text`, as in the markdown diff)."""
    from empath_gate.report.view.risk_timing import speaker_text

    text = speaker_text(suite)
    return "" if text is None else f"<p>Per speaker: {h(text)}.</p>"


__all__ = ["badge", "counts_line", "speaker_order", "timing_cell", "trajectories_table"]
