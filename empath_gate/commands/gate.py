"""``empath-gate gate``: recompute the gate decision and the exit status from a results file.

Usage::

    empath-gate gate RESULTS [--baseline B] [--fail-on threshold|regression|both|never]
                     [--suites-dir D]... [--thresholds P] [--waivers P]

Typically run on the file ``empath-gate merge`` wrote from the shards of a CI matrix. The plan
is rebuilt from the file's metadata (the instrument files must give the same plan: same
suites, ``--suites-dir`` as the run), and the records go through the same evaluation as a run
(:func:`empath_gate.commands.merge.reevaluate`): statistics, then the comparison against
``--baseline`` (or the settings' ``baseline``) when given, else the comparison stored in the
file, then the decisions under ``--fail-on`` (default: the file's), with the thresholds and
waivers of the current settings. Prints the terminal summary and the reason of the status.

Exit status: 0 pass, 1 gate failed, 2 usage or configuration error (unreadable file, another
plan, an expired waiver), 3 infrastructure error recorded in the file (unreachable provider,
budget, judge failures over the limit); 2 > 3 > 1.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from empath_gate.commands.merge import add_instrument_arguments, load_instrument_for, rebuild_plan, reevaluate
from empath_gate.commands.run import FAIL_ON_VALUES, exit_code

_MEANING = {0: "passed", 1: "gate failed", 2: "usage or configuration error", 3: "infrastructure error"}


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Options of ``empath-gate gate``."""
    parser.add_argument("results", type=Path, metavar="RESULTS", help="results.json (e.g. merged shards)")
    parser.add_argument("--baseline", type=Path, default=None, metavar="PATH",
                        help="baseline results.json to compare with (default: the comparison in the file)")
    parser.add_argument("--fail-on", choices=FAIL_ON_VALUES, default=None,
                        help="which conditions fail the gate (default: the file's, normally both)")
    add_instrument_arguments(parser)


def run(args: argparse.Namespace) -> int:
    """Recompute and print; returns the exit status."""
    from empath_gate.report.terminal import render_terminal
    from empath_gate.results import read_results

    results = read_results(args.results)
    instrument, settings_baseline = load_instrument_for(args)
    plan = rebuild_plan(results.metadata, instrument, source=str(args.results))
    baseline_path = args.baseline or settings_baseline
    baseline = read_results(baseline_path) if baseline_path is not None else None
    decided = reevaluate(
        results, instrument, plan=plan, baseline=baseline,
        regression=None if baseline is not None else results.regressions, fail_on=args.fail_on,
    )
    print(render_terminal(decided, baseline=baseline), end="")
    code = exit_code(decided)
    s = decided.summary
    why = list(s.usage_errors) if code == 2 else list(s.infrastructure_reasons) if code == 3 else []
    detail = f": {'; '.join(why[:3])}" if why else ""
    print(f"empath-gate gate: exit {code} ({_MEANING[code]}){detail}")
    return code
