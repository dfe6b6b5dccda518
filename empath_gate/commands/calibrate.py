"""``empath-gate calibrate``: the judge against gold labels, or the standard against the strict rubric.

Usage::

    empath-gate calibrate --gold GOLD --results RESULTS [--format text|json] [--min-n N] [--save PATH]
    empath-gate calibrate --standard-vs-strict FILE [--format text|json]

* ``--gold GOLD --results RESULTS``: gold labels (JSONL or CSV: ``conversation_id``, ``run``,
  ``metric``, ``score``) are paired with the results file's first scored judging of the same
  conversation, run and metric. Per metric (n >= ``--min-n``, else "too few") and pooled: bias
  (judge - gold) with a bootstrap 95 % interval, MAE, share within ±1, Spearman, and
  ``inflated_vs_gold`` when the interval's lower bound is >= 1 point. ``--save PATH`` writes
  the judge's calibration status (:mod:`empath_gate.calibration.status`), which the
  ``judge_calibration`` setting shows in every results file.
* ``--standard-vs-strict FILE``: the same transcripts scored under both rubrics (e.g. the
  peer release's ``s1_calibration.json``); the metrics whose mean drops by >= 1 point under
  the strict rubric are listed under ``inflated``; scores are read as they are, and the count
  leaving out rows with a score outside 1-10 is given too, naming the rows that make the
  difference.

Methods: :mod:`empath_gate.calibration.calibrate`. ``--format json`` prints one object with
``kind`` = ``gold`` (``judge_model``, ``pooled``, ``metrics``, ``inflated_vs_gold``,
``unmatched``, ``min_n``) or ``standard_vs_strict`` (``metrics``, ``inflated``,
``inflated_count``, ``metrics_in_scale``, ``inflated_in_scale``, ``inflated_in_scale_count``,
``out_of_scale_rows``, ``differences``, ``left_out``, ``scale``, ``threshold``).
Exit 0, or 2 for a usage or input error.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from tabulate import tabulate

from empath_gate.calibration.agreement import PairedScore
from empath_gate.calibration.calibrate import CalibrationFigures, StrictReport, calibrate, standard_vs_strict
from empath_gate.calibration.readers import first_judgings, read_gold, read_results, read_standard_vs_strict
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
        default=None,
        metavar="FILE",
        help="rows scored under the standard and the strict rubric",
    )
    add_figure_arguments(parser)
    parser.add_argument(
        "--save",
        type=Path,
        default=None,
        metavar="PATH",
        help="with --gold: write the judge's calibration status (JSON) for the judge_calibration setting",
    )


def _fig_row(label: str, n: int, f: CalibrationFigures | None, note: str | None) -> list[Any]:
    if f is None:
        return [label, n, note or "too few", "", "", "", "", ""]
    b = f.bias
    ci = f"[{b.ci_low:+.2f}, {b.ci_high:+.2f}]" if b.ci_low is not None and b.ci_high is not None else ""
    rho = "n/a" if f.spearman is None else f"{f.spearman:.2f}"
    bias = "n/a" if b.value is None else f"{b.value:+.2f}"
    return [
        label,
        n,
        bias,
        ci,
        f"{f.mae:.2f}",
        f"{f.within_one:.0%}",
        rho,
        "yes" if f.inflated_vs_gold else "no",
    ]


def _gold(args: argparse.Namespace) -> int:
    gold = read_gold(args.gold)
    results = read_results(args.results)
    judged = first_judgings(results)
    by_key: dict[tuple[str, int, str], float] = {}
    for s in results.scores:
        if (s.transcript_id, s.metric_id) in judged:
            by_key[(s.conversation_id, s.run, s.metric_id)] = judged[(s.transcript_id, s.metric_id)]
    pairs: list[PairedScore] = []
    for g in gold:
        key = (g.conversation_id, g.run, g.metric_id)
        if key in by_key:
            pairs.append(
                PairedScore(
                    item_id=f"{g.conversation_id}-r{g.run}", metric_id=g.metric_id, a=by_key[key], b=g.score
                )
            )
    gold_keys = {(g.conversation_id, g.run, g.metric_id) for g in gold}
    report = calibrate(
        pairs,
        min_n=args.min_n,
        unmatched_judge=len(set(by_key) - gold_keys),
        unmatched_gold=len(gold_keys - set(by_key)),
        n_resamples=args.resamples,
        seed=args.seed,
    )
    if args.save is not None:
        from empath_gate.calibration.status import status_from_gold, write_status

        status = status_from_gold(
            report, results_path=args.results, gold_path=args.gold, judge_model=results.judge_model
        )
        print(f"empath-gate calibrate: saved the calibration status to {write_status(status, args.save)}",
              file=sys.stderr)
    if args.format == "json":
        out: dict[str, Any] = {
            "command": "calibrate",
            "kind": "gold",
            "inputs": [str(args.gold), str(args.results)],
            "judge_model": results.judge_model,
            **report.model_dump(mode="json"),
            "n_resamples": args.resamples,
            "seed": args.seed,
        }
        print(json.dumps(out, ensure_ascii=False, indent=2))
        return EXIT_OK
    print(f"Judge {results.judge_model or 'unknown'} ({args.results}) against gold labels ({args.gold})")
    print(
        f"{report.pooled.n} pairs; unmatched: {report.unmatched_judge} judge scores, "
        f"{report.unmatched_gold} gold labels"
    )
    headers = ["metric", "n", "bias", "95% CI", "MAE", "within ±1", "Spearman", "inflated vs gold"]
    rows = [_fig_row("(pooled)", report.pooled.n, report.pooled, None)]
    rows += [_fig_row(m.metric_id, m.n, m.figures, m.note) for m in report.metrics]
    print(tabulate(rows, headers=headers, disable_numparse=True))
    print(
        f"\ninflated vs gold (lower bound of the bias >= 1 point): "
        f"{', '.join(report.inflated_vs_gold) or 'none'}"
    )
    return EXIT_OK


def _strict_text(report: StrictReport, source: Path) -> None:
    print(
        f"Standard vs strict rubric ({source}); a metric is inflated when its mean drops by >= "
        f"{report.threshold:g} point under the strict rubric"
    )
    inflated = {d.metric_id for d in report.inflated}
    in_scale = {d.metric_id: d for d in report.metrics_in_scale}
    rows = []
    for d in report.metrics:
        s = in_scale.get(d.metric_id)
        rows.append(
            [
                d.metric_id,
                d.n,
                f"{d.standard_mean:.2f}",
                f"{d.strict_mean:.2f}",
                f"{d.drop:+.2f}",
                "yes" if d.metric_id in inflated else "no",
                "" if s is None else f"{s.drop:+.2f} (n={s.n})",
            ]
        )
    print(
        tabulate(
            rows,
            headers=[
                "metric",
                "n",
                "standard",
                "strict",
                "drop",
                "inflated",
                f"drop, scores in {report.scale[0]}-{report.scale[1]} only",
            ],
            disable_numparse=True,
        )
    )
    print(f"\ninflated, scores read as they are: {report.inflated_count} metrics")
    print(
        f"inflated, leaving out {len(report.out_of_scale_rows)} rows with a score outside "
        f"{report.scale[0]}-{report.scale[1]}: {report.inflated_in_scale_count} metrics"
    )
    for diff in report.differences:
        side = "only with every row" if diff.inflated_with_all_rows else "only without those rows"
        print(f"  {diff.metric_id}: inflated {side}; rows: {', '.join(diff.rows)}")
    if report.left_out:
        print(f"left out (error or missing score): {', '.join(report.left_out)}")


def run(args: argparse.Namespace) -> int:
    """Compute and print the calibration; ConfigError (exit 2) for unreadable input."""
    if args.standard_vs_strict is not None:
        if args.gold is not None or args.results is not None:
            print("empath-gate calibrate: --standard-vs-strict takes no --gold/--results", file=sys.stderr)
            return EXIT_USAGE
        if args.save is not None:
            print("empath-gate calibrate: --save records a judge's calibration; use it with --gold/--results",
                  file=sys.stderr)
            return EXIT_USAGE
        report = standard_vs_strict(read_standard_vs_strict(args.standard_vs_strict))
        if args.format == "json":
            out = {
                "command": "calibrate",
                "kind": "standard_vs_strict",
                "inputs": [str(args.standard_vs_strict)],
                **report.model_dump(mode="json"),
            }
            print(json.dumps(out, ensure_ascii=False, indent=2))
        else:
            _strict_text(report, args.standard_vs_strict)
        return EXIT_OK
    if args.gold is None or args.results is None:
        print(
            "empath-gate calibrate: give --gold GOLD --results RESULTS, or --standard-vs-strict FILE",
            file=sys.stderr,
        )
        return EXIT_USAGE
    check_figure_arguments(args)
    return _gold(args)
