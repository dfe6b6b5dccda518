"""Typed, frozen models of the EMPATH instrument as empath-gate ships it (the public import path).

Every model forbids unknown keys (a typo such as ``min_maen`` is an error) and is frozen
(an instrument loaded once is never mutated). The JSON Schemas in ``schemas/`` describe the
same files for editors; ``tests/instrument/test_instrument_schemas.py`` keeps the two in step.
The models live in modules about one part each and are re-exported here:

* :mod:`~empath_gate.instrument.metric_models`: metrics, criteria, bands, dimensions, cap rule,
  pattern sets, crisis resources;
* :mod:`~empath_gate.instrument.seed_models`: seeds (situation, script, risk, ``speaker``) and
  personas (the person);
* :mod:`~empath_gate.instrument.suite_models`: selectors, suites, thresholds, waivers;
* :mod:`~empath_gate.instrument.cues`: the non-verbal cues of spoken transcripts;
* :mod:`~empath_gate.instrument.emotion_models`: the turn layer's label set and lexicons;
* this module: :class:`Instrument`, everything the loader read.

Conventions (source: EMPATH, arXiv:2606.30256, as summarised in the project's FACTS):

* Scores run 1-10 and **10 is always the safest**, including the inverse metrics
  (``harmful_response``, ``sycophancy``...), whose text is phrased so 10 means none of the harm.
* Ids are stable ASCII slugs (``^[a-z0-9]+(?:[_-][a-z0-9]+)*$``); display labels sit beside them.
* User-turn indices in seeds (``alert_turn``, ``confirm_turn``) are **1-based positions in the
  seed's ``script``** (the first user message is turn 1).
"""

from __future__ import annotations

from pydantic import Field

from empath_gate.instrument.behaviour_models import BehaviourSet
from empath_gate.instrument.crisis_levels import CrisisLevels
from empath_gate.instrument.cues import Cue, CueVocabulary
from empath_gate.instrument.emotion_models import EmotionSet, Lexicon
from empath_gate.instrument.metric_models import (
    Band,
    CapRule,
    CheckKind,
    CheckSpec,
    CrisisResource,
    Criterion,
    Dimension,
    Metric,
    MetricFamily,
    PatternSet,
)
from empath_gate.instrument.model_base import LOCALES, SLUG_PATTERN, Frozen, Locale, Slug
from empath_gate.instrument.seed_models import (
    BEHAVIOURS,
    HARD_LEVEL,
    MAX_AGE,
    MIN_AGE,
    AuditorKind,
    NotReviewed,
    Participant,
    Persona,
    PersonaGender,
    Review,
    RiskAnnotation,
    RiskCategory,
    RiskCategoryEntry,
    RiskLevel,
    Seed,
    Speaker,
    SpeakerGender,
    WorstCaseBehaviour,
)
from empath_gate.instrument.suite_models import (
    DetectorThresholds,
    PersonaSelector,
    ResolvedThresholds,
    RiskTimingThresholds,
    SeedSelector,
    Suite,
    SuiteThresholds,
    Thresholds,
    ThresholdValues,
    Waiver,
    Waivers,
)


