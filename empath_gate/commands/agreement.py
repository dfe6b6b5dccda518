"""``empath-gate agreement``: agreement between two scorings of the same transcripts.

Usage::

    empath-gate agreement A B [--format text|json] [--save PATH]   two results files
    empath-gate agreement OUT [--format text|json]                 a rejudge --times K output
    empath-gate agreement PAIRS [--format text|json]               one file of paired scores
    empath-gate agreement --preferences DIR [--categories A,B] [--format text|json]

* ``A B``: results files of two judgings of the same transcripts (e.g. a run and its
  ``rejudge --judge OTHER`` output). With two judges, each transcript x metric's first scored
  judging is paired with the other file's; ``--save PATH`` writes the calibration status of
  A's judge against B's (the peer judge; :mod:`empath_gate.calibration.status`), which the
  ``judge_calibration`` setting shows. When one judge (model, rubric, granularity, template)
  scored both, their first judgings are one judging, so the re-judgings are compared instead,
  as for ``OUT``.
* ``OUT``: a results file with re-judgings (``empath-gate rejudge RESULTS --times K -o OUT``):
  the judge against itself, every pair of its judgings of each transcript x metric (the kept
  first judging among them), the bootstrap resampling transcript x metric.
* ``PAIRS``: the peer release's ``s2_grid_and_interjudge.json`` (recognised by its shape; its
  own ``agreement`` block is shown as ``published``) or a JSON/JSONL/CSV list of rows with
  ``metric``, ``a``, ``b``.
* ``--preferences DIR``: categorical preferences (which system is preferred) per rater and
  entry, from the CSV files of ``DIR``; Gwet's AC1 for every pair of raters over the entries
  both preferred A or B (ties and "none" left out).

Studies and pairing rules: :mod:`empath_gate.calibration.studies`,
:mod:`empath_gate.calibration.pairing`; figures and methods: :mod:`empath_gate.calibration.agreement`,
:mod:`empath_gate.calibration.categorical`; the ``--format json`` document:
:mod:`empath_gate.calibration.render`. Exit 0, or 2 for a usage or input error.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from empath_gate.analysis.bootstrap import DEFAULT_RESAMPLES, DEFAULT_SEED
from empath_gate.calibration import render
from empath_gate.calibration.agreement import MIN_N
from empath_gate.calibration.studies import OrdinalStudy, ordinal_study, preference_study
from empath_gate.errors import ConfigError

EXIT_OK = 0
EXIT_USAGE = 2


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Options of ``empath-gate agreement``."""
    parser.add_argument(
        "files",
        nargs="*",
        type=Path,
        metavar="FILE",
        help="two results files, one results file with re-judgings, or one file of paired scores",
    )
    parser.add_argument(
        "--preferences",
        type=Path,
        default=None,
        metavar="DIR",
        help="a directory of preference CSV files (Gwet's AC1 between raters)",
    )
    parser.add_argument(
        "--categories",
        default=None,
        metavar="A,B",
        help="the preference categories (default: the two values found)",
    )
    add_figure_arguments(parser)
    parser.add_argument(
        "--save",
        type=Path,
        default=None,
        metavar="PATH",
        help="with two results files of two judges: write the calibration status of A's judge "
        "against B's (JSON)",
    )


def add_figure_arguments(parser: argparse.ArgumentParser) -> None:
    """The options shared with ``empath-gate calibrate``: ``--format text|json``, ``--min-n``
    (default :data:`~empath_gate.calibration.agreement.MIN_N`), ``--resamples`` and ``--seed`` of
    the bootstrap (defaults from :mod:`empath_gate.analysis.bootstrap`)."""
    parser.add_argument("--format", choices=("text", "json"), default="text", help="output format")
    parser.add_argument(
        "--min-n",
        type=int,
        default=MIN_N,
        metavar="N",
        help=f"fewest pairs (or clusters of re-judgings) for per-metric figures (default {MIN_N})",
    )
    parser.add_argument(
        "--resamples",
        type=int,
        default=DEFAULT_RESAMPLES,
        metavar="B",
        help=f"bootstrap resamples (default {DEFAULT_RESAMPLES})",
    )
    parser.add_argument("--seed", type=int, default=DEFAULT_SEED, help="bootstrap seed")


def check_figure_arguments(args: argparse.Namespace) -> None:
    """ConfigError unless ``--min-n`` and ``--resamples`` are at least 1."""
    if args.min_n < 1 or args.resamples < 1:
        raise ConfigError("--min-n and --resamples must be at least 1")


def _usage(message: str) -> int:
    print(f"empath-gate agreement: {message}", file=sys.stderr)
    return EXIT_USAGE


def _categorical(args: argparse.Namespace) -> int:
    cats = [c.strip() for c in args.categories.split(",")] if args.categories else None
    study = preference_study(args.preferences, categories=cats, n_resamples=args.resamples, seed=args.seed)
    if args.format == "json":
        doc = render.categorical_document(
            study, inputs=[str(args.preferences)], n_resamples=args.resamples, seed=args.seed
        )
        print(json.dumps(doc, ensure_ascii=False, indent=2))
    else:
        print(render.categorical_text(study, source=str(args.preferences)))
    return EXIT_OK


def _save(study: OrdinalStudy, files: list[Path], path: Path) -> None:
    from empath_gate.calibration.status import status_from_agreement, write_status

    status = status_from_agreement(study.report, results_a=files[0], results_b=files[1])
    print(
        f"empath-gate agreement: saved the calibration status to {write_status(status, path)}",
        file=sys.stderr,
    )


def run(args: argparse.Namespace) -> int:
    """Compute and print agreement; ConfigError (exit 2 through the CLI) for unreadable input."""
    files: list[Path] = list(args.files)
    if args.save is not None and (args.preferences is not None or len(files) != 2):
        return _usage("--save needs two results files (A's judge against B's)")
    if args.preferences is not None:
        if files:
            return _usage("give either --preferences DIR or score files, not both")
        return _categorical(args)
    if len(files) not in (1, 2):
        return _usage(
            "give two results files, one results file with re-judgings, one file of paired scores, "
            "or --preferences DIR"
        )
    check_figure_arguments(args)
    study = ordinal_study(
        files, min_n=args.min_n, n_resamples=args.resamples, seed=args.seed, two_judges=args.save is not None
    )
    if args.save is not None:
        _save(study, files, args.save)
    inputs = [str(f) for f in files]
    if args.format == "json":
        print(json.dumps(render.ordinal_document(study, inputs=inputs), ensure_ascii=False, indent=2))
    else:
        print(render.ordinal_text(study, inputs=inputs))
    return EXIT_OK
