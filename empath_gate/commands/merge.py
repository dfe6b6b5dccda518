"""``empath-gate merge``: merge the results files of the shards of one plan into one.

Usage::

    empath-gate merge a.json b.json ... -o results.json [--baseline B] [--suites-dir D]...
                      [--thresholds P] [--waivers P]

Each file must come from the same plan (``plan_id``), instrument version, run count, judge
model and judge template (hash and version), must hold transcripts no other file holds, and,
when the files are shards ``K/N``, all ``N`` shards must be there. Any violation is refused
(exit 2) naming the files (and the missing ``K``).

The merge re-evaluates the union: the plan is rebuilt with
:func:`~empath_gate.plan.build_plan` from the metadata's suites and run count (it must give the
same ``plan_id``: the same instrument files as the run, hence ``--suites-dir``/``--thresholds``/
``--waivers`` and the usual ``[tool.empath-gate]`` / ``EMPATH_*`` settings), then the records
go through :func:`~empath_gate.pipeline.evaluate`, so the statistics, regressions (against
``--baseline``, when given) and decisions are those of an unsharded run. Record transcript
paths are rewritten relative to the output file's folder. Writes the merged file (schema
checked), ``diff.md`` and ``report.html`` beside it; exit 0.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from empath_gate.errors import ConfigError

if TYPE_CHECKING:
    from empath_gate.analysis.regression import RegressionReport
    from empath_gate.instrument.models import Instrument
    from empath_gate.plan import Plan
    from empath_gate.results import Results, ResultsMetadata, RunRecord


def add_instrument_arguments(parser: argparse.ArgumentParser) -> None:
    """Options choosing the instrument files (as for ``run``): suites dirs, thresholds, waivers."""
    parser.add_argument("--suites-dir", action="append", type=Path, default=None, metavar="DIR",
                        help="team suites directory the run used (repeatable)")
    parser.add_argument("--thresholds", type=Path, default=None, metavar="PATH",
                        help="thresholds.yaml the run used (default: the settings' or the shipped one)")
    parser.add_argument("--waivers", type=Path, default=None, metavar="PATH",
                        help="waivers.yaml (default: the settings' or ./waivers.yaml if present)")
    parser.add_argument("--pyproject", type=Path, default=Path("pyproject.toml"), metavar="PATH",
                        help="pyproject.toml holding [tool.empath-gate] (default ./pyproject.toml)")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Options of ``empath-gate merge``."""
    parser.add_argument("files", nargs="+", type=Path, metavar="RESULTS", help="shard results files")
    parser.add_argument("-o", "--output", type=Path, required=True, metavar="PATH",
                        help="where to write the merged results.json")
    parser.add_argument("--baseline", type=Path, default=None, metavar="PATH",
                        help="baseline results.json to compare the merged result with")
    add_instrument_arguments(parser)


def load_instrument_for(args: argparse.Namespace) -> tuple[Instrument, Path | None]:
    """The instrument as a run with these settings would load it (``[tool.empath-gate]`` <
    ``EMPATH_*`` < ``--suites-dir``/``--thresholds``/``--waivers``; ``./waivers.yaml`` when no
    waivers file is set), and the baseline path from the settings. Raises ConfigError/SuiteError
    (an expired waiver is a SuiteError)."""
    from empath_gate.config import load_settings
    from empath_gate.instrument.loader import load_instrument

    overrides: dict[str, object] = {
        "suites_dirs": list(args.suites_dir) if args.suites_dir else None,
        "thresholds": args.thresholds,
        "waivers": args.waivers,
    }
    settings = load_settings(pyproject=args.pyproject, overrides=overrides)
    waivers = settings.waivers
    if waivers is None and Path("waivers.yaml").is_file():
        waivers = Path("waivers.yaml")
    instrument = load_instrument(
        extra_dirs=settings.suites_dirs, thresholds_path=settings.thresholds, waivers_path=waivers
    )
    return instrument, settings.baseline


