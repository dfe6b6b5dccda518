"""``empath-gate rejudge``: re-score the stored transcripts of a results file, without
regenerating a single conversation.

Usage::

    empath-gate rejudge RESULTS --judge MODEL [--rubric standard|strict]
                        [--granularity transcript|metric] [--times K] [--api-base URL]
                        -o OUT [--pyproject PATH] [--no-cache]

* **Another judge or rubric** (``--judge``, ``--rubric``, ``--granularity``): every completed
  transcript of RESULTS is judged once (re-judge index 0) on the metrics its plan asks for; the
  output's records carry only these new verdicts.
* **The same judge K more times** (``--times K``): when judge model, rubric, granularity and
  judge template hash equal those of RESULTS, the original first judgings are kept (index 0)
  and each transcript is judged K more times (indices 1..K); with another judge, indices
  0..K are all judged anew, so a file never mixes two judges. ``--judge`` defaults to the judge
  of RESULTS when ``--times`` is given.

Each (transcript, re-judge index) has its own cache key and judge seed
(:func:`empath_gate.judging.llm_judge.judge_transcript`), so running the same command again
answers from the cache and K re-judgings are K independent samples. The target and the
auditor are never called: transcripts are read from ``RunRecord.transcript_path`` (relative to
the folder of RESULTS), and each must still hash to the record's ``content_hash``.

The other judge settings (temperature, max tokens, retries, cache folder, ``judge_calibration``,
``strict_families``) come from ``[tool.empath-gate]`` in ``--pyproject`` and the ``EMPATH_*``
environment, as for ``run``; the instrument (``suites_dirs``, ``thresholds``, ``waivers``)
likewise, and it must rebuild the plan of RESULTS (same ``plan_id``), else the command stops.

Output OUT: a results file of the same schema: the records of RESULTS with the new verdicts
(transcript paths rewritten relative to OUT's folder), ``metadata.judge`` updated (model,
rubric, granularity, template version and hash, calibration status), the cells, metric
statistics and gate decisions re-evaluated by :func:`empath_gate.pipeline.evaluate` on the
first judgings (re-judgings never enter a cell), and ``reliability`` recomputed
(:func:`empath_gate.analysis.reliability.reliability_from_records`, with the variance split when
K >= 1). The baseline comparison of RESULTS is not carried over (it was measured with the
other judge; run ``empath-gate diff`` again). Cost in the metadata stays that of the original
run. ``agreement RESULTS OUT`` and ``calibrate --gold G --results OUT`` read OUT.

Exit status: 0 written; 2 usage or configuration error (missing or altered transcript, a plan
that no longer matches, no judge model); 3 when the re-judged gate reports infrastructure
problems (e.g. the judge failed on too many metrics; OUT is still written). The gate outcome of
the new scores is in OUT (``empath-gate gate OUT`` gives its exit status).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from empath_gate.errors import ConfigError

if TYPE_CHECKING:
    from empath_gate.config import Settings
    from empath_gate.conversation.transcript import Transcript
    from empath_gate.instrument.models import Instrument
    from empath_gate.judging.verdict import MetricVerdict
    from empath_gate.plan import Plan
    from empath_gate.results import Results, RunRecord

EXIT_OK = 0
EXIT_USAGE = 2
EXIT_INFRA = 3
MAX_TIMES = 50
"""Most re-judgings per transcript in one command (the run-count limit of the settings)."""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Options of ``empath-gate rejudge``."""
    parser.add_argument("results", type=Path, metavar="RESULTS", help="the results file to re-judge")
    parser.add_argument("--judge", default=None, metavar="MODEL",
                        help="judge model (litellm string); default with --times: the judge of RESULTS")
    parser.add_argument("--rubric", choices=("standard", "strict"), default=None,
                        help="judge rubric (default: the judge_rubric setting, strict)")
    parser.add_argument("--granularity", choices=("transcript", "metric"), default=None,
                        help="one judge call per transcript or per metric (default: the setting)")
    parser.add_argument("--times", type=int, default=None, metavar="K",
                        help="judge every transcript K more times (re-judge indices 1..K)")
    parser.add_argument("--api-base", default=None, metavar="URL", help="the judge's API base URL")
    parser.add_argument("-o", "--output", type=Path, required=True, metavar="OUT",
                        help="where to write the re-judged results file")
    parser.add_argument("--pyproject", type=Path, default=Path("pyproject.toml"), metavar="PATH",
                        help="pyproject.toml holding [tool.empath-gate] (default ./pyproject.toml)")
    parser.add_argument("--no-cache", action="store_true", help="do not read or write the model cache")


