"""Models of the suite side: seed and persona selectors, suites, thresholds and waivers.

Every model is frozen and forbids unknown keys (:class:`~empath_gate.instrument.model_base.Frozen`).
"""

from __future__ import annotations

import datetime as dt
from typing import Literal

from pydantic import Field, model_validator

from empath_gate.instrument.model_base import Frozen, Locale, Slug
from empath_gate.instrument.seed_models import RiskLevel


class SeedSelector(Frozen):
    """Which seeds a suite draws: union of ``ids``, ``tags``, ``metrics`` and ``dimensions``,
    then restricted to ``locales``, to ``covert`` and to risk level >= ``min_risk`` when set.
    ``all: true`` takes every seed."""

    all: bool = False
    ids: tuple[Slug, ...] = ()
    tags: tuple[Slug, ...] = ()
    metrics: tuple[Slug, ...] = ()
    dimensions: tuple[Slug, ...] = ()
    locales: tuple[Locale, ...] = ()
    covert: bool | None = None
    min_risk: RiskLevel | None = Field(
        default=None, description="keep seeds whose risk level is at least this (none < low < ... < imminent)"
    )


class PersonaSelector(Frozen):
    """Persona assignment among the personas that may speak a seed (its locale, its
    ``speaker`` constraints, or its fixed ``character``; see
    :func:`empath_gate.instrument.selection.assign_personas`): ``hash`` (one of them by a stable
    hash of the seed id), ``all`` (every one), or an explicit list of ids (those that may speak
    the seed are used); ``worst_case_only`` restricts to personas with worst-case behaviours.

    ``empath_md5`` reproduces the published EMPATH assignment: the candidates are the personas
    of ``ids`` (required; their order is the order upstream indexes into, its file order) of the
    seed's locale that may speak it, and the persona is
    ``candidates[int(md5(f"{seed_id}:{seed_value}")) % len(candidates)]`` (source: the
    ``_assign_persona`` function of the EMPATH benchmark's ``empath/seeds/__init__.py``, whose
    default ``seed_value`` is 42)."""

    mode: Literal["hash", "all", "list", "empath_md5"] = "hash"
    ids: tuple[Slug, ...] = ()
    worst_case_only: bool = False
    cooperative_pairing: bool = Field(
        default=False,
        description="also one cooperative persona per seed (every behaviour level <= 1), by seed-id hash",
    )
    seed_value: int = Field(
        default=42, description="empath_md5 only: the value hashed after the seed id (upstream's default 42)"
    )

    @model_validator(mode="after")
    def _md5_needs_ids(self) -> PersonaSelector:
        if self.mode == "empath_md5" and not self.ids:
            raise ValueError("mode 'empath_md5' needs 'ids': the candidate personas in upstream's file order")
        return self


class Suite(Frozen):
    """A named selection of conversations and how to run them. ``voice``: the suite replays
    spoken transcripts; it selects only voice seeds (tag ``voice``) and a suite without it
    selects none (:mod:`empath_gate.instrument.cues`)."""

    id: Slug
    label: str
    description: str
    seeds: SeedSelector
    also_seeds: tuple[SeedSelector, ...] = Field(
        default=(),
        description="further selections added to ``seeds`` (union), each with its own restrictions",
    )
    metrics: Literal["primary", "all"] = "primary"
    families: tuple[Slug, ...] = Field(
        default=(), description="metric families judged on every conversation, besides `metrics`"
    )
    personas: PersonaSelector = PersonaSelector()
    runs: int = Field(default=3, ge=1, le=50)
    max_turns: int = Field(default=8, ge=1, le=60)
    voice: bool = Field(
        default=False,
        description="a spoken-transcript suite: selects only voice seeds (their turns carry declared cues)",
    )
    judge_risk_turns: bool = Field(
        default=False,
        description="the judge also lists the bot turns that respond specifically to risk (risk-response "
        "timing); adds the judge template part risk_turns to this suite's judge_template hash",
    )
    judge_triage: bool = Field(
        default=False,
        description="the judge also assigns the level of response the bot gave (none, supportive, "
        "urgent_referral, emergency) with cited turns, and its own estimate of the user's crisis level; "
        "adds the judge template part triage to this suite's judge_template hash",
    )


class ThresholdValues(Frozen):
    """Per-metric gate limits; every field optional so files can override a subset.

    Semantics (also in ``thresholds.yaml``'s header): mean >= ``min_mean``; every judged run
    >= ``min_run``; range (max - min) <= ``max_range``; flip rate <= ``max_flip_rate``;
    judged runs >= ``min_judged_runs``; judge-failure rate <= ``max_judge_failure_rate``;
    candidate - baseline >= -``max_drop`` (non-inferiority for critical metrics); in a paired
    suite, cooperative - worst-case mean gap <= ``max_worst_case_gap`` (a suite check).
    """

    min_mean: float | None = Field(default=None, ge=1, le=10)
    min_run: float | None = Field(default=None, ge=1, le=10)
    max_range: float | None = Field(default=None, ge=0, le=9)
    max_flip_rate: float | None = Field(default=None, ge=0, le=1)
    max_drop: float | None = Field(default=None, ge=0, le=9)
    min_judged_runs: int | None = Field(default=None, ge=1)
    max_judge_failure_rate: float | None = Field(default=None, ge=0, le=1)
    max_worst_case_gap: float | None = Field(
        default=None, ge=0, le=9, description="largest cooperative minus worst-case mean gap"
    )
    critical: bool | None = None


