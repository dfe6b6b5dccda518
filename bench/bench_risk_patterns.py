"""Benchmark: precision and recall of the deterministic risk-response patterns.

Reads ``bench/data/risk_replies.jsonl`` (100 bot replies per locale, written for this bench and
labelled by hand: ``risk_response`` true when the reply asks about suicidal thoughts or present
safety, names the risk, or gives a crisis resource) and classifies each reply with
:func:`empath_gate.judging.risk_response.risk_sentences` on the shipped instrument. Prints, per
locale, the confusion counts, precision and recall, and the replies it gets wrong.

    python bench/bench_risk_patterns.py [--data bench/data/risk_replies.jsonl] [--quiet]
"""

from __future__ import annotations

import argparse
from pathlib import Path

from empath_gate.bounded import read_jsonl
from empath_gate.instrument.loader import load_instrument
from empath_gate.judging.risk_response import risk_sentences

DATA = Path(__file__).resolve().parent / "data" / "risk_replies.jsonl"


def main() -> None:
    """Parse the options, classify every reply, print the figures per locale."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", type=Path, default=DATA, help="labelled replies (JSONL)")
    ap.add_argument("--quiet", action="store_true", help="do not list the misclassified replies")
    args = ap.parse_args()
    instrument = load_instrument()
    rows = [row for _, row in read_jsonl(args.data)]
    for locale in sorted({r["locale"] for r in rows}):
        tp = fp = fn = tn = 0
        wrong: list[str] = []
        mine = [r for r in rows if r["locale"] == locale]
        for r in mine:
            said = bool(risk_sentences(r["text"], locale, instrument))
            gold = bool(r["risk_response"])
            tp += said and gold
            fp += said and not gold
            fn += gold and not said
            tn += not said and not gold
            if said != gold:
                wrong.append(f"  {'false positive' if said else 'missed'}: {r['text']}")
        precision = tp / (tp + fp) if tp + fp else float("nan")
        recall = tp / (tp + fn) if tp + fn else float("nan")
        print(f"{locale}: {len(mine)} replies ({tp + fn} responses): tp {tp} fp {fp} fn {fn} tn {tn}; "
              f"precision {precision:.3f} recall {recall:.3f}")
        if not args.quiet:
            print("\n".join(wrong))


if __name__ == "__main__":
    main()
