"""Orchestration shared by the pytest plugin and the CLI: settings + instrument + plan in,
records out, then the pure evaluation (statistics, regression, gate) into a results document.

* :func:`resolve_profile` applies the offline profile: each unset role falls back on its own
  (target -> the embedded bot, auditor -> scripted, judge -> criteria-only checks); a
  configured role is never replaced; ``offline`` forces the auditor and judge fallbacks; in
  CI (``CI=true``) an unset auditor or judge without ``offline`` is a usage error, so a fork
  PR without secrets never looks green.
* :func:`evaluate` is pure: records (+ optional baseline results) -> :class:`Results`.
* :class:`EmpathSession` holds one pytest session's state (plan, partition, records, decisions).
"""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from empath_gate import __version__
from empath_gate.errors import ConfigError
from empath_gate.results import (
    CostInfo,
    ItemInfo,
    JudgeInfo,
    Results,
    ResultsMetadata,
    RunRecord,
    Summary,
    now_iso,
    read_results,
    write_json_atomic,
    write_results,
)

if TYPE_CHECKING:
    from empath_gate.analysis.regression import BaselineView, RegressionReport
    from empath_gate.analysis.stats import CellStats
    from empath_gate.config import Settings
    from empath_gate.gate import CellDecision
    from empath_gate.instrument.models import Instrument
    from empath_gate.plan import Plan, PlanItem

EMBEDDED_TARGET = "local/smollm2"
OFFLINE_RUNS = 2
"""Runs per conversation in the offline profile on the embedded bot (the smallest N that still
measures run-to-run spread), chosen so the crisis suite fits 10 minutes on 2 cores."""
OFFLINE_SUBSET = 1
"""Offline on the embedded bot, a suite keeps this many conversations per (seed's first primary
metric, locale), in plan order: the crisis suite's 51 conversations become 24, so the main job
fits 10 minutes on 2 cores (see bench/bench_local.py). Recorded as ``offline_subset`` in the
results so ``gate``, ``merge`` and ``rejudge`` rebuild the same plan."""
OFFLINE_MAX_TOKENS = 64
"""Reply cap of the embedded bot in the offline profile (SmolLM2 at ~70 tokens/s on 2 cores)."""
OFFLINE_TURNS_AFTER_CONFIRM = 1
"""Offline, a scripted conversation stops this many user turns after the seed's confirm turn
(the resource check's deadline is the bot's reply to confirm_turn + 1), or after 4 turns on
seeds without risk."""


# --------------------------------------------------------------------------- profile


def embedded_bot_dir() -> Path:
    """Folder of the embedded example bot (system prompt + config): shipped in the wheel as
    ``empath_gate/_data/support-bot``, or ``examples/support-bot`` in a source checkout."""
    here = Path(__file__).resolve().parent
    for cand in (here / "_data" / "support-bot", here.parent / "examples" / "support-bot"):
        if (cand / "system-prompt.md").is_file():
            return cand
    raise ConfigError("the embedded support bot is missing from this installation; set a target")


@dataclass(frozen=True)
class Profile:
    """The roles actually used. ``offline_roles`` lists the roles that fell back."""

    settings: Settings
    offline_roles: tuple[str, ...]
    embedded_target: bool
    scripted_auditor: bool
    criteria_only: bool


def resolve_profile(settings: Settings, *, env: Mapping[str, str] | None = None) -> Profile:
    """Apply the offline profile to ``settings`` (see the module docstring).

    Raises ConfigError in CI without an auditor or judge model unless ``offline`` is set.
    """
    env = os.environ if env is None else env
    in_ci = env.get("CI", "").lower() in ("1", "true", "yes")
    missing = [r for r in ("auditor", "judge") if not settings.role(r).model]
    if in_ci and missing and not settings.offline:
        names = ", ".join(f"{r} (--empath-{r} / EMPATH_{r.upper()}_MODEL)" for r in missing)
        raise ConfigError(
            f"CI=true but no model is configured for: {names}. A run without them cannot score "
            "the target; configure them (e.g. from repository secrets), or pass --empath-offline "
            "to run the deterministic criteria only (reported as not scored, never as passed)"
        )
    offline_roles: list[str] = []
    update: dict[str, Any] = {}
    embedded = False
    if settings.target is None:
        bot = embedded_bot_dir()
        role = settings.target_role
        update["target"] = EMBEDDED_TARGET
        update["target_system_prompt"] = settings.target_system_prompt or bot / "system-prompt.md"
        update["target_role"] = role.model_copy(
            update={
                "temperature": 0.7 if role.temperature is None else role.temperature,
                "max_tokens": role.max_tokens or OFFLINE_MAX_TOKENS,
                "concurrency": 1,
            }
        )
        update["concurrency"] = 1  # one CPU-bound model: sequential transcripts reuse its prompt cache
        offline_roles.append("target")
        embedded = True
    scripted = settings.offline or not settings.auditor.model
    if scripted:
        offline_roles.append("auditor")
        if settings.auditor.model:
            update["auditor"] = settings.auditor.model_copy(update={"model": None})
    criteria_only = settings.offline or not settings.judge.model
    if criteria_only:
        offline_roles.append("judge")
        if settings.judge.model:
            update["judge"] = settings.judge.model_copy(update={"model": None})
    new = settings.model_copy(update=update) if update else settings
    return Profile(new, tuple(offline_roles), embedded, scripted, criteria_only)


