"""The offline profile: which roles fall back, and how the embedded bot's run is sized.

:func:`resolve_profile` applies it: each unset role falls back on its own (target -> the
embedded bot, auditor -> scripted, judge -> criteria-only checks); a configured role is never
replaced; ``offline`` forces the auditor and judge fallbacks; in CI (``CI=true``) an unset
auditor or judge without ``offline`` is a usage error, so a fork PR without secrets never looks
green.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from empath_gate.errors import ConfigError
from empath_gate.resources import embedded_bot_dir
from empath_gate.settings.model import Settings

if TYPE_CHECKING:
    from empath_gate.instrument.models import Instrument

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
