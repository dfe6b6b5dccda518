"""Job summary, step outputs and annotations: the only module that imports github_action_utils.

* :func:`write_job_summary` appends the markdown diff to ``GITHUB_STEP_SUMMARY`` (rendered
  under 1 MiB of UTF-8, GitHub's per-step limit);
* :func:`set_outputs` writes the step outputs ``passed`` (``true``/``false``),
  ``verdict`` (the verdict's status slug: ``passed``, ``failed``, ``not_evaluated``,
  ``judging_pending``, ``infrastructure_error``, ``usage_error``), ``regressions`` (comma-separated ids of the
  metrics that regressed, empty when none) and ``results-path`` to ``GITHUB_OUTPUT``;
* :func:`annotate` prints one ``::error`` annotation per failing metric (its conditions and
  first reason), and one ``::warning`` when the run was not evaluated;
* :func:`publish_not_evaluated` does the same for a run that did not happen (a fork's pull
  request): ``passed=false``, ``verdict=not_evaluated``.

Outside GitHub Actions (the variables unset) the summary and outputs are skipped and
:func:`publish` says so in its return value; annotations are plain stdout lines then.
Annotations are printed inside :func:`~empath_gate.report.console.command_output` (the
command line's output is otherwise a stop-commands block under Actions) and, like the
summary (rendered by :func:`~empath_gate.report.markdown.render_markdown`), carry no secret.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

import github_action_utils as gha

from empath_gate.report.console import command_output
from empath_gate.report.escape import one_line, strip_controls
from empath_gate.report.markdown import SUMMARY_MAX_BYTES, render_markdown
from empath_gate.report.view import metric_rows, overall_verdict
from empath_gate.results import Results
from empath_gate.secrets import redact


def regressed_metrics(results: Results) -> tuple[str, ...]:
    """Ids of the metrics whose regression gated (``regressed`` on a comparable report)."""
    reg = results.regressions
    if reg is None or not reg.comparable:
        return ()
    return tuple(m.metric_id for m in reg.metrics if m.regressed)


def gate_passed(results: Results) -> bool:
    """The ``passed`` output: True only when the verdict is ``passed`` (not evaluated is not
    a pass)."""
    return overall_verdict(results).status == "passed"


def annotation_messages(results: Results) -> list[tuple[str, str]]:
    """``(title, message)`` of each error annotation: one per failing metric, in report order."""
    out: list[tuple[str, str]] = []
    for r in metric_rows(results):
        if not r.failing:
            continue
        conds = ", ".join(r.failed_conditions) or r.status
        first = one_line(strip_controls(r.reasons[0])) if r.reasons else ""
        crit = "critical " if r.critical else ""
        mean = f"{r.candidate_mean:.2f}" if r.candidate_mean is not None else "n/a"
        title = f"empath-gate: {crit}metric {r.metric_id} failed"
        msg = (
            f"{r.metric_id}: {r.counts.get('failed', 0) + r.counts.get('error', 0)} of {r.n_conversations} "
            f"conversations failed ({conds}); mean {mean}"
        )
        if first:
            msg += f". {first}"
        out.append((title, msg[:1000]))
    return out


def annotate(results: Results) -> int:
    """Print the annotations (module docstring); returns how many errors were printed."""
    msgs = annotation_messages(results)
    v = overall_verdict(results)
    with command_output():
        for title, msg in msgs:
            gha.error(redact(msg), title=title)
        if v.status == "not_evaluated":
            gha.warning(redact(f"empath-gate {v.headline}"), title="empath-gate: not evaluated")
    return len(msgs)


def write_job_summary(markdown: str) -> bool:
    """Append ``markdown`` to the step summary; False (nothing written) outside Actions."""
    if not os.environ.get("GITHUB_STEP_SUMMARY"):
        return False
    gha.append_job_summary(markdown)
    return True


def set_outputs(results: Results, results_path: Path) -> bool:
    """Write the ``passed``, ``verdict``, ``regressions`` and ``results-path`` outputs; False
    outside Actions."""
    if not os.environ.get("GITHUB_OUTPUT"):
        return False
    gha.set_output("passed", "true" if gate_passed(results) else "false")
    gha.set_output("verdict", overall_verdict(results).status)
    gha.set_output("regressions", ",".join(regressed_metrics(results)))
    gha.set_output("results-path", str(results_path))
    return True


def warning(message: str) -> None:
    """A ``::warning`` annotation (e.g. a skipped comment)."""
    with command_output():
        gha.warning(redact(one_line(strip_controls(message))))


def publish_not_evaluated(suite: str, reason: str, *, error: bool = False) -> None:
    """A run that did not happen: the ⚠️ "not evaluated" summary with ``reason``,
    ``passed=false``, ``verdict=not_evaluated``, empty ``regressions`` and ``results-path``, and
    one annotation: an ``::error`` when ``error`` (the job is going to fail for it), else a
    ``::warning``. The job's exit status is the caller's to set."""
    from empath_gate.report.markdown import render_not_evaluated

    write_job_summary(render_not_evaluated(suite, reason))
    if os.environ.get("GITHUB_OUTPUT"):
        gha.set_output("passed", "false")
        gha.set_output("verdict", "not_evaluated")
        gha.set_output("regressions", "")
        gha.set_output("results-path", "")
    annotation = gha.error if error else gha.warning
    with command_output():
        annotation(redact(one_line(strip_controls(reason))), title=f"empath-gate {suite}: not evaluated")


@dataclass(frozen=True)
class Published:
    """What :func:`publish` did: ``summary`` and ``outputs`` written, ``annotations`` printed."""

    summary: bool
    outputs: bool
    annotations: int


def publish(
    results: Results,
    results_path: Path,
    *,
    baseline: Results | None = None,
    transcripts_url: str | None = None,
    metric_labels: Mapping[str, str] | None = None,
) -> Published:
    """Job summary (markdown diff capped at 1 MiB), outputs and annotations for ``results``."""
    md = render_markdown(
        results,
        baseline=baseline,
        max_bytes=SUMMARY_MAX_BYTES,
        max_chars=SUMMARY_MAX_BYTES,
        transcripts_url=transcripts_url,
        metric_labels=metric_labels,
    )
    summary = write_job_summary(md)
    outputs = set_outputs(results, results_path)
    n = annotate(results)
    return Published(summary, outputs, n)