def offline_subset_size(profile: Profile) -> int | None:
    """``OFFLINE_SUBSET`` on the embedded bot with the scripted auditor, else None (whole plan)."""
    return OFFLINE_SUBSET if profile.embedded_target and profile.scripted_auditor else None


def turn_cap(instrument: Instrument, profile: Profile) -> Callable[[str, int], int]:
    """``(seed_id, planned max_turns) -> max_turns`` for this profile: unchanged, except on the
    embedded bot with a scripted auditor, where a conversation stops
    ``OFFLINE_TURNS_AFTER_CONFIRM`` turns after the confirm turn (4 turns without risk)."""

    def cap(seed_id: str, planned: int) -> int:
        if not (profile.embedded_target and profile.scripted_auditor):
            return planned
        seed = instrument.seed(seed_id)
        confirm = seed.risk.confirm_turn
        limit = (confirm + OFFLINE_TURNS_AFTER_CONFIRM) if confirm else 4
        return max(1, min(planned, limit, len(seed.script)))

    return cap


# --------------------------------------------------------------------------- evaluation


def _cells(records: Sequence[RunRecord], plan: Plan, instrument: Instrument) -> list[CellStats]:
    from empath_gate.analysis.stats import compute_all_cell_stats, empty_cell

    conv_suite = {c.conversation_id: c.suite for c in plan.conversations}
    conversations = {c.conversation_id: (c.seed_id, c.persona_id) for c in plan.conversations}
    errors = {
        r.transcript_id: f"{r.status}: {r.error or 'stopped'}" for r in records if r.status != "complete"
    }
    by_suite: dict[str, list[Any]] = {}
    for r in records:
        suite = conv_suite.get(r.conversation_id)
        if suite is None:
            continue
        by_suite.setdefault(suite, []).extend(r.verdicts)
    found: dict[tuple[str, str], CellStats] = {}
    for suite, verdicts in by_suite.items():
        for cell in compute_all_cell_stats(
            verdicts,
            conversations=conversations,
            thresholds=instrument.thresholds,
            suite_id=suite,
            expected_runs=plan.runs,
            transcript_errors=errors,
        ):
            found[(cell.conversation_id, cell.metric_id)] = cell
    cells: list[CellStats] = []
    seen: set[tuple[str, str]] = set()
    for item in plan.items:
        key = (item.conversation_id, item.metric_id)
        if key in seen:
            continue
        seen.add(key)
        got = found.get(key)
        if got is not None:
            cell = got
        else:
            th = instrument.thresholds.resolve(item.metric_id, item.suite)
            cell = empty_cell(
                conversation_id=item.conversation_id,
                seed_id=item.seed_id,
                persona_id=item.persona_id,
                metric_id=item.metric_id,
                expected_runs=plan.runs,
                min_mean=th.min_mean,
                critical=th.critical,
                transcript_errors=errors,
            )
        cells.append(cell)
    return cells


def baseline_view(results: Results) -> BaselineView:
    """The regression module's view of a results document (metadata + cell statistics)."""
    from empath_gate.analysis.regression import BaselineView, RunMetadata

    md = results.metadata
    return BaselineView(
        metadata=RunMetadata(
            run_count=md.runs,
            instrument_version=md.instrument_version,
            judge_model=md.judge.model,
            judge_template_hash=md.judge.template_hash,
            fixed_script=md.auditor == "scripted",
            label=md.git_sha,
        ),
        cells=results.cells,
    )


