"""``empath-gate validate``: validate the instrument and print its counts.

Usage::

    empath-gate validate [--suites DIR]... [--thresholds PATH] [--waivers PATH] [--format text|json]

Without ``--suites``, the directories of ``[tool.empath-gate] suites_dirs`` in
``./pyproject.toml`` are layered (when present). The input limits (``max_yaml_bytes``...) are
the settings' (``[tool.empath-gate]`` < ``EMPATH_*``), as for every command; a setting that is
not valid is a usage error (exit 2). Exit 0 when everything is valid, 2 with every
problem on stderr (one per line: ``file:line: /pointer: what — fix``; at most 50, then a
count of the others). With ``--format json`` stderr is instead one JSON object
``{"valid": false, "problems": [...]}`` with every problem; stdout stays empty.

Identity conflicts (suites/REVIEW.md, section 9: an instruction or script naming a person of
its own, a seed no persona fits, a fixed character that is missing, of another locale or does
not fit) are loader errors, so they are listed like every other problem, with file, line and
fix. For the shipped instrument alone the coverage rules (seeds per metric, both locales,
locale balance, every persona reachable, the behaviour coverage of each seed of a paired suite:
:mod:`empath_gate.instrument.pairing`) and the mechanical seed review rules (suites/REVIEW.md:
script length after the confirm turn, no method detail in user turns, no near-duplicate
scripts, unique scenarios, a review against the current checklist) are errors; with team
layers they are printed as notes. Seeds a suite selects but cannot give a fitting persona
(its ``worst_case_only`` or ``list`` leaves none) are always notes: the suite runs without them,
and so are seeds recorded as not reviewed against REVIEW.md (``review: {reviewed: false}``) and
seeds that only an LLM auditor can play (``auditor: llm``).
At most 50 notes are printed, then a count of the others.

``--format json`` prints one object: ``instrument_version``, ``metrics`` (EMPATH's),
``families`` (family id -> ``{"label", "metrics"}``), ``dimensions``,
``seeds``, ``personas`` (counts), ``covert_seeds``, ``worst_case_personas`` (counts),
``seeds_by_locale``, ``multi_party_seeds_by_locale`` (locale -> seeds with two or more
``participants``), ``personas_by_locale``, ``seeds_by_metric`` (id -> count),
``fixed_characters`` (seeds with a ``character``), ``llm_auditor_only_seeds`` (seeds with
``auditor: llm``: no script), ``scripted_variants`` (seed x persona pairs some suite plays whose
scripted variant differs from the script: :mod:`empath_gate.instrument.variant_checks`),
``unspoken_seeds`` (suite id -> ids of the
seeds it selects but cannot give a fitting persona; only suites that have some) and ``suites``
(suite id -> ``{"seeds", "conversations", "items", "runs", "metrics", "personas"}``) and
``pairing_coverage`` (paired suite id -> one row per seed: ``seed_id``, ``cooperative``,
``profiles``, ``hard`` (behaviour -> profiles at level >= 2), ``covered``; see
:mod:`empath_gate.instrument.pairing`) and ``notes`` (every note, also printed on stderr).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from empath_gate.errors import SuiteError, printed_problems
from empath_gate.instrument import loader
from empath_gate.instrument.coverage import (
    MIN_LOCALE_SHARE,
    MIN_SEEDS_PER_METRIC,
    coverage_problems,
    multi_party_seeds_by_locale,
    personas_by_locale_count,
    seeds_by_locale,
    seeds_by_metric,
    unspoken_seeds,
)
from empath_gate.instrument.loader import gc_paused, load_instrument, pyproject_suites_dirs
from empath_gate.instrument.models import BEHAVIOURS, Instrument
from empath_gate.instrument.pairing import pairing_coverage
from empath_gate.instrument.review import checklist_version, review_problems, unreviewed_notes
from empath_gate.instrument.variant_checks import suite_variants
from empath_gate.plan import plan_counts

EXIT_OK = 0
EXIT_INVALID = 2


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Options of ``empath-gate validate``."""
    parser.add_argument("--suites", dest="suites", action="append", type=Path, default=None, metavar="DIR",
                        help="a team suites directory layered on the shipped instrument (repeatable; "
                             "default: [tool.empath-gate] suites_dirs in ./pyproject.toml)")
    parser.add_argument("--thresholds", type=Path, default=None, metavar="PATH",
                        help="a thresholds.yaml replacing the shipped one")
    parser.add_argument("--waivers", type=Path, default=None, metavar="PATH", help="a waivers.yaml to check")
    parser.add_argument("--format", choices=("text", "json"), default="text", help="output format")
    parser.add_argument("--min-seeds-per-metric", type=int, default=MIN_SEEDS_PER_METRIC, metavar="N",
                        help=f"coverage rule: seeds per metric (default {MIN_SEEDS_PER_METRIC})")


