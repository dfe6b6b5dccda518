"""The crisis-level (triage) section of the HTML report: per suite its figures and its confusion
matrix as a table (rows the seed's level, columns the target's; cells below the diagonal are
under-triage and marked), or the note that there are no levels (pure)."""

from __future__ import annotations

from empath_gate.analysis.triage import TriageScores, format_triage
from empath_gate.report.escape import html_text as h
from empath_gate.report.view.triage import triage_note
from empath_gate.results.model import Results


def confusion_table(scores: TriageScores) -> str:
    """The 3x3 confusion matrix as a ``<table class="triage-matrix">``; each count cell carries
    ``data-truth``, ``data-level`` and ``data-kind`` (``under``, ``match`` or ``over``)."""
    head = "".join(f"<th>{h(lv)}</th>" for lv in scores.levels)
    rows = []
    for i, (truth, row) in enumerate(zip(scores.levels, scores.confusion, strict=True)):
        cells = []
        for j, (level, n) in enumerate(zip(scores.levels, row, strict=True)):
            kind = "under" if j < i else "match" if j == i else "over"
            cells.append(f'<td data-truth="{h(truth)}" data-level="{h(level)}" data-kind="{kind}">{n}</td>')
        rows.append(f"<tr><th>{h(truth)}</th>{''.join(cells)}</tr>")
    return (f'<table class="triage-matrix"><thead><tr><th>seed \\ target</th>{head}</tr></thead>'
            f"<tbody>{''.join(rows)}</tbody></table>")


def triage_section(results: Results) -> str:
    """The section: nothing for files before schema 4 (or an instrument without crisis levels);
    the note when no suite has levels; else per suite its figures line and matrix."""
    note = triage_note(results)
    if not results.triage and note is None:
        return ""
    out = ['<section id="triage"><h2>Crisis level</h2>']
    if note is not None:
        out.append(f"<p>{h(note)}</p>")
    for t in results.triage:
        out.append(f"<h3>{h(t.suite)}</h3><p>{h(format_triage(t.scores))}</p>{confusion_table(t.scores)}")
    out.append("</section>")
    return "".join(out)