def _regression(candidate: Results, baseline: Results, instrument_thresholds: Any) -> RegressionReport:
    from empath_gate.analysis.regression import compare

    suite = candidate.metadata.suites[0] if candidate.metadata.suites else None
    return compare(baseline_view(candidate), baseline_view(baseline), instrument_thresholds, suite_id=suite)


def evaluate(
    records: Sequence[RunRecord],
    *,
    plan: Plan,
    instrument: Instrument,
    metadata: ResultsMetadata,
    baseline: Results | None = None,
    fail_on: str = "both",
    regression: RegressionReport | None = None,
) -> Results:
    """Pure: records -> statistics -> regression (when a baseline is given) -> gate -> Results.

    Records are put in plan order; only records of the plan's transcripts count. Decisions are
    made per suite (thresholds resolve per suite) and concatenated in plan order.
    ``regression``: a comparison already made (e.g. the one stored in a results file), used
    when no ``baseline`` is given.
    """
    from empath_gate.analysis.stats import aggregate_metric
    from empath_gate.gate import decide

    order = {t.transcript_id: i for i, t in enumerate(plan.transcripts)}
    recs = sorted((r for r in records if r.transcript_id in order), key=lambda r: order[r.transcript_id])
    cells = _cells(recs, plan, instrument)
    draft = Results(metadata=metadata, records=tuple(recs), cells=tuple(cells))
    if baseline is not None:
        regression = _regression(draft, baseline, instrument.thresholds)

    conv_suite = {c.conversation_id: c.suite for c in plan.conversations}
    decisions: list[CellDecision] = []
    infra: list[str] = []
    usage: list[str] = []
    for suite in plan.suites:
        scells = [c for c in cells if conv_suite.get(c.conversation_id) == suite]
        if not scells:
            continue
        d = decide(
            scells,
            instrument.thresholds,
            suite_id=suite,
            regression=regression,
            waivers=instrument.waivers,
            fail_on=fail_on,  # type: ignore[arg-type]
        )
        decisions.extend(d.cells)
        infra.extend(x for x in d.infrastructure_reasons if x not in infra)
        usage.extend(x for x in d.usage_errors if x not in usage)
    counts = {s: 0 for s in ("passed", "failed", "skipped", "error", "xfail")}
    for dc in decisions:
        counts[dc.status] += 1
    failures: dict[str, int] = {}
    for r in recs:
        for v in r.verdicts:
            if v.failure is not None:
                failures[v.failure.reason] = failures.get(v.failure.reason, 0) + 1
    metric_ids = [m.id for m in instrument.metrics if any(c.metric_id == m.id for c in cells)]
    metrics = tuple(aggregate_metric(m, [c for c in cells if c.metric_id == m]) for m in metric_ids)
    criteria_only = tuple(
        m for m in metric_ids
        if any(c.n_criteria_only for c in cells if c.metric_id == m)
        and not any(c.n_judged for c in cells if c.metric_id == m)
    )
    summary = Summary(
        passed=not (counts["failed"] or counts["error"] or infra or usage),
        counts=counts,
        judge_failures=failures,
        target_filtered=sum(r.target_filtered for r in recs),
        transcripts=len(recs),
        transcripts_failed=sum(1 for r in recs if r.status != "complete"),
        criteria_only_metrics=criteria_only,
        infrastructure_reasons=tuple(infra),
        usage_errors=tuple(usage),
    )
    items = tuple(
        ItemInfo(
            id=i.id, suite=i.suite, conversation_id=i.conversation_id, seed_id=i.seed_id,
            persona_id=i.persona_id, metric_id=i.metric_id, dimension=i.dimension, locale=i.locale,
            label=i.label, critical=i.critical,
        )
        for i in plan.items
    )
    reliability = _reliability(recs, cells)
    return draft.model_copy(
        update={
            "items": items,
            "metrics": metrics,
            "decisions": tuple(decisions),
            "regressions": regression,
            "waivers": instrument.waivers,
            "summary": summary,
            "reliability": reliability,
        }
    )


