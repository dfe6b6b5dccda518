"""``empath-gate merge``: merge the results files of the shards of one plan into one.

Usage::

    empath-gate merge a.json b.json ... -o results.json [--baseline B] [--suites-dir D]...
                      [--thresholds P] [--waivers P]

The checks and the merge are :mod:`empath_gate.results.merge`'s: one plan, no overlapping
transcripts, every shard present (else exit 2 naming the files), then the union is evaluated
by the one gating path over the plan rebuilt from the metadata (the same instrument files as
the run, hence ``--suites-dir``/``--thresholds``/``--waivers`` and the usual
``[tool.empath-gate]`` / ``EMPATH_*`` settings). Record transcript paths are rewritten relative
to the output file's folder. Writes the merged file (schema checked), ``diff.md`` and
``report.html`` beside it; exit 0.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Options of ``empath-gate merge``."""
    from empath_gate.commands.options import add_setting_arguments

    parser.add_argument("files", nargs="+", type=Path, metavar="RESULTS", help="shard results files")
    parser.add_argument("-o", "--output", type=Path, required=True, metavar="PATH",
                        help="where to write the merged results.json")
    add_setting_arguments(parser, "merge")


def run(args: argparse.Namespace) -> int:
    """Merge, write the merged file and its reports, print the summary; exit 0."""
    from empath_gate.commands.options import load_command_settings
    from empath_gate.report.terminal import render_terminal
    from empath_gate.results.artifacts import write_artifacts
    from empath_gate.results.io import read_results
    from empath_gate.results.merge import merge_results
    from empath_gate.run import load_run_instrument

    named = [(Path(f), read_results(Path(f))) for f in args.files]
    settings = load_command_settings(args, "merge")
    instrument, layers = load_run_instrument(settings)
    baseline = read_results(settings.baseline) if settings.baseline is not None else None
    merged = merge_results(named, instrument, output=args.output, baseline=baseline, layers=layers)
    compared = [str(path) for path, res in named if res.regressions is not None]
    if baseline is None and compared:
        print(f"empath-gate merge: {', '.join(compared)} were compared with a baseline, but no --baseline "
              "was given: the merged file holds no comparison (pass --baseline to compare the union)",
              file=sys.stderr)
    written = write_artifacts(merged, args.output, baseline=baseline)
    print(render_terminal(merged, baseline=baseline), end="")
    for path in written:
        print(f"empath-gate merge: wrote {path}")
    return 0
