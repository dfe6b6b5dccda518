"""The terminal summary printed at the end of a pytest session or a CLI run (pure, plain text).

One verdict line, one line per dimension, one line per failing or criteria-only metric, and
the plain statement that criteria-only (offline) metrics need a judge model for scores.
Text from results files is stripped of control and bidirectional characters so it cannot
move the cursor or recolour the terminal, and the summary has its secrets taken out
(:mod:`empath_gate.secrets`).
"""

from __future__ import annotations

from empath_gate.report.escape import one_line, strip_controls
from empath_gate.report.labels import resolve_labels
from empath_gate.report.view import (
    CRITERIA_ONLY_NOTE,
    DIMENSION_LABELS,
    calibration_text,
    cost_text,
    criteria_only_metrics,
    dimension_rows,
    fmt_delta,
    fmt_num,
    metric_rows,
    overall_verdict,
    plural,
    suite_key,
)
from empath_gate.report.view.auditor import auditor_summary
from empath_gate.report.view.checks import check_lines
from empath_gate.results import Results
from empath_gate.secrets import redact

_WORD = {
    "passed": "PASSED",
    "failed": "FAILED",
    "not_evaluated": "NOT EVALUATED",
    "judging_pending": "JUDGING PENDING",
    "infrastructure_error": "INFRASTRUCTURE ERROR",
    "usage_error": "CONFIGURATION ERROR",
}


def _t(text: str) -> str:
    return one_line(strip_controls(text))


def render_terminal(results: Results, *, baseline: Results | None = None, max_reasons: int = 10) -> str:
    """A plain-text summary of ``results`` (module docstring); ``max_reasons`` caps the failure
    reasons listed. Ends with a newline."""
    rows = metric_rows(results, baseline)
    v = overall_verdict(results, rows)
    c = v.counts
    word, headline = _WORD[v.status], _t(v.headline)
    lines = [  # no "PASSED - passed": a headline that only repeats the verdict is left out
        f"empath-gate {_t(suite_key(results))}: {word}"
        + (f" - {headline}" if headline.strip().lower() != word.lower() else ""),
        f"  tests: {c.get('passed', 0)} passed, {c.get('failed', 0)} failed, {c.get('xfail', 0)} waived, "
        f"{c.get('skipped', 0)} skipped, {plural(c.get('error', 0), 'error')}"
        + (f", {c['incomplete']} incomplete" if c.get("incomplete") else ""),
    ]
    groups = dimension_rows(rows)
    # a metric family (e.g. worst_case) is labelled from the instrument
    group_labels = resolve_labels(None) if any(d.dimension not in DIMENSION_LABELS for d in groups) else None
    for d in groups:
        label = (group_labels or {}).get(d.dimension) or DIMENSION_LABELS.get(d.dimension, d.dimension)
        delta = (
            f" ({fmt_delta(d.candidate_mean - d.baseline_mean)})"
            if d.candidate_mean is not None and d.baseline_mean is not None
            else ""
        )
        fail = f", failing: {', '.join(d.failing)}" if d.failing else ""
        fail += f", errors: {', '.join(d.errored)}" if d.errored else ""
        fail += f", incomplete: {', '.join(d.incomplete)}" if d.incomplete else ""
        n = plural(len(d.metrics), "metric")
        lines.append(f"  {label:<26} mean {fmt_num(d.candidate_mean):>5}{delta}  {n}{fail}")
    for r in rows:
        if r.failing:
            # an undecided metric (missing evidence) is "error" in the rows: named for what it is
            word = "FAIL" if r.status == "failed" else "ERROR" if r.has_error_cell else "INCOMPLETE"
            conds = ", ".join(r.failed_conditions) or word.lower()
            reg = " REGRESSED" if r.regression is not None and r.regression.regressed else ""
            runs = "no scored run"
            if r.run_min is not None:
                runs = f"runs {fmt_num(r.run_min)}-{fmt_num(r.run_max)}"
            lines.append(
                f"  {word} {r.metric_id}"
                f"{' (critical)' if r.critical else ''}: mean "
                f"{fmt_num(r.candidate_mean)}, {runs}, {conds}{reg}"
            )
    for chk in check_lines(results):
        lines.append(f"  suite check {_t(chk.id)}: {chk.status.upper()} ({_t(chk.detail)})")
    co = criteria_only_metrics(results, rows)
    if co:
        lines.append(f"  criteria-only (offline): {', '.join(co)}: {CRITERIA_ONLY_NOTE}")
    reasons = [x for r in rows if r.failing for x in r.reasons]
    for reason in reasons[:max_reasons]:
        lines.append(f"    - {_t(reason)}")
    if len(reasons) > max_reasons:
        lines.append(f"    ... and {len(reasons) - max_reasons} more (see diff.md / report.html)")
    incomplete = list(dict.fromkeys(
        d.reasons[0] for d in results.decisions if d.status == "incomplete" and d.reasons))[:max_reasons]
    lines.extend(f"  ? {_t(r)}" for r in incomplete)
    auditor = auditor_summary(results)
    if auditor.any:
        lines.append(f"  {_t(auditor.headline())}")
        lines.extend(f"    ~ {_t(d.conversation_id)} run {d.run}: {_t(d.reason)}"
                     for d in auditor.degraded[:max_reasons])
    if v.status in ("infrastructure_error", "usage_error"):
        # the verdict's reasons of an incomplete-only run are the incomplete reasons shown above
        lines.extend(f"  ! {_t(r)}" for r in v.reasons[:5] if r not in incomplete)
    lines.append(
        f"  {calibration_text(results.metadata.judge.calibration)}; cost {cost_text(results.metadata.cost)}"
    )
    return redact("\n".join(lines)) + "\n"
