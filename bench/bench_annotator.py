"""Measure the offline annotator against the project's gold (``bench/data/annotator-gold/``).

Runs ``empath_gate.turns.offline.annotate`` once over the gold seed scripts and bot replies of
the sets it prints (and of no other set), then prints, for the held-out half, the second
held-out set ``heldout2`` (user turns of other seed scripts, written before the ``offline-3``
tuning round, when the first held-out half had already been looked at during tuning), the third
held-out set ``heldout3`` when the gold has it (scripts written blind to the annotator, scored
once after ``offline-5`` was frozen, then used for tuning ``offline-6``) and the fourth held-out set
``heldout4`` when the gold has it (scripts written blind while ``offline-6`` was tuned, scored once
after it was frozen, then used for fitting ``offline-7``) and the fifth held-out set ``heldout5``
when the gold has it (scripts written blind while ``offline-7`` was fitted), pooled
and per locale, and the tune half (labelled: the lexicon
was tuned on it, so it is not a measurement): per-label precision, recall and F1, macro-F1,
the majority-label baseline and the margin, valence Spearman and Pearson, per-strategy
precision and recall, per-locale summaries, and each floor of issue 16 (valence Spearman
>= 0.5, macro-F1 >= baseline + 0.15, on each side) with "met" / "not met".

    python bench/bench_annotator.py [--split held-out|heldout2|heldout3|heldout4|heldout5|tune|all]
                                    [--gold DIR] [--second MODULE:FUNCTION]

``--split`` prints one half only (``all``: both halves pooled); ``--second`` imports a second
annotator (a function taking a Dialogue and returning TurnLabels or AnnotatorFailure) and
reports the agreement of the two (Cohen's kappa on the label, correlation on valence).
Exit status: 0 when every floor of each held-out set printed (``held-out``, ``heldout2``,
``heldout3``, ``heldout4``, ``heldout5``) is met (or none is printed), 1 when one is not, 2 when
the annotator or the gold cannot be used (or ``--split`` names a set the gold lacks).
"""

from __future__ import annotations

import argparse
import importlib
import sys
import time
from pathlib import Path
from typing import cast

from empath_gate.errors import ConfigError
from empath_gate.turns.gold import (
    NEW_SCRIPT_PREFIX,
    SPLITS,
    GoldSet,
    Split,
    load_gold,
    split_problems,
)
from empath_gate.turns.gold_eval import Annotate, Predictions, annotate_gold, render_half, score_half

GOLD = Path(__file__).resolve().parent / "data" / "annotator-gold"
MEASUREMENTS = ("held-out", "heldout2", "heldout3", "heldout4", "heldout5")
TITLES = {
    "held-out": "held-out half (looked at during earlier tuning rounds)",
    "heldout2": ("heldout2, the second held-out set "
                 "(written before the offline-3 tuning round, scored after it)"),
    "heldout3": ("heldout3, the third held-out set "
                 "(written blind to the annotator, scored once after offline-5 was frozen, "
                 "then used for tuning offline-6)"),
    "heldout4": ("heldout4, the fourth held-out set "
                 "(written blind to the annotator, scored once after offline-6 was frozen, "
                 "then used for fitting offline-7)"),
    "heldout5": ("heldout5, the fifth held-out set "
                 "(written blind to the annotator, scored after offline-7 was frozen)"),
    "tune": "tune half (the lexicon was tuned on it: not a measurement)",
    "all": "both halves pooled (includes the tune half: not a measurement)",
}


def _load(spec: str) -> Annotate:
    module, _, name = spec.partition(":")
    fn = getattr(importlib.import_module(module), name or "annotate")
    if not callable(fn):
        raise TypeError(f"{spec} is not callable")
    return fn  # type: ignore[no-any-return]


