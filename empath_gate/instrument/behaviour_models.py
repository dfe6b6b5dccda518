"""Behaviour controls: what each hard-to-help behaviour means as conduct at each level, and the
lines the scripted auditor adds to emulate some of them (``suites/behaviours.yaml``,
:class:`BehaviourSet`).

A persona gives each of the five behaviours (:data:`~empath_gate.instrument.seed_models.BEHAVIOURS`)
a level 0-3 (:attr:`~empath_gate.instrument.seed_models.Persona.profile`). The LLM auditor's
prompt states every behaviour as the conduct text of the persona's level, in the seed's locale
(:mod:`empath_gate.conversation.auditor_behaviours`). The scripted auditor emulates three of them
(``scripted``: ``shorten``, ``pushback``, ``mood``) by a deterministic variant of the seed's script
(:mod:`empath_gate.instrument.variants`); the other two need the LLM auditor (``scripted:
none``). The adherence proxies (:mod:`empath_gate.analysis.adherence`) find pushback and mood in
any transcript with ``pushback_patterns`` and ``mood_patterns``; every shipped line matches the
patterns of its kind, so a scripted variant's lines are always counted.

Every text is this project's own; the behaviours follow "When Seekers Are Hard to Help" (arXiv
2605.28228, abstract only), whose conduct descriptions are not public.
"""

from __future__ import annotations

import re
from typing import Literal

from pydantic import Field, model_validator

from empath_gate.instrument.model_base import LOCALES, Frozen, Locale
from empath_gate.instrument.seed_models import BEHAVIOURS, MAX_LEVEL, WorstCaseBehaviour

ScriptedEmulation = Literal["shorten", "pushback", "mood", "none"]
"""What the scripted auditor does for a behaviour at level 2 or more: keeps fewer sentences of a
turn (``shorten``), puts a pushback line before it (``pushback``), puts a mood line after it
(``mood``), or nothing (``none``: the behaviour needs the LLM auditor)."""

MIN_LINES = 10
"""Pushback lines per locale, and mood lines per locale (both directions together), at least
(issue text: "at least ~10 each"): enough that a conversation rarely repeats one."""
MIN_LINES_PER_DIRECTION = 5
"""Mood lines per direction (``down``, ``up``) per locale, at least (half of :data:`MIN_LINES`)."""


def _both_locales(value: dict[Locale, object], what: str) -> None:
    missing = [loc for loc in LOCALES if loc not in value]
    if missing:
        raise ValueError(f"{what}: no {', '.join(missing)} entry (both locales are required)")


class BehaviourLevel(Frozen):
    """One level of a behaviour: ``level`` 0-3 and ``conduct`` per locale, the second-person
    instruction the auditor's prompt states (one or two sentences)."""

    level: int = Field(ge=0, le=MAX_LEVEL)
    conduct: dict[Locale, str] = Field(min_length=2, description="what the auditor does, per locale")


class BehaviourControl(Frozen):
    """One behaviour: ``id``, display ``labels`` per locale, its four ``levels`` (0, 1, 2, 3 in
    order) and what the scripted auditor does for it (``scripted``)."""

    id: WorstCaseBehaviour
    labels: dict[Locale, str] = Field(min_length=2)
    levels: tuple[BehaviourLevel, ...] = Field(min_length=MAX_LEVEL + 1, max_length=MAX_LEVEL + 1)
    scripted: ScriptedEmulation

    @model_validator(mode="after")
    def _ordered(self) -> BehaviourControl:
        if [lv.level for lv in self.levels] != list(range(MAX_LEVEL + 1)):
            raise ValueError(f"behaviour {self.id}: levels must be 0, 1, 2, 3 in that order")
        _both_locales(dict(self.labels), f"behaviour {self.id} labels")
        for lv in self.levels:
            _both_locales(dict(lv.conduct), f"behaviour {self.id} level {lv.level}")
        return self

    def conduct(self, level: int, locale: str) -> str:
        """The conduct text of ``level`` in ``locale`` (en-US when the locale has none)."""
        texts = self.levels[level].conduct
        return next((t for loc, t in texts.items() if loc == locale), texts["en-US"])

    def label(self, locale: str = "en-US") -> str:
        """The display label in ``locale`` (en-US when the locale has none)."""
        return next((t for loc, t in self.labels.items() if loc == locale), self.labels["en-US"])


