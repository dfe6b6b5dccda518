"""``empath-gate run``: run suites without pytest and write the same results file as the plugin.

Usage::

    empath-gate run --suite NAME [--suite ...] [--runs N] [--target T] [--system-prompt P]
                    [--auditor M] [--judge M] [--offline] [--suites-dir D]... [--thresholds P]
                    [--waivers P] [--baseline B] [--results P] [--fail-on threshold|regression|both|never]
                    [--max-cost USD] [--no-cache | --refresh-cache] [--shard K/N] [--dry-run]

The options are the option table's (:mod:`empath_gate.settings.options`); settings layer as
for the plugin: ``[tool.empath-gate]`` in ``./pyproject.toml`` < ``EMPATH_*`` environment <
these options. A ``py:module:function`` target is imported with the current directory on
``sys.path`` (as ``python -m`` has it). The run is the library entry point
(:mod:`empath_gate.run`: the same plan, engine, judge, statistics, gate and artifacts as the
plugin), then the terminal summary is printed. pytest is never imported.

Exit status (:mod:`empath_gate.gate.exit`): 0 every test passed or was skipped, 1 the gate
failed, 2 usage or configuration error (bad option, unknown suite, expired waiver, a target
that cannot be loaded), 3 infrastructure error (provider unreachable, budget exhausted, judge
failures over the limit); when several apply, 2 > 3 > 1.

``--dry-run`` prints the plan size and a token and cost estimate per role
(:mod:`empath_gate.plan.estimate`), makes no model call and exits 0. Both first warn, on
stderr, when ``--runs`` is below the ``min_judged_runs`` of a metric the plan tests
(:func:`empath_gate.run.short_runs`): those tests cannot pass.

Ctrl-C during the run writes the results of what finished (:func:`write_interrupted`) and
exits 130 with one line on stderr.
"""

from __future__ import annotations

import argparse
import sys
import warnings
from typing import TYPE_CHECKING

from empath_gate.commands.options import add_setting_arguments, given, load_command_settings, split_suites
from empath_gate.gate.exit import EXIT_INFRA, EXIT_INTERRUPTED, EXIT_PASS, EXIT_USAGE, summary_exit_code
from empath_gate.report.progress import ThrottledProgress

if TYPE_CHECKING:
    from empath_gate.run import RunSetup
    from empath_gate.runner import RunInterrupted


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Options of ``empath-gate run``: the option table's, plus ``--dry-run``."""
    add_setting_arguments(parser, "run")
    parser.add_argument("--dry-run", action="store_true",
                        help="print the plan size and a token/cost estimate; call no model")


def progress_printer() -> ThrottledProgress:
    """The engine's progress lines on stderr, throttled (:mod:`empath_gate.report.progress`);
    its ``finish()`` prints the run's last line when the throttle held it."""
    return ThrottledProgress(lambda text: print(text, file=sys.stderr, flush=True))


def run(args: argparse.Namespace) -> int:
    """Run the plan (or print its size with ``--dry-run``); returns the exit status."""
    from empath_gate.errors import ConfigError, SuiteError
    from empath_gate.run import (
        check_run,
        evaluate_run,
        header_lines,
        prepare,
        run_plan,
        short_runs,
        write_run,
    )
    from empath_gate.runner import RunInterrupted

    settings = load_command_settings(args, "run")
    setup = prepare(settings, split_suites(given(args, "suites")), shard=given(args, "shard"))
    # the rest is imported once the instrument is read (a broken input file ends the run sooner)
    from empath_gate.judging.hygiene import JudgeHygieneWarning, check_judge_hygiene
    from empath_gate.llm.local import check_installed
    from empath_gate.report.terminal import render_terminal

    short = short_runs(setup)  # up front, once, in both modes
    if short is not None:
        print(f"empath-gate: warning: {short}", file=sys.stderr)
    if args.dry_run:
        from empath_gate.plan.estimate import estimate, render_estimate

        print(render_estimate(estimate(setup.plan, setup.instrument, setup.profile)), end="")
        return EXIT_PASS
    check_installed(setup.settings)
    try:
        check_run(setup)  # e.g. judge-batch collect without its state file: exit 2 before any call
    except ConfigError as exc:
        print(f"empath-gate run: configuration: {exc}", file=sys.stderr)
        return EXIT_USAGE
    for line in header_lines(setup):
        print(line)
    for problem in check_judge_hygiene(setup.settings):  # once, on one line
        print(f"empath-gate: warning: {problem}", file=sys.stderr)
    progress = progress_printer()
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", JudgeHygieneWarning)
            try:
                records = run_plan(setup, progress=progress)
            finally:  # the run's last progress line, before the summary or the error
                progress.finish()
    except RunInterrupted as stop:
        return write_interrupted(setup, stop)
    except (ConfigError, SuiteError) as exc:
        print(f"empath-gate run: configuration: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except Exception as exc:  # infrastructure: the run could not proceed
        print(f"empath-gate run: infrastructure: {type(exc).__name__}: {exc}", file=sys.stderr)
        return EXIT_INFRA
    if not records and any(c.skip is None for c in setup.plan.conversations):  # all skipped: decided below
        print("empath-gate run: no transcript was produced", file=sys.stderr)
        return EXIT_INFRA
    results = evaluate_run(setup, records)
    written = write_run(setup, results)
    print(render_terminal(results), end="")
    for path in written:
        print(f"empath-gate: wrote {path}")
    return summary_exit_code(results.summary)


def write_interrupted(setup: RunSetup, stop: RunInterrupted) -> int:
    """Ctrl-C: write the results of the records ``stop`` carries (a transcript not finished, or
    generated but not judged, is an ``error`` record, so its tests are never passing), print one
    line on stderr and return 130. With no finished transcript nothing is written."""
    from empath_gate.run import evaluate_run, write_run

    total = len(stop.records)
    if stop.finished == 0:
        print(f"empath-gate run: interrupted before any of the {total} transcripts finished; no results "
              "written (finished calls stay in the cache, a re-run reuses them)", file=sys.stderr)
        return EXIT_INTERRUPTED
    written = write_run(setup, evaluate_run(setup, stop.records))
    results = next((p for p in written if p.suffix == ".json"), setup.results_path)
    print(f"empath-gate run: interrupted; {stop.finished} of {total} transcripts finished, {stop.judged} "
          f"judged; the others are recorded as interrupted (never passing): wrote {results}",
          file=sys.stderr)
    return EXIT_INTERRUPTED