class ResolvedThresholds(Frozen):
    """Thresholds with every field set, after defaults < metric < suite < suite-metric."""

    min_mean: float
    min_run: float
    max_range: float
    max_flip_rate: float
    max_drop: float
    min_judged_runs: int
    max_judge_failure_rate: float
    critical: bool
    max_worst_case_gap: float | None = None


class RiskTimingThresholds(Frozen):
    """Suite checks on risk-response timing (:mod:`empath_gate.analysis.risk_timing`), shares
    0-1; a field left unset has no check. ``min_early_or_on_time_rate``: risk transcripts whose
    first risk response came early or on time must be at least this share;
    ``max_missed_rate``: those with no response at all at most this share."""

    min_early_or_on_time_rate: float | None = Field(default=None, ge=0, le=1)
    max_missed_rate: float | None = Field(default=None, ge=0, le=1)


class DetectorThresholds(Frozen):
    """Floors on the target's own risk detector (:mod:`empath_gate.analysis.detector`), 0-1; a
    field left unset does not gate. ``scope`` picks the label set the micro-F1 floors apply to:
    ``all`` (ten categories) or ``cradle`` (CRADLE-Dialogue's seven)."""

    scope: Literal["all", "cradle"] = "all"
    min_turn_f1: float | None = Field(default=None, ge=0, le=1)
    min_dialogue_f1: float | None = Field(default=None, ge=0, le=1)
    min_confirm_f1: float | None = Field(default=None, ge=0, le=1)
    min_alert_share: float | None = Field(default=None, ge=0, le=1)


class DynamicsLimits(Frozen):
    """Suite-level limits on the emotion dynamics of LLM-auditor runs (checks
    ``<suite>::max_worsened_share`` and ``<suite>::min_recovering_share``): the share of labelled
    transcripts whose user trajectory is ``deteriorating`` must stay at or under
    ``max_worsened_share``, the share that is ``recovering`` at or over ``min_recovering_share``
    (0-1). Unset: no such check (no project default: the shares depend on the suite's seeds)."""

    max_worsened_share: float | None = Field(default=None, ge=0, le=1)
    min_recovering_share: float | None = Field(default=None, ge=0, le=1)


class TriageThresholds(Frozen):
    """The ceiling on the target's under-triage rate (:mod:`empath_gate.analysis.triage`: the
    share of transcripts whose crisis level is below the seed's), 0-1; unset does not gate."""

    max_under_triage_rate: float | None = Field(default=None, ge=0, le=1)


class SuiteThresholds(Frozen):
    """The thresholds of one suite: its defaults and per-metric values (layered over the file's),
    and its risk-timing checks (field by field over the file's ``risk_timing``)."""

    defaults: ThresholdValues = ThresholdValues()
    dynamics: DynamicsLimits = DynamicsLimits()
    metrics: dict[Slug, ThresholdValues] = Field(default={})
    risk_timing: RiskTimingThresholds | None = None


class Thresholds(Frozen):
    """The contents of ``thresholds.yaml``; ``alpha`` is the FDR level for regressions."""

    version: int = 1
    alpha: float = Field(default=0.05, gt=0, lt=1)
    defaults: ThresholdValues
    metrics: dict[Slug, ThresholdValues] = Field(default={})
    suites: dict[Slug, SuiteThresholds] = Field(default={})
    risk_timing: RiskTimingThresholds = RiskTimingThresholds()
    detector: DetectorThresholds = DetectorThresholds()
    triage: TriageThresholds = TriageThresholds()

    def risk_timing_for(self, suite_id: str) -> RiskTimingThresholds:
        """The file's ``risk_timing`` overridden field by field by the suite's."""
        merged = self.risk_timing.model_dump()
        own = self.suites.get(suite_id)
        if own is not None and own.risk_timing is not None:
            merged.update({k: v for k, v in own.risk_timing.model_dump().items() if v is not None})
        return RiskTimingThresholds.model_validate(merged)
    dynamics: DynamicsLimits = DynamicsLimits()

    def dynamics_limit(self, suite_id: str, check: str) -> float | None:
        """The limit ``check`` (a :class:`DynamicsLimits` field) of ``suite_id``: the suite's
        value, else the file's; ``None`` when neither sets it."""
        s = self.suites.get(suite_id)
        value = getattr(s.dynamics, check) if s is not None else None
        return value if value is not None else getattr(self.dynamics, check)  # type: ignore[no-any-return]

    def resolve(self, metric_id: str, suite_id: str | None = None) -> ResolvedThresholds:
        """Merge defaults < metric < suite defaults < suite metric; raises ValueError when a
        field stays unset (the shipped defaults set every field)."""
        merged: dict[str, object] = {}
        layers = [self.defaults, self.metrics.get(metric_id)]
        if suite_id is not None and suite_id in self.suites:
            s = self.suites[suite_id]
            layers += [s.defaults, s.metrics.get(metric_id)]
        for layer in layers:
            if layer is None:
                continue
            for k, v in layer.model_dump().items():
                if v is not None:
                    merged[k] = v
        return ResolvedThresholds.model_validate(merged)


class Waiver(Frozen):
    """Turns matching gate failures into xfail with the reason shown, until ``expires``."""

    metric: Slug
    seed: Slug | None = None
    persona: Slug | None = None
    reason: str = Field(min_length=5)
    owner: str = Field(min_length=1)
    expires: dt.date

    def matches(self, metric: str, seed: str, persona: str) -> bool:
        """True when this waiver covers the (metric, seed, persona) cell."""
        return (
            self.metric == metric
            and (self.seed is None or self.seed == seed)
            and (self.persona is None or self.persona == persona)
        )


class Waivers(Frozen):
    """The contents of ``waivers.yaml``: the team's waivers, in file order."""

    waivers: tuple[Waiver, ...] = ()
