"""The shape of each instrument file: one frozen model per YAML file kind.

These wrap the models of :mod:`empath_gate.instrument.models` in the top-level key each file
uses (``metrics: [...]``, ``seeds: [...]``...). The JSON Schemas in ``schemas/`` are generated
from them (:mod:`empath_gate.instrument.schema_gen`), so the schema an editor checks a file
against and the model the loader builds are the same contract.

File kinds and where they live (relative to a suites directory)::

    instrument.yaml          InstrumentFile
    metrics/<group>.yaml     MetricsFile (one dimension or family)
    patterns.yaml            PatternsFile
    resources.yaml           ResourcesFile
    personas/<locale>.yaml   PersonasFile
    seeds/<group>.yaml       SeedsFile
    suites.yaml              SuitesFile
    cues.yaml                CuesFile (shipped directory only; optional)
    crisis_levels.yaml       CrisisLevels (the triage levels; shipped directory only; optional)
    behaviours.yaml          BehaviourSet (behaviour conduct and scripted lines; shipped only; optional)
    emotions.yaml            EmotionSet (the turn layer's label set; optional)
    lexicons/<locale>.yaml   Lexicon (the offline annotator's phrases; optional)
    ../thresholds.yaml       Thresholds
    waivers.yaml             Waivers
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field, model_validator

from empath_gate.instrument.behaviour_models import BehaviourSet
from empath_gate.instrument.crisis_levels import CrisisLevels
from empath_gate.instrument.cues import Cue
from empath_gate.instrument.emotion_models import EmotionSet, Lexicon
from empath_gate.instrument.models import (
    CapRule,
    CrisisResource,
    Dimension,
    Metric,
    MetricFamily,
    PatternSet,
    Persona,
    Seed,
    Suite,
    Thresholds,
    Waivers,
)


class _File(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class Scale(_File):
    """The score scale, inclusive; 10 is always the safest (source: EMPATH, arXiv:2606.30256)."""

    min: int = Field(default=1, ge=0, le=100)
    max: int = Field(default=10, ge=1, le=100)

    @model_validator(mode="after")
    def _ordered(self) -> Scale:
        if self.min >= self.max:
            raise ValueError("scale.min must be below scale.max")
        return self


class InstrumentFile(_File):
    """``instrument.yaml``: version (semver), scale, cap rule, the five dimensions, sources."""

    instrument_version: str = Field(pattern=r"^\d+\.\d+\.\d+$", description="semver, e.g. 1.0.0")
    scale: Scale = Scale()
    cap_rule: CapRule = CapRule()
    dimensions: tuple[Dimension, ...] = Field(min_length=1)
    families: tuple[MetricFamily, ...] = Field(
        default=(), description="metric families beyond EMPATH's dimensions, judged where a suite names them"
    )
    sources: tuple[str, ...] = ()


class MetricsFile(_File):
    """``metrics/<dimension>.yaml``: the metrics of one dimension."""

    metrics: tuple[Metric, ...] = Field(min_length=1)


class PatternsFile(_File):
    """``patterns.yaml``: named pattern sets per locale, used by deterministic checks."""

    pattern_sets: tuple[PatternSet, ...] = Field(min_length=1)


class ResourcesFile(_File):
    """``resources.yaml``: the crisis resource registry of every locale."""

    resources: tuple[CrisisResource, ...] = Field(min_length=1)


class PersonasFile(_File):
    """``personas/<locale>.yaml``: simulated help-seekers."""

    personas: tuple[Persona, ...] = Field(min_length=1)


class SeedsFile(_File):
    """``seeds/<group>.yaml``: scenario seeds."""

    seeds: tuple[Seed, ...] = Field(min_length=1)


class SuitesFile(_File):
    """``suites.yaml``: named suites."""

    suites: tuple[Suite, ...] = Field(min_length=1)


class CuesFile(_File):
    """``cues.yaml``: the non-verbal cues spoken transcripts may carry (voice suites)."""

    cues: tuple[Cue, ...] = Field(min_length=1)


FILE_MODELS: dict[str, type[BaseModel]] = {
    "instrument": InstrumentFile,
    "metrics": MetricsFile,
    "patterns": PatternsFile,
    "resources": ResourcesFile,
    "personas": PersonasFile,
    "seeds": SeedsFile,
    "suites": SuitesFile,
    "thresholds": Thresholds,
    "waivers": Waivers,
    "cues": CuesFile,
    "emotions": EmotionSet,
    "lexicons": Lexicon,
    "crisis_levels": CrisisLevels,
    "behaviours": BehaviourSet,
}
"""File kind -> the model of the whole file; the kind names the schema ``<kind>.schema.json``."""

LIST_KEYS: dict[str, str] = {
    "metrics": "metrics",
    "patterns": "pattern_sets",
    "resources": "resources",
    "personas": "personas",
    "seeds": "seeds",
    "suites": "suites",
    "waivers": "waivers",
    "cues": "cues",
}
"""File kind -> the top-level key holding its list of entries (list-shaped kinds only)."""

ITEM_MODELS: dict[str, type[BaseModel]] = {
    "metrics": Metric,
    "patterns": PatternSet,
    "resources": CrisisResource,
    "personas": Persona,
    "seeds": Seed,
    "suites": Suite,
    "cues": Cue,
}
"""File kind -> the model of one list entry (validated entry by entry, so one bad seed does not
hide the others)."""
