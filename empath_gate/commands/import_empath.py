"""``empath-gate import-empath``: the published EMPATH instrument as a suites layer.

Usage::

    empath-gate import-empath PATH -o DIR [--seed-value N] [--force] [--strict]

``PATH`` is a checkout of the public EMPATH benchmark repository (camilochs/empath-benchmark)
of a release that still holds ``empath/seeds/`` and ``empath/personas/`` (e.g. commit ffd4600).
Its Python files are parsed with :mod:`ast`, never imported or run
(:mod:`empath_gate.instrument.upstream`). ``DIR`` receives a layer to pass as ``--suites DIR``
(or ``[tool.empath-gate] suites_dirs``): the seeds (``auditor: llm``, risk ``unknown``, not
reviewed against suites/REVIEW.md), the personas, the ``empath-upstream`` suite (persona mode
``empath_md5``, ``--seed-value``, default 42 as upstream), upstream's licence files,
ATTRIBUTION.md and the import report (every instruction change, every entry not imported).

Prints the counts and, on stderr, every entry that could not be imported. Exit status: 0 the
layer was written (``--strict``: and every entry was imported), 2 bad input (not a checkout,
missing folders, no licence, nothing readable, an output folder in use, or with ``--strict``
an entry not imported), each with a message naming the path.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

EXIT_OK = 0
EXIT_BAD_INPUT = 2


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Options of ``empath-gate import-empath``."""
    from empath_gate.instrument.upstream.layer import SEED_VALUE

    parser.add_argument(
        "path", type=Path, metavar="PATH", help="a checkout of the EMPATH benchmark repository"
    )
    parser.add_argument(
        "-o",
        "--output",
        type=Path,
        required=True,
        metavar="DIR",
        help="the folder to write the suites layer into (new or empty)",
    )
    parser.add_argument(
        "--seed-value",
        type=int,
        default=SEED_VALUE,
        metavar="N",
        help=f"the value upstream's persona assignment hashes after the seed id (default {SEED_VALUE})",
    )
    parser.add_argument("--force", action="store_true", help="replace an earlier import in DIR")
    parser.add_argument(
        "--strict",
        action="store_true",
        help="exit 2 when any seed or persona could not be imported (the layer is still written)",
    )


def run(args: argparse.Namespace) -> int:
    """Import; print the counts (stdout) and the entries not imported (stderr)."""
    from empath_gate.instrument.loader import load_instrument
    from empath_gate.instrument.upstream.convert import convert
    from empath_gate.instrument.upstream.layer import ImportProblem, prepare_output, write_layer
    from empath_gate.instrument.upstream.reader import NotACheckout, read_upstream

    try:
        upstream = read_upstream(args.path)
        shipped = load_instrument()
        conv = convert(upstream, {m.id: m.dimension for m in shipped.empath_metrics if m.dimension})
        prepare_output(args.output, args.force)
        report = write_layer(args.output, args.path, conv, seed_value=args.seed_value)
    except (NotACheckout, ImportProblem) as exc:
        print(f"empath-gate import-empath: {exc}", file=sys.stderr)
        return EXIT_BAD_INPUT
    locales = ", ".join(f"{k} {v}" for k, v in report["seeds_by_locale"].items())
    plocales = ", ".join(f"{k} {v}" for k, v in report["personas_by_locale"].items())
    print(
        f"imported {report['seeds']} seeds ({locales}) and {report['personas']} personas ({plocales}) "
        f"into {args.output}"
    )
    print(
        f"  {sum(len(c) for c in report['changes'].values())} changes to {len(report['changes'])} "
        "instructions "
        "(sentences addressed to upstream's auditor agent); see IMPORT-REPORT.md"
    )
    print(f"  run it with: --suites {args.output} and the suite empath-upstream (an LLM auditor is needed)")
    for note in report["notes"]:
        print(f"note: {note}", file=sys.stderr)
    missed = report["not_imported"]
    for p in missed:
        print(f"not imported: {p['kind']} {p['entry'] or ''} at {p['where']}: {p['why']}", file=sys.stderr)
    if missed:
        print(
            f"empath-gate import-empath: {len(missed)} entries could not be imported (listed above and in "
            "IMPORT-REPORT.md)",
            file=sys.stderr,
        )
        if args.strict:
            return EXIT_BAD_INPUT
    return EXIT_OK
