"""The metadata of a results document: who ran what, with which models, hashes and versions,
and (after the run) its cost and call counts. Never holds an API key or a header value."""

from __future__ import annotations

import hashlib
import os
import subprocess
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from empath_gate import __version__
from empath_gate.errors import ConfigError
from empath_gate.results.io import now_iso
from empath_gate.results.model import CostInfo, JudgeInfo, ResultsMetadata, RoleCalls, RunRecord
from empath_gate.settings.profile import EMBEDDED_TARGET, Profile, offline_subset_size

if TYPE_CHECKING:
    from empath_gate.instrument.models import Instrument
    from empath_gate.plan.build import Plan

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
    try:
        return hashlib.sha256(Path(path).read_bytes()).hexdigest()
    except OSError as exc:
        raise ConfigError(f"system prompt file {path} cannot be read: {exc.strerror}") from exc


def build_metadata(
    profile: Profile, plan: Plan, instrument: Instrument, *, started_at: str, fail_on: str
) -> ResultsMetadata:
    """Run metadata for the results file (never holds a key or a header value), with each
    suite's content hashes (:mod:`empath_gate.results.suite_hash`). The judge's
    calibration status comes from the ``judge_calibration`` file
    (:func:`empath_gate.calibration.status.calibration_for`)."""
    from empath_gate.calibration.status import calibration_for
    from empath_gate.results.suite_hash import suite_content_hashes
    from empath_gate.settings.model import redact_url

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
        max_auditor_fallback_share=s.max_auditor_fallback_share,
        suite_hashes={sid: suite_content_hashes(instrument, sid, s.judge_rubric) for sid in plan.suites},
    )


def role_totals(records: Sequence[RunRecord]) -> dict[str, RoleCalls]:
    """Per role, the sum of the records' ``by_role`` counts (roles in first-seen order)."""
    sums: dict[str, dict[str, float]] = {}
    for r in records:
        for role, c in r.by_role.items():
            acc = sums.setdefault(role, dict.fromkeys(RoleCalls.model_fields, 0))
            for name, value in c.model_dump().items():
                acc[name] += value
    return {
        role: RoleCalls.model_validate({k: round(v, 6) if k.endswith("_usd") else v for k, v in acc.items()})
        for role, acc in sums.items()
    }


def finalize_metadata(metadata: ResultsMetadata, records: Sequence[RunRecord]) -> ResultsMetadata:
    """Fill the end time, cost (calls of every role, cache hits, per role, what the cache and a
    judge batch saved) and auditor counts from the records."""
    roles = role_totals(records)
    cost = metadata.cost.model_copy(
        update={
            "cache_saved_usd": round(sum(c.cache_saved_usd for c in roles.values()), 6),
            "batch_calls": sum(c.batch_calls for c in roles.values()),
            "batch_saved_usd": round(sum(c.batch_saved_usd for c in roles.values()), 6),
            "known_usd": round(sum(r.cost_usd for r in records), 6),
            "calls": sum(r.calls for r in records),
            "unpriced_calls": sum(r.unpriced_calls for r in records),
            "cache_hits": sum(r.cache_hits for r in records),
            "by_role": roles,
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
