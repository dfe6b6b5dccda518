"""The library entry point: settings + instrument + selection -> records -> the results document.

Both front-ends call it: the pytest plugin (which spreads :func:`run_plan` over xdist workers)
and ``empath-gate run`` (which never imports pytest). In Python::

    from empath_gate import load_settings, prepare, run_plan, evaluate_run, write_run

    setup = prepare(load_settings(), ["smoke"])          # instrument, profile, plan, baseline
    records = run_plan(setup, progress=print)             # generate + judge (cache, budget)
    results = evaluate_run(setup, records)                # statistics, regression, gate
    write_run(setup, results)                             # results.json, diff.md, report.html

:func:`run_suites` does the four steps at once.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from empath_gate import __version__

if TYPE_CHECKING:
    from empath_gate.instrument.models import Instrument
    from empath_gate.plan.build import Plan
    from empath_gate.results.model import LayerInfo, Results, RunRecord
    from empath_gate.settings.model import Settings
    from empath_gate.settings.profile import Profile

Progress = Callable[[str], None]
"""Receives one human progress line at a time (``"12/48 transcripts, 3 cache hits …"``)."""


def _now_iso() -> str:
    """:func:`empath_gate.results.io.now_iso`, imported when a run starts (not with this module)."""
    from empath_gate.results.io import now_iso

    return now_iso()


@dataclass(frozen=True)
class RunSetup:
    """Everything a run needs before its first model call.

    ``settings``: after the offline profile (:attr:`profile` tells which roles fell back);
    ``plan``: the conversations x runs x tests to run (already sharded); ``baseline``: the
    results to compare with, or None; ``layers``: the team layers' content hashes;
    ``results_path``/``transcripts_dir``: where the run writes.
    """

    settings: Settings
    profile: Profile
    instrument: Instrument
    plan: Plan
    baseline: Results | None
    results_path: Path
    transcripts_dir: Path
    layers: tuple[LayerInfo, ...] = ()
    started_at: str = field(default_factory=_now_iso)


def waivers_path(settings: Settings) -> Path | None:
    """The waivers file of ``settings``, else ``./waivers.yaml`` when it exists, else None."""
    if settings.waivers is not None:
        return settings.waivers
    default = Path("waivers.yaml")
    return default if default.is_file() else None


def load_run_instrument(settings: Settings) -> tuple[Instrument, tuple[LayerInfo, ...]]:
    """The instrument with the team layers of ``settings`` (suites directories, thresholds,
    waivers) and those layers' content hashes. Raises ConfigError/SuiteError naming the file."""
    from empath_gate.instrument.loader import load_instrument

    waivers = waivers_path(settings)
    instrument = load_instrument(
        extra_dirs=settings.suites_dirs, thresholds_path=settings.thresholds, waivers_path=waivers
    )
    # imported once the instrument is read: the results package brings the statistics (scipy),
    # which a broken or hostile instrument file should not wait for
    from empath_gate.results.layers import team_layers

    return instrument, team_layers(settings.suites_dirs, settings.thresholds, waivers)


def prepare(
    settings: Settings, suites: Sequence[str], *, shard: str | None = None, project: Path | str | None = None
) -> RunSetup:
    """Load the instrument, apply the offline profile, build the plan (and its shard), read the
    baseline; a ``py:`` target imports from ``project`` (default: the working directory). Raises
    ConfigError/SuiteError for anything a user must fix (unknown suite, bad shard, unreadable
    baseline, CI without models, an invalid target template)."""
    from empath_gate.conversation.template_spec import template_of
    from empath_gate.plan.rebuild import plan_for_profile
    from empath_gate.settings.profile import resolve_profile

    import_target_path(settings, project)
    instrument, layers = load_run_instrument(settings)
    profile = resolve_profile(settings)
    template_of(profile.settings)  # a broken target template is a usage error before anything runs
    plan = plan_for_profile(instrument, profile, suites, shard_spec=shard)
    if settings.baseline:
        from empath_gate.results.io import read_results

        baseline = read_results(settings.baseline)
    else:
        baseline = None
    results_path = Path(settings.results)
    return RunSetup(
        settings=profile.settings,
        profile=profile,
        instrument=instrument,
        plan=plan,
        baseline=baseline,
        results_path=results_path,
        transcripts_dir=settings.transcripts_dir or results_path.parent / "transcripts",
        layers=layers,
    )


def check_run(setup: RunSetup) -> None:
    """Find, before the first model call, the usage errors a run would otherwise meet only once
    it started: a judge-batch setting that cannot work (the cache off, no judge model, collect
    without a state file or with one unreadable or for another judge:
    :func:`empath_gate.judging.batch_mode.check_batch_settings`, with the state file the run
    uses). Raises ConfigError naming the problem."""
    from empath_gate.judging.batch_mode import check_batch_settings
    from empath_gate.judging.batch_state import state_path

    s = setup.settings
    if s.judge_batch != "off":
        check_batch_settings(s, state_path(s.judge_batch_state, setup.results_path))


def conversation_ids(plan: Plan) -> list[str]:
    """The plan's conversation ids in plan order."""
    return [c.conversation_id for c in plan.conversations]