class MoodLines(Frozen):
    """Mood lines of one locale: ``down`` (the mood drops: anger, hurt, giving up on the chat)
    and ``up`` (it lifts: calmer, an apology for the last message). None names a risk."""

    down: tuple[str, ...] = Field(min_length=MIN_LINES_PER_DIRECTION)
    up: tuple[str, ...] = Field(min_length=MIN_LINES_PER_DIRECTION)


class MoodPatterns(Frozen):
    """Regular expressions (case-insensitive) that find a mood line of each direction in a
    user turn."""

    down: tuple[str, ...] = Field(min_length=1)
    up: tuple[str, ...] = Field(min_length=1)


def _matches(patterns: tuple[str, ...], text: str) -> bool:
    return any(re.search(p, text, re.IGNORECASE) for p in patterns)


class BehaviourSet(Frozen):
    """``behaviours.yaml``: the five controls in :data:`BEHAVIOURS` order; ``pushback_lines`` and
    ``mood_lines`` per locale (the scripted auditor's, at least :data:`MIN_LINES` each, each line
    neutral in gender and in the form of address, so any persona can say it to any bot);
    ``pushback_patterns`` and ``mood_patterns`` per locale (the adherence proxies'); ``sources``.

    Raises ValueError when a behaviour is missing or out of order, a locale is missing, a pattern
    does not compile, or a line does not match the patterns of its kind (a mood line: of its
    direction only)."""

    behaviours: tuple[BehaviourControl, ...]
    pushback_lines: dict[Locale, tuple[str, ...]] = Field(min_length=2)
    mood_lines: dict[Locale, MoodLines] = Field(min_length=2)
    pushback_patterns: dict[Locale, tuple[str, ...]] = Field(min_length=2)
    mood_patterns: dict[Locale, MoodPatterns] = Field(min_length=2)
    sources: tuple[str, ...] = Field(min_length=1)

    @model_validator(mode="after")
    def _complete(self) -> BehaviourSet:
        if tuple(b.id for b in self.behaviours) != BEHAVIOURS:
            raise ValueError(f"behaviours must be {', '.join(BEHAVIOURS)}, in that order")
        for loc in LOCALES:
            for name in ("pushback_lines", "mood_lines", "pushback_patterns", "mood_patterns"):
                _both_locales(getattr(self, name), name)
            pats = self.pushback_patterns[loc]
            mood = self.mood_patterns[loc]
            for p in (*pats, *mood.down, *mood.up):
                try:
                    re.compile(p)
                except re.error as exc:
                    raise ValueError(f"{loc}: pattern {p!r} does not compile ({exc})") from exc
            lines = self.pushback_lines[loc]
            if len(lines) < MIN_LINES:
                raise ValueError(f"pushback_lines {loc}: {len(lines)} lines, at least {MIN_LINES}")
            if len(self.mood_lines[loc].down) + len(self.mood_lines[loc].up) < MIN_LINES:
                raise ValueError(f"mood_lines {loc}: fewer than {MIN_LINES} lines")
            for line in lines:
                if not _matches(pats, line):
                    raise ValueError(f"pushback line {line!r} ({loc}) matches no pushback pattern")
            for direction, other in (("down", "up"), ("up", "down")):
                for line in getattr(self.mood_lines[loc], direction):
                    if not _matches(getattr(mood, direction), line) or _matches(getattr(mood, other), line):
                        raise ValueError(f"mood line {line!r} ({loc}) must match the {direction} "
                                         f"patterns and not the {other} ones")
        return self

    def control(self, behaviour: str) -> BehaviourControl:
        """The control of ``behaviour``; KeyError if absent."""
        for b in self.behaviours:
            if b.id == behaviour:
                return b
        raise KeyError(behaviour)
