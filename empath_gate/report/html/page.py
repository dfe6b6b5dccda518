"""The whole report page: sections in order, the style sheet, the script and the
Content-Security-Policy; and writing it to a file."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

from empath_gate.conversation.transcript import Transcript
from empath_gate.instrument.cues import Cue, CueVocabulary
from empath_gate.report.escape import html_text as h
from empath_gate.report.html.adherence import adherence_section
from empath_gate.report.html.assets import _CSS, _JS, _csp_hash
from empath_gate.report.html.detail import _reliability, _retest, _waivers, _worst
from empath_gate.report.html.gap import gap_section
from empath_gate.report.html.run_dynamics import dynamics_section
from empath_gate.report.html.summary import _dimensions, _footer, _header, _metrics
from empath_gate.report.html.timing import timing_section
from empath_gate.report.html.transcripts import MAX_TRANSCRIPTS, _transcripts, load_transcripts
from empath_gate.report.html.triage import triage_section
from empath_gate.report.labels import instrument_cues, resolve_labels
from empath_gate.report.view import metric_rows, overall_verdict, suite_key, worst_conversations
from empath_gate.report.view.checks import CHECK_ICON, check_lines
from empath_gate.results import Results
from empath_gate.secrets import HTML_PLACEHOLDER, redact, scrub_model


def render_html(
    results: Results,
    *,
    baseline: Results | None = None,
    transcripts: Mapping[str, Transcript | str] | None = None,
    metric_labels: Mapping[str, str] | None = None,
    min_runs: Mapping[str, float] | None = None,
    base_dir: Path | None = None,
    cues: Sequence[Cue] | None = None,
) -> str:
    """The report as one HTML document (module docstring). ``transcripts``: transcript id ->
    the transcript, or a message shown in its place (e.g. "missing: path"); when it is
    ``None`` and ``base_dir`` (the results file's folder) is given, they are read from there
    (:func:`load_transcripts`). ``min_runs``: metric id -> ``min_run`` threshold to draw (the
    ``min_mean`` line comes from the cells). ``metric_labels``: metric or dimension id ->
    display label (default: the shipped instrument's, as every report uses:
    :mod:`empath_gate.report.labels`; ``{}`` shows ids only). ``cues``: the declared
    non-verbal cues, shown in transcripts as badges with their display labels (default: the
    shipped instrument's; ``()`` shows every token as typed). Secrets
    (:mod:`empath_gate.secrets`) are taken out of the data and of the rendered body."""
    results = scrub_model(results)
    baseline = scrub_model(baseline) if baseline is not None else None
    metric_labels = resolve_labels(metric_labels)
    if transcripts is None and base_dir is not None:
        transcripts = load_transcripts(results, base_dir)
    rows = metric_rows(results, baseline)
    worst = worst_conversations(results, 50)
    order = [f"{e.conversation_id}-r{e.run}" for e in worst if e.run is not None]
    order += [r.transcript_id for r in results.records]
    order = list(dict.fromkeys(order))
    embedded = set(order[:MAX_TRANSCRIPTS])
    title = f"empath-gate {suite_key(results)}: {overall_verdict(results, rows).headline}"
    css, js = _CSS.strip(), _JS.strip()
    csp = (
        f"default-src 'none'; style-src '{_csp_hash(css)}'; script-src '{_csp_hash(js)}'; img-src data:; "
        "base-uri 'none'; form-action 'none'"
    )
    body = [
        _header(results, rows),
        _checks(results),
        _dimensions(rows, metric_labels),
        _metrics(results, baseline, rows, metric_labels, min_runs or {}),
        gap_section(results, metric_labels),
        adherence_section(results),  # beside the gap: whether the auditor played the profiles
        timing_section(results),  # one row per risk transcript: after the verdict tables
        triage_section(results),
        _waivers(results),
        _worst(worst[:20], embedded),
        _retest(results),
        _reliability(results, rows),
        dynamics_section(results),
        _transcripts(results, transcripts or {}, order,
                     CueVocabulary(tuple(instrument_cues() if cues is None else cues))),
        _footer(results, baseline),
    ]
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        f'<meta http-equiv="Content-Security-Policy" content="{csp}">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{h(redact(title))}</title><style>{css}</style></head><body>\n"
        + redact("\n".join(b for b in body if b), placeholder=HTML_PLACEHOLDER)
        + f"\n<script>{js}</script>\n</body></html>\n"
    )


def _checks(results: Results) -> str:
    """The suite checks as a short list (nothing when the run has none)."""
    lines = check_lines(results)
    if not lines:
        return ""
    items = "".join(
        f"<li>{CHECK_ICON.get(c.status, '')} <code>{h(c.id)}</code> {h(c.status)}: {h(c.detail)}</li>"
        for c in lines
    )
    return f'<section id="checks"><h2>Suite checks</h2><ul>{items}</ul></section>'


def write_html_report(
    results: Results,
    path: Path,
    *,
    results_dir: Path,
    baseline: Results | None = None,
    metric_labels: Mapping[str, str] | None = None,
    min_runs: Mapping[str, float] | None = None,
) -> Path:
    """Load the transcripts (:func:`load_transcripts`), render (:func:`render_html`) and write
    ``path`` (UTF-8); returns the path."""
    html_doc = render_html(
        results,
        baseline=baseline,
        transcripts=load_transcripts(results, results_dir),
        metric_labels=metric_labels,
        min_runs=min_runs,
    )
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(html_doc, encoding="utf-8")
    return path