def run_plan(
    setup: RunSetup, *, conversations: Sequence[str] | None = None, progress: Progress | None = None
) -> list[RunRecord]:
    """Generate and judge every run of ``conversations`` (default: the whole plan), concurrently,
    with the cache, the budget and progress lines. Returns one record per transcript in plan order;
    a transcript stopped by an infrastructure problem is a record with ``status`` ``error`` or
    ``budget`` and no verdict; with ``sequential_gating`` on, a run not started because its
    conversation was settled is a ``stopped`` record (:mod:`empath_gate.gate.sequential`). Raises
    ConfigError/SuiteError when a role cannot be set up (e.g. a ``py:`` target that does not
    import), and :class:`empath_gate.runner.RunInterrupted` (a KeyboardInterrupt carrying the
    records of what finished) on Ctrl-C."""
    from empath_gate import runner
    from empath_gate.gate.sequential import plan_stop_rule

    ids = conversation_ids(setup.plan) if conversations is None else list(conversations)
    specs = runner.run_specs(setup.plan, setup.instrument, ids)
    s = setup.settings
    rule = plan_stop_rule(setup.plan, setup.instrument, mode=s.sequential_gating, fail_on=s.fail_on,
                          error_rate=s.sequential_error_rate, baseline=setup.baseline,
                          max_fallback_share=s.max_auditor_fallback_share)
    return runner.execute(
        specs,
        setup.plan.metrics_for(),
        instrument=setup.instrument,
        settings=setup.settings,
        transcripts_dir=setup.transcripts_dir,
        progress=progress,
        relative_to=setup.results_path.parent,
        stop_rule=rule,
        judge_batch_state=setup.settings.judge_batch_state,
    )


def evaluate_run(
    setup: RunSetup, records: Sequence[RunRecord], *, item_ids: Sequence[str] | None = None
) -> Results:
    """The results document of ``records``: metadata, statistics, the comparison with the
    baseline and every decision (:func:`empath_gate.results.evaluate.evaluate`). ``item_ids``:
    only these tests were selected (``-k``); the rest are neither decided nor counted."""
    from empath_gate.plan.rebuild import select_items
    from empath_gate.results.evaluate import evaluate
    from empath_gate.results.metadata import build_metadata, finalize_metadata

    plan = select_items(setup.plan, item_ids)
    fail_on = setup.settings.fail_on
    metadata = build_metadata(
        setup.profile, plan, setup.instrument, started_at=setup.started_at, fail_on=fail_on
    )
    return evaluate(
        list(records),
        plan=plan,
        instrument=setup.instrument,
        metadata=finalize_metadata(metadata, records),
        baseline=setup.baseline,
        fail_on=fail_on,
        layers=setup.layers,
    )


def write_run(setup: RunSetup, results: Results) -> list[Path]:
    """Write ``results.json``, ``diff.md`` and ``report.html``; returns the paths written."""
    from empath_gate.results.artifacts import write_artifacts

    return write_artifacts(results, setup.results_path, baseline=setup.baseline)


def run_suites(
    settings: Settings,
    suites: Sequence[str],
    *,
    shard: str | None = None,
    progress: Progress | None = None,
    write: bool = True,
) -> Results:
    """Prepare, run, evaluate and (with ``write``) write a whole plan; returns the results."""
    setup = prepare(settings, suites, shard=shard)
    results = evaluate_run(setup, run_plan(setup, progress=progress))
    if write:
        write_run(setup, results)
    return results


def header_lines(setup: RunSetup) -> list[str]:
    """What a run prints before it starts: plan size, the roles, and what offline means."""
    from empath_gate.settings.model import redact_url

    s, p = setup.settings, setup.plan
    target = redact_url(s.target) if s.target_kind == "http" and s.target else s.target
    lines = [
        f"empath-gate {__version__}: suites {', '.join(p.suites)}; {len(p.conversations)} conversations "
        f"x {p.runs} runs = {len(p.transcripts)} transcripts, {len(p.items)} tests"
        + (f" (shard {p.shard})" if p.shard else ""),
        f"empath-gate roles: target {target}, auditor {s.auditor.model or 'scripted'}, "
        f"judge {s.judge.model or 'none (deterministic criteria only)'}",
    ]
    skipped = [c for c in p.conversations if c.skip is not None]
    if skipped:
        lines.append(f"empath-gate: {len(skipped)} conversations skipped with their tests: {skipped[0].skip}")
    if setup.profile.criteria_only:
        lines.append(
            "empath-gate: no judge model: metrics are only criteria-checked; a judge model is needed "
            "for scores (tests without a critical FAIL are skipped, never passed)"
        )
    return lines


def short_runs(setup: RunSetup, flag: str = "--runs") -> str | None:
    """The warning when the plan's runs are below the ``min_judged_runs`` of metrics it tests
    (resolved per suite; skipped tests aside): those tests cannot pass, whatever the bot does,
    e.g. ``runs 1 is below min_judged_runs 2 of metrics crisis_detection, empathy: their tests
    cannot pass; use --runs 2 or more`` (``flag``: the front-end's option). None when every
    metric can be met."""
    p = setup.plan
    resolved: dict[tuple[str, str], int] = {}
    need: dict[int, dict[str, None]] = {}
    for item in p.items:
        key = (item.metric_id, item.suite)
        if item.skip is not None or key in resolved:
            continue
        n = resolved[key] = setup.instrument.thresholds.resolve(item.metric_id, item.suite).min_judged_runs
        if n > p.runs:
            need.setdefault(n, {})[item.metric_id] = None
    if not need:
        return None
    parts = [f"min_judged_runs {n} of metric{'s' if len(ms) > 1 else ''} {', '.join(ms)}"
             for n, ms in sorted(need.items())]
    return (f"runs {p.runs} is below {' and '.join(parts)}: their tests cannot pass; "
            f"use {flag} {max(need)} or more")


def import_target_path(settings: Settings, folder: Path | str | None = None) -> None:
    """Put ``folder`` (default: the working directory) on ``sys.path`` for a ``py:`` target, as
    ``python -m`` would, so ``py:mybot.app:reply`` imports from the project."""
    import sys

    path = str(folder if folder is not None else os.getcwd())
    if settings.target_kind == "callable" and path not in sys.path:
        sys.path.insert(0, path)
