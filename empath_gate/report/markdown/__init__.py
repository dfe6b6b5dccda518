"""The markdown safety diff: what a pull-request comment and a job summary show (pure).

:func:`render_markdown` turns a results document (and optionally its baseline) into
GitHub-flavoured markdown, tables through ``tabulate``:

1. a hidden marker ``<!-- empath-gate:suite=<suite> -->`` (the sticky comment is found by it);
2. a one-line verdict: ✅ passed / ❌ failed / ⚠️ not evaluated / ⛔ infrastructure error /
   ❌ configuration error (rules in :mod:`empath_gate.report.view`); then the counts, the
   suite checks, risk-response timing (for multi-party suites also per speaker: who was never
   answered), the bot's risk detector and its crisis level;
3. a plain note naming the metrics that were only criteria-checked (offline), saying that a
   judge model is needed for scores;
4. per dimension, then per metric: baseline mean, candidate mean, Δ with an arrow, its 95 %
   interval, the smallest detectable drop (MDD), the run range, the flip rate, the threshold
   status and the regression flag; why cells failed (collapsed);
5. the conversations whose auditor did not show a behaviour its persona sets at level 2 or more
   (behaviour adherence: level and proxy as in the HTML report; nothing when all showed them);
   waivers in force; the worst conversations with the failed criterion and where to read the
   transcript (path, run, turn, metric, criterion: no transcript text unless ``excerpts``);
6. test-retest reliability per metric (within-conversation SD, ICC, flip rate, ...);
7. a footer: models, prompt hash, instrument, judge and tool versions, judge calibration
   status, cost, and the calls and cost saved (cache, sequential stopping, batch discount).

Safe messaging: transcript excerpts are off by default. With ``excerpts=True`` they sit in a
collapsed block behind a content note, with method or means detail redacted (the instrument's
``method_detail`` patterns) and every character escaped (:mod:`empath_gate.report.escape`).
Every string that did not come from this package is escaped.

Size: GitHub rejects a comment over 65,536 characters and truncates a job summary over
1 MiB. The output is shorter than ``max_chars`` characters and, with ``max_bytes``, than
``max_bytes`` UTF-8 bytes: detail is dropped first (excerpts, then the worst-conversation
list, the per-cell reasons, reliability, waiver detail, then passing metric rows), never the
verdict or a failing metric; a note says what was left out.
"""

from __future__ import annotations

from empath_gate.report.markdown.header import (
    COMMENT_MAX_CHARS,
    ICONS,
    MARKER_PREFIX,
    STATUS_ICONS,
    SUMMARY_MAX_BYTES,
    marker,
)
from empath_gate.report.markdown.render import render_markdown, render_not_evaluated
from empath_gate.report.markdown.sections import CONTENT_NOTE

__all__ = [
    "COMMENT_MAX_CHARS",
    "CONTENT_NOTE",
    "ICONS",
    "MARKER_PREFIX",
    "STATUS_ICONS",
    "SUMMARY_MAX_BYTES",
    "marker",
    "render_markdown",
    "render_not_evaluated",
]