def summary(instrument: Instrument) -> dict[str, Any]:
    """The counts ``--format json`` prints (see the module docstring for the keys)."""
    suites: dict[str, Any] = {}
    for s in instrument.suites:
        counts = plan_counts(instrument, [s.id])
        suites[s.id] = {
            "seeds": counts.seeds,
            "conversations": counts.conversations,
            "items": counts.items,
            "runs": counts.runs,
            "metrics": s.metrics,
            "personas": s.personas.mode + (" (worst case only)" if s.personas.worst_case_only else ""),
        }
    return {
        "instrument_version": instrument.version,
        "metrics": len(instrument.empath_metrics),
        "families": {f.id: {"label": f.label, "metrics": len(instrument.family_metrics(f.id))}
                     for f in instrument.families},
        "dimensions": len(instrument.dimensions),
        "seeds": len(instrument.seeds),
        "personas": len(instrument.personas),
        "covert_seeds": sum(1 for s in instrument.seeds if s.covert),
        "worst_case_personas": sum(1 for p in instrument.personas if p.worst_case),
        "seeds_by_locale": seeds_by_locale(instrument),
        "multi_party_seeds_by_locale": multi_party_seeds_by_locale(instrument),
        "personas_by_locale": personas_by_locale_count(instrument),
        "seeds_by_metric": seeds_by_metric(instrument),
        "fixed_characters": sum(1 for s in instrument.seeds if s.character is not None),
        "llm_auditor_only_seeds": sum(1 for s in instrument.seeds if s.auditor == "llm"),
        "scripted_variants": len(suite_variants(instrument)),
        "unspoken_seeds": {k: list(v) for k, v in unspoken_seeds(instrument).items()},
        "suites": suites,
        "emotion_labels": None if instrument.emotions is None else {
            "version": instrument.emotions.label_set_version,
            "user": len(instrument.emotions.user_labels),
            "bot": len(instrument.emotions.bot_labels),
            "strategies": len(instrument.emotions.strategies),
        },
        "lexicon_entries": {
            lex.locale: {k: len(set(v)) for k, v in (*lex.user_labels.items(), *lex.bot_labels.items())}
            for lex in instrument.lexicons
        },
        "pairing_coverage": {
            s.id: [{**r.model_dump(), "covered": r.covered} for r in pairing_coverage(instrument, s.id)]
            for s in instrument.suites if s.personas.cooperative_pairing
        },
    }


def _text(data: dict[str, Any], notes: list[str]) -> str:
    lines = [
        f"instrument {data['instrument_version']}: valid",
        f"  {data['dimensions']} dimensions, {data['metrics']} metrics"
        + "".join(f"; family {fid} ({f['label']}): {f['metrics']} metrics"
                  for fid, f in data["families"].items()),
        f"  {data['seeds']} seeds ({data['covert_seeds']} covert): "
        + ", ".join(f"{k} {v}" for k, v in data["seeds_by_locale"].items()),
        "  multi-party seeds: "
        + ", ".join(f"{k} {v}" for k, v in data["multi_party_seeds_by_locale"].items()),
        f"  {data['personas']} personas ({data['worst_case_personas']} worst-case): "
        + ", ".join(f"{k} {v}" for k, v in data["personas_by_locale"].items())
        + f"; {data['fixed_characters']} seeds with a fixed character",
        f"  scripted variants (behaviour levels >= 2): {data['scripted_variants']}, each checked against "
        "the review rules",
        "  seeds per metric: " + ", ".join(f"{k} {v}" for k, v in data["seeds_by_metric"].items()),
        "  suites:",
    ]
    emo = data.get("emotion_labels")
    turn_layer = (
        [f"  turn labels {emo['version']}: {emo['user']} user, {emo['bot']} bot, "
         f"{emo['strategies']} strategies; lexicon phrases "
         + ", ".join(f"{loc} {sum(v.values())}" for loc, v in data["lexicon_entries"].items())]
        if emo else []
    )
    for sid, s in data["suites"].items():
        lines.append(f"    {sid}: {s['seeds']} seeds, {s['conversations']} conversations x {s['runs']} runs, "
                     f"{s['items']} tests (metrics {s['metrics']}, personas {s['personas']})")
    at = lines.index("  suites:")
    lines[at:at] = turn_layer
    lines += _coverage_table(data["pairing_coverage"])
    lines += [f"note: {n}" for n in printed_problems(notes, "note", "")]
    return "\n".join(lines)