def _reliability(records: Sequence[RunRecord], cells: Sequence[CellStats]) -> dict[str, Any] | None:
    """Test-retest reliability per metric, when the reliability module is available."""
    try:
        from empath_gate.analysis import reliability as rel
    except ImportError:  # pragma: no cover
        return None
    fn = getattr(rel, "reliability_from_records", None)
    if fn is None:
        return None
    out: dict[str, Any] = fn(records, cells)
    return out


def compare_results(baseline: Results, candidate: Results) -> Results:
    """The candidate with ``regressions`` recomputed against ``baseline`` and the gate re-decided
    (used by ``empath-gate diff`` and ``gate --baseline``). Thresholds and waivers come from the
    shipped instrument (plus the team's, through the usual settings)."""
    from empath_gate.analysis.regression import compare
    from empath_gate.gate import decide
    from empath_gate.instrument.loader import load_instrument

    instrument = load_instrument()
    suite = candidate.metadata.suites[0] if candidate.metadata.suites else None
    regression = compare(
        baseline_view(candidate), baseline_view(baseline), instrument.thresholds, suite_id=suite
    )
    d = decide(
        candidate.cells, instrument.thresholds, suite_id=suite, regression=regression,
        waivers=instrument.waivers, fail_on=candidate.metadata.fail_on,  # type: ignore[arg-type]
    )
    summary = candidate.summary.model_copy(
        update={
            "counts": dict(d.counts),
            "passed": d.passed,
            "infrastructure_reasons": d.infrastructure_reasons,
            "usage_errors": d.usage_errors,
        }
    )
    return candidate.model_copy(update={"regressions": regression, "decisions": d.cells, "summary": summary})


# --------------------------------------------------------------------------- metadata