def rebuild_plan(metadata: ResultsMetadata, instrument: Instrument, *, source: str) -> Plan:
    """The plan a results file was made from (its shard, when it is one), rebuilt from its
    metadata's suites and run count. Raises ConfigError naming ``source`` when these
    instrument files give another plan (another instrument version, other suites or seeds)."""
    from empath_gate.plan import build_plan, offline_subset, parse_shard, shard

    if metadata.instrument_version != instrument.version:
        raise ConfigError(
            f"{source}: made with instrument version {metadata.instrument_version}, but the instrument "
            f"files here are version {instrument.version}; use the same empath-gate version and suites"
        )
    try:
        plan = build_plan(instrument, list(metadata.suites), runs=metadata.runs)
        if metadata.offline_subset:
            plan = offline_subset(plan, instrument, metadata.offline_subset)
    except ConfigError as exc:
        raise ConfigError(
            f"{source}: cannot rebuild its plan: {exc}; give the suites files the run used "
            "(--suites-dir, [tool.empath-gate] suites_dirs)"
        ) from None
    if plan.plan_id != metadata.plan_id:
        raise ConfigError(
            f"{source}: its plan ({metadata.plan_id[:12]}) is not the plan these instrument files give "
            f"for suites {', '.join(metadata.suites)} x {metadata.runs} runs ({plan.plan_id[:12]}); "
            "use the same suites files as the run (--suites-dir, [tool.empath-gate] suites_dirs)"
        )
    if metadata.shard:
        spec = parse_shard(metadata.shard)
        plan = shard(plan, spec.index, spec.count)
    return plan


def reevaluate(
    results: Results,
    instrument: Instrument,
    *,
    plan: Plan,
    records: Sequence[RunRecord] | None = None,
    metadata: ResultsMetadata | None = None,
    baseline: Results | None = None,
    regression: RegressionReport | None = None,
    fail_on: str | None = None,
) -> Results:
    """Statistics, regression and decisions recomputed from records (default: the file's) over
    ``plan`` with ``instrument``'s thresholds and waivers: :func:`empath_gate.pipeline.evaluate`,
    the function every run uses. ``baseline`` recomputes the comparison; otherwise
    ``regression`` (e.g. the file's own) gates as it is. ``fail_on`` defaults to the file's."""
    from empath_gate.pipeline import evaluate

    md = metadata or results.metadata
    chosen = fail_on or md.fail_on
    md = md.model_copy(update={"fail_on": chosen})
    return evaluate(
        list(results.records if records is None else records),
        plan=plan,
        instrument=instrument,
        metadata=md,
        baseline=baseline,
        fail_on=chosen,
        regression=regression,
    )


def check_shards(named: Sequence[tuple[str, Results]]) -> None:
    """Refuse files that are not shards of one plan: differing plan id, instrument version, run
    count, judge model or judge template; a transcript in two files; a missing or repeated shard
    ``K`` when the shard count is known. Raises ConfigError naming the files."""
    first_name, first = named[0]
    fm = first.metadata
    keys = (
        ("plan_id", lambda m: m.plan_id),
        ("instrument version", lambda m: m.instrument_version),
        ("run count", lambda m: m.runs),
        ("judge model", lambda m: m.judge.model),
        ("judge template", lambda m: (m.judge.template_version, m.judge.template_hash)),
        ("judge rubric", lambda m: m.judge.rubric),
    )
    for name, res in named[1:]:
        for label, get in keys:
            a, b = get(fm), get(res.metadata)
            if a != b:
                raise ConfigError(
                    f"{first_name} and {name} differ in {label} ({a} vs {b}): they are not shards of the "
                    "same run; merge only the shards of one plan"
                )
    owner: dict[str, str] = {}
    for name, res in named:
        clash = sorted({r.transcript_id for r in res.records if r.transcript_id in owner})
        if clash:
            other = owner[clash[0]]
            shown = ", ".join(clash[:3]) + (f" and {len(clash) - 3} more" if len(clash) > 3 else "")
            raise ConfigError(
                f"{other} and {name} both hold transcripts {shown}: shards must not overlap "
                "(the same file twice, or an unsharded file among shards?)"
            )
        for r in res.records:
            owner[r.transcript_id] = name
    shards = [(name, res.metadata.shard) for name, res in named]
    if any(s is not None for _, s in shards):
        from empath_gate.plan import parse_shard

        unsharded = [name for name, s in shards if s is None]
        if unsharded:
            raise ConfigError(
                f"{', '.join(unsharded)}: not a shard, but merged with shards; merge shards only"
            )
        specs = {name: parse_shard(s) for name, s in shards if s is not None}
        counts = sorted({sp.count for sp in specs.values()})
        if len(counts) > 1:
            detail = ", ".join(f"{n} is {sp}" for n, sp in specs.items())
            raise ConfigError(f"the shards split the plan differently ({detail}); use one shard count")
        count = counts[0]
        seen: dict[int, str] = {}
        for name, sp in specs.items():
            if sp.index in seen:
                raise ConfigError(f"{seen[sp.index]} and {name} are both shard {sp}")
            seen[sp.index] = name
        missing = [k for k in range(1, count + 1) if k not in seen]
        if missing:
            raise ConfigError(
                f"missing shard(s) {', '.join(f'{k}/{count}' for k in missing)} of {count}: "
                f"got {', '.join(f'{n} ({specs[n]})' for n in specs)}; merge all {count} shards"
            )


