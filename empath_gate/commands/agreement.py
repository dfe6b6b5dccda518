"""``empath-gate agreement``: inter-judge agreement between two scorings of the same transcripts.

Usage::

    empath-gate agreement A B [--format text|json]      two results files (paired by transcript and metric)
    empath-gate agreement PAIRS [--format text|json]    one file of paired scores
    empath-gate agreement --preferences DIR [--categories A,B] [--format text|json]

* ``A B``: results files of two judgings of the same transcripts (e.g. one from ``rejudge``);
  each transcript x metric's first scored judging is paired with the other file's.
  ``--save PATH`` writes the calibration status of A's judge against B's (the peer judge;
  :mod:`empath_gate.calibration.status`), which the ``judge_calibration`` setting shows.
* ``PAIRS``: the peer release's ``s2_grid_and_interjudge.json`` (recognised by its shape; its
  own ``agreement`` block is shown as ``published``) or a JSON/JSONL/CSV list of rows with
  ``metric``, ``a``, ``b``.
* ``--preferences DIR``: categorical preferences (which system is preferred) per rater and
  entry, from the CSV files of ``DIR``; Gwet's AC1 for every pair of raters over the entries
  both preferred A or B (ties and "none" left out).

Figures and methods: :mod:`empath_gate.calibration.agreement`. ``--format json`` prints one object:
``kind`` (``ordinal`` or ``categorical``); for ordinal ``n_pairs``, ``pooled``, ``metrics``
(each with ``figures`` or a "too few" ``note``), ``published`` (or null), ``unmatched``,
``min_n``, ``n_resamples``, ``seed``; for categorical ``categories``, ``raters`` and ``pairs``
(``rater_a``, ``rater_b``, ``n``, ``agreements``, ``agreement``, ``ac1``, ``left_out``).
Exit 0, or 2 for a usage or input error.
"""

from __future__ import annotations

import argparse
import itertools
import json
import sys
from pathlib import Path
from typing import Any

from tabulate import tabulate

from empath_gate.analysis.bootstrap import DEFAULT_RESAMPLES, DEFAULT_SEED, Estimate
from empath_gate.calibration.agreement import (
    MIN_N,
    AgreementFigures,
    AgreementReport,
    CategoricalAgreement,
    agreement,
    categorical_agreement,
)
from empath_gate.calibration.readers import (
    first_judgings,
    pair_scores,
    read_pairs,
    read_preferences,
    read_results,
)
from empath_gate.errors import ConfigError

EXIT_OK = 0
EXIT_USAGE = 2

