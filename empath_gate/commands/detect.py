"""``empath-gate detect FILE``: a risk detector on a team's own labelled conversations.

Usage::

    empath-gate detect FILE [--format jsonl|cradle] [--thresholds PATH] [--json]

Reads ``FILE`` (:mod:`empath_gate.turns.detector_file`), prints the micro-F1 figures over
CRADLE's seven and all ten categories and the alert share (:mod:`empath_gate.analysis.detector`),
and checks them against the floors under ``detector:`` of ``thresholds.yaml`` (``--thresholds``,
else the shipped file). Exit 0 when every floor set passes, 1 below one, 2 on bad input.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from empath_gate.errors import ConfigError
from empath_gate.gate.exit import EXIT_GATE_FAILED, EXIT_PASS


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Options of ``empath-gate detect``."""
    parser.add_argument("file", type=Path, metavar="FILE", help="labelled conversations (JSONL)")
    parser.add_argument("--format", choices=("jsonl", "cradle"), default="jsonl",
                        help="jsonl: conversation_id, turn, role, text, labels, predicted; "
                        "cradle: turn_id, text, labels, predicted")
    parser.add_argument("--thresholds", type=Path, default=None, metavar="PATH",
                        help="thresholds.yaml whose 'detector:' floors gate (default: the shipped one)")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")


def load_detector_thresholds(path: Path | None) -> object:
    """The ``detector:`` section of ``path`` (else the shipped thresholds.yaml), validated;
    ConfigError naming the file when it cannot be read or is invalid."""
    import yaml

    from empath_gate.bounded import read_yaml
    from empath_gate.instrument.models import Thresholds
    from empath_gate.resources import shipped_thresholds

    chosen = path or shipped_thresholds()
    try:
        data = read_yaml(chosen)
    except FileNotFoundError:
        raise ConfigError(f"{chosen}: thresholds file not found") from None
    except (OSError, UnicodeDecodeError, yaml.YAMLError) as exc:
        raise ConfigError(f"{chosen}: cannot read the thresholds: {exc}") from None
    try:
        return Thresholds.model_validate(data).detector
    except Exception as exc:
        raise ConfigError(f"{chosen}: not a valid thresholds file: {exc}") from None


def run(args: argparse.Namespace) -> int:
    """Score the file and gate it (module docstring); ConfigError -> exit 2 through the CLI."""
    from empath_gate.analysis.detector import below_thresholds, detector_scores, format_scores
    from empath_gate.turns.detector_file import read_dialogues

    thresholds = load_detector_thresholds(args.thresholds)
    scores = detector_scores(read_dialogues(args.file, args.format))
    failures = below_thresholds(scores, thresholds)
    if args.json:
        doc = {"scores": scores.model_dump(mode="json"), "failures": failures,
               "passed": not failures}
        print(json.dumps(doc, ensure_ascii=False, indent=2))
    else:
        print(f"empath-gate detect {args.file}:")
        for line in format_scores(scores):
            print(f"  {line}")
        for line in failures:
            print(f"  FAILED {line}")
        print("  detector: " + ("FAILED" if failures else "passed"))
    return EXIT_GATE_FAILED if failures else EXIT_PASS
