"""Measure the offline annotator against the project's gold (``bench/data/annotator-gold/``).

Runs ``empath_gate.turns.offline.annotate`` over every gold seed script and bot reply once,
then prints, for the held-out half (the measurement) and the tune half (labelled: the lexicon
was tuned on it, so it is not a measurement): per-label precision, recall and F1, macro-F1,
the majority-label baseline and the margin, valence Spearman and Pearson, per-strategy
precision and recall, per-locale summaries, and each floor of issue 16 (valence Spearman
>= 0.5, macro-F1 >= baseline + 0.15, on each side) with "met" / "not met".

    python bench/bench_annotator.py [--split held-out|tune|all] [--gold DIR]
                                    [--second MODULE:FUNCTION]

``--split`` prints one half only (``all``: both halves pooled); ``--second`` imports a second
annotator (a function taking a Dialogue and returning TurnLabels or AnnotatorFailure) and
reports the agreement of the two (Cohen's kappa on the label, correlation on valence).
Exit status: 0 when every floor of the held-out half is met (or the held-out half is not
printed), 1 when one is not, 2 when the annotator or the gold cannot be used.
"""

from __future__ import annotations

import argparse
import importlib
import sys
import time
from pathlib import Path
from typing import cast

from empath_gate.errors import ConfigError
from empath_gate.turns.gold import Split, load_gold, split_problems
from empath_gate.turns.gold_eval import Annotate, annotate_gold, render_half, score_half

GOLD = Path(__file__).resolve().parent / "data" / "annotator-gold"
TITLES = {
    "held-out": "held-out half (the measurement)",
    "tune": "tune half (the lexicon was tuned on it: not a measurement)",
    "all": "both halves pooled (includes the tune half: not a measurement)",
}


def _load(spec: str) -> Annotate:
    module, _, name = spec.partition(":")
    fn = getattr(importlib.import_module(module), name or "annotate")
    if not callable(fn):
        raise TypeError(f"{spec} is not callable")
    return fn  # type: ignore[no-any-return]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--split", choices=("held-out", "tune", "all"), default=None,
                        help="print one half only (default: held-out, then tune)")
    parser.add_argument("--gold", type=Path, default=GOLD, help=f"gold folder (default {GOLD})")
    parser.add_argument("--second", metavar="MODULE:FUNCTION", help="a second annotator to compare with")
    args = parser.parse_args(argv)
    try:
        from empath_gate.turns.offline import annotate
    except ImportError as exc:
        print(f"the offline annotator is not available (empath_gate.turns.offline.annotate: {exc}); "
              "nothing to measure", file=sys.stderr)
        return 2
    try:
        gold = load_gold(args.gold)
    except ConfigError as exc:
        print(f"gold: {exc}", file=sys.stderr)
        return 2
    problems = split_problems(gold)
    if problems:
        print("gold: the stored halves differ from the split rule:\n  " + "\n  ".join(problems[:10]),
              file=sys.stderr)
        return 2
    second = None
    if args.second:
        try:
            second_fn = _load(args.second)
        except (ImportError, AttributeError, TypeError) as exc:
            print(f"--second {args.second}: {exc}", file=sys.stderr)
            return 2
    seeds = len({t.seed for t in gold.user})
    print(f"gold: {args.gold} ({len(gold.user)} user turns of {seeds} seed scripts, "
          f"{len(gold.bot)} bot replies)")
    t0 = time.perf_counter()
    predictions = annotate_gold(gold, annotate)
    elapsed = time.perf_counter() - t0
    failures = ", ".join(f"{k} {v}" for k, v in sorted(predictions.failures.items())) or "none"
    print(f"annotator: offline, version {predictions.version or 'n/a'}; {predictions.dialogues} dialogues in "
          f"{elapsed:.2f} s; failed dialogues: {failures}")
    if args.second:
        second = annotate_gold(gold, second_fn)
        failures = ", ".join(f"{k} {v}" for k, v in sorted(second.failures.items())) or "none"
        print(f"second annotator: {args.second}, version {second.version or 'n/a'}; "
              f"failed dialogues: {failures}")
    splits = [args.split] if args.split else ["held-out", "tune"]
    status = 0
    for split in splits:
        half = score_half(gold, predictions, None if split == "all" else cast(Split, split), second)
        print()
        print(render_half(half, TITLES[split]))
        if split == "held-out" and not all(f.met for f in half.floors):
            status = 1
    return status


if __name__ == "__main__":
    sys.exit(main())
