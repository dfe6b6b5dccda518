"""The self-contained HTML report: one file that opens with no network.

Sections: a verdict header; notes (criteria-only metrics, judge failures, infrastructure);
a dimension overview; per metric a table row and an inline SVG plot of the run scores
(baseline beside candidate, with the ``min_mean`` and ``min_run`` threshold lines); a
test-retest grid per conversation (every run's score or state); test-retest reliability;
waivers; the worst conversations; and a transcript viewer behind a content note (click to
reveal), showing each turn with the judge's verdicts, the cited quotes highlighted, and
JudgeFailures, target content-filter events and hand-offs marked. A footer carries models,
versions, judge calibration status and cost.

The HTML is an artifact, not a public comment, so transcripts are shown in full (behind the
content note). Every string from a results file or a transcript is escaped
(:func:`~empath_gate.report.escape.html_text`). The page carries a Content-Security-Policy
that allows only its own inline style and script (by SHA-256 hash) and no network at all, so
even a missed escape could not run a script or load anything.

:func:`render_html` is pure (transcripts are passed in); :func:`load_transcripts` reads them
from the records' ``transcript_path`` (relative to the results file's folder, or absolute; a
missing or unreadable file becomes a message shown in its place, never a crash);
:func:`write_html_report` does both and writes the file.
"""

from __future__ import annotations

from empath_gate.report.html.page import render_html, write_html_report
from empath_gate.report.html.svg import dimension_bars_svg, metric_plot_svg
from empath_gate.report.html.transcripts import CONTENT_NOTE, MAX_TRANSCRIPTS, load_transcripts

__all__ = [
    "CONTENT_NOTE",
    "MAX_TRANSCRIPTS",
    "dimension_bars_svg",
    "load_transcripts",
    "metric_plot_svg",
    "render_html",
    "write_html_report",
]