ORDINAL_ROWS: tuple[tuple[str, str], ...] = (
    ("exact", "exact agreement"),
    ("within_one", "within ±1"),
    ("mean_abs_diff", "mean absolute difference"),
    ("pearson", "Pearson r"),
    ("spearman", "Spearman rho"),
    ("kappa_quadratic", "Cohen's kappa (quadratic)"),
    ("krippendorff_alpha", "Krippendorff's alpha (ordinal)"),
)
PUBLISHED_KEYS = {"exact": "exact", "within_one": "within1", "mean_abs_diff": "mad", "pearson": "pearson_r"}
"""Keys of the peer release's own ``agreement`` block, by our figure names."""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Options of ``empath-gate agreement``."""
    parser.add_argument(
        "files", nargs="*", type=Path, metavar="FILE", help="two results files, or one file of paired scores"
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
        help="with two results files: write the calibration status of A's judge against B's (JSON)",
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
        help=f"fewest pairs for per-metric figures (default {MIN_N})",
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


def _fmt(e: Estimate, digits: int = 3) -> tuple[str, str]:
    if e.value is None:
        return "n/a", e.note or ""
    ci = (
        f"[{e.ci_low:.{digits}f}, {e.ci_high:.{digits}f}]"
        if e.ci_low is not None and e.ci_high is not None
        else ""
    )
    return f"{e.value:.{digits}f}", ci


def _ordinal_json(
    report: AgreementReport,
    *,
    inputs: list[str],
    shape: str,
    published: dict[str, float] | None,
    unmatched: dict[str, int],
    judges: list[str | None] | None,
) -> dict[str, Any]:
    return {
        "command": "agreement",
        "kind": "ordinal",
        "inputs": inputs,
        "shape": shape,
        "judges": judges,
        "n_pairs": report.pooled.n,
        "pooled": report.pooled.model_dump(mode="json"),
        "metrics": [m.model_dump(mode="json") for m in report.metrics],
        "published": published,
        "unmatched": unmatched,
        "min_n": report.min_n,
        "n_resamples": report.n_resamples,
        "seed": report.seed,
    }


def _pooled_table(f: AgreementFigures, published: dict[str, float] | None) -> str:
    headers = ["statistic", "value", "95% CI"] + (["published"] if published else [])
    rows = []
    for key, label in ORDINAL_ROWS:
        value, ci = _fmt(getattr(f, key))
        if key == "exact":
            value += f" ({f.exact_count}/{f.n})"
        if key == "within_one":
            value += f" ({f.within_one_count}/{f.n})"
        row = [label, value, ci]
        if published:
            pub = published.get(PUBLISHED_KEYS.get(key, ""))
            row.append("" if pub is None else f"{pub:.4f}")
        rows.append(row)
    return tabulate(rows, headers=headers, disable_numparse=True)


def _metric_table(report: AgreementReport) -> str:
    headers = ["metric", "n", "exact", "within ±1", "MAD", "Pearson", "Spearman", "kappa_w", "alpha"]
    rows: list[list[str]] = []
    for m in report.metrics:
        if m.figures is None:
            rows.append([m.metric_id, str(m.n), m.note or "too few", "", "", "", "", "", ""])
            continue
        f = m.figures
        rows.append([m.metric_id, str(m.n)] + [_fmt(getattr(f, k), 2)[0] for k, _ in ORDINAL_ROWS])
    return tabulate(rows, headers=headers, disable_numparse=True)


def _print_ordinal(
    report: AgreementReport, title: str, published: dict[str, float] | None, unmatched: dict[str, int]
) -> None:
    print(title)
    print(f"{report.pooled.n} pairs; bootstrap {report.n_resamples} resamples, seed {report.seed}")
    if unmatched["a"] or unmatched["b"]:
        print(f"unmatched: {unmatched['a']} only in the first, {unmatched['b']} only in the second")
    print()
    print(_pooled_table(report.pooled, published))
    print()
    print(f"per metric (figures need n >= {report.min_n}):")
    print(_metric_table(report))


def _categorical(args: argparse.Namespace) -> int:
    cats = [c.strip() for c in args.categories.split(",")] if args.categories else None
    prefs = read_preferences(args.preferences, categories=cats)
    results: list[CategoricalAgreement] = [
        categorical_agreement(
            prefs.ratings[a],
            prefs.ratings[b],
            prefs.categories,
            rater_a=a,
            rater_b=b,
            n_resamples=args.resamples,
            seed=args.seed,
        )
        for a, b in itertools.combinations(prefs.raters, 2)
    ]
    if args.format == "json":
        print(
            json.dumps(
                {
                    "command": "agreement",
                    "kind": "categorical",
                    "inputs": [str(args.preferences)],
                    "categories": list(prefs.categories),
                    "raters": list(prefs.raters),
                    "pairs": [r.model_dump(mode="json", exclude={"items"}) for r in results],
                    "n_resamples": args.resamples,
                    "seed": args.seed,
                },
                ensure_ascii=False,
                indent=2,
            )
        )
        return EXIT_OK
    print(
        f"Gwet's AC1 on preferences in {args.preferences} (categories: {', '.join(prefs.categories)}; "
        "entries without an A/B preference, or a tie, left out)"
    )
    rows = []
    for r in results:
        value, ci = _fmt(r.ac1, 2)
        share = "n/a" if r.agreement is None else f"{r.agreement:.0%}"
        rows.append([r.rater_a, r.rater_b, r.n, f"{share} ({r.agreements}/{r.n})", value, ci, r.left_out])
    print(
        tabulate(
            rows,
            headers=["rater", "rater", "n", "agreement", "AC1", "95% CI", "left out"],
            disable_numparse=True,
        )
    )
    return EXIT_OK


def run(args: argparse.Namespace) -> int:
    """Compute and print agreement; ConfigError (exit 2 through the CLI) for unreadable input."""
    files: list[Path] = list(args.files)
    if args.save is not None and (args.preferences is not None or len(files) != 2):
        print("empath-gate agreement: --save needs two results files (A's judge against B's)",
              file=sys.stderr)
        return EXIT_USAGE
    if args.preferences is not None:
        if files:
            print(
                "empath-gate agreement: give either --preferences DIR or score files, not both",
                file=sys.stderr,
            )
            return EXIT_USAGE
        return _categorical(args)
    check_figure_arguments(args)
    if len(files) == 1:
        pf = read_pairs(files[0])
        report = agreement(pf.pairs, min_n=args.min_n, n_resamples=args.resamples, seed=args.seed)
        unmatched = {"a": 0, "b": 0}
        if args.format == "json":
            print(
                json.dumps(
                    _ordinal_json(
                        report,
                        inputs=[str(files[0])],
                        shape=pf.shape,
                        published=pf.published,
                        unmatched=unmatched,
                        judges=None,
                    ),
                    ensure_ascii=False,
                    indent=2,
                )
            )
        else:
            _print_ordinal(
                report,
                f"Agreement between the paired scores of {files[0]} ({pf.shape})",
                pf.published,
                unmatched,
            )
        return EXIT_OK
    if len(files) == 2:
        ra, rb = read_results(files[0]), read_results(files[1])
        pairs, only_a, only_b = pair_scores(first_judgings(ra), first_judgings(rb))
        if not pairs:
            raise ConfigError(f"{files[0]} and {files[1]} share no scored transcript x metric")
        report = agreement(pairs, min_n=args.min_n, n_resamples=args.resamples, seed=args.seed)
        unmatched = {"a": only_a, "b": only_b}
        if args.save is not None:
            from empath_gate.calibration.status import status_from_agreement, write_status

            status = status_from_agreement(report, results_a=files[0], results_b=files[1])
            print(f"empath-gate agreement: saved the calibration status to {write_status(status, args.save)}",
                  file=sys.stderr)
        if args.format == "json":
            print(
                json.dumps(
                    _ordinal_json(
                        report,
                        inputs=[str(f) for f in files],
                        shape="results",
                        published=None,
                        unmatched=unmatched,
                        judges=[ra.judge_model, rb.judge_model],
                    ),
                    ensure_ascii=False,
                    indent=2,
                )
            )
        else:
            _print_ordinal(
                report,
                f"Agreement between {files[0]} (judge {ra.judge_model or 'unknown'}) and "
                f"{files[1]} (judge {rb.judge_model or 'unknown'})",
                None,
                unmatched,
            )
        return EXIT_OK
    print(
        "empath-gate agreement: give two results files, one file of paired scores, or --preferences DIR",
        file=sys.stderr,
    )
    return EXIT_USAGE