@dataclass(frozen=True)
class RejudgePlan:
    """What a rejudge does: ``indices`` are the re-judge indices judged anew (``(0,)``,
    ``(1..K)`` or ``(0..K)``); ``keep_first``: the original first judgings are kept."""

    indices: tuple[int, ...]
    keep_first: bool


def rejudge_plan(results: Results, settings: Settings, times: int | None) -> RejudgePlan:
    """Which indices to judge (module docstring): keep the first judgings only with ``times``
    and the very same judge (model, rubric, granularity, template hash)."""
    from empath_gate.judging.llm_judge import judge_template_hash

    j = results.metadata.judge
    same = (
        j.model == settings.judge.model
        and j.rubric == settings.judge_rubric
        and j.granularity == settings.judge_granularity
        and j.template_hash == judge_template_hash()
    )
    if times is None:
        return RejudgePlan(indices=(0,), keep_first=False)
    if same:
        return RejudgePlan(indices=tuple(range(1, times + 1)), keep_first=True)
    return RejudgePlan(indices=tuple(range(times + 1)), keep_first=False)


def rebuild_plan(results: Results, instrument: Instrument) -> Plan:
    """The plan of ``results`` rebuilt from ``metadata.suites``, ``runs`` and ``shard``.
    Raises ConfigError when its ``plan_id`` differs (another instrument or selection)."""
    from empath_gate.plan import build_plan, offline_subset, parse_shard, shard

    md = results.metadata
    plan = build_plan(instrument, list(md.suites), runs=md.runs)
    if md.offline_subset:
        plan = offline_subset(plan, instrument, md.offline_subset)
    if md.shard:
        spec = parse_shard(md.shard)
        plan = shard(plan, spec.index, spec.count)
    if plan.plan_id != md.plan_id:
        raise ConfigError(
            f"the plan of these results (suites {', '.join(md.suites)}, {md.runs} runs, instrument "
            f"{md.instrument_version}) does not match the instrument loaded now (instrument "
            f"{instrument.version}): plan id {md.plan_id[:12]}… vs {plan.plan_id[:12]}…; re-judge with "
            "the instrument that produced them (same empath-gate version and suites_dirs)"
        )
    return plan


def load_transcript(record: RunRecord, results_dir: Path) -> Transcript:
    """The stored transcript of ``record``, checked against its id and content hash.
    Raises ConfigError naming the file when it is missing, unreadable or altered."""
    from empath_gate.conversation.engine import read_transcript
    from empath_gate.runner import content_hash

    if record.transcript_path is None:
        raise ConfigError(f"{record.transcript_id}: the results record no transcript path; re-run the suite")
    path = Path(record.transcript_path)
    if not path.is_absolute():
        path = results_dir / path
    try:
        transcript = read_transcript(path)
    except FileNotFoundError as exc:
        raise ConfigError(
            f"{path}: transcript of {record.transcript_id} not found; keep the transcripts folder next "
            "to the results file"
        ) from exc
    except (OSError, ValueError) as exc:
        raise ConfigError(f"{path}: cannot read the transcript of {record.transcript_id}: {exc}") from exc
    if transcript.transcript_id != record.transcript_id:
        raise ConfigError(f"{path}: holds transcript {transcript.transcript_id}, not {record.transcript_id}")
    if record.content_hash is not None and content_hash(transcript) != record.content_hash:
        raise ConfigError(
            f"{path}: the transcript changed since it was judged (its content hash differs from the "
            "results record); re-run the suite instead of re-judging an edited transcript"
        )
    return transcript


def _relative(path: Path, folder: Path) -> str:
    try:
        return os.path.relpath(path.resolve(), folder.resolve())
    except ValueError:  # another drive on Windows
        return str(path.resolve())


@dataclass
class JudgeTally:
    """Judgings made and judge failures among them, and the reply cache's hits and misses."""

    judgings: int = 0
    failures: int = 0
    cache_hits: int = 0
    cache_misses: int = 0


