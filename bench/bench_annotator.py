"""Measure the offline annotator against the project's gold (``bench/data/annotator-gold/``).

Runs ``empath_gate.turns.offline.annotate`` once over the gold seed scripts and bot replies of
the sets it prints (and of no other set), then prints, for the held-out half, the second
held-out set ``heldout2`` (user turns of other seed scripts, written before the ``offline-3``
tuning round, when the first held-out half had already been looked at during tuning) and each
written held-out set the gold has (``heldout3`` onward, the rows of
``empath_gate.turns.gold.WRITTEN_SETS``: scripts written blind to the annotator, each titled
with when it was written and what it was used for since), pooled
and per locale, and the tune half (labelled: the lexicon
was tuned on it, so it is not a measurement): per-label precision, recall and F1, macro-F1,
the majority-label baseline and the margin, valence Spearman and Pearson, per-strategy
precision and recall, per-locale summaries, and each floor of issue 16 (valence Spearman
>= 0.5, macro-F1 >= baseline + 0.15, on each side) with "met" / "not met".

    python bench/bench_annotator.py [--split held-out|heldout2|heldout3|...|tune|all]
                                    [--gold DIR] [--second MODULE:FUNCTION]

``--split`` prints one half only (``all``: both halves pooled); ``--second`` imports a second
annotator (a function taking a Dialogue and returning TurnLabels or AnnotatorFailure) and
reports the agreement of the two (Cohen's kappa on the label, correlation on valence).
Exit status: 0 when every floor of each held-out set printed (``held-out``, ``heldout2`` and
the written sets) is met (or none is printed), 1 when one is not, 2 when
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
    FRESH_SPLIT,
    NEW_SCRIPT_PREFIX,
    SPLITS,
    USER_ONLY_SPLITS,
    WRITTEN_SETS,
    GoldSet,
    Split,
    load_gold,
    split_problems,
)
from empath_gate.turns.gold_eval import Annotate, Predictions, annotate_gold, render_half, score_half

GOLD = Path(__file__).resolve().parent / "data" / "annotator-gold"
MEASUREMENTS = ("held-out", *USER_ONLY_SPLITS)
TITLES = {
    "held-out": "held-out half (looked at during earlier tuning rounds)",
    "heldout2": ("heldout2, the second held-out set "
                 "(written before the offline-3 tuning round, scored after it)"),
    **{w.split: f"{w.split}, {w.name} ({w.history})" for w in WRITTEN_SETS},
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
        part = tuple(t for t in gold.user_in(FRESH_SPLIT) if t.seed.startswith(NEW_SCRIPT_PREFIX) == new)
        if not part:
            continue
        half = score_half(gold.model_copy(update={"held_out": {**gold.held_out, FRESH_SPLIT: part}}),
                          predictions, FRESH_SPLIT)
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
    parser.add_argument("--split", choices=(*MEASUREMENTS, "tune", "all"), default=None,
                        help=f"print one set only (default: held-out and heldout2 to {USER_ONLY_SPLITS[-1]} "
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
    sets = []
    for split in USER_ONLY_SPLITS:
        turns = gold.user_in(split)
        scripts = "seed scripts" if split == FRESH_SPLIT else "scripts"
        sets.append(f"{split}: {len(turns)} user turns of {len({t.seed for t in turns})} {scripts}")
    print(f"gold: {args.gold} ({len(gold.user)} user turns of {seeds} seed scripts, "
          f"{len(gold.bot)} bot replies; " + "; ".join(sets) + ")")
    present = {split: bool(gold.user_in(split)) for split in USER_ONLY_SPLITS}
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
        if split == FRESH_SPLIT:
            print(_by_source(gold, predictions))
        if split in MEASUREMENTS and not all(f.met for f in half.floors):
            status = 1
    return status


if __name__ == "__main__":
    sys.exit(main())