def run(args: argparse.Namespace) -> int:
    """Validate; print the summary on stdout (exit 0) or every problem on stderr (exit 2)."""
    with gc_paused():
        return _validate(args)


def _validate(args: argparse.Namespace) -> int:
    from empath_gate.settings.load import load_settings

    pyproject = Path.cwd() / "pyproject.toml"
    load_settings(pyproject=pyproject)  # the input limits: [tool.empath-gate] < EMPATH_* (as every command)
    layers: tuple[Path, ...] = tuple(args.suites) if args.suites else pyproject_suites_dirs(pyproject)
    try:
        instrument = load_instrument(layers, args.thresholds, args.waivers)
    except SuiteError as exc:
        _report(exc.problems, args.format)
        return EXIT_INVALID
    coverage = coverage_problems(instrument, min_seeds_per_metric=args.min_seeds_per_metric,
                                 min_locale_share=MIN_LOCALE_SHARE)
    checklist = _checklist()
    review = [] if checklist is None else review_problems(instrument, checklist=checklist)
    notes: list[str] = []
    if (coverage or review) and not layers:
        _report([f"coverage: {c}" for c in coverage] + [f"review: {r}" for r in review], args.format)
        return EXIT_INVALID
    notes = [f"coverage: {c}" for c in coverage] + [f"review: {r}" for r in review]
    notes += [f"review: {n}" for n in unreviewed_notes(instrument.seeds)]
    llm_only = [s.id for s in instrument.seeds if s.auditor == "llm"]
    if llm_only:
        notes.append(f"auditor: {len(llm_only)} seed(s) have no script and run only with an LLM auditor "
                     "(offline, with the scripted auditor, their tests are skipped)")
    data = summary(instrument)
    notes += _unspoken_notes(data)
    if args.format == "json":
        print(json.dumps({**data, "notes": notes}, ensure_ascii=False, indent=2))
        for n in printed_problems(notes, "note", " (the JSON's notes list all)"):
            print(f"note: {n}", file=sys.stderr)
    else:
        print(_text(data, notes))
    return EXIT_OK


def _coverage_table(coverage: dict[str, list[dict[str, Any]]]) -> list[str]:
    """The behaviour coverage table of each paired suite: per seed, the cooperative persona, the
    number of distinct worst-case profiles and, per behaviour, the profiles playing it at
    level >= 2."""
    short = {b: "".join(w[0] for w in b.split("_")) for b in BEHAVIOURS}
    out: list[str] = []
    for sid, rows in coverage.items():
        out.append(f"  behaviour coverage of {sid} (profiles at level >= 2 per behaviour; "
                   + ", ".join(f"{v} = {k}" for k, v in short.items()) + "):")
        heads = " ".join(f"{v:>3}" for v in short.values())
        out.append(f"    seed | cooperative | profiles | {heads} | ok")
        for r in rows:
            cells = " ".join(f"{r['hard'][b]:>3}" for b in BEHAVIOURS)
            out.append(f"    {r['seed_id']} | {r['cooperative'] or '-'} | {r['profiles']} | {cells} | "
                       + ("yes" if r["covered"] else "no"))
    return out


def _unspoken_notes(data: dict[str, Any]) -> list[str]:
    """One note per suite that selects seeds no persona of its selector may speak."""
    out = []
    for sid, ids in data["unspoken_seeds"].items():
        if ids:
            out.append(f"identity: suite {sid!r} selects {len(ids)} seed(s) that none of its personas "
                       f"may speak, so it runs without them: {', '.join(ids)}")
    return out


def _checklist() -> str | None:
    """The checklist version of the shipped REVIEW.md; None when it is absent (then the seed
    review rules are not applied: an instrument without a checklist has nothing to review against)."""
    review = loader.shipped_paths()[0] / "REVIEW.md"  # looked up now: tests replace it
    return checklist_version(review.read_text(encoding="utf-8")) if review.is_file() else None


def _report(problems: list[str], fmt: str) -> None:
    """Every problem as one JSON object (``--format json``), else the first 50, on stderr."""
    n = len(problems)
    if fmt == "json":
        doc = {"valid": False, "problems": problems}
        print(json.dumps(doc, ensure_ascii=False, indent=2), file=sys.stderr)
        return
    print(f"empath-gate validate: {n} problem{'s' if n != 1 else ''} found", file=sys.stderr)
    for p in printed_problems(problems):
        print(p, file=sys.stderr)