async def _judge_records(
    work: Sequence[tuple[int, Transcript]],
    indices: Sequence[int],
    plan: Plan,
    instrument: Instrument,
    settings: Settings,
    tally: JudgeTally,
) -> dict[tuple[int, int], list[MetricVerdict]]:
    from empath_gate.judging.llm_judge import judge_transcript
    from empath_gate.llm.cache import Cache

    cache = Cache(settings.cache_dir, mode=settings.cache_mode) if settings.cache_mode != "off" else None
    sem = asyncio.Semaphore(max(1, settings.judge.concurrency))
    metrics_for = plan.metrics_for()

    async def one(pos: int, t: Transcript, k: int) -> tuple[tuple[int, int], list[MetricVerdict]]:
        async with sem:
            vs = await judge_transcript(
                t, instrument.seed(t.seed_id), list(metrics_for[t.conversation_id]),
                instrument=instrument, settings=settings, cache=cache, rejudge=k,
            )
        return (pos, k), vs

    done = await asyncio.gather(*(one(pos, t, k) for pos, t in work for k in indices))
    out = dict(done)
    tally.judgings += sum(len(v) for v in out.values())
    tally.failures += sum(1 for v in out.values() for x in v if x.status == "judge_failure")
    if cache is not None:
        tally.cache_hits += cache.hits
        tally.cache_misses += cache.misses
    return out


def rejudge_results(
    results: Results,
    *,
    results_dir: Path,
    out_dir: Path,
    settings: Settings,
    instrument: Instrument,
    times: int | None = None,
    tally: JudgeTally | None = None,
) -> Results:
    """Re-judge the transcripts of ``results`` (module docstring) and re-evaluate.

    ``results_dir``: the folder transcript paths are relative to; ``out_dir``: the folder the
    output will be written to (paths are rewritten relative to it); ``settings.judge`` and
    ``judge_rubric``/``judge_granularity`` choose the judge; ``times``: K re-judgings (None: one
    judging by the given judge). ``tally`` (optional) receives the counts. Raises ConfigError
    (no judge model, a plan mismatch, a missing or altered transcript) and whatever
    ``strict_families`` raises; judge failures are verdicts, never exceptions.
    """
    from empath_gate.calibration_status import calibration_for
    from empath_gate.judging.llm_judge import (
        JUDGE_TEMPLATE_VERSION,
        JudgeHygieneWarning,
        judge_template_hash,
    )
    from empath_gate.pipeline import evaluate
    from empath_gate.results import JudgeInfo

    if not settings.judge.model:
        raise ConfigError("no judge model: pass --judge MODEL (or set judge_model / EMPATH_JUDGE_MODEL)")
    if times is not None and not 1 <= times <= MAX_TIMES:
        raise ConfigError(f"--times must be between 1 and {MAX_TIMES} (got {times})")
    tally = tally if tally is not None else JudgeTally()
    plan = rebuild_plan(results, instrument)
    how = rejudge_plan(results, settings, times)
    records = list(results.records)
    work = [
        (pos, load_transcript(r, results_dir)) for pos, r in enumerate(records) if r.status == "complete"
    ]
    with warnings.catch_warnings():  # hygiene was reported once by the caller
        warnings.simplefilter("ignore", JudgeHygieneWarning)
        judged = asyncio.run(_judge_records(work, how.indices, plan, instrument, settings, tally))
    new_records: list[RunRecord] = []
    for pos, r in enumerate(records):
        verdicts: list[MetricVerdict] = []
        if how.keep_first:
            verdicts.extend(v for v in r.verdicts if v.rejudge == 0)
        for k in how.indices:
            verdicts.extend(judged.get((pos, k), ()))
        update: dict[str, object] = {"verdicts": tuple(verdicts)}
        if r.transcript_path is not None:
            p = Path(r.transcript_path)
            update["transcript_path"] = _relative(p if p.is_absolute() else results_dir / p, out_dir)
        new_records.append(r.model_copy(update=update))
    md = results.metadata
    judge = JudgeInfo(
        model=settings.judge.model,
        rubric=settings.judge_rubric,
        granularity=settings.judge_granularity,
        template_version=JUDGE_TEMPLATE_VERSION,
        template_hash=judge_template_hash(),
        calibration=calibration_for(settings.judge_calibration, settings.judge.model, settings.judge_rubric),
    )
    metadata = md.model_copy(
        update={"judge": judge, "offline_roles": tuple(r for r in md.offline_roles if r != "judge")}
    )
    return evaluate(new_records, plan=plan, instrument=instrument, metadata=metadata, fail_on=md.fail_on)


