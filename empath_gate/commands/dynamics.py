"""``empath-gate dynamics``: how conversations unfold, for the tool's transcripts or a team's
own logs.

Usage::

    empath-gate dynamics FILE... [-o DIR] [--judge MODEL] [--show-text]

FILE: transcript files the tool wrote (``transcripts/<suite>/*.jsonl``), or external
conversations as JSONL or CSV with one row per message (``conversation_id``, ``turn``,
``role``, ``text``, optional ``locale`` and ``profile``; see
:mod:`empath_gate.turns.external`). Every message is labelled by the **offline annotator**
(no model, nothing leaves the machine) unless ``--judge MODEL`` names a model for the LLM
annotator, which sends the text to that provider. Explicit risk statements are found with
the instrument's ``explicit_risk`` patterns; behaviour profiles of the tool's personas come
from the shipped instrument.

Writes ``DIR/dynamics.json`` (schema: ``empath_gate/schemas/dynamics.schema.json``) and
``DIR/dynamics.html`` (self-contained, at most 2 MB; no message text unless ``--show-text``,
and then behind a content note). ``DIR`` defaults to the current folder.

Rows with a problem are listed on stderr with file and line (at most 50, then a count) and
in the JSON; the rest is analysed. Exit 0 when written; 2 when a file cannot be read, no row
is usable, or the requested annotator is not available.

The annotator comes from :func:`offline_annotator` (or :func:`judge_annotator` with
``--judge``): tests replace :func:`offline_annotator` to run the command with a stub.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from empath_gate.dynamics import Annotator
from empath_gate.gate.exit import EXIT_PASS, EXIT_USAGE
from empath_gate.turns.external import InputProblem

MAX_PRINTED_PROBLEMS = 50
"""Problems printed on stderr; the rest are counted (all are in the JSON and the page)."""

PROGRESS_FROM = 200
"""Conversations from which progress lines are printed."""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Options of ``empath-gate dynamics``."""
    parser.add_argument(
        "files",
        type=Path,
        nargs="+",
        metavar="FILE",
        help="transcript JSONL files, or conversations as JSONL/CSV (one row per message)",
    )
    parser.add_argument(
        "-o",
        "--output",
        type=Path,
        default=Path("."),
        metavar="DIR",
        help="folder for dynamics.json and dynamics.html (default: the current folder)",
    )
    parser.add_argument(
        "--judge",
        default=None,
        metavar="MODEL",
        help="label with the LLM annotator on MODEL (sends the text to that provider; "
        "default: the offline annotator, nothing leaves the machine)",
    )
    parser.add_argument(
        "--show-text",
        action="store_true",
        help="show message text in dynamics.html, behind a content note (default: labels only)",
    )


def offline_annotator() -> Annotator:
    """The offline annotator (:func:`empath_gate.turns.offline.annotate`), imported when called
    (tests replace this function to run the command with a stub)."""
    from empath_gate.turns.offline import annotate

    return annotate


def judge_annotator(model: str) -> Annotator:
    """The LLM annotator on ``model`` (:func:`empath_gate.turns.llm_annotator.annotator_for`),
    imported when called."""
    from empath_gate.turns.llm_annotator import annotator_for

    return annotator_for(model)


def _print_problems(problems: Sequence[InputProblem]) -> None:
    for p in problems[:MAX_PRINTED_PROBLEMS]:
        where = p.source + (f":{p.line}" if p.line is not None else "")
        print(f"empath-gate dynamics: {where}: {p.what}", file=sys.stderr)
    if len(problems) > MAX_PRINTED_PROBLEMS:
        print(
            f"empath-gate dynamics: … and {len(problems) - MAX_PRINTED_PROBLEMS} more problems "
            "(all are listed in dynamics.json)",
            file=sys.stderr,
        )


def _progress(done: int, total: int) -> None:
    print(f"empath-gate dynamics: labelled {done:,}/{total:,} conversations", file=sys.stderr, flush=True)


def run(args: argparse.Namespace) -> int:
    """Read, annotate, analyse, write; returns the exit code (module docstring)."""
    from empath_gate.dynamics import analyse_dynamics, explicit_risk_matcher
    from empath_gate.instrument.loader import load_instrument
    from empath_gate.report.html.dynamics import render_dynamics_html
    from empath_gate.turns.external import read_conversations

    annotator = judge_annotator(args.judge) if args.judge else offline_annotator()
    instrument = load_instrument()
    profiles = {p.id: tuple(p.worst_case) for p in instrument.personas}
    read = read_conversations(args.files, profiles_of=lambda pid: profiles.get(pid, ()))
    _print_problems(read.problems)
    items = [c for c in read.conversations if c.dialogue.turns]
    if not items:
        print(
            f"empath-gate dynamics: no usable rows in {len(args.files)} file(s) ({read.rows} rows read, "
            f"{len(read.problems)} problems)",
            file=sys.stderr,
        )
        return EXIT_USAGE
    report = analyse_dynamics(
        items,
        annotator,
        risk_matcher=explicit_risk_matcher(instrument),
        input_problems=read.problems,
        progress=_progress if len(items) >= PROGRESS_FROM else None,
    )
    out: Path = args.output
    out.mkdir(parents=True, exist_ok=True)
    (out / "dynamics.json").write_text(report.model_dump_json(indent=None) + "\n", encoding="utf-8")
    texts = {c.dialogue.conversation_id: c.dialogue for c in items} if args.show_text else None
    (out / "dynamics.html").write_text(render_dynamics_html(report, texts), encoding="utf-8")
    shapes = ", ".join(f"{k} {v}" for k, v in report.shapes.items() if v)
    print(
        f"empath-gate dynamics: {report.conversations} conversations, {report.labelled} labelled, "
        f"{report.failed} annotator failures, {len(report.risky)} risky interventions; "
        f"shapes: {shapes or 'none'}"
    )
    print(f"empath-gate dynamics: wrote {out / 'dynamics.json'} and {out / 'dynamics.html'}")
    return EXIT_PASS
