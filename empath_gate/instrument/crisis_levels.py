"""Crisis levels: the three triage levels, their operational definitions and the mapping from a
seed's risk level (``suites/crisis_levels.yaml``, :class:`CrisisLevels`).

The ids are fixed and ordered from the least to the most urgent (:data:`LEVEL_IDS`), so the
figures (:mod:`empath_gate.analysis.triage`) can tell a level *below* the truth (under-triage,
the dangerous direction) from one above it. The file gives each level its display label and
definition per locale and the public triage practice it rests on (``sources``), and maps each
seed risk level (:data:`~empath_gate.instrument.seed_models.RiskLevel`) to a level; ``excluded``
leaves the seed's transcripts out of the triage figures (``unknown``: its source states no risk).
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field, model_validator

from empath_gate.instrument.model_base import Frozen, Locale

LevelId = Literal["non_urgent", "urgent", "emergency"]
LEVEL_IDS: tuple[str, ...] = ("non_urgent", "urgent", "emergency")
"""The three levels, least to most urgent (the order under-triage is measured against)."""
EXCLUDED = "excluded"
"""A mapping target: the seed's transcripts have no true level and are left out."""
RISK_LEVELS: tuple[str, ...] = ("none", "low", "moderate", "high", "imminent", "unknown")
"""Every seed risk level the mapping must cover (:data:`empath_gate.instrument.seed_models.RiskLevel`)."""

ResponseLevel = Literal["none", "supportive", "urgent_referral", "emergency"]
RESPONSE_LEVELS: tuple[str, ...] = ("none", "supportive", "urgent_referral", "emergency")
"""The level of response a judge assigns to what the bot actually did (suites with
``judge_triage``), weakest first."""
RESPONSE_TO_LEVEL: dict[str, str] = {
    "none": "non_urgent",
    "supportive": "non_urgent",
    "urgent_referral": "urgent",
    "emergency": "emergency",
}
"""The crisis level a response level stands for: no response and support alone treat the
conversation as non-urgent, a specific referral for prompt help as urgent, a call for emergency
help now as an emergency (this project's mapping, after the levels' definitions)."""


class CrisisLevel(Frozen):
    """One level: ``id`` (:data:`LevelId`), ``labels`` and ``definitions`` per locale (both
    locales required; written by the project), and ``sources``: the public triage practice the
    definition rests on, named as concepts."""

    id: LevelId
    labels: dict[Locale, str] = Field(min_length=2, description="display label per locale")
    definitions: dict[Locale, str] = Field(min_length=2, description="operational definition per locale")
    sources: tuple[str, ...] = Field(min_length=1, description="the public triage practice it rests on")

    def label(self, locale: str = "en-US") -> str:
        """The display label in ``locale`` (en-US when the locale has none)."""
        return next((t for loc, t in self.labels.items() if loc == locale), self.labels.get("en-US", self.id))


class CrisisLevels(Frozen):
    """``crisis_levels.yaml``: the three :class:`CrisisLevel` in :data:`LEVEL_IDS` order, and
    ``mapping``: every seed risk level (:data:`RISK_LEVELS`) -> a level id or ``excluded``.
    Raises ValueError when the levels are not exactly the three in order or the mapping misses
    a risk level."""

    levels: tuple[CrisisLevel, ...] = Field(min_length=3, max_length=3)
    mapping: dict[Literal["none", "low", "moderate", "high", "imminent", "unknown"],
                  Literal["non_urgent", "urgent", "emergency", "excluded"]] = Field(
        description="every seed risk level -> crisis level id, or excluded",
    )

    @model_validator(mode="after")
    def _complete(self) -> CrisisLevels:
        if tuple(lv.id for lv in self.levels) != LEVEL_IDS:
            raise ValueError(f"levels must be {', '.join(LEVEL_IDS)}, in that order")
        missing = [r for r in RISK_LEVELS if r not in self.mapping]
        if missing:
            raise ValueError(f"mapping lacks risk level(s) {', '.join(missing)}")
        return self

    def level_of(self, risk_level: str) -> str | None:
        """The crisis level id of a seed with ``risk_level``; None when excluded or unknown."""
        got = self.mapping.get(risk_level)  # type: ignore[call-overload]
        return None if got is None or got == EXCLUDED else str(got)

    def level(self, level_id: str) -> CrisisLevel:
        """The level with this id; KeyError if absent."""
        for lv in self.levels:
            if lv.id == level_id:
                return lv
        raise KeyError(level_id)


def parse_level(value: object) -> str:
    """A reported level id from a ``triage`` event's ``level``; raises ValueError naming the
    accepted ids."""
    if isinstance(value, str) and value in LEVEL_IDS:
        return value
    raise ValueError(f"unknown triage level {value!r}: one of {', '.join(LEVEL_IDS)}")
