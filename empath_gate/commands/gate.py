"""``empath-gate gate``: recompute the gate decision and the exit status from a results file.

Usage::

    empath-gate gate RESULTS [--baseline B] [--fail-on threshold|regression|both|never]
                     [--suites-dir D]... [--thresholds P] [--waivers P]

Typically run on the file ``empath-gate merge`` wrote from the shards of a CI matrix. The plan is
rebuilt from the file's metadata (the instrument files must give the same plan: same suites,
``--suites-dir`` as the run), then the file is decided by the one gating path
(:func:`empath_gate.verdict.verdict_of`): against ``--baseline`` (or the settings' ``baseline``)
when given, else with the comparison stored in the file, under ``--fail-on`` (default: the
file's), with the recorded thresholds and waivers unless team layers are given (then those, and
it says which differ from the run's). Prints the terminal summary and the reason of the status.

Exit status: 0 pass, 1 gate failed, 2 usage or configuration error (unreadable file, another
plan, an expired waiver), 3 infrastructure error recorded in the file (unreachable provider,
budget, judge failures over the limit); 2 > 3 > 1.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from empath_gate.commands.options import add_setting_arguments, given, load_command_settings
from empath_gate.gate.exit import MEANING, summary_exit_code


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Options of ``empath-gate gate``."""
    parser.add_argument("results", type=Path, metavar="RESULTS", help="results.json (e.g. merged shards)")
    add_setting_arguments(parser, "gate")


def run(args: argparse.Namespace) -> int:
    """Recompute and print; returns the exit status."""
    from empath_gate.plan.rebuild import rebuild_plan
    from empath_gate.report.terminal import render_terminal
    from empath_gate.results.io import read_results
    from empath_gate.run import load_run_instrument
    from empath_gate.verdict import verdict_of

    results = read_results(args.results)
    settings = load_command_settings(args, "gate")
    instrument, _ = load_run_instrument(settings)
    rebuild_plan(results.metadata, instrument, source=str(args.results))
    baseline = read_results(settings.baseline) if settings.baseline is not None else None
    verdict = verdict_of(results, settings=settings, baseline=baseline, fail_on=given(args, "fail_on"),
                         source=str(args.results))
    for note in verdict.notes:
        print(f"empath-gate gate: note: {note}", file=sys.stderr)
    decided = verdict.results
    print(render_terminal(decided, baseline=baseline), end="")
    code = summary_exit_code(decided.summary)
    s = decided.summary
    why = list(s.usage_errors) if code == 2 else list(s.infrastructure_reasons) if code == 3 else []
    detail = f": {'; '.join(why[:3])}" if why else ""
    print(f"empath-gate gate: exit {code} ({MEANING[code]}){detail}")
    return code