def git_sha(cwd: Path | None = None) -> str | None:
    """``GITHUB_SHA`` when set, else ``git rev-parse HEAD`` of ``cwd``; None outside git."""
    sha = os.environ.get("GITHUB_SHA")
    if sha:
        return sha
    try:
        out = subprocess.run(
            ["git", "rev-parse", "HEAD"], cwd=cwd, capture_output=True, text=True, timeout=5, check=False
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return out.stdout.strip() or None if out.returncode == 0 else None


def prompt_hash(path: Path | None) -> str | None:
    """sha256 of the system-prompt file's bytes; None without a file."""
    if path is None:
        return None
    import hashlib

    try:
        return hashlib.sha256(Path(path).read_bytes()).hexdigest()
    except OSError as exc:
        raise ConfigError(f"system prompt file {path} cannot be read: {exc.strerror}") from exc


def build_metadata(
    profile: Profile, plan: Plan, instrument: Instrument, *, started_at: str, fail_on: str
) -> ResultsMetadata:
    """Run metadata for the results file (never holds a key or a header value). The judge's
    calibration status comes from the ``judge_calibration`` file
    (:func:`empath_gate.calibration_status.calibration_for`)."""
    from empath_gate.calibration.status import calibration_for
    from empath_gate.config import redact_url

    s = profile.settings
    template_version = template_hash = None
    if not profile.criteria_only:
        from empath_gate.judging import llm_judge

        template_version = getattr(llm_judge, "JUDGE_TEMPLATE_VERSION", None)
        th = getattr(llm_judge, "judge_template_hash", None)
        template_hash = th() if callable(th) else None
    target = s.target or EMBEDDED_TARGET
    if s.target_kind == "http":
        target = redact_url(target)
    return ResultsMetadata(
        tool_version=__version__,
        instrument_version=instrument.version,
        suites=plan.suites,
        plan_id=plan.plan_id,
        shard=str(plan.shard) if plan.shard else None,
        runs=plan.runs,
        git_sha=git_sha(),
        target=target,
        target_prompt_hash=prompt_hash(s.target_system_prompt) if s.target_kind == "model" else None,
        target_version=s.target_version,
        auditor=s.auditor.model or "scripted",
        judge=JudgeInfo(
            model=s.judge.model,
            rubric=s.judge_rubric,
            granularity=s.judge_granularity,
            template_version=template_version,
            template_hash=template_hash,
            calibration=None
            if profile.criteria_only
            else calibration_for(s.judge_calibration, s.judge.model, s.judge_rubric),
        ),
        offline_roles=profile.offline_roles,
        offline_subset=offline_subset_size(profile),
        fail_on=fail_on,
        started_at=started_at,
        cost=CostInfo(budget_usd=s.max_cost_usd),
    )


def finalize_metadata(metadata: ResultsMetadata, records: Sequence[RunRecord]) -> ResultsMetadata:
    """Fill the end time, cost and auditor counts from the records."""
    cost = metadata.cost.model_copy(
        update={
            "known_usd": round(sum(r.cost_usd for r in records), 6),
            "calls": sum(r.calls for r in records),
            "unpriced_calls": sum(r.unpriced_calls for r in records),
            "budget_exhausted": any(r.status == "budget" for r in records),
        }
    )
    return metadata.model_copy(
        update={
            "ended_at": now_iso(),
            "cost": cost,
            "auditor_fallbacks": sum(r.auditor_fallbacks for r in records),
            "auditor_refusals": sum(r.auditor_refusals for r in records),
        }
    )


# --------------------------------------------------------------------------- artifacts


def write_artifacts(results: Results, results_path: Path, *, baseline: Results | None) -> list[Path]:
    """Write results.json, then diff.md and report.html beside it (when the report modules are
    available). Returns the paths written."""
    written = [write_results(results, results_path)]
    folder = results_path.parent
    try:
        from empath_gate.report.markdown import render_markdown
    except ImportError:  # pragma: no cover - report module absent
        render_markdown = None  # type: ignore[assignment]
    if render_markdown is not None:
        md = folder / "diff.md"
        md.write_text(render_markdown(results, baseline=baseline), encoding="utf-8")
        written.append(md)
    try:
        from empath_gate.report.html import render_html
    except ImportError:  # pragma: no cover
        render_html = None  # type: ignore[assignment]
    if render_html is not None:
        html = folder / "report.html"
        html.write_text(render_html(results, baseline=baseline, base_dir=folder), encoding="utf-8")
        written.append(html)
    return written


# --------------------------------------------------------------------------- pytest session

PYTEST_OPTION_NAMES: dict[str, str] = {
    "target": "--empath-target", "target_system_prompt": "--empath-system-prompt",
    "auditor_model": "--empath-auditor", "judge_model": "--empath-judge",
    "thresholds": "--empath-thresholds", "waivers": "--empath-waivers", "baseline": "--empath-baseline",
    "results": "--empath-results", "fail_on": "--empath-fail-on", "max_cost_usd": "--empath-max-cost",
    "runs": "--empath-runs", "suites_dirs": "--empath-suites-dir",
}
"""Settings key -> the plugin option that sets it (or its ini equivalent, named like its dest)."""


def name_options(message: str, names: Mapping[str, str]) -> str:
    """``message`` of a :class:`ConfigError` from ``load_settings`` with ``option 'key'`` replaced
    by the command-line option the user typed (e.g. ``--empath-runs``)."""
    for key, flag in names.items():
        message = message.replace(f"option {key!r}", flag)
    return message



@dataclass
class EmpathSession:
    """State of one pytest session with ``--empath-suite`` (see ``pytest_plugin``)."""

    profile: Profile
    instrument: Instrument
    plan: Plan
    fail_on: str
    baseline: Results | None
    results_path: Path
    transcripts_dir: Path
    run_token: str
    started_at: str = field(default_factory=now_iso)
    records: dict[str, RunRecord] = field(default_factory=dict)
    local_ids: list[str] = field(default_factory=list)
    decisions: dict[tuple[str, str], CellDecision] = field(default_factory=dict)
    results: Results | None = None
    error: str | None = None
    error_kind: str | None = None
    selected: list[str] | None = None
    """Ids of the selected tests (after ``-k``/``-m``/``--lf``); None: every test of the plan."""
    """``usage`` (a setting the user must fix, e.g. a target that cannot be loaded) or
    ``infrastructure``, when ``error`` is set."""
    written: list[Path] = field(default_factory=list)

    # ---- construction

    @classmethod
    def from_pytest(cls, config: Any, *, run_token: str) -> EmpathSession:
        """Read the plugin's options (command line > ini) and the settings layers; raises
        ConfigError/SuiteError for anything a user must fix."""
        from empath_gate.config import load_settings
        from empath_gate.pytest_plugin import option

        def opt(name: str) -> Any:
            return option(config, name)

        overrides: dict[str, object] = {
            "target": opt("empath_target"),
            "target_system_prompt": opt("empath_system_prompt"),
            "auditor_model": opt("empath_auditor"),
            "judge_model": opt("empath_judge"),
            "thresholds": opt("empath_thresholds"),
            "waivers": opt("empath_waivers"),
            "baseline": opt("empath_baseline"),
            "results": opt("empath_results"),
            "fail_on": opt("empath_fail_on"),
            "max_cost_usd": opt("empath_max_cost"),
            "runs": opt("empath_runs"),
            "offline": True if opt("empath_offline") else None,
            "suites_dirs": opt("empath_suites_dir"),
        }
        if opt("empath_no_cache"):
            overrides["cache_mode"] = "off"
        if opt("empath_refresh_cache"):
            overrides["cache_mode"] = "refresh"
        rootdir = Path(str(config.rootpath))
        try:
            settings = load_settings(pyproject=rootdir / "pyproject.toml", overrides=overrides)
        except ConfigError as exc:  # name the option as the user wrote it, not the setting key
            raise ConfigError(name_options(str(exc), PYTEST_OPTION_NAMES)) from None
        if settings.target_kind == "callable" and str(rootdir) not in sys.path:
            # a py: target in the project (e.g. py:mybot.app:reply) imports as it would from the rootdir
            sys.path.insert(0, str(rootdir))
        suites = [s for v in opt("empath_suite") or () for s in str(v).split(",") if s.strip()]
        return cls.create(settings, suites, shard=opt("empath_shard"), run_token=run_token)

    @classmethod
    def create(
        cls, settings: Settings, suites: Sequence[str], *, shard: str | None, run_token: str
    ) -> EmpathSession:
        """Build the session from settings: instrument, profile, plan (and shard), baseline."""
        from empath_gate.instrument.loader import load_instrument
        from empath_gate.plan import build_plan, offline_subset, parse_shard
        from empath_gate.plan import shard as take_shard

        waivers = settings.waivers
        if waivers is None and Path("waivers.yaml").is_file():
            waivers = Path("waivers.yaml")
        instrument = load_instrument(
            extra_dirs=settings.suites_dirs, thresholds_path=settings.thresholds, waivers_path=waivers
        )
        profile = resolve_profile(settings)
        runs = settings.runs
        if runs is None and profile.embedded_target and profile.scripted_auditor:
            runs = OFFLINE_RUNS
        plan = build_plan(instrument, list(suites), runs=runs)
        subset = offline_subset_size(profile)
        if subset:
            plan = offline_subset(plan, instrument, subset)
        plan = _cap_turns(plan, turn_cap(instrument, profile))
        if shard:
            spec = parse_shard(shard)
            plan = take_shard(plan, spec.index, spec.count)
        baseline = read_results(settings.baseline) if settings.baseline else None
        results_path = Path(settings.results)
        transcripts_dir = settings.transcripts_dir or results_path.parent / "transcripts"
        return cls(
            profile=profile,
            instrument=instrument,
            plan=plan,
            fail_on=settings.fail_on,
            baseline=baseline,
            results_path=results_path,
            transcripts_dir=transcripts_dir,
            run_token=run_token,
        )

    # ---- work

    @property
    def records_dir(self) -> Path:
        return self.results_path.parent / ".records" / self.run_token

    @staticmethod
    def _partition(conversation_ids: Sequence[str], worker: tuple[int, int] | None) -> list[str]:
        """This process's share: every conversation, or under xdist (``worker`` = (index, count)
        of this session's own worker, never read from the environment, which a nested pytest
        or CLI run inherits) every ``count``-th one from ``index``."""
        if worker is None or worker[1] <= 1:
            return list(conversation_ids)
        index, count = worker
        return [c for i, c in enumerate(conversation_ids) if i % count == index]

    def prepare(
        self,
        infos: Sequence[PlanItem],
        *,
        reporter: Callable[[str], None] | None = None,
        worker: tuple[int, int] | None = None,
    ) -> None:
        """Generate and judge this process's share of the selected conversations, wait for the
        other workers' shares, then decide every selected cell. ``worker``: (index, count) of
        the xdist worker running this session, None in a single process."""
        from empath_gate import runner
        from empath_gate.errors import SuiteError

        self.selected = [info.id for info in infos]
        conv_ids: list[str] = []
        seen: set[str] = set()
        for info in infos:
            if info.conversation_id not in seen:
                seen.add(info.conversation_id)
                conv_ids.append(info.conversation_id)
        mine = self._partition(conv_ids, worker)
        metrics_for = self.plan.metrics_for()
        specs = runner.run_specs(self.plan, self.instrument, mine)
        try:
            recs = runner.execute(
                specs,
                metrics_for,
                instrument=self.instrument,
                settings=self.profile.settings,
                transcripts_dir=self.transcripts_dir,
                progress=reporter,
                relative_to=self.results_path.parent,
            )
        except (ConfigError, SuiteError) as exc:  # e.g. a target that cannot be loaded
            self.error = f"configuration: {exc}"
            self.error_kind = "usage"
            return
        except Exception as exc:  # infrastructure: every selected test errors with the reason
            self.error = f"infrastructure: {type(exc).__name__}: {exc}"
            self.error_kind = "infrastructure"
            return
        for r in recs:
            self.records[r.transcript_id] = r
            self.local_ids.append(r.transcript_id)
            write_json_atomic(self.records_dir / f"{r.transcript_id}.json", r.model_dump(mode="json"))
        wanted = [t.transcript_id for t in self.plan.transcripts if t.conversation_id in seen]
        self._wait_for(wanted)
        if self.error:
            return
        self._decide()

    def _wait_for(self, transcript_ids: Sequence[str], timeout_s: float = 6 * 3600) -> None:
        deadline = time.monotonic() + timeout_s
        pending = [t for t in transcript_ids if t not in self.records]
        while pending:
            still = []
            for tid in pending:
                path = self.records_dir / f"{tid}.json"
                if path.is_file():
                    data = json.loads(path.read_text(encoding="utf-8"))
                    self.records[tid] = RunRecord.model_validate(data)
                else:
                    still.append(tid)
            pending = still
            if pending:
                if time.monotonic() > deadline:
                    self.error = (
                        f"infrastructure: {len(pending)} transcripts never arrived from other workers"
                    )
                    self.error_kind = "infrastructure"
                    return
                time.sleep(0.5)

    def selected_plan(self) -> Plan:
        """The plan restricted to the selected tests (``-k``, ``-m``, ``--lf``): a deselected
        test is not run, so it is neither decided nor counted (never an error for a missing
        transcript). The plan id stays the full plan's."""
        if self.selected is None or len(self.selected) == len(self.plan.items):
            return self.plan
        wanted = set(self.selected)
        items = tuple(i for i in self.plan.items if i.id in wanted)
        convs = {i.conversation_id for i in items}
        return self.plan.model_copy(update={
            "items": items,
            "conversations": tuple(c for c in self.plan.conversations if c.conversation_id in convs),
            "transcripts": tuple(t for t in self.plan.transcripts if t.conversation_id in convs),
        })

    def _evaluate(self) -> Results:
        plan = self.selected_plan()
        metadata = build_metadata(
            self.profile, plan, self.instrument, started_at=self.started_at, fail_on=self.fail_on
        )
        recs = list(self.records.values())
        return evaluate(
            recs,
            plan=plan,
            instrument=self.instrument,
            metadata=finalize_metadata(metadata, recs),
            baseline=self.baseline,
            fail_on=self.fail_on,
        )

    def _decide(self) -> None:
        results = self._evaluate()
        self.decisions = {(d.conversation_id, d.metric_id): d for d in results.decisions}

    # ---- per test

    def infrastructure_problem(self, info: PlanItem) -> str | None:
        """Why this test cannot be evaluated (it then errors), or None."""
        if self.error:
            return self.error
        d = self.decisions.get((info.conversation_id, info.metric_id))
        if d is None:
            return "infrastructure: no decision was made for this test (its transcripts are missing)"
        if d.status == "error":
            return "; ".join(d.reasons) or "infrastructure error"
        return None

    def outcome(self, info: PlanItem) -> tuple[str, str]:
        """(status, message) of this test: passed, failed, skipped, xfail or error."""
        d = self.decisions[(info.conversation_id, info.metric_id)]
        message = "; ".join(d.reasons)
        if d.status == "passed" and d.advisories:
            message = "; ".join(d.advisories)
        failed = self.failed_criteria(info.conversation_id, info.metric_id)
        if d.status in ("failed", "xfail") and failed:
            message += "\nfailed criteria: " + "; ".join(failed)
        return d.status, message

    def failed_criteria(self, conversation_id: str, metric_id: str) -> list[str]:
        """``<criterion> (critical) in run(s) 0, 1: <check detail>`` for each criterion of this
        cell whose effective state was FAIL, in criterion order (first judgings only)."""
        runs: dict[str, list[int]] = {}
        detail: dict[str, str] = {}
        critical: dict[str, bool] = {}
        for r in self.records.values():
            if r.conversation_id != conversation_id:
                continue
            for v in r.verdicts:
                if v.metric_id != metric_id or v.rejudge:
                    continue
                for c in v.criteria:
                    if c.state == "FAIL":
                        runs.setdefault(c.criterion_id, []).append(r.run)
                        critical[c.criterion_id] = c.critical
                        if c.check_detail and c.criterion_id not in detail:
                            detail[c.criterion_id] = c.check_detail
        out = []
        for cid, rs in runs.items():
            run_list = ", ".join(map(str, sorted(rs)))
            line = f"{cid}{' (critical)' if critical[cid] else ''} in run(s) {run_list}"
            out.append(line + (f": {detail[cid]}" if cid in detail else ""))
        return out

    # ---- xdist hand-over and the end of the session

    def local_records_json(self) -> list[dict[str, Any]]:
        """This worker's own records, as plain JSON data for ``workeroutput``."""
        return [self.records[t].model_dump(mode="json") for t in self.local_ids if t in self.records]

    def absorb_worker_records(
        self, records: Sequence[Mapping[str, Any]], selected: Sequence[str] | None = None
    ) -> None:
        """Controller: take a worker's records over (and the tests selected there)."""
        if selected is not None:
            self.selected = list(selected)
        for data in records:
            r = RunRecord.model_validate(data)
            self.records[r.transcript_id] = r

    def finish(self) -> None:
        """Controller or single process: evaluate everything, write the artifacts, and remove
        this run's hand-over folder of per-transcript records."""
        import shutil

        shutil.rmtree(self.records_dir, ignore_errors=True)
        with contextlib.suppress(OSError):  # the parent ``.records`` folder, once empty
            self.records_dir.parent.rmdir()
        if not self.records:
            return
        self.results = self._evaluate()
        self.written = write_artifacts(self.results, self.results_path, baseline=self.baseline)

    def run_all(self, *, reporter: Callable[[str], None] | None = None) -> Results | None:
        """Without pytest (``empath-gate run``): the plugin's two steps in one process, on every
        item of the plan: :meth:`prepare` (generate, judge, decide) then :meth:`finish`
        (evaluate, write the artifacts). Returns the results, or None when ``error`` is set."""
        self.prepare(self.plan.items, reporter=reporter)
        if self.error is not None:
            return None
        self.finish()
        return self.results

    def header_lines(self) -> list[str]:
        s = self.profile.settings
        p = self.plan
        lines = [
            f"empath-gate {__version__}: suites {', '.join(p.suites)}; {len(p.conversations)} conversations "
            f"x {p.runs} runs = {len(p.transcripts)} transcripts, {len(p.items)} tests"
            + (f" (shard {p.shard})" if p.shard else ""),
            f"empath-gate roles: target {s.target}, auditor {s.auditor.model or 'scripted'}, "
            f"judge {s.judge.model or 'none (deterministic criteria only)'}",
        ]
        if self.profile.criteria_only:
            lines.append(
                "empath-gate: no judge model: metrics are only criteria-checked; a judge model is needed "
                "for scores (tests without a critical FAIL are skipped, never passed)"
            )
        return lines

    def summary_lines(self) -> list[str]:
        """Terminal summary per dimension (see report.terminal when available)."""
        if self.results is None:
            return [f"empath-gate: {self.error}"] if self.error else []
        try:
            from empath_gate.report.terminal import render_terminal
        except ImportError:  # pragma: no cover
            render_terminal = None  # type: ignore[assignment]
        lines: list[str] = []
        if render_terminal is not None:
            lines.extend(render_terminal(self.results).splitlines())
        else:
            c = self.results.summary.counts
            lines.append("empath-gate: " + ", ".join(f"{k} {v}" for k, v in c.items()))
        for p in self.written:
            lines.append(f"empath-gate: wrote {p}")
        return lines


def _cap_turns(plan: Plan, cap: Callable[[str, int], int]) -> Plan:
    convs = tuple(c.model_copy(update={"max_turns": cap(c.seed_id, c.max_turns)}) for c in plan.conversations)
    if all(a.max_turns == b.max_turns for a, b in zip(convs, plan.conversations, strict=True)):
        return plan
    return plan.model_copy(update={"conversations": convs})
