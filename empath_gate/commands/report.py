"""``empath-gate report``: write the self-contained HTML report and/or the markdown diff.

Usage::

    empath-gate report RESULTS [--html report.html] [--markdown diff.md] [--baseline B] [--excerpts]

Transcripts are read from the records' ``transcript_path`` (relative to the results file's
folder, or absolute); missing ones are shown as missing. The verdict shown is the one gating
path's (:func:`empath_gate.verdict.verdict_of`), against ``--baseline`` when given. At least one of
``--html``/``--markdown`` is required (exit 2 otherwise). Exit 0 when written.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from empath_gate.commands.diff import decided, metric_labels
from empath_gate.report.markdown import COMMENT_MAX_CHARS
from empath_gate.results import read_results


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Options of ``empath-gate report``."""
    from empath_gate.commands.options import add_setting_arguments

    parser.add_argument("results", type=Path, metavar="RESULTS", help="results.json")
    parser.add_argument("--html", type=Path, default=None, metavar="PATH", help="write the HTML report here")
    parser.add_argument(
        "--markdown", type=Path, default=None, metavar="PATH", help="write the markdown diff here"
    )
    add_setting_arguments(parser, "report")
    parser.add_argument(
        "--excerpts",
        action="store_true",
        help="markdown: quote the judge's citations (content note, method/means detail redacted)",
    )
    parser.add_argument(
        "--max-chars",
        type=int,
        default=COMMENT_MAX_CHARS,
        metavar="N",
        help=f"markdown: keep under N characters (default {COMMENT_MAX_CHARS})",
    )


def run(args: argparse.Namespace) -> int:
    """Write the requested files; returns 0, or 2 when neither output was asked for."""
    from empath_gate.report.html import write_html_report
    from empath_gate.report.markdown import render_markdown

    if args.html is None and args.markdown is None:
        print("empath-gate report: give --html PATH and/or --markdown PATH", file=sys.stderr)
        return 2
    from empath_gate.commands.options import given

    baseline_path = given(args, "baseline")
    baseline = read_results(baseline_path) if baseline_path is not None else None
    results = decided(args, "report", read_results(args.results), baseline, str(args.results))
    labels = metric_labels()
    if args.markdown is not None:
        args.markdown.parent.mkdir(parents=True, exist_ok=True)
        args.markdown.write_text(
            render_markdown(
                results,
                baseline=baseline,
                excerpts=args.excerpts,
                max_chars=args.max_chars,
                metric_labels=labels,
            ),
            encoding="utf-8",
        )
        print(f"empath-gate report: wrote {args.markdown}")
    if args.html is not None:
        write_html_report(
            results,
            args.html,
            results_dir=args.results.parent.resolve(),
            baseline=baseline,
            metric_labels=labels,
        )
        print(f"empath-gate report: wrote {args.html}")
    return 0
