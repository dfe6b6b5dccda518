"""Merging the results files of the shards of one plan into the results of the whole plan.

Each file must come from the same plan (``plan_id``), instrument version, run count, judge
model, rubric and template, must hold transcripts no other file holds, and, when the files are
shards ``K/N``, all ``N`` shards must be there (:func:`check_shards`). The union is evaluated by
the one gating path (:func:`empath_gate.results.evaluate.evaluate`) over the plan rebuilt from
the metadata, so statistics, regressions and decisions are those of an unsharded run.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from empath_gate.errors import ConfigError
from empath_gate.plan.build import parse_shard
from empath_gate.plan.rebuild import rebuild_plan
from empath_gate.results.evaluate import evaluate

if TYPE_CHECKING:
    from empath_gate.instrument.models import Instrument
    from empath_gate.results.model import LayerInfo, Results, ResultsMetadata, RunRecord


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
    from empath_gate.results.metadata import role_totals

    metas = [r.metadata for _, r in named]
    first = metas[0]
    cost = first.cost.model_copy(
        update={
            "known_usd": round(sum(m.cost.known_usd for m in metas), 6),
            "calls": sum(m.cost.calls for m in metas),
            "unpriced_calls": sum(m.cost.unpriced_calls for m in metas),
            "cache_hits": sum(m.cost.cache_hits for m in metas),
            "by_role": role_totals([rec for _, r in named for rec in r.records]),
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
    layers: Sequence[LayerInfo] = (),
) -> Results:
    """Check (:func:`check_shards`) and merge ``(path, results)`` pairs into the results of the
    whole plan (module docstring). Raises ConfigError for incompatible files."""
    if not named:
        raise ConfigError("give the shard results files to merge")
    labelled = [(str(path), res) for path, res in named]
    check_shards(labelled)
    first_name, first = labelled[0]
    plan = rebuild_plan(first.metadata, instrument, source=first_name, whole=True)
    records = [r for path, res in named for r in _rebased(res.records, path, output)]
    return evaluate(records, plan=plan, instrument=instrument, metadata=merged_metadata(labelled),
                    baseline=baseline, fail_on=first.metadata.fail_on, layers=layers)