class Instrument(Frozen):
    """Everything the loader read, validated and cross-checked. Tuples keep file order,
    which is the order ids and tests are generated in (never hash order)."""

    version: str = Field(pattern=r"^\d+\.\d+\.\d+$")
    scale_min: int = 1
    scale_max: int = 10
    cap_rule: CapRule = CapRule()
    dimensions: tuple[Dimension, ...]
    metrics: tuple[Metric, ...]
    families: tuple[MetricFamily, ...] = Field(default=(), description="metric families beyond EMPATH")
    pattern_sets: tuple[PatternSet, ...]
    resources: tuple[CrisisResource, ...]
    seeds: tuple[Seed, ...]
    personas: tuple[Persona, ...]
    suites: tuple[Suite, ...]
    thresholds: Thresholds
    waivers: tuple[Waiver, ...] = ()
    cues: tuple[Cue, ...] = Field(default=(), description="the declared non-verbal cues (suites/cues.yaml)")
    emotions: EmotionSet | None = Field(default=None, description="the turn label set (emotions.yaml)")
    crisis_levels: CrisisLevels | None = Field(
        default=None, description="the triage levels and the seed risk-level mapping (crisis_levels.yaml)"
    )
    behaviours: BehaviourSet | None = Field(
        default=None, description="the behaviour controls' conduct and scripted lines (behaviours.yaml)"
    )
    lexicons: tuple[Lexicon, ...] = Field(default=(), description="offline lexicons, one per locale")
    sources: tuple[str, ...] = Field(default=(), description="directories the instrument was read from")

    def metric(self, metric_id: str) -> Metric:
        """The metric with this id; KeyError if absent."""
        for m in self.metrics:
            if m.id == metric_id:
                return m
        raise KeyError(metric_id)

    @property
    def empath_metrics(self) -> tuple[Metric, ...]:
        """EMPATH's metrics (those in a dimension): what ``metrics: all`` judges."""
        return tuple(m for m in self.metrics if m.dimension is not None)

    def family_metrics(self, family_id: str) -> tuple[Metric, ...]:
        """The metrics of family ``family_id``, in instrument order (``()`` for an unknown id)."""
        return tuple(m for m in self.metrics if m.family == family_id)

    def group_label(self, group_id: str, locale: str = "en-US") -> str:
        """Display label of a dimension or family id (Spanish for es-MX); the id when unknown."""
        for g in (*self.dimensions, *self.families):
            if g.id == group_id:
                return g.label_es if locale == "es-MX" else g.label
        return group_id

    def seed(self, seed_id: str) -> Seed:
        """The seed with this id; KeyError if absent."""
        for s in self.seeds:
            if s.id == seed_id:
                return s
        raise KeyError(seed_id)

    def persona(self, persona_id: str) -> Persona:
        """The persona with this id; KeyError if absent."""
        for p in self.personas:
            if p.id == persona_id:
                return p
        raise KeyError(persona_id)

    def suite(self, suite_id: str) -> Suite:
        """The suite with this id; KeyError if absent."""
        for s in self.suites:
            if s.id == suite_id:
                return s
        raise KeyError(suite_id)

    def pattern_set(self, set_id: str) -> PatternSet:
        """The pattern set with this id; KeyError if absent."""
        for p in self.pattern_sets:
            if p.id == set_id:
                return p
        raise KeyError(set_id)

    def cue_vocabulary(self) -> CueVocabulary:
        """The declared cues as a :class:`~empath_gate.instrument.cues.CueVocabulary`."""
        return CueVocabulary(self.cues)

    def resources_for(self, locale: str, *, active_only: bool = True) -> tuple[CrisisResource, ...]:
        """Registry entries of a locale (active ones unless ``active_only`` is False)."""
        return tuple(
            r for r in self.resources
            if r.locale == locale and (r.status == "active" or not active_only)
        )


__all__ = [
    "BEHAVIOURS",
    "HARD_LEVEL",
    "LOCALES",
    "MAX_AGE",
    "MIN_AGE",
    "SLUG_PATTERN",
    "AuditorKind",
    "Band",
    "CapRule",
    "CheckKind",
    "CheckSpec",
    "CrisisResource",
    "Criterion",
    "Cue",
    "DetectorThresholds",
    "Dimension",
    "EmotionSet",
    "Frozen",
    "Instrument",
    "Lexicon",
    "Locale",
    "Metric",
    "MetricFamily",
    "NotReviewed",
    "Participant",
    "PatternSet",
    "Persona",
    "PersonaGender",
    "PersonaSelector",
    "ResolvedThresholds",
    "Review",
    "RiskAnnotation",
    "RiskCategory",
    "RiskCategoryEntry",
    "RiskLevel",
    "RiskTimingThresholds",
    "Seed",
    "SeedSelector",
    "Slug",
    "Speaker",
    "SpeakerGender",
    "Suite",
    "SuiteThresholds",
    "ThresholdValues",
    "Thresholds",
    "Waiver",
    "Waivers",
    "WorstCaseBehaviour",
]
