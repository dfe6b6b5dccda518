"""The behaviour-adherence section of the HTML report: per conversation, each behaviour
control's level beside its adherence proxy and the script's value, so a team can see whether its
auditor model played the profile (pure; :mod:`empath_gate.report.view.adherence`)."""

from __future__ import annotations

from empath_gate.instrument.seed_models import BEHAVIOURS
from empath_gate.report.escape import html_text as h
from empath_gate.report.labels import behaviour_labels
from empath_gate.report.view.adherence import NOT_SHOWN, SHORTFALL_NOTE, adherence_rows
from empath_gate.report.view.format import plural
from empath_gate.results.model import Results

INTRO = (
    "Each behaviour's level (0 absent to 3 strongest) beside what the transcripts show, mean over "
    "runs, against the seed's script as written over the same turns (a run that stopped early is "
    "set against the script's first turns only). Lower characters per turn, more pushback turns, "
    "a later risk turn and more mood reversals than the script mean the profile was played. The "
    "scripted auditor plays low engagement, resistance and volatility at level 2 or more; limited "
    "self-disclosure and rigid negative interpretation need the LLM auditor. A cell marked "
    f"“{NOT_SHOWN}”: {SHORTFALL_NOTE}"
)


def adherence_section(results: Results) -> str:
    """The section; nothing when no record carries adherence (files before schema 5, or an
    instrument without ``behaviours.yaml``). Each cell carries ``data-behaviour`` and
    ``data-level``; a shortfall's cell (:func:`~empath_gate.report.view.adherence.played`) also
    ``data-shown="no"`` and the :data:`~empath_gate.report.view.adherence.NOT_SHOWN` mark."""
    rows = adherence_rows(results)
    if not rows:
        return ""
    labels = behaviour_labels()
    head = "".join(f"<th>{h(labels.get(b, b.replace('_', ' ')))}</th>" for b in BEHAVIOURS)
    body = []
    for row in rows:
        short = {b for b, _, _ in row.shortfalls()}
        cells = "".join(
            f'<td data-behaviour="{h(b)}" data-level="{lv}"'
            + (f' data-shown="no"><strong>L{lv}</strong> <em>{h(NOT_SHOWN)}:</em>' if b in short
               else f"><strong>L{lv}</strong>")
            + f" {h(text)}</td>"
            for (b, text), lv in zip(row.cells, row.levels, strict=True)
        )
        body.append(f"<tr><td><code>{h(row.conversation_id)}</code><br>{h(row.auditor)}"
                    f" &middot; {plural(row.runs, 'run')}</td>{cells}</tr>")
    return (
        f'<section id="adherence"><h2>Behaviour controls and adherence</h2><p>{h(INTRO)}</p>'
        f'<table class="adherence"><thead><tr><th>conversation</th>{head}</tr></thead>'
        f"<tbody>{''.join(body)}</tbody></table></section>"
    )
