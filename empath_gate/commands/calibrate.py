"""``empath-gate calibrate``: the judge against gold labels, or the standard against the strict rubric.

Usage::

    empath-gate calibrate --gold GOLD --results RESULTS [--format text|json] [--min-n N] [--save PATH]
    empath-gate calibrate --standard-vs-strict FILE [FILE] [--format text|json]
    empath-gate calibrate --triage RESULTS [--format text|json]

* ``--gold GOLD --results RESULTS``: gold labels (JSONL or CSV: ``conversation_id``, ``run``,
  ``metric``, ``score``) are paired with the results file's first scored judging of the same
  conversation, run and metric. Per metric (n >= ``--min-n``, else "too few") and pooled: bias
  (judge - gold) with a bootstrap 95 % interval, MAE, share within ±1, Spearman, and
  ``inflated_vs_gold`` when the interval's lower bound is >= 1 point. ``--save PATH`` writes
  the judge's calibration status (:mod:`empath_gate.calibration.status`), which the
  ``judge_calibration`` setting shows in every results file.
* ``--standard-vs-strict``: the same transcripts scored by one judge under both rubrics:
  the team's own results (a run, strict by default, and its ``empath-gate rejudge RESULTS
  --rubric standard -o standard.json`` output, in either order; or one results file holding
  both), or one file of rows (e.g. the peer release's ``s1_calibration.json``). The metrics
  whose mean drops by >= 1 point under the strict rubric are listed under ``inflated``;
  scores are read as they are, and the count leaving out rows with a score outside 1-10 is
  given too, naming the rows that make the difference. A transcript x metric without a score
  under a rubric (a judge failure) is listed as left out, never counted.
* ``--triage RESULTS``: the judge's own estimate of the user's crisis level (suites with
  ``judge_triage``) against the seeds' levels: accuracy, macro-F1, the confusion matrix and
  the under-triage rate per suite (:func:`empath_gate.results.triage.judge_level_figures`); a
  judge-validity figure, never a gate on the bot.

Studies: :mod:`empath_gate.calibration.studies`; methods: :mod:`empath_gate.calibration.calibrate`;
the ``--format json`` document: :mod:`empath_gate.calibration.render`.
Exit 0, or 2 for a usage or input error.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from empath_gate.calibration import render
from empath_gate.calibration.studies import gold_study, strict_study
from empath_gate.commands.agreement import add_figure_arguments, check_figure_arguments

EXIT_OK = 0
EXIT_USAGE = 2


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Options of ``empath-gate calibrate``."""
    parser.add_argument(
        "--gold",
        type=Path,
        default=None,
        metavar="GOLD",
        help="gold labels: JSONL or CSV with conversation_id, run, metric, score",
    )
    parser.add_argument(
        "--results",
        type=Path,
        default=None,
        metavar="RESULTS",
        help="the results file whose judge is calibrated",
    )
    parser.add_argument(
        "--standard-vs-strict",
        dest="standard_vs_strict",
        type=Path,
        nargs="+",
        default=None,
        metavar="FILE",
        help="results files judged under the standard and the strict rubric (e.g. a run and its "
        "rejudge --rubric standard output), or one file of rows scored under both",
    )
    parser.add_argument(
        "--triage",
        type=Path,
        default=None,
        metavar="RESULTS",
        help="the judge's own estimate of the user's crisis level against the seeds' (judge_triage suites)",
    )
    add_figure_arguments(parser)
    parser.add_argument(
        "--save",
        type=Path,
        default=None,
        metavar="PATH",
        help="with --gold: write the judge's calibration status (JSON) for the judge_calibration setting",
    )


def _usage(message: str) -> int:
    print(f"empath-gate calibrate: {message}", file=sys.stderr)
    return EXIT_USAGE


def _standard_vs_strict(args: argparse.Namespace) -> int:
    if args.gold is not None or args.results is not None:
        return _usage("--standard-vs-strict takes no --gold/--results")
    if args.save is not None:
        return _usage("--save records a judge's calibration; use it with --gold/--results")
    if len(args.standard_vs_strict) > 2:
        return _usage("--standard-vs-strict takes one or two files")
    study = strict_study(args.standard_vs_strict)
    inputs = [str(p) for p in args.standard_vs_strict]
    if args.format == "json":
        print(json.dumps(render.strict_document(study, inputs=inputs), ensure_ascii=False, indent=2))
    else:
        print(render.strict_text(study, inputs=inputs))
    return EXIT_OK


def _triage(args: argparse.Namespace) -> int:
    from empath_gate.analysis.triage import format_triage
    from empath_gate.results import read_results
    from empath_gate.results.triage import judge_level_figures

    if args.gold is not None or args.results is not None or args.save is not None:
        return _usage("--triage takes no --gold/--results/--save")
    figures = judge_level_figures(read_results(args.triage))
    if args.format == "json":
        doc = {"triage": [f.model_dump(mode="json") for f in figures]}
        print(json.dumps(doc, ensure_ascii=False, indent=2))
    elif not figures:
        print("no estimate of the user's crisis level: no suite of this file asks the judge (judge_triage)")
    else:
        print("The judge's estimate of the user's crisis level against the seeds' "
              "(judge validity; never gates):")
        for f in figures:
            print(f"{f.suite}: {format_triage(f.scores)}")
    return EXIT_OK


def run(args: argparse.Namespace) -> int:
    """Compute and print the calibration; ConfigError (exit 2) for unreadable input."""
    if args.triage is not None:
        return _triage(args)
    if args.standard_vs_strict is not None:
        return _standard_vs_strict(args)
    if args.gold is None or args.results is None:
        return _usage("give --gold GOLD --results RESULTS, or --standard-vs-strict FILE [FILE]")
    check_figure_arguments(args)
    study = gold_study(args.gold, args.results, min_n=args.min_n, n_resamples=args.resamples, seed=args.seed)
    if args.save is not None:
        from empath_gate.calibration.status import status_from_gold, write_status

        status = status_from_gold(
            study.report, results_path=args.results, gold_path=args.gold, judge_model=study.judge_model
        )
        saved = write_status(status, args.save)
        print(f"empath-gate calibrate: saved the calibration status to {saved}", file=sys.stderr)
    if args.format == "json":
        doc = render.gold_document(
            study, inputs=[str(args.gold), str(args.results)], n_resamples=args.resamples, seed=args.seed
        )
        print(json.dumps(doc, ensure_ascii=False, indent=2))
    else:
        print(render.gold_text(study, results=str(args.results), gold=str(args.gold)))
    return EXIT_OK