def _settings(args: argparse.Namespace, results: Results) -> Settings:
    from empath_gate.config import load_settings

    md = results.metadata
    judge = args.judge or (md.judge.model if args.times is not None else None)
    if not judge:
        raise ConfigError("pass --judge MODEL (the judge to re-score with); without --times it is required")
    overrides: dict[str, object] = {
        "judge_model": judge,
        "judge_rubric": args.rubric,
        "judge_granularity": args.granularity,
        "judge_api_base": args.api_base,
    }
    if args.no_cache:
        overrides["cache_mode"] = "off"
    settings = load_settings(pyproject=args.pyproject, overrides=overrides)
    auditor = None if md.auditor == "scripted" else md.auditor
    # judge hygiene is checked against the roles that produced the transcripts
    return settings.model_copy(
        update={"target": md.target, "auditor": settings.auditor.model_copy(update={"model": auditor})}
    )


def _instrument(settings: Settings) -> Instrument:
    from empath_gate.instrument.loader import load_instrument

    waivers = settings.waivers
    if waivers is None and Path("waivers.yaml").is_file():
        waivers = Path("waivers.yaml")
    return load_instrument(
        extra_dirs=settings.suites_dirs, thresholds_path=settings.thresholds, waivers_path=waivers
    )


def _split_lines(results: Results) -> list[str]:
    rel = results.reliability or {}
    entries = [e for e in rel.get("metrics", []) if e.get("rejudged_transcripts")]
    if not entries:
        return []
    lines = ["variance split (points²): metric, σ² judge, Var(run means), σ² generation"]
    for e in entries:
        def f(x: object) -> str:
            return "n/a" if not isinstance(x, (int, float)) else f"{x:.3f}"

        gen = f(e.get("generation_variance")) + (" (floored at 0)" if e.get("generation_floored") else "")
        lines.append(
            f"  {e['metric_id']}: {f(e.get('judge_variance'))}, {f(e.get('run_mean_variance'))}, {gen}"
        )
    return lines


def run(args: argparse.Namespace) -> int:
    """Re-judge, write OUT and print a summary; returns the exit status (module docstring)."""
    from empath_gate.judging.llm_judge import check_judge_hygiene
    from empath_gate.results import read_results, write_results

    if args.times is not None and not 1 <= args.times <= MAX_TIMES:
        print(f"empath-gate rejudge: --times must be between 1 and {MAX_TIMES}", file=sys.stderr)
        return EXIT_USAGE
    results = read_results(args.results)
    settings = _settings(args, results)
    for problem in check_judge_hygiene(settings):
        print(f"empath-gate rejudge: warning: {problem}", file=sys.stderr)
    instrument = _instrument(settings)
    tally = JudgeTally()
    out = rejudge_results(
        results,
        results_dir=args.results.parent,
        out_dir=args.output.parent,
        settings=settings,
        instrument=instrument,
        times=args.times,
        tally=tally,
    )
    write_results(out, args.output)
    how = rejudge_plan(results, settings, args.times)
    n = sum(1 for r in out.records if r.status == "complete")
    kept = " (first judgings kept)" if how.keep_first else ""
    which = (
        f"re-judge index {how.indices[0]}"
        if len(how.indices) == 1
        else f"re-judge indices {how.indices[0]}..{how.indices[-1]}"
    )
    print(
        f"empath-gate rejudge: {n} transcripts judged by {settings.judge.model} ({settings.judge_rubric} "
        f"rubric), {which}{kept}: {tally.judgings} verdicts, "
        f"{tally.failures} judge failures; cache {tally.cache_hits} hits, {tally.cache_misses} misses"
    )
    for line in _split_lines(out):
        print(line)
    c = out.summary.counts
    print(
        f"gate on the new scores: {c.get('passed', 0)} passed, {c.get('failed', 0)} failed, "
        f"{c.get('skipped', 0)} skipped, {c.get('error', 0)} errors"
    )
    print(f"empath-gate rejudge: wrote {args.output}")
    if out.summary.infrastructure_reasons:
        for reason in out.summary.infrastructure_reasons:
            print(f"empath-gate rejudge: infrastructure: {reason}", file=sys.stderr)
        return EXIT_INFRA
    return EXIT_OK
