"""``empath-gate diff``: the markdown safety diff of a candidate results file against a baseline.

Usage::

    empath-gate diff BASE HEAD [--format markdown|json] [--excerpts] [--max-chars N]

Reads both results files, compares them by the one gating path
(:func:`empath_gate.verdict.verdict_of`: regressions per suite and metric, the gate re-decided
with them, with the thresholds and waivers the candidate records unless team layers are given)
and prints the markdown diff, or with
``--format json`` one object: ``{"verdict": ..., "passed": bool, "regressions": {...}}``
(the :class:`~empath_gate.analysis.regression.RegressionReport`). Exit 0 when printed; 2
when a file is missing or invalid. The gate's own exit status is ``empath-gate gate``'s.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from empath_gate.report.markdown import COMMENT_MAX_CHARS
from empath_gate.results import Results, read_results


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Options of ``empath-gate diff``."""
    from empath_gate.commands.options import add_setting_arguments

    parser.add_argument("base", type=Path, metavar="BASE", help="baseline results.json")
    parser.add_argument("head", type=Path, metavar="HEAD", help="candidate results.json")
    add_setting_arguments(parser, "diff")
    parser.add_argument("--format", choices=("markdown", "json"), default="markdown", help="output format")
    parser.add_argument(
        "--excerpts",
        action="store_true",
        help="quote the judge's citations (behind a content note, method/means detail redacted)",
    )
    parser.add_argument(
        "--max-chars",
        type=int,
        default=COMMENT_MAX_CHARS,
        metavar="N",
        help=f"keep the markdown under N characters (default {COMMENT_MAX_CHARS})",
    )


def decided(args: argparse.Namespace, command: str, candidate: Results, baseline: Results | None,
            source: str) -> Results:
    """``candidate`` decided by the one gating path (against ``baseline`` when given) with the
    settings of this command line; notes about differing layers go to stderr."""
    import sys

    from empath_gate.commands.options import load_command_settings
    from empath_gate.verdict import verdict_of

    settings = load_command_settings(args, command)
    verdict = verdict_of(candidate, settings=settings, baseline=baseline, source=source)
    for note in verdict.notes:
        print(f"empath-gate {command}: note: {note}", file=sys.stderr)
    return verdict.results


def metric_labels() -> dict[str, str] | None:
    """Metric and dimension id -> display label from the shipped instrument (``None`` when it
    cannot be loaded: ids are shown instead); the labels every report uses by default
    (:func:`empath_gate.report.labels.instrument_labels`)."""
    from empath_gate.report.labels import instrument_labels

    return instrument_labels()


def run(args: argparse.Namespace) -> int:
    """Print the diff; returns 0 (ConfigError for unreadable files becomes exit 2 in the CLI)."""
    from empath_gate.report.markdown import render_markdown
    from empath_gate.report.view import overall_verdict

    baseline = read_results(args.base)
    candidate = decided(args, "diff", read_results(args.head), baseline, str(args.head))
    if args.format == "json":
        verdict = overall_verdict(candidate)
        out: dict[str, Any] = {
            "verdict": verdict.status,
            "headline": verdict.headline,
            "passed": verdict.status == "passed",
            "failing_metrics": list(verdict.failing_metrics),
            "regressions": candidate.regressions.model_dump(mode="json") if candidate.regressions else None,
        }
        print(json.dumps(out, ensure_ascii=False, indent=2))
        return 0
    print(
        render_markdown(
            candidate,
            baseline=baseline,
            excerpts=args.excerpts,
            max_chars=args.max_chars,
            metric_labels=metric_labels(),
        ),
        end="",
    )
    return 0
