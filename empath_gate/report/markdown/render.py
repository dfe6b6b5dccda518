"""Rendering the markdown diff within GitHub's size limits (layout in
:mod:`empath_gate.report.markdown`; pure)."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace

from empath_gate.report.escape import md_code, md_text
from empath_gate.report.labels import resolve_labels
from empath_gate.report.markdown.dynamics import dynamics_lines
from empath_gate.report.markdown.header import (
    COMMENT_MAX_CHARS,
    ICONS,
    _counts_line,
    _notes,
    _verdict_line,
    marker,
)
from empath_gate.report.markdown.sections import (
    _adherence,
    _auditor,
    _cell_reasons,
    _excerpts,
    _footer,
    _waivers,
    _worst,
)
from empath_gate.report.markdown.tables import _dimension_table, _metrics_table, _reliability, _worst_case_gap
from empath_gate.report.view import metric_rows, overall_verdict, suite_key
from empath_gate.report.view.checks import CHECK_ICON, check_lines
from empath_gate.report.view.risk_timing import detector_lines, speaker_lines, timing_lines
from empath_gate.report.view.triage import triage_lines
from empath_gate.results import Results
from empath_gate.secrets import redact, scrub_model


@dataclass(frozen=True)
class _Detail:
    """How much detail one rendering attempt includes (see the module docstring)."""

    excerpts: bool
    worst_n: int
    cell_reasons: int
    reliability: bool
    waiver_detail: bool
    passing_metrics: bool
    reason_chars: int = 300
    dynamics: bool = True
    dropped: tuple[str, ...] = ()


def _render(
    results: Results,
    baseline: Results | None,
    d: _Detail,
    labels: Mapping[str, str] | None,
    transcripts_url: str | None,
    patterns: Sequence[str],
) -> str:
    rows = metric_rows(results, baseline)
    v = overall_verdict(results, rows)
    suite = suite_key(results)
    with_baseline = baseline is not None or results.regressions is not None
    parts: list[str] = [
        marker(suite), _verdict_line(v, suite, results), "", _counts_line(v, results, baseline),
    ]
    checks = check_lines(results)
    if checks:
        parts += [
            "",
            "Suite checks: "
            + " · ".join(
                f"{CHECK_ICON.get(c.status, '')} {md_code(c.id)} ({md_text(c.detail)})" for c in checks
            ),
        ]
    timing = timing_lines(results)
    if timing:
        parts += ["", "Risk-response timing: " + " · ".join(md_text(t) for t in timing)]
    speakers = speaker_lines(results)
    if speakers:
        parts += ["", "Risk-response timing per speaker: " + " · ".join(md_text(t) for t in speakers)]
    detector = detector_lines(results)
    if detector:
        parts += ["", "The bot's risk detector: " + " · ".join(md_text(t) for t in detector)]
    triage = triage_lines(results)
    if triage:
        parts += ["", "Crisis level (triage): " + " · ".join(md_text(t) for t in triage)]
    if d.dynamics:
        parts += [f"\n{line}" for line in dynamics_lines(results)]
    notes = _notes(v, results, rows)
    if notes:
        parts += ["", "\n>\n".join(notes)]
    if rows:
        parts += ["", "#### By dimension", "", _dimension_table(rows, labels, with_baseline)]
        shown = [r for r in rows if d.passing_metrics or r.failing or r.status == "xfail"]
        hidden = len(rows) - len(shown)
        parts += [
            "",
            "#### By metric",
            "",
            _metrics_table(shown, labels, with_baseline) if shown else "_No failing metric._",
        ]
        legend = (
            "⚑ critical metric · Δ = candidate − baseline (1–10, higher is safer) · 95% CI of Δ · "
            "MDD = smallest drop this run could detect (80% power) · Runs = lowest–highest run score · "
            "Flip = mean flip rate"
        )
        if any(r.runs_given for r in rows):
            legend += " · k of N = runs a conversation ran of the N planned (sequential gating)"
        if hidden:
            legend += f" · {hidden} passing or skipped metrics left out for size"
        parts += ["", f"<sub>{legend}</sub>"]
        reasons = _cell_reasons(results, d.cell_reasons, d.reason_chars) if d.cell_reasons else ""
        if reasons:
            parts += ["", reasons]
    gap = _worst_case_gap(results, labels)
    if gap:
        parts += ["", gap]
    auditor = _auditor(results, d.cell_reasons or 5)
    if auditor:
        parts += ["", auditor]
    adherence = _adherence(results, min(d.cell_reasons or 5, 10))
    if adherence:
        parts += ["", adherence]
    waivers = _waivers(results, d.waiver_detail)
    if waivers:
        parts += ["", waivers]
    if d.worst_n:
        worst = _worst(results, d.worst_n, transcripts_url, d.reason_chars)
        if worst:
            parts += ["", worst]
    if d.excerpts:
        ex = _excerpts(results, d.worst_n or 5, patterns, d.reason_chars)
        if ex:
            parts += ["", ex]
    if d.reliability:
        rel = _reliability(results, rows)
        if rel:
            parts += ["", rel]
    if d.dropped:
        parts += [
            "",
            f"_Left out to fit GitHub's size limit: {', '.join(d.dropped)}; "
            "the HTML report artifact has everything._",
        ]
    parts += ["", _footer(results, baseline)]
    return "\n".join(parts) + "\n"


def _fits(text: str, max_chars: int, max_bytes: int | None) -> bool:
    if len(text) >= max_chars:
        return False
    return max_bytes is None or len(text.encode("utf-8")) < max_bytes


def _minimal(results: Results, max_chars: int, max_bytes: int | None) -> str:
    """Last resort: marker, verdict, counts, and every failing metric as one line each."""
    rows = metric_rows(results)
    v = overall_verdict(results, rows)
    suite = suite_key(results)
    lines = [
        marker(suite),
        _verdict_line(v, suite, results),
        "",
        _counts_line(v, results, None),
        "",
        "Failing metrics: " + (", ".join(md_code(r.metric_id) for r in rows if r.failing) or "none"),
        "",
        "_Detail left out to fit GitHub's size limit; the HTML report artifact has everything._",
        "",
    ]
    text = "\n".join(lines)
    budget = max_chars - 1
    while not _fits(text, max_chars, max_bytes) and budget > 0:
        budget //= 2
        text = text[:budget]
    return text


def render_not_evaluated(suite: str, reason: str) -> str:
    """The diff of a run that did not happen (e.g. a pull request from a fork, which has no
    secrets): marker, a neutral ⚠️ "not evaluated" verdict and the escaped ``reason``."""
    reason = redact(reason)
    return (
        f"{marker(suite)}\n### {ICONS['not_evaluated']} empath-gate {md_code(suite)}: not evaluated\n\n"
        f"{md_text(reason, max_chars=2000)}\n\nNothing was gated: this is neither a pass nor a failure.\n"
    )


def render_markdown(
    results: Results,
    *,
    baseline: Results | None = None,
    max_chars: int = COMMENT_MAX_CHARS,
    excerpts: bool = False,
    transcripts_url: str | None = None,
    max_bytes: int | None = None,
    metric_labels: Mapping[str, str] | None = None,
    method_detail_patterns: Sequence[str] | None = None,
) -> str:
    """The markdown safety diff of ``results`` (module docstring for the layout).

    ``baseline``: the baseline results (its means and metadata are shown; the comparison
    itself is ``results.regressions``). ``max_chars``: the output has fewer characters than
    this (default: GitHub's comment limit); ``max_bytes``: likewise in UTF-8 bytes (use
    :data:`SUMMARY_MAX_BYTES` for a job summary). ``excerpts``: quote the judge's citations
    behind a content note, with method/means detail redacted by ``method_detail_patterns``
    (default: the shipped instrument's ``method_detail`` set). ``transcripts_url``: an
    ``http(s)`` link to the transcripts artifact. ``metric_labels``: metric or dimension id
    -> display label (default: the shipped instrument's, as every report uses:
    :mod:`empath_gate.report.labels`; ``{}`` shows ids only). Raises ValueError when
    ``max_chars`` < 200. Secrets (:mod:`empath_gate.secrets`) never reach the output.
    """
    if max_chars < 200:
        raise ValueError("max_chars must be at least 200")
    # secrets are taken out of the data before it is laid out, so the size checks see the
    # text that is shown (empath_gate.secrets)
    results = scrub_model(results)
    baseline = scrub_model(baseline) if baseline is not None else None
    transcripts_url = redact(transcripts_url) if transcripts_url else transcripts_url
    metric_labels = resolve_labels(metric_labels)
    patterns: Sequence[str] = ()
    if excerpts:
        if method_detail_patterns is None:
            from empath_gate.report.redact import method_detail_patterns as load_patterns

            patterns = load_patterns()
        else:
            patterns = method_detail_patterns
    full = _Detail(
        excerpts=excerpts,
        worst_n=10,
        cell_reasons=200,
        reliability=True,
        waiver_detail=True,
        passing_metrics=True,
    )
    steps: list[Callable[[_Detail], _Detail]] = [
        lambda d: replace(d, excerpts=False, dropped=(*d.dropped, "excerpts") if d.excerpts else d.dropped),
        lambda d: replace(d, dynamics=False,
                          dropped=(*d.dropped, "dynamics") if results.dynamics else d.dropped),
        lambda d: replace(d, worst_n=3, cell_reasons=30, reason_chars=160),
        lambda d: replace(d, worst_n=0, dropped=(*d.dropped, "worst-conversation list")),
        lambda d: replace(d, cell_reasons=0, dropped=(*d.dropped, "per-test reasons")),
        lambda d: replace(d, reliability=False, dropped=(*d.dropped, "reliability")),
        lambda d: replace(d, waiver_detail=False, dropped=(*d.dropped, "waiver detail")),
        lambda d: replace(d, passing_metrics=False, dropped=(*d.dropped, "passing metric rows")),
    ]
    detail = full
    text = _render(results, baseline, detail, metric_labels, transcripts_url, patterns)
    for step in steps:
        if _fits(text, max_chars, max_bytes):
            return text
        detail = step(detail)
        text = _render(results, baseline, detail, metric_labels, transcripts_url, patterns)
    if _fits(text, max_chars, max_bytes):
        return text
    return _minimal(results, max_chars, max_bytes)
