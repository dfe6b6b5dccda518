"""The results document: one JSON file per run of a plan (or per shard), versioned by a JSON Schema.

Layout (``RESULTS_SCHEMA_VERSION`` = "5")::

    {
      "schema_version": "1",
      "metadata": {...},          # ResultsMetadata: suite, git sha, models, hashes, versions, cost
      "items": [...],             # one per seed x persona x metric test, in plan order
      "records": [...],           # one RunRecord per transcript: reference + its MetricVerdicts
      "cells": [...],             # CellStats per conversation x metric (test-retest statistics)
      "metrics": [...],           # MetricStats per metric across conversations
      "decisions": [...],         # CellDecision per item (gate outcome, reasons)
      "worst_case_gaps": {...},   # per paired suite: MetricGap per metric (cooperative - worst case)
      "regressions": {...} | null,# baseline comparison (per metric), when a baseline was given
      "risk_timing": [...],       # SuiteRiskTiming per suite: when the bot first responded to risk
      "detector": [...],          # SuiteDetector per suite: the target's own risk detector
      "triage": [...],            # SuiteTriage per suite: the target's crisis level vs the seed's
      "waivers": [...],           # waivers in force
      "summary": {...}            # counts: passed, failed, skipped, error, xfail; judge failures; filtered
    }

The JSON Schema ships as ``empath_gate/schemas/results.schema.json`` (generated from these
models; a test keeps it in step). Files are written UTF-8 with ``ensure_ascii=False``,
atomically (temp file + rename), so an interrupted run never leaves half a file.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from empath_gate.analysis.adherence import BehaviourAdherence
from empath_gate.analysis.detector import DetectorScores, LabelledDialogue
from empath_gate.analysis.regression import RegressionReport
from empath_gate.analysis.risk_timing import SuiteRiskTiming
from empath_gate.analysis.stats import CellStats, MetricStats
from empath_gate.analysis.triage import TriagePair, TriageScores
from empath_gate.analysis.worst_case_gap import MetricGap
from empath_gate.conversation.transcript import SpeakerRef
from empath_gate.gate.checks import SuiteCheck
from empath_gate.gate.decide import CellDecision
from empath_gate.instrument.models import ResolvedThresholds, Thresholds, Waiver
from empath_gate.judging.risk_response import RiskEvidence
from empath_gate.judging.verdict import MetricVerdict
from empath_gate.results.dynamics import SuiteDynamics
from empath_gate.turns.model import AnnotatorFailure, TurnLabels

RESULTS_SCHEMA_VERSION = "5"
READABLE_SCHEMA_VERSIONS: tuple[str, ...] = ("1", "2", "3", "4", "5")
"""Versions every reader accepts: 1 lacks the gate inputs and suite checks (shown as not
recorded); 1 and 2 lack the risk evidence, risk timing and detector figures, the per-turn
annotations and the dynamics (shown as not recorded, no dynamics check); 1 to 3 lack the
crisis levels (triage; not recorded); 1 to 4 lack the speakers of multi-party records and the
per-speaker dynamics and risk timing (none shown; ``rejudge`` restores them from the
transcripts) and the behaviour adherence proxies (not recorded)."""


class _Model(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class JudgeInfo(_Model):
    """The judge as configured: ``model`` is None offline (criteria-only)."""

    model: str | None = None
    rubric: str = "strict"
    granularity: str = "transcript"
    template_version: str | None = None
    template_hash: str | None = None
    calibration: dict[str, Any] | None = Field(
        default=None, description="calibration status: against what, when, agreement figures"
    )


class RoleCalls(_Model):
    """One role's calls: ``calls`` provider attempts (HTTP requests: retries, re-asks and failed
    attempts included; cache hits excluded); ``cache_hits`` replies served from the cache (no
    call, $0); ``cost_usd`` known USD; ``unpriced_calls`` attempts whose price is unknown;
    tokens as the provider reported them. Savings (known prices only, USD): ``cache_saved_usd``
    what the cache hits cost when first called; ``batch_calls`` replies taken from a provider
    batch (no live call), ``batch_cost_usd`` their price at the batch rate, ``batch_saved_usd``
    the difference from the live price."""

    calls: int = Field(default=0, ge=0)
    cache_hits: int = Field(default=0, ge=0)
    cost_usd: float = 0.0
    unpriced_calls: int = Field(default=0, ge=0)
    prompt_tokens: int = Field(default=0, ge=0)
    completion_tokens: int = Field(default=0, ge=0)
    cache_saved_usd: float = Field(default=0.0, ge=0)
    batch_calls: int = Field(default=0, ge=0)
    batch_cost_usd: float = Field(default=0.0, ge=0)
    batch_saved_usd: float = Field(default=0.0, ge=0)


class CostInfo(_Model):
    """Cost of the run, every role (target, auditor, judge) and every attempt counted:
    ``known_usd`` sums priced calls; ``calls`` counts provider attempts; ``unpriced_calls``
    counts calls whose price is unknown (so the true total is >= known_usd); ``cache_hits``
    replies served from the cache; ``by_role`` the same per role. ``cache_saved_usd``,
    ``batch_calls``, ``batch_saved_usd``: the sums of :class:`RoleCalls`' (what the cache and the
    batch discount saved, known prices only)."""

    known_usd: float = 0.0
    calls: int = 0
    unpriced_calls: int = 0
    cache_hits: int = 0
    cache_saved_usd: float = Field(default=0.0, ge=0)
    batch_calls: int = Field(default=0, ge=0)
    batch_saved_usd: float = Field(default=0.0, ge=0)
    by_role: dict[str, RoleCalls] = Field(default_factory=dict)
    budget_usd: float | None = None
    budget_exhausted: bool = False


class ResultsMetadata(_Model):
    """Who, what and how of a run. Never holds an API key or a header value."""

    tool_version: str
    instrument_version: str
    suites: tuple[str, ...]
    plan_id: str
    shard: str | None = Field(default=None, description="'K/N' when this file is one shard")
    offline_subset: int | None = Field(
        default=None,
        description="offline profile on the embedded bot: conversations kept per (primary metric, locale)",
    )
    runs: int
    git_sha: str | None = None
    target: str
    target_prompt_hash: str | None = None
    target_version: str | None = None
    auditor: str = Field(description="'scripted' or the auditor model")
    auditor_template_version: str | None = None
    judge: JudgeInfo = JudgeInfo()
    offline_roles: tuple[str, ...] = Field(default=(), description="roles that fell back offline")
    fail_on: str = "both"
    started_at: str
    ended_at: str | None = None
    cost: CostInfo = CostInfo()
    auditor_fallbacks: int = 0
    auditor_refusals: int = 0
    max_auditor_fallback_share: float = Field(
        default=0.5,
        ge=0,
        le=1,
        description="a transcript whose auditor fell back on more of its turns is no evidence (0-1)",
    )
    suite_hashes: dict[str, dict[str, str]] = Field(
        default_factory=dict,
        description="per suite, the sha256 of each part of the instrument it uses (conversations, "
        "seeds, personas, metrics, judge_template: results.suite_hash); empty in older files",
    )


class ItemInfo(_Model):
    """One test: ``id`` = ``<seed>-<persona>-<metric>``; labels are for display only."""

    id: str
    suite: str
    conversation_id: str
    seed_id: str
    persona_id: str
    metric_id: str
    dimension: str
    locale: str
    label: str
    critical: bool = False
    skip: str | None = Field(
        default=None, description="why the run's profile could not run this test (skipped with this reason)"
    )


class RunRecord(_Model):
    """One transcript's reference and its verdicts.

    ``status`` mirrors :class:`~empath_gate.conversation.transcript.Transcript.status`
    (``complete``, ``error``, ``budget``), or is ``stopped``: a run sequential gating did not
    start (``error`` says why, e.g. ``settled``; no transcript, no verdicts);
    ``transcript_path`` is relative to the results file's folder when possible.
    ``content_hash`` is the sha256 of the dialogue text (user + target turns) so test-retest
    reliability can tell whether runs produced different transcripts. ``calls``, ``cost_usd``,
    ``unpriced_calls`` and ``cache_hits`` count every call made for this transcript, its
    generation and its judging (retries and re-asks included); ``by_role`` per role.

    The LLM auditor (all 0 for the scripted one; see
    :class:`~empath_gate.conversation.transcript.AuditorTally`): ``auditor_turns`` user turns it
    was asked for; ``auditor_fallbacks`` turns the script replaced (or a fallback that ended the
    conversation), ``auditor_fallback_reasons`` their count per reason (``refusal``,
    ``narration``…); ``auditor_refusals`` refusals retried successfully (the turn stayed the
    auditor's: not a fallback). The transcript's ``fallback`` events give each one's turn and why.
    """

    transcript_id: str
    conversation_id: str
    suite: str
    seed_id: str
    persona_id: str
    locale: str
    run: int = Field(ge=0)
    transcript_path: str | None = None
    status: Literal["complete", "error", "budget", "stopped", "pending"] = Field(
        description="complete | error | budget (the transcript's own status); stopped: a run "
        "sequential gating did not start because its conversation was settled (``error`` says "
        "why; no transcript, no verdict: not run, never an error, never a pass); pending: its "
        "judging waits in a provider batch (``error`` says so; incomplete, never a pass)"
    )
    error: str | None = None
    n_turns: int = 0
    target_filtered: int = 0
    handoffs: int = 0
    content_hash: str | None = None
    cost_usd: float = 0.0
    calls: int = 0
    unpriced_calls: int = 0
    cache_hits: int = 0
    by_role: dict[str, RoleCalls] = Field(default_factory=dict)
    auditor_fallbacks: int = 0
    auditor_refusals: int = 0
    auditor_turns: int = 0
    auditor_fallback_reasons: dict[str, int] = Field(default_factory=dict)
    verdicts: tuple[MetricVerdict, ...] = ()
    risk: RiskEvidence | None = Field(
        default=None,
        description="where the bot responded to risk (judging.risk_response); None: not recorded",
    )
    risk_events: int = Field(
        default=0, ge=0, description="risk events the target's own detector reported"
    )
    risk_labels: LabelledDialogue | None = Field(
        default=None,
        description="gold and predicted risk labels per user turn (judging.detector_labels); "
        "None: not recorded",
    )
    annotation: TurnLabels | AnnotatorFailure | None = Field(
        default=None, discriminator="status",
        description="the transcript's per-turn emotion labels or the dynamics annotator's failure "
        "(None: annotator off, transcript incomplete, or a file of schema version 2)",
    )
    risk_turns: tuple[int, ...] = Field(
        default=(), description="0-based user messages that state risk explicitly (the instrument's "
        "explicit_risk patterns), found with the annotation",
    )
    feelings: tuple[int | None, ...] = Field(
        default=(), description="LLM auditor: the simulated help-seeker's own feeling (0-100) with each "
        "user message, in order (None: that reply gave no usable feeling); empty when no message has one",
    )
    triage: TriagePair | None = Field(
        default=None,
        description="the seed's crisis level and the target's (judging.triage_levels); None: not "
        "recorded (no crisis levels in the instrument, an unknown seed, or a file before schema 4)",
    )
    speakers: tuple[SpeakerRef, ...] = Field(
        default=(), description="multi-party transcripts: the speaker of each user turn, in order "
        "(per-speaker dynamics and risk timing); empty for one user and in older files",
    )
    adherence: BehaviourAdherence | None = Field(
        default=None,
        description="the behaviour controls' adherence proxies beside the persona's levels "
        "(analysis.adherence); None: not recorded (no behaviour set, an unknown seed or persona, "
        "or a file before schema 5)",
    )


class LayerInfo(_Model):
    """A team layer the instrument was loaded with: ``kind`` (``suites_dir``, ``thresholds``,
    ``waivers``), its path as given, and the sha256 of its content (a folder: of its YAML files'
    relative paths and bytes, sorted). The shipped files are not layers."""

    kind: str
    path: str
    sha256: str


class GateInputs(_Model):
    """What the gate decided with, so a results file decides alone as its run did: the
    thresholds document, each (suite, metric) resolved, the instrument's metric order, and the
    team layers' hashes."""

    thresholds: Thresholds
    resolved: dict[str, dict[str, ResolvedThresholds]] = Field(default_factory=dict)
    metric_order: tuple[str, ...] = ()
    layers: tuple[LayerInfo, ...] = ()
    aliases: dict[str, dict[str, str]] = Field(
        default_factory=dict,
        description="per suite, an older conversation id -> its current id, so older baselines pair",
    )
    pairings: dict[str, dict[str, str]] = Field(
        default_factory=dict,
        description="per paired suite, seed id -> its cooperative persona id (the worst-case gap's pairs)",
    )


class Summary(_Model):
    """Counts of the run: cells per gate status, judge failures by reason, target filter events,
    and whether the run gated (``passed``) and why not (``infrastructure_reasons``,
    ``usage_errors``). ``criteria_only_metrics`` lists metrics that got no LLM score (offline)."""

    passed: bool = False
    counts: dict[str, int] = Field(default_factory=dict)
    check_counts: dict[str, int] = Field(default_factory=dict, description="suite checks per status")
    judge_failures: dict[str, int] = Field(default_factory=dict)
    target_filtered: int = 0
    transcripts: int = Field(default=0, description="transcripts run (records other than stopped ones)")
    transcripts_failed: int = Field(
        default=0, description="transcripts that errored, ran out of budget or were interrupted "
        "(records other than complete, stopped and pending ones)",
    )
    transcripts_pending: int = Field(
        default=0, ge=0,
        description="transcripts whose judging waits for a judge batch (records with status 'pending', "
        "--judge-batch submit; collect judges them): their tests are incomplete, never passed",
    )
    transcripts_stopped: int = Field(
        default=0, ge=0,
        description="runs sequential gating did not start because their conversation was settled "
        "(records with status 'stopped'; not run, never failed)",
    )
    criteria_only_metrics: tuple[str, ...] = ()
    infrastructure_reasons: tuple[str, ...] = ()
    usage_errors: tuple[str, ...] = ()


class SuiteDetector(_Model):
    """The target's own risk detector over one suite's transcripts (only suites where it
    reported at least one ``risk`` event): its figures, and the transcripts left out because
    their seed's gold labels could not be given."""

    suite: str
    scores: DetectorScores
    left_out: tuple[str, ...] = ()


class SuiteTriage(_Model):
    """The target's crisis level against the seeds' over one suite's transcripts (only suites
    where it reported at least one ``triage`` event; :mod:`empath_gate.analysis.triage`)."""

    suite: str
    scores: TriageScores


class Results(_Model):
    """The whole results document (see the module docstring for the layout)."""

    schema_version: str = RESULTS_SCHEMA_VERSION
    metadata: ResultsMetadata
    items: tuple[ItemInfo, ...] = ()
    records: tuple[RunRecord, ...] = ()
    cells: tuple[CellStats, ...] = ()
    metrics: tuple[MetricStats, ...] = ()
    decisions: tuple[CellDecision, ...] = ()
    checks: tuple[SuiteCheck, ...] = Field(default=(), description="suite checks, items <suite>::<check>")
    worst_case_gaps: dict[str, tuple[MetricGap, ...]] = Field(
        default_factory=dict, description="per paired suite, the worst-case gap of each metric"
    )
    dynamics: tuple[SuiteDynamics, ...] = Field(
        default=(), description="per suite, the emotion dynamics of its transcripts (results.dynamics); "
        "empty when the annotator was off and in files before schema version 3",
    )
    gate: GateInputs | None = Field(default=None, description="the gate inputs (None in schema version 1)")
    regressions: RegressionReport | None = None
    waivers: tuple[Waiver, ...] = ()
    reliability: dict[str, Any] | None = Field(
        default=None, description="test-retest reliability per metric (see analysis.reliability)"
    )
    risk_timing: tuple[SuiteRiskTiming, ...] = Field(
        default=(), description="risk-response timing per suite (analysis.risk_timing)"
    )
    detector: tuple[SuiteDetector, ...] = Field(
        default=(), description="the target's own risk detector per suite (analysis.detector)"
    )
    triage: tuple[SuiteTriage, ...] = Field(
        default=(), description="the target's crisis level per suite (analysis.triage)"
    )
    summary: Summary = Field(default_factory=lambda: Summary())

    @property
    def verdicts(self) -> list[MetricVerdict]:
        """Every verdict of every record, in record order."""
        return [v for r in self.records for v in r.verdicts]
