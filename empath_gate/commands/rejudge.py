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
statistics and gate decisions re-evaluated by :func:`empath_gate.results.evaluate.evaluate` on the
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
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from empath_gate.errors import ConfigError
from empath_gate.gate.exit import EXIT_INFRA, EXIT_PASS, EXIT_USAGE
from empath_gate.rejudge import MAX_TIMES, JudgeTally, rejudge_plan, rejudge_results

if TYPE_CHECKING:
    from empath_gate.results.model import Results
    from empath_gate.settings.model import Settings


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Options of ``empath-gate rejudge``: the option table's judge settings, ``--times`` and ``-o``."""
    from empath_gate.commands.options import add_setting_arguments

    parser.add_argument("results", type=Path, metavar="RESULTS", help="the results file to re-judge")
    parser.add_argument("--times", type=int, default=None, metavar="K",
                        help="judge every transcript K more times (re-judge indices 1..K)")
    parser.add_argument("-o", "--output", type=Path, required=True, metavar="OUT",
                        help="where to write the re-judged results file")
    add_setting_arguments(parser, "rejudge")


def _settings(args: argparse.Namespace, results: Results) -> Settings:
    from empath_gate.commands.options import given, load_command_settings

    md = results.metadata
    judge = given(args, "judge_model") or (md.judge.model if args.times is not None else None)
    if not judge:
        raise ConfigError("pass --judge MODEL (the judge to re-score with); without --times it is required")
    settings = load_command_settings(args, "rejudge", judge_model=judge)
    auditor = None if md.auditor == "scripted" else md.auditor
    # judge hygiene is checked against the roles that produced the transcripts
    return settings.model_copy(
        update={"target": md.target, "auditor": settings.auditor.model_copy(update={"model": auditor})}
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
    from empath_gate.results.io import read_results, write_results

    if args.times is not None and not 1 <= args.times <= MAX_TIMES:
        print(f"empath-gate rejudge: --times must be between 1 and {MAX_TIMES}", file=sys.stderr)
        return EXIT_USAGE
    results = read_results(args.results)
    settings = _settings(args, results)
    for problem in check_judge_hygiene(settings):
        print(f"empath-gate rejudge: warning: {problem}", file=sys.stderr)
    from empath_gate.run import load_run_instrument

    instrument, layers = load_run_instrument(settings)
    tally = JudgeTally()
    out = rejudge_results(
        results,
        results_dir=args.results.parent,
        out_dir=args.output.parent,
        settings=settings,
        instrument=instrument,
        times=args.times,
        tally=tally,
        layers=layers,
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
    return EXIT_PASS
