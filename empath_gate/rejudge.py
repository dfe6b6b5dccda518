"""Re-judging stored transcripts: another judge or rubric, or the same judge K more times,
without calling the target or the auditor (``empath-gate rejudge`` is its front-end; the module
docstring of :mod:`empath_gate.commands.rejudge` describes the behaviour)."""

from __future__ import annotations

import os
import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from empath_gate.errors import ConfigError

if TYPE_CHECKING:
    from empath_gate.conversation.transcript import Transcript
    from empath_gate.instrument.models import Instrument
    from empath_gate.judging.verdict import MetricVerdict
    from empath_gate.results.model import LayerInfo, Results, ResultsMetadata, RunRecord
    from empath_gate.settings.model import Settings

MAX_TIMES = 50
"""Most re-judgings per transcript in one command (the run-count limit of the settings)."""


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


def _rejudged_metadata(results: Results, settings: Settings) -> ResultsMetadata:
    """The metadata of ``results`` with the judge the re-judging used (model, rubric,
    granularity, template, calibration status); the judge is no longer an offline role."""
    from empath_gate.calibration.status import calibration_for
    from empath_gate.judging.llm_judge import JUDGE_TEMPLATE_VERSION, judge_template_hash
    from empath_gate.results.model import JudgeInfo

    md = results.metadata
    judge = JudgeInfo(
        model=settings.judge.model,
        rubric=settings.judge_rubric,
        granularity=settings.judge_granularity,
        template_version=JUDGE_TEMPLATE_VERSION,
        template_hash=judge_template_hash(),
        calibration=calibration_for(settings.judge_calibration, settings.judge.model, settings.judge_rubric),
    )
    offline = tuple(r for r in md.offline_roles if r != "judge")
    from empath_gate.results.suite_hash import judge_template_part

    part = judge_template_part(settings.judge_rubric)
    hashes = {s: {**h, "judge_template": part} for s, h in md.suite_hashes.items()}
    return md.model_copy(update={"judge": judge, "offline_roles": offline, "suite_hashes": hashes})


def rejudge_results(
    results: Results,
    *,
    results_dir: Path,
    out_dir: Path,
    settings: Settings,
    instrument: Instrument,
    times: int | None = None,
    tally: JudgeTally | None = None,
    layers: Sequence[LayerInfo] = (),
) -> Results:
    """Re-judge the transcripts of ``results`` (module docstring) and re-evaluate.

    ``results_dir``: the folder transcript paths are relative to; ``out_dir``: the folder the
    output will be written to (paths are rewritten relative to it); ``settings.judge`` and
    ``judge_rubric``/``judge_granularity`` choose the judge; ``times``: K re-judgings (None: one
    judging by the given judge). ``tally`` (optional) receives the counts. Raises ConfigError
    (no judge model, a plan mismatch, a missing or altered transcript) and whatever
    ``strict_families`` raises; judge failures are verdicts, never exceptions.
    """
    from empath_gate.judging.batch import JudgeJob, judge_batch, judge_cache
    from empath_gate.judging.llm_judge import (
        JudgeHygieneWarning,
    )
    from empath_gate.llm.loop import run_calls
    from empath_gate.plan.rebuild import rebuild_plan
    from empath_gate.results.evaluate import evaluate

    if not settings.judge.model:
        raise ConfigError("no judge model: pass --judge MODEL (or set judge_model / EMPATH_JUDGE_MODEL)")
    if times is not None and not 1 <= times <= MAX_TIMES:
        raise ConfigError(f"--times must be between 1 and {MAX_TIMES} (got {times})")
    tally = tally if tally is not None else JudgeTally()
    plan = rebuild_plan(results.metadata, instrument, source="the results to re-judge")
    how = rejudge_plan(results, settings, times)
    records = list(results.records)
    work = [(pos, load_transcript(r, results_dir)) for pos, r in enumerate(records) if r.status == "complete"]
    metrics_for = plan.metrics_for()
    keys = [(pos, k) for pos, _ in work for k in how.indices]
    jobs = [
        JudgeJob(t, tuple(metrics_for[t.conversation_id]), rejudge=k) for _, t in work for k in how.indices
    ]
    cache = judge_cache(settings)
    mode: Literal["scripted", "llm"] = "scripted" if results.metadata.auditor == "scripted" else "llm"
    with warnings.catch_warnings():  # hygiene was reported once by the caller
        warnings.simplefilter("ignore", JudgeHygieneWarning)
        batches = run_calls(
            judge_batch(jobs, instrument=instrument, settings=settings, mode=mode, cache=cache)
        )
    judged = dict(zip(keys, batches, strict=True))
    tally.judgings += sum(len(v) for v in batches)
    tally.failures += sum(1 for v in batches for x in v if x.status == "judge_failure")
    if cache is not None:
        tally.cache_hits += cache.hits
        tally.cache_misses += cache.misses
    from empath_gate.runner import risk_of, triage_of, user_speakers

    transcripts = dict(work)
    new_records: list[RunRecord] = []
    for pos, r in enumerate(records):
        verdicts: list[MetricVerdict] = []
        if how.keep_first:
            verdicts.extend(v for v in r.verdicts if v.rejudge == 0)
        for k in how.indices:
            verdicts.extend(judged.get((pos, k), ()))
        update: dict[str, object] = {"verdicts": tuple(verdicts)}
        if pos in transcripts and verdicts:  # the risk evidence with this judge's reported turns
            first = min(v.rejudge for v in verdicts)
            update["risk"] = risk_of(transcripts[pos], [v for v in verdicts if v.rejudge == first],
                                     instrument, mode)
            update["triage"] = triage_of(transcripts[pos], instrument,
                                         [v for v in verdicts if v.rejudge == first])
        if pos in transcripts:  # who wrote each user turn (a file written before speakers were recorded)
            update["speakers"] = user_speakers(transcripts[pos])
        if r.transcript_path is not None:
            p = Path(r.transcript_path)
            update["transcript_path"] = _relative(p if p.is_absolute() else results_dir / p, out_dir)
        new_records.append(r.model_copy(update=update))
    metadata = _rejudged_metadata(results, settings)
    return evaluate(
        new_records, plan=plan, instrument=instrument, metadata=metadata, fail_on=metadata.fail_on,
        layers=layers,
    )