def _by_source(gold: GoldSet, predictions: Predictions) -> str:
    """heldout2's user-side figures per source: the instrument's seed scripts (read while earlier
    lexicon versions were written) and the scripts written for the gold (``new-...``)."""
    lines = ["  heldout2 by source (user turns):"]
    for name, new in (("instrument seed scripts", False), ("scripts written for the gold", True)):
        part = tuple(t for t in gold.fresh if t.seed.startswith(NEW_SCRIPT_PREFIX) == new)
        if not part:
            continue
        half = score_half(gold.model_copy(update={"fresh": part}), predictions, "heldout2")
        scripts = len({t.seed for t in part})
        figures = [f"pooled Spearman {_num(half.user.valence.spearman)}, macro-F1 "
                   f"{_num(half.user.labels.macro_f1)} (margin {_num(half.user.margin, True)})"]
        figures += [f"{loc} Spearman {_num(u.valence.spearman)}, macro-F1 {_num(u.labels.macro_f1)}"
                    for loc, (u, _) in half.by_locale.items()]
        lines.append(f"    {name} ({scripts} scripts, {len(part)} turns): " + "; ".join(figures))
    return "\n".join(lines)


def _num(value: float | None, sign: bool = False) -> str:
    if value is None:
        return "n/a"
    return f"{value:+.3f}" if sign else f"{value:.3f}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--split",
                        choices=("held-out", "heldout2", "heldout3", "heldout4", "heldout5", "tune", "all"),
                        default=None,
                        help="print one set only (default: held-out and heldout2 to heldout5 "
                             "when the gold has them, tune)")
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
    fresh = len({t.seed for t in gold.fresh})
    third = len({t.seed for t in gold.third})
    fourth = len({t.seed for t in gold.fourth})
    fifth = len({t.seed for t in gold.fifth})
    print(f"gold: {args.gold} ({len(gold.user)} user turns of {seeds} seed scripts, "
          f"{len(gold.bot)} bot replies; heldout2: {len(gold.fresh)} user turns of {fresh} seed scripts; "
          f"heldout3: {len(gold.third)} user turns of {third} scripts; "
          f"heldout4: {len(gold.fourth)} user turns of {fourth} scripts; "
          f"heldout5: {len(gold.fifth)} user turns of {fifth} scripts)")
    present = {"heldout2": bool(gold.fresh), "heldout3": bool(gold.third), "heldout4": bool(gold.fourth),
               "heldout5": bool(gold.fifth)}
    splits = [args.split] if args.split else ["held-out", *(s for s, p in present.items() if p), "tune"]
    missing = [s for s in splits if not present.get(s, True)]
    if missing:
        print(f"gold: {args.gold} has no {missing[0]} set", file=sys.stderr)
        return 2
    wanted = {x for s in splits for x in (SPLITS if s == "all" else (s,))}
    t0 = time.perf_counter()
    predictions = annotate_gold(gold, annotate, cast(set[Split], wanted))
    elapsed = time.perf_counter() - t0
    failures = ", ".join(f"{k} {v}" for k, v in sorted(predictions.failures.items())) or "none"
    print(f"annotator: offline, version {predictions.version or 'n/a'}; {predictions.dialogues} dialogues in "
          f"{elapsed:.2f} s; failed dialogues: {failures}")
    if args.second:
        second = annotate_gold(gold, second_fn, cast(set[Split], wanted))
        failures = ", ".join(f"{k} {v}" for k, v in sorted(second.failures.items())) or "none"
        print(f"second annotator: {args.second}, version {second.version or 'n/a'}; "
              f"failed dialogues: {failures}")
    status = 0
    for split in splits:
        half = score_half(gold, predictions, None if split == "all" else cast(Split, split), second)
        print()
        print(render_half(half, TITLES[split]))
        if split == "heldout2":
            print(_by_source(gold, predictions))
        if split in MEASUREMENTS and not all(f.met for f in half.floors):
            status = 1
    return status


if __name__ == "__main__":
    sys.exit(main())