def merged_metadata(named: Sequence[tuple[str, Results]]) -> ResultsMetadata:
    """The first file's metadata for the whole plan: no shard, the earliest start and latest
    end, costs, calls and auditor counts summed, the budget exhausted if it was in any shard."""
    metas = [r.metadata for _, r in named]
    first = metas[0]
    cost = first.cost.model_copy(
        update={
            "known_usd": round(sum(m.cost.known_usd for m in metas), 6),
            "calls": sum(m.cost.calls for m in metas),
            "unpriced_calls": sum(m.cost.unpriced_calls for m in metas),
            "budget_exhausted": any(m.cost.budget_exhausted for m in metas),
        }
    )
    ends = [m.ended_at for m in metas if m.ended_at]
    return first.model_copy(
        update={
            "shard": None,
            "started_at": min(m.started_at for m in metas),
            "ended_at": max(ends) if ends else None,
            "cost": cost,
            "auditor_fallbacks": sum(m.auditor_fallbacks for m in metas),
            "auditor_refusals": sum(m.auditor_refusals for m in metas),
        }
    )


def _rebased(records: Sequence[RunRecord], source: Path, output: Path) -> list[RunRecord]:
    """Records with transcript paths relative to ``output``'s folder (absolute when no relative
    path exists, e.g. another drive)."""
    src = source.resolve().parent
    dst = output.resolve().parent
    out = []
    for r in records:
        if r.transcript_path is None:
            out.append(r)
            continue
        p = Path(r.transcript_path)
        full = p if p.is_absolute() else src / p
        try:
            new = os.path.relpath(full, dst)
        except ValueError:
            new = str(full)
        out.append(r.model_copy(update={"transcript_path": Path(new).as_posix()}))
    return out


def merge_results(
    named: Sequence[tuple[Path, Results]],
    instrument: Instrument,
    *,
    output: Path,
    baseline: Results | None = None,
) -> Results:
    """Check (:func:`check_shards`) and merge ``(path, results)`` pairs into the results of the
    whole plan (module docstring). Raises ConfigError for incompatible files."""
    if not named:
        raise ConfigError("give the shard results files to merge")
    labelled = [(str(path), res) for path, res in named]
    check_shards(labelled)
    first_name, first = labelled[0]
    plan = rebuild_plan(first.metadata.model_copy(update={"shard": None}), instrument, source=first_name)
    records = [r for path, res in named for r in _rebased(res.records, path, output)]
    return reevaluate(first, instrument, plan=plan, records=records, metadata=merged_metadata(labelled),
                      baseline=baseline)


def run(args: argparse.Namespace) -> int:
    """Merge, write the merged file and its reports, print the summary; exit 0."""
    from empath_gate.pipeline import write_artifacts
    from empath_gate.report.terminal import render_terminal
    from empath_gate.results import read_results

    named = [(Path(f), read_results(Path(f))) for f in args.files]
    instrument, settings_baseline = load_instrument_for(args)
    baseline_path = args.baseline or settings_baseline
    baseline = read_results(baseline_path) if baseline_path is not None else None
    merged = merge_results(named, instrument, output=args.output, baseline=baseline)
    compared = [str(path) for path, res in named if res.regressions is not None]
    if baseline is None and compared:
        print(f"empath-gate merge: {', '.join(compared)} were compared with a baseline, but no --baseline "
              "was given: the merged file holds no comparison (pass --baseline to compare the union)",
              file=sys.stderr)
    written = write_artifacts(merged, args.output, baseline=baseline)
    print(render_terminal(merged, baseline=baseline), end="")
    for path in written:
        print(f"empath-gate merge: wrote {path}")
    return 0
