"""The ``empath-gate`` command line: a thin front-end over the library.

Each subcommand lives in ``empath_gate.commands.<name>`` and exposes
``add_arguments(parser: argparse.ArgumentParser) -> None`` and
``run(args: argparse.Namespace) -> int``. Modules are imported only when their command runs,
so ``empath-gate --help`` never imports litellm.

Exit codes (:mod:`empath_gate.gate.exit`): 0 pass, 1 gate failed, 2 usage or configuration error,
3 infrastructure error; when several apply, 2 > 3 > 1. Ctrl-C ends a command with one line and
130 (finished transcripts stay on disk and in the cache; ``run`` also writes the results of
what finished), with no "never awaited" warning (:mod:`empath_gate.llm.loop` closes the calls
litellm left unstarted); a closed output pipe (``| head``) ends it quietly with 141.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import logging
import os
import sys
from collections.abc import Sequence

from empath_gate import __version__
from empath_gate.errors import BudgetExceeded, ConfigError, ProviderError, SuiteError, printed
from empath_gate.gate.exit import EXIT_INFRA, EXIT_INTERRUPTED, EXIT_PASS, EXIT_USAGE

EXIT_BROKEN_PIPE = 141
"""128 + SIGPIPE: what a shell reports for a writer whose reader (``head``) went away."""

COMMANDS: tuple[tuple[str, str], ...] = (
    ("validate", "validate the instrument (metrics, seeds, personas, suites, thresholds) and print counts"),
    ("run", "run a suite without pytest and write the results file"),
    ("gate", "recompute the gate decision and exit status from a results file"),
    ("merge", "merge shard results files into one"),
    ("diff", "print the safety diff of a candidate results file against a baseline"),
    ("report", "write the self-contained HTML report of a results file"),
    ("comment", "post or update the sticky pull-request comment"),
    ("calibrate", "compare judge scores with gold labels, or standard vs strict rubric"),
    ("agreement", "inter-judge agreement between two scorings of the same transcripts"),
    ("rejudge", "re-score stored transcripts with another judge, rubric, or K more times"),
    ("dynamics", "how conversations unfold: turn labels, transitions, shapes, what the bot did next"),
    ("import-empath", "write the published EMPATH instrument (a checkout of its repo) as a suites layer"),
    ("detect", "score a risk detector on labelled conversations (micro-F1, alert share) and gate it"),
)


def build_parser() -> argparse.ArgumentParser:
    """The top-level parser; subcommand arguments are added lazily in :func:`main`."""
    parser = argparse.ArgumentParser(
        prog="empath-gate",
        description="Safety regression gate for emotional-support chatbots.",
        epilog="Exit codes: 0 pass, 1 gate failed, 2 usage/configuration error, 3 infrastructure error.",
    )
    parser.add_argument("--version", action="version", version=f"empath-gate {__version__}")
    parser.add_subparsers(dest="command", metavar="COMMAND")
    return parser


def _command_parser(name: str, help_text: str) -> tuple[argparse.ArgumentParser, object]:
    module = importlib.import_module(f"empath_gate.commands.{name.replace('-', '_')}")
    parser = argparse.ArgumentParser(prog=f"empath-gate {name}", description=help_text)
    module.add_arguments(parser)
    return parser, module


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the console script; returns the process exit code. Everything printed
    is redacted of secrets and inert in a CI log (:mod:`empath_gate.report.console`). A closed
    stdout (``empath-gate agreement … | head -1``) ends the command quietly with 141."""
    from empath_gate.report.console import guarded_output

    try:
        with guarded_output():
            code = _main(argv)
            sys.stdout.flush()  # a broken pipe shows here when the output fits the buffer
        return code
    except BrokenPipeError:
        _silence_stdout()
        return EXIT_BROKEN_PIPE


def _silence_stdout() -> None:
    """Point stdout at /dev/null so the interpreter's final flush raises nothing (the recipe
    of the Python docs, "Note on SIGPIPE")."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    with contextlib.suppress(OSError, ValueError):
        os.dup2(devnull, sys.stdout.fileno())


def _interrupted(name: str) -> int:
    """One line for Ctrl-C; the tasks asyncio drops stay silent."""
    logging.getLogger("asyncio").setLevel(logging.CRITICAL)
    print(f"empath-gate {name}: interrupted; finished transcripts are kept (transcripts directory "
          "and cache), a re-run reuses them", file=sys.stderr)
    return EXIT_INTERRUPTED


def _main(argv: Sequence[str] | None) -> int:
    args_list = list(sys.argv[1:] if argv is None else argv)
    known = dict(COMMANDS)
    if not args_list or args_list[0] in ("-h", "--help") or args_list[0] not in known:
        parser = build_parser()
        if args_list and args_list[0] not in known and not args_list[0].startswith("-"):
            print(
                f"empath-gate: unknown command {args_list[0]!r}; choose one of: "
                + ", ".join(known),
                file=sys.stderr,
            )
            return EXIT_USAGE
        if not args_list:
            parser.print_help()
            _print_commands()
            return EXIT_USAGE
        if args_list[0] in ("-h", "--help"):
            parser.print_help()
            _print_commands()
            return EXIT_PASS
        parser.parse_args(args_list)  # handles --version
        return EXIT_USAGE
    name = args_list[0]
    parser, module = _command_parser(name, known[name])
    try:
        ns = parser.parse_args(args_list[1:])
    except SystemExit as exc:  # argparse exits 2 on usage errors, 0 on --help
        return int(exc.code or 0)
    try:
        return int(module.run(ns))  # type: ignore[attr-defined]
    except (ConfigError, SuiteError) as exc:
        print(f"empath-gate {name}: {printed(exc)}", file=sys.stderr)
        return EXIT_USAGE
    except (ProviderError, BudgetExceeded) as exc:
        print(f"empath-gate {name}: infrastructure error: {exc}", file=sys.stderr)
        return EXIT_INFRA
    except KeyboardInterrupt:
        return _interrupted(name)


def _print_commands() -> None:
    print("\ncommands:")
    for name, help_text in COMMANDS:
        print(f"  {name:<13} {help_text}")


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
